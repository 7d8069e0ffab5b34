"""The inversek2j port (kernels/measured/hecbench/inversek2j.py) against a vectorised NumPy formulation of the
coordinate-descent sweeps and a hand-worked target."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import inversek2j as ik

REGION = numba.njit(ik.invkin)


def _numpy_invkin(x, y, max_loop):
    x = x.astype(np.float64)
    y = y.astype(np.float64)
    out = np.zeros((x.size, 3))
    for _ in range(max_loop):
        for it in (3, 2, 1):
            pc = it - 1.0
            a = np.array([3.0 - pc, 0.0]) / (3.0 - pc)
            bx, by = x - pc, y
            norm = np.hypot(bx, by)
            bx, by = bx / norm, by / norm
            angle = np.degrees(np.arccos(np.clip(a[0] * bx + a[1] * by, -1.0, 1.0)))
            angle = np.where(a[0] * by - a[1] * bx < 0, -angle, angle)
            out[:, it - 1] = np.clip(angle, -30.0, 30.0)
            out[:, 1] += out[:, 0]
            out[:, 2] += out[:, 1]
    return out.ravel()


@pytest.mark.parametrize("size,max_loop,seed", [(300, 4, 0), (1000, 25, 1)])
def test_region_equals_numpy(size, max_loop, seed):
    inputs = ik.make_inputs({"size": size, "max_loop": max_loop}, seed)
    got = REGION(*inputs)
    np.testing.assert_allclose(got, _numpy_invkin(inputs[0], inputs[1], max_loop), rtol=1e-3, atol=2e-3)


def test_hand_worked_target():
    # target (2, 1), one sweep: joint 2 sees 90 degrees (clamped to 30; the chain sum makes angle 2 30),
    # joint 1 45 (clamped to 30; angle 2 becomes 30 + 30), joint 0 atan(1/2) = t (angle 1 30 + t, angle 2
    # 60 + 30 + t)
    x, y = np.array([2.0], np.float32), np.array([1.0], np.float32)
    got = ik.invkin(x, y, np.zeros(3, np.float32), 1, 1, 128)
    t = math.degrees(math.atan(0.5))
    np.testing.assert_allclose(got, [t, 30.0 + t, 90.0 + t], rtol=1e-5)
    # a target on the arm's axis needs no rotation
    assert ik.invkin(np.array([2.5], np.float32), np.array([0.0], np.float32), np.zeros(3, np.float32), 1, 25,
                     128).tolist() == [0.0, 0.0, 0.0]


def test_targets_are_reachable_and_work():
    x, y = ik.targets(1000, 0)
    assert np.all(np.hypot(x, y) <= 3.0 + 1e-6)
    assert ik.work(ik.POINTS["../inversek2j-sycl/coord_in.txt 100000"]) == (32768, 128)
