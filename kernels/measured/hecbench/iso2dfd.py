"""HeCBench ``iso2dfd``: the kernel ``iso_2dfd_kernel``, one time step of the 2-D isotropic acoustic wave
equation (second-order finite differences; Intel's oneAPI sample), as timed on an RTX 3080.

The wavefield is ``nRows x nCols`` floats (row-major). One thread per cell ``(gidRow, gidCol)``: inside the
one-cell border (``HALF_LENGTH = 1``) it forms the five-point Laplacian of ``prev``, scales it by ``dtDIVdxy
* vel`` (``dtDIVdxy = DT^2 / DXY^2``, DT = 0.002, DXY = 20, in float) and writes ``next = 2 prev - next +
value`` (the leapfrog step, in place over the older field); border and out-of-range threads do nothing.

Launch: blocks of ``16 x 16``, grid ``ceil(nCols / 16) x ceil(nRows / 16)`` (``2048 2048 1000``: 128 x 128
blocks, 4.2 M threads). The timed launch is the first of the time loop (``next = d_next``, ``prev =
d_prev``) on the program's ``initialize``: ``prev`` and ``next`` zero, ``vel = 2250000`` everywhere, and the
source wavelet in ``prev``: nested squares around the centre, ``prev[i, k] = wavelet[s]`` for ``i, k`` in
``[n / 2 - s, n / 2 + s)`` for ``s = 11`` down to ``1`` (no random numbers: ``seed`` is unused).

CPU region: one ``prange`` over all threads (``gid`` -> block, then ``threadIdx.x/y`` as CUDA numbers them).
The block edge is a parameter (the original fixes 16) so that the test point may be small. Precision:
float32, as the original (``2.f`` constants). Measured size: 2.7e8 records; ``feature_point``: 256 x 256.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 16
DT = np.float32(0.002)
DXY = np.float32(20.0)
WAVELET = np.array([0.016387336, -0.041464937, -0.067372555, 0.386110067, 0.812723635, 0.416998396, 0.076488599,
                    -0.059434419, 0.023680172, 0.005611435, 0.001823209, -0.000720549], dtype=np.float32)

POINTS = {"2048 2048 1000": {"rows": 2048, "cols": 2048, "iterations": 1000, "block": BLOCK}}
#: 24 x 36 cells (the wavelet's 22 x 22 fits), blocks of 8 x 8: grid 5 x 3, 960 threads, a partial block column
TEST_POINT = {"rows": 24, "cols": 36, "iterations": 1, "block": 8}
FEATURE_POINT = {"rows": 256, "cols": 256, "iterations": 1, "block": BLOCK}


def iso_2dfd_kernel(next_, prev, vel, dtDIVdxy, n_rows, n_cols, block):
    """CPU region: one launch (``block x block`` threads per block); updates ``next_`` (float32 ``n_rows *
    n_cols``) in place from ``prev`` and ``vel`` and returns it."""
    grid_x = (n_cols + block - 1) // block
    grid_y = (n_rows + block - 1) // block
    threads = block * block
    two = np.float32(2.0)
    for gid in numba.prange(grid_x * grid_y * threads):
        blk = gid // threads
        loc = gid - blk * threads
        by = blk // grid_x
        bx = blk - by * grid_x
        ty = loc // block
        tx = loc - ty * block
        gid_col = block * bx + tx
        gid_row = block * by + ty
        if gid_row < n_rows and gid_col < n_cols:
            g = gid_row * n_cols + gid_col
            if gid_col >= 1 and gid_col < n_cols - 1 and gid_row >= 1 and gid_row < n_rows - 1:
                value = np.float32(0.0)
                value += prev[g + 1] - two * prev[g] + prev[g - 1]
                value += prev[g + n_cols] - two * prev[g] + prev[g - n_cols]
                value *= dtDIVdxy * vel[g]
                next_[g] = two * prev[g] - next_[g] + value
    return next_


@cuda.jit
def _iso_gpu(next_, prev, vel, dtDIVdxy, n_rows, n_cols):
    gid_col = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    gid_row = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    two = numba.float32(2.0)
    if gid_row < n_rows and gid_col < n_cols:
        g = gid_row * n_cols + gid_col
        if gid_col >= 1 and gid_col < n_cols - 1 and gid_row >= 1 and gid_row < n_rows - 1:
            value = numba.float32(0.0)
            value += prev[g + 1] - two * prev[g] + prev[g - 1]
            value += prev[g + n_cols] - two * prev[g] + prev[g - n_cols]
            value *= dtDIVdxy * vel[g]
            next_[g] = two * prev[g] - next_[g] + value


def _to_device(next_, prev, vel, dtDIVdxy, n_rows, n_cols, block):
    return {"arrays": tuple(cuda.to_device(a) for a in (next_, prev, vel)), "c": np.float32(dtDIVdxy),
            "rows": int(n_rows), "cols": int(n_cols), "block": int(block)}


def _launch(s):
    bs = s["block"]
    grid = ((s["cols"] + bs - 1) // bs, (s["rows"] + bs - 1) // bs)
    _iso_gpu[grid, (bs, bs)](*s["arrays"], s["c"], s["rows"], s["cols"])


def _from_device(s):
    return s["arrays"][0].copy_to_host()


def work(params):
    rows, cols, bs = int(params["rows"]), int(params["cols"]), int(params["block"])
    return ((cols + bs - 1) // bs) * ((rows + bs - 1) // bs) * bs * bs, bs * bs


def initialize(n_rows, n_cols):
    """The program's ``initialize``: ``(prev, next, vel)``, float32 ``n_rows * n_cols`` each."""
    prev = np.zeros((n_rows, n_cols), dtype=np.float32)
    vel = np.full((n_rows, n_cols), np.float32(2250000.0), dtype=np.float32)
    for s in range(11, -1, -1):
        prev[n_rows // 2 - s:n_rows // 2 + s, n_cols // 2 - s:n_cols // 2 + s] = WAVELET[s]
    return prev.ravel(), np.zeros(n_rows * n_cols, dtype=np.float32), vel.ravel()


def make_inputs(params, seed):
    """``(next, prev, vel, dtDIVdxy, n_rows, n_cols, block)`` before the first time step."""
    rows, cols = int(params["rows"]), int(params["cols"])
    prev, next_, vel = initialize(rows, cols)
    return next_, prev, vel, (DT * DT) / (DXY * DXY), rows, cols, int(params["block"])


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="iso2dfd",
        kernel="iso_2dfd_kernel",
        description="HeCBench iso2dfd: one leapfrog step of the 2-D acoustic wave equation on 2048 x 2048 "
        "(five-point Laplacian, one thread per cell)",
        cpu=iso_2dfd_kernel,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-6,
        atol=1e-9,
    ),
]
