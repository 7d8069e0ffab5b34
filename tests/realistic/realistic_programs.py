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


# ==========================================================================================================
# second pass: patterns of real code that need privatisation, lifetimes, imperfect nests and broadcasts.
# Each comes with a negative twin: the same kind of buffer carrying a real value from one iteration to the next.

# ----------------------------------------------------------------------------------------------------------
# NAS MG resid: two row buffers computed for every (i3, i2) row, allocated once outside the loops


def mg_resid(u, v, r, a):
    n3, n2, n1 = u.shape
    u1 = np.empty(n1)
    u2 = np.empty(n1)
    for i3 in range(1, n3 - 1):  # <- mgr.i3
        for i2 in range(1, n2 - 1):  # <- mgr.i2
            for i1 in range(n1):
                u1[i1] = u[i3, i2 - 1, i1] + u[i3, i2 + 1, i1] + u[i3 - 1, i2, i1] + u[i3 + 1, i2, i1]
                u2[i1] = (u[i3 - 1, i2 - 1, i1] + u[i3 - 1, i2 + 1, i1] + u[i3 + 1, i2 - 1, i1]
                          + u[i3 + 1, i2 + 1, i1])
            for i1 in range(1, n1 - 1):
                r[i3, i2, i1] = (v[i3, i2, i1] - a[0] * u[i3, i2, i1] - a[2] * (u2[i1] + u1[i1 - 1] + u1[i1 + 1])
                                 - a[3] * (u2[i1 - 1] + u2[i1 + 1]))


def row_recurrence(u, out):
    """Negative twin: the row buffer carries the previous row into the next iteration (a flow)."""
    n2, n1 = u.shape
    prev = np.zeros(n1)
    for i2 in range(n2):  # <- rowrec.rows
        for i1 in range(n1):  # <- rowrec.use
            out[i2, i1] = 0.5 * (prev[i1] + u[i2, i1])
        for i1 in range(n1):  # <- rowrec.keep
            prev[i1] = out[i2, i1]


# ----------------------------------------------------------------------------------------------------------
# NAS FT cffts1: blocks of lines copied into a scratch block, transformed there (a plain DFT per line into a
# second scratch block) and copied back


def fft_lines_blocked(x, tw, fftblock):
    n3, n2, n1 = x.shape
    scratch = np.empty((fftblock, n1), np.complex128)
    work = np.empty((fftblock, n1), np.complex128)
    for k in range(n3):  # <- ftb.planes
        for jj in range(0, n2, fftblock):  # <- ftb.blocks
            for j in range(fftblock):
                for i in range(n1):
                    scratch[j, i] = x[k, jj + j, i]
            for j in range(fftblock):
                for m in range(n1):
                    acc = 0j
                    for i in range(n1):
                        acc += scratch[j, i] * tw[(m * i) % n1]
                    work[j, m] = acc
            for j in range(fftblock):
                for i in range(n1):
                    x[k, jj + j, i] = work[j, i]


def dft_twiddles(n):
    return np.exp(-2j * np.pi * np.arange(n) / n)


# ----------------------------------------------------------------------------------------------------------
# k-nearest neighbours with a per-query queue allocated inside the prange body (insertion into a sorted queue)


def knn_search(train, test, k, out):
    for q in numba.prange(test.shape[0]):  # <- knn.queries
        queue = np.empty((k, 2))
        queue[:, 0] = np.inf
        queue[:, 1] = -1.0
        for j in range(train.shape[0]):
            d = 0.0
            for c in range(train.shape[1]):
                t = train[j, c] - test[q, c]
                d += t * t
            if d < queue[k - 1, 0]:
                m = k - 1
                while m > 0 and queue[m - 1, 0] > d:
                    queue[m, 0] = queue[m - 1, 0]
                    queue[m, 1] = queue[m - 1, 1]
                    m -= 1
                queue[m, 0] = d
                queue[m, 1] = j
        for m in range(k):
            out[q, m] = queue[m, 1]


def knn_shared_queue(train, test, k, out):
    """Negative twin: one queue for every query, never reset: a query starts from the previous one's queue."""
    queue = np.full((k, 2), np.inf)
    for q in numba.prange(test.shape[0]):  # <- knns.queries
        for j in range(train.shape[0]):
            d = 0.0
            for c in range(train.shape[1]):
                t = train[j, c] - test[q, c]
                d += t * t
            if d < queue[k - 1, 0]:
                m = k - 1
                while m > 0 and queue[m - 1, 0] > d:
                    queue[m, 0] = queue[m - 1, 0]
                    queue[m, 1] = queue[m - 1, 1]
                    m -= 1
                queue[m, 0] = d
                queue[m, 1] = j
        for m in range(k):
            out[q, m] = queue[m, 1]


# ----------------------------------------------------------------------------------------------------------
# CSR mat-vec the SciPy way: a row's values dotted with the gathered vector entries (temporaries per row)


def csr_matvec_slices(vals, cols, rowptr, x, y):
    for row in range(rowptr.shape[0] - 1):  # <- csrs.rows
        lo, hi = rowptr[row], rowptr[row + 1]
        y[row] = vals[lo:hi] @ x[cols[lo:hi]]


def smooth_rows(a, b):
    """Negative twin: each row is made from a temporary of the previous row (a flow through the rows)."""
    for i in range(1, a.shape[0]):  # <- smr.rows
        a[i] = a[i - 1] * 0.5 + b[i]


# ----------------------------------------------------------------------------------------------------------
# a 3-D twiddle-factor nest (NAS FT evolve / compute_indexmap style): per-level index arithmetic between the
# loop headers


def twiddle_nest(out, alpha):
    n3, n2, n1 = out.shape
    for k in range(n3):  # <- tw.k
        kk = k if k < n3 // 2 else k - n3
        kk2 = kk * kk
        for j in range(n2):
            jj = j if j < n2 // 2 else j - n2
            jk = jj * jj + kk2
            for i in range(n1):
                ii = i if i < n1 // 2 else i - n1
                out[k, j, i] = math.exp(-alpha * (ii * ii + jk))


def nest_carried(out, scale):
    """Negative twin: the statement between the headers carries a value from one row to the next."""
    n2, n1 = out.shape
    s = 1.0
    for j in range(n2):  # <- nc.rows
        s = math.sin(s) + j * scale
        for i in range(n1):  # <- nc.cols
            out[j, i] = s * i


# ----------------------------------------------------------------------------------------------------------
# an RBF kernel map with broadcasting (scikit-learn style), and its negative twin


def rbf_kernel_map(X, C, gamma):
    diff = X[:, None, :] - C[None, :, :]
    d2 = (diff * diff).sum(axis=-1)
    return np.exp(-gamma * d2)


def rbf_refine(X, C, gamma, steps):
    """Negative twin: each step's centres are made from the previous step's broadcast (a host loop)."""
    for s in range(steps):  # <- rbfr.steps
        w = np.exp(-gamma * ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=-1))
        C = (w.T @ X) / w.sum(axis=0)[:, None]
    return C


# ----------------------------------------------------------------------------------------------------------
# density clustering (DBSCAN): the full algorithm (neighbour counts, core points, cluster growth with a
# stack) and its neighbourhood-count pass alone


def region_count(X, eps, counts):
    n = X.shape[0]
    eps2 = eps * eps
    for i in range(n):  # <- db.counts
        c = 0
        for j in range(n):
            d = 0.0
            for f in range(X.shape[1]):
                t = X[i, f] - X[j, f]
                d += t * t
            if d <= eps2:
                c += 1
        counts[i] = c


def dbscan(X, eps, min_pts, labels):
    n = X.shape[0]
    eps2 = eps * eps
    counts = np.zeros(n, np.int64)
    region_count(X, eps, counts)
    labels[:] = -1
    stack = np.empty(n, np.int64)
    cluster = 0
    for i in range(n):  # <- db.grow
        if labels[i] != -1 or counts[i] < min_pts:
            continue
        labels[i] = cluster
        top = 0
        stack[top] = i
        top += 1
        while top > 0:
            top -= 1
            p = stack[top]
            if counts[p] < min_pts:
                continue
            for j in range(n):  # <- db.neighbours
                if labels[j] != -1:
                    continue
                d = 0.0
                for f in range(X.shape[1]):
                    t = X[p, f] - X[j, f]
                    d += t * t
                if d <= eps2:
                    labels[j] = cluster
                    stack[top] = j
                    top += 1
        cluster += 1
    return cluster


def neighbourhoods_numpy(X, eps):
    """The neighbourhood pass written with NumPy per point (each point's distances are a temporary)."""
    n = X.shape[0]
    counts = np.empty(n, np.int64)
    for i in range(n):  # <- dbn.counts
        d = np.sqrt(((X - X[i]) ** 2).sum(axis=1))
        counts[i] = np.count_nonzero(d <= eps)
    return counts


def dbscan_numpy(X, eps, min_pts):
    """DBSCAN as a textbook writes it in Python: a list of neighbour index arrays, then cluster growth with a
    Python list as the stack."""
    n = X.shape[0]
    labels = np.full(n, -1)
    neighbours = []
    for i in range(n):  # <- dbn.neighbours
        d = np.sqrt(((X - X[i]) ** 2).sum(axis=1))
        neighbours.append(np.nonzero(d <= eps)[0])
    core = np.array([len(nb) >= min_pts for nb in neighbours])
    cluster = 0
    for i in range(n):  # <- dbn.grow
        if labels[i] != -1 or not core[i]:
            continue
        labels[i] = cluster
        stack = [i]
        while stack:
            p = stack.pop()
            if not core[p]:
                continue
            for q in neighbours[p]:
                if labels[q] == -1:
                    labels[q] = cluster
                    stack.append(q)
        cluster += 1
    return labels
