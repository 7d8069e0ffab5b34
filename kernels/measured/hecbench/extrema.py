"""HeCBench ``extrema`` (cuSignal's ``argrelextrema``): the kernels ``relextrema_1D`` and ``relextrema_2D``, as
gpuFLOPBench timed them on an RTX 3080.

Relative maxima: element ``i`` is one when it is greater than each of its ``order`` following neighbours and
not less than each of its ``order`` preceding ones (``temp &= data > inp[plus]; temp &= data >=
inp[minus]``), neighbour indices clipped to the ends (``clip``) or wrapped around. The result is one bool
per element.

``relextrema_1D``: a grid-stride loop over ``n`` elements with ``ceil(n / 256)`` blocks of 256 (one element
per thread). ``relextrema_2D``: a ``(ceil(in_x / 16), ceil(in_y / 16))`` grid of 16 x 16 blocks; thread
``ty = blockIdx.x * 16 + threadIdx.x`` is the column, ``tx = blockIdx.y * 16 + threadIdx.y`` the row of a
row-major ``in_y x in_x`` matrix, and ``axis`` says along which dimension the neighbours are taken (1: along
the row). The program sweeps order 1 ... 128 and the types int, long, float, double; the data's rows are
the first launches: ``relextrema_1D<int>`` with n = 10^6, order 1, clip; ``relextrema_2D<int>`` with
1000 x 1000, order 1, clip, axis 1 (63 x 63 blocks, 1,016,064 threads).

Inputs: ``x[i] = rand() % length`` (glibc ``rand``, never seeded: seed 1; here ``srand(1 + seed)``, so seed
0 gives the original's values). The 1D launch reads the first ``n`` values; the first 2D test comes after
the 32 one-dimensional tests (8 orders x 4 types), each of which drew ``n`` values, so its matrix is the
stream's values ``32 n`` ... ``32 n + in_x in_y - 1``. Results: the original's ``bool`` array, here NumPy
bool. The region's 2-D grid is flattened into one ``prange`` over grid x block threads (block-major, then
``threadIdx.y``, then ``threadIdx.x``).

Measured sizes: 4.2e7 (1D) and 6.2e7 (2D) records: ``feature_point`` n = 2^16 and 256 x 256.

Precision: integer only (the int instantiation).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

TPB = 256
TILE = 16
SWEEP_1D = 32  # one-dimensional tests before the first 2D test: 8 orders x 4 types

POINT = {"n": 1_000_000, "in_x": 1000, "in_y": 1000, "order": 1, "clip": True, "axis": 1, "repeat": 100}
POINTS = {"100": POINT}
FEATURE_POINT = {**POINT, "n": 1 << 16, "in_x": 256, "in_y": 256}
TEST_POINT = {**POINT, "n": 1000, "in_x": 40, "in_y": 24, "order": 2, "repeat": 1}


@numba.njit
def _clip_plus(clip, n, plus):
    if clip:
        if plus >= n:
            plus = n - 1
    else:
        if plus >= n:
            plus -= n
    return plus


@numba.njit
def _clip_minus(clip, n, minus):
    if clip:
        if minus < 0:
            minus = 0
    else:
        if minus < 0:
            minus += n
    return minus


def relextrema_1d(n, order, clip, inp, results, n_threads):
    """Relative maxima of ``inp[:n]`` into ``results`` (bool), one work item per launched thread.

    Returns
    -------
    ``results``.
    """
    for gid in numba.prange(n_threads):
        tid = gid
        while tid < n:
            data = inp[tid]
            temp = True
            for o in range(1, order + 1):
                plus = _clip_plus(clip, n, tid + o)
                minus = _clip_minus(clip, n, tid - o)
                temp &= data > inp[plus]
                temp &= data >= inp[minus]
            results[tid] = temp
            tid += n_threads
    return results


def relextrema_2d(in_x, in_y, order, clip, axis, inp, results, grid_x, n_threads):
    """Relative maxima along ``axis`` of the row-major ``in_y x in_x`` matrix ``inp`` into ``results``.

    Parameters
    ----------
    grid_x : blocks along x (``ceil(in_x / 16)``). n_threads : grid x block threads (16 x 16 blocks).

    Returns
    -------
    ``results``.
    """
    for gid in numba.prange(n_threads):
        b = gid // (TILE * TILE)
        loc = gid - b * (TILE * TILE)
        by = b // grid_x
        bx = b - by * grid_x
        ty = bx * TILE + loc % TILE
        tx = by * TILE + loc // TILE
        if tx < in_y and ty < in_x:
            tid = tx * in_x + ty
            data = inp[tid]
            temp = True
            for o in range(1, order + 1):
                if axis == 0:
                    plus = _clip_plus(clip, in_y, tx + o) * in_x + ty
                    minus = _clip_minus(clip, in_y, tx - o) * in_x + ty
                else:
                    plus = tx * in_x + _clip_plus(clip, in_x, ty + o)
                    minus = tx * in_x + _clip_minus(clip, in_x, ty - o)
                temp &= data > inp[plus]
                temp &= data >= inp[minus]
            results[tid] = temp
    return results


@cuda.jit(device=True)
def _d_clip_plus(clip, n, plus):
    if clip:
        if plus >= n:
            plus = n - 1
    else:
        if plus >= n:
            plus -= n
    return plus


@cuda.jit(device=True)
def _d_clip_minus(clip, n, minus):
    if clip:
        if minus < 0:
            minus = 0
    else:
        if minus < 0:
            minus += n
    return minus


@cuda.jit
def _relextrema_1d_gpu(n, order, clip, inp, results):
    tid = cuda.grid(1)
    stride = cuda.gridsize(1)
    while tid < n:
        data = inp[tid]
        temp = True
        for o in range(1, order + 1):
            plus = _d_clip_plus(clip, n, tid + o)
            minus = _d_clip_minus(clip, n, tid - o)
            temp &= data > inp[plus]
            temp &= data >= inp[minus]
        results[tid] = temp
        tid += stride


@cuda.jit
def _relextrema_2d_gpu(in_x, in_y, order, clip, axis, inp, results):
    ty = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    tx = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if tx < in_y and ty < in_x:
        tid = tx * in_x + ty
        data = inp[tid]
        temp = True
        for o in range(1, order + 1):
            if axis == 0:
                plus = _d_clip_plus(clip, in_y, tx + o) * in_x + ty
                minus = _d_clip_minus(clip, in_y, tx - o) * in_x + ty
            else:
                plus = tx * in_x + _d_clip_plus(clip, in_x, ty + o)
                minus = tx * in_x + _d_clip_minus(clip, in_x, ty - o)
            temp &= data > inp[plus]
            temp &= data >= inp[minus]
        results[tid] = temp


def _to_device_1d(n, order, clip, inp, results, n_threads):
    return {"inp": cuda.to_device(inp), "res": cuda.to_device(results), "args": (int(n), int(order), bool(clip)),
            "threads": int(n_threads)}


def _launch_1d(s):
    _relextrema_1d_gpu[s["threads"] // TPB, TPB](*s["args"], s["inp"], s["res"])


def _to_device_2d(in_x, in_y, order, clip, axis, inp, results, grid_x, n_threads):
    grid_y = n_threads // (TILE * TILE) // grid_x
    return {"inp": cuda.to_device(inp), "res": cuda.to_device(results),
            "args": (int(in_x), int(in_y), int(order), bool(clip), int(axis)), "grid": (int(grid_x), grid_y)}


def _launch_2d(s):
    _relextrema_2d_gpu[s["grid"], (TILE, TILE)](*s["args"], s["inp"], s["res"])


def _from_device(s):
    return s["res"].copy_to_host()


def work_1d(params):
    n = int(params["n"])
    return (n + TPB - 1) // TPB * TPB, TPB


def work_2d(params):
    gx = (int(params["in_x"]) + TILE - 1) // TILE
    gy = (int(params["in_y"]) + TILE - 1) // TILE
    return gx * gy * TILE * TILE, TILE * TILE


def make_inputs_1d(params, seed):
    """``(n, order, clip, inp, results, n_threads)``: ``inp[i] = rand() % n`` (int32)."""
    n = int(params["n"])
    inp = (glibc_rand(1 + seed, n) % n).astype(np.int32)
    return n, int(params["order"]), bool(params["clip"]), inp, np.zeros(n, dtype=np.bool_), work_1d(params)[0]


def make_inputs_2d(params, seed):
    """``(in_x, in_y, order, clip, axis, inp, results, grid_x, n_threads)``: ``rand() % length`` after the
    one-dimensional tests' ``32 n`` draws."""
    n, in_x, in_y = int(params["n"]), int(params["in_x"]), int(params["in_y"])
    length = in_x * in_y
    inp = (glibc_rand(1 + seed, SWEEP_1D * n + length)[SWEEP_1D * n:] % length).astype(np.int32)
    return (in_x, in_y, int(params["order"]), bool(params["clip"]), int(params["axis"]), inp,
            np.zeros(length, dtype=np.bool_), (in_x + TILE - 1) // TILE, work_2d(params)[0])


def _kernel(name, cpu, to_device, launch, make_inputs, work, what):
    return MeasuredKernel(
        source="hecbench",
        application="extrema",
        kernel=name,
        description=f"HeCBench extrema: relative maxima (order 1, clipped) {what}, one thread per element",
        cpu=cpu,
        gpu=GpuPort(to_device, launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    )


KERNELS = [
    _kernel("relextrema_1D", relextrema_1d, _to_device_1d, _launch_1d, make_inputs_1d, work_1d,
            "of 10^6 ints"),
    _kernel("relextrema_2D", relextrema_2d, _to_device_2d, _launch_2d, make_inputs_2d, work_2d,
            "along the rows of a 1000 x 1000 int matrix"),
]
