"""The lebesgue port (kernels/measured/hecbench/lebesgue.py) against NumPy's Lagrange basis and known Lebesgue
constants."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import lebesgue

REGION = numba.njit(lebesgue.lebesgue)


@pytest.mark.parametrize("n,nfun", [(4, 600), (7, 1001), (2, 300)])
def test_region_equals_numpy_basis(n, nfun):
    inputs = lebesgue.make_inputs({"n": n, "nfun": nfun}, 0)
    lmax, linterp = REGION(*inputs)
    x, xf = inputs[3], inputs[2]
    want = np.ones((n, nfun))
    for i in range(n):
        for k in range(n):
            if k != i:
                want[i] *= (xf - x[k]) / (x[i] - x[k])
    np.testing.assert_allclose(linterp.reshape(n, nfun), want, rtol=1e-12, atol=1e-14)
    assert lmax[0] == pytest.approx(np.abs(want).sum(axis=0).max(), rel=1e-14)
    # the basis is a partition of unity
    np.testing.assert_allclose(linterp.reshape(n, nfun).sum(axis=0), 1.0, rtol=0, atol=1e-12)


def test_known_constants():
    # Lebesgue constant of n = 2 Chebyshev-1 nodes on [-1, 1]: sqrt(2) (attained at the ends)
    lmax, _ = REGION(*lebesgue.make_inputs({"n": 2, "nfun": 1001}, 0))
    assert lmax[0] == pytest.approx(np.sqrt(2.0), rel=1e-12)
    # Burkardt's lebesgue_test: Chebyshev1 N = 11 constant 2.489430 (fine grid)
    lmax, _ = REGION(*lebesgue.make_inputs({"n": 11, "nfun": 5001}, 0))
    assert lmax[0] == pytest.approx(2.489430, abs=5e-5)


def test_work():
    assert lebesgue.work(lebesgue.POINTS["1000000 2"]) == (3907 * 256, 256)
