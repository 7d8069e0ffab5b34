"""Leaky integrate-and-fire neurons, HeCBench ``lif``: the kernel ``lif`` (one time step of every neuron).

``num_items`` input items drive ``neurons_per_item`` neurons each (``num_neurons`` in all, single precision).
Neuron ``i`` (item ``i / neurons_per_item``, type ``i % neurons_per_item``) takes the input current
``bias[type] + gain[type] * encode[item]``, moves its voltage towards it by ``dV = -expm1(-dt / tau_rc)
(current - voltage)`` (clamped at 0), scales the voltage by ``mult = clamp(1 - (ref_time - dt) / dt, 0, 1)``
(the refractory period left), and fires when the voltage exceeds 1: spike ``1 / dt``, a new refractory time
``tau_ref + dt (1 - (voltage - 1) / dV)`` and a voltage reset to 0; otherwise spike 0. Voltage and
refractory time are updated in place, the spike written out.

Launch: one thread per neuron, blocks of 256, ``ceil(num_neurons / 256)`` blocks, guard
``i < num_neurons``. Measured point ``1000 1000 400`` (neurons per item, items, steps): 10^6 neurons, 3907
blocks; the timed launch is the first step (the host launches the kernel once per step).

Inputs: the host's ``srand(123)``: ``encode[i] = rand() / RAND_MAX`` per item, then per neuron ``voltage =
1 + rand() / RAND_MAX`` and ``ref_time = (rand() % 5) / 10``, then per neuron type ``bias = rand() / RAND_MAX``
and ``gain = rand() / RAND_MAX + 0.5`` (glibc ``rand`` seeded with ``123 + seed``; seed 0 gives the
original's values). Constants ``dt = 0.1``, ``tau_rc = 10``, ``tau_ref = 2``.

Precision: single (float32), as the original (``expm1f``, ``fmaxf``).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import RAND_MAX, glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
DT = np.float32(0.1)
TAU_RC = np.float32(10.0)
TAU_REF = np.float32(2.0)
ZERO = np.float32(0.0)
ONE = np.float32(1.0)

POINTS = {"1000 1000 400": {"neurons_per_item": 1000, "num_items": 1000, "num_steps": 400}}
TEST_POINT = {"neurons_per_item": 30, "num_items": 20, "num_steps": 1}
#: 10^5 neurons (about 3e6 records; the measured point has 10^6)
FEATURE_POINT = {"neurons_per_item": 100, "num_items": 1000, "num_steps": 400}


def lif(num_neurons, neurons_per_item, dt, encode, voltage_array, reftime_array, tau_rc, tau_ref, bias, gain,
        spikes, n_threads):
    """One step of every neuron; updates ``voltage_array``, ``reftime_array`` and ``spikes`` in place."""
    for i in numba.prange(n_threads):
        if i < num_neurons:
            neuron = i % neurons_per_item
            item = i // neurons_per_item
            voltage = voltage_array[i]
            ref_time = reftime_array[i]
            current = bias[neuron] + gain[neuron] * encode[item]
            dv = -np.expm1(-dt / tau_rc) * (current - voltage)
            voltage = max(voltage + dv, ZERO)
            ref_time -= dt
            mult = ref_time
            mult *= -ONE / dt
            mult += ONE
            mult = ONE if mult > ONE else mult
            mult = ZERO if mult < ZERO else mult
            voltage *= mult
            if voltage > ONE:
                spike = ONE / dt
                ref_time = tau_ref + dt * (ONE - (voltage - ONE) / dv)
                voltage = ZERO
            else:
                spike = ZERO
            reftime_array[i] = ref_time
            voltage_array[i] = voltage
            spikes[i] = spike
    return voltage_array, reftime_array, spikes


@cuda.jit
def _lif_gpu(num_neurons, neurons_per_item, dt, encode, voltage_array, reftime_array, tau_rc, tau_ref, bias,
             gain, spikes):
    i = cuda.grid(1)
    if i < num_neurons:
        neuron = i % neurons_per_item
        item = i // neurons_per_item
        voltage = voltage_array[i]
        ref_time = reftime_array[i]
        current = bias[neuron] + gain[neuron] * encode[item]
        dv = -numba.float32(math.expm1(-dt / tau_rc)) * (current - voltage)
        voltage = max(voltage + dv, ZERO)
        ref_time -= dt
        mult = ref_time
        mult *= -ONE / dt
        mult += ONE
        mult = ONE if mult > ONE else mult
        mult = ZERO if mult < ZERO else mult
        voltage *= mult
        if voltage > ONE:
            spike = ONE / dt
            ref_time = tau_ref + dt * (ONE - (voltage - ONE) / dv)
            voltage = ZERO
        else:
            spike = ZERO
        reftime_array[i] = ref_time
        voltage_array[i] = voltage
        spikes[i] = spike


_ARRAYS = ("encode", "voltage", "reftime", "bias", "gain", "spikes")


def _to_device(num_neurons, neurons_per_item, dt, encode, voltage, reftime, tau_rc, tau_ref, bias, gain,
               spikes, n_threads):
    s = {k: cuda.to_device(a) for k, a in zip(_ARRAYS, (encode, voltage, reftime, bias, gain, spikes))}
    s.update(num_neurons=int(num_neurons), npi=int(neurons_per_item), dt=np.float32(dt),
             tau_rc=np.float32(tau_rc), tau_ref=np.float32(tau_ref), n=int(n_threads))
    return s


def _launch(s):
    _lif_gpu[s["n"] // BLOCK, BLOCK](s["num_neurons"], s["npi"], s["dt"], s["encode"], s["voltage"],
                                     s["reftime"], s["tau_rc"], s["tau_ref"], s["bias"], s["gain"], s["spikes"])


def _from_device(s):
    return s["voltage"].copy_to_host(), s["reftime"].copy_to_host(), s["spikes"].copy_to_host()


def make_inputs(params, seed):
    """The region's arguments at the first step, from the host's ``rand()`` sequence."""
    npi, items = int(params["neurons_per_item"]), int(params["num_items"])
    n = npi * items
    r = glibc_rand(123 + seed, items + 2 * n + 2 * npi)
    rf = r.astype(np.float32) / np.float32(RAND_MAX)
    encode = rf[:items].astype(np.float32)
    voltage = (ONE + rf[items : items + 2 * n : 2]).astype(np.float32)
    reftime = ((r[items + 1 : items + 2 * n : 2] % 5).astype(np.float32) / np.float32(10.0)).astype(np.float32)
    tail = items + 2 * n
    bias = rf[tail::2].astype(np.float32)
    gain = (rf[tail + 1 :: 2] + np.float32(0.5)).astype(np.float32)
    spikes = np.zeros(n, dtype=np.float32)
    return n, npi, DT, encode, voltage, reftime, TAU_RC, TAU_REF, bias, gain, spikes, work(params)[0]


def work(params):
    n = int(params["neurons_per_item"]) * int(params["num_items"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="lif",
        kernel="lif",
        description="HeCBench lif: one time step of leaky integrate-and-fire neurons, one thread per neuron",
        cpu=lif,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-5,
    ),
]
