"""The cooling port (kernels/measured/hecbench/cooling.py) against a vectorised NumPy evaluation of Katz et al.'s
rates (the closed-form densities, heat_flag 0), over the measured range with its NaN results and over a
positive range, and hand-checked limits."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import cooling

REGION = numba.njit(cooling.cool_kernel)


def _numpy_cool(t, n=cooling.DENSITY):
    # the kernel's expressions in its order of operations (the low-temperature results are dominated by the
    # cancellation in n_hp = n_h - n_h0, so a different rounding order would change them completely)
    with np.errstate(all="ignore"):
        y = 0.24 / (4 - 4 * 0.24)
        sq = np.sqrt(t)
        hot = 1.0 / (1.0 + np.sqrt(t / 1e5))
        p2, p7 = np.power(t / 1e3, -0.2), 1.0 / (1.0 + np.power(t / 1e6, 0.7))
        a_hp = 8.4e-11 * (1.0 / sq) * p2 * p7
        a_hep = 1.5e-10 * np.power(t, -0.6353)
        a_d = 1.9e-3 * np.power(t, -1.5) * np.exp(-470000.0 / t) * (1.0 + 0.3 * np.exp(-94000.0 / t))
        a_hepp = 3.36e-10 * (1.0 / sq) * p2 * p7
        g_eh0 = 5.85e-11 * sq * np.exp(-157809.1 / t) * hot
        g_ehe0 = 2.38e-11 * sq * np.exp(-285335.4 / t) * hot
        g_ehep = 5.68e-12 * sq * np.exp(-631515.0 / t) * hot
        h0 = n * a_hp / (a_hp + g_eh0)
        hp = n - h0
        hep = y * n / (1.0 + (a_hep + a_d) / g_ehe0 + g_ehep / a_hepp)
        he0 = hep * (a_hep + a_d) / g_ehe0
        hepp = hep * g_ehep / a_hepp
        e = hp + hep + 2 * hepp
        rates = [7.50e-19 * np.exp(-118348.0 / t) * hot * e * h0,
                 5.54e-17 * np.power(t, -0.397) * np.exp(-473638.0 / t) * hot * e * hep,
                 1.27e-21 * sq * np.exp(-157809.1 / t) * hot * e * h0,
                 9.38e-22 * sq * np.exp(-285335.4 / t) * hot * e * he0,
                 4.95e-22 * sq * np.exp(-631515.0 / t) * hot * e * hep,
                 8.70e-27 * sq * p2 * p7 * e * hp,
                 1.55e-26 * np.power(t, 0.3647) * e * hep,
                 3.48e-26 * sq * p2 * p7 * e * hepp,
                 1.24e-13 * np.power(t, -1.5) * np.exp(-470000.0 / t) * (1.0 + 0.3 * np.exp(-94000.0 / t)) * e * hep,
                 1.42e-27 * (1.1 + 0.34 * np.exp(-(5.5 - np.log(t)) * (5.5 - np.log(t)) / 3.0)) * sq
                 * (hp + hep + 4 * hepp) * e]
        total = rates[0]
        for r_ in rates[1:]:
            total = total + r_
        return total


@pytest.mark.parametrize("num,t_min", [(500, 20_000.0), (3000, 1e5)])
def test_region_equals_numpy(num, t_min):
    inputs = cooling.make_inputs({"num": num, "t_min": t_min, "heat_flag": 0}, 0)
    got = REGION(*inputs)
    np.testing.assert_allclose(got, _numpy_cool(inputs[2]), rtol=1e-12, atol=0)
    assert np.all(got > 0)  # net cooling (no photoheating with heat_flag 0)


def test_measured_range_nan_as_in_the_original():
    num = 20_000
    inputs = cooling.make_inputs({"num": num, "t_min": -275.0, "heat_flag": 0}, 0)
    got = REGION(*inputs)
    want = _numpy_cool(inputs[2])
    # the negative temperatures and zero give NaN (square roots, fractional powers); at the positive ones (all
    # below 275 K) exp(-285335.4 / T) underflows to 0, He0 = He+ (alpha_He+ + alpha_d) / 0 = 0 / 0: NaN too
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.all(np.isnan(got))
    # from about 450 K up (T in [450, 1350) here) the results are finite
    warm = REGION(*cooling.make_inputs({"num": 1000, "t_min": 450.0, "heat_flag": 0}, 0))
    assert np.all(np.isfinite(warm)) and np.all(warm >= 0)


def test_temperatures_and_work():
    t = cooling.temperatures(1_000_000, -275.0)
    assert t[0] == -275.0 and t[500_000] == 0.0 and t[-1] == pytest.approx(275.0 - 550e-6, rel=1e-12)
    assert cooling.work(cooling.POINTS["1000000 1000"]) == (3907 * 256, 256)


def test_free_free_dominates_when_hot():
    # at 10^8 K hydrogen and helium are fully ionised: bremsstrahlung dominates the net rate
    inputs = cooling.make_inputs({"num": 1, "t_min": 1e8, "heat_flag": 0}, 0)
    got = cooling.cool_kernel(*inputs)[0]
    n = cooling.DENSITY
    y = 0.24 / (4 - 4 * 0.24)
    g_ff = 1.1 + 0.34 * np.exp(-(5.5 - np.log(1e8)) ** 2 / 3.0)
    e = n + 2 * y * n
    assert got == pytest.approx(1.42e-27 * g_ff * np.sqrt(1e8) * (n + 4 * y * n) * e, rel=0.05)
