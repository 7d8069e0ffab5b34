"""Adam optimiser step, HeCBench ``adam``: the kernel ``adam<float, float>``, its first launch.

Each thread walks a grid-stride loop over the parameter vector (``j = gid, gid + threads, ...`` while ``j <
vector_size``) and, for every element, runs ``time_step`` Adam updates in a row (``t = 1 .. time_step``):
``g' = g / grad_scale``; ``m = b1 m + (1 - b1) g'``; ``v = b2 v + (1 - b2) g'^2``; bias-corrected
``m / (1 - b1^t)`` and ``v / (1 - b2^t)``; mode 0 (the host's choice) divides by ``sqrt(v_hat + eps)``; ``p -=
step_size (m_hat / denom + decay p)``. All in single precision (``powf``, ``sqrtf``).

Launch: ``ceil(vector_size / 256)`` blocks of 256 threads (40 blocks, 10240 threads for 10000 elements: the last
240 threads skip the loop). The region's parallel loop is over all launched threads, each walking its stride loop.

Inputs: the host draws ``m, v, g, p`` (interleaved per element) uniform in [0, 1) from ``std::mt19937(19937)``;
here NumPy's generator seeded with ``seed`` (same distribution, not the same numbers). Constants: step 1e-3,
decay 0.5, b1 0.9, b2 0.999, eps 1e-8, grad_scale 256. ``b^t`` is computed in double and rounded to float32
(``powf`` is correctly rounded to within an ulp; the results agree to float32 rounding).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
CONSTANTS = {"b1": 0.9, "b2": 0.999, "eps": 1e-8, "grad_scale": 256.0, "step_size": 1e-3, "decay": 0.5}

POINTS = {"10000 200 100": {"vector_size": 10000, "time_step": 200}}
TEST_POINT = {"vector_size": 1000, "time_step": 3}
#: the measured point traces about 6e7 records: features from 1000 elements x 100 steps
FEATURE_POINT = {"vector_size": 1000, "time_step": 100}


def adam(p, m, v, g, b1, b2, eps, grad_scale, step_size, time_step, vector_size, decay, n_threads):
    """``time_step`` Adam updates of every element, each thread over its grid-stride elements.

    Returns ``(p, m, v)``.
    """
    one = np.float32(1.0)
    for gid in numba.prange(n_threads):
        j = gid
        while j < vector_size:
            for t in range(1, time_step + 1):
                scaled = g[j] / grad_scale
                m[j] = b1 * m[j] + (one - b1) * scaled
                v[j] = b2 * v[j] + (one - b2) * scaled * scaled
                m_hat = m[j] / (one - np.float32(math.pow(b1, t)))
                v_hat = v[j] / (one - np.float32(math.pow(b2, t)))
                denom = np.float32(math.sqrt(v_hat + eps))
                update = m_hat / denom + decay * p[j]
                p[j] -= step_size * update
            j += n_threads
    return p, m, v


@cuda.jit
def _adam_gpu(p, m, v, g, b1, b2, eps, grad_scale, step_size, time_step, vector_size, decay):
    one = numba.float32(1.0)
    j = cuda.grid(1)
    n_threads = cuda.gridsize(1)
    while j < vector_size:
        for t in range(1, time_step + 1):
            scaled = g[j] / grad_scale
            m[j] = b1 * m[j] + (one - b1) * scaled
            v[j] = b2 * v[j] + (one - b2) * scaled * scaled
            m_hat = m[j] / (one - numba.float32(math.pow(b1, t)))
            v_hat = v[j] / (one - numba.float32(math.pow(b2, t)))
            denom = numba.float32(math.sqrt(v_hat + eps))
            update = m_hat / denom + decay * p[j]
            p[j] -= step_size * update
        j += n_threads


_ARRAYS = ("p", "m", "v", "g")
_SCALARS = ("b1", "b2", "eps", "grad_scale", "step_size", "time_step", "vector_size", "decay", "n_threads")


def _to_device(*args):
    s = {k: cuda.to_device(a) for k, a in zip(_ARRAYS, args[:4])}
    s.update(zip(_SCALARS, args[4:]))
    return s


def _launch(s):
    _adam_gpu[s["n_threads"] // BLOCK, BLOCK](*(s[k] for k in _ARRAYS + _SCALARS[:-1]))


def _from_device(s):
    return tuple(s[k].copy_to_host() for k in ("p", "m", "v"))


def make_inputs(params, seed):
    n, steps = int(params["vector_size"]), int(params["time_step"])
    draws = np.random.default_rng(seed).random((n, 4), dtype=np.float32)  # m, v, g, p per element
    m, v, g, p = (np.ascontiguousarray(draws[:, i]) for i in range(4))
    c = {k: np.float32(x) for k, x in CONSTANTS.items()}
    return (p, m, v, g, c["b1"], c["b2"], c["eps"], c["grad_scale"], c["step_size"], steps, n, c["decay"],
            work(params)[0])


def work(params):
    n = int(params["vector_size"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="adam",
        kernel="adam",
        description="HeCBench adam: 200 Adam updates of each of 10000 float32 parameters, grid-stride threads",
        cpu=adam,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-6,
    ),
]
