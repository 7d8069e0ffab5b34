"""The rotary port against a NumPy rotation and hand-worked values; a short last block is guarded."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import rotary

REGION = numba.njit(rotary.rotary)


@pytest.mark.parametrize("blocks", [rotary.TEST_POINT["blocks"], 3])
def test_region_equals_numpy_rotation(blocks):
    N, o1, o2, x1, x2, c, s, n = rotary.make_inputs({"blocks": blocks}, 0)
    got1, got2 = REGION(N, o1, o2, x1, x2, c, s, n)
    x1, x2, c, s = (a.astype(np.float64) for a in (x1, x2, c, s))
    np.testing.assert_allclose(got1, x1 * c - x2 * s, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got2, x1 * s + x2 * c, rtol=1e-5, atol=1e-7)
    # element 0: x = 1 / N, angle 0 -> (1 / N, 1 / N)
    assert got1[0] == pytest.approx(1.0 / N) and got2[0] == pytest.approx(1.0 / N)


def test_short_last_block_leaves_the_rest():
    # 600 elements: block 1 has 88, so threads 88 ... 127 of block 1 do nothing
    z = np.zeros(1024, np.float32)
    ones = np.ones(1024, np.float32)
    o1, o2 = REGION(600, z.copy(), z.copy(), ones, 2 * ones, ones, z, 256)
    assert np.all(o1[:600] == 1) and np.all(o2[:600] == 2) and not o1[600:].any() and not o2[600:].any()
