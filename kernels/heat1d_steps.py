"""heat1d_steps: explicit time stepping of the 1-D heat equation on a short rod (fixed end temperatures).

``u[i] <- u[i] + alpha * (u[i-1] - 2 u[i] + u[i+1])`` for ``min(n // 4, 500)`` time steps. Each step is a
parallel loop over the ``n`` cells, but the steps depend on each other, so the GPU port launches one small
kernel per step (ping-pong buffers): at the small sizes the launch overhead dwarfs the work and the GPU is
slower; only the largest rods give it enough threads per launch to win.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 128
MAX_STEPS = 500


def heat1d_steps_cpu(u0, alpha, steps):
    """CPU region: ``steps`` explicit Euler steps; the end cells keep their values.

    Parameters
    ----------
    u0 : numpy.ndarray
        float64 initial temperatures (length >= 2).
    alpha : float
        ``diffusivity * dt / dx**2`` (stable for ``alpha <= 0.5``).
    steps : int
        Number of time steps.

    Returns
    -------
    numpy.ndarray
        float64 temperatures after ``steps`` steps.
    """
    n = u0.shape[0]
    a = u0.copy()
    b = u0.copy()
    for _ in range(steps):
        for i in numba.prange(1, n - 1):
            b[i] = a[i] + alpha * (a[i - 1] - 2.0 * a[i] + a[i + 1])
        a, b = b, a
    return a


@cuda.jit
def _copy2(src, a, b):
    i = cuda.grid(1)
    if i < src.shape[0]:
        a[i] = src[i]
        b[i] = src[i]


@cuda.jit
def _step(a, b, alpha):
    i = cuda.grid(1)
    if i >= 1 and i < a.shape[0] - 1:
        b[i] = a[i] + alpha * (a[i - 1] - 2.0 * a[i] + a[i + 1])


def _to_device(u0, alpha, steps):
    n = u0.shape[0]
    return {"u0": cuda.to_device(u0), "a": cuda.device_array(n, dtype=np.float64),
            "b": cuda.device_array(n, dtype=np.float64), "alpha": float(alpha), "steps": int(steps)}


def _launch(s):
    n = s["u0"].shape[0]
    nb = blocks_for(n, TPB)
    a, b = s["a"], s["b"]
    _copy2[nb, TPB](s["u0"], a, b)
    for _ in range(s["steps"]):
        _step[nb, TPB](a, b, s["alpha"])
        a, b = b, a
    s["result"] = a


def _from_device(s):
    return s["result"].copy_to_host()


def make_inputs(n, seed):
    """``(u0, alpha, steps)``: ``n`` temperatures uniform in [0, 100), alpha=0.25, ``min(n // 4, 500)`` steps."""
    return rng(seed).uniform(0.0, 100.0, n), 0.25, max(1, min(int(n) // 4, MAX_STEPS))


KERNEL = KernelSpec(
    name="heat1d_steps",
    category="serial",
    description="1-D heat equation, up to 500 dependent time steps, one small kernel launch per step",
    cpu=heat1d_steps_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 40, "small": 2048, "medium": 32768, "large": 1 << 19},
    rtol=1e-10,
    atol=1e-10,
    expect_gpu_faster=None,  # slower at small/medium sizes, faster at large
)
