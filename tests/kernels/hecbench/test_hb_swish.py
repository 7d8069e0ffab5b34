"""The swish ports against float64 NumPy formulas and hand-worked values."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import swish

SWISH = numba.njit(swish.swish)
GRAD = numba.njit(swish.swish_gradient)


@pytest.mark.parametrize("N,seed", [(1000, 0), (777, 1)])
def test_swish_and_gradient_equal_numpy(N, seed):
    n, X, Y, threads = swish.make_swish_inputs({"N": N}, seed)
    x = X.astype(np.float64)
    sig = 1.0 / (1.0 + np.exp(-x))
    got = SWISH(n, X, Y, threads)
    np.testing.assert_allclose(got, x * sig, rtol=1e-5, atol=1e-6)
    n, X, Y, dY, dX, threads = swish.make_gradient_inputs({"N": N}, seed)
    np.testing.assert_allclose(Y, x * sig, rtol=1e-5, atol=1e-6)
    y = x * sig
    want = dY.astype(np.float64) * (y + (1.0 - y) * sig)
    np.testing.assert_allclose(GRAD(n, X, Y, dY, dX, threads), want, rtol=1e-4, atol=1e-5)
    assert X.min() >= -2 and X.max() < 2 and threads == (N + 255) // 256 * 256


def test_by_hand():
    X = np.array([0.0, 2.0], np.float32)
    Y = SWISH(2, X, np.zeros(2, np.float32), 256)
    assert Y[0] == 0.0 and Y[1] == pytest.approx(2.0 / (1.0 + np.exp(-2.0)), rel=1e-6)
    # at x = 0: dX = dY * (0 + 1 * 0.5) = dY / 2
    dX = GRAD(1, X[:1], Y[:1], np.array([3.0], np.float32), np.zeros(1, np.float32), 256)
    assert dX[0] == 1.5
