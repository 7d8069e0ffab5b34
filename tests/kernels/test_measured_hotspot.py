"""amaris/hotspot/calculate_temp: one launch of the pyramid stencil equals two plain explicit steps of the
heat equation on the whole mesh (edge cells reuse their own temperature for a missing neighbour), a point
of heat spreads as worked out by hand, and the launch geometry is the data's."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hotspot import KERNELS, POINTS, calculate_temp, launch_geometry, make_inputs, work

SPEC = KERNELS[0]
REGION = numba.njit(calculate_temp)


def _explicit_steps(temp, power, grid, steps, cap, rx, ry, rz, step):
    """Plain NumPy: ``steps`` explicit steps of the whole mesh, double arithmetic, float32 after each step."""
    t = temp.reshape(grid, grid).astype(np.float32)
    p = power.reshape(grid, grid).astype(np.float64)
    k = float(step) / float(cap)
    for _ in range(steps):
        u = np.pad(t.astype(np.float64), 1, mode="edge")
        c = u[1:-1, 1:-1]
        vertical = (u[:-2, 1:-1] + u[2:, 1:-1] - 2.0 * c) / float(ry)
        horizontal = (u[1:-1, :-2] + u[1:-1, 2:] - 2.0 * c) / float(rx)
        t = (c + k * (p + vertical + horizontal + (80.0 - c) / float(rz))).astype(np.float32)
    return t.ravel()


def _run(params, seed, region=REGION):
    args = list(make_inputs(params, seed))
    args[3] = np.full_like(args[3], np.nan)  # every cell of the mesh must be written by exactly the tiles
    before = args[2].copy()
    out = region(*args)
    return args, before, out


@pytest.mark.parametrize("params", [SPEC.test_point, {"grid": 30, "iterations": 256}, {"grid": 64, "iterations": 256}])
def test_one_launch_is_two_explicit_steps_of_the_whole_mesh(params):
    args, before, out = _run(params, 4)
    iteration, power, _, _, grid = args[:5]
    cap, rx, ry, rz, step = args[10:]
    assert iteration == 2
    assert not np.isnan(out).any()
    ref = _explicit_steps(before, power, grid, 2, cap, rx, ry, rz, step)
    change = ref - before
    assert np.abs(change).max() > 0.02  # the comparison below resolves the change to 0.5% or better
    np.testing.assert_allclose(out - before, change, rtol=0, atol=1e-4)
    # one step is far off: the pyramid really takes two
    assert np.abs(_explicit_steps(before, power, grid, 1, cap, rx, ry, rz, step) - out).max() > 5e-3


def _impulse_args(grid, y, x):
    """Mesh at the ambient 80 degrees with one cell 1 degree hotter, no power; a = step/Cap/R = 1/8 each way,
    c = step/Cap/Rz = 1/16 (exact binary fractions)."""
    border, blocks = launch_geometry(grid, 2)
    temp = np.full(grid * grid, 80.0, dtype=np.float32)
    temp[y * grid + x] = 81.0
    power = np.zeros(grid * grid, dtype=np.float32)
    dst = np.full(grid * grid, np.nan, dtype=np.float32)
    f = np.float32
    return (2, power, temp, dst, grid, grid, border, border, blocks, blocks, f(1.0), f(1.0), f(1.0), f(2.0), f(0.125))


def test_a_point_of_heat_across_tile_edges_spreads_as_worked_out_by_hand():
    # u' = u + a (sum of the 4 neighbours - 4u) - c u, twice, from u = delta at (11, 12): the cell sits on the
    # corner of four blocks' kept tiles (x 11|12, y 11|12), so the halo of each block must carry it.
    # With p = 1 - 4a - c = 7/16: centre p^2 + 4a^2, distance 1: 2ap, distance 2 straight a^2, diagonal 2a^2.
    grid, y0, x0 = 30, 11, 12
    out = REGION(*_impulse_args(grid, y0, x0)).reshape(grid, grid) - np.float32(80.0)
    a, p = 0.125, 0.4375
    want = np.zeros((grid, grid))
    want[y0, x0] = p * p + 4 * a * a
    for dy, dx in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        want[y0 + dy, x0 + dx] = 2 * a * p
        want[y0 + 2 * dy, x0 + 2 * dx] = a * a
    for dy, dx in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        want[y0 + dy, x0 + dx] = 2 * a * a
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-5)
    assert want[y0, x0] == 0.25390625 and want[y0, x0 + 1] == 0.109375


def test_the_chip_edge_reuses_the_cell_itself_for_a_missing_neighbour():
    # heat at the corner (0, 0): step 1 leaves p = 1 - 2a - c there (two neighbours missing), a on (0, 1) and
    # (1, 0); step 2 gives p^2 + 2a^2 at the corner. Nothing leaves the chip: the excess only decays by the
    # ambient term, (1 - c) per step.
    grid = 20
    out = REGION(*_impulse_args(grid, 0, 0)).reshape(grid, grid).astype(np.float64) - 80.0
    a, c = 0.125, 0.0625
    p = 1 - 2 * a - c
    assert abs(out[0, 0] - (p * p + 2 * a * a)) < 1e-5
    assert abs(out.sum() - (1 - c) ** 2) < 1e-4


def test_gpu_port_on_several_blocks_matches_the_region():
    # 2 x 2 blocks (the generic test's point is a single block): the halos come from the neighbours' cells
    params = {"grid": 20, "iterations": 512}
    assert work(params) == (4 * 256, 256)
    args = make_inputs(params, 1)
    SPEC.check(REGION(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]), SPEC.gpu.run(*args))


def test_launch_geometry_is_the_datas():
    # the data's rows (every GPU): grid.x = grid.y, block 16 x 16, warps_launched, per input.size.1
    data = {64: (6, 288), 128: (11, 968), 256: (22, 3872), 512: (43, 14792), 1024: (86, 59168)}
    assert len(POINTS) == 20
    assert {(p["grid"], p["iterations"]) for p in POINTS.values()} == {
        (g, it) for g in data for it in (256, 512, 768, 1024)}
    for params in POINTS.values():
        blocks, warps = data[params["grid"]]
        assert launch_geometry(params["grid"], 2) == (2, blocks)
        assert work(params) == (blocks * blocks * 256, 256)
        assert work(params)[0] // 32 == warps
