"""Romberg integration, HeCBench ``romberg``: the kernel ``romberg``.

The integral of ``f(x) = exp(x) sin(x)`` over ``[A, B] = [0, 15]`` (double precision), split into ``nwg``
equal sub-intervals, one block each. Block ``b`` integrates ``[a, a + h]`` with ``max_eval = 2^(ROW_SIZE-1)``
panels (``ROW_SIZE = 17``): the composite trapezoid sums of the Romberg table's first column are built from
the ``max_eval + 1`` samples at once, sample ``k`` (``0 < k < max_eval``) belonging to level
``ROW_SIZE - p(k)`` where ``p(k)`` is the 1-based position of the lowest set bit of ``k`` (the original
computes it as ``log2((float)(k & -k)) + 1``). Steps:

1. every thread zeroes its private column (``ROW_SIZE`` doubles), takes samples ``k = tid, tid + blockDim,
   ...`` (thread 0 instead starts at ``blockDim`` and holds ``f(a) + f(b)`` in level 0) adding ``2 f(a + k
   step)`` to its level, and writes its column to shared memory (``ROW_SIZE * blockDim`` doubles);
   barrier;
2. threads ``tid < ROW_SIZE`` sum level ``tid`` over the block's columns into ``smem[tid]``;
3. thread 0 forms the prefix sums (the trapezoid sums of 1, 2, 4, ... panels), scales level ``k`` by
   ``h / 2^(k+1)``, runs the Richardson extrapolation ``T[r] += (T[r] - T[r-1]) / (2^(2c+1) - 1)`` and writes
   the block's estimate to ``result[b]``. (The divisors ``2^(2c+1) - 1`` are the original's, not Romberg's
   ``4^(c+1) - 1``; with 17 levels the sum still agrees with the integral to about 1e-10.)

Launch: ``nwg`` blocks of ``wgs`` threads, dynamic shared memory ``ROW_SIZE * wgs`` doubles. Measured point
``128 64 1000`` (``nwg``, ``wgs``, repeat): 8192 threads, each evaluating ``f`` 1024 times.

Deliberate differences: the private column (the original's ``local_col``, a per-thread array indexed at run
time, i.e. local memory) is a ``(threads, ROW_SIZE)`` array argument of the region; the steps are prange
phases (step 3 follows step 2 without a barrier in the original: thread 0 reads the sums of threads 1..16,
which sit in its own warp); ``ROW_SIZE`` is a parameter (the program's constant 17 at the measured and feature
points, smaller at the test point so that the CUDA simulator finishes quickly). The GPU port uses a static
shared array of ``17 * 64`` doubles (enough for the measured block of 64 threads). No random input.

Precision: double (float64), as the original; the bit position through a float32 ``log2``, as the original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

A = 0.0
B = 15.0
ROW_SIZE = 17
MAX_WGS = 64  # the GPU port's static shared memory holds ROW_SIZE * MAX_WGS doubles

POINTS = {"128 64 1000": {"nwg": 128, "wgs": 64, "row_size": ROW_SIZE}}
TEST_POINT = {"nwg": 4, "wgs": 64, "row_size": 11}
#: 4 blocks instead of 128 (about 5e6 records; every thread's loop as at the measured point)
FEATURE_POINT = {"nwg": 4, "wgs": 64, "row_size": ROW_SIZE}


def romberg(a0, b0, result, smem, local_col, nwg, wgs, row_size):
    """Every block's Romberg estimate of its sub-interval into ``result``; ``smem`` is ``(nwg, row_size *
    wgs)`` (one shared-memory tile per block), ``local_col`` ``(nwg * wgs, row_size)``."""
    n_threads = nwg * wgs
    max_eval = 1 << (row_size - 1)
    for gid in numba.prange(n_threads):
        blk = gid // wgs
        tid = gid % wgs
        diff = (b0 - a0) / nwg
        b = a0 + (blk + 1) * diff
        a = a0 + blk * diff
        step = (b - a) / max_eval
        for i in range(row_size):
            local_col[gid, i] = 0.0
        if tid == 0:
            k = wgs
            local_col[gid, 0] = np.exp(a) * np.sin(a) + np.exp(b) * np.sin(b)
        else:
            k = tid
        while k < max_eval:
            pos = int(np.log2(np.float32(k & -k))) + 1
            x = a + step * k
            local_col[gid, row_size - pos] += 2.0 * (np.exp(x) * np.sin(x))
            k += wgs
        for i in range(row_size):
            smem[blk, row_size * tid + i] = local_col[gid, i]
    for gid in numba.prange(n_threads):
        blk = gid // wgs
        tid = gid % wgs
        if tid < row_size:
            s = 0.0
            for i in range(tid, wgs * row_size, row_size):
                s += smem[blk, i]
            smem[blk, tid] = s
    for gid in numba.prange(n_threads):
        blk = gid // wgs
        tid = gid % wgs
        if tid == 0:
            diff = (b0 - a0) / nwg
            b = a0 + (blk + 1) * diff
            a = a0 + blk * diff
            local_col[gid, 0] = smem[blk, 0]
            for k in range(1, row_size):
                local_col[gid, k] = local_col[gid, k - 1] + smem[blk, k]
            for k in range(row_size):
                local_col[gid, k] *= (b - a) / (1 << (k + 1))
            for col in range(row_size - 1):
                for row in range(row_size - 1, col, -1):
                    local_col[gid, row] = (local_col[gid, row]
                                           + (local_col[gid, row] - local_col[gid, row - 1])
                                           / ((1 << (2 * col + 1)) - 1))
            result[blk] = local_col[gid, row_size - 1]
    return result


@cuda.jit
def _romberg_gpu(a0, b0, result, row_size):
    smem = cuda.shared.array(ROW_SIZE * MAX_WGS, numba.float64)
    col = cuda.local.array(ROW_SIZE, numba.float64)
    nwg = cuda.gridDim.x
    wgs = cuda.blockDim.x
    tid = cuda.threadIdx.x
    blk = cuda.blockIdx.x
    max_eval = 1 << (row_size - 1)
    diff = (b0 - a0) / nwg
    b = a0 + (blk + 1) * diff
    a = a0 + blk * diff
    step = (b - a) / max_eval
    for i in range(row_size):
        col[i] = 0.0
    if tid == 0:
        k = wgs
        col[0] = math.exp(a) * math.sin(a) + math.exp(b) * math.sin(b)
    else:
        k = tid
    while k < max_eval:
        pos = int(math.log2(numba.float32(k & -k))) + 1
        x = a + step * k
        col[row_size - pos] += 2.0 * (math.exp(x) * math.sin(x))
        k += wgs
    for i in range(row_size):
        smem[row_size * tid + i] = col[i]
    cuda.syncthreads()
    if tid < row_size:
        s = 0.0
        for i in range(tid, wgs * row_size, row_size):
            s += smem[i]
        smem[tid] = s
    cuda.syncthreads()
    if tid == 0:
        col[0] = smem[0]
        for k in range(1, row_size):
            col[k] = col[k - 1] + smem[k]
        for k in range(row_size):
            col[k] *= (b - a) / (1 << (k + 1))
        for c in range(row_size - 1):
            for row in range(row_size - 1, c, -1):
                col[row] = col[row] + (col[row] - col[row - 1]) / ((1 << (2 * c + 1)) - 1)
        result[blk] = col[row_size - 1]


def _to_device(a0, b0, result, smem, local_col, nwg, wgs, row_size):
    if wgs > MAX_WGS or row_size > ROW_SIZE:
        raise ValueError(f"romberg GPU port: at most {MAX_WGS} threads per block and {ROW_SIZE} rows")
    return {"a": float(a0), "b": float(b0), "result": cuda.to_device(result), "nwg": int(nwg), "wgs": int(wgs),
            "row_size": int(row_size)}


def _launch(s):
    _romberg_gpu[s["nwg"], s["wgs"]](s["a"], s["b"], s["result"], s["row_size"])


def _from_device(s):
    return s["result"].copy_to_host()


def make_inputs(params, seed):
    """``(A, B, result, smem, local_col, nwg, wgs, row_size)``; deterministic (no random input; ``seed`` is
    unused)."""
    nwg, wgs, rows = int(params["nwg"]), int(params["wgs"]), int(params["row_size"])
    return (A, B, np.zeros(nwg), np.zeros((nwg, rows * wgs)), np.zeros((nwg * wgs, rows)), nwg, wgs, rows)


def work(params):
    return int(params["nwg"]) * int(params["wgs"]), int(params["wgs"])


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="romberg",
        kernel="romberg",
        description="HeCBench romberg: Romberg integration of exp(x) sin(x), one sub-interval per block, "
        "2^16 panels each, shared-memory reduction of the trapezoid levels",
        cpu=romberg,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-11,
        atol=1e-11,
    ),
]
