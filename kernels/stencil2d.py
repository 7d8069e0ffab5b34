"""stencil2d: one sweep of the 5-point Jacobi stencil on an ``n x n`` float32 grid.

Interior cells become ``0.2 * (centre + north + south + west + east)``; boundary cells are copied. The CPU
region iterates over all cells (one parallel iteration per output cell, like one GPU thread per cell). The
GPU port stages a ``(16+2) x (16+2)`` tile with its halo in shared memory so each input value is read from
global memory about once per block.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

BS = 16
HALO = BS + 2  # shared tile edge (a compile-time constant for cuda.shared.array)


def stencil2d_cpu(u):
    """CPU region: one Jacobi sweep of the 5-point stencil.

    Parameters
    ----------
    u : numpy.ndarray
        float32 grid of shape ``(n, m)``.

    Returns
    -------
    numpy.ndarray
        float32 grid of the same shape: interior averaged, boundary copied.
    """
    n, m = u.shape
    out = np.empty((n, m), dtype=np.float32)
    for idx in numba.prange(n * m):
        i = idx // m
        j = idx - i * m
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = u[i, j]
        else:
            out[i, j] = 0.2 * (u[i, j] + u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return out


@cuda.jit
def _stencil2d_kernel(u, out):
    sh = cuda.shared.array(shape=(HALO, HALO), dtype=numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    j = cuda.blockIdx.x * BS + tx
    i = cuda.blockIdx.y * BS + ty
    n = u.shape[0]
    m = u.shape[1]
    inside = i < n and j < m
    if inside:
        sh[ty + 1, tx + 1] = u[i, j]
        if tx == 0 and j > 0:
            sh[ty + 1, 0] = u[i, j - 1]
        if tx == BS - 1 and j + 1 < m:
            sh[ty + 1, BS + 1] = u[i, j + 1]
        if ty == 0 and i > 0:
            sh[0, tx + 1] = u[i - 1, j]
        if ty == BS - 1 and i + 1 < n:
            sh[BS + 1, tx + 1] = u[i + 1, j]
    cuda.syncthreads()
    if inside:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = sh[ty + 1, tx + 1]
        else:
            out[i, j] = 0.2 * (sh[ty + 1, tx + 1] + sh[ty, tx + 1] + sh[ty + 2, tx + 1]
                               + sh[ty + 1, tx] + sh[ty + 1, tx + 2])


def _to_device(u):
    return {"u": cuda.to_device(u), "out": cuda.device_array(u.shape, dtype=np.float32)}


def _launch(s):
    n, m = s["u"].shape
    _stencil2d_kernel[(blocks_for(m, BS), blocks_for(n, BS)), (BS, BS)](s["u"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``(u,)``: an ``n x n`` float32 grid uniform in [0, 1)."""
    return (rng(seed).random((n, n)).astype(np.float32),)


KERNEL = KernelSpec(
    name="stencil2d",
    category="dense",
    description="5-point Jacobi sweep on a float32 grid; GPU stages halo tiles in shared memory",
    cpu=stencil2d_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 20, "small": 512, "medium": 2048, "large": 6144},
    rtol=1e-5,
    atol=1e-6,
    expect_gpu_faster=True,
)
