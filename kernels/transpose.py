"""transpose: out-of-place transpose of an ``n x (3n/2)`` float32 matrix.

No arithmetic at all: the kernel is pure data movement whose CPU cost is the strided writes. The GPU port
is the standard 32x32 shared-memory tile (padded to 33 columns against bank conflicts) so that both the
global reads and the global writes are coalesced; each 32x8 thread block moves one tile.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TILE = 32
BROWS = 8
TILE_PAD = TILE + 1  # padded row length against shared-memory bank conflicts


def transpose_cpu(a):
    """CPU region: the transpose of a float32 matrix.

    Parameters
    ----------
    a : numpy.ndarray
        float32 matrix of shape ``(n, m)``.

    Returns
    -------
    numpy.ndarray
        float32 matrix of shape ``(m, n)`` with ``out[j, i] = a[i, j]``.
    """
    n, m = a.shape
    out = np.empty((m, n), dtype=np.float32)
    for idx in numba.prange(n * m):
        i = idx // m
        j = idx - i * m
        out[j, i] = a[i, j]
    return out


@cuda.jit
def _transpose_kernel(a, out):
    tile = cuda.shared.array(shape=(TILE, TILE_PAD), dtype=numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = a.shape[0]
    m = a.shape[1]
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for r in range(0, TILE, BROWS):
        if y + r < n and x < m:
            tile[ty + r, tx] = a[y + r, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    for r in range(0, TILE, BROWS):
        if y + r < m and x < n:
            out[y + r, x] = tile[tx, ty + r]


def _to_device(a):
    return {"a": cuda.to_device(a), "out": cuda.device_array((a.shape[1], a.shape[0]), dtype=np.float32)}


def _launch(s):
    n, m = s["a"].shape
    _transpose_kernel[(blocks_for(m, TILE), blocks_for(n, TILE)), (TILE, BROWS)](s["a"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``(a,)``: an ``n x (3n // 2)`` float32 matrix uniform in [0, 1)."""
    return (rng(seed).random((n, (3 * n) // 2)).astype(np.float32),)


KERNEL = KernelSpec(
    name="transpose",
    category="dense",
    description="float32 matrix transpose; GPU moves 32x32 tiles through padded shared memory",
    cpu=transpose_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 40, "small": 512, "medium": 2048, "large": 5120},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
