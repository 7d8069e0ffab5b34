"""Kernels for the compact compiled-mode buffer tests: calls inside the parallel loop, helpers with loops,
empty and zero-trip parallel loops (thread changes with no record in between), a parallel while loop."""

import numba
import numpy as np


def inner(v, k):
    s = 0.0
    for t in range(k):
        s += v[t] * 0.5
    return s


def calls_in_parallel_loop(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = inner(x, i % 4) + x[i]
    return out[0]


def empty_parallel_loops(n, x):
    for i in range(n):
        pass
    for i in range(0):
        x[0] = 1.0
    for i in range(n):
        pass
    return n


def parallel_while(x):
    i = 0
    acc = 0.0
    while i < x.shape[0]:
        acc += x[i]
        i += 1
    return acc


def mixed_types(x, m):
    s = 0
    f = 0.0
    for i in range(m.shape[0]):
        s += m[i] * 3
        f += x[i] * 3
        if m[i] % 2 == 0:
            s -= 1
    return s + f


def kernel_inputs():
    x = np.linspace(-1.0, 2.0, 13)
    return {
        "calls_in_parallel_loop": (x.copy(), np.zeros(13)),
        "empty_parallel_loops": (5, np.zeros(2)),
        "parallel_while": (x.copy(),),
        "mixed_types": (x.copy(), np.arange(13, dtype=np.int32)),
    }


def two_index_forms(a, c, d, ii):
    s = 0.0
    for k in range(2):
        s += a[ii[k], 1]  # NumPy integer index: slow path, true address
        v = c[k, 1]  # two indices into a 3-D array: a view (OTHER)
        s += a[-1, -2]  # negative indices wrapped
    return s + d[1, 2] + v[0]
