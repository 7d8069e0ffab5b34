"""Thomas algorithm for a few independent tridiagonal systems (little parallelism, serial recurrences).

CPU region: the parallel loop runs over the (few, here 4) systems; inside, the forward elimination and
back substitution are serial recurrences over the system's length. GPU port: one thread per system —
four threads on a GPU with thousands of cores, each doing a long dependent chain of divisions: the
textbook case of a port that slows down.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

N_SYSTEMS = 4


def tridiagonal(a, b, c, d):
    """Solve ``k`` tridiagonal systems ``a[s,i] x[i-1] + b[s,i] x[i] + c[s,i] x[i+1] = d[s,i]``.

    Parameters
    ----------
    a, b, c, d : float64 arrays ``(k, n)``: sub-diagonal (``a[:, 0]`` unused), diagonal,
        super-diagonal (``c[:, n-1]`` unused), right-hand side.

    Returns
    -------
    float64 array ``(k, n)`` of solutions.
    """
    k, n = b.shape
    cp = np.empty((k, n))
    dp = np.empty((k, n))
    x = np.empty((k, n))
    for s in numba.prange(k):
        cp[s, 0] = c[s, 0] / b[s, 0]
        dp[s, 0] = d[s, 0] / b[s, 0]
        for i in range(1, n):
            m = b[s, i] - a[s, i] * cp[s, i - 1]
            cp[s, i] = c[s, i] / m
            dp[s, i] = (d[s, i] - a[s, i] * dp[s, i - 1]) / m
        x[s, n - 1] = dp[s, n - 1]
        for i in range(n - 2, -1, -1):
            x[s, i] = dp[s, i] - cp[s, i] * x[s, i + 1]
    return x


@cuda.jit
def _thomas(a, b, c, d, cp, dp, x):
    s = cuda.grid(1)
    k, n = b.shape
    if s < k:
        cp[s, 0] = c[s, 0] / b[s, 0]
        dp[s, 0] = d[s, 0] / b[s, 0]
        for i in range(1, n):
            m = b[s, i] - a[s, i] * cp[s, i - 1]
            cp[s, i] = c[s, i] / m
            dp[s, i] = (d[s, i] - a[s, i] * dp[s, i - 1]) / m
        x[s, n - 1] = dp[s, n - 1]
        for i in range(n - 2, -1, -1):
            x[s, i] = dp[s, i] - cp[s, i] * x[s, i + 1]


def _to_device(a, b, c, d):
    shape = b.shape
    return {"a": cuda.to_device(a), "b": cuda.to_device(b), "c": cuda.to_device(c), "d": cuda.to_device(d),
            "cp": cuda.device_array(shape), "dp": cuda.device_array(shape), "x": cuda.device_array(shape)}


def _launch(s):
    k = s["b"].shape[0]
    _thomas[1, k](s["a"], s["b"], s["c"], s["d"], s["cp"], s["dp"], s["x"])


def _from_device(s):
    return s["x"].copy_to_host()


def make_inputs(n, seed):
    """Four diagonally dominant systems of length ``n`` with random coefficients."""
    rng = np.random.default_rng(seed)
    shape = (N_SYSTEMS, n)
    a = rng.uniform(-1.0, 1.0, size=shape)
    c = rng.uniform(-1.0, 1.0, size=shape)
    a[:, 0] = 0.0
    c[:, -1] = 0.0
    b = np.abs(a) + np.abs(c) + rng.uniform(0.5, 2.0, size=shape)
    d = rng.uniform(-1.0, 1.0, size=shape)
    return a, b, c, d


KERNEL = KernelSpec(
    name="tridiagonal",
    category="serial",
    description="Thomas algorithm on 4 tridiagonal systems; GPU: one thread per system",
    cpu=tridiagonal,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 40, "small": 20_000, "medium": 200_000, "large": 2_000_000},
    rtol=1e-9,
    atol=1e-12,
    expect_gpu_faster=False,
)
