"""hecbench/iso2dfd: one launch equals a NumPy leapfrog step on the interior (border untouched), the
initial wavelet squares by hand, and the data's grid."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench.iso2dfd import KERNELS, WAVELET, initialize, make_inputs, work

REGION = numba.njit(KERNELS[0].cpu)


@pytest.mark.parametrize("params", [KERNELS[0].test_point, {"rows": 40, "cols": 30, "iterations": 1, "block": 4}])
def test_step_equals_numpy(params):
    next_, prev, vel, c, rows, cols, block = make_inputs(params, 0)
    got = REGION(next_.copy(), prev, vel, c, rows, cols, block).reshape(rows, cols)
    p = prev.reshape(rows, cols).astype(np.float64)
    lap = p[1:-1, 2:] + p[1:-1, :-2] + p[2:, 1:-1] + p[:-2, 1:-1] - 4 * p[1:-1, 1:-1]
    expected = np.zeros((rows, cols))
    expected[1:-1, 1:-1] = 2 * p[1:-1, 1:-1] + float(c) * 2250000.0 * lap
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    assert np.abs(got).max() > 1.0  # the wavelet's peak doubled


def test_initial_wavelet_by_hand():
    prev, next_, vel = initialize(24, 24)
    p = prev.reshape(24, 24)
    assert p[12, 12] == WAVELET[1] and p[11, 11] == WAVELET[1]  # innermost 2 x 2 square (s = 1)
    assert p[10, 12] == WAVELET[2] and p[1, 1] == WAVELET[11] and p[0, 0] == 0
    assert not next_.any() and (vel == 2250000).all()


def test_measured_point_grid():
    assert work(KERNELS[0].points["2048 2048 1000"]) == (128 * 128 * 256, 256)
