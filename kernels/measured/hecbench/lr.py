"""Least-squares line fit, HeCBench ``lr``: kernels ``linear_regression`` (the sums of x, y, xy, x^2) and
``rsquared`` (the sums of squared deviations for the coefficient of determination).

* ``linear_regression``: each thread puts ``(x, y, x y, x^2)`` of its point into the block's shared
  ``float4`` array; the block halves it in ``log2`` steps (``i = size / 2, old_i = size``; threads below ``i``
  add element ``l + i``, and when ``old_i`` is odd thread ``i - 1`` also adds the left-over element ``old_i -
  1``; a barrier after each step) and thread 0 writes the block's sums.
* ``rsquared``: each thread puts ``((y - mean)^2, (a1 x + a0 - mean)^2)`` (``powf(., 2)``) into a shared
  ``float2`` array, reduced the same way.

Launch: blocks of 63 threads, ``96453 / 63 = 1531`` blocks, one thread per point, no guard. Measured point
``100000 0`` (repeat, CPU offset 0: everything on the GPU). The timed launches are the first of each:
``linear_regression`` on the data, then ``rsquared`` with ``mean = sum y / n`` and the line ``a0, a1`` the
host solved from the first kernel's block sums (float sums over the blocks, as the host; the normal
equations' denominator in float, stored in a double).

Inputs: the program reads ``assets/temperature.txt`` (96453 tab-separated x, y pairs, distributed with
another version of the benchmark and not in the source tree). It is synthesized here: x uniform in [0, 40),
y = 0.7 x + 3 plus uniform noise in [-5, 5) (NumPy ``default_rng(seed)``), as float. Neither kernel has a
data-dependent branch, so only the sums, not the work, depend on these values.

Layout: the ``float2`` points are an ``(n, 2)`` float32 array, the ``float4``/``float2`` block results
``(blocks, 4)`` and ``(blocks, 2)``; the shared arrays hold one tile per block. The barriers split the
kernels into a parallel loop per reduction step. Precision: single, as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

WG = 63
SIZE = 96453
TWO = np.float32(2.0)

POINTS = {"100000 0": {"repeat": 100000, "cpu_offset": 0, "size": SIZE}}
#: 5 blocks of 63
TEST_POINT = {"repeat": 1, "cpu_offset": 0, "size": 5 * WG}


def linear_regression(dataset, result, wg, n_threads):
    """Every block's ``(sum x, sum y, sum xy, sum x^2)``."""
    n_blocks = n_threads // wg
    interns = np.zeros((n_blocks, wg, 4), dtype=np.float32)
    for gid in numba.prange(n_threads):
        b = gid // wg
        loc = gid % wg
        x = dataset[gid, 0]
        y = dataset[gid, 1]
        interns[b, loc, 0] = x
        interns[b, loc, 1] = y
        interns[b, loc, 2] = x * y
        interns[b, loc, 3] = x * x
    i = wg // 2
    old_i = wg
    while i > 0:
        for gid in numba.prange(n_threads):
            b = gid // wg
            loc = gid % wg
            if loc < i:
                interns[b, loc, 0] += interns[b, loc + i, 0]
                interns[b, loc, 1] += interns[b, loc + i, 1]
                interns[b, loc, 2] += interns[b, loc + i, 2]
                interns[b, loc, 3] += interns[b, loc + i, 3]
                if loc == i - 1 and old_i % 2 != 0:
                    interns[b, loc, 0] += interns[b, old_i - 1, 0]
                    interns[b, loc, 1] += interns[b, old_i - 1, 1]
                    interns[b, loc, 2] += interns[b, old_i - 1, 2]
                    interns[b, loc, 3] += interns[b, old_i - 1, 3]
        old_i = i
        i //= 2
    for gid in numba.prange(n_threads):
        if gid % wg == 0:
            b = gid // wg
            result[b, 0] = interns[b, 0, 0]
            result[b, 1] = interns[b, 0, 1]
            result[b, 2] = interns[b, 0, 2]
            result[b, 3] = interns[b, 0, 3]
    return result


def rsquared(dataset, mean, a0, a1, result, wg, n_threads):
    """Every block's ``(sum (y - mean)^2, sum (a1 x + a0 - mean)^2)``."""
    n_blocks = n_threads // wg
    dist = np.zeros((n_blocks, wg, 2), dtype=np.float32)
    for gid in numba.prange(n_threads):
        b = gid // wg
        loc = gid % wg
        dist[b, loc, 0] = (dataset[gid, 1] - mean) ** TWO
        y_estimated = dataset[gid, 0] * a1 + a0
        dist[b, loc, 1] = (y_estimated - mean) ** TWO
    i = wg // 2
    old_i = wg
    while i > 0:
        for gid in numba.prange(n_threads):
            b = gid // wg
            loc = gid % wg
            if loc < i:
                dist[b, loc, 0] += dist[b, loc + i, 0]
                dist[b, loc, 1] += dist[b, loc + i, 1]
                if loc == i - 1 and old_i % 2 != 0:
                    dist[b, loc, 0] += dist[b, old_i - 1, 0]
                    dist[b, loc, 1] += dist[b, old_i - 1, 1]
        old_i = i
        i //= 2
    for gid in numba.prange(n_threads):
        if gid % wg == 0:
            b = gid // wg
            result[b, 0] = dist[b, 0, 0]
            result[b, 1] = dist[b, 0, 1]
    return result


@cuda.jit
def _linreg_gpu(dataset, result):
    interns = cuda.shared.array((WG, 4), dtype=numba.float32)
    loc = cuda.threadIdx.x
    size = cuda.blockDim.x
    gid = cuda.blockIdx.x * size + loc
    x = dataset[gid, 0]
    y = dataset[gid, 1]
    interns[loc, 0] = x
    interns[loc, 1] = y
    interns[loc, 2] = x * y
    interns[loc, 3] = x * x
    cuda.syncthreads()
    i = size // 2
    old_i = size
    while i > 0:
        if loc < i:
            for k in range(4):
                interns[loc, k] += interns[loc + i, k]
            if loc == i - 1 and old_i % 2 != 0:
                for k in range(4):
                    interns[loc, k] += interns[old_i - 1, k]
        cuda.syncthreads()
        old_i = i
        i //= 2
    if loc == 0:
        for k in range(4):
            result[cuda.blockIdx.x, k] = interns[0, k]


@cuda.jit
def _rsquared_gpu(dataset, mean, a0, a1, result):
    dist = cuda.shared.array((WG, 2), dtype=numba.float32)
    loc = cuda.threadIdx.x
    size = cuda.blockDim.x
    gid = cuda.blockIdx.x * size + loc
    d = dataset[gid, 1] - mean
    dist[loc, 0] = d * d
    e = dataset[gid, 0] * a1 + a0 - mean
    dist[loc, 1] = e * e
    cuda.syncthreads()
    i = size // 2
    old_i = size
    while i > 0:
        if loc < i:
            for k in range(2):
                dist[loc, k] += dist[loc + i, k]
            if loc == i - 1 and old_i % 2 != 0:
                for k in range(2):
                    dist[loc, k] += dist[old_i - 1, k]
        cuda.syncthreads()
        old_i = i
        i //= 2
    if loc == 0:
        for k in range(2):
            result[cuda.blockIdx.x, k] = dist[0, k]


def _to_device_lr(dataset, result, wg, n_threads):
    return {"data": cuda.to_device(dataset), "res": cuda.to_device(result), "blocks": int(n_threads) // int(wg)}


def _launch_lr(s):
    _linreg_gpu[s["blocks"], WG](s["data"], s["res"])


def _to_device_rs(dataset, mean, a0, a1, result, wg, n_threads):
    return {"data": cuda.to_device(dataset), "args": (np.float32(mean), np.float32(a0), np.float32(a1)),
            "res": cuda.to_device(result), "blocks": int(n_threads) // int(wg)}


def _launch_rs(s):
    _rsquared_gpu[s["blocks"], WG](s["data"], *s["args"], s["res"])


def _from_device(s):
    return s["res"].copy_to_host()


def dataset(size, seed):
    """The synthesized (x, y) table (float32, ``(size, 2)``)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 40.0, size)
    y = 0.7 * x + 3.0 + rng.uniform(-5.0, 5.0, size)
    return np.stack([x, y], axis=1).astype(np.float32)


def block_tree_sums(values, wg):
    """The kernels' block reduction in NumPy (the same float additions in the same order per block)."""
    nb = values.shape[0] // wg
    t = values.reshape(nb, wg, -1).copy()
    i, old_i = wg // 2, wg
    while i > 0:
        t[:, :i] += t[:, i:2 * i]
        if old_i % 2 != 0:
            t[:, i - 1] += t[:, old_i - 1]
        old_i, i = i, i // 2
    return t[:, 0]


def line(data, wg):
    """The host's ``mean`` and line ``a0, a1`` from the ``linear_regression`` block sums."""
    x, y = data[:, 0], data[:, 1]
    sums = block_tree_sums(np.stack([x, y, x * y, x * x], axis=1), wg)
    f = np.zeros(4, dtype=np.float32)
    for row in sums:  # the host's float sums over the blocks
        f += row
    size = np.float32(data.shape[0])
    denom = float(size * f[3] - f[0] * f[0])
    a0 = np.float32(float(f[1] * f[3] - f[0] * f[2]) / denom)
    a1 = np.float32(float(size * f[2] - f[0] * f[1]) / denom)
    return np.float32(f[1] / size), a0, a1


def make_inputs_lr(params, seed):
    data = dataset(int(params["size"]), seed)
    return data, np.zeros((data.shape[0] // WG, 4), np.float32), WG, work(params)[0]


def make_inputs_rs(params, seed):
    data = dataset(int(params["size"]), seed)
    mean, a0, a1 = line(data, WG)
    return data, mean, a0, a1, np.zeros((data.shape[0] // WG, 2), np.float32), WG, work(params)[0]


def work(params):
    return int(params["size"]) // WG * WG, WG


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="lr",
        kernel="linear_regression",
        description="HeCBench lr: per-block sums of x, y, xy, x^2 by a shared-memory tree of 63 threads",
        cpu=linear_regression,
        gpu=GpuPort(_to_device_lr, _launch_lr, _from_device),
        make_inputs=make_inputs_lr,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-6,
        atol=1e-3,
    ),
    MeasuredKernel(
        source="hecbench",
        application="lr",
        kernel="rsquared",
        description="HeCBench lr: per-block sums of squared deviations for R^2 by a shared-memory tree of 63 "
        "threads",
        cpu=rsquared,
        gpu=GpuPort(_to_device_rs, _launch_rs, _from_device),
        make_inputs=make_inputs_rs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-6,
        atol=1e-3,
    ),
]
