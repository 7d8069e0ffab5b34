"""black_scholes: European call and put prices by the Black-Scholes formula for a batch of options.

Transcendental-heavy (log, sqrt, two exp inside the normal CDF approximation) and embarrassingly parallel:
one option per parallel iteration / GPU thread. The cumulative normal uses the Abramowitz-Stegun 26.2.17
polynomial (absolute error below 7.5e-8), written once as an njit helper and once as a CUDA device function.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 128


@numba.njit(cache=True)
def cnd(d):
    """Cumulative standard normal distribution at ``d`` (Abramowitz-Stegun 26.2.17).

    Parameters
    ----------
    d : float
        Argument.

    Returns
    -------
    float
        ``P(Z <= d)`` for a standard normal ``Z``, absolute error below 7.5e-8.
    """
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    c = 0.3989422804014327 * math.exp(-0.5 * d * d) * poly
    if d > 0:
        return 1.0 - c
    return c


def black_scholes_cpu(S, K, T, r, v):
    """CPU region: call and put prices.

    Parameters
    ----------
    S, K, T : numpy.ndarray
        float32 spot prices, strikes and years to expiry (same length).
    r, v : float
        Riskless rate and volatility.

    Returns
    -------
    tuple of numpy.ndarray
        ``(call, put)`` float32 prices.
    """
    n = S.shape[0]
    call = np.empty(n, dtype=np.float32)
    put = np.empty(n, dtype=np.float32)
    for i in numba.prange(n):
        sqrt_t = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r + 0.5 * v * v) * T[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        disc = math.exp(-r * T[i])
        c1 = cnd(d1)
        c2 = cnd(d2)
        call[i] = S[i] * c1 - K[i] * disc * c2
        put[i] = K[i] * disc * (1.0 - c2) - S[i] * (1.0 - c1)
    return call, put


@cuda.jit(device=True)
def _cnd_dev(d):
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    c = 0.3989422804014327 * math.exp(-0.5 * d * d) * poly
    if d > 0:
        return 1.0 - c
    return c


@cuda.jit
def _black_scholes_kernel(S, K, T, r, v, call, put):
    i = cuda.grid(1)
    if i < S.shape[0]:
        sqrt_t = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r + 0.5 * v * v) * T[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        disc = math.exp(-r * T[i])
        c1 = _cnd_dev(d1)
        c2 = _cnd_dev(d2)
        call[i] = S[i] * c1 - K[i] * disc * c2
        put[i] = K[i] * disc * (1.0 - c2) - S[i] * (1.0 - c1)


def _to_device(S, K, T, r, v):
    n = S.shape[0]
    return {"S": cuda.to_device(S), "K": cuda.to_device(K), "T": cuda.to_device(T), "r": float(r),
            "v": float(v), "call": cuda.device_array(n, dtype=np.float32),
            "put": cuda.device_array(n, dtype=np.float32)}


def _launch(s):
    n = s["S"].shape[0]
    _black_scholes_kernel[blocks_for(n, TPB), TPB](s["S"], s["K"], s["T"], s["r"], s["v"], s["call"], s["put"])


def _from_device(s):
    return s["call"].copy_to_host(), s["put"].copy_to_host()


def make_inputs(n, seed):
    """``(S, K, T, r, v)``: ``n`` options, S in [5, 30), K in [1, 100), T in [0.25, 10) (float32); r=0.02, v=0.30."""
    g = rng(seed)
    S = g.uniform(5.0, 30.0, n).astype(np.float32)
    K = g.uniform(1.0, 100.0, n).astype(np.float32)
    T = g.uniform(0.25, 10.0, n).astype(np.float32)
    return S, K, T, 0.02, 0.30


KERNEL = KernelSpec(
    name="black_scholes",
    category="special",
    description="Black-Scholes call/put prices per option; log, sqrt, exp and a polynomial normal CDF",
    cpu=black_scholes_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 256, "small": 1 << 16, "medium": 1 << 20, "large": 1 << 23},
    rtol=1e-4,
    atol=1e-4,
    expect_gpu_faster=True,
)
