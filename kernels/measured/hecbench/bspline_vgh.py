"""Tricubic B-spline value, gradient and Hessian (QMCPACK's ``eval_UBspline_3d_s_vgh``), HeCBench
``bspline-vgh``: the kernel ``bspline``.

Each thread evaluates one spline ``n`` (of ``NSIZE = 2003``) at one walker's position: with the 1-D basis
weights ``a, b, c`` (and their first and second derivatives ``da ... d2c``, four each, computed on the host
from the fractional grid position), it loops over the 4 x 4 ``(i, j)`` grid points of the x-y stencil,
forms six products of the x and y weights, reads four coefficients along z (``coefs[i xs + j ys + k zs]``,
``k = 0..3``, the spline index the fastest) and accumulates the value, the three gradient components and
the six Hessian entries; it then scales them by the inverse grid spacings and writes the value, gradient
(3) and symmetric Hessian (9) of spline ``n``.

Launch: ``ceil(2003 / 256) = 8`` blocks of 256, guard ``n < num_splines``. Measured point ``default`` (the
program has no arguments): the timed launch is the first, walker 0 at ``(0.822387, 0.989919, 0.104573)``,
grid 45 per axis: cell ``(37, 44, 4)``.

Inputs: the host's coefficients ``spline_coefs[i] = sqrt(0.22 + i) sin(i)`` (double, stored as float) over
``2016 x 48^3`` floats (strides ``xs = 2016 x 48^2``, ``ys = 2016 x 48``, ``zs = 2016``); the basis weights by
the host's ``eval_abc`` in float. Deliberate difference: the kernel is passed ``spline_coefs + ix xs + iy ys
+ iz zs`` and reads at most ``3 xs + 3 ys + 3 zs + NSIZE`` floats past it; the region is given that window
(about 14 M floats) instead of the whole 223 M-float array (the addresses relative to the window's start and
the strides are the original's). The outputs are walker 0's slices of the walker arrays. Precision: single.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
GRID_NUM = 45
DELTA_INV = 45
ZERO = np.float32(0.0)

AF = np.array([-0.166667, 0.5, -0.5, 0.166667, 0.5, -1.0, 0.0, 0.666667, -0.5, 0.5, 0.5, 0.166667,
               0.166667, 0.0, 0.0, 0.0], dtype=np.float32)
DAF = np.array([0.0, -0.5, 1.0, -0.5, 0.0, 1.5, -2.0, 0.0, 0.0, -1.5, 1.0, 0.5, 0.0, 0.5, 0.0, 0.0],
               dtype=np.float32)
D2AF = np.array([0.0, 0.0, -1.0, 1.0, 0.0, 0.0, 3.0, -2.0, 0.0, 0.0, -3.0, 1.0, 0.0, 0.0, 1.0, 0.0],
                dtype=np.float32)

POINTS = {"default": {"nsize": 2003, "walker": 0}}
#: 100 splines (strides from 112 = 100 rounded up to 16), one block
TEST_POINT = {"nsize": 100, "walker": 0}


def bspline(coefs, xs, ys, zs, vals, grads, hess, a, b, c, da, db, dc, d2a, d2b, d2c, dx_inv, dy_inv, dz_inv,
            num_splines, n_threads):
    """Value, gradient and Hessian of every spline at the walker's position."""
    for n in numba.prange(n_threads):
        if n < num_splines:
            h0 = ZERO
            h1 = ZERO
            h2 = ZERO
            h3 = ZERO
            h4 = ZERO
            h5 = ZERO
            h6 = ZERO
            h7 = ZERO
            h8 = ZERO
            v0 = ZERO
            for i in range(4):
                for j in range(4):
                    pre20 = d2a[i] * b[j]
                    pre10 = da[i] * b[j]
                    pre00 = a[i] * b[j]
                    pre11 = da[i] * db[j]
                    pre01 = a[i] * db[j]
                    pre02 = a[i] * d2b[j]
                    o = n + i * xs + j * ys
                    sum0 = c[0] * coefs[o] + c[1] * coefs[o + zs] + c[2] * coefs[o + zs * 2] + c[3] * coefs[o + zs * 3]
                    sum1 = (dc[0] * coefs[o] + dc[1] * coefs[o + zs] + dc[2] * coefs[o + zs * 2]
                            + dc[3] * coefs[o + zs * 3])
                    sum2 = (d2c[0] * coefs[o] + d2c[1] * coefs[o + zs] + d2c[2] * coefs[o + zs * 2]
                            + d2c[3] * coefs[o + zs * 3])
                    h0 += pre20 * sum0
                    h1 += pre11 * sum0
                    h2 += pre10 * sum1
                    h4 += pre02 * sum0
                    h5 += pre01 * sum1
                    h8 += pre00 * sum2
                    h3 += pre10 * sum0
                    h6 += pre01 * sum0
                    h7 += pre00 * sum1
                    v0 += pre00 * sum0
            vals[n] = v0
            grads[n * 3] = h3 * dx_inv
            grads[n * 3 + 1] = h6 * dy_inv
            grads[n * 3 + 2] = h7 * dz_inv
            hess[n * 9] = h0 * dx_inv * dx_inv
            hess[n * 9 + 1] = h1 * dx_inv * dy_inv
            hess[n * 9 + 2] = h2 * dx_inv * dz_inv
            hess[n * 9 + 3] = h1 * dx_inv * dy_inv
            hess[n * 9 + 4] = h4 * dy_inv * dy_inv
            hess[n * 9 + 5] = h5 * dy_inv * dz_inv
            hess[n * 9 + 6] = h2 * dx_inv * dz_inv
            hess[n * 9 + 7] = h5 * dy_inv * dz_inv
            hess[n * 9 + 8] = h8 * dz_inv * dz_inv
    return vals, grads, hess


@cuda.jit
def _bspline_gpu(coefs, xs, ys, zs, vals, grads, hess, a, b, c, da, db, dc, d2a, d2b, d2c, dx_inv, dy_inv, dz_inv,
                 num_splines):
    n = cuda.grid(1)
    if n < num_splines:
        h = cuda.local.array(9, dtype=numba.float32)
        for k in range(9):
            h[k] = ZERO
        v0 = ZERO
        for i in range(4):
            for j in range(4):
                pre20 = d2a[i] * b[j]
                pre10 = da[i] * b[j]
                pre00 = a[i] * b[j]
                pre11 = da[i] * db[j]
                pre01 = a[i] * db[j]
                pre02 = a[i] * d2b[j]
                o = n + i * xs + j * ys
                sum0 = c[0] * coefs[o] + c[1] * coefs[o + zs] + c[2] * coefs[o + zs * 2] + c[3] * coefs[o + zs * 3]
                sum1 = dc[0] * coefs[o] + dc[1] * coefs[o + zs] + dc[2] * coefs[o + zs * 2] + dc[3] * coefs[o + zs * 3]
                sum2 = (d2c[0] * coefs[o] + d2c[1] * coefs[o + zs] + d2c[2] * coefs[o + zs * 2]
                        + d2c[3] * coefs[o + zs * 3])
                h[0] += pre20 * sum0
                h[1] += pre11 * sum0
                h[2] += pre10 * sum1
                h[4] += pre02 * sum0
                h[5] += pre01 * sum1
                h[8] += pre00 * sum2
                h[3] += pre10 * sum0
                h[6] += pre01 * sum0
                h[7] += pre00 * sum1
                v0 += pre00 * sum0
        vals[n] = v0
        grads[n * 3] = h[3] * dx_inv
        grads[n * 3 + 1] = h[6] * dy_inv
        grads[n * 3 + 2] = h[7] * dz_inv
        hess[n * 9] = h[0] * dx_inv * dx_inv
        hess[n * 9 + 1] = h[1] * dx_inv * dy_inv
        hess[n * 9 + 2] = h[2] * dx_inv * dz_inv
        hess[n * 9 + 3] = h[1] * dx_inv * dy_inv
        hess[n * 9 + 4] = h[4] * dy_inv * dy_inv
        hess[n * 9 + 5] = h[5] * dy_inv * dz_inv
        hess[n * 9 + 6] = h[2] * dx_inv * dz_inv
        hess[n * 9 + 7] = h[5] * dy_inv * dz_inv
        hess[n * 9 + 8] = h[8] * dz_inv * dz_inv


def _to_device(coefs, xs, ys, zs, vals, grads, hess, *rest):
    *weights, dx, dy, dz, num, n_threads = rest
    return {"coefs": cuda.to_device(coefs), "strides": (int(xs), int(ys), int(zs)),
            "out": [cuda.to_device(x) for x in (vals, grads, hess)], "w": [cuda.to_device(x) for x in weights],
            "inv": (np.float32(dx), np.float32(dy), np.float32(dz)), "num": int(num), "n": int(n_threads)}


def _launch(s):
    _bspline_gpu[s["n"] // BLOCK, BLOCK](s["coefs"], *s["strides"], *s["out"], *s["w"], *s["inv"], s["num"])


def _from_device(s):
    return tuple(x.copy_to_host() for x in s["out"])


def eval_abc(af, t):
    """The host's cubic weights ``((A0 t + A1) t + A2) t + A3`` per basis function, in float."""
    t = np.float32(t)
    return np.array([((af[4 * k] * t + af[4 * k + 1]) * t + af[4 * k + 2]) * t + af[4 * k + 3] for k in range(4)],
                    dtype=np.float32)


def cell(walker):
    """Walker ``walker``'s grid cell ``(ix, iy, iz)`` and fractional offsets ``(tx, ty, tz)`` (host float)."""
    start = (np.float32(0.822387), np.float32(0.989919), np.float32(0.104573))
    idx, frac = [], []
    for p in start:
        x = np.float32(p + walker * 1.0 / 12000)
        u = x * np.float32(DELTA_INV)
        ipart = np.float32(int(u))
        frac.append(np.float32(u - ipart))
        idx.append(min(max(0, int(ipart)), GRID_NUM - 1))
    return tuple(idx), tuple(frac)


def make_inputs(params, seed):
    """The region's arguments at walker 0's launch: the coefficient window, empty outputs, the weights."""
    nsize = int(params["nsize"])
    nround = nsize + 16 - nsize % 16 if nsize % 16 else nsize
    xs, ys, zs = nround * 48 * 48, nround * 48, nround
    (ix, iy, iz), (tx, ty, tz) = cell(int(params["walker"]))
    base = ix * xs + iy * ys + iz * zs
    i = np.arange(base, base + 3 * xs + 3 * ys + 3 * zs + nsize, dtype=np.float64)
    coefs = (np.sqrt(0.22 + i) * np.sin(i)).astype(np.float32)
    weights = [eval_abc(af, t) for af in (AF, DAF, D2AF) for t in (tx, ty, tz)]
    inv = np.float32(DELTA_INV)
    return (coefs, xs, ys, zs, np.zeros(nsize, np.float32), np.zeros(3 * nsize, np.float32),
            np.zeros(9 * nsize, np.float32), *weights, inv, inv, inv, nsize, work(params)[0])


def work(params):
    n = int(params["nsize"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="bspline-vgh",
        kernel="bspline",
        description="HeCBench bspline-vgh: tricubic B-spline value, gradient and Hessian of 2003 splines at one "
        "position, one thread per spline",
        cpu=bspline,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-4,
        atol=1e-3,
    ),
]
