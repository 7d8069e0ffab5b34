"""histogram: a 256-bin histogram of byte values with a peaked (image-like) distribution.

Each element does a data-dependent read-modify-write of one counter. The GPU port privatises the
histogram per block in shared memory (shared-memory atomics, heavy contention on the popular bins), then
merges each block's counts into the global histogram with global atomics; a zeroing kernel runs first.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

NBINS = 256
TPB = 256
MAX_BLOCKS = 512


def histogram_cpu(data):
    """CPU region: counts of each byte value.

    Parameters
    ----------
    data : numpy.ndarray
        uint8 vector.

    Returns
    -------
    numpy.ndarray
        int32 vector of 256 counts.
    """
    hist = np.zeros(256, dtype=np.int32)
    for i in numba.prange(data.shape[0]):
        hist[data[i]] += 1
    return hist


@cuda.jit
def _zero(hist):
    i = cuda.grid(1)
    if i < hist.shape[0]:
        hist[i] = 0


@cuda.jit
def _histogram_kernel(data, hist):
    local = cuda.shared.array(shape=NBINS, dtype=numba.int32)
    t = cuda.threadIdx.x
    b = t
    while b < NBINS:
        local[b] = 0
        b += TPB
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.shape[0]:
        cuda.atomic.add(local, data[i], 1)
        i += stride
    cuda.syncthreads()
    b = t
    while b < NBINS:
        if local[b] != 0:
            cuda.atomic.add(hist, b, local[b])
        b += TPB


def _to_device(data):
    return {"data": cuda.to_device(data), "hist": cuda.device_array(NBINS, dtype=np.int32),
            "blocks": min(blocks_for(data.shape[0], TPB), MAX_BLOCKS)}


def _launch(s):
    _zero[blocks_for(NBINS, TPB), TPB](s["hist"])
    _histogram_kernel[s["blocks"], TPB](s["data"], s["hist"])


def _from_device(s):
    return s["hist"].copy_to_host()


def make_inputs(n, seed):
    """``(data,)``: ``n`` uint8 values drawn from a normal(128, 20) distribution, clipped to 0..255."""
    v = np.rint(rng(seed).normal(128.0, 20.0, n))
    return (np.clip(v, 0, 255).astype(np.uint8),)


KERNEL = KernelSpec(
    name="histogram",
    category="reduction",
    description="256-bin byte histogram; GPU per-block shared-memory atomics merged with global atomics",
    cpu=histogram_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 1000, "small": 1 << 16, "medium": 1 << 22, "large": 1 << 27},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
