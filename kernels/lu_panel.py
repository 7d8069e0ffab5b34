"""LU factorisation with partial pivoting of a tall, narrow panel (the panel step of blocked LU).

For each of the ``b`` columns: find the pivot (a serial max-abs search down the column), swap two rows,
then scale the column below the pivot and update the trailing columns (the parallel loop, one
iteration per row). GPU port: three launches per column — a one-block arg-max reduction in shared
memory, a row swap, and a row-parallel scale-and-update kernel that keeps the pivot row in shared
memory — so ``3 b`` short dependent launches: little work per launch, the classic panel bottleneck.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256
MAX_B = 64
PANEL_WIDTH = 32


def lu_panel(A):
    """Packed LU factors and pivot rows of the ``m x b`` panel ``A`` (``m >= b``), as LAPACK getrf.

    Parameters
    ----------
    A : float64 array ``(m, b)``; not modified.

    Returns
    -------
    (LU, piv): LU holds the unit lower factor below the diagonal and the upper factor on and above it;
    ``piv[k]`` is the row swapped with row ``k`` at step ``k``.
    """
    m, b = A.shape
    LU = A.copy()
    piv = np.empty(b, dtype=np.int64)
    for k in range(b):
        p = k
        best = abs(LU[k, k])
        for i in range(k + 1, m):
            v = abs(LU[i, k])
            if v > best:
                best = v
                p = i
        piv[k] = p
        if p != k:
            for j in range(b):
                tmp = LU[k, j]
                LU[k, j] = LU[p, j]
                LU[p, j] = tmp
        inv = 1.0 / LU[k, k]
        for i in numba.prange(k + 1, m):
            lik = LU[i, k] * inv
            LU[i, k] = lik
            for j in range(k + 1, b):
                LU[i, j] -= lik * LU[k, j]
    return LU, piv


@cuda.jit
def _pivot(LU, k, piv):
    vals = cuda.shared.array(TPB, dtype=numba.float64)
    idxs = cuda.shared.array(TPB, dtype=numba.int64)
    t = cuda.threadIdx.x
    m = LU.shape[0]
    best = -1.0
    bi = m
    nt = cuda.blockDim.x  # a power of two <= TPB
    for i in range(k + t, m, nt):
        v = abs(LU[i, k])
        if v > best:
            best = v
            bi = i
    vals[t] = best
    idxs[t] = bi
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            v2 = vals[t + step]
            i2 = idxs[t + step]
            if v2 > vals[t] or (v2 == vals[t] and i2 < idxs[t]):
                vals[t] = v2
                idxs[t] = i2
        cuda.syncthreads()
        step //= 2
    if t == 0:
        piv[k] = idxs[0]


@cuda.jit
def _swap(LU, k, piv):
    j = cuda.grid(1)
    p = piv[k]
    if j < LU.shape[1] and p != k:
        tmp = LU[k, j]
        LU[k, j] = LU[p, j]
        LU[p, j] = tmp


@cuda.jit
def _update(LU, k):
    row_k = cuda.shared.array(MAX_B, dtype=numba.float64)
    m, b = LU.shape
    t = cuda.threadIdx.x
    j = t
    while j < b:
        row_k[j] = LU[k, j]
        j += cuda.blockDim.x
    cuda.syncthreads()
    i = k + 1 + cuda.grid(1)
    if i < m:
        lik = LU[i, k] * (1.0 / row_k[k])
        LU[i, k] = lik
        for j in range(k + 1, b):
            LU[i, j] -= lik * row_k[j]


def _to_device(A):
    if A.shape[1] > MAX_B:
        raise ValueError(f"lu_panel GPU port handles panels up to {MAX_B} columns, got {A.shape[1]}")
    return {"LU": cuda.to_device(np.ascontiguousarray(A)), "piv": cuda.device_array(A.shape[1], dtype=np.int64)}


def _launch(s):
    m, b = s["LU"].shape
    tpb = min(TPB, 32 * ((m + 31) // 32))
    ptpb = 32
    while ptpb < TPB and ptpb < m:
        ptpb *= 2
    for k in range(b):
        _pivot[1, ptpb](s["LU"], k, s["piv"])
        _swap[1, 32 * ((b + 31) // 32)](s["LU"], k, s["piv"])
        rows = m - k - 1
        if rows > 0:
            _update[(rows + tpb - 1) // tpb, tpb](s["LU"], k)


def _from_device(s):
    return s["LU"].copy_to_host(), s["piv"].copy_to_host()


def make_inputs(n, seed):
    """A random panel of ``n`` rows with entries uniform in [-1, 1]: 32 columns, or 8 when ``n < 256``
    (the test size, so the CUDA simulator stays quick)."""
    rng = np.random.default_rng(seed)
    b = PANEL_WIDTH if n >= 256 else 8
    return (rng.uniform(-1.0, 1.0, size=(max(n, b), b)),)


KERNEL = KernelSpec(
    name="lu_panel",
    category="serial",
    description="partial-pivoting LU of a tall 32-column panel (8 at tiny size); "
    "GPU: pivot/swap/update launches per column",
    cpu=lu_panel,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 40, "small": 5_000, "medium": 50_000, "large": 400_000},
    rtol=1e-9,
    atol=1e-12,
    expect_gpu_faster=False,
)
