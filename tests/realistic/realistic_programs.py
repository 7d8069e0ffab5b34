"""Realistic regions in the style of well-known benchmark suites and numerical libraries, written as people
write them for Numba (helpers, loop nests, NumPy calls), with no Portcast marks unless the original style
has ``prange``. The tests assert the thread space, the dependence verdicts and the features each must get.

Comments ``# <- name`` tag the loops the tests refer to (their line numbers are looked up, not hard-coded).
"""

from __future__ import annotations

import cmath
import math

import numba
import numpy as np

# ----------------------------------------------------------------------------------------------------------
# conjugate gradient on a CSR matrix (NAS Parallel Benchmarks CG style): a host iteration loop around
# kernels in helper functions


def csr_matvec(data, cols, rowptr, x, y):
    n = rowptr.shape[0] - 1
    for row in range(n):  # <- cg.spmv
        acc = 0.0
        for k in range(rowptr[row], rowptr[row + 1]):
            acc += data[k] * x[cols[k]]
        y[row] = acc


def dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):  # <- cg.dot
        s += a[i] * b[i]
    return s


def axpy(alpha, x, y):
    for i in range(x.shape[0]):  # <- cg.axpy
        y[i] += alpha * x[i]


def cg_solve(data, cols, rowptr, b, x, iters):
    n = b.shape[0]
    r = b.copy()
    p = b.copy()
    q = np.zeros(n)
    rho = dot(r, r)
    for it in range(iters):  # <- cg.iterations
        csr_matvec(data, cols, rowptr, p, q)
        alpha = rho / dot(p, q)
        axpy(alpha, p, x)
        axpy(-alpha, q, r)
        rho_new = dot(r, r)
        beta = rho_new / rho
        for i in range(n):  # <- cg.update_p
            p[i] = r[i] + beta * p[i]
        rho = rho_new
    return rho


def cg_inputs(n=64, seed=0):
    """A symmetric, diagonally dominant sparse matrix with 5 entries per row (a 1-D Laplacian plus two
    off-diagonals), in CSR form, and a right-hand side."""
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for i in range(n):
        for j, v in ((i, 6.0), (i - 1, -1.0), (i + 1, -1.0), (i - 7, -0.5), (i + 7, -0.5)):
            if 0 <= j < n:
                rows.append(i)
                cols.append(j)
                vals.append(v)
    order = np.lexsort((cols, rows))
    rows, cols, vals = np.array(rows)[order], np.array(cols, np.int64)[order], np.array(vals)[order]
    rowptr = np.zeros(n + 1, np.int64)
    np.add.at(rowptr, rows + 1, 1)
    rowptr = np.cumsum(rowptr)
    return vals, cols, rowptr, rng.random(n), np.zeros(n)


# ----------------------------------------------------------------------------------------------------------
# 3-D multigrid pieces (NAS MG style): a 7-point smoother nest, a residual, a V-cycle over levels


def smooth3d(u, f, out, h2):
    n = u.shape[0]
    for i in range(1, n - 1):  # <- mg.smooth
        for j in range(1, n - 1):
            for k in range(1, n - 1):
                out[i, j, k] = (u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k] + u[i, j + 1, k]
                                + u[i, j, k - 1] + u[i, j, k + 1] - h2 * f[i, j, k]) / 6.0


def restrict3d(fine, coarse):
    m = coarse.shape[0]
    for i in range(1, m - 1):  # <- mg.restrict
        for j in range(1, m - 1):
            for k in range(1, m - 1):
                coarse[i, j, k] = fine[2 * i, 2 * j, 2 * k]


def mg_vcycle(levels_u, levels_f, levels_tmp, sweeps):
    nlev = len(levels_u)
    for lev in range(nlev - 1):  # <- mg.down
        for s in range(sweeps):  # <- mg.sweeps
            smooth3d(levels_u[lev], levels_f[lev], levels_tmp[lev], 0.01)
            smooth3d(levels_tmp[lev], levels_f[lev], levels_u[lev], 0.01)
        restrict3d(levels_u[lev], levels_f[lev + 1])
    return nlev


# ----------------------------------------------------------------------------------------------------------
# iterative radix-2 FFT on a complex array (bit reversal through an index table, then log2(n) stages)


def fft_radix2(a, rev):
    n = a.shape[0]
    tmp = a.copy()
    for i in range(n):  # <- fft.bitrev
        a[rev[i]] = tmp[i]
    m = 2
    while m <= n:  # <- fft.stages
        half = m // 2
        for k in range(0, n, m):  # <- fft.butterflies
            for j in range(half):
                w = cmath.exp(-2j * math.pi * j / m)
                t = w * a[k + j + half]
                u = a[k + j]
                a[k + j] = u + t
                a[k + j + half] = u - t
        m *= 2
    return a


def bit_reversal(n):
    bits = int(math.log2(n))
    return np.array([int(format(i, f"0{bits}b")[::-1], 2) for i in range(n)], dtype=np.int64)


# ----------------------------------------------------------------------------------------------------------
# integer bucket sort (NAS IS style): histogram, exclusive scan of the counts, scatter


def bucket_sort(keys, nbuckets, shift, out):
    count = np.zeros(nbuckets, np.int64)
    for i in range(keys.shape[0]):  # <- is.count
        count[keys[i] >> shift] += 1
    start = np.zeros(nbuckets, np.int64)
    acc = 0
    for b in range(nbuckets):  # <- is.scan
        start[b] = acc
        acc += count[b]
    for i in range(keys.shape[0]):  # <- is.scatter
        b = keys[i] >> shift
        out[start[b]] = keys[i]
        start[b] += 1
    return acc


# ----------------------------------------------------------------------------------------------------------
# linear-congruential random numbers (a recurrence: nothing to give to threads)


def lcg_fill(out, seed):
    x = seed
    for i in range(out.shape[0]):  # <- lcg.loop
        x = (1103515245 * x + 12345) % 2147483648
        out[i] = x / 2147483648.0
    return x


# ----------------------------------------------------------------------------------------------------------
# k-means with prange in the helpers (the style of Numba's own examples)


def kmeans_assign(points, centroids, labels):
    for i in numba.prange(points.shape[0]):  # <- km.assign
        best = np.inf
        best_c = 0
        for c in range(centroids.shape[0]):
            d = 0.0
            for f in range(points.shape[1]):
                t = points[i, f] - centroids[c, f]
                d += t * t
            if d < best:
                best = d
                best_c = c
        labels[i] = best_c


def kmeans_update(points, labels, centroids, counts):
    centroids[:, :] = 0.0
    counts[:] = 0
    for i in numba.prange(points.shape[0]):  # <- km.update
        c = labels[i]
        counts[c] += 1
        for f in range(points.shape[1]):
            centroids[c, f] += points[i, f]
    for c in range(centroids.shape[0]):
        if counts[c] > 0:
            for f in range(points.shape[1]):
                centroids[c, f] /= counts[c]


def kmeans_fit(points, centroids, labels, counts, iters):
    for it in range(iters):  # <- km.iterations
        kmeans_assign(points, centroids, labels)
        kmeans_update(points, labels, centroids, counts)
    return iters


# ----------------------------------------------------------------------------------------------------------
# an L2 norm written with NumPy calls, and the same written as a loop


def l2_norm_numpy(x):
    return np.sqrt(np.sum(x * x))


def l2_norm_loop(x):
    s = 0.0
    for i in range(x.shape[0]):  # <- l2.loop
        s += x[i] * x[i]
    return math.sqrt(s)


# ----------------------------------------------------------------------------------------------------------
# textbook Black-Scholes (the cumulative normal through erf), pairwise distances, a CRC, Mandelbrot


def cnd(d):
    return 0.5 * (1.0 + math.erf(d / math.sqrt(2.0)))


def black_scholes(S, K, T, r, sigma, call, put):
    for i in range(S.shape[0]):  # <- bs.options
        sqrt_t = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r + 0.5 * sigma * sigma) * T[i]) / (sigma * sqrt_t)
        d2 = d1 - sigma * sqrt_t
        disc = math.exp(-r * T[i])
        call[i] = S[i] * cnd(d1) - K[i] * disc * cnd(d2)
        put[i] = K[i] * disc * cnd(-d2) - S[i] * cnd(-d1)


def pairwise_distances(X, D):
    n = X.shape[0]
    for i in range(n):  # <- pd.pairs
        for j in range(n):
            acc = 0.0
            for f in range(X.shape[1]):
                t = X[i, f] - X[j, f]
                acc += t * t
            D[i, j] = math.sqrt(acc)


def crc32(data, table):
    crc = 0xFFFFFFFF
    for v in data:  # <- crc.bytes
        crc = table[(crc ^ int(v)) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc_table():
    t = np.zeros(256, np.int64)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (0xEDB88320 ^ (c >> 1)) if c & 1 else c >> 1
        t[i] = c
    return t


def mandelbrot(out, x0, y0, dx, dy, max_iter):
    h, w = out.shape
    for py in range(h):  # <- mb.rows
        for px in range(w):
            cr = x0 + px * dx
            ci = y0 + py * dy
            zr = 0.0
            zi = 0.0
            n = 0
            while zr * zr + zi * zi < 4.0 and n < max_iter:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            out[py, px] = n
