"""The lif port (kernels/measured/hecbench/lif.py) against a vectorised NumPy step and hand-worked neurons."""

from __future__ import annotations

import copy

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import lif

REGION = numba.njit(lif.lif)


def _numpy_step(n, npi, dt, encode, voltage, reftime, tau_rc, tau_ref, bias, gain):
    # float32 throughout (NumPy keeps float32 with float32 scalars), as the original
    i = np.arange(n)
    one, zero = np.float32(1.0), np.float32(0.0)
    current = bias[i % npi] + gain[i % npi] * encode[i // npi]
    dv = -np.expm1(-dt / tau_rc) * (current - voltage)
    v = np.maximum(voltage + dv, zero)
    ref = reftime - dt
    mult = np.clip(ref * (-one / dt) + one, zero, one)
    v = v * mult
    fire = v > one
    spikes = np.where(fire, one / dt, zero)
    ref = np.where(fire, tau_ref + dt * (one - (v - one) / dv), ref)
    v = np.where(fire, zero, v)
    return v, ref, spikes


@pytest.mark.parametrize("npi,items,seed", [(30, 20, 0), (100, 37, 1)])
def test_region_equals_numpy(npi, items, seed):
    inputs = lif.make_inputs({"neurons_per_item": npi, "num_items": items, "num_steps": 1}, seed)
    want = _numpy_step(*inputs[:10])
    got = REGION(*copy.deepcopy(inputs))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    fired = got[2] > 0
    assert 0 < fired.sum() < npi * items  # some neurons fire, others are refractory or below threshold


def test_hand_worked_neurons():
    # one item, two neuron types: a neuron far above threshold fires, one in its refractory period does not
    args = (2, 2, lif.DT, np.array([1.0], np.float32), np.array([1.5, 1.5], np.float32),
            np.array([0.0, 0.3], np.float32), lif.TAU_RC, lif.TAU_REF, np.array([1.0, 1.0], np.float32),
            np.array([1.0, 1.0], np.float32), np.zeros(2, np.float32), 256)
    v, ref, spikes = lif.lif(*args)
    dv = -np.expm1(-0.01) * (2.0 - 1.5)
    assert spikes[0] == np.float32(10.0) and v[0] == 0.0
    assert ref[0] == pytest.approx(2.0 + 0.1 * (1.0 - (1.5 + dv - 1.0) / dv), rel=1e-5)
    assert spikes[1] == 0.0 and v[1] == 0.0 and ref[1] == pytest.approx(0.2, rel=1e-6)  # mult clamps to 0


def test_work():
    assert lif.work(lif.POINTS["1000 1000 400"]) == (3907 * 256, 256)
