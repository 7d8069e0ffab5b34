"""hecbench/matrix-rotate: one launch equals NumPy's clockwise quarter turn (``rot90(m, -1)``), four launches
give the matrix back, and a hand-worked 3 x 3 case."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench.matrix_rotate import KERNELS, make_inputs, work

REGION = numba.njit(KERNELS[0].cpu)


@pytest.mark.parametrize("params", [KERNELS[0].test_point, {"n": 64, "repeat": 1, "block": 8}])
def test_one_launch_is_a_clockwise_quarter_turn(params):
    matrix, n, block = make_inputs(params, 0)
    expected = np.rot90(matrix.reshape(n, n), -1).copy()
    got = REGION(matrix.copy(), n, block)
    np.testing.assert_array_equal(got.reshape(n, n), expected)
    m = matrix.copy()
    for _ in range(4):
        m = REGION(m, n, block)
    np.testing.assert_array_equal(m, matrix)


def test_three_by_three_by_hand():
    m = np.arange(9, dtype=np.float32)
    # 0 1 2 / 3 4 5 / 6 7 8 -> 6 3 0 / 7 4 1 / 8 5 2
    assert REGION(m, 3, 32).tolist() == [6, 3, 0, 7, 4, 1, 8, 5, 2]


def test_measured_point_launches_ten_blocks():
    assert work(KERNELS[0].points["5000 100"]) == (2560, 256)
