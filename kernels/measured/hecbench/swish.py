"""Swish activation and its gradient, HeCBench ``swish`` (from Caffe2): the kernels ``SwishKernel`` and
``SwishGradientKernel``, their first launches (float).

Both use a grid-stride loop (``i = gid; i < N; i += threads``) on ``ceil(N / 256)`` blocks of 256 threads, so
every thread has at most one element: ``SwishKernel`` writes ``Y[i] = X[i] / (1 + exp(-X[i]))``;
``SwishGradientKernel`` writes ``dX[i] = dY[i] * (Y[i] + (1 - Y[i]) / (1 + exp(-X[i])))``. Single precision
(``exp`` of a float is ``expf``; here the double exponential rounded to float32).

Inputs: ``X`` and ``dY`` uniform in [-2, 2) from ``std::default_random_engine(123)``, interleaved per element;
here NumPy's generator seeded with ``seed`` (same distribution). The gradient's first launch follows the 1000
launches of ``SwishKernel``, so its ``Y`` is the swish of ``X`` (computed with NumPy in float32).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

THREADS = 256

POINTS = {"10000000 1000": {"N": 10000000}}
TEST_POINT = {"N": 1000}
#: the measured point traces about 8e7 records per kernel: features from 500000 elements
FEATURE_POINT = {"N": 500000}


def swish(N, X, Y, n_threads):
    """``Y = X * sigmoid(X)``. Returns ``Y``."""
    one = np.float32(1.0)
    for gid in numba.prange(n_threads):
        i = gid
        while i < N:
            x = X[i]
            Y[i] = x / (one + np.float32(math.exp(-x)))
            i += n_threads
    return Y


def swish_gradient(N, X, Y, dY, dX, n_threads):
    """``dX = dY * (Y + (1 - Y) * sigmoid(X))``. Returns ``dX``."""
    one = np.float32(1.0)
    for gid in numba.prange(n_threads):
        i = gid
        while i < N:
            y = Y[i]
            dX[i] = dY[i] * (y + (one - y) / (one + np.float32(math.exp(-X[i]))))
            i += n_threads
    return dX


@cuda.jit
def _swish_gpu(N, X, Y):
    one = numba.float32(1.0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < N:
        x = X[i]
        Y[i] = x / (one + numba.float32(math.exp(-x)))
        i += stride


@cuda.jit
def _swish_gradient_gpu(N, X, Y, dY, dX):
    one = numba.float32(1.0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < N:
        y = Y[i]
        dX[i] = dY[i] * (y + (one - y) / (one + numba.float32(math.exp(-X[i]))))
        i += stride


def _to_device(N, *rest):
    return {"N": int(N), "arrays": [cuda.to_device(a) for a in rest[:-1]], "n_threads": int(rest[-1])}


def _launch_swish(s):
    _swish_gpu[s["n_threads"] // THREADS, THREADS](s["N"], *s["arrays"])


def _launch_gradient(s):
    _swish_gradient_gpu[s["n_threads"] // THREADS, THREADS](s["N"], *s["arrays"])


def _from_device(s):
    return s["arrays"][-1].copy_to_host()


def host_data(N, seed):
    """``X`` and ``dY``, float32 uniform in [-2, 2)."""
    d = np.random.default_rng(seed).uniform(-2.0, 2.0, (N, 2)).astype(np.float32)
    return np.ascontiguousarray(d[:, 0]), np.ascontiguousarray(d[:, 1])


def reference_swish(X):
    one = np.float32(1.0)
    return (X / (one + np.exp(-X.astype(np.float64)).astype(np.float32))).astype(np.float32)


def make_swish_inputs(params, seed):
    N = int(params["N"])
    X, _ = host_data(N, seed)
    return N, X, np.zeros(N, np.float32), work(params)[0]


def make_gradient_inputs(params, seed):
    N = int(params["N"])
    X, dY = host_data(N, seed)
    return N, X, reference_swish(X), dY, np.zeros(N, np.float32), work(params)[0]


def work(params):
    N = int(params["N"])
    return (N + THREADS - 1) // THREADS * THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="swish",
        kernel=kernel,
        description=f"HeCBench swish: {what} of 10 M floats, one element per thread (grid-stride loop)",
        cpu=cpu,
        gpu=GpuPort(_to_device, launch, _from_device),
        make_inputs=make,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-6,
    )
    for kernel, what, cpu, launch, make in (
        ("SwishKernel", "swish activation", swish, _launch_swish, make_swish_inputs),
        ("SwishGradientKernel", "swish gradient", swish_gradient, _launch_gradient, make_gradient_inputs),
    )
]
