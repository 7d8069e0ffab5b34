"""The romberg port (kernels/measured/hecbench/romberg.py) against the closed-form integral of exp(x) sin(x)
and a NumPy table of each sub-interval (trapezoid sums from equispaced samples, the kernel's extrapolation)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import romberg

REGION = numba.njit(romberg.romberg)


def _exact(a, b):
    g = lambda x: math.exp(x) * (math.sin(x) - math.cos(x)) / 2.0  # noqa: E731
    return g(b) - g(a)


def _numpy_romberg(a, b, rows):
    table = np.empty(rows)
    for k in range(rows):
        x = np.linspace(a, b, (1 << k) + 1)
        y = np.exp(x) * np.sin(x)
        table[k] = (b - a) / (1 << k) * (y.sum() - 0.5 * (y[0] + y[-1]))
    for col in range(rows - 1):
        for row in range(rows - 1, col, -1):
            table[row] = table[row] + (table[row] - table[row - 1]) / (2 ** (2 * col + 1) - 1)  # the kernel's divisor
    return table[-1]


@pytest.mark.parametrize("nwg,wgs,rows", [(4, 64, 11), (3, 32, 9)])
def test_region_equals_numpy_romberg(nwg, wgs, rows):
    result = REGION(*romberg.make_inputs({"nwg": nwg, "wgs": wgs, "row_size": rows}, 0))
    h = 15.0 / nwg
    want = [_numpy_romberg(k * h, (k + 1) * h, rows) for k in range(nwg)]
    np.testing.assert_allclose(result, want, rtol=1e-10, atol=1e-9)
    assert result.sum() == pytest.approx(_exact(0.0, 15.0), rel=1e-5)


def test_measured_row_size_converges():
    result = REGION(*romberg.make_inputs({"nwg": 2, "wgs": 64, "row_size": 17}, 0))
    # the kernel's divisors 2^(2c+1) - 1 are not Romberg's 4^(c+1) - 1, but 17 levels still converge
    assert result.sum() == pytest.approx(_exact(0.0, 15.0), rel=1e-9)


def test_work():
    assert romberg.work(romberg.POINTS["128 64 1000"]) == (8192, 64)
