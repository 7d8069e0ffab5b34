"""monte_carlo_option: Monte Carlo price of a European call, simulating each path in ``steps`` log-normal steps.

Every path owns an xorshift32 generator seeded from (seed, path index), so the CPU region and the GPU port
draw identical numbers; normals come from the Box-Muller transform. Per path: ``2 * steps`` generator
updates, ``steps`` log, sqrt and cos; the paths' payoffs are summed (a reduction). The GPU port runs one
path per thread (grid-stride), reduces payoffs per block in shared memory and adds block sums with a
float64 atomic. Compute-bound with almost no input data: the GPU's best case.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for
from .spec import GpuPort, KernelSpec

TPB = 128
MAX_BLOCKS = 4096
TWO_PI = 6.283185307179586


@numba.njit(cache=True)
def xorshift32(s):
    """One step of Marsaglia's xorshift32 (shifts 13, 17, 5) on a state held in an int64.

    Parameters
    ----------
    s : int
        State in ``1 .. 2**32 - 1``.

    Returns
    -------
    int
        Next state, in the same range.
    """
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    return s


@numba.njit(cache=True)
def seed_state(seed, path):
    """Initial xorshift32 state of one path: a multiplicative hash of (seed, path), never 0.

    Parameters
    ----------
    seed : int
        Run seed (``0 <= seed < 2**31``).
    path : int
        Path index.

    Returns
    -------
    int
        State in ``1 .. 2**32 - 1`` after four warm-up steps.
    """
    h = ((path + 1) * 2654435761 + seed * 40503) & 0xFFFFFFFF
    h = (h ^ (h >> 16)) & 0xFFFFFFFF
    if h == 0:
        h = 1
    for _ in range(4):
        h = xorshift32(h)
    return h


def monte_carlo_option_cpu(n_paths, steps, s0, strike, r, sigma, T, seed):
    """CPU region: discounted mean payoff of a European call over ``n_paths`` simulated paths.

    Parameters
    ----------
    n_paths, steps : int
        Number of paths and time steps per path.
    s0, strike, r, sigma, T : float
        Spot, strike, riskless rate, volatility, years to expiry.
    seed : int
        Seed of the per-path generators.

    Returns
    -------
    float
        The price estimate.
    """
    dt = T / steps
    drift = (r - 0.5 * sigma * sigma) * dt
    vol = sigma * math.sqrt(dt)
    total = 0.0
    for p in numba.prange(n_paths):
        s = seed_state(seed, p)
        logs = 0.0
        for t in range(steps):
            s = xorshift32(s)
            u1 = (s + 0.5) / 4294967296.0
            s = xorshift32(s)
            u2 = (s + 0.5) / 4294967296.0
            z = math.sqrt(-2.0 * math.log(u1)) * math.cos(TWO_PI * u2)
            logs += drift + vol * z
        payoff = s0 * math.exp(logs) - strike
        if payoff > 0.0:
            total += payoff
    return math.exp(-r * T) * total / n_paths


@cuda.jit(device=True)
def _xorshift32_dev(s):
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    return s


@cuda.jit(device=True)
def _seed_state_dev(seed, path):
    h = ((path + 1) * 2654435761 + seed * 40503) & 0xFFFFFFFF
    h = (h ^ (h >> 16)) & 0xFFFFFFFF
    if h == 0:
        h = 1
    for _ in range(4):
        h = _xorshift32_dev(h)
    return h


@cuda.jit
def _zero(result):
    if cuda.grid(1) == 0:
        result[0] = 0.0


@cuda.jit
def _paths_kernel(n_paths, steps, s0, strike, drift, vol, seed, result):
    sh = cuda.shared.array(shape=TPB, dtype=numba.float64)
    t = cuda.threadIdx.x
    p = numba.int64(cuda.grid(1))
    stride = cuda.gridsize(1)
    acc = 0.0
    while p < n_paths:
        s = _seed_state_dev(seed, p)
        logs = 0.0
        for _ in range(steps):
            s = _xorshift32_dev(s)
            u1 = (s + 0.5) / 4294967296.0
            s = _xorshift32_dev(s)
            u2 = (s + 0.5) / 4294967296.0
            z = math.sqrt(-2.0 * math.log(u1)) * math.cos(TWO_PI * u2)
            logs += drift + vol * z
        payoff = s0 * math.exp(logs) - strike
        if payoff > 0.0:
            acc += payoff
        p += stride
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


def _to_device(n_paths, steps, s0, strike, r, sigma, T, seed):
    dt = T / steps
    return {"n": int(n_paths), "steps": int(steps), "s0": float(s0), "strike": float(strike),
            "drift": (r - 0.5 * sigma * sigma) * dt, "vol": sigma * math.sqrt(dt), "seed": int(seed),
            "disc": math.exp(-r * T), "result": cuda.device_array(1, dtype=np.float64),
            "blocks": min(blocks_for(n_paths, TPB), MAX_BLOCKS)}


def _launch(s):
    _zero[1, 32](s["result"])
    _paths_kernel[s["blocks"], TPB](s["n"], s["steps"], s["s0"], s["strike"], s["drift"], s["vol"], s["seed"],
                                    s["result"])


def _from_device(s):
    total = float(s["result"].copy_to_host()[0])
    return s["disc"] * total / s["n"]


def make_inputs(n, seed):
    """``(n_paths, steps, s0, strike, r, sigma, T, seed)``: ``n`` paths of 32 steps, an at-the-money-ish call."""
    return int(n), 32, 100.0, 105.0, 0.03, 0.25, 1.5, int(seed) % (2**31)


KERNEL = KernelSpec(
    name="monte_carlo_option",
    category="special",
    description="Monte Carlo European call: per-path xorshift32 + Box-Muller, 32 steps, payoff reduction",
    cpu=monte_carlo_option_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 256, "small": 1 << 13, "medium": 1 << 16, "large": 1 << 19},
    rtol=1e-9,
    atol=1e-9,
    expect_gpu_faster=True,
)
