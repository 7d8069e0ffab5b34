"""saxpy: ``out[i] = a * x[i] + y[i]`` in single precision (BLAS level 1).

Streaming, one multiply-add per 12 bytes moved: memory-bound on both sides. On the GPU the kernel is
bandwidth-bound and fast; with transfers included it is slower than the CPU (three arrays cross PCIe for
one operation each).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 256


def saxpy_cpu(a, x, y):
    """CPU region: ``a * x + y`` for float32 vectors ``x``, ``y`` and float32 scalar ``a``.

    Parameters
    ----------
    a : numpy.float32
        Scale factor.
    x, y : numpy.ndarray
        float32 vectors of the same length.

    Returns
    -------
    numpy.ndarray
        float32 vector ``a * x + y``.
    """
    n = x.shape[0]
    out = np.empty(n, dtype=np.float32)
    for i in numba.prange(n):
        out[i] = a * x[i] + y[i]
    return out


@cuda.jit
def _saxpy_kernel(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.shape[0]:
        out[i] = a * x[i] + y[i]
        i += stride


def _to_device(a, x, y):
    return {"a": np.float32(a), "x": cuda.to_device(x), "y": cuda.to_device(y),
            "out": cuda.device_array(x.shape[0], dtype=np.float32)}


def _launch(s):
    n = s["x"].shape[0]
    _saxpy_kernel[blocks_for(n, TPB), TPB](s["a"], s["x"], s["y"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``(a, x, y)``: float32 scalar and two float32 vectors of length ``n`` uniform in [-1, 1)."""
    g = rng(seed)
    x = g.uniform(-1.0, 1.0, n).astype(np.float32)
    y = g.uniform(-1.0, 1.0, n).astype(np.float32)
    return np.float32(2.5), x, y


KERNEL = KernelSpec(
    name="saxpy",
    category="dense",
    description="single-precision a*x+y over a vector; streaming, memory-bound",
    cpu=saxpy_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 300, "small": 1 << 16, "medium": 1 << 20, "large": 1 << 25},
    rtol=1e-6,
    atol=1e-6,
    expect_gpu_faster=True,
)
