"""HeCBench ``laplace``: the kernels ``red_kernel`` and ``black_kernel``, red-black Gauss-Seidel with SOR
for the 2-D Laplace equation (heat conduction in a plate; RTX 3080).

The plate is ``NUM x NUM`` cells (``NUM = 1024``, a compile-time constant; the program takes no arguments:
the data's ``exeArgs`` is empty, label ``default``). The five-point finite-volume coefficients ``aP, aW, aE,
aS, aN`` and the right-hand side ``b`` (``NUM * NUM`` floats, column-major: ``col * NUM + pos``) come from
``fill_coeffs`` (L = H = 1, width 0.01, conductivity 1, top temperature TN = 1; Dirichlet walls via the
boundary source terms). The temperatures are kept in two half arrays, red and black (cells with even and odd
``column + position``), each ``(NUM + 2)`` columns of ``NUM / 2 + 2`` with a ring of zero ghosts. One thread
per cell of its colour: thread ``(row, col)`` (both from 1) updates the cell at position ``2 row - (col & 1)
- 1`` (red) or ``2 row - ((col + 1) & 1) - 1`` (black) of column ``col - 1``: the residual ``b + aW T_W + aE
T_E + aS T_S + aN T_N`` from the other colour's four neighbours, the over-relaxed update ``T (1 - omega) +
omega res / aP`` (omega = 1.85), stored in place, and the squared change into ``norm_L2`` (which the host
then sums with CUB).

Launch: blocks of ``128 x 2``, grid ``NUM / 256 x NUM / 2`` = ``4 x 512``: 524288 threads, one per cell of
the colour. The timed launches are the first of each kernel: ``red_kernel`` on the all-zero start (red and
black temperatures zero), ``black_kernel`` after that first red sweep (``make_inputs`` runs it in NumPy).
The inputs are the program's own (deterministic, no random numbers: ``seed`` is unused).

CPU regions: one ``prange`` over all threads (``gid`` -> block, then ``threadIdx.x/y`` as CUDA numbers them).
``num`` and the block shape are parameters (the original fixes ``NUM = 1024``, ``128 x 2``) so that the test
point can be small; the measured point uses the original's. Precision: float32 throughout, as the original
(``Real = float``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

NUM = 1024
BLOCK_X, BLOCK_Y = 128, 2
OMEGA = np.float32(1.85)

POINTS = {"default": {"num": NUM, "block_x": BLOCK_X, "block_y": BLOCK_Y}}
#: 16 x 16 plate, blocks of 8 x 2: grid 1 x 8, 128 threads
TEST_POINT = {"num": 16, "block_x": 8, "block_y": 2}
#: the measured regions have 3.6e7 records: a 256 x 256 plate, the original's blocks (32768 threads)
FEATURE_POINT = {"num": 256, "block_x": BLOCK_X, "block_y": BLOCK_Y}


def red_kernel(aP, aW, aE, aS, aN, b, temp_black, temp_red, norm_L2, num, block_x, block_y):
    """CPU region: one launch of ``red_kernel``; updates ``temp_red`` and ``norm_L2`` in place.

    Parameters
    ----------
    aP, aW, aE, aS, aN, b : float32 ``num * num`` coefficients and right-hand side (column-major).
    temp_black, temp_red : float32 ``(num + 2) * (num // 2 + 2)`` half arrays (with ghosts).
    norm_L2 : float32, same size: squared changes (written at the updated cells).
    num, block_x, block_y : plate size and block shape.

    Returns
    -------
    ``(temp_red, norm_L2)``.
    """
    grid_x = num // (2 * block_x)
    threads = block_x * block_y
    n = grid_x * (num // 2) * threads
    nr = (num >> 1) + 2
    one = np.float32(1.0)
    for gid in numba.prange(n):
        blk = gid // threads
        loc = gid - blk * threads
        by = blk // grid_x
        bx = blk - by * grid_x
        ty = loc // block_x
        tx = loc - ty * block_x
        row = 1 + bx * block_x + tx
        col = 1 + by * block_y + ty
        ind_red = col * nr + row
        ind = 2 * row - (col & 1) - 1 + num * (col - 1)
        temp_old = temp_red[ind_red]
        res = (b[ind] + aW[ind] * temp_black[row + (col - 1) * nr]
               + aE[ind] * temp_black[row + (col + 1) * nr]
               + aS[ind] * temp_black[row - (col & 1) + col * nr]
               + aN[ind] * temp_black[row + ((col + 1) & 1) + col * nr])
        temp_new = temp_old * (one - OMEGA) + OMEGA * (res / aP[ind])
        temp_red[ind_red] = temp_new
        res = temp_new - temp_old
        norm_L2[ind_red] = res * res
    return temp_red, norm_L2


def black_kernel(aP, aW, aE, aS, aN, b, temp_red, temp_black, norm_L2, num, block_x, block_y):
    """CPU region: one launch of ``black_kernel`` (the red kernel's twin for the black cells, reading the red
    temperatures); updates ``temp_black`` and ``norm_L2`` in place and returns them."""
    grid_x = num // (2 * block_x)
    threads = block_x * block_y
    n = grid_x * (num // 2) * threads
    nr = (num >> 1) + 2
    one = np.float32(1.0)
    for gid in numba.prange(n):
        blk = gid // threads
        loc = gid - blk * threads
        by = blk // grid_x
        bx = blk - by * grid_x
        ty = loc // block_x
        tx = loc - ty * block_x
        row = 1 + bx * block_x + tx
        col = 1 + by * block_y + ty
        ind_black = col * nr + row
        ind = 2 * row - ((col + 1) & 1) - 1 + num * (col - 1)
        temp_old = temp_black[ind_black]
        res = (b[ind] + aW[ind] * temp_red[row + (col - 1) * nr]
               + aE[ind] * temp_red[row + (col + 1) * nr]
               + aS[ind] * temp_red[row - ((col + 1) & 1) + col * nr]
               + aN[ind] * temp_red[row + (col & 1) + col * nr])
        temp_new = temp_old * (one - OMEGA) + OMEGA * (res / aP[ind])
        temp_black[ind_black] = temp_new
        res = temp_new - temp_old
        norm_L2[ind_black] = res * res
    return temp_black, norm_L2


@cuda.jit
def _red_gpu(aP, aW, aE, aS, aN, b, temp_black, temp_red, norm_L2, num):
    row = 1 + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = 1 + cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    nr = (num >> 1) + 2
    ind_red = col * nr + row
    ind = 2 * row - (col & 1) - 1 + num * (col - 1)
    temp_old = temp_red[ind_red]
    res = (b[ind] + aW[ind] * temp_black[row + (col - 1) * nr]
           + aE[ind] * temp_black[row + (col + 1) * nr]
           + aS[ind] * temp_black[row - (col & 1) + col * nr]
           + aN[ind] * temp_black[row + ((col + 1) & 1) + col * nr])
    temp_new = temp_old * (numba.float32(1.0) - OMEGA) + OMEGA * (res / aP[ind])
    temp_red[ind_red] = temp_new
    res = temp_new - temp_old
    norm_L2[ind_red] = res * res


@cuda.jit
def _black_gpu(aP, aW, aE, aS, aN, b, temp_red, temp_black, norm_L2, num):
    row = 1 + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = 1 + cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    nr = (num >> 1) + 2
    ind_black = col * nr + row
    ind = 2 * row - ((col + 1) & 1) - 1 + num * (col - 1)
    temp_old = temp_black[ind_black]
    res = (b[ind] + aW[ind] * temp_red[row + (col - 1) * nr]
           + aE[ind] * temp_red[row + (col + 1) * nr]
           + aS[ind] * temp_red[row - ((col + 1) & 1) + col * nr]
           + aN[ind] * temp_red[row + (col & 1) + col * nr])
    temp_new = temp_old * (numba.float32(1.0) - OMEGA) + OMEGA * (res / aP[ind])
    temp_black[ind_black] = temp_new
    res = temp_new - temp_old
    norm_L2[ind_black] = res * res


def _port(kernel):
    def to_device(aP, aW, aE, aS, aN, b, other, mine, norm_L2, num, block_x, block_y):
        arrays = tuple(cuda.to_device(a) for a in (aP, aW, aE, aS, aN, b, other, mine, norm_L2))
        return {"arrays": arrays, "num": int(num), "block": (int(block_x), int(block_y))}

    def launch(s):
        bx, by = s["block"]
        kernel[(s["num"] // (2 * bx), s["num"] // 2), (bx, by)](*s["arrays"], s["num"])

    def from_device(s):
        return s["arrays"][7].copy_to_host(), s["arrays"][8].copy_to_host()

    return GpuPort(to_device, launch, from_device)


def fill_coeffs(num):
    """The program's ``fill_coeffs`` for a ``num x num`` plate (L = H = 1, width 0.01, conductivity 1,
    TN = 1), float32 arithmetic: ``(aP, aW, aE, aS, aN, b)``, each ``num * num`` column-major."""
    f = np.float32
    width, th_cond, tn = f(0.01), f(1.0), f(1.0)
    dx = f(1.0) / f(num)
    dy = f(1.0) / f(num)
    ew = th_cond * width * dy / dx
    ns = th_cond * width * dx / dy
    col, pos = np.meshgrid(np.arange(num), np.arange(num), indexing="ij")
    aW = np.where(col == 0, f(0), ew).astype(np.float32)
    aE = np.where(col == num - 1, f(0), ew).astype(np.float32)
    aS = np.where(pos == 0, f(0), ns).astype(np.float32)
    aN = np.where(pos == num - 1, f(0), ns).astype(np.float32)
    # the source term of the last wall the program's if-chain meets (columns first, then rows)
    sp = np.zeros((num, num), dtype=np.float32)
    sp[col == 0] = -f(2.0) * th_cond * width * dy / dx
    sp[col == num - 1] = -f(2.0) * th_cond * width * dy / dx
    sp[pos == 0] = -f(2.0) * th_cond * width * dx / dy
    sp[pos == num - 1] = -f(2.0) * th_cond * width * dx / dy
    b = np.where(pos == num - 1, f(2.0) * th_cond * width * dx * tn / dy, f(0)).astype(np.float32)
    aP = (aW + aE + aS + aN - sp).astype(np.float32)
    return tuple(a.ravel() for a in (aP, aW, aE, aS, aN, b))


def _state(params):
    num = int(params["num"])
    coeffs = fill_coeffs(num)
    size = (num + 2) * (num // 2 + 2)
    red = np.zeros(size, dtype=np.float32)
    black = np.zeros(size, dtype=np.float32)
    return num, coeffs, red, black, np.zeros(size, dtype=np.float32)


def make_red_inputs(params, seed):
    """The first ``red_kernel`` launch: the program's coefficients, zero temperatures."""
    num, coeffs, red, black, norm = _state(params)
    return (*coeffs, black, red, norm, num, int(params["block_x"]), int(params["block_y"]))


def make_black_inputs(params, seed):
    """The first ``black_kernel`` launch: after the first red sweep (a NumPy run of it)."""
    num, coeffs, red, black, norm = _state(params)
    bx, by = int(params["block_x"]), int(params["block_y"])
    red, norm = red_kernel(*coeffs, black, red, norm, num, bx, by)
    return (*coeffs, red, black, norm, num, bx, by)


def work(params):
    num, bx, by = int(params["num"]), int(params["block_x"]), int(params["block_y"])
    return (num // (2 * bx)) * (num // 2) * bx * by, bx * by


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="laplace",
        kernel=name,
        description=f"HeCBench laplace: {name}, one red-black SOR half sweep of the 2-D Laplace equation "
        "(five-point stencil on one colour's cells, one thread per cell)",
        cpu=region,
        gpu=_port(gpu),
        make_inputs=inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-7,
    )
    for name, region, gpu, inputs in (("red_kernel", red_kernel, _red_gpu, make_red_inputs),
                                      ("black_kernel", black_kernel, _black_gpu, make_black_inputs))
]
