"""stencil3d: one sweep of the 7-point stencil on an ``n x n x n`` float32 grid.

Interior cells become ``0.4 * centre + 0.1 * (sum of the six face neighbours)``; boundary cells are copied.
One parallel iteration (GPU thread) per cell; the GPU port uses a 3-D grid of 8x8x4 blocks reading global
memory directly (neighbours along the fastest axis are coalesced, the others hit L1/L2).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

BX, BY, BZ = 8, 8, 4


def stencil3d_cpu(u):
    """CPU region: one sweep of the 7-point stencil.

    Parameters
    ----------
    u : numpy.ndarray
        float32 grid of shape ``(n0, n1, n2)``.

    Returns
    -------
    numpy.ndarray
        float32 grid of the same shape: interior updated, boundary copied.
    """
    n0, n1, n2 = u.shape
    out = np.empty((n0, n1, n2), dtype=np.float32)
    for idx in numba.prange(n0 * n1 * n2):
        i = idx // (n1 * n2)
        r = idx - i * (n1 * n2)
        j = r // n2
        k = r - j * n2
        if i == 0 or j == 0 or k == 0 or i == n0 - 1 or j == n1 - 1 or k == n2 - 1:
            out[i, j, k] = u[i, j, k]
        else:
            nb = (u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k] + u[i, j + 1, k]
                  + u[i, j, k - 1] + u[i, j, k + 1])
            out[i, j, k] = 0.4 * u[i, j, k] + 0.1 * nb
    return out


@cuda.jit
def _stencil3d_kernel(u, out):
    k, j, i = cuda.grid(3)
    n0 = u.shape[0]
    n1 = u.shape[1]
    n2 = u.shape[2]
    if i < n0 and j < n1 and k < n2:
        if i == 0 or j == 0 or k == 0 or i == n0 - 1 or j == n1 - 1 or k == n2 - 1:
            out[i, j, k] = u[i, j, k]
        else:
            nb = (u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k] + u[i, j + 1, k]
                  + u[i, j, k - 1] + u[i, j, k + 1])
            out[i, j, k] = 0.4 * u[i, j, k] + 0.1 * nb


def _to_device(u):
    return {"u": cuda.to_device(u), "out": cuda.device_array(u.shape, dtype=np.float32)}


def _launch(s):
    n0, n1, n2 = s["u"].shape
    grid = (blocks_for(n2, BX), blocks_for(n1, BY), blocks_for(n0, BZ))
    _stencil3d_kernel[grid, (BX, BY, BZ)](s["u"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``(u,)``: an ``n x n x n`` float32 grid uniform in [0, 1)."""
    return (rng(seed).random((n, n, n)).astype(np.float32),)


KERNEL = KernelSpec(
    name="stencil3d",
    category="dense",
    description="7-point stencil sweep on a float32 cube, one thread per cell",
    cpu=stencil3d_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 8, "small": 64, "medium": 128, "large": 256},
    rtol=1e-5,
    atol=1e-6,
    expect_gpu_faster=True,
)
