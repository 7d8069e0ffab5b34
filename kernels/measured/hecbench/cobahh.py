"""Hodgkin-Huxley neurons with conductance-based synapses (Brian2's COBAHH benchmark), HeCBench ``cobahh``: the
kernel ``cobahh`` (one exponential-Euler state update of every neuron).

Thread ``i`` (one per neuron, guard ``i < N``) reads the neuron's gating variables ``h, m, n``, conductances
``ge, gi``, membrane potential ``v`` and last spike time, and writes the updated state (single precision):
each of ``h, m, n, v`` follows ``x' = -B/A + (B/A + x) exp(A dt)`` with rate expressions of ``v`` (``h, m,
n``) or of the channel states (``v``) that Brian2 generated (constants ``_lio_1 .. _lio_33`` folded by the
host), the conductances decay (``ge *= exp(-2000 dt)``, ``gi *= exp(-100 dt)``), and ``not_refractory`` is
``timestep(t - lastspike) >= timestep(3 ms)``.

Launch: blocks of 256, ``ceil(N / 256)`` blocks. Measured point ``1000000 10`` (neurons, iterations):
3907 blocks; the timed launch is the first iteration.

Inputs: the host's ``srand(2)``, then for neurons ``1 .. N-1`` (neuron 0 is left uninitialised by the
original; zero here) seven draws each: ``ge = 0.15 +- 0.1``, ``gi = 0.25 +- 0.2``, ``h = 0.35 +- 0.3``,
``m = 0.45 +- 0.4``, ``n = 0.55 +- 0.5``, ``v = 0.65 +- 0.6`` (the sign from ``rand() % 2``; the sum in double,
stored as float) and ``lastspike = 1 / (rand() % 1000 + 1)``; ``dt = 0.0001``, ``t = 0.01`` (glibc ``rand``
seeded with ``2 + seed``; seed 0 gives the original's state).

Deliberate differences: the original's expressions repeat every subexpression (``expf(_lio_9 * v)`` a dozen
times, the same quotients again and again); the compiler evaluates each once, and so does the region: every
distinct exponential and quotient is computed once and reused (the result is the same up to rounding of
float expressions the compiler may also reorder). ``exp(200 v)`` overflows to infinity for the larger
potentials, as in the original, and the quotients by it are zero (the GPU port tests the argument first,
because the CUDA simulator's ``math.exp`` raises on overflow where the device returns infinity).

Precision: single (float32), as the original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
F = np.float32
DT = F(0.0001)
T = F(0.01)
L2 = F(9.939082)
L3 = F(-55.555556)
L4 = F(0.00001)
L5 = F(-200.0)
L6 = F(-0.02016)
L7 = F(-0.000001)
L8 = F(0.0)
L9 = F(-250.0)
L10 = F(0.00416)
L11 = F(0.02016)
L12 = F(-0.01764)
L13 = F(-0.000001)
L14 = F(0.000099)
L15 = F(200.0)
L16 = F(0.0112)
L17 = F(-0.002016)
L18 = F(0.0)
L19 = F(0.00048)
L20 = F(0.002016)
L21 = F(132.901474)
L22 = F(-25.0)
L24 = F(-3.0)
L25 = F(-2700.0)
L26 = F(5000.0)
L27 = F(0.0)
L28 = F(-400000000.0)
L29 = F(-50.0)
L30 = F(-30000.0)
L31 = F(100000.0)
L32 = F(5000000000.0)
C4 = F(-4.0)
C0001 = F(0.001)
C032 = F(0.32)
C028 = F(0.28)
C0032 = F(0.032)
EPS_T = F(1e-3)

POINTS = {"1000000 10": {"n": 1000000, "iterations": 10}}
TEST_POINT = {"n": 500, "iterations": 1}
#: 2 x 10^4 neurons (about 3e6 records; the measured point has 10^6)
FEATURE_POINT = {"n": 20000, "iterations": 10}


def timestep(t, dt):
    """The host's ``_timestep``: ``(int)((t + 1e-3 dt) / dt)`` in float."""
    return int((F(t) + EPS_T * F(dt)) / F(dt))


def cobahh(d_h, d_m, d_n, d_ge, d_v, d_gi, d_lastspike, d_not_refractory, n_neurons, dt, t, lio_1, lio_23,
           lio_33, n_threads):
    """One state update of every neuron, in place."""
    for idx in numba.prange(n_threads):
        if idx < n_neurons:
            h = d_h[idx]
            m = d_m[idx]
            n = d_n[idx]
            ge = d_ge[idx]
            v = d_v[idx]
            lastspike = d_lastspike[idx]
            gi = d_gi[idx]
            not_refractory = np.int8(int((t - lastspike + EPS_T * dt) / dt) >= lio_1)
            e3 = np.exp(L3 * v)
            e5 = np.exp(L5 * v)
            e9 = np.exp(L9 * v)
            e15 = np.exp(L15 * v)
            e22 = np.exp(L22 * v)
            # h
            a_h = C4 / (C0001 + L4 * e5) - L2 * e3
            ba_h = (L2 * e3) / a_h
            new_h = -ba_h + (ba_h + h) * np.exp(dt * a_h)
            # m
            d7 = L7 + L8 * e9
            d13 = L13 + L14 * e15
            q10 = L10 / d7
            v32 = (C032 * v) / d7
            a_m = (((L11 / d7 + L12 / d13) + L16 / d13) + v32) - (q10 + (C028 * v) / d13)
            ba_m = ((L6 / d7 + q10) - v32) / a_m
            new_m = -ba_m + (ba_m + m) * np.exp(dt * a_m)
            # n
            d18 = L7 + L18 * e5
            q19 = L19 / d18
            v032 = (C0032 * v) / d18
            a_n = (L20 / d18 + v032) - (q19 + L21 * e22)
            ba_n = ((L17 / d18 + q19) - v032) / a_n
            new_n = -ba_n + (ba_n + n) * np.exp(dt * a_n)
            # v
            n4 = n * n * n * n
            hm3 = h * (m * m * m)
            a_v = (L29 + L30 * n4) - ((L31 * hm3 + L32 * ge) + L32 * gi)
            ba_v = (L24 + (((L25 * n4 + L26 * hm3) + L27 * ge) + L28 * gi)) / a_v
            new_v = -ba_v + (ba_v + v) * np.exp(dt * a_v)
            d_h[idx] = new_h
            d_m[idx] = new_m
            d_n[idx] = new_n
            d_ge[idx] = lio_23 * ge
            d_v[idx] = new_v
            d_gi[idx] = lio_33 * gi
            d_not_refractory[idx] = not_refractory
    return d_h, d_m, d_n, d_ge, d_v, d_gi, d_not_refractory


@cuda.jit
def _cobahh_gpu(d_h, d_m, d_n, d_ge, d_v, d_gi, d_lastspike, d_not_refractory, n_neurons, dt, t, lio_1, lio_23,
                lio_33):
    idx = cuda.grid(1)
    if idx >= n_neurons:
        return
    h = d_h[idx]
    m = d_m[idx]
    n = d_n[idx]
    ge = d_ge[idx]
    v = d_v[idx]
    lastspike = d_lastspike[idx]
    gi = d_gi[idx]
    not_refractory = numba.int8(int((t - lastspike + EPS_T * dt) / dt) >= lio_1)
    e3 = numba.float32(math.exp(L3 * v))
    e5 = numba.float32(math.exp(L5 * v))
    e9 = numba.float32(math.exp(L9 * v))
    e15 = numba.float32(math.exp(L15 * v)) if L15 * v < numba.float32(88.7) else numba.float32(math.inf)
    e22 = numba.float32(math.exp(L22 * v))
    a_h = C4 / (C0001 + L4 * e5) - L2 * e3
    ba_h = (L2 * e3) / a_h
    new_h = -ba_h + (ba_h + h) * numba.float32(math.exp(dt * a_h))
    d7 = L7 + L8 * e9
    d13 = L13 + L14 * e15
    q10 = L10 / d7
    v32 = (C032 * v) / d7
    a_m = (((L11 / d7 + L12 / d13) + L16 / d13) + v32) - (q10 + (C028 * v) / d13)
    ba_m = ((L6 / d7 + q10) - v32) / a_m
    new_m = -ba_m + (ba_m + m) * numba.float32(math.exp(dt * a_m))
    d18 = L7 + L18 * e5
    q19 = L19 / d18
    v032 = (C0032 * v) / d18
    a_n = (L20 / d18 + v032) - (q19 + L21 * e22)
    ba_n = ((L17 / d18 + q19) - v032) / a_n
    new_n = -ba_n + (ba_n + n) * numba.float32(math.exp(dt * a_n))
    n4 = n * n * n * n
    hm3 = h * (m * m * m)
    a_v = (L29 + L30 * n4) - ((L31 * hm3 + L32 * ge) + L32 * gi)
    ba_v = (L24 + (((L25 * n4 + L26 * hm3) + L27 * ge) + L28 * gi)) / a_v
    new_v = -ba_v + (ba_v + v) * numba.float32(math.exp(dt * a_v))
    d_h[idx] = new_h
    d_m[idx] = new_m
    d_n[idx] = new_n
    d_ge[idx] = lio_23 * ge
    d_v[idx] = new_v
    d_gi[idx] = lio_33 * gi
    d_not_refractory[idx] = not_refractory


_ARRAYS = ("h", "m", "n", "ge", "v", "gi", "lastspike", "not_refractory")


def _to_device(d_h, d_m, d_n, d_ge, d_v, d_gi, d_lastspike, d_not_refractory, n_neurons, dt, t, lio_1, lio_23,
               lio_33, n_threads):
    s = {k: cuda.to_device(a) for k, a in zip(_ARRAYS, (d_h, d_m, d_n, d_ge, d_v, d_gi, d_lastspike,
                                                         d_not_refractory))}
    s.update(N=int(n_neurons), dt=F(dt), t=F(t), lio_1=int(lio_1), lio_23=F(lio_23), lio_33=F(lio_33),
             threads=int(n_threads))
    return s


def _launch(s):
    _cobahh_gpu[s["threads"] // BLOCK, BLOCK](*(s[k] for k in _ARRAYS), s["N"], s["dt"], s["t"], s["lio_1"],
                                              s["lio_23"], s["lio_33"])


def _from_device(s):
    return tuple(s[k].copy_to_host() for k in ("h", "m", "n", "ge", "v", "gi", "not_refractory"))


def initial_state(n, seed):
    """``(h, m, n, ge, v, gi, lastspike)`` as the host draws them (``srand(2 + seed)``), neuron 0 zero."""
    r = glibc_rand(2 + seed, 7 * max(n - 1, 0)).reshape(-1, 7)
    sign = np.where(r[:, :6] % 2 == 0, 1.0, -1.0)
    base = np.array([0.15, 0.25, 0.35, 0.45, 0.55, 0.65], dtype=np.float32).astype(np.float64)
    step = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    vals = np.zeros((n, 6), dtype=np.float32)
    vals[1:] = (base + sign * step).astype(np.float32)
    last = np.zeros(n, dtype=np.float32)
    last[1:] = (F(1.0) / (r[:, 6] % 1000 + 1).astype(np.float32)).astype(np.float32)
    ge, gi, h, m, nn, v = (vals[:, k].copy() for k in range(6))
    return h, m, nn, ge, v, gi, last


def make_inputs(params, seed):
    """The region's arguments at the first iteration."""
    n = int(params["n"])
    h, m, nn, ge, v, gi, last = initial_state(n, seed)
    lio_1 = timestep(F(0.003), DT)
    lio_23 = F(np.exp(F(-2000.0) * DT))
    lio_33 = F(np.exp(F(-100.0) * DT))
    return (h, m, nn, ge, v, gi, last, np.zeros(n, dtype=np.int8), n, DT, T, lio_1, lio_23, lio_33,
            work(params)[0])


def work(params):
    n = int(params["n"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="cobahh",
        kernel="cobahh",
        description="HeCBench cobahh: exponential-Euler update of Hodgkin-Huxley neurons with conductance "
        "synapses (Brian2 COBAHH), one thread per neuron, nine exponentials",
        cpu=cobahh,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-4,
        atol=1e-5,
    ),
]
