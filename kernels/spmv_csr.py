"""Sparse matrix-vector product ``y = A @ x`` with ``A`` in CSR form (irregular memory).

CPU region: one iteration of the parallel loop per row; the row's non-zeros are read contiguously but
``x`` is gathered through the column indices. GPU port: "CSR-vector" — one warp (32 threads) per row,
lanes stride over the row's non-zeros and the partial sums are reduced in shared memory, so loads of
``data``/``indices`` are coalesced even though rows are short.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

WARP = 32
ROWS_PER_BLOCK = 4
TPB = WARP * ROWS_PER_BLOCK


def spmv_csr(indptr, indices, data, x):
    """Compute ``A @ x`` for the CSR matrix (indptr, indices, data).

    Parameters
    ----------
    indptr, indices, data : CSR arrays (int64, int64, float64).
    x : float64 vector of length n_cols.

    Returns
    -------
    float64 vector of length n_rows.
    """
    n = indptr.shape[0] - 1
    y = np.empty(n, dtype=np.float64)
    for i in numba.prange(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * x[indices[k]]
        y[i] = acc
    return y


@cuda.jit
def _spmv_vector(indptr, indices, data, x, y):
    partial = cuda.shared.array(TPB, dtype=numba.float64)
    t = cuda.threadIdx.x
    lane = t % WARP
    row = cuda.blockIdx.x * ROWS_PER_BLOCK + t // WARP
    acc = 0.0
    if row < y.shape[0]:
        for k in range(indptr[row] + lane, indptr[row + 1], WARP):
            acc += data[k] * x[indices[k]]
    partial[t] = acc
    cuda.syncthreads()
    step = WARP // 2
    while step > 0:
        if lane < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if lane == 0 and row < y.shape[0]:
        y[row] = partial[t]


def _to_device(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    return {
        "indptr": cuda.to_device(indptr),
        "indices": cuda.to_device(indices),
        "data": cuda.to_device(data),
        "x": cuda.to_device(x),
        "y": cuda.device_array(n, dtype=np.float64),
    }


def _launch(s):
    n = s["y"].shape[0]
    blocks = (n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    _spmv_vector[blocks, TPB](s["indptr"], s["indices"], s["data"], s["x"], s["y"])


def _from_device(s):
    return s["y"].copy_to_host()


def make_inputs(n, seed):
    """An ``n x n`` random sparse matrix with 1..31 non-zeros per row (16 on average) and a vector."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 32, size=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    indices = rng.integers(0, n, size=nnz).astype(np.int64)
    data = rng.uniform(-1.0, 1.0, size=nnz)
    x = rng.uniform(-1.0, 1.0, size=n)
    return indptr, indices, data, x


KERNEL = KernelSpec(
    name="spmv_csr",
    category="irregular",
    description="CSR sparse matrix-vector product; GPU: one warp per row, shared-memory reduction",
    cpu=spmv_csr,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 12, "small": 10_000, "medium": 200_000, "large": 2_000_000},
    rtol=1e-10,
    atol=1e-12,
    expect_gpu_faster=True,
)
