"""Small kernels with NumPy calls inside the region, traced by the library-call tests (the tracer needs their
source in a file)."""

import math

import numba
import numpy as np


def l2(x):
    return np.sqrt(np.sum(x * x))


def l2_loops(x):
    """``l2`` written as the explicit loops its expansion stands for."""
    t = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        t[i] = x[i] * x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += t[i]
    return math.sqrt(s)


def mul(a, b):
    return a * b


def axpb(a, b, c):
    return a * b + c


def neg(a):
    return -a


def less(a, b):
    return a < b


def inplace_add(a, b):
    a += b
    return a


def rebind(a):
    a = a * 2.0
    return a


def ufuncs(x, y):
    u = np.sqrt(x)
    v = np.maximum(x, y)
    w = np.where(x > y, x, y)
    return u, v, w


def absval(x):
    return abs(x)


def reductions(x):
    return np.sum(x), np.prod(x), np.min(x), np.max(x), np.mean(x), np.argmin(x), np.argmax(x)


def methods(x):
    return x.sum(), x.max(), x.argmax(), x.mean()


def dot(a, b):
    return np.dot(a, b)


def matmul_op(a, b):
    return a @ b


def vdot(a, b):
    return np.vdot(a, b)


def gather(x, idx):
    return x[idx]


def masked(x, m):
    return x[m]


def crc_bytes(data, table):
    crc = 0xFFFFFFFF
    for v in data:
        crc = table[(crc ^ np.int64(v)) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def iterate(x):
    s = 0.0
    for v in x:
        s += v
    return s


def iterate_enum(x, out):
    for i, v in enumerate(x):
        out[i] = v + 1.0


def iterate_rows(a):
    s = 0.0
    for row in a:
        s += row[0]
    return s


def row_sums_in_loop(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = np.sum(a[i] * 2.0)


def broadcast_in_loop(a, b, out):
    for i in numba.prange(a.shape[0]):
        out[i] = np.sum(a[i] * b)


def slice_store(a, b):
    a[1:-1] = b[:-2] + b[2:]
    a[0] = 0.0


def fill_slice(a):
    a[:] = 0.0


def copies(a):
    b = a.copy()
    c = np.copy(a)
    d = np.ascontiguousarray(a)
    return b, c, d


def constructors(n):
    z = np.zeros(n)
    o = np.ones((2, n), dtype=np.int32)
    f = np.full(n, 7.0)
    e = np.empty(n)
    r = np.arange(n)
    return z, o, f, e, r


def likes(a):
    return np.zeros_like(a), np.full_like(a, 3.0)


def axis_sum(a):
    return np.sum(a, axis=0), a.sum(1)


def scans(x):
    return np.cumsum(x)


def scan_axis(a):
    return np.cumsum(a, axis=1)


def linalg(a):
    w, v = np.linalg.eigh(a)
    c = np.linalg.cholesky(a)
    s = np.linalg.solve(a, v[:, 0])
    return w, c, s


def covariance(x):
    return np.cov(x)


def sorting(x):
    return np.sort(x)


def transform(x):
    return np.fft.fft(x)


def axis_mean(a):
    return np.mean(a, axis=-1)


def more_constructors(n, a):
    return np.linspace(0.0, 1.0, n), np.array(a), np.ones_like(a)


def fill_method(a, v):
    a.fill(v)


def augmented_slice(a, b):
    a[1:] += b


def eig_loop(a, k):
    t = 0.0
    for i in range(k):
        w, v = np.linalg.eigh(a)
        t += w[0]
    return t


def estimates(x, a):
    s = np.sort(x)
    u = np.unique(x)
    d = np.diff(x)
    o = np.outer(x, x)
    c = np.corrcoef(a)
    x.sort()
    return s, u, d, o, c


def svd_values(a):
    return np.linalg.svd(a, compute_uv=False)


def cov_columns(a):
    return np.cov(a, rowvar=False)


def stacked(a, b):
    return a @ b


def no_array_work(n):
    return np.isclose(1.0, 2.0) + n


def sum_axis(a, ax):
    return np.sum(a, axis=ax)
