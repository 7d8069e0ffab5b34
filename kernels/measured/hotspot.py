"""Rodinia 3.x hotspot, kernel ``calculate_temp``: one launch of the pyramid (ghost-zone) thermal stencil.

HotSpot estimates a chip's temperature on a square ``grid x grid`` mesh of cells by explicit time stepping
of a heat equation: one step moves every cell by ``step / Cap`` times its power plus its exchanges with the
four neighbours (resistances ``Rx`` east/west, ``Ry`` north/south) and with the ambient (``Rz``, 80 degrees).
At the chip's edge a missing neighbour is the cell itself (no exchange across the edge).

Launch geometry (as the data's rows show it): blocks of ``16 x 16`` threads; with pyramid height ``h`` (2 in
the data) a block stages a 16 x 16 tile of temperature and power in shared memory, advances it ``h`` steps
in place (each step valid on a ring smaller by one cell, so a block keeps only its inner
``(16 - 2h) x (16 - 2h)`` tile), and writes that tile. The grid is ``ceil(grid / (16 - 2h))`` blocks each way
(6x6 blocks for a 64-cell grid, 86x86 for 1024): global work items = blocks x 256. The host alternates two
temperature buffers and launches ``ceil(iterations / h)`` times; the data has one row per launch (the first
of a configuration is its lowest row number).

The region is the FIRST launch of a run: source = the initial temperature, destination = the second buffer;
every launch of a run does the same work (``min(h, iterations - t)`` steps, always ``h`` here), so the points
of one grid size differ only in the number of launches behind their rows.

Inputs: Rodinia reads the initial temperature and the power from its data files ``temp_<grid>`` and
``power_<grid>``; the work does not depend on the values (no data-dependent branch), so ``make_inputs`` draws
them: temperature uniform in [323.15, 343.15) K, power per cell uniform in [0, MAX_PD x cell area) W
(MAX_PD = 3e6 W/m^2, the power-density bound in Rodinia's constants). The step, the resistances and the
capacitance come from Rodinia's chip constants (16 mm x 16 mm, 0.5 mm thick, silicon) as its host computes
them, rounded to float32.

Arithmetic as the CUDA source does it: float32 storage, but the stencil's ``2.0 * T`` terms are double
literals, so the sums that contain them (and the final update) are computed in double and rounded to float
when stored (nvprof counts 4 double adds and 3 double FMAs per cell update; so does the PTX of the port);
neighbour sums, the ambient term and ``step / Cap``, ``1 / R`` stay float32.

CPU region: threads = global work items (``gid`` -> block, then ``tx``, ``ty`` as CUDA numbers them).
Shared memory is an array of tiles indexed by block. The kernel's barriers split the work into phases, each
a parallel loop over ALL global work items: stage the tile; then per step compute the new values on the
step's ring (``tile_new``), and (between steps) copy them back into the tile. Deliberate differences from the
CUDA kernel: a thread's index arithmetic (tile origin, valid range, clamped neighbours) is recomputed in every
phase (registers do not survive from one CPU loop to the next), and so are ``step / Cap`` and the three
``1 / R`` in each compute phase; the final store to global memory happens in the last step's phase (the
kernel stores after its loop, guarded by the same flag).

Precision: mixed, as the CUDA source: float32 but for the double sums and update above, which the trace records
as FP64_*: 10 double and 4 single operations per cell update, and 4 single divisions (``step / Cap`` and the
three ``1 / R``) per work item and step, so that 0.47 of the floating-point records are FP64 at the test point.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

BLOCK = 16  # threads per block edge (BLOCK_SIZE)
PYRAMID = 2  # steps per launch in the data (pyramid height)
GRIDS = (64, 128, 256, 512, 1024)
ITERATIONS = (256, 512, 768, 1024)

# chip constants of Rodinia's hotspot (SI units)
MAX_PD = 3.0e6
PRECISION = 0.001
SPEC_HEAT_SI = 1.75e6
K_SI = 100.0
FACTOR_CHIP = 0.5
T_CHIP = 0.0005
CHIP_HEIGHT = 0.016
CHIP_WIDTH = 0.016


@numba.njit
def _geometry(gid, block_cols, iteration, border_cols, border_rows, grid_cols, grid_rows):
    """One thread's place: its block, its position in the tile, the cell it stages, and the tile's valid
    range (positions inside the tile that fall on the chip)."""
    b = gid // (BLOCK * BLOCK)
    loc = gid - b * (BLOCK * BLOCK)
    by = b // block_cols
    bx = b - by * block_cols
    ty = loc // BLOCK
    tx = loc - ty * BLOCK
    small = BLOCK - 2 * iteration
    blk_y = small * by - border_rows
    blk_x = small * bx - border_cols
    blk_ymax = blk_y + BLOCK - 1
    blk_xmax = blk_x + BLOCK - 1
    y = blk_y + ty
    x = blk_x + tx
    vymin = -blk_y if blk_y < 0 else 0
    vymax = BLOCK - 1 - (blk_ymax - grid_rows + 1) if blk_ymax > grid_rows - 1 else BLOCK - 1
    vxmin = -blk_x if blk_x < 0 else 0
    vxmax = BLOCK - 1 - (blk_xmax - grid_cols + 1) if blk_xmax > grid_cols - 1 else BLOCK - 1
    return b, tx, ty, y, x, vymin, vymax, vxmin, vxmax


@numba.njit
def _on_ring(i, tx, ty, vymin, vymax, vxmin, vxmax):
    """Whether the thread's cell is updated at step ``i`` of the pyramid."""
    return (i + 1 <= tx <= BLOCK - i - 2 and i + 1 <= ty <= BLOCK - i - 2
            and vxmin <= tx <= vxmax and vymin <= ty <= vymax)


def calculate_temp(iteration, power, temp_src, temp_dst, grid_cols, grid_rows, border_cols, border_rows,
                   block_cols, block_rows, cap, rx, ry, rz, step):
    """CPU region: one launch of ``calculate_temp`` (``iteration`` steps of the pyramid).

    Parameters
    ----------
    iteration : int
        steps this launch takes (``min(pyramid height, iterations left)``).
    power, temp_src, temp_dst : numpy.ndarray
        float32 flat ``grid_rows * grid_cols`` arrays (row-major, as Rodinia); ``temp_dst`` is written.
    grid_cols, grid_rows, border_cols, border_rows, block_cols, block_rows : int
        mesh size, pyramid border (= pyramid height) and launch grid, as Rodinia's host computes them.
    cap, rx, ry, rz, step : numpy.float32
        capacitance, resistances and time step of one cell.

    Returns
    -------
    numpy.ndarray
        ``temp_dst``: the temperature after ``iteration`` steps.
    """
    n_blocks = block_cols * block_rows
    n_threads = n_blocks * BLOCK * BLOCK
    tile_t = np.empty((n_blocks, BLOCK, BLOCK), dtype=np.float32)  # shared: temperature of the tile
    tile_p = np.empty((n_blocks, BLOCK, BLOCK), dtype=np.float32)  # shared: power of the tile
    tile_new = np.empty((n_blocks, BLOCK, BLOCK), dtype=np.float32)  # shared: the step's result
    # phase 1: every thread stages its cell of the tile (when it is on the chip)
    for gid in numba.prange(n_threads):
        b, tx, ty, y, x, vymin, vymax, vxmin, vxmax = _geometry(gid, block_cols, iteration, border_cols,
                                                                border_rows, grid_cols, grid_rows)
        index = grid_cols * y + x
        if 0 <= y <= grid_rows - 1 and 0 <= x <= grid_cols - 1:
            tile_t[b, ty, tx] = temp_src[index]
            tile_p[b, ty, tx] = power[index]
    for i in range(iteration):
        # phase: the step's update on its ring, from the tile; the last step stores to global memory
        for gid in numba.prange(n_threads):
            b, tx, ty, y, x, vymin, vymax, vxmin, vxmax = _geometry(gid, block_cols, iteration, border_cols,
                                                                    border_rows, grid_cols, grid_rows)
            step_div_cap = step / cap
            rx_1 = np.float32(1.0) / rx
            ry_1 = np.float32(1.0) / ry
            rz_1 = np.float32(1.0) / rz
            amb = np.float32(80.0)
            north = max(ty - 1, vymin)
            south = min(ty + 1, vymax)
            west = max(tx - 1, vxmin)
            east = min(tx + 1, vxmax)
            if _on_ring(i, tx, ty, vymin, vymax, vxmin, vxmax):
                t = tile_t[b, ty, tx]
                twice = 2.0 * np.float64(t)
                ns = np.float64(tile_t[b, south, tx] + tile_t[b, north, tx]) - twice
                ew = np.float64(tile_t[b, ty, east] + tile_t[b, ty, west]) - twice
                flux = np.float64(tile_p[b, ty, tx]) + ns * ry_1 + ew * rx_1 + (amb - t) * rz_1
                tile_new[b, ty, tx] = np.float32(np.float64(t) + step_div_cap * flux)
                if i == iteration - 1:
                    temp_dst[grid_cols * y + x] = tile_new[b, ty, tx]
        if i < iteration - 1:
            # phase: the ring's new values replace the tile's for the next step
            for gid in numba.prange(n_threads):
                b, tx, ty, y, x, vymin, vymax, vxmin, vxmax = _geometry(gid, block_cols, iteration, border_cols,
                                                                        border_rows, grid_cols, grid_rows)
                if _on_ring(i, tx, ty, vymin, vymax, vxmin, vxmax):
                    tile_t[b, ty, tx] = tile_new[b, ty, tx]
    return temp_dst


@cuda.jit
def _calculate_temp_kernel(iteration, power, temp_src, temp_dst, grid_cols, grid_rows, border_cols, border_rows,
                           cap, rx, ry, rz, step):
    tile_t = cuda.shared.array((BLOCK, BLOCK), dtype=numba.float32)
    tile_p = cuda.shared.array((BLOCK, BLOCK), dtype=numba.float32)
    tile_new = cuda.shared.array((BLOCK, BLOCK), dtype=numba.float32)
    amb = np.float32(80.0)
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    step_div_cap = step / cap
    rx_1 = np.float32(1.0) / rx
    ry_1 = np.float32(1.0) / ry
    rz_1 = np.float32(1.0) / rz
    small = BLOCK - 2 * iteration
    blk_y = small * by - border_rows
    blk_x = small * bx - border_cols
    blk_ymax = blk_y + BLOCK - 1
    blk_xmax = blk_x + BLOCK - 1
    y = blk_y + ty
    x = blk_x + tx
    index = grid_cols * y + x
    if 0 <= y <= grid_rows - 1 and 0 <= x <= grid_cols - 1:
        tile_t[ty, tx] = temp_src[index]
        tile_p[ty, tx] = power[index]
    cuda.syncthreads()
    vymin = -blk_y if blk_y < 0 else 0
    vymax = BLOCK - 1 - (blk_ymax - grid_rows + 1) if blk_ymax > grid_rows - 1 else BLOCK - 1
    vxmin = -blk_x if blk_x < 0 else 0
    vxmax = BLOCK - 1 - (blk_xmax - grid_cols + 1) if blk_xmax > grid_cols - 1 else BLOCK - 1
    north = max(ty - 1, vymin)
    south = min(ty + 1, vymax)
    west = max(tx - 1, vxmin)
    east = min(tx + 1, vxmax)
    computed = False
    for i in range(iteration):
        computed = False
        if (i + 1 <= tx <= BLOCK - i - 2 and i + 1 <= ty <= BLOCK - i - 2
                and vxmin <= tx <= vxmax and vymin <= ty <= vymax):
            computed = True
            t = tile_t[ty, tx]
            twice = 2.0 * np.float64(t)
            ns = np.float64(tile_t[south, tx] + tile_t[north, tx]) - twice
            ew = np.float64(tile_t[ty, east] + tile_t[ty, west]) - twice
            flux = np.float64(tile_p[ty, tx]) + ns * ry_1 + ew * rx_1 + (amb - t) * rz_1
            tile_new[ty, tx] = np.float32(np.float64(t) + step_div_cap * flux)
        cuda.syncthreads()
        if i == iteration - 1:
            break
        if computed:
            tile_t[ty, tx] = tile_new[ty, tx]
        cuda.syncthreads()
    if computed:
        temp_dst[index] = tile_new[ty, tx]


def _to_device(iteration, power, temp_src, temp_dst, grid_cols, grid_rows, border_cols, border_rows,
               block_cols, block_rows, cap, rx, ry, rz, step):
    return {"args": (iteration, cuda.to_device(power), cuda.to_device(temp_src), cuda.to_device(temp_dst),
                     grid_cols, grid_rows, border_cols, border_rows, cap, rx, ry, rz, step),
            "grid": (block_cols, block_rows)}


def _launch(s):
    _calculate_temp_kernel[s["grid"], (BLOCK, BLOCK)](*s["args"])


def _from_device(s):
    return s["args"][3].copy_to_host()


def chip_constants(grid):
    """Capacitance, resistances and time step of one cell of a ``grid x grid`` mesh, as Rodinia's host
    computes them (double expressions of float chip sizes, stored as float32)."""
    f = np.float32
    grid_height = float(f(f(CHIP_HEIGHT) / f(grid)))
    grid_width = float(f(f(CHIP_WIDTH) / f(grid)))
    t_chip = float(f(T_CHIP))
    cap = f(FACTOR_CHIP * SPEC_HEAT_SI * t_chip * grid_width * grid_height)
    rx = f(grid_width / (2.0 * K_SI * t_chip * grid_height))
    ry = f(grid_height / (2.0 * K_SI * t_chip * grid_width))
    rz = f(t_chip / (K_SI * grid_height * grid_width))
    max_slope = f(MAX_PD / (FACTOR_CHIP * t_chip * SPEC_HEAT_SI))
    step = f(PRECISION / float(max_slope))
    return cap, rx, ry, rz, step


def launch_geometry(grid, pyramid_height):
    """Rodinia's host: border (halo) width and blocks per side for a ``grid x grid`` mesh."""
    border = pyramid_height
    small = BLOCK - 2 * pyramid_height
    blocks = (grid + small - 1) // small
    return border, blocks


def make_inputs(params, seed):
    """The first launch's arguments: random initial temperature and power (see the module docstring), the
    second temperature buffer (zeros: Rodinia's is uninitialised device memory, every cell gets written)."""
    grid = int(params["grid"])
    h = int(params.get("pyramid_height", PYRAMID))
    iteration = min(h, int(params["iterations"]))
    rng = np.random.default_rng(seed)
    cell_area = (CHIP_HEIGHT / grid) * (CHIP_WIDTH / grid)
    temp = rng.uniform(323.15, 343.15, size=grid * grid).astype(np.float32)
    power = rng.uniform(0.0, MAX_PD * cell_area, size=grid * grid).astype(np.float32)
    dst = np.zeros(grid * grid, dtype=np.float32)
    border, blocks = launch_geometry(grid, h)
    cap, rx, ry, rz, step = chip_constants(grid)
    return (iteration, power, temp, dst, grid, grid, border, border, blocks, blocks, cap, rx, ry, rz, step)


def work(params):
    """Global work items (blocks x 256 threads) and threads per block of one launch."""
    _, blocks = launch_geometry(int(params["grid"]), int(params.get("pyramid_height", PYRAMID)))
    return blocks * blocks * BLOCK * BLOCK, BLOCK * BLOCK


#: every (grid, iterations) configuration of the data (input.size.1, input.size.2)
POINTS = {f"grid{g}_it{it}": {"grid": g, "iterations": it, "pyramid_height": PYRAMID}
          for g in GRIDS for it in ITERATIONS}

KERNELS = [
    MeasuredKernel(
        source="amaris",
        application="hotspot",
        kernel="calculate_temp",
        description="Rodinia hotspot: one launch of the 16x16 pyramid stencil (2 steps, 12x12 tile kept per block)",
        cpu=calculate_temp,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point={"grid": 12, "iterations": 2, "pyramid_height": PYRAMID},  # one block of 256 threads
        data_sizes=lambda p: (p["grid"], p["iterations"]),
        rtol=1e-6,
        atol=1e-4,  # float32 temperatures near 330 (ulp 3e-5); a device may fuse the double mul-adds
    ),
]
