"""Sparse matrix-vector product, Extended OpenDwarfs ``csr`` (SPMV): the kernel ``csr``, as AIWC timed it.

``y = A x + y`` with the square matrix ``A`` in compressed sparse row form (``Ap`` row pointers, ``Aj``
column indices, ``Ax`` values; single precision): one work item per row (global size = rows, with the
original's ``row < num_rows`` guard) starts from ``y[row]``, adds ``Ax[jj] * x[Aj[jj]]`` over the row's
non-zeros in order, and stores the sum back into ``y[row]``.

Work-group size: the host takes the kernel's maximum work-group size, or, when that does not divide the
row count, the largest power of two that does. On NVIDIA devices the maximum is 1024, which gives 32
(736 rows), 16 (2416), 1024 (14336) and 1024 (16384); AMD devices (maximum 256) use 256 for the last two.
``work`` reports the NVIDIA choice, which the GPU port uses.

Sizes and inputs: the AIWC matrices were made by ``createcsr -n N -d 5000`` (N = 736, 2416, 14336, 16384;
density 5000 ppm). That generator draws each row's non-zero count from a normal distribution with mean
``N * density / 10^6`` and standard deviation 1% of the mean (below 0 gives 0, above twice the mean gives
twice the mean truncated, otherwise rounded half away from zero), the row's columns as distinct uniform
random columns (sorted), and the values as ``1 - 2 U`` (U uniform in [0, 1), zero redrawn), written to the
file with six decimals. It uses a ziggurat normal generator and glibc ``rand`` seeded with its process id
(unknown); here the same distributions come from NumPy's generator seeded with ``seed``. The vectors are
the host's: ``x[i] = rand() / (RAND_MAX + 1.0)`` for every column, then ``y[i] = rand() / (RAND_MAX + 2.0)``
for every row, glibc ``rand`` unseeded (seed 1; here ``1 + seed``, so seed 0 gives the original's vectors).

Precision: single (float32 values and vectors, as the original's ``float``); every floating-point record is
FP_* (FP64 share 0).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from ._glibc import RAND_MAX, glibc_rand
from .spec import MeasuredKernel

MAX_WG = 1024  # CL_KERNEL_WORK_GROUP_SIZE on the NVIDIA devices of the data
NORMAL_STDDEV = 0.01  # createcsr's default: the non-zeros per row's standard deviation / their mean

#: AIWC sizes: ``createcsr -n N -d 5000``
POINTS = {
    "tiny": {"n": 736, "density": 5000},
    "small": {"n": 2416, "density": 5000},
    "medium": {"n": 14336, "density": 5000},
    "large": {"n": 16384, "density": 5000},
}
#: 128 rows of 6 non-zeros (5% dense), one work group
TEST_POINT = {"n": 128, "density": 50000}


def csr(num_rows, Ap, Aj, Ax, x, y):
    """``y += A x``, one work item per row.

    Parameters
    ----------
    num_rows : rows of ``A``.
    Ap : uint32 row pointers (``num_rows + 1``). Aj : uint32 column indices. Ax : float32 values.
    x : float32, one per column. y : float32, one per row, updated in place.

    Returns
    -------
    ``y``.
    """
    for row in numba.prange(num_rows):
        if row < num_rows:
            acc = y[row]
            row_start = Ap[row]
            row_end = Ap[row + 1]
            for jj in range(row_start, row_end):
                acc += Ax[jj] * x[Aj[jj]]
            y[row] = acc
    return y


@cuda.jit
def _csr_gpu(num_rows, Ap, Aj, Ax, x, y):
    row = cuda.grid(1)
    if row < num_rows:
        acc = y[row]
        row_start = Ap[row]
        row_end = Ap[row + 1]
        for jj in range(row_start, row_end):
            acc += Ax[jj] * x[Aj[jj]]
        y[row] = acc


def work_group_size(rows, max_wg=MAX_WG):
    """The host's work-group size for ``rows`` work items: ``max_wg`` if it divides ``rows``, else the
    largest power of two dividing ``rows``."""
    if rows % max_wg == 0:
        return max_wg
    return rows & -rows


def _to_device(num_rows, Ap, Aj, Ax, x, y):
    s = {k: cuda.to_device(a) for k, a in zip(("Ap", "Aj", "Ax", "x", "y"), (Ap, Aj, Ax, x, y))}
    s["num_rows"] = int(num_rows)
    return s


def _launch(s):
    n = s["num_rows"]
    local = work_group_size(n)
    _csr_gpu[n // local, local](n, s["Ap"], s["Aj"], s["Ax"], s["x"], s["y"])


def _from_device(s):
    return s["y"].copy_to_host()


def random_csr(n, density, seed, normal_stddev=NORMAL_STDDEV):
    """A square ``n x n`` matrix as ``createcsr -n n -d density`` makes one: ``(Ap, Aj, Ax)``."""
    rng = np.random.default_rng(seed)
    mean = n * density / 1e6
    stddev = normal_stddev * mean
    high = min(float(n), 2.0 * mean)
    draw = rng.standard_normal(n) * stddev + mean
    counts = np.where(draw < 0, 0.0, np.where(draw > high, np.trunc(high), np.floor(draw + 0.5))).astype(np.int64)
    Ap = np.zeros(n + 1, dtype=np.uint32)
    Ap[1:] = np.cumsum(counts)
    Aj = np.empty(int(Ap[-1]), dtype=np.uint32)
    for row in range(n):
        k = int(counts[row])
        chosen = np.empty(0, dtype=np.int64)
        while chosen.size < k:  # distinct uniform columns, as the generator's redraw of repeats gives
            more = rng.integers(0, n, size=2 * (k - chosen.size) + 4)
            merged = np.concatenate([chosen, more])
            _, first = np.unique(merged, return_index=True)
            chosen = merged[np.sort(first)][:k]
        Aj[Ap[row] : Ap[row + 1]] = np.sort(chosen)
    values = 1.0 - 2.0 * rng.random(Aj.size)
    while np.any(values == 0.0):
        zero = values == 0.0
        values[zero] = 1.0 - 2.0 * rng.random(int(zero.sum()))
    Ax = np.round(values, 6).astype(np.float32)  # the file holds six decimals
    return Ap, Aj, Ax


def host_vectors(n, seed):
    """The host's ``x`` (columns) and ``y`` (rows), float32, from glibc ``rand`` after ``srand(1 + seed)``."""
    r = glibc_rand(1 + seed, 2 * n).astype(np.float64)
    x = (r[:n] / (RAND_MAX + 1.0)).astype(np.float32)
    y = (r[n:] / (RAND_MAX + 2.0)).astype(np.float32)
    return x, y


def make_inputs(params, seed):
    """``(num_rows, Ap, Aj, Ax, x, y)`` at a point."""
    n, density = int(params["n"]), int(params["density"])
    Ap, Aj, Ax = random_csr(n, density, seed, params.get("normal_stddev", NORMAL_STDDEV))
    x, y = host_vectors(n, seed)
    return n, Ap, Aj, Ax, x, y


def work(params):
    n = int(params["n"])
    return n, work_group_size(n)


KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="csr",
        kernel="csr",
        description="Extended OpenDwarfs csr (AIWC): scalar CSR sparse matrix-vector product y += A x, "
        "one work item per row, 0.5% dense random matrix",
        cpu=csr,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-6,
    ),
]
