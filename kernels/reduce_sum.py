"""reduce_sum: the sum of a float64 vector.

A reduction: on the CPU one loop-carried add per element (latency-bound), on the GPU the standard
two-pass tree: each thread accumulates a grid-stride slice, blocks reduce in shared memory and write one
partial each, and a second launch of the same kernel with one block reduces the partials.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 256
MAX_BLOCKS = 1024


def reduce_sum_cpu(x):
    """CPU region: ``sum(x)`` accumulated left to right.

    Parameters
    ----------
    x : numpy.ndarray
        float64 vector.

    Returns
    -------
    float
        The sum.
    """
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += x[i]
    return s


@cuda.jit
def _block_sums(x, partial):
    sh = cuda.shared.array(shape=TPB, dtype=numba.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    while i < x.shape[0]:
        acc += x[i]
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
        partial[cuda.blockIdx.x] = sh[0]


def _to_device(x):
    nb = min(blocks_for(x.shape[0], TPB), MAX_BLOCKS)
    return {"x": cuda.to_device(x), "partial": cuda.device_array(nb, dtype=np.float64),
            "total": cuda.device_array(1, dtype=np.float64)}


def _launch(s):
    nb = s["partial"].shape[0]
    _block_sums[nb, TPB](s["x"], s["partial"])
    _block_sums[1, TPB](s["partial"], s["total"])


def _from_device(s):
    return float(s["total"].copy_to_host()[0])


def make_inputs(n, seed):
    """``(x,)``: a float64 vector of length ``n`` uniform in [0, 1)."""
    return (rng(seed).random(n),)


KERNEL = KernelSpec(
    name="reduce_sum",
    category="reduction",
    description="sum of a float64 vector; GPU two-pass shared-memory tree reduction",
    cpu=reduce_sum_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 500, "small": 1 << 16, "medium": 1 << 21, "large": 1 << 26},
    rtol=1e-10,
    atol=1e-10,
    expect_gpu_faster=True,
)
