"""HeCBench ``reverse2D`` (RAFT's matrix reversal): the kernel ``reverseKernel``, as gpuFLOPBench timed it on
an RTX 3080.

Reverses an ``nrows x ncols`` matrix along one dimension into a second buffer. The kernel is a template over
the element type and a vector length ``R`` (``16 / sizeof(T)`` when a row's bytes are a multiple of 16);
each thread handles the element pair ``idx = gid * R`` and its mirror: it loads one vector of ``R`` elements
at ``srcIdx`` and one at ``dstIdx`` (the ``uint4`` type: one 16-byte access each) and stores them crossed.
Threads with ``idx >= len`` return. The first launch of the program (the data's row) is ``unsigned char``,
row-major, reversed along the rows (``dst row = nrows - 1 - src row``, same column): ``R = 16``,
``len = ceil(nrows / 2) * ncols`` elements, ``ceil(len / R / 256)`` blocks of 256 (8192 x 8192: 8192 blocks,
2,097,152 threads). Only that branch of the kernel is ported (the other three are later launches).

Inputs: ``uniform_int_distribution(0, 255)`` from ``default_random_engine(123)``; here NumPy's generator
(uniform bytes) seeded with ``seed``. The output buffer is ``cudaMalloc``'d and not cleared: zeros here.

Deliberate difference: a 16-byte vector access is written as two 8-byte accesses (the matrix viewed as
uint64 words; NumPy has no 16-byte integer), so a thread has four loads and four stores instead of two and
two. The row length must be a multiple of 16 (the original's condition for ``R = 16``).

Measured size: about 6e7 records (the index arithmetic and eight memory records of 2 M threads):
``feature_point`` is a 2048 x 1024 matrix (65,536 threads).

Precision: integer only.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

TPB = 256
RATIO = 16  # elements (bytes) per vector access

POINTS = {"8192 8192 100": {"nrows": 8192, "ncols": 8192, "repeat": 100}}
FEATURE_POINT = {"nrows": 2048, "ncols": 1024, "repeat": 100}
TEST_POINT = {"nrows": 64, "ncols": 496, "repeat": 1}


def _length(nrows, ncols):
    return (nrows + 1) // 2 * ncols


def reverse_kernel(out, inp, nrows, ncols, n_threads):
    """Row-major matrix reversed along the rows, one work item per 16-byte vector pair.

    Parameters
    ----------
    out, inp : uint64 views of the ``nrows x ncols`` byte matrices (``nrows * ncols / 8`` words); ``out`` is
        written. nrows, ncols : the matrix (``ncols`` a multiple of 16). n_threads : launched threads.

    Returns
    -------
    ``out``.
    """
    length = (nrows + 1) // 2 * ncols
    for gid in numba.prange(n_threads):
        idx = gid * RATIO
        if idx < length:
            src_row = idx // ncols
            src_col = idx % ncols
            dst_row = nrows - src_row - 1
            dst_col = src_col
            src_idx = idx
            dst_idx = dst_col + dst_row * ncols
            s = src_idx // 8
            d = dst_idx // 8
            a0 = inp[s]
            a1 = inp[s + 1]
            b0 = inp[d]
            b1 = inp[d + 1]
            out[d] = a0
            out[d + 1] = a1
            out[s] = b0
            out[s + 1] = b1
    return out


@cuda.jit
def _reverse_gpu(out, inp, nrows, ncols, length):
    gid = cuda.grid(1)
    idx = gid * RATIO
    if idx >= length:
        return
    src_row = idx // ncols
    src_col = idx % ncols
    dst_row = nrows - src_row - 1
    dst_idx = src_col + dst_row * ncols
    s = idx // 8
    d = dst_idx // 8
    a0 = inp[s]
    a1 = inp[s + 1]
    b0 = inp[d]
    b1 = inp[d + 1]
    out[d] = a0
    out[d + 1] = a1
    out[s] = b0
    out[s + 1] = b1


def _to_device(out, inp, nrows, ncols, n_threads):
    return {"out": cuda.to_device(out), "inp": cuda.to_device(inp), "nrows": int(nrows), "ncols": int(ncols),
            "n": int(n_threads)}


def _launch(s):
    _reverse_gpu[s["n"] // TPB, TPB](s["out"], s["inp"], s["nrows"], s["ncols"],
                                     _length(s["nrows"], s["ncols"]))


def _from_device(s):
    return s["out"].copy_to_host()


def work(params):
    nrows, ncols = int(params["nrows"]), int(params["ncols"])
    if ncols % RATIO:
        raise ValueError(f"reverse2D: ncols must be a multiple of {RATIO}, got {ncols}")
    vectors = _length(nrows, ncols) // RATIO
    return (vectors + TPB - 1) // TPB * TPB, TPB


def make_inputs(params, seed):
    """``(out, inp, nrows, ncols, n_threads)``: uniform random bytes, viewed as uint64 words; ``out`` zeros."""
    nrows, ncols = int(params["nrows"]), int(params["ncols"])
    n_threads = work(params)[0]
    rng = np.random.default_rng(seed)
    inp = rng.integers(0, 256, size=nrows * ncols, dtype=np.uint8)
    return np.zeros(nrows * ncols // 8, dtype=np.uint64), inp.view(np.uint64), nrows, ncols, n_threads


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="reverse2D",
        kernel="reverseKernel",
        description="HeCBench reverse2D: a row-major byte matrix reversed along its rows, 16-byte vectors, "
        "one thread per mirrored vector pair",
        cpu=reverse_kernel,
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
