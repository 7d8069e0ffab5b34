"""Minimum of quartic polynomials by the cubic formula, HeCBench ``qem``: kernels ``QRdel`` and
``QuarticSolver``.

For ``f(x) = A x^4 + B x^3 + C x^2 + D x + E`` the minimum is at a root of ``f'``, i.e. of the monic cubic
``x^3 + b x^2 + c x + d`` with ``b = 0.75 B / A``, ``c = 0.5 C / A``, ``d = 0.25 D / A``.

* ``QRdel``: per polynomial ``Q = c / 3 - b^2 / 9``, ``R = b c / 6 - b^3 / 27 - d / 2``, both rounded to 5
  decimals (``roundf(x 1e5) / 1e5``), and the discriminant ``del = R^2 + Q^3`` (with ``Q^3`` and ``R^2``
  stored too).
* ``QuarticSolver``: if ``del <= 1e-5`` (three real roots) the trigonometric solution ``theta = acos(R /
  sqrt(-Q^3))``, ``x_k = 2 sqrt(-Q) cos((theta + 2 pi k) / 3) - b / 3``, sorted descending by an unrolled
  bubble sort (``temp`` holding the swapped value), and the minimum is the largest or smallest root by the
  sign of ``f(x1) - f(x3)`` (written out); otherwise the single real root by Cardano, ``cbrt(R + sqrt(del)) +
  cbrt(R - sqrt(del)) - b / 3``.

Launch: blocks of 64, ``ceil(N / 64)`` blocks with guard, ``N = 1999999``. Measured point ``100`` (repeat):
31250 blocks. The timed launches are the first of each (the first call of ``QuarticMinimumGPU``, no
streams); ``QuarticSolver`` reads what ``QRdel`` wrote.

Inputs: ``generate_data`` draws each coefficient array with ``std::mt19937_64{1993764}`` and
``uniform_int_distribution(-100, 100)``, re-seeding the generator for every array: A, B, C, D, E are the same
sequence (then ``A = 0`` becomes 1). Here NumPy's ``default_rng(seed)`` draws the one sequence (not the same
values), used for all five arrays as the original does. With ``B = C = D = A`` most polynomials have one
real critical point (``del > 0``); the ``A = 0`` ones (``B = C = D = 0``) take the three-root branch with
``0 / 0``.

Deliberate differences: values the kernels store and then read back through ``__restrict__`` pointers (``b,
c, d, Q, R`` in ``QRdel``; ``theta, sqrtQ, x1, x2, x3`` in ``QuarticSolver``) are kept in locals, as the
compiler keeps them in registers, and each output is stored once with its final value (the compiler
drops the dead first stores of ``Q`` and ``R``); ``roundf`` (half away from zero) is written with
``floor``. ``acos(R / sqrt(-Q^3))`` with ``Q = 0`` (the ``A = 0`` polynomials) is NaN on the GPU; Numba raises
on a division by zero, so the region guards it and takes NaN directly. Precision: single (float32), as the
original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 64
N = 1999999
F = np.float32
HALF = F(0.5)
PI = F(3.1415927)

POINTS = {"100": {"repeat": 100, "n": N}}
#: 128 polynomials: seed 0 draws no zero among them, so no NaN (which never compares equal) in the results
TEST_POINT = {"repeat": 1, "n": 128}
#: 2^16 polynomials (about 4e6 records; the measured point has 1999999)
FEATURE_POINT = {"repeat": 100, "n": 65536}


def QRdel(n, A, B, C, D, b, c, d, Q, R, Qint, Rint, dl, n_threads):
    """``b, c, d``, the rounded ``Q, R`` and the discriminant of every polynomial."""
    for i in numba.prange(n_threads):
        if i < n:
            bi = F(0.75) * (B[i] / A[i])
            ci = F(0.50) * (C[i] / A[i])
            di = F(0.25) * (D[i] / A[i])
            b[i] = bi
            c[i] = ci
            d[i] = di
            q = (ci / F(3.0)) - ((bi * bi) / F(9.0))
            r = (bi * ci) / F(6.0) - (bi * bi * bi) / F(27.0) - HALF * di
            t = q * F(1e5)  # roundf: half away from zero
            a = abs(t)
            rd = np.floor(a)
            if a - rd >= HALF:
                rd += F(1.0)
            q = (rd if t >= 0 else -rd) / F(1e5)
            t = r * F(1e5)
            a = abs(t)
            rd = np.floor(a)
            if a - rd >= HALF:
                rd += F(1.0)
            r = (rd if t >= 0 else -rd) / F(1e5)
            Q[i] = q
            R[i] = r
            qint = q * q * q
            rint = r * r
            Qint[i] = qint
            Rint[i] = rint
            dl[i] = rint + qint
    return b, c, d, Q, R, Qint, Rint, dl


def QuarticSolver(n, A, B, C, D, b, Q, R, dl, theta, sqrtQ, x1, x2, x3, temp, mn, n_threads):
    """The minimising root of every polynomial's derivative."""
    for i in numba.prange(n_threads):
        if i < n:
            if dl[i] <= F(1e-5):
                q = Q[i]
                sd = np.sqrt(-(q * q * q))
                th = np.arccos(R[i] / sd) if sd != 0 else F(np.nan)  # R / 0: NaN or inf, arccos NaN
                sq = F(2.0) * np.sqrt(-q)
                theta[i] = th
                sqrtQ[i] = sq
                b3 = b[i] / F(3.0)
                r1 = (sq * np.cos(th / F(3.0))) - b3
                r2 = (sq * np.cos((th + F(2.0) * PI) / F(3.0))) - b3
                r3 = (sq * np.cos((th + F(4.0) * PI) / F(3.0))) - b3
                if r1 < r2:
                    temp[i] = r1
                    r1, r2 = r2, r1
                if r2 < r3:
                    temp[i] = r2
                    r2, r3 = r3, r2
                if r1 < r2:
                    temp[i] = r1
                    r1, r2 = r2, r1
                x1[i] = r1
                x2[i] = r2
                x3[i] = r3
                f13 = (A[i] * ((r1 * r1 * r1 * r1) - (r3 * r3 * r3 * r3)) / F(4.0)
                       + B[i] * ((r1 * r1 * r1) - (r3 * r3 * r3)) / F(3.0)
                       + C[i] * ((r1 * r1) - (r3 * r3)) / F(2.0) + D[i] * (r1 - r3))
                mn[i] = r1 if f13 <= F(0.0) else r3
            else:
                s = np.sqrt(dl[i])
                r1 = np.cbrt(R[i] + s) + np.cbrt(R[i] - s) - (b[i] / F(3.0))
                x1[i] = r1
                x2[i] = F(0.0)
                x3[i] = F(0.0)
                mn[i] = r1
    return theta, sqrtQ, x1, x2, x3, temp, mn


@cuda.jit
def _qrdel_gpu(n, A, B, C, D, b, c, d, Q, R, Qint, Rint, dl):
    i = cuda.grid(1)
    if i < n:
        bi = F(0.75) * (B[i] / A[i])
        ci = F(0.50) * (C[i] / A[i])
        di = F(0.25) * (D[i] / A[i])
        b[i] = bi
        c[i] = ci
        d[i] = di
        q = (ci / F(3.0)) - ((bi * bi) / F(9.0))
        r = (bi * ci) / F(6.0) - (bi * bi * bi) / F(27.0) - HALF * di
        t = q * F(1e5)
        rd = numba.float32(math.floor(abs(t)))
        if abs(t) - rd >= HALF:
            rd += F(1.0)
        q = (rd if t >= 0 else -rd) / F(1e5)
        t = r * F(1e5)
        rd = numba.float32(math.floor(abs(t)))
        if abs(t) - rd >= HALF:
            rd += F(1.0)
        r = (rd if t >= 0 else -rd) / F(1e5)
        Q[i] = q
        R[i] = r
        Qint[i] = q * q * q
        Rint[i] = r * r
        dl[i] = r * r + q * q * q


@cuda.jit
def _solver_gpu(n, A, B, C, D, b, Q, R, dl, theta, sqrtQ, x1, x2, x3, temp, mn):
    i = cuda.grid(1)
    if i < n:
        if dl[i] <= F(1e-5):
            q = Q[i]
            arg = R[i] / numba.float32(math.sqrt(-(q * q * q))) if q < 0 else numba.float32(math.nan)
            th = numba.float32(math.acos(arg)) if abs(arg) <= 1 else numba.float32(math.nan)
            sq = F(2.0) * numba.float32(math.sqrt(-q)) if q <= 0 else numba.float32(math.nan)
            theta[i] = th
            sqrtQ[i] = sq
            b3 = b[i] / F(3.0)
            r1 = sq * numba.float32(math.cos(th / F(3.0))) - b3
            r2 = sq * numba.float32(math.cos((th + F(2.0) * PI) / F(3.0))) - b3
            r3 = sq * numba.float32(math.cos((th + F(4.0) * PI) / F(3.0))) - b3
            if r1 < r2:
                temp[i] = r1
                r1, r2 = r2, r1
            if r2 < r3:
                temp[i] = r2
                r2, r3 = r3, r2
            if r1 < r2:
                temp[i] = r1
                r1, r2 = r2, r1
            x1[i] = r1
            x2[i] = r2
            x3[i] = r3
            f13 = (A[i] * ((r1 * r1 * r1 * r1) - (r3 * r3 * r3 * r3)) / F(4.0)
                   + B[i] * ((r1 * r1 * r1) - (r3 * r3 * r3)) / F(3.0)
                   + C[i] * ((r1 * r1) - (r3 * r3)) / F(2.0) + D[i] * (r1 - r3))
            mn[i] = r1 if f13 <= F(0.0) else r3
        else:
            s = numba.float32(math.sqrt(dl[i]))
            u = R[i] + s
            v = R[i] - s
            cu = numba.float32(math.copysign(abs(u) ** (1.0 / 3.0), u))
            cv = numba.float32(math.copysign(abs(v) ** (1.0 / 3.0), v))
            r1 = cu + cv - (b[i] / F(3.0))
            x1[i] = r1
            x2[i] = F(0.0)
            x3[i] = F(0.0)
            mn[i] = r1


def _port(kernel, outs):
    def to_device(n, *rest):
        *arrays, n_threads = rest
        return {"n": int(n), "arrays": [cuda.to_device(a) for a in arrays], "threads": int(n_threads)}

    def launch(s):
        with np.errstate(all="ignore"):  # the 0 / 0 of the A = 0 polynomials, as on the GPU
            kernel[s["threads"] // BLOCK, BLOCK](s["n"], *s["arrays"])

    def from_device(s):
        return tuple(s["arrays"][k].copy_to_host() for k in outs)

    return GpuPort(to_device, launch, from_device)


def coefficients(n, seed):
    """``A, B, C, D``: one uniform integer sequence in [-100, 100] for all four (``A = 0`` set to 1)."""
    v = np.random.default_rng(seed).integers(-100, 101, n).astype(np.float32)
    a = v.copy()
    a[a == 0] = 1
    return a, v.copy(), v.copy(), v.copy()


def qrdel_numpy(A, B, C, D):
    """``QRdel`` in NumPy: ``b, Q, R, del`` (what ``QuarticSolver`` reads)."""
    with np.errstate(all="ignore"):
        b = F(0.75) * (B / A)
        c = F(0.50) * (C / A)
        d = F(0.25) * (D / A)
        q = (c / F(3.0)) - ((b * b) / F(9.0))
        r = (b * c) / F(6.0) - (b * b * b) / F(27.0) - HALF * d
        q = (np.sign(q * F(1e5)) * np.floor(np.abs(q * F(1e5)) + HALF)).astype(F) / F(1e5)
        r = (np.sign(r * F(1e5)) * np.floor(np.abs(r * F(1e5)) + HALF)).astype(F) / F(1e5)
        return b, q, r, (r * r + q * q * q).astype(F)


def make_inputs_qrdel(params, seed):
    n = int(params["n"])
    z = lambda: np.zeros(n, dtype=np.float32)  # noqa: E731
    return (n, *coefficients(n, seed), z(), z(), z(), z(), z(), z(), z(), z(), work(params)[0])


def make_inputs_solver(params, seed):
    n = int(params["n"])
    A, B, C, D = coefficients(n, seed)
    b, q, r, dl = qrdel_numpy(A, B, C, D)
    z = lambda: np.zeros(n, dtype=np.float32)  # noqa: E731
    return (n, A, B, C, D, b, q, r, dl, z(), z(), z(), z(), z(), z(), z(), work(params)[0])


def work(params):
    n = int(params["n"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


def _kernel(name, region, port, make_inputs, what):
    return MeasuredKernel(
        source="hecbench",
        application="qem",
        kernel=name,
        description=f"HeCBench qem: {what}, one thread per quartic",
        cpu=region,
        gpu=port,
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-5,
    )


KERNELS = [
    _kernel("QRdel", QRdel, _port(_qrdel_gpu, range(4, 12)), make_inputs_qrdel,
            "the depressed-cubic coefficients Q, R and the discriminant of the quartic's derivative"),
    _kernel("QuarticSolver", QuarticSolver, _port(_solver_gpu, range(8, 15)), make_inputs_solver,
            "the minimising critical point by the trigonometric or Cardano formula"),
]
