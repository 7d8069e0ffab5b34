"""matvec: dense matrix-vector product ``y = A @ x`` in float64, one row per parallel iteration.

Each row is an inner product (a loop-carried sum): O(n^2) data read once, so the kernel is memory-bound and
its GPU speedup is eaten by the transfer of ``A`` when transfers count. The GPU port runs one row per
thread over ``A`` stored column-major (transposed in ``to_device``) so a warp reads consecutive addresses,
and stages ``x`` in shared memory a tile at a time.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 128


def matvec_cpu(A, x):
    """CPU region: ``A @ x``.

    Parameters
    ----------
    A : numpy.ndarray
        float64 matrix of shape ``(n, m)``.
    x : numpy.ndarray
        float64 vector of length ``m``.

    Returns
    -------
    numpy.ndarray
        float64 vector of length ``n``.
    """
    n, m = A.shape
    y = np.empty(n, dtype=np.float64)
    for i in numba.prange(n):
        s = 0.0
        for k in range(m):
            s += A[i, k] * x[k]
        y[i] = s
    return y


@cuda.jit
def _matvec_kernel(At, x, y):
    sx = cuda.shared.array(shape=TPB, dtype=numba.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    m = At.shape[0]
    n = At.shape[1]
    acc = 0.0
    for tile in range((m + TPB - 1) // TPB):
        base = tile * TPB
        if base + t < m:
            sx[t] = x[base + t]
        else:
            sx[t] = 0.0
        cuda.syncthreads()
        if i < n:
            lim = min(TPB, m - base)
            for q in range(lim):
                acc += At[base + q, i] * sx[q]
        cuda.syncthreads()
    if i < n:
        y[i] = acc


def _to_device(A, x):
    return {"At": cuda.to_device(np.ascontiguousarray(A.T)), "x": cuda.to_device(x),
            "y": cuda.device_array(A.shape[0], dtype=np.float64)}


def _launch(s):
    n = s["At"].shape[1]
    _matvec_kernel[blocks_for(n, TPB), TPB](s["At"], s["x"], s["y"])


def _from_device(s):
    return s["y"].copy_to_host()


def make_inputs(n, seed):
    """``(A, x)``: an ``n x n`` float64 matrix and a length-``n`` vector, uniform in [-1, 1)."""
    g = rng(seed)
    return g.uniform(-1.0, 1.0, (n, n)), g.uniform(-1.0, 1.0, n)


KERNEL = KernelSpec(
    name="matvec",
    category="dense",
    description="float64 dense matrix-vector product, one row per thread over a column-major copy of A",
    cpu=matvec_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 150, "small": 1024, "medium": 4096, "large": 8192},
    rtol=1e-10,
    atol=1e-10,
    expect_gpu_faster=True,
)
