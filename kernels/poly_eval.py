"""poly_eval: a degree-16 polynomial evaluated by Horner's rule at every point of a float64 vector.

Sixteen dependent multiply-adds per element and one load: compute-bound with no instruction-level
parallelism inside an element (the Horner chain), perfectly parallel across elements. The GPU port keeps
the coefficients in shared memory.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 256
MAX_COEFFS = 32
DEGREE = 16


@numba.njit(cache=True)
def horner(coeffs, v):
    """Value at ``v`` of the polynomial with ``coeffs`` (highest power first, as ``numpy.polyval``).

    Parameters
    ----------
    coeffs : numpy.ndarray
        float64 coefficients, highest power first.
    v : float
        Point.

    Returns
    -------
    float
        ``coeffs[0] * v**d + ... + coeffs[d]``.
    """
    acc = coeffs[0]
    for k in range(1, coeffs.shape[0]):
        acc = acc * v + coeffs[k]
    return acc


def poly_eval_cpu(coeffs, x):
    """CPU region: the polynomial at every point.

    Parameters
    ----------
    coeffs : numpy.ndarray
        float64 coefficients, highest power first.
    x : numpy.ndarray
        float64 points.

    Returns
    -------
    numpy.ndarray
        float64 values.
    """
    n = x.shape[0]
    y = np.empty(n, dtype=np.float64)
    for i in numba.prange(n):
        y[i] = horner(coeffs, x[i])
    return y


@cuda.jit
def _poly_kernel(coeffs, x, y):
    sc = cuda.shared.array(shape=MAX_COEFFS, dtype=numba.float64)
    t = cuda.threadIdx.x
    nc = coeffs.shape[0]
    if t < nc:
        sc[t] = coeffs[t]
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        acc = sc[0]
        for k in range(1, nc):
            acc = acc * v + sc[k]
        y[i] = acc


def _to_device(coeffs, x):
    if not 1 <= coeffs.shape[0] <= MAX_COEFFS:
        raise ValueError(f"poly_eval GPU port takes 1..{MAX_COEFFS} coefficients, got {coeffs.shape[0]}")
    return {"c": cuda.to_device(coeffs), "x": cuda.to_device(x),
            "y": cuda.device_array(x.shape[0], dtype=np.float64)}


def _launch(s):
    n = s["x"].shape[0]
    _poly_kernel[blocks_for(n, TPB), TPB](s["c"], s["x"], s["y"])


def _from_device(s):
    return s["y"].copy_to_host()


def make_inputs(n, seed):
    """``(coeffs, x)``: 17 coefficients uniform in [-1, 1) and ``n`` points uniform in [-1, 1), float64."""
    g = rng(seed)
    return g.uniform(-1.0, 1.0, DEGREE + 1), g.uniform(-1.0, 1.0, n)


KERNEL = KernelSpec(
    name="poly_eval",
    category="special",
    description="degree-16 Horner polynomial per element (float64); a serial FMA chain per thread",
    cpu=poly_eval_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 300, "small": 1 << 16, "medium": 1 << 20, "large": 1 << 23},
    rtol=1e-10,
    atol=1e-12,
    expect_gpu_faster=True,
)
