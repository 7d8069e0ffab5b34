"""HeCBench extrema (kernels/measured/hecbench/extrema.py) against a NumPy formulation of the relative maxima
(shifted copies with clipped or wrapped edges) and a hand-worked example."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import extrema

R1 = numba.njit(extrema.relextrema_1d)
R2 = numba.njit(extrema.relextrema_2d)


def _numpy_1d(x, order, clip):
    n = x.size
    i = np.arange(n)
    ok = np.ones(n, dtype=bool)
    for o in range(1, order + 1):
        plus = np.minimum(i + o, n - 1) if clip else (i + o) % n
        minus = np.maximum(i - o, 0) if clip else (i - o) % n
        ok &= (x > x[plus]) & (x >= x[minus])
    return ok


@pytest.mark.parametrize("n,order,clip", [(1000, 2, True), (777, 3, False), (300, 1, True)])
def test_1d_equals_numpy(n, order, clip):
    args = list(extrema.make_inputs_1d({**extrema.TEST_POINT, "n": n, "order": order, "clip": clip}, 0))
    got = R1(*args)
    assert got.tolist() == _numpy_1d(args[3], order, clip).tolist()


@pytest.mark.parametrize("in_x,in_y,axis,clip", [(40, 24, 1, True), (33, 17, 0, False), (16, 50, 0, True)])
def test_2d_equals_numpy_along_each_axis(in_x, in_y, axis, clip):
    p = {**extrema.TEST_POINT, "in_x": in_x, "in_y": in_y, "axis": axis, "clip": clip, "order": 2}
    args = extrema.make_inputs_2d(p, 1)
    got = R2(*args).reshape(in_y, in_x)
    m = args[5].reshape(in_y, in_x)
    lines = m if axis == 1 else m.T
    want = np.array([_numpy_1d(line, 2, clip) for line in lines])
    assert got.tolist() == (want if axis == 1 else want.T).tolist()


def test_hand_worked_and_geometry():
    x = np.array([1, 3, 2, 5, 5, 0], dtype=np.int32)
    got = R1(6, 1, True, x, np.zeros(6, dtype=np.bool_), 256)
    # 3 > 2 and 3 >= 1; the first 5 is not > the second; the second 5 > 0 and >= 5
    assert got.tolist() == [False, True, False, False, True, False]
    assert extrema.work_1d(extrema.POINT) == (3907 * 256, 256)
    assert extrema.work_2d(extrema.POINT) == (63 * 63 * 256, 256)
    # the 2D matrix continues the rand() stream after the 1D tests' 32 n draws
    a = extrema.make_inputs_1d({**extrema.TEST_POINT, "n": 100}, 0)[3]
    b = extrema.make_inputs_2d({**extrema.TEST_POINT, "n": 3, "in_x": 10, "in_y": 10}, 0)[5]
    assert b.tolist() == [int(v) % 100 for v in extrema.glibc_rand(1, 196)[96:]]
    assert a.tolist() == [int(v) % 100 for v in extrema.glibc_rand(1, 100)]
