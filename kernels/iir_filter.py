"""iir_filter: a second-order recursive (IIR) filter run along 4 long channels.

``y[c, t] = b0 * x[c, t] + a1 * y[c, t-1] + a2 * y[c, t-2]``: every sample depends on the two before it,
so the only parallelism is across the 4 channels. The GPU port is the direct one (one thread per channel,
each walking its channel serially): 4 active threads on a whole GPU, each at the GPU's much lower
single-thread speed. A kernel that slows down on a GPU.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 32
CHANNELS = 4
B0, A1, A2 = 0.2, 1.6, -0.8


def iir_filter_cpu(x, b0, a1, a2):
    """CPU region: the filter along the last axis of every channel, starting from rest.

    Parameters
    ----------
    x : numpy.ndarray
        float64 signals of shape ``(channels, samples)``.
    b0, a1, a2 : float
        Feed-forward gain and the two feedback coefficients.

    Returns
    -------
    numpy.ndarray
        float64 filtered signals of the same shape.
    """
    nc, ns = x.shape
    y = np.empty((nc, ns), dtype=np.float64)
    for c in numba.prange(nc):
        y1 = 0.0
        y2 = 0.0
        for t in range(ns):
            v = b0 * x[c, t] + a1 * y1 + a2 * y2
            y[c, t] = v
            y2 = y1
            y1 = v
    return y


@cuda.jit
def _iir_kernel(x, b0, a1, a2, y):
    c = cuda.grid(1)
    if c < x.shape[0]:
        y1 = 0.0
        y2 = 0.0
        for t in range(x.shape[1]):
            v = b0 * x[c, t] + a1 * y1 + a2 * y2
            y[c, t] = v
            y2 = y1
            y1 = v


def _to_device(x, b0, a1, a2):
    return {"x": cuda.to_device(x), "b0": float(b0), "a1": float(a1), "a2": float(a2),
            "y": cuda.device_array(x.shape, dtype=np.float64)}


def _launch(s):
    nc = s["x"].shape[0]
    _iir_kernel[blocks_for(nc, TPB), TPB](s["x"], s["b0"], s["a1"], s["a2"], s["y"])


def _from_device(s):
    return s["y"].copy_to_host()


def make_inputs(n, seed):
    """``(x, b0, a1, a2)``: 4 channels of ``n`` normal samples; b0=0.2, a1=1.6, a2=-0.8 (stable poles)."""
    return rng(seed).standard_normal((CHANNELS, n)), B0, A1, A2


KERNEL = KernelSpec(
    name="iir_filter",
    category="serial",
    description="second-order IIR filter along 4 channels; a loop-carried recurrence, 4-way parallelism",
    cpu=iir_filter_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 200, "small": 1 << 14, "medium": 1 << 18, "large": 1 << 23},
    rtol=1e-9,
    atol=1e-9,
    expect_gpu_faster=False,
)
