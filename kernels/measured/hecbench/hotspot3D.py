"""HeCBench ``hotspot3D``: the kernel ``hotspot3d``, one explicit step of Rodinia's 3-D chip thermal model
(RTX 3080).

A chip of ``numRows x numCols`` cells in ``layers`` layers (index ``i + j numCols + k numCols numRows``) is
advanced by one explicit step of the heat equation: each cell's new temperature is ``cc T + cw T_W + ce T_E +
cs T_S + cn T_N + cb T_below + ct T_above + stepDivCap P + ct amb`` (7-point stencil, a missing neighbour at a
side face is the cell itself; at the bottom and top layers the missing vertical neighbour is too). One thread
per ``(i, j)`` column marches up the layers, carrying the three vertical temperatures in registers
(``temp1, temp2, temp3``: below, centre, above), reading the four side neighbours and the power of each layer.

Launch: blocks of ``64 x 4``, grid ``numCols / 64 x numRows / 4``; the data's point ``512 8 5000 ...`` (side,
layers, iterations, power file, temperature file, output file; label = those arguments as the data has
them) gives 8 x 128 blocks, 262144 threads, 8 layers each. The timed launch is the first: the initial
temperature in, the other buffer (zeros, the program's ``calloc``) out.

Inputs: the program reads Rodinia's ``power_512x8`` and ``temp_512x8`` (one value per line); those files
are not at hand, and the work does not depend on the values (no data-dependent branch), so they are drawn:
temperature uniform in [323.15, 343.15) K and power uniform in [0, MAX_PD x cell area x layer share)
(MAX_PD = 3e6 W/m^2), NumPy's generator with ``seed``. The coefficients are the host's (float variables fed
by double expressions, as in the source; ``K_SI * dx * dy`` is a float product). The port takes the row count
separately (the program sets rows = columns) so that the test point (64 x 8 cells, 4 layers: 512 threads)
is small.

Precision: float32 throughout the kernel, as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

WG_X, WG_Y = 64, 4
MAX_PD = 3.0e6
PRECISION = 0.001
SPEC_HEAT_SI = 1.75e6
K_SI = 100
FACTOR_CHIP = 0.5
T_CHIP = np.float32(0.0005)
CHIP_HEIGHT = np.float32(0.016)
CHIP_WIDTH = np.float32(0.016)

LABEL = "512 8 5000 ../data/hotspot3D/power_512x8 ../data/hotspot3D/temp_512x8 output.out"
POINTS = {LABEL: {"cols": 512, "rows": 512, "layers": 8, "iterations": 5000}}
TEST_POINT = {"cols": 64, "rows": 8, "layers": 4, "iterations": 1}
#: the measured region has about 1e8 records: 64 x 64 cells, 8 layers (4096 threads)
FEATURE_POINT = {"cols": 64, "rows": 64, "layers": 8, "iterations": 1}


def hotspot3d(tIn, pIn, tOut, numCols, numRows, layers, ce, cw, cn, cs, ct, cb, cc, stepDivCap):
    """CPU region: one launch of ``hotspot3d`` (one explicit step of every cell); writes ``tOut``.

    Parameters
    ----------
    tIn, pIn, tOut : float32 ``numCols * numRows * layers``: temperature in, power, temperature out.
    numCols, numRows, layers : the grid. ce ... cc, stepDivCap : float32 coefficients (see the host).

    Returns
    -------
    ``tOut``.
    """
    grid_x = numCols // WG_X
    threads = WG_X * WG_Y
    for gid in numba.prange(grid_x * (numRows // WG_Y) * threads):
        blk = gid // threads
        loc = gid - blk * threads
        by = blk // grid_x
        bx = blk - by * grid_x
        ty = loc // WG_X
        tx = loc - ty * WG_X
        amb_temp = np.float32(80.0)
        i = WG_X * bx + tx
        j = WG_Y * by + ty
        c = i + j * numCols
        xy = numCols * numRows
        W = c if i == 0 else c - 1
        E = c if i == numCols - 1 else c + 1
        N = c if j == 0 else c - numCols
        S = c if j == numRows - 1 else c + numCols
        temp1 = tIn[c]
        temp2 = temp1
        temp3 = tIn[c + xy]
        tOut[c] = (cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] + cb * temp1
                   + ct * temp3 + stepDivCap * pIn[c] + ct * amb_temp)
        c += xy
        W += xy
        E += xy
        N += xy
        S += xy
        for k in range(1, layers - 1):
            temp1 = temp2
            temp2 = temp3
            temp3 = tIn[c + xy]
            tOut[c] = (cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] + cb * temp1
                       + ct * temp3 + stepDivCap * pIn[c] + ct * amb_temp)
            c += xy
            W += xy
            E += xy
            N += xy
            S += xy
        temp1 = temp2
        temp2 = temp3
        tOut[c] = (cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] + cb * temp1
                   + ct * temp3 + stepDivCap * pIn[c] + ct * amb_temp)
    return tOut


@cuda.jit
def _hotspot3d_gpu(tIn, pIn, tOut, numCols, numRows, layers, ce, cw, cn, cs, ct, cb, cc, stepDivCap):
    amb_temp = numba.float32(80.0)
    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    j = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    c = i + j * numCols
    xy = numCols * numRows
    W = c if i == 0 else c - 1
    E = c if i == numCols - 1 else c + 1
    N = c if j == 0 else c - numCols
    S = c if j == numRows - 1 else c + numCols
    temp1 = tIn[c]
    temp2 = temp1
    temp3 = tIn[c + xy]
    tOut[c] = (cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] + cb * temp1
               + ct * temp3 + stepDivCap * pIn[c] + ct * amb_temp)
    c += xy
    W += xy
    E += xy
    N += xy
    S += xy
    for k in range(1, layers - 1):
        temp1 = temp2
        temp2 = temp3
        temp3 = tIn[c + xy]
        tOut[c] = (cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] + cb * temp1
                   + ct * temp3 + stepDivCap * pIn[c] + ct * amb_temp)
        c += xy
        W += xy
        E += xy
        N += xy
        S += xy
    temp1 = temp2
    temp2 = temp3
    tOut[c] = (cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] + cb * temp1
               + ct * temp3 + stepDivCap * pIn[c] + ct * amb_temp)


def _to_device(tIn, pIn, tOut, numCols, numRows, layers, *coefficients):
    return {"arrays": (cuda.to_device(tIn), cuda.to_device(pIn), cuda.to_device(tOut)),
            "sizes": (int(numCols), int(numRows), int(layers)), "coefficients": coefficients}


def _launch(s):
    cols, rows, _ = s["sizes"]
    _hotspot3d_gpu[(cols // WG_X, rows // WG_Y), (WG_X, WG_Y)](*s["arrays"], *s["sizes"], *s["coefficients"])


def _from_device(s):
    return s["arrays"][2].copy_to_host()


def coefficients(cols, rows, layers):
    """The host's ``(ce, cw, cn, cs, ct, cb, cc, stepDivCap)``, float32, computed as the source does."""
    f = np.float32
    dx = f(CHIP_HEIGHT / f(rows))
    dy = f(CHIP_WIDTH / f(cols))
    dz = f(T_CHIP / f(layers))
    cap = f(FACTOR_CHIP * SPEC_HEAT_SI * float(T_CHIP) * float(dx) * float(dy))
    rx = f(float(dy) / (2.0 * K_SI * float(T_CHIP) * float(dx)))
    ry = f(float(dx) / (2.0 * K_SI * float(T_CHIP) * float(dy)))
    rz = f(dz / (f(K_SI) * dx * dy))
    max_slope = f(MAX_PD / (FACTOR_CHIP * float(T_CHIP) * SPEC_HEAT_SI))
    dt = f(PRECISION / float(max_slope))
    step_div_cap = f(dt / cap)
    ce = f(step_div_cap / rx)
    cn = f(step_div_cap / ry)
    ct = f(step_div_cap / rz)
    cc = f(1.0 - (2.0 * float(ce) + 2.0 * float(cn) + 3.0 * float(ct)))
    return ce, ce, cn, cn, ct, ct, cc, step_div_cap


def make_inputs(params, seed):
    """``(tIn, pIn, tOut, cols, rows, layers, ce, cw, cn, cs, ct, cb, cc, stepDivCap)`` of the first launch."""
    cols, rows, layers = int(params["cols"]), int(params["rows"]), int(params["layers"])
    size = cols * rows * layers
    rng = np.random.default_rng(seed)
    cell_area = float(CHIP_HEIGHT) / rows * float(CHIP_WIDTH) / cols
    t_in = rng.uniform(323.15, 343.15, size=size).astype(np.float32)
    p_in = rng.uniform(0.0, MAX_PD * cell_area / layers, size=size).astype(np.float32)
    return (t_in, p_in, np.zeros(size, dtype=np.float32), cols, rows, layers, *coefficients(cols, rows, layers))


def work(params):
    cols, rows = int(params["cols"]), int(params["rows"])
    return (cols // WG_X) * (rows // WG_Y) * WG_X * WG_Y, WG_X * WG_Y


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="hotspot3D",
        kernel="hotspot3d",
        description="HeCBench hotspot3D: one explicit step of the 3-D chip thermal model (7-point stencil), "
        "a thread per (i, j) column marching up 8 layers",
        cpu=hotspot3d,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-6,
        atol=1e-4,
    ),
]
