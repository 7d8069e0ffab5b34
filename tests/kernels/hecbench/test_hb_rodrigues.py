"""The rodrigues port (kernels/measured/hecbench/rodrigues.py) against a rotation matrix built by NumPy from the
axis-angle formula, and the launch geometry of the data's first launches."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench import rodrigues as rod

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _matrix(w, angle):
    # R = cos I + sin [w]x + (1 - cos) w w^T (the rotation by +angle of column vectors), in double precision
    w = np.asarray(w, dtype=np.float64)
    k = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    return np.cos(angle) * np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * np.outer(w, w)


@pytest.mark.parametrize("kernel,width", [("rotate", 3), ("rotate2", 4)])
@pytest.mark.parametrize("n,seed", [(1000, 0), (77, 2)])
def test_region_equals_numpy_rotation(kernel, width, n, seed):
    spec = next(k for k in rod.KERNELS if k.kernel == kernel)
    inputs = spec.make_inputs({"n": n, "repeat": 1}, seed)
    before = inputs[5].copy()
    assert np.allclose(np.linalg.norm(before[:, :3].astype(np.float64), axis=1), 1.0, atol=1e-6)
    got = numba.njit(spec.cpu)(*copy.deepcopy(inputs))
    # the original's m1..m9 are R's entries by columns (m2 = R[1, 0]): out = R^T p, the rotation by -angle
    want = before[:, :3].astype(np.float64) @ _matrix(inputs[2:5], 0.5)
    np.testing.assert_allclose(got[:, :3], want, rtol=0, atol=2e-6)
    if width == 4:
        assert np.all(got[:, 3] == 0)
    # a rotation keeps lengths and the component along the axis
    np.testing.assert_allclose(np.linalg.norm(got[:, :3], axis=1), 1.0, atol=2e-6)
    w = np.array(inputs[2:5], dtype=np.float64)
    np.testing.assert_allclose(got[:, :3] @ w, before[:, :3] @ w, atol=2e-6)


def test_hand_worked_quarter_turn_about_z():
    d = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    got = rod.rotate(3, np.float32(np.pi / 2), np.float32(0), np.float32(0), np.float32(1), d, 256)
    # out = R^T p turns by -90 degrees: x goes to -y, y to x, z stays
    np.testing.assert_allclose(got, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-6)


def test_first_points_are_the_hosts_rand_draws():
    d = rod.make_points(2, 0, 3)
    r = rod.glibc_rand(123, 6).astype(np.float64)
    np.testing.assert_allclose(d[1], r[3:6] / np.linalg.norm(r[3:6]), rtol=1e-6)


def test_work_equals_the_datas_first_launch():
    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in rod.KERNELS:
        row = df[(df.targetName == "rodrigues-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["1000000 10000"]) == (grid * block, block)
