"""The projectile port (kernels/measured/hecbench/projectile.py) against the ballistic formulas in NumPy and a
hand-worked projectile."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import projectile

REGION = numba.njit(projectile.calculate_range)


@pytest.mark.parametrize("n,seed", [(1000, 0), (777, 3)])
def test_region_equals_numpy(n, seed):
    obj, pobj, ne, nt = projectile.make_inputs({"num_elements": n}, seed)
    got = REGION(obj, pobj, ne, nt)
    a, v = obj[:, 0].astype(np.float64), obj[:, 1].astype(np.float64)
    # the angle in radians rounded to float32 as the kernel forms it (near 90 degrees the cosine, and so the
    # range, is sensitive to that rounding); the rest in float64
    rad = (obj[:, 0] * np.float32(3.1415) / np.float32(180.0)).astype(np.float64)
    t = np.abs(2 * v * np.sin(rad)) / 9.81
    want = np.stack([a, v, np.abs(v * t * np.cos(rad)), t, v * v * np.sin(rad) ** 2 / 2 * 9.81], axis=1)
    np.testing.assert_allclose(got, want, rtol=2e-5)
    # the host's draws: angles in [10, 99], velocities in [10, 409]
    assert a.min() >= 10 and a.max() <= 99 and v.min() >= 10 and v.max() <= 409


def test_hand_worked_projectile():
    obj = np.ones((1, 5), np.float32)
    obj[0, :2] = (30.0, 100.0)
    pobj = np.zeros((1, 5), np.float32)
    out = projectile.calculate_range(obj, pobj, 1, 256)
    s, c = np.sin(30 * 3.1415 / 180), np.cos(30 * 3.1415 / 180)
    assert out[0, 3] == pytest.approx(200 * s / 9.81, rel=1e-6)  # about 10.19 s
    assert out[0, 2] == pytest.approx(100 * (200 * s / 9.81) * c, rel=1e-6)
    assert out[0, 4] == pytest.approx(1e4 * s * s / 2 * 9.81, rel=1e-6)  # the original multiplies by g
    assert tuple(out[0, :2]) == (30.0, 100.0)


def test_original_first_draws_and_work():
    obj = projectile.make_inputs({"num_elements": 2}, 0)[0]
    # glibc srand(2): first rand() values 1505335290, 1738766719, 190686788, 260874575
    assert tuple(obj[:, 0]) == (1505335290 % 90 + 10, 190686788 % 90 + 10)
    assert tuple(obj[:, 1]) == (1738766719 % 400 + 10, 260874575 % 400 + 10)
    assert projectile.work(projectile.POINTS["1000"]) == (39063 * 256, 256)
