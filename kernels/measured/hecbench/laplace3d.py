"""HeCBench ``laplace3d``: the kernel ``laplace3d``, one Jacobi sweep of the 3-D Laplace equation (RTX 3080).

The program solves Laplace's equation on an ``NX x NY x NZ`` grid of floats (``pitch = NX``, index
``i + j NX + k NX NY``) by Jacobi iteration: every interior node becomes the mean of its six neighbours,
boundary nodes (Dirichlet) keep their value. The kernel (after the CUDA SDK's ``laplace3d``) gives one
thread to each ``(i, j)`` column of a ``32 x 8`` block; the thread marches up the ``k`` direction keeping
three planes of the block (plus a one-node halo all round) in shared memory, ``u1[3 * 34 * 10]``. Before
the march every thread stages its node of plane 0 (and the first 84 threads of the block, ``halo``, one halo
node each: the y halos by the first two rows of threads, the x halos, corners included, by the rest); at
each plane ``k`` every thread moves its node's planes down by one (``k-1 <- k <- k+1``) and loads plane
``k+1`` (when ``k < NZ - 1``); a barrier; then the active threads write ``u2`` of plane ``k`` (the mean of
the six neighbours from shared memory, or the node itself on the boundary); a second barrier.

Launch: blocks of ``32 x 8``, grid ``ceil(NX/32) x ceil(NY/8)``; the data's point ``128 128 128 100 1``
(``NX NY NZ repeat verify``) gives ``4 x 16`` blocks, 16384 threads, each marching 128 planes. The timed
launch is the first one in the program (the warm-up), on the initial field: 1 on every boundary node, 0
inside (the program's initialisation, reproduced exactly; ``seed`` is not used: the original has no random
input).

CPU region: one ``prange`` per barrier phase over all 16384 threads: the initial staging (which also works
out each thread's indices); then per plane the shift-and-load phase and the compute phase. Shared memory is
an array with one ``3 * 340`` tile per block. Deliberate difference: the registers a thread keeps across
the barriers (its tile offset, its column's plane-0 index, whether it is active, its halo node's flag, tile
offset and index, and whether its column is on the x or y boundary: the part of the Dirichlet test that does
not change with ``k``) are a per-thread array written in the staging phase and read by the later phases,
which add ``k`` planes to the plane-0 indices instead of advancing them one plane a step as the original's
``indg`` and ``indg_h`` do.

Precision: float32 throughout (``sixth = 1.0f / 6.0f``), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK_X = 32
BLOCK_Y = 8
JOFF = BLOCK_X + 2
KOFF = (BLOCK_X + 2) * (BLOCK_Y + 2)
THREADS = BLOCK_X * BLOCK_Y

POINTS = {"128 128 128 100 1": {"nx": 128, "ny": 128, "nz": 128, "repeat": 100}}
TEST_POINT = {"nx": 32, "ny": 12, "nz": 5, "repeat": 1}
#: the measured region has 1.4e8 records: 64 x 32 x 32 (8 blocks, 2048 threads, 32 planes)
FEATURE_POINT = {"nx": 64, "ny": 32, "nz": 32, "repeat": 1}


def laplace3d(nx, ny, nz, pitch, grid_x, grid_y, d_u1, d_u2):
    """CPU region: one launch of ``laplace3d`` (``d_u2`` = one Jacobi sweep of ``d_u1``).

    Parameters
    ----------
    nx, ny, nz, pitch : grid size and row pitch (``pitch = nx``).
    grid_x, grid_y : blocks of the launch in x and y.
    d_u1 : float32 ``nx * ny * nz``, read. d_u2 : float32, same size, written.

    Returns
    -------
    ``d_u2``.
    """
    n_blocks = grid_x * grid_y
    n_threads = n_blocks * THREADS
    u1 = np.zeros((n_blocks, 3 * KOFF), dtype=np.float32)  # shared: three planes of the block's tile
    regs = np.empty((n_threads, 7), dtype=np.int64)  # edge, ind, indg, active, halo, ind_h, indg_h
    plane = ny * pitch
    sixth = np.float32(1.0) / np.float32(6.0)
    # phase: indices, and stage plane 0 (node and halo node) into the top slot
    for gid in numba.prange(n_threads):
        b = gid // THREADS
        loc = gid - b * THREADS
        ty = loc // BLOCK_X
        tx = loc - ty * BLOCK_X
        by = b // grid_x
        bx = b - by * grid_x
        k = tx + ty * BLOCK_X
        halo = k < 2 * (BLOCK_X + BLOCK_Y + 2)
        ind_h = 0
        indg_h = 0
        if halo:
            if ty < 2:
                i = tx
                j = ty * (BLOCK_Y + 1) - 1
            else:
                i = (k % 2) * (BLOCK_X + 1) - 1
                j = k // 2 - BLOCK_X - 1
            ind_h = i + 1 + (j + 1) * JOFF + KOFF
            i = i + bx * BLOCK_X
            j = j + by * BLOCK_Y
            indg_h = i + j * pitch
            halo = i >= 0 and i < nx and j >= 0 and j < ny
        i = tx + bx * BLOCK_X
        j = ty + by * BLOCK_Y
        ind = tx + 1 + (ty + 1) * JOFF + KOFF
        indg = i + j * pitch
        active = i < nx and j < ny
        if active:
            u1[b, ind + KOFF] = d_u1[indg]
        if halo:
            u1[b, ind_h + KOFF] = d_u1[indg_h]
        regs[gid, 0] = i == 0 or i == nx - 1 or j == 0 or j == ny - 1
        regs[gid, 1] = ind
        regs[gid, 2] = indg
        regs[gid, 3] = active
        regs[gid, 4] = halo
        regs[gid, 5] = ind_h
        regs[gid, 6] = indg_h
    for k in range(nz):
        # phase: move the planes down, load plane k + 1
        for gid in numba.prange(n_threads):
            b = gid // THREADS
            if regs[gid, 3]:
                ind = regs[gid, 1]
                indg = regs[gid, 2] + (k + 1) * plane
                u1[b, ind - KOFF] = u1[b, ind]
                u1[b, ind] = u1[b, ind + KOFF]
                if k < nz - 1:
                    u1[b, ind + KOFF] = d_u1[indg]
            if regs[gid, 4]:
                ind_h = regs[gid, 5]
                indg_h = regs[gid, 6] + (k + 1) * plane
                u1[b, ind_h - KOFF] = u1[b, ind_h]
                u1[b, ind_h] = u1[b, ind_h + KOFF]
                if k < nz - 1:
                    u1[b, ind_h + KOFF] = d_u1[indg_h]
        # phase: Jacobi update of plane k
        for gid in numba.prange(n_threads):
            b = gid // THREADS
            if regs[gid, 3]:
                ind = regs[gid, 1]
                if regs[gid, 0] or k == 0 or k == nz - 1:
                    u2 = u1[b, ind]
                else:
                    u2 = (u1[b, ind - 1] + u1[b, ind + 1] + u1[b, ind - JOFF] + u1[b, ind + JOFF]
                          + u1[b, ind - KOFF] + u1[b, ind + KOFF]) * sixth
                d_u2[regs[gid, 2] + k * plane] = u2
    return d_u2


@cuda.jit
def _laplace3d_gpu(nx, ny, nz, pitch, d_u1, d_u2):
    u1 = cuda.shared.array(3 * KOFF, dtype=numba.float32)
    sixth = numba.float32(1.0) / numba.float32(6.0)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    k = tx + ty * BLOCK_X
    halo = k < 2 * (BLOCK_X + BLOCK_Y + 2)
    ind_h = 0
    indg_h = 0
    if halo:
        if ty < 2:
            i = tx
            j = ty * (BLOCK_Y + 1) - 1
        else:
            i = (k % 2) * (BLOCK_X + 1) - 1
            j = k // 2 - BLOCK_X - 1
        ind_h = i + 1 + (j + 1) * JOFF + KOFF
        i = i + cuda.blockIdx.x * BLOCK_X
        j = j + cuda.blockIdx.y * BLOCK_Y
        indg_h = i + j * pitch
        halo = i >= 0 and i < nx and j >= 0 and j < ny
    i = tx + cuda.blockIdx.x * BLOCK_X
    j = ty + cuda.blockIdx.y * BLOCK_Y
    ind = tx + 1 + (ty + 1) * JOFF + KOFF
    indg = i + j * pitch
    active = i < nx and j < ny
    if active:
        u1[ind + KOFF] = d_u1[indg]
    if halo:
        u1[ind_h + KOFF] = d_u1[indg_h]
    for k in range(nz):
        indg0 = indg
        if active:
            indg = indg + ny * pitch
            u1[ind - KOFF] = u1[ind]
            u1[ind] = u1[ind + KOFF]
            if k < nz - 1:
                u1[ind + KOFF] = d_u1[indg]
        if halo:
            indg_h = indg_h + ny * pitch
            u1[ind_h - KOFF] = u1[ind_h]
            u1[ind_h] = u1[ind_h + KOFF]
            if k < nz - 1:
                u1[ind_h + KOFF] = d_u1[indg_h]
        cuda.syncthreads()
        if active:
            if i == 0 or i == nx - 1 or j == 0 or j == ny - 1 or k == 0 or k == nz - 1:
                u2 = u1[ind]
            else:
                u2 = (u1[ind - 1] + u1[ind + 1] + u1[ind - JOFF] + u1[ind + JOFF]
                      + u1[ind - KOFF] + u1[ind + KOFF]) * sixth
            d_u2[indg0] = u2
        cuda.syncthreads()


def _to_device(nx, ny, nz, pitch, grid_x, grid_y, d_u1, d_u2):
    return {"args": (nx, ny, nz, pitch, cuda.to_device(d_u1), cuda.to_device(d_u2)), "grid": (grid_x, grid_y)}


def _launch(s):
    _laplace3d_gpu[s["grid"], (BLOCK_X, BLOCK_Y)](*s["args"])


def _from_device(s):
    return s["args"][5].copy_to_host()


def initial_field(nx, ny, nz):
    """The program's ``h_u1``: 1 on the boundary nodes, 0 inside (float32, index ``i + j nx + k nx ny``)."""
    u = np.ones((nz, ny, nx), dtype=np.float32)
    u[1:-1, 1:-1, 1:-1] = 0.0
    return u.ravel()


def launch_grid(nx, ny):
    return 1 + (nx - 1) // BLOCK_X, 1 + (ny - 1) // BLOCK_Y


def make_inputs(params, seed):
    """``(nx, ny, nz, pitch, grid_x, grid_y, d_u1, d_u2)``; the field is the program's (no randomness)."""
    nx, ny, nz = int(params["nx"]), int(params["ny"]), int(params["nz"])
    if nx % BLOCK_X:
        raise ValueError(f"laplace3d: NX must be a multiple of {BLOCK_X}, got {nx}")
    gx, gy = launch_grid(nx, ny)
    return nx, ny, nz, nx, gx, gy, initial_field(nx, ny, nz), np.zeros(nx * ny * nz, dtype=np.float32)


def work(params):
    gx, gy = launch_grid(int(params["nx"]), int(params["ny"]))
    return gx * gy * THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="laplace3d",
        kernel="laplace3d",
        description="HeCBench laplace3d: one Jacobi sweep of the 3-D Laplace equation, a thread per (i, j) "
        "column marching up k with three planes of a 32x8 block (and halo) in shared memory",
        cpu=laplace3d,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-6,
        atol=1e-7,
    ),
]
