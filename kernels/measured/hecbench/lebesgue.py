"""Lebesgue function of an interpolation node set, HeCBench ``lebesgue``: the kernel ``kernel``.

For ``n`` interpolation nodes ``x`` and ``nfun`` evaluation points ``xfun`` (double precision), thread ``j``
(one per evaluation point, guard ``j < nfun``) computes the ``n`` Lagrange basis polynomials at ``xfun[j]``,
``L_i = prod_{k != i} (xfun[j] - x[k]) / (x[i] - x[k])``, into the column ``j`` of ``linterp`` (``n x nfun``,
row-major: ``linterp[i * nfun + j]``; first set to 1, then multiplied in place), sums their absolute values
(the Lebesgue function at ``xfun[j]``) and raises ``lmax`` to it with a double-precision atomic max (a
compare-and-swap loop in the original).

Launch: blocks of 256, ``ceil(nfun / 256)`` blocks. The host (the Burkardt test program) runs nine node
families for ``n = 1 .. 11``; ``n = 1`` does not launch (its constant is 1), so the first launch is type-1
Chebyshev nodes (``x_i = cos(pi (2 i + 1) / (2 n))``) with ``n = 2``, ``xfun`` = ``nfun`` points equally
spaced on [-1, 1] (the host's ``r8vec_linspace_new``). Measured point ``1000000 2`` (``nfun``, repeat):
3907 blocks.

Deliberate differences: the atomic max is a compare-and-store in the region (its semantics are a sequential
run) and ``cuda.atomic.max`` in the GPU port; the result is the same maximum. No random input.

Precision: double (float64), as the original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256

POINTS = {"1000000 2": {"nfun": 1000000, "n": 2}}
TEST_POINT = {"nfun": 600, "n": 4}
#: 5 x 10^4 evaluation points (about 4e6 records; the measured point has 10^6)
FEATURE_POINT = {"nfun": 50000, "n": 2}


def lebesgue(lmax, linterp, xfun, x, n, nfun, n_threads):
    """Lagrange basis values at every evaluation point into ``linterp`` and their largest absolute sum into
    ``lmax[0]``."""
    for j in numba.prange(n_threads):
        if j < nfun:
            for i in range(n):
                linterp[i * nfun + j] = 1.0
            for i1 in range(n):
                for i2 in range(n):
                    if i1 != i2:
                        linterp[i1 * nfun + j] = linterp[i1 * nfun + j] * (xfun[j] - x[i2]) / (x[i1] - x[i2])
            t = 0.0
            for i in range(n):
                t += abs(linterp[i * nfun + j])
            if t > lmax[0]:  # atomicMax in the original
                lmax[0] = t
    return lmax, linterp


@cuda.jit
def _lebesgue_gpu(lmax, linterp, xfun, x, n, nfun):
    j = cuda.grid(1)
    if j >= nfun:
        return
    for i in range(n):
        linterp[i * nfun + j] = 1.0
    for i1 in range(n):
        for i2 in range(n):
            if i1 != i2:
                linterp[i1 * nfun + j] = linterp[i1 * nfun + j] * (xfun[j] - x[i2]) / (x[i1] - x[i2])
    t = 0.0
    for i in range(n):
        t += math.fabs(linterp[i * nfun + j])
    cuda.atomic.max(lmax, 0, t)


def _to_device(lmax, linterp, xfun, x, n, nfun, n_threads):
    s = {k: cuda.to_device(a) for k, a in zip(("lmax", "linterp", "xfun", "x"), (lmax, linterp, xfun, x))}
    s.update(n=int(n), nfun=int(nfun), threads=int(n_threads))
    return s


def _launch(s):
    _lebesgue_gpu[s["threads"] // BLOCK, BLOCK](s["lmax"], s["linterp"], s["xfun"], s["x"], s["n"], s["nfun"])


def _from_device(s):
    return s["lmax"].copy_to_host(), s["linterp"].copy_to_host()


def chebyshev1(n):
    """Type-1 Chebyshev nodes, the host's ``chebyshev1``."""
    i = np.arange(n, dtype=np.float64)
    return np.cos(3.141592653589793 * (2.0 * i + 1.0) / (2.0 * n))


def linspace(nfun, a=-1.0, b=1.0):
    """The host's ``r8vec_linspace_new``."""
    if nfun == 1:
        return np.array([(a + b) / 2.0])
    i = np.arange(nfun, dtype=np.float64)
    return ((nfun - 1 - i) * a + i * b) / (nfun - 1)


def make_inputs(params, seed):
    """The first launch: Chebyshev-1 nodes (``n``), ``nfun`` equispaced points, ``lmax = 0``. Deterministic
    (the original has no random input; ``seed`` is unused)."""
    n, nfun = int(params["n"]), int(params["nfun"])
    return (np.zeros(1), np.zeros(n * nfun), linspace(nfun), chebyshev1(n), n, nfun,
            work(params)[0])


def work(params):
    nfun = int(params["nfun"])
    return (nfun + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="lebesgue",
        kernel="kernel",
        description="HeCBench lebesgue: Lagrange basis values and Lebesgue function of Chebyshev nodes at "
        "equispaced points, one thread per point, atomic max",
        cpu=lebesgue,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-12,
        atol=1e-12,
    ),
]
