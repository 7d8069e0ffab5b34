"""Numba kernels of the exhaustive interaction search: batched least squares over many feature subsets.

For one subset of ``k`` features the design has ``T = 2**k`` columns: term ``t`` (a bit mask over the
subset's positions) is the product of the subset features whose bit is set; term 0 is the intercept.
Term ``t`` is built from term ``t`` without its highest bit times the feature of that bit, so the whole
design costs one multiplication per entry.

Validation (Sec. 3.3 of the XAPP paper): for every random split ``s`` the model is fitted on the internal
training points and scored on the internal test points. Instead of forming each split's normal equations
from scratch, the kernel forms the full weighted Gram matrix ``Z^T W Z`` and ``Z^T W y`` once per subset and
*subtracts* the few internal test points' contributions (12 rank-one downdates instead of 80 updates),
then solves the ``T x T`` system by Cholesky. A split whose Cholesky pivot falls below ``singular_tol``
times the column's squared norm (the column is, to that tolerance, a linear combination of earlier
columns) is *singular*: the subset cannot be identified on that split and scores ``inf``.

Every subset is computed by one thread, start to end, in a fixed order of operations, so results do not
depend on the number of threads, on chunking, or on the Dask backend.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

TRANSFORM_CODES = {"none": 0, "log": 1, "sqrt": 2}


@njit(cache=True)
def _term_tables(k):
    T = 1 << k
    high = np.zeros(T, np.int64)
    rest = np.zeros(T, np.int64)
    for t in range(1, T):
        j = 0
        while (t >> (j + 1)) > 0:
            j += 1
        high[t] = j
        rest[t] = t ^ (1 << j)
    return high, rest


@njit(cache=True)
def _inverse_transform(v, code):
    if code == 1:
        return np.exp(v)
    if code == 2:
        if v < 0.0:
            return 0.0
        return v * v
    return v


@njit(cache=True)
def _build_design(X, sub, high, rest, Z):
    n = X.shape[0]
    T = Z.shape[1]
    for i in range(n):
        Z[i, 0] = 1.0
        for t in range(1, T):
            Z[i, t] = Z[i, rest[t]] * X[i, sub[high[t]]]


@njit(cache=True)
def _cholesky_solve(A, b, beta, diag, tol):
    """Solve ``A beta = b`` in place (lower triangle of ``A`` used); False when singular."""
    T = A.shape[0]
    for j in range(T):
        diag[j] = A[j, j]
    for j in range(T):
        d = A[j, j]
        for q in range(j):
            d -= A[j, q] * A[j, q]
        if not (d > tol * diag[j]) or not (diag[j] > 0.0):
            return False
        ljj = np.sqrt(d)
        A[j, j] = ljj
        for i in range(j + 1, T):
            v = A[i, j]
            for q in range(j):
                v -= A[i, q] * A[j, q]
            A[i, j] = v / ljj
    # forward: L u = b
    for i in range(T):
        v = b[i]
        for q in range(i):
            v -= A[i, q] * beta[q]
        beta[i] = v / A[i, i]
    # backward: L^T beta = u
    for i in range(T - 1, -1, -1):
        v = beta[i]
        for q in range(i + 1, T):
            v -= A[q, i] * beta[q]
        beta[i] = v / A[i, i]
    return True


@njit(cache=True)
def _score_one(X, y_fit, y_true, w, sub, test_idx, code, tol, high, rest, split_err):
    n = X.shape[0]
    T = high.shape[0]
    S, nt = test_idx.shape
    Z = np.empty((n, T))
    _build_design(X, sub, high, rest, Z)
    G = np.zeros((T, T))
    g = np.zeros(T)
    for i in range(n):
        wi = w[i]
        yi = y_fit[i]
        for a in range(T):
            za = wi * Z[i, a]
            g[a] += za * yi
            for c in range(a + 1):
                G[a, c] += za * Z[i, c]
    A = np.empty((T, T))
    b = np.empty(T)
    beta = np.empty(T)
    diag = np.empty(T)
    n_singular = 0
    for s in range(S):
        for a in range(T):
            b[a] = g[a]
            for c in range(a + 1):
                A[a, c] = G[a, c]
        for r in range(nt):
            i = test_idx[s, r]
            wi = w[i]
            yi = y_fit[i]
            for a in range(T):
                za = wi * Z[i, a]
                b[a] -= za * yi
                for c in range(a + 1):
                    A[a, c] -= za * Z[i, c]
        ok = _cholesky_solve(A, b, beta, diag, tol)
        if not ok:
            n_singular += 1
            split_err[s] = np.inf
            continue
        e = 0.0
        for r in range(nt):
            i = test_idx[s, r]
            v = 0.0
            for a in range(T):
                v += Z[i, a] * beta[a]
            pred = _inverse_transform(v, code)
            e += abs(pred - y_true[i]) / y_true[i]
        split_err[s] = e / nt
    return n_singular


@njit(cache=True)
def _score_one_hat(X, y_fit, y_true, w, sub, test_idx, code, tol, high, rest, split_err):
    """Same result as :func:`_score_one` through the leave-group-out identity (for large ``2**k``).

    One weighted fit on all points gives residuals ``e`` and the hat matrix ``H = Zw G^-1 Zw'``; the
    residuals of the fit without test set ``t`` on ``t`` are ``(I - H_tt)^-1 e_t``. Per split this costs a
    ``n_test x n_test`` Cholesky instead of a ``2**k x 2**k`` one. A split is singular when a pivot of
    ``I - H_tt`` is below ``tol`` (its internal training design has lost rank); when the design on all
    points is singular, every split is.
    """
    n = X.shape[0]
    T = high.shape[0]
    S, nt = test_idx.shape
    Z = np.empty((n, T))
    sw = np.empty(n)
    G = np.zeros((T, T))
    g = np.zeros(T)
    _weighted_normal_equations(X, y_fit, w, sub, high, rest, Z, sw, G, g)
    beta = np.empty(T)
    diag = np.empty(T)
    if not _cholesky_solve(G, g, beta, diag, tol):
        for s in range(S):
            split_err[s] = np.inf
        return S
    H = np.empty((n, n))
    e = np.empty(n)
    _hat_and_residuals(Z, G, beta, y_fit, sw, H, e)
    M = np.empty((nt, nt))
    r = np.empty(nt)
    n_singular = 0
    for s in range(S):
        ok, err = _hat_split_error(H, e, test_idx[s], y_fit, y_true, sw, code, tol, M, r)
        split_err[s] = err if ok else np.inf
        n_singular += 0 if ok else 1
    return n_singular


@njit(cache=True, inline="always")
def _weighted_normal_equations(X, y_fit, w, sub, high, rest, Z, sw, G, g):
    """Fills the weighted design ``Z`` (rows times ``sw = sqrt(w)``), ``sw``, and the lower triangle of
    ``G = Z'Z`` and ``g = Z' (sw * y_fit)`` (``G`` and ``g`` zero on entry)."""
    n, T = Z.shape
    _build_design(X, sub, high, rest, Z)
    for i in range(n):
        sw[i] = np.sqrt(w[i])
        for a in range(T):
            Z[i, a] *= sw[i]
    for i in range(n):
        yi = y_fit[i] * sw[i]
        for a in range(T):
            za = Z[i, a]
            g[a] += za * yi
            for c in range(a + 1):
                G[a, c] += za * Z[i, c]


@njit(cache=True, inline="always")
def _hat_and_residuals(Z, L, beta, y_fit, sw, H, e):
    """The hat matrix ``H = V'V`` with ``V = L^-1 Z'`` (``L`` the Cholesky factor of ``Z'Z``) and the
    weighted residuals ``e = sw * y_fit - Z beta`` of the fit on all points."""
    n, T = Z.shape
    V = np.empty((T, n))
    for i in range(n):
        for a in range(T):
            v = Z[i, a]
            for q in range(a):
                v -= L[a, q] * V[q, i]
            V[a, i] = v / L[a, a]
    for i in range(n):
        for j in range(i + 1):
            v = 0.0
            for a in range(T):
                v += V[a, i] * V[a, j]
            H[i, j] = v
            H[j, i] = v
    for i in range(n):
        v = 0.0
        for a in range(T):
            v += Z[i, a] * beta[a]
        e[i] = y_fit[i] * sw[i] - v


@njit(cache=True, inline="always")
def _hat_split_error(H, e, tests, y_fit, y_true, sw, code, tol, M, r):
    """(True, the mean relative error on the test points ``tests`` of the fit without them), from the fit on all
    points; (False, inf) when ``I - H_tt`` has a pivot below ``tol`` (a singular split). ``M`` and ``r`` are
    scratch of the test set's size."""
    nt = tests.shape[0]
    for a in range(nt):
        ia = tests[a]
        for c in range(a + 1):
            M[a, c] = -H[ia, tests[c]]
        M[a, a] += 1.0
    # Cholesky of I - H_tt with an absolute pivot tolerance (its diagonal is at most 1)
    for j in range(nt):
        d = M[j, j]
        for q in range(j):
            d -= M[j, q] * M[j, q]
        if not (d > tol):
            return False, np.inf
        ljj = np.sqrt(d)
        M[j, j] = ljj
        for i in range(j + 1, nt):
            v = M[i, j]
            for q in range(j):
                v -= M[i, q] * M[j, q]
            M[i, j] = v / ljj
    for i in range(nt):
        v = e[tests[i]]
        for q in range(i):
            v -= M[i, q] * r[q]
        r[i] = v / M[i, i]
    for i in range(nt - 1, -1, -1):
        v = r[i]
        for q in range(i + 1, nt):
            v -= M[q, i] * r[q]
        r[i] = v / M[i, i]
    err = 0.0
    for a in range(nt):
        i = tests[a]
        pred = _inverse_transform(y_fit[i] - r[a] / sw[i], code)
        err += abs(pred - y_true[i]) / y_true[i]
    return True, err / nt


def use_hat_path(n, k, n_splits, n_test):
    """Whether the leave-group-out path is cheaper than per-split Cholesky downdates (shape-only rule)."""
    T = 1 << k
    downdate = n_splits * (n_test * T * (T + 1) / 2 + T * T * T / 6)
    hat = n * n * T / 2 + n * T * T / 2 + n_splits * (n_test * n_test * n_test / 6 + n_test * n_test)
    return hat < downdate


@njit(cache=True)
def _score_and_reduce(j, X, y_fit, y_true, w, subsets, test_idx, code, tol, high, rest, hmean, amean, nsing, hat):
    S = test_idx.shape[0]
    split_err = np.empty(S)
    if hat:
        ns = _score_one_hat(X, y_fit, y_true, w, subsets[j], test_idx, code, tol, high, rest, split_err)
    else:
        ns = _score_one(X, y_fit, y_true, w, subsets[j], test_idx, code, tol, high, rest, split_err)
    nsing[j] = ns
    if ns > 0:
        hmean[j] = np.inf
        amean[j] = np.inf
        return
    inv = 0.0
    tot = 0.0
    zero = False
    for s in range(S):
        e = split_err[s]
        tot += e
        if e == 0.0:
            zero = True
        else:
            inv += 1.0 / e
    amean[j] = tot / S
    if zero:
        hmean[j] = 0.0
    else:
        hmean[j] = S / inv


@njit(parallel=True, cache=True)
def score_subsets(X, y_fit, y_true, w, subsets, test_idx, code, tol, hat=False):
    """Validation scores of many feature subsets (multi-threaded over subsets).

    Parameters
    ----------
    X : (n, p) float64, standardised features.
    y_fit : (n,) float64, the transformed response the least squares fit.
    y_true : (n,) float64, the response on its original scale (> 0), for relative errors.
    w : (n,) float64, least-squares weights.
    subsets : (m, k) int64, feature indices of each subset.
    test_idx : (S, n_test) int64, internal test points of each random split.
    code : int, response transform (0 none, 1 log, 2 sqrt).
    tol : float, relative Cholesky pivot tolerance.
    hat : bool, use the leave-group-out path (:func:`_score_one_hat`; see :func:`use_hat_path`).

    Returns
    -------
    hmean : (m,) harmonic mean over splits of the per-split mean absolute relative error (inf if any
        split is singular).
    amean : (m,) arithmetic mean of the same per-split errors (inf if any split is singular).
    n_singular : (m,) int64, number of singular splits.
    """
    m, k = subsets.shape
    high, rest = _term_tables(k)
    hmean = np.empty(m)
    amean = np.empty(m)
    nsing = np.zeros(m, np.int64)
    for j in prange(m):
        _score_and_reduce(j, X, y_fit, y_true, w, subsets, test_idx, code, tol, high, rest, hmean, amean, nsing, hat)
    return hmean, amean, nsing


@njit(cache=True)
def score_subsets_serial(X, y_fit, y_true, w, subsets, test_idx, code, tol, hat=False):
    """Single-threaded twin of :func:`score_subsets` (Dask workers get their parallelism elsewhere)."""
    m, k = subsets.shape
    high, rest = _term_tables(k)
    hmean = np.empty(m)
    amean = np.empty(m)
    nsing = np.zeros(m, np.int64)
    for j in range(m):
        _score_and_reduce(j, X, y_fit, y_true, w, subsets, test_idx, code, tol, high, rest, hmean, amean, nsing, hat)
    return hmean, amean, nsing


@njit(cache=True)
def fit_subset(X, y_fit, w, sub, tol):
    """Weighted least squares of one subset's full interaction model on all rows.

    Returns ``(ok, coef)``; ``ok`` is False when the design is singular to ``tol``.
    """
    n = X.shape[0]
    k = sub.shape[0]
    high, rest = _term_tables(k)
    T = 1 << k
    Z = np.empty((n, T))
    _build_design(X, sub, high, rest, Z)
    A = np.zeros((T, T))
    b = np.zeros(T)
    for i in range(n):
        for a in range(T):
            za = w[i] * Z[i, a]
            b[a] += za * y_fit[i]
            for c in range(a + 1):
                A[a, c] += za * Z[i, c]
    beta = np.zeros(T)
    diag = np.empty(T)
    ok = _cholesky_solve(A, b, beta, diag, tol)
    return ok, beta


@njit(cache=True)
def design_matrix(X, sub):
    """The ``(n, 2**k)`` interaction design of subset ``sub`` (columns in term order)."""
    k = sub.shape[0]
    high, rest = _term_tables(k)
    Z = np.empty((X.shape[0], 1 << k))
    _build_design(X, sub, high, rest, Z)
    return Z
