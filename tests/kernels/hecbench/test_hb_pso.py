"""The pso ports (kernels/measured/hecbench/pso.py) against a NumPy formulation of the swarm update and of the
personal-best / accumulator step, and the host's inputs against hand-worked values."""

from __future__ import annotations

import copy

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import pso

PARTICLE = numba.njit(pso.update_particle)
PBEST = numba.njit(pso.update_pbest)


def _fitness(x):
    f = 1.0 + (x.astype(np.float64) - 1.0) / 4.0
    phi = float(np.float32(3.1415))
    return (np.sin(phi * f[:, 0]) ** 2 + (f[:, -1] - 1.0) ** 2
            + np.sum((f[:, :-1] - 1.0) ** 2 * (1.0 + 10.0 * np.sin(phi * f[:, 1:]) ** 2), axis=1))


@pytest.mark.parametrize("p,seed", [(20, 0), (30, 1), (300, 2)])
def test_particle_update_equals_numpy(p, seed):
    inputs = pso.particle_inputs({"p": p, "r": 10}, seed)
    positions, velocities, pbests, gbest, _, rp, rg, n = inputs
    assert n == ((p * 30 + 255) // 256) * 256
    want_v = 0.5 * velocities + 1.5 * rp * (pbests - positions) + 1.5 * rg * (np.tile(gbest, p) - positions)
    got_x, got_v = PARTICLE(*copy.deepcopy(inputs))
    np.testing.assert_allclose(got_v, want_v, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_x, positions + want_v, rtol=1e-5, atol=1e-5)
    # the first step: v = 0 and pBest = x, so only the pull towards gBest remains
    assert np.abs(got_v).max() > 0.1


@pytest.mark.parametrize("p,seed", [(20, 0), (300, 3)])
def test_pbest_equals_numpy(p, seed):
    positions, pbests, gbest, _, n = pso.pbest_inputs({"p": p, "r": 10}, seed)
    f_new = _fitness(positions.reshape(p, 30))
    f_old = _fitness(pbests.reshape(p, 30))
    better = f_new < f_old
    want_best = np.where(better[:, None], positions.reshape(p, 30), pbests.reshape(p, 30)).ravel()
    add = better & (f_new < 130.0)
    want_g = gbest.astype(np.float64) + positions.reshape(p, 30)[add].astype(np.float64).sum(axis=0)
    got_best, got_g = PBEST(positions, pbests.copy(), gbest.copy(), p, n)
    np.testing.assert_array_equal(got_best, want_best)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-4, atol=1e-3)
    assert 0 < better.sum() < p  # both branches taken


def test_host_random_values():
    # srand(0) is srand(1): glibc's first rand() after srand(1) is 1804289383
    assert pso.random_clamped(0) == np.float32(np.float32(1804289383) / np.float32(2147483647))
    x, v, b, g = pso.initial_state(2, 0)
    # srand(123): first rand() 128959393
    assert x[0] == np.float32(np.float32(-5.12) + np.float32(np.float32(11.24) * np.float32(128959393))
                              / np.float32(2147483648.0))
    assert np.all(v == 0) and np.array_equal(b, x) and np.array_equal(g, x[:30])


def test_work():
    assert pso.particle_work(pso.POINTS["30 10000"]) == (1024, 256)
    assert pso.pbest_work(pso.POINTS["30 10000"]) == (256, 256)
