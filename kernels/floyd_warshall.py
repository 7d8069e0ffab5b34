"""All-pairs shortest paths by Floyd-Warshall (regular, dense, one dependent step per vertex).

For each intermediate vertex ``k`` (serial), every pair ``(i, j)`` may improve through ``k`` (the
parallel loop runs over rows ``i``). GPU port: one launch per ``k`` on a 2-D grid of 16x16 blocks;
each block stages its slice of row ``k`` and column ``k`` in shared memory, so each thread reads one
global value and writes at most one.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TB = 16


def floyd_warshall(dist):
    """Shortest-path lengths between all pairs.

    Parameters
    ----------
    dist : float64 ``(n, n)`` edge lengths, ``inf`` where there is no edge, 0 on the diagonal.

    Returns
    -------
    float64 ``(n, n)`` matrix of shortest-path lengths.
    """
    n = dist.shape[0]
    D = dist.copy()
    for k in range(n):
        for i in numba.prange(n):
            dik = D[i, k]
            for j in range(n):
                cand = dik + D[k, j]
                if cand < D[i, j]:
                    D[i, j] = cand
    return D


@cuda.jit
def _step(D, k):
    row_k = cuda.shared.array(TB, dtype=numba.float64)
    col_k = cuda.shared.array(TB, dtype=numba.float64)
    n = D.shape[0]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    j = cuda.blockIdx.x * cuda.blockDim.x + tx
    i = cuda.blockIdx.y * cuda.blockDim.y + ty
    if ty == 0 and j < n:
        row_k[tx] = D[k, j]
    if tx == 0 and i < n:
        col_k[ty] = D[i, k]
    cuda.syncthreads()
    if i < n and j < n:
        cand = col_k[ty] + row_k[tx]
        if cand < D[i, j]:
            D[i, j] = cand


def _to_device(dist):
    return {"D": cuda.to_device(np.ascontiguousarray(dist))}


def _launch(s):
    n = s["D"].shape[0]
    tb = min(TB, n)
    grid = ((n + tb - 1) // tb, (n + tb - 1) // tb)
    for k in range(n):
        _step[grid, (tb, tb)](s["D"], k)


def _from_device(s):
    return s["D"].copy_to_host()


def make_inputs(n, seed):
    """A random directed graph on ``n`` vertices, each pair an edge with probability 8/n, lengths in [1, 10)."""
    rng = np.random.default_rng(seed)
    dist = np.where(rng.random((n, n)) < min(1.0, 8.0 / n), rng.uniform(1.0, 10.0, size=(n, n)), np.inf)
    np.fill_diagonal(dist, 0.0)
    return (dist,)


KERNEL = KernelSpec(
    name="floyd_warshall",
    category="dense",
    description="Floyd-Warshall APSP; GPU: one launch per k, 16x16 blocks with row/column k in shared memory",
    cpu=floyd_warshall,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 10, "small": 128, "medium": 384, "large": 800},
    rtol=1e-12,
    atol=1e-12,
    expect_gpu_faster=True,
)
