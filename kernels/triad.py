"""triad: the STREAM triad ``a[i] = b[i] + s * c[i]`` in double precision.

Memory-bound streaming kernel (24 bytes per multiply-add). Fast on the GPU in kernel time, slower once the
three vectors' transfers are counted.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 256


def triad_cpu(b, c, s):
    """CPU region: ``b + s * c`` for float64 vectors.

    Parameters
    ----------
    b, c : numpy.ndarray
        float64 vectors of the same length.
    s : float
        Scalar.

    Returns
    -------
    numpy.ndarray
        float64 vector ``b + s * c``.
    """
    n = b.shape[0]
    a = np.empty(n, dtype=np.float64)
    for i in numba.prange(n):
        a[i] = b[i] + s * c[i]
    return a


@cuda.jit
def _triad_kernel(b, c, s, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = b[i] + s * c[i]


def _to_device(b, c, s):
    return {"b": cuda.to_device(b), "c": cuda.to_device(c), "s": float(s),
            "a": cuda.device_array(b.shape[0], dtype=np.float64)}


def _launch(st):
    n = st["a"].shape[0]
    _triad_kernel[blocks_for(n, TPB), TPB](st["b"], st["c"], st["s"], st["a"])


def _from_device(st):
    return st["a"].copy_to_host()


def make_inputs(n, seed):
    """``(b, c, s)``: two float64 vectors of length ``n`` (normal) and the scalar 3.0."""
    g = rng(seed)
    return g.standard_normal(n), g.standard_normal(n), 3.0


KERNEL = KernelSpec(
    name="triad",
    category="dense",
    description="STREAM triad b + s*c in float64; streaming, memory-bound",
    cpu=triad_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 300, "small": 1 << 16, "medium": 1 << 20, "large": 1 << 24},
    rtol=1e-12,
    atol=1e-12,
    expect_gpu_faster=True,
)
