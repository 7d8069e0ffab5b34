"""The cobahh port (kernels/measured/hecbench/cobahh.py) against the original's expressions written out in full
(every repeated subexpression evaluated again, in double precision), and the host's refractory test."""

from __future__ import annotations

import copy

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import cobahh as cb

REGION = numba.njit(cb.cobahh)


def _original_expressions(h, m, n, ge, v, gi, dt):
    h, m, n, ge, v, gi = (a.astype(np.float64) for a in (h, m, n, ge, v, gi))
    L = {k: float(getattr(cb, f"L{k}")) for k in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                                                  20, 21, 22, 24, 25, 26, 27, 28, 29, 30, 31, 32)}
    dt = float(dt)
    with np.errstate(over="ignore"):
        ex = lambda a: np.exp(a)  # noqa: E731
        ba_h = (L[2] * ex(L[3] * v)) / (((-4.0) / (0.001 + (L[4] * ex(L[5] * v)))) - (L[2] * ex(L[3] * v)))
        new_h = -ba_h + (ba_h + h) * ex(dt * (((-4.0) / (0.001 + (L[4] * ex(L[5] * v)))) - (L[2] * ex(L[3] * v))))
        D7 = lambda: L[7] + L[8] * ex(L[9] * v)  # noqa: E731
        D13 = lambda: L[13] + L[14] * ex(L[15] * v)  # noqa: E731
        den_m = ((((L[11] / D7()) + (L[12] / D13())) + (L[16] / D13())) + ((0.32 * v) / D7())) - (
            (L[10] / D7()) + ((0.28 * v) / D13()))
        ba_m = (((L[6] / D7()) + (L[10] / D7())) - ((0.32 * v) / D7())) / den_m
        new_m = -ba_m + (ba_m + m) * ex(dt * den_m)
        D18 = lambda: L[7] + L[18] * ex(L[5] * v)  # noqa: E731
        den_n = ((L[20] / D18()) + ((0.032 * v) / D18())) - ((L[19] / D18()) + (L[21] * ex(L[22] * v)))
        ba_n = (((L[17] / D18()) + (L[19] / D18())) - ((0.032 * v) / D18())) / den_n
        new_n = -ba_n + (ba_n + n) * ex(dt * den_n)
        den_v = (L[29] + (L[30] * (n * n * n * n))) - (((L[31] * (h * (m * m * m))) + (L[32] * ge)) + (L[32] * gi))
        ba_v = (L[24] + ((((L[25] * (n * n * n * n)) + (L[26] * (h * (m * m * m)))) + (L[27] * ge)) + (L[28] * gi))
                ) / den_v
        new_v = -ba_v + (ba_v + v) * ex(dt * den_v)
    return new_h, new_m, new_n, new_v


@pytest.mark.parametrize("n,seed", [(500, 0), (3000, 1)])
def test_region_equals_the_original_expressions(n, seed):
    inputs = cb.make_inputs({"n": n, "iterations": 1}, seed)
    h, m, nn, ge, v, gi, last = (a.copy() for a in inputs[:7])
    got = REGION(*copy.deepcopy(inputs))
    want = _original_expressions(h, m, nn, ge, v, gi, inputs[9])
    for g, w in zip((got[0], got[1], got[2], got[4]), want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(got[3], ge * np.exp(-0.2), rtol=1e-5)
    np.testing.assert_allclose(got[5], gi * np.exp(-0.01), rtol=1e-5)
    # refractory: t - lastspike >= 3 ms, i.e. lastspike = 1 / k with k >= 143
    k = np.rint(1.0 / last[1:]).astype(int)
    np.testing.assert_array_equal(got[6][1:], (k >= 143).astype(np.int8))
    assert 0 < got[6].sum() < n


def test_host_state_and_constants():
    h, m, nn, ge, v, gi, last = cb.initial_state(3, 0)
    assert ge[0] == 0.0 and last[0] == 0.0
    assert np.all(np.isclose(v[1:], 0.05) | np.isclose(v[1:], 1.25))
    assert np.all(np.isclose(ge[1:], 0.05) | np.isclose(ge[1:], 0.25))
    assert cb.timestep(np.float32(0.003), cb.DT) == 30
    assert cb.work(cb.POINTS["1000000 10"]) == (3907 * 256, 256)
