"""Small kernels traced by the profiler tests (the tracer needs their source in a file)."""

import math

import numba
import numpy as np

import portcast


def saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def stencil(a, b):
    for i in numba.prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            b[i, j] = a[i - 1, j] + a[i, j + 1]


def branchy(x, out):
    n = 0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            out[i] = 1
        elif x[i] < -1.0:
            out[i] = 2
        else:
            n += 1
    return n


def chase(nxt, start, steps):
    k = start
    for s in range(steps):
        k = nxt[k]
    return k


def reduce_sum(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
    return total


@numba.njit
def sq(v):
    return v * v


def call_helper(x, out):
    for i in range(x.shape[0]):
        out[i] = sq(x[i])


def shortcircuit(a, b, c):
    r = a < b < c
    s = a or b
    t = a if b else c
    return r, s, t


def special(x):
    return math.sqrt(x) + np.exp(x) + abs(-x)


def loops(n):
    total = 0
    k = 0
    while k < n:
        k += 1
        if k == 2:
            continue
        total += k
    for i in range(n):
        if i == 1:
            break
    else:
        total = -1
    return total


def strided(v, out):
    for i in range(v.shape[0]):
        out[i] = v[i, -1]


def with_lists(xs, d):
    acc = 0
    for i in range(len(xs)):
        acc += xs[i] + d["k"]
    return acc


def raises_midway(x):
    for i in range(x.shape[0]):
        x[i] = 10 // (2 - i)


def uses_generator(x):
    def gen():
        yield 1
    return sum(gen())


def uses_exec(x):
    exec("y = 1")
    return x


@portcast.region("decorated")
def decorated(x):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0
    return x
