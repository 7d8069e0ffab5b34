"""conv2d: 2-D convolution (correlation form) of an ``n x n`` float32 image with a 5x5 filter, zero padding.

``out[i, j] = sum_{a,b} w[a, b] * img[i + a - 2, j + b - 2]`` (image values outside are zero), output the
same size as the image. One parallel iteration per output pixel; the GPU port keeps the filter in shared
memory (loaded once per block) and reads the image through the cache.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

K = 5
BS = 16


def conv2d_cpu(img, w):
    """CPU region: 'same'-size 2-D correlation with zero padding.

    Parameters
    ----------
    img : numpy.ndarray
        float32 image of shape ``(n, m)``.
    w : numpy.ndarray
        float32 filter of odd shape ``(kh, kw)``.

    Returns
    -------
    numpy.ndarray
        float32 image of shape ``(n, m)``.
    """
    n, m = img.shape
    kh, kw = w.shape
    rh = kh // 2
    rw = kw // 2
    out = np.empty((n, m), dtype=np.float32)
    for idx in numba.prange(n * m):
        i = idx // m
        j = idx - i * m
        s = np.float32(0.0)
        for a in range(kh):
            y = i + a - rh
            if y >= 0 and y < n:
                for b in range(kw):
                    x = j + b - rw
                    if x >= 0 and x < m:
                        s += w[a, b] * img[y, x]
        out[i, j] = s
    return out


@cuda.jit
def _conv2d_kernel(img, w, out):
    sw = cuda.shared.array(shape=(K, K), dtype=numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * BS + tx
    if t < K * K:
        sw[t // K, t % K] = w[t // K, t % K]
    cuda.syncthreads()
    j = cuda.blockIdx.x * BS + tx
    i = cuda.blockIdx.y * BS + ty
    n = img.shape[0]
    m = img.shape[1]
    if i < n and j < m:
        s = numba.float32(0.0)
        for a in range(K):
            y = i + a - K // 2
            if y >= 0 and y < n:
                for b in range(K):
                    x = j + b - K // 2
                    if x >= 0 and x < m:
                        s += sw[a, b] * img[y, x]
        out[i, j] = s


def _to_device(img, w):
    if w.shape != (K, K):
        raise ValueError(f"conv2d GPU port is compiled for a {K}x{K} filter, got {w.shape}")
    return {"img": cuda.to_device(img), "w": cuda.to_device(w),
            "out": cuda.device_array(img.shape, dtype=np.float32)}


def _launch(s):
    n, m = s["img"].shape
    _conv2d_kernel[(blocks_for(m, BS), blocks_for(n, BS)), (BS, BS)](s["img"], s["w"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``(img, w)``: an ``n x n`` float32 image uniform in [0, 1) and a 5x5 float32 filter in [-1, 1)."""
    g = rng(seed)
    img = g.random((n, n)).astype(np.float32)
    w = g.uniform(-1.0, 1.0, (K, K)).astype(np.float32)
    return img, w


KERNEL = KernelSpec(
    name="conv2d",
    category="dense",
    description="5x5 zero-padded 2-D convolution of a float32 image; filter in shared memory",
    cpu=conv2d_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 18, "small": 256, "medium": 1024, "large": 2560},
    rtol=1e-4,
    atol=1e-5,
    expect_gpu_faster=True,
)
