"""hecbench/hotspot/calc_temp: one launch of the pyramid equals two plain explicit float32 steps of the whole
mesh (edge cells reuse their own temperature), every cell written exactly by the tiles, and the launch
geometry is the data's."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.hotspot import KERNELS, chip_constants, make_inputs, work

SPEC = KERNELS[0]
REGION = numba.njit(SPEC.cpu)
DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _explicit_steps(temp, power, grid, steps, cap, rx, ry, rz, step):
    t = temp.reshape(grid, grid).astype(np.float64)
    p = power.reshape(grid, grid).astype(np.float64)
    k = float(step) / float(cap)
    for _ in range(steps):
        u = np.pad(t, 1, mode="edge")
        c = u[1:-1, 1:-1]
        t = c + k * (p + (u[2:, 1:-1] + u[:-2, 1:-1] - 2 * c) / float(ry)
                     + (u[1:-1, 2:] + u[1:-1, :-2] - 2 * c) / float(rx) + (80.0 - c) / float(rz))
    return t.ravel()


@pytest.mark.parametrize("params", [SPEC.test_point, {"grid": 30, "pyramid_height": 2, "iterations": 2},
                                    {"grid": 40, "pyramid_height": 2, "iterations": 200}])
def test_one_launch_is_two_explicit_steps(params):
    args = list(make_inputs(params, 4))
    args[3] = np.full_like(args[3], np.nan)
    before = args[2].copy()
    out = REGION(*args)
    assert not np.isnan(out).any()
    grid = args[4]
    ref = _explicit_steps(before, args[1], grid, 2, *args[10:])
    assert np.abs(ref - before).max() > 0.02
    np.testing.assert_allclose(out, ref, rtol=0, atol=2e-4)
    assert np.abs(_explicit_steps(before, args[1], grid, 1, *args[10:]) - out).max() > 5e-3


def test_chip_constants_are_positive_and_scale_with_the_mesh():
    cap, rx, ry, rz, step = (float(v) for v in chip_constants(512))
    assert rx == pytest.approx(ry) and cap > 0 and rz > 0 and step > 0
    cap2, rx2, _, rz2, _ = (float(v) for v in chip_constants(256))
    assert cap2 == pytest.approx(4 * cap, rel=1e-5) and rz2 == pytest.approx(rz / 4, rel=1e-5)
    assert rx2 == pytest.approx(rx, rel=1e-6)  # square cells: Rx does not depend on the mesh


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as f:
        d = pd.read_csv(f)
    row = d[(d.targetName == "hotspot-cuda") & (d.kernelName == SPEC.kernel)].iloc[0]
    assert list(SPEC.points) == [row.exeArgs]
    gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
    bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
    assert work(SPEC.points[row.exeArgs]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
