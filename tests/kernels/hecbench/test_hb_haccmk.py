"""The haccmk port (kernels/measured/hecbench/haccmk.py) against a vectorised NumPy force sum (float64, as the
original's host reference ``haccmk_gold`` computes it in float32) and a hand-worked pair of particles."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import haccmk

REGION = numba.njit(haccmk.haccmk_kernel)
MA = (0.269327, -0.0750978, 0.0114808, -0.00109313, 0.0000605491, -0.00000147177)


def _numpy_forces(n1, xx, yy, zz, mass, fsrmax=0.5, mp_rsm=0.03, fcoeff=0.23):
    p = np.stack([xx, yy, zz], axis=1).astype(np.float64)
    d = p[None, :, :] - p[:n1, None, :]
    r2 = (d * d).sum(axis=2)
    m = np.where(r2 < fsrmax, mass.astype(np.float64)[None, :], 0.0)
    s = r2 + mp_rsm
    poly = np.polynomial.polynomial.polyval(r2, MA)
    f = m * (1.0 / (s * np.sqrt(s)) - poly)
    return [(f * d[:, :, k]).sum(axis=1) * fcoeff for k in range(3)]


@pytest.mark.parametrize("n1,n2", [(100, 120), (300, 2000)])
def test_region_equals_numpy(n1, n2):
    inputs = haccmk.make_inputs({"n1": n1, "n2": n2}, 0)
    got = REGION(*inputs)
    want = _numpy_forces(n1, *inputs[2:6])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g[:n1], w, rtol=2e-3, atol=2e-3 * np.abs(w).max())
        assert np.all(g[n1:] == 0.0)
    assert np.abs(got[0][:n1]).max() > 1.0  # the forces are not trivially zero


def test_hand_worked_pair():
    xx = np.array([0.0, 0.5], np.float32)
    zeros = np.zeros(2, np.float32)
    mass = np.array([2.0, 3.0], np.float32)
    vx, vy, vz = haccmk.haccmk_kernel(1, 2, xx, zeros, zeros, mass, np.zeros(2, np.float32), np.zeros(2, np.float32),
                                      np.zeros(2, np.float32), haccmk.FSRMAX, haccmk.MP_RSM, haccmk.FCOEFF, 256)
    # source 0 is the target itself (d = 0, no force); source 1 at r2 = 0.25 < 0.5 pulls with mass 3
    s = 0.25 + 0.03
    f = 3.0 * (1.0 / (s * np.sqrt(s)) - np.polynomial.polynomial.polyval(0.25, MA))
    assert vx[0] == pytest.approx(f * 0.5 * 0.23, rel=1e-5)
    assert vy[0] == 0.0 and vz[0] == 0.0 and vx[1] == 0.0


def test_host_particles_and_work():
    xx, yy, zz, mass = haccmk.particles(15000)
    assert mass[0] == 2.0 and xx[1] == np.float32(1.0) / np.float32(15000)
    assert zz[-1] == pytest.approx(3.0 * 14999 / 15000, rel=1e-3)  # float32 running sum
    assert haccmk.work(haccmk.POINTS["1000"]) == (1024, 256)


def test_targets_are_sources():
    with pytest.raises(ValueError):
        haccmk.make_inputs({"n1": 300, "n2": 150}, 0)
    for p in (haccmk.POINTS["1000"], haccmk.TEST_POINT, haccmk.FEATURE_POINT):
        assert p["n1"] <= p["n2"]
