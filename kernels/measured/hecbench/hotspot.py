"""HeCBench ``hotspot``: the kernel ``calc_temp``, one launch of Rodinia's pyramid (ghost-zone) thermal stencil
in HeCBench's single-precision form (RTX 3080).

HotSpot advances a chip's temperature on a ``grid x grid`` mesh by explicit steps of a heat equation: each
cell moves by ``step / Cap`` times its power plus its exchanges with the four neighbours (``1/Ry`` north and
south, ``1/Rx`` east and west) and with the ambient (80 degrees, ``1/Rz``); at the chip's edge a missing
neighbour is the cell itself. A ``16 x 16`` block stages a tile of temperature and power in shared memory,
advances it ``iteration`` steps in place (each step valid on a ring smaller by one cell: threads with
``i + 1 <= tx, ty <= 14 - i`` inside the chip), and writes its inner ``(16 - 2h) x (16 - 2h)`` cells.

Launch: blocks of 16 x 16, grid ``ceil(grid / (16 - 2h))`` each way; the data's point ``512 2 200 ...`` (grid,
pyramid height, iterations, temperature file, power file, output file; label = the arguments as the data has
them) gives 43 x 43 blocks, 473344 threads, two steps per launch. The timed launch is the first: source = the
initial temperature, destination = the second buffer (zeros here).

Differences from Rodinia's CUDA kernel (and from the ``amaris/hotspot`` port): HeCBench writes ``2.f``, so
the whole update is float32 (no double terms). Inputs: the program reads ``temp_512`` and ``power_512``
(Rodinia's data files, not at hand); the work does not depend on the values (no data-dependent branch), so
they are drawn as in the Amaris port: temperature uniform in [323.15, 343.15) K, power uniform in [0, MAX_PD x
cell area) W, NumPy's generator with ``seed``. Chip constants as the host computes them (float variables,
some fed by double expressions, as written).

CPU region: threads = global work items (``gid`` -> block, ``tx``, ``ty`` as CUDA numbers them); shared memory
is an array with one tile per block; the barriers split the work into phases, each a ``prange`` over all
threads: stage the tiles; per step compute the ring into ``temp_t``; between steps copy it back. Deliberate
differences: the registers a thread keeps across the barriers (its global index, the tile's valid range, the
clamped neighbours N, S, W, E) are a per-thread array written in the staging phase and read by the later
phases, which recompute only the block and thread numbers from ``gid`` (and ``step / Cap``, the three ``1 / R``,
as the kernel does once); the final store to global memory is done in the last step's phase (the kernel
stores after its loop, under the same flag).

Precision: float32 throughout, as HeCBench's source.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 16
MAX_PD = 3.0e6
PRECISION = 0.001
SPEC_HEAT_SI = 1.75e6
K_SI = 100
FACTOR_CHIP = 0.5
T_CHIP = np.float32(0.0005)
CHIP_HEIGHT = np.float32(0.016)
CHIP_WIDTH = np.float32(0.016)

LABEL = "512 2 200 ../data/hotspot/temp_512 ../data/hotspot/power_512 output_512.out"
POINTS = {LABEL: {"grid": 512, "pyramid_height": 2, "iterations": 200}}
#: one block of 256 threads on a 12 x 12 chip
TEST_POINT = {"grid": 12, "pyramid_height": 2, "iterations": 2}
#: the measured region has about 1e8 records: a 96 x 96 chip (8 x 8 blocks, 16384 threads)
FEATURE_POINT = {"grid": 96, "pyramid_height": 2, "iterations": 2}


@numba.njit
def _geometry(gid, block_cols, iteration, border_cols, border_rows, grid_cols, grid_rows):
    """A thread's block, position in the tile, global cell and the tile's valid range."""
    b = gid // (BLOCK * BLOCK)
    loc = gid - b * (BLOCK * BLOCK)
    by = b // block_cols
    bx = b - by * block_cols
    ty = loc // BLOCK
    tx = loc - ty * BLOCK
    small = BLOCK - iteration * 2
    blk_y = small * by - border_rows
    blk_x = small * bx - border_cols
    blk_ymax = blk_y + BLOCK - 1
    blk_xmax = blk_x + BLOCK - 1
    vymin = -blk_y if blk_y < 0 else 0
    vymax = BLOCK - 1 - (blk_ymax - grid_rows + 1) if blk_ymax > grid_rows - 1 else BLOCK - 1
    vxmin = -blk_x if blk_x < 0 else 0
    vxmax = BLOCK - 1 - (blk_xmax - grid_cols + 1) if blk_xmax > grid_cols - 1 else BLOCK - 1
    return b, tx, ty, blk_y + ty, blk_x + tx, vymin, vymax, vxmin, vxmax


def calc_temp(iteration, power, temp_src, temp_dst, grid_cols, grid_rows, border_cols, border_rows,
              block_cols, block_rows, cap, rx, ry, rz, step):
    """CPU region: one launch of ``calc_temp`` (``iteration`` steps of the pyramid); writes ``temp_dst``.

    Parameters
    ----------
    iteration : steps of this launch. power, temp_src, temp_dst : float32 ``grid_rows * grid_cols``.
    grid_cols, grid_rows, border_cols, border_rows, block_cols, block_rows : mesh, pyramid border, launch grid.
    cap, rx, ry, rz, step : float32 chip constants.

    Returns
    -------
    ``temp_dst``.
    """
    n_blocks = block_cols * block_rows
    n_threads = n_blocks * BLOCK * BLOCK
    temp_on_device = np.zeros((n_blocks, BLOCK, BLOCK), dtype=np.float32)  # shared
    power_on_device = np.zeros((n_blocks, BLOCK, BLOCK), dtype=np.float32)  # shared
    temp_t = np.zeros((n_blocks, BLOCK, BLOCK), dtype=np.float32)  # shared
    # the registers a thread keeps across the barriers: global index, valid range, clamped neighbours
    regs = np.empty((n_threads, 9), dtype=np.int64)
    # phase: geometry, and stage the tile
    for gid in numba.prange(n_threads):
        b, tx, ty, y, x, vymin, vymax, vxmin, vxmax = _geometry(gid, block_cols, iteration, border_cols,
                                                                border_rows, grid_cols, grid_rows)
        index = grid_cols * y + x
        if y >= 0 and y <= grid_rows - 1 and x >= 0 and x <= grid_cols - 1:
            temp_on_device[b, ty, tx] = temp_src[index]
            power_on_device[b, ty, tx] = power[index]
        regs[gid, 0] = index
        regs[gid, 1] = vymin
        regs[gid, 2] = vymax
        regs[gid, 3] = vxmin
        regs[gid, 4] = vxmax
        regs[gid, 5] = max(ty - 1, vymin)
        regs[gid, 6] = min(ty + 1, vymax)
        regs[gid, 7] = max(tx - 1, vxmin)
        regs[gid, 8] = min(tx + 1, vxmax)
    for i in range(iteration):
        # phase: the step's update of the ring; the last step stores to global memory
        for gid in numba.prange(n_threads):
            b = gid // (BLOCK * BLOCK)
            loc = gid - b * (BLOCK * BLOCK)
            ty = loc // BLOCK
            tx = loc - ty * BLOCK
            vymin, vymax, vxmin, vxmax = regs[gid, 1], regs[gid, 2], regs[gid, 3], regs[gid, 4]
            amb_temp = np.float32(80.0)
            step_div_cap = step / cap
            rx_1 = np.float32(1.0) / rx
            ry_1 = np.float32(1.0) / ry
            rz_1 = np.float32(1.0) / rz
            if (i + 1 <= tx <= BLOCK - i - 2 and i + 1 <= ty <= BLOCK - i - 2
                    and vxmin <= tx <= vxmax and vymin <= ty <= vymax):
                N, S, W, E = regs[gid, 5], regs[gid, 6], regs[gid, 7], regs[gid, 8]
                t = temp_on_device[b, ty, tx]
                temp_t[b, ty, tx] = t + step_div_cap * (
                    power_on_device[b, ty, tx]
                    + (temp_on_device[b, S, tx] + temp_on_device[b, N, tx] - np.float32(2.0) * t) * ry_1
                    + (temp_on_device[b, ty, E] + temp_on_device[b, ty, W] - np.float32(2.0) * t) * rx_1
                    + (amb_temp - t) * rz_1)
                if i == iteration - 1:
                    temp_dst[regs[gid, 0]] = temp_t[b, ty, tx]
        if i < iteration - 1:
            # phase: the ring's new values replace the tile's
            for gid in numba.prange(n_threads):
                b = gid // (BLOCK * BLOCK)
                loc = gid - b * (BLOCK * BLOCK)
                ty = loc // BLOCK
                tx = loc - ty * BLOCK
                vymin, vymax, vxmin, vxmax = regs[gid, 1], regs[gid, 2], regs[gid, 3], regs[gid, 4]
                if (i + 1 <= tx <= BLOCK - i - 2 and i + 1 <= ty <= BLOCK - i - 2
                        and vxmin <= tx <= vxmax and vymin <= ty <= vymax):
                    temp_on_device[b, ty, tx] = temp_t[b, ty, tx]
    return temp_dst


@cuda.jit
def _calc_temp_gpu(iteration, power, temp_src, temp_dst, grid_cols, grid_rows, border_cols, border_rows,
                   cap, rx, ry, rz, step):
    temp_on_device = cuda.shared.array((BLOCK, BLOCK), dtype=numba.float32)
    power_on_device = cuda.shared.array((BLOCK, BLOCK), dtype=numba.float32)
    temp_t = cuda.shared.array((BLOCK, BLOCK), dtype=numba.float32)
    amb_temp = numba.float32(80.0)
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    step_div_cap = step / cap
    rx_1 = numba.float32(1.0) / rx
    ry_1 = numba.float32(1.0) / ry
    rz_1 = numba.float32(1.0) / rz
    small = BLOCK - iteration * 2
    blk_y = small * by - border_rows
    blk_x = small * bx - border_cols
    blk_ymax = blk_y + BLOCK - 1
    blk_xmax = blk_x + BLOCK - 1
    y = blk_y + ty
    x = blk_x + tx
    index = grid_cols * y + x
    if y >= 0 and y <= grid_rows - 1 and x >= 0 and x <= grid_cols - 1:
        temp_on_device[ty, tx] = temp_src[index]
        power_on_device[ty, tx] = power[index]
    cuda.syncthreads()
    vymin = -blk_y if blk_y < 0 else 0
    vymax = BLOCK - 1 - (blk_ymax - grid_rows + 1) if blk_ymax > grid_rows - 1 else BLOCK - 1
    vxmin = -blk_x if blk_x < 0 else 0
    vxmax = BLOCK - 1 - (blk_xmax - grid_cols + 1) if blk_xmax > grid_cols - 1 else BLOCK - 1
    N = max(ty - 1, vymin)
    S = min(ty + 1, vymax)
    W = max(tx - 1, vxmin)
    E = min(tx + 1, vxmax)
    computed = False
    for i in range(iteration):
        computed = False
        if (i + 1 <= tx <= BLOCK - i - 2 and i + 1 <= ty <= BLOCK - i - 2
                and vxmin <= tx <= vxmax and vymin <= ty <= vymax):
            computed = True
            t = temp_on_device[ty, tx]
            temp_t[ty, tx] = t + step_div_cap * (
                power_on_device[ty, tx]
                + (temp_on_device[S, tx] + temp_on_device[N, tx] - numba.float32(2.0) * t) * ry_1
                + (temp_on_device[ty, E] + temp_on_device[ty, W] - numba.float32(2.0) * t) * rx_1
                + (amb_temp - t) * rz_1)
        cuda.syncthreads()
        if i == iteration - 1:
            break
        if computed:
            temp_on_device[ty, tx] = temp_t[ty, tx]
        cuda.syncthreads()
    if computed:
        temp_dst[index] = temp_t[ty, tx]


def _to_device(iteration, power, temp_src, temp_dst, grid_cols, grid_rows, border_cols, border_rows,
               block_cols, block_rows, cap, rx, ry, rz, step):
    return {"args": (iteration, cuda.to_device(power), cuda.to_device(temp_src), cuda.to_device(temp_dst),
                     grid_cols, grid_rows, border_cols, border_rows, cap, rx, ry, rz, step),
            "grid": (block_cols, block_rows)}


def _launch(s):
    _calc_temp_gpu[s["grid"], (BLOCK, BLOCK)](*s["args"])


def _from_device(s):
    return s["args"][3].copy_to_host()


def chip_constants(grid):
    """``(Cap, Rx, Ry, Rz, step)`` as HeCBench's host computes them for a ``grid x grid`` mesh."""
    f = np.float32
    gh = f(CHIP_HEIGHT / f(grid))
    gw = f(CHIP_WIDTH / f(grid))
    cap = f(FACTOR_CHIP * SPEC_HEAT_SI * float(T_CHIP) * float(gw) * float(gh))
    rx = f(gw / (f(2.0) * f(K_SI) * T_CHIP * gh))
    ry = f(gh / (f(2.0) * f(K_SI) * T_CHIP * gw))
    rz = f(T_CHIP / (f(K_SI) * gh * gw))
    max_slope = f(MAX_PD / (FACTOR_CHIP * float(T_CHIP) * SPEC_HEAT_SI))
    step = f(PRECISION / float(max_slope))
    return cap, rx, ry, rz, step


def launch_geometry(grid, pyramid_height):
    """The host's pyramid border and blocks per side."""
    small = BLOCK - pyramid_height * 2
    return pyramid_height, grid // small + (1 if grid % small else 0)


def make_inputs(params, seed):
    """The first launch's arguments (drawn temperature and power, zeroed destination, chip constants)."""
    grid, h = int(params["grid"]), int(params["pyramid_height"])
    iteration = min(h, int(params["iterations"]))
    rng = np.random.default_rng(seed)
    cell_area = (float(CHIP_HEIGHT) / grid) * (float(CHIP_WIDTH) / grid)
    temp = rng.uniform(323.15, 343.15, size=grid * grid).astype(np.float32)
    power = rng.uniform(0.0, MAX_PD * cell_area, size=grid * grid).astype(np.float32)
    border, blocks = launch_geometry(grid, h)
    return (iteration, power, temp, np.zeros(grid * grid, dtype=np.float32), grid, grid, border, border, blocks,
            blocks, *chip_constants(grid))


def work(params):
    _, blocks = launch_geometry(int(params["grid"]), int(params["pyramid_height"]))
    return blocks * blocks * BLOCK * BLOCK, BLOCK * BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="hotspot",
        kernel="calc_temp",
        description="HeCBench hotspot: one launch of the 16x16 pyramid thermal stencil (2 steps in shared "
        "memory, 12x12 tile kept per block), float32",
        cpu=calc_temp,
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
