"""HeCBench ``nonzero`` (PyTorch's ``nonzero`` CUDA path): the kernel ``write_indices``, as gpuFLOPBench timed
it on an RTX 3080.

``torch.nonzero`` of an ``nrows x ncols`` tensor: CUB counts the non-zeros (``DeviceReduce::Sum`` over a
``!= 0`` iterator) and writes their flat indices in ascending order (``DeviceSelect::Flagged`` over a
counting iterator) into the first ``nzero`` entries of the output; then ``write_indices``, one thread per
non-zero, turns flat index ``f`` into coordinates in place: it walks the dimensions from the last
(``MAX_DIMS = 2``; the loop starts at ``dim = MAX_DIMS`` and skips dimensions beyond the tensor's), storing
``(f / div) % size[dim]`` to ``out[index + dim * nzero]`` and multiplying ``div`` by the size: column into
the second half, row into the first (over the flat index it read first).

Launch: ``ceil(nzero / 256)`` blocks of 256. Only ``write_indices`` is in the data (CUB's kernels are not
ported); its first launch is the int8 tensor of the first repetition. Inputs: ``uniform_int_distribution
(-1, 1)`` from ``mt19937(19937)``, so about two thirds of the elements are non-zero; the data's grid (10,920
blocks for 2048 x 2048) fixes the count to 2,795,265 ... 2,795,520. Here the tensor is drawn with NumPy's
generator with exactly ``nzero`` non-zeros (2,795,392, inside that range; positions uniformly at random),
and the output's first half holds their sorted flat indices, as CUB's selection leaves it; the second half
is uninitialised device memory (zeros here) that the kernel overwrites.

Measured size: about 1e8 records (2.8 M threads): ``feature_point`` is 512 x 256 (87,381 non-zeros).

Precision: integer only (int64 indices and divisions).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

TPB = 256
MAX_DIMS = 2

POINTS = {"2048 2048 100": {"nrows": 2048, "ncols": 2048, "repeat": 100, "nzero": 2_795_392}}
FEATURE_POINT = {"nrows": 512, "ncols": 256, "repeat": 100, "nzero": 87_381}
TEST_POINT = {"nrows": 24, "ncols": 40, "repeat": 1, "nzero": 640}


def write_indices(inp, sizes, ndim, nzero, n_threads):
    """Flat indices ``inp[:nzero]`` to coordinates ``inp[dim * nzero + index]``, one work item per non-zero.

    Parameters
    ----------
    inp : int64 ``(ndim * nzero,)``, updated in place. sizes : int64 ``(MAX_DIMS,)`` tensor sizes.
    ndim : dimensions used. nzero : non-zeros. n_threads : launched threads.

    Returns
    -------
    ``inp``.
    """
    for index in numba.prange(n_threads):
        if index < nzero:
            div = np.int64(1)
            idx_flat = inp[index]
            for dim in range(MAX_DIMS, -1, -1):
                if dim > ndim - 1:
                    continue
                dim_size = sizes[dim]
                inp[index + dim * nzero] = (idx_flat // div) % dim_size
                div *= dim_size
    return inp


@cuda.jit
def _write_indices_gpu(inp, sizes, ndim, nzero):
    index = cuda.grid(1)
    if index < nzero:
        div = numba.int64(1)
        idx_flat = inp[index]
        for dim in range(MAX_DIMS, -1, -1):
            if dim > ndim - 1:
                continue
            dim_size = sizes[dim]
            inp[index + dim * nzero] = (idx_flat // div) % dim_size
            div *= dim_size


def _to_device(inp, sizes, ndim, nzero, n_threads):
    return {"inp": cuda.to_device(inp), "sizes": cuda.to_device(sizes), "ndim": int(ndim), "nzero": int(nzero),
            "n": int(n_threads)}


def _launch(s):
    _write_indices_gpu[s["n"] // TPB, TPB](s["inp"], s["sizes"], s["ndim"], s["nzero"])


def _from_device(s):
    return s["inp"].copy_to_host()


def work(params):
    nzero = int(params["nzero"])
    return (nzero + TPB - 1) // TPB * TPB, TPB


def make_tensor(params, seed):
    """An int8 ``nrows x ncols`` tensor of -1/1 at ``nzero`` random places, 0 elsewhere."""
    nrows, ncols, nzero = int(params["nrows"]), int(params["ncols"]), int(params["nzero"])
    if not 0 < nzero <= nrows * ncols:
        raise ValueError(f"nonzero: nzero must be in 1 ... {nrows * ncols}, got {nzero}")
    rng = np.random.default_rng(seed)
    t = np.zeros(nrows * ncols, dtype=np.int8)
    where = rng.choice(nrows * ncols, size=nzero, replace=False)
    t[where] = rng.choice(np.array([-1, 1], dtype=np.int8), size=nzero)
    return t.reshape(nrows, ncols)


def make_inputs(params, seed):
    """``(inp, sizes, ndim, nzero, n_threads)``: the sorted flat indices of the tensor's non-zeros in
    ``inp[:nzero]``."""
    t = make_tensor(params, seed)
    flat = np.flatnonzero(t).astype(np.int64)
    inp = np.zeros(MAX_DIMS * flat.size, dtype=np.int64)
    inp[: flat.size] = flat
    return inp, np.array(t.shape, dtype=np.int64), MAX_DIMS, flat.size, work(params)[0]


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="nonzero",
        kernel="write_indices",
        description="HeCBench nonzero: flat indices of the non-zeros of a 2048 x 2048 tensor to (row, column), "
        "one thread per non-zero (int64 division and modulo)",
        cpu=write_indices,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    ),
]
