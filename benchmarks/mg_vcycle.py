"""A multigrid V-cycle for the 3-D Poisson equation, written as a benchmark-suite code would be: Numba
helper functions for the 7-point weighted-Jacobi smoother, the residual, full-weighting restriction,
trilinear prolongation with correction, the boundary and the norm, and a driver that runs the cycle over a
tuple of levels (finest first) with loops, not recursion. ``bench_compile.py`` compiles it plain and
instrumented."""

import math

import numba
import numpy as np


@numba.njit
def apply_boundary(u):
    """Homogeneous Dirichlet boundary: zero the six faces."""
    n0, n1, n2 = u.shape
    for j in range(n1):
        for k in range(n2):
            u[0, j, k] = 0.0
            u[n0 - 1, j, k] = 0.0
    for i in range(n0):
        for k in range(n2):
            u[i, 0, k] = 0.0
            u[i, n1 - 1, k] = 0.0
    for i in range(n0):
        for j in range(n1):
            u[i, j, 0] = 0.0
            u[i, j, n2 - 1] = 0.0


@numba.njit
def zero(u):
    for i in range(u.shape[0]):
        for j in range(u.shape[1]):
            for k in range(u.shape[2]):
                u[i, j, k] = 0.0


@numba.njit
def neighbours(u, i, j, k):
    return u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k] + u[i, j + 1, k] + u[i, j, k - 1] + u[i, j, k + 1]


@numba.njit
def smooth(u, f, tmp, h2, omega, sweeps):
    """``sweeps`` weighted-Jacobi sweeps of the 7-point Laplacian ``-lap(u) = f``."""
    n0, n1, n2 = u.shape
    for s in range(sweeps):
        for i in range(1, n0 - 1):
            for j in range(1, n1 - 1):
                for k in range(1, n2 - 1):
                    jac = (neighbours(u, i, j, k) + h2 * f[i, j, k]) / 6.0
                    tmp[i, j, k] = (1.0 - omega) * u[i, j, k] + omega * jac
        for i in range(1, n0 - 1):
            for j in range(1, n1 - 1):
                for k in range(1, n2 - 1):
                    u[i, j, k] = tmp[i, j, k]


@numba.njit
def residual(u, f, r, h2):
    """``r = f + lap(u)`` in the interior, 0 on the boundary."""
    n0, n1, n2 = u.shape
    zero(r)
    inv = 1.0 / h2
    for i in range(1, n0 - 1):
        for j in range(1, n1 - 1):
            for k in range(1, n2 - 1):
                r[i, j, k] = f[i, j, k] - (6.0 * u[i, j, k] - neighbours(u, i, j, k)) * inv


@numba.njit
def weight(a):
    return 2 - abs(a)


@numba.njit
def restrict(r, fc):
    """Full weighting (27 points, weights (2-|a|)(2-|b|)(2-|c|)/64) of the fine residual onto the coarse grid."""
    nc0, nc1, nc2 = fc.shape
    zero(fc)
    for ci in range(1, nc0 - 1):
        for cj in range(1, nc1 - 1):
            for ck in range(1, nc2 - 1):
                s = 0.0
                for a in range(-1, 2):
                    for b in range(-1, 2):
                        for c in range(-1, 2):
                            w = weight(a) * weight(b) * weight(c)
                            s += w * r[2 * ci + a, 2 * cj + b, 2 * ck + c]
                fc[ci, cj, ck] = s / 64.0


@numba.njit
def prolong_correct(uc, u):
    """``u += P uc``: trilinear interpolation of the coarse correction onto the fine grid's interior."""
    n0, n1, n2 = u.shape
    for i in range(1, n0 - 1):
        i0 = i // 2
        di = i - 2 * i0
        for j in range(1, n1 - 1):
            j0 = j // 2
            dj = j - 2 * j0
            for k in range(1, n2 - 1):
                k0 = k // 2
                dk = k - 2 * k0
                acc = 0.0
                for a in range(di + 1):
                    for b in range(dj + 1):
                        for c in range(dk + 1):
                            acc += uc[i0 + a, j0 + b, k0 + c]
                u[i, j, k] += acc / ((di + 1) * (dj + 1) * (dk + 1))


@numba.njit
def norm(r):
    s = 0.0
    for i in range(r.shape[0]):
        for j in range(r.shape[1]):
            for k in range(r.shape[2]):
                s += r[i, j, k] * r[i, j, k]
    return math.sqrt(s)


def vcycle(us, fs, rs, tmps, h, nu1, nu2, coarse_sweeps):
    """One V-cycle over the levels (tuples of arrays, finest first); returns the fine residual's norm."""
    nl = len(us)
    hl = h
    for lev in range(nl - 1):
        h2 = hl * hl
        smooth(us[lev], fs[lev], tmps[lev], h2, 0.8, nu1)
        apply_boundary(us[lev])
        residual(us[lev], fs[lev], rs[lev], h2)
        restrict(rs[lev], fs[lev + 1])
        zero(us[lev + 1])
        hl = 2.0 * hl
    smooth(us[nl - 1], fs[nl - 1], tmps[nl - 1], hl * hl, 0.8, coarse_sweeps)
    for lev in range(nl - 2, -1, -1):
        hl = 0.5 * hl
        prolong_correct(us[lev + 1], us[lev])
        smooth(us[lev], fs[lev], tmps[lev], hl * hl, 0.8, nu2)
        apply_boundary(us[lev])
    residual(us[0], fs[0], rs[0], h * h)
    return norm(rs[0])


def make_inputs(n=17, levels=4, seed=0):
    """Levels for a ``n^3`` finest grid (``n = 2^k + 1``) and ``levels`` levels, a random right-hand side."""
    sizes = [(n - 1) // 2 ** lev + 1 for lev in range(levels)]
    if sizes[-1] < 3 or any((s - 1) * 2 ** lev != n - 1 for lev, s in enumerate(sizes)):
        raise ValueError(f"n = {n} does not give {levels} levels (n must be 2^k + 1 with 2^k >= 2^levels)")
    us = tuple(np.zeros((s, s, s)) for s in sizes)
    fs = tuple(np.zeros((s, s, s)) for s in sizes)
    fs[0][1:-1, 1:-1, 1:-1] = np.random.default_rng(seed).standard_normal((n - 2,) * 3)
    rs = tuple(np.zeros((s, s, s)) for s in sizes)
    tmps = tuple(np.zeros((s, s, s)) for s in sizes)
    return us, fs, rs, tmps, 1.0 / (n - 1), 2, 2, 20
