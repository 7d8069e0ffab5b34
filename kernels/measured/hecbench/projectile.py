"""Projectile motion, HeCBench ``projectile``: the kernel ``CalculateRange``.

``num_elements`` projectiles, each an object of five floats (angle, velocity, range, total time, maximum
height). Thread ``i`` (guard ``i < num_elements``) reads the angle ``a`` (degrees) and velocity ``v`` of
input object ``i`` and writes output object ``i``: ``s = sin(a pi / 180)``, ``c = cos(a pi / 180)`` (with the
original's ``pi = 3.1415``), total time ``t = |2 v s| / g``, range ``|v t c|``, maximum height ``v v s s / 2
* g`` (the original's expression, which multiplies by ``g = 9.81`` where the formula in its comment divides),
and the angle and velocity copied.

Launch: one thread per projectile, blocks of 256, ``ceil(num_elements / 256)`` blocks. ``num_elements`` is the
program's constant 10^7 (the argument ``1000`` is the repeat count): 39063 blocks; the timed launch is the
first of the repeats (all identical).

Inputs: the host's ``srand(2)``, then per projectile ``angle = rand() % 90 + 10``, ``velocity = rand() % 400 +
10`` (glibc ``rand`` seeded with ``2 + seed``; seed 0 gives the original's values); range, time and height of
the input objects are 1, the output objects zero.

Deliberate differences: the arrays of objects are ``(num_elements, 5)`` float32 arrays (the fields in the
class's order: angle, velocity, range, total time, maximum height); ``num_elements`` is a parameter (the
program's constant at the measured point, smaller at the test and feature points).

Precision: single (float32), as the original (``sinf``, ``cosf``, ``fabsf``).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
F = np.float32
K_PI = F(3.1415)
K_G = F(9.81)
D180 = F(180.0)
TWO = F(2.0)

POINTS = {"1000": {"num_elements": 10_000_000}}
TEST_POINT = {"num_elements": 1000}
#: 1.5 * 10^5 projectiles (about 4.4e6 records; the measured point has 10^7)
FEATURE_POINT = {"num_elements": 150_000}


def calculate_range(obj, pobj, num_elements, n_threads):
    """Every projectile's range, flight time and maximum height into ``pobj`` (``(num_elements, 5)``)."""
    for i in numba.prange(n_threads):
        if i < num_elements:
            proj_angle = obj[i, 0]
            proj_vel = obj[i, 1]
            sin_value = np.sin(proj_angle * K_PI / D180)
            cos_value = np.cos(proj_angle * K_PI / D180)
            total_time = abs(TWO * proj_vel * sin_value) / K_G
            max_range = abs(proj_vel * total_time * cos_value)
            max_height = (proj_vel * proj_vel * sin_value * sin_value) / TWO * K_G
            pobj[i, 0] = proj_angle
            pobj[i, 1] = proj_vel
            pobj[i, 2] = max_range
            pobj[i, 3] = total_time
            pobj[i, 4] = max_height
    return pobj


@cuda.jit
def _calculate_range_gpu(obj, pobj, num_elements):
    i = cuda.grid(1)
    if i < num_elements:
        proj_angle = obj[i, 0]
        proj_vel = obj[i, 1]
        sin_value = numba.float32(math.sin(proj_angle * K_PI / D180))
        cos_value = numba.float32(math.cos(proj_angle * K_PI / D180))
        total_time = abs(TWO * proj_vel * sin_value) / K_G
        max_range = abs(proj_vel * total_time * cos_value)
        max_height = (proj_vel * proj_vel * sin_value * sin_value) / TWO * K_G
        pobj[i, 0] = proj_angle
        pobj[i, 1] = proj_vel
        pobj[i, 2] = max_range
        pobj[i, 3] = total_time
        pobj[i, 4] = max_height


def _to_device(obj, pobj, num_elements, n_threads):
    return {"obj": cuda.to_device(obj), "pobj": cuda.to_device(pobj), "ne": int(num_elements),
            "n": int(n_threads)}


def _launch(s):
    _calculate_range_gpu[s["n"] // BLOCK, BLOCK](s["obj"], s["pobj"], s["ne"])


def _from_device(s):
    return s["pobj"].copy_to_host()


def make_inputs(params, seed):
    """The input objects from the host's ``rand()`` sequence and zeroed output objects."""
    n = int(params["num_elements"])
    r = glibc_rand(2 + seed, 2 * n)
    obj = np.ones((n, 5), dtype=np.float32)
    obj[:, 0] = (r[0::2] % 90 + 10).astype(np.float32)
    obj[:, 1] = (r[1::2] % 400 + 10).astype(np.float32)
    pobj = np.zeros((n, 5), dtype=np.float32)
    return obj, pobj, n, work(params)[0]


def work(params):
    n = int(params["num_elements"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="projectile",
        kernel="CalculateRange",
        description="HeCBench projectile: range, flight time and height of every projectile, one thread each",
        cpu=calculate_range,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-4,
    ),
]
