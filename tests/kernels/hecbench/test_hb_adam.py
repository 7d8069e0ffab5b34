"""The adam port against a float64 NumPy Adam and a hand-worked single step."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import adam

REGION = numba.njit(adam.adam)


@pytest.mark.parametrize("params,seed", [(adam.TEST_POINT, 0), ({"vector_size": 300, "time_step": 7}, 1)])
def test_region_equals_numpy_adam(params, seed):
    inputs = adam.make_inputs(params, seed)
    p, m, v, g = (x.astype(np.float64) for x in inputs[:4])
    c = adam.CONSTANTS
    for t in range(1, params["time_step"] + 1):
        sg = g / c["grad_scale"]
        m = c["b1"] * m + (1 - c["b1"]) * sg
        v = c["b2"] * v + (1 - c["b2"]) * sg * sg
        mh, vh = m / (1 - c["b1"] ** t), v / (1 - c["b2"] ** t)
        p = p - c["step_size"] * (mh / np.sqrt(vh + c["eps"]) + c["decay"] * p)
    got_p, got_m, got_v = REGION(*[x.copy() if isinstance(x, np.ndarray) else x for x in inputs])
    np.testing.assert_allclose(got_m, m, rtol=1e-5)
    np.testing.assert_allclose(got_v, v, rtol=1e-5)
    np.testing.assert_allclose(got_p, p, rtol=1e-5, atol=1e-5)


def test_one_step_by_hand():
    f = np.float32
    p, m, v, g = (np.array([x], dtype=np.float32) for x in (1.0, 0.0, 0.0, 256.0))
    # g' = 1, m = 0.1, v = 0.001, m_hat = 1, v_hat = 1, update = 1 / sqrt(1 + 1e-8) + 0.5 * 1 ~ 1.5
    got_p, got_m, got_v = REGION(p, m, v, g, f(0.9), f(0.999), f(1e-8), f(256), f(1e-3), 1, 1, f(0.5), 256)
    assert got_m[0] == pytest.approx(0.1, rel=1e-6) and got_v[0] == pytest.approx(0.001, rel=1e-4)
    assert got_p[0] == pytest.approx(1.0 - 1.5e-3, rel=1e-6)
