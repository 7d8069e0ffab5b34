"""HeCBench ``fluidSim``: the kernel ``lbm``, one step of a D2Q9 lattice-Boltzmann fluid (RTX 3080).

The fluid lives on a ``256 x 256`` lattice (fixed in the program; its argument, ``10000`` in the data, is the
number of steps, label ``"10000"``). Each cell holds nine double distributions: ``f0`` (rest), ``f1234``
(east, north, west, south) and ``f5678`` (the diagonals), the last two as ``double4``. The kernel gives one
thread to each cell. Collision: a boundary cell (the lattice's outer ring, ``type = 1``) bounces its
distributions back (``xyzw <- zwxy`` of both quadruples); a fluid cell computes the density ``rho`` (the
sum), the velocity ``u = sum f_i e_i / rho`` (as two ``double4`` dot products each) and relaxes every
distribution towards its equilibrium ``rho w_i (1 + 3 e.u + 4.5 (e.u)^2 - 1.5 u.u)`` with ``omega = 1.2``.
Streaming: a thread off the lattice's edge writes ``f0`` to its own cell and each of the eight moving
distributions to one component of the neighbour in its direction (``pos + width * dy + dx``).

Launch (the program's odd one): grid ``(256, 1)``, blocks ``(dims[0] / 256, dims[1]) = (1, 256)``, so
``idx = blockIdx.x`` and ``idy = threadIdx.y``; 65536 threads in blocks of 256. The timed launch is the first:
input = the program's initial distributions, the output buffers a copy of them (the host copies input to
output before the loop).

Inputs: the initial state is the program's: per cell a density ``rand() % 10 + 1`` (glibc ``rand`` after
``srand(123)``, reproduced; ``seed`` is added to 123, so seed 0 is the program's lattice) and the
equilibrium of that density at the velocity ``(0.01, 0.01)`` (the source's ``computefEq`` is not in the
files; it is the same formula as the kernel's ``ced``). ``double8`` directions and the weights are arrays.
The test point is a ``16 x 16`` lattice (grid 16, blocks of 1 x 16).

Precision: float64 throughout, as the original (``omega`` is ``1.2f`` widened to double, as in the host).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

E = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]], dtype=np.float64)
W = np.array([4.0 / 9.0] + [1.0 / 9.0] * 4 + [1.0 / 36.0] * 4, dtype=np.float64)
OMEGA = float(np.float32(1.2))
U0 = (0.01, 0.01)

POINTS = {"10000": {"width": 256, "height": 256, "iterations": 10000}}
TEST_POINT = {"width": 16, "height": 16, "iterations": 1}
#: the measured region has 2.8e7 records: a 32 x 256 lattice, blocks of 256 as measured (8192 threads)
FEATURE_POINT = {"width": 32, "height": 256, "iterations": 1}


@numba.njit
def _ced(rho, weight, dx, dy, ux, uy):
    u2 = (ux * ux) + (uy * uy)
    eu = (dx * ux) + (dy * uy)
    return rho * weight * (1.0 + 3.0 * eu + 4.5 * eu * eu - 1.5 * u2)


def lbm(if0, of0, if1234, of1234, if5678, of5678, typ, dir_x, dir_y, weight, omega, width, height):
    """CPU region: one launch of ``lbm`` (collide and stream every cell).

    Parameters
    ----------
    if0, of0 : float64 ``(cells,)``. if1234, of1234, if5678, of5678 : float64 ``(cells, 4)``.
    typ : bool ``(cells,)``, True on boundary cells. dir_x, dir_y : float64 ``(8,)``, the moving directions.
    weight : float64 ``(9,)``. omega : relaxation. width, height : the lattice (= the launch's x and y extent).

    Returns
    -------
    ``(of0, of1234, of5678)``.
    """
    for gid in numba.prange(width * height):
        # grid (width, 1) of blocks (1, height): block = idx, thread = idy
        idx = gid // height
        idy = gid - idx * height
        pos = idx + width * idy
        f0 = if0[pos]
        f1, f2, f3, f4 = if1234[pos, 0], if1234[pos, 1], if1234[pos, 2], if1234[pos, 3]
        f5, f6, f7, f8 = if5678[pos, 0], if5678[pos, 1], if5678[pos, 2], if5678[pos, 3]
        if typ[pos]:
            e0 = f0
            e1, e2, e3, e4 = f3, f4, f1, f2
            e5, e6, e7, e8 = f7, f8, f5, f6
        else:
            rho = f0 + (f1 + f5) + (f2 + f6) + (f3 + f7) + (f4 + f8)
            ux = (((f1 * dir_x[0] + f2 * dir_x[1]) + (f3 * dir_x[2] + f4 * dir_x[3]))
                  + ((f5 * dir_x[4] + f6 * dir_x[5]) + (f7 * dir_x[6] + f8 * dir_x[7]))) / rho
            uy = (((f1 * dir_y[0] + f2 * dir_y[1]) + (f3 * dir_y[2] + f4 * dir_y[3]))
                  + ((f5 * dir_y[4] + f6 * dir_y[5]) + (f7 * dir_y[6] + f8 * dir_y[7]))) / rho
            e0 = _ced(rho, weight[0], 0.0, 0.0, ux, uy)
            e1 = _ced(rho, weight[1], dir_x[0], dir_y[0], ux, uy)
            e2 = _ced(rho, weight[2], dir_x[1], dir_y[1], ux, uy)
            e3 = _ced(rho, weight[3], dir_x[2], dir_y[2], ux, uy)
            e4 = _ced(rho, weight[4], dir_x[3], dir_y[3], ux, uy)
            e5 = _ced(rho, weight[5], dir_x[4], dir_y[4], ux, uy)
            e6 = _ced(rho, weight[6], dir_x[5], dir_y[5], ux, uy)
            e7 = _ced(rho, weight[7], dir_x[6], dir_y[6], ux, uy)
            e8 = _ced(rho, weight[8], dir_x[7], dir_y[7], ux, uy)
            keep = 1.0 - omega
            e0 = keep * f0 + omega * e0
            e1 = keep * f1 + omega * e1
            e2 = keep * f2 + omega * e2
            e3 = keep * f3 + omega * e3
            e4 = keep * f4 + omega * e4
            e5 = keep * f5 + omega * e5
            e6 = keep * f6 + omega * e6
            e7 = keep * f7 + omega * e7
            e8 = keep * f8 + omega * e8
        if idx > 0 and idx < width - 1 and idy > 0 and idy < height - 1:
            of0[pos] = e0
            of1234[width * (idy + int(dir_y[0])) + idx + int(dir_x[0]), 0] = e1
            of1234[width * (idy + int(dir_y[1])) + idx + int(dir_x[1]), 1] = e2
            of1234[width * (idy + int(dir_y[2])) + idx + int(dir_x[2]), 2] = e3
            of1234[width * (idy + int(dir_y[3])) + idx + int(dir_x[3]), 3] = e4
            of5678[width * (idy + int(dir_y[4])) + idx + int(dir_x[4]), 0] = e5
            of5678[width * (idy + int(dir_y[5])) + idx + int(dir_x[5]), 1] = e6
            of5678[width * (idy + int(dir_y[6])) + idx + int(dir_x[6]), 2] = e7
            of5678[width * (idy + int(dir_y[7])) + idx + int(dir_x[7]), 3] = e8
    return of0, of1234, of5678


@cuda.jit(device=True)
def _ced_gpu(rho, weight, dx, dy, ux, uy):
    u2 = (ux * ux) + (uy * uy)
    eu = (dx * ux) + (dy * uy)
    return rho * weight * (1.0 + 3.0 * eu + 4.5 * eu * eu - 1.5 * u2)


@cuda.jit
def _lbm_gpu(if0, of0, if1234, of1234, if5678, of5678, typ, dir_x, dir_y, weight, omega):
    idx = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    idy = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    width = cuda.gridDim.x * cuda.blockDim.x
    height = cuda.gridDim.y * cuda.blockDim.y
    pos = idx + width * idy
    f0 = if0[pos]
    f1, f2, f3, f4 = if1234[pos, 0], if1234[pos, 1], if1234[pos, 2], if1234[pos, 3]
    f5, f6, f7, f8 = if5678[pos, 0], if5678[pos, 1], if5678[pos, 2], if5678[pos, 3]
    if typ[pos]:
        e0 = f0
        e1, e2, e3, e4 = f3, f4, f1, f2
        e5, e6, e7, e8 = f7, f8, f5, f6
    else:
        rho = f0 + (f1 + f5) + (f2 + f6) + (f3 + f7) + (f4 + f8)
        ux = (((f1 * dir_x[0] + f2 * dir_x[1]) + (f3 * dir_x[2] + f4 * dir_x[3]))
              + ((f5 * dir_x[4] + f6 * dir_x[5]) + (f7 * dir_x[6] + f8 * dir_x[7]))) / rho
        uy = (((f1 * dir_y[0] + f2 * dir_y[1]) + (f3 * dir_y[2] + f4 * dir_y[3]))
              + ((f5 * dir_y[4] + f6 * dir_y[5]) + (f7 * dir_y[6] + f8 * dir_y[7]))) / rho
        e0 = _ced_gpu(rho, weight[0], 0.0, 0.0, ux, uy)
        e1 = _ced_gpu(rho, weight[1], dir_x[0], dir_y[0], ux, uy)
        e2 = _ced_gpu(rho, weight[2], dir_x[1], dir_y[1], ux, uy)
        e3 = _ced_gpu(rho, weight[3], dir_x[2], dir_y[2], ux, uy)
        e4 = _ced_gpu(rho, weight[4], dir_x[3], dir_y[3], ux, uy)
        e5 = _ced_gpu(rho, weight[5], dir_x[4], dir_y[4], ux, uy)
        e6 = _ced_gpu(rho, weight[6], dir_x[5], dir_y[5], ux, uy)
        e7 = _ced_gpu(rho, weight[7], dir_x[6], dir_y[6], ux, uy)
        e8 = _ced_gpu(rho, weight[8], dir_x[7], dir_y[7], ux, uy)
        keep = 1.0 - omega
        e0 = keep * f0 + omega * e0
        e1 = keep * f1 + omega * e1
        e2 = keep * f2 + omega * e2
        e3 = keep * f3 + omega * e3
        e4 = keep * f4 + omega * e4
        e5 = keep * f5 + omega * e5
        e6 = keep * f6 + omega * e6
        e7 = keep * f7 + omega * e7
        e8 = keep * f8 + omega * e8
    if idx > 0 and idx < width - 1 and idy > 0 and idy < height - 1:
        of0[pos] = e0
        of1234[width * (idy + int(dir_y[0])) + idx + int(dir_x[0]), 0] = e1
        of1234[width * (idy + int(dir_y[1])) + idx + int(dir_x[1]), 1] = e2
        of1234[width * (idy + int(dir_y[2])) + idx + int(dir_x[2]), 2] = e3
        of1234[width * (idy + int(dir_y[3])) + idx + int(dir_x[3]), 3] = e4
        of5678[width * (idy + int(dir_y[4])) + idx + int(dir_x[4]), 0] = e5
        of5678[width * (idy + int(dir_y[5])) + idx + int(dir_x[5]), 1] = e6
        of5678[width * (idy + int(dir_y[6])) + idx + int(dir_x[6]), 2] = e7
        of5678[width * (idy + int(dir_y[7])) + idx + int(dir_x[7]), 3] = e8


def _to_device(if0, of0, if1234, of1234, if5678, of5678, typ, dir_x, dir_y, weight, omega, width, height):
    arrays = tuple(cuda.to_device(a) for a in (if0, of0, if1234, of1234, if5678, of5678, typ, dir_x, dir_y,
                                                weight))
    return {"arrays": arrays, "omega": float(omega), "width": int(width), "height": int(height)}


def _launch(s):
    # the program's geometry: grid (GROUP_SIZE, 1), blocks (dims[0] / GROUP_SIZE, dims[1])
    _lbm_gpu[(s["width"], 1), (1, s["height"])](*s["arrays"], s["omega"])


def _from_device(s):
    return s["arrays"][1].copy_to_host(), s["arrays"][3].copy_to_host(), s["arrays"][5].copy_to_host()


def equilibrium(rho, weight, e, u):
    """``rho w (1 + 3 e.u + 4.5 (e.u)^2 - 1.5 u.u)`` (the host's ``computefEq``)."""
    u2 = u[0] * u[0] + u[1] * u[1]
    eu = e[0] * u[0] + e[1] * u[1]
    return rho * weight * (1.0 + 3.0 * eu + 4.5 * eu * eu - 1.5 * u2)


def make_inputs(params, seed):
    """The program's initial lattice (densities ``rand() % 10 + 1``, equilibrium at ``u0``), output buffers
    copied from the input, boundary ring, directions, weights, omega and the lattice size."""
    width, height = int(params["width"]), int(params["height"])
    cells = width * height
    den = (glibc_rand(123 + seed, cells) % 10 + 1).astype(np.float64)
    f = np.stack([equilibrium(den, W[i], E[i], U0) for i in range(9)], axis=1)
    if0 = np.ascontiguousarray(f[:, 0])
    if1234 = np.ascontiguousarray(f[:, 1:5])
    if5678 = np.ascontiguousarray(f[:, 5:9])
    y, x = np.divmod(np.arange(cells), width)
    typ = (x == 0) | (x == width - 1) | (y == 0) | (y == height - 1)
    dir_x = np.ascontiguousarray(E[1:, 0])
    dir_y = np.ascontiguousarray(E[1:, 1])
    return (if0, if0.copy(), if1234, if1234.copy(), if5678, if5678.copy(), typ, dir_x, dir_y, W.copy(), OMEGA,
            width, height)


def work(params):
    return int(params["width"]) * int(params["height"]), int(params["height"])


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="fluidSim",
        kernel="lbm",
        description="HeCBench fluidSim: one D2Q9 lattice-Boltzmann step (BGK collision, bounce-back ring, "
        "push streaming), one thread per cell, float64",
        cpu=lbm,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-12,
        atol=1e-15,
    ),
]
