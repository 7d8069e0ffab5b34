"""dot: the inner product of two float64 vectors.

A reduction with two loads per multiply-add. The GPU port reduces each block's products in shared memory
and combines the block results with one float64 atomic add per block (a zeroing kernel runs first, so the
launch can be repeated).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 256
MAX_BLOCKS = 1024


def dot_cpu(x, y):
    """CPU region: ``sum(x[i] * y[i])`` accumulated left to right.

    Parameters
    ----------
    x, y : numpy.ndarray
        float64 vectors of the same length.

    Returns
    -------
    float
        The inner product.
    """
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += x[i] * y[i]
    return s


@cuda.jit
def _zero(result):
    if cuda.grid(1) == 0:
        result[0] = 0.0


@cuda.jit
def _dot_kernel(x, y, result):
    sh = cuda.shared.array(shape=TPB, dtype=numba.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    while i < x.shape[0]:
        acc += x[i] * y[i]
        i += stride
    sh[t] = acc
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if t < half:
            sh[t] += sh[t + half]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        cuda.atomic.add(result, 0, sh[0])


def _to_device(x, y):
    return {"x": cuda.to_device(x), "y": cuda.to_device(y), "result": cuda.device_array(1, dtype=np.float64),
            "blocks": min(blocks_for(x.shape[0], TPB), MAX_BLOCKS)}


def _launch(s):
    _zero[1, 32](s["result"])
    _dot_kernel[s["blocks"], TPB](s["x"], s["y"], s["result"])


def _from_device(s):
    return float(s["result"].copy_to_host()[0])


def make_inputs(n, seed):
    """``(x, y)``: two float64 vectors of length ``n`` uniform in [-1, 1)."""
    g = rng(seed)
    return g.uniform(-1.0, 1.0, n), g.uniform(-1.0, 1.0, n)


KERNEL = KernelSpec(
    name="dot",
    category="reduction",
    description="float64 inner product; GPU shared-memory block sums combined with atomics",
    cpu=dot_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 700, "small": 1 << 16, "medium": 1 << 21, "large": 1 << 25},
    rtol=1e-9,
    atol=1e-10,
    expect_gpu_faster=True,
)
