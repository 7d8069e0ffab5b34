"""Particle swarm optimisation, HeCBench ``pso``: the kernels ``kernelUpdateParticle`` and ``kernelUpdatePBest``.

``p`` particles in ``DIM = 30`` dimensions (single precision) minimise the function ``fitness`` below, a
Levy-like sum over the dimensions with ``F(x) = 1 + (x - 1) / 4``::

    fitness(x) = sin(phi F(x_0))^2 + (F(x_29) - 1)^2 + sum_{i<29} (F(x_i) - 1)^2 (1 + 10 sin(phi F(x_{i+1}))^2)

Each of the host's ``r`` iterations launches two kernels:

* ``kernelUpdateParticle``: one thread per coordinate (``p * DIM`` of them, guard ``i < p * DIM``):
  ``v = OMEGA v + c1 rp (pBest - x) + c2 rg (gBest[i % DIM] - x)``, then ``x += v``. ``rp`` and ``rg`` are
  scalars of the host: ``srand(iter); rand() / RAND_MAX`` and the same with ``srand(r - iter)``.
* ``kernelUpdatePBest``: one thread per particle (guard ``i < p``): when the particle's new position is
  fitter than its best, the best becomes the position, and when in addition the position's fitness is below
  130 its coordinates are added atomically into ``gBest`` (the original's rule; ``gBest`` is an
  accumulator, not a best).

Launch: blocks of 256 threads, ``ceil(p * DIM / 256)`` and ``ceil(p / 256)`` blocks. Measured point
``30 10000`` (``p = 30`` particles, ``r = 10000`` iterations): 4 blocks (1024 threads, 900 active) and
1 block (256 threads, 30 active). The timed launches are the first of each kernel (``iter = 0``).

Inputs: the host's ``srand(123)`` then ``x = low + ((high - low) + 1) rand() / (RAND_MAX + 1)`` per coordinate
(low, high = -5.12, 5.12, float arithmetic), ``pBest = x``, ``v = 0``, ``gBest = pBest[0:DIM]`` (glibc
``rand``, here seeded with ``123 + seed``: seed 0 gives the original's values). The state before the
first ``kernelUpdatePBest`` is one ``kernelUpdateParticle`` step, made by a NumPy run.

Deliberate differences: the particle's fitness is computed inline from the positions array instead of from
a private copy (the original copies both vectors into local arrays first; the copy into ``pBests`` reads
``positions`` again); the original evaluates the position's fitness a second time for the 130 test, a pure
call of the same arguments that the compiler may fold; here the first value is reused. ``powf(a, 2)`` is
written ``a * a``. The atomic adds into ``gBest`` are plain read-modify-writes in the region (its semantics
are a sequential run), ``cuda.atomic.add`` in the GPU port: the sums may differ in the last bits by order.

Precision: single (float32), as the original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import RAND_MAX, glibc_rand
from ..spec import MeasuredKernel

DIM = 30
BLOCK = 256
START_RANGE_MIN = np.float32(-5.12)
START_RANGE_MAX = np.float32(5.12)
OMEGA = np.float32(0.5)
C1 = np.float32(1.5)
C2 = np.float32(1.5)
PHI = np.float32(3.1415)
ONE = np.float32(1.0)
QUARTER_DIV = np.float32(4.0)
TEN = np.float32(10.0)
LIMIT = np.float32(130.0)

POINTS = {"30 10000": {"p": 30, "r": 10000}}
TEST_POINT = {"p": 20, "r": 5}


def update_particle(positions, velocities, pbests, gbest, p, rp, rg, n_threads):
    """``kernelUpdateParticle``: one work item per coordinate; updates ``velocities`` and ``positions``."""
    for i in numba.prange(n_threads):
        if i < p * DIM:
            v = (OMEGA * velocities[i] + C1 * rp * (pbests[i] - positions[i])
                 + C2 * rg * (gbest[i % DIM] - positions[i]))
            velocities[i] = v
            positions[i] = positions[i] + v
    return positions, velocities


def update_pbest(positions, pbests, gbest, p, n_threads):
    """``kernelUpdatePBest``: one work item per particle; updates ``pbests`` and accumulates into ``gbest``."""
    for t in numba.prange(n_threads):
        if t < p:
            base = t * DIM
            # fitness of the position
            y1 = ONE + (positions[base] - ONE) / QUARTER_DIV
            yn = ONE + (positions[base + DIM - 1] - ONE) / QUARTER_DIV
            s = np.sin(PHI * y1)
            f1 = s * s + (yn - ONE) * (yn - ONE)
            for k in range(DIM - 1):
                y = ONE + (positions[base + k] - ONE) / QUARTER_DIV
                yp = ONE + (positions[base + k + 1] - ONE) / QUARTER_DIV
                sp = np.sin(PHI * yp)
                f1 += (y - ONE) * (y - ONE) * (ONE + TEN * (sp * sp))
            # fitness of the particle's best
            y1 = ONE + (pbests[base] - ONE) / QUARTER_DIV
            yn = ONE + (pbests[base + DIM - 1] - ONE) / QUARTER_DIV
            s = np.sin(PHI * y1)
            f2 = s * s + (yn - ONE) * (yn - ONE)
            for k in range(DIM - 1):
                y = ONE + (pbests[base + k] - ONE) / QUARTER_DIV
                yp = ONE + (pbests[base + k + 1] - ONE) / QUARTER_DIV
                sp = np.sin(PHI * yp)
                f2 += (y - ONE) * (y - ONE) * (ONE + TEN * (sp * sp))
            if f1 < f2:
                for k in range(DIM):
                    pbests[base + k] = positions[base + k]
                if f1 < LIMIT:
                    for k in range(DIM):
                        gbest[k] += positions[base + k]  # atomicAdd in the original
    return pbests, gbest


# ----------------------------------------------------------------------------------------------- GPU port


@cuda.jit
def _particle_gpu(positions, velocities, pbests, gbest, p, rp, rg):
    i = cuda.grid(1)
    if i >= p * DIM:
        return
    v = (OMEGA * velocities[i] + C1 * rp * (pbests[i] - positions[i])
         + C2 * rg * (gbest[i % DIM] - positions[i]))
    velocities[i] = v
    positions[i] = positions[i] + v


@cuda.jit(device=True)
def _fitness(x, base):
    y1 = ONE + (x[base] - ONE) / QUARTER_DIV
    yn = ONE + (x[base + DIM - 1] - ONE) / QUARTER_DIV
    s = numba.float32(math.sin(PHI * y1))
    res = s * s + (yn - ONE) * (yn - ONE)
    for k in range(DIM - 1):
        y = ONE + (x[base + k] - ONE) / QUARTER_DIV
        yp = ONE + (x[base + k + 1] - ONE) / QUARTER_DIV
        sp = numba.float32(math.sin(PHI * yp))
        res += (y - ONE) * (y - ONE) * (ONE + TEN * (sp * sp))
    return res


@cuda.jit
def _pbest_gpu(positions, pbests, gbest, p):
    t = cuda.grid(1)
    if t >= p:
        return
    base = t * DIM
    f1 = _fitness(positions, base)
    if f1 < _fitness(pbests, base):
        for k in range(DIM):
            pbests[base + k] = positions[base + k]
        if f1 < LIMIT:
            for k in range(DIM):
                cuda.atomic.add(gbest, k, positions[base + k])


def _particle_to_device(positions, velocities, pbests, gbest, p, rp, rg, n_threads):
    return {"positions": cuda.to_device(positions), "velocities": cuda.to_device(velocities),
            "pbests": cuda.to_device(pbests), "gbest": cuda.to_device(gbest), "p": int(p),
            "rp": np.float32(rp), "rg": np.float32(rg), "n": int(n_threads)}


def _particle_launch(s):
    _particle_gpu[s["n"] // BLOCK, BLOCK](s["positions"], s["velocities"], s["pbests"], s["gbest"], s["p"],
                                          s["rp"], s["rg"])


def _particle_from_device(s):
    return s["positions"].copy_to_host(), s["velocities"].copy_to_host()


def _pbest_to_device(positions, pbests, gbest, p, n_threads):
    return {"positions": cuda.to_device(positions), "pbests": cuda.to_device(pbests),
            "gbest": cuda.to_device(gbest), "p": int(p), "n": int(n_threads)}


def _pbest_launch(s):
    _pbest_gpu[s["n"] // BLOCK, BLOCK](s["positions"], s["pbests"], s["gbest"], s["p"])


def _pbest_from_device(s):
    return s["pbests"].copy_to_host(), s["gbest"].copy_to_host()


# ----------------------------------------------------------------------------------------------- inputs


def random_clamped(seed):
    """The host's ``getRandomClamped(seed)``: ``srand(seed); (float) rand() / (float) RAND_MAX``."""
    return np.float32(np.float32(glibc_rand(seed, 1)[0]) / np.float32(RAND_MAX))


def initial_state(p, seed):
    """``(positions, velocities, pbests, gbest)`` as the host makes them (``srand(123 + seed)``)."""
    r = glibc_rand(123 + seed, p * DIM).astype(np.float32)
    span = np.float32((START_RANGE_MAX - START_RANGE_MIN) + ONE)
    positions = (START_RANGE_MIN + (span * r) / np.float32(RAND_MAX + 1.0)).astype(np.float32)
    return positions, np.zeros(p * DIM, dtype=np.float32), positions.copy(), positions[:DIM].copy()


def _blocks(n):
    return (n + BLOCK - 1) // BLOCK


def particle_inputs(params, seed):
    """``kernelUpdateParticle``'s first launch (``iter = 0``)."""
    p, r = int(params["p"]), int(params["r"])
    positions, velocities, pbests, gbest = initial_state(p, seed)
    return (positions, velocities, pbests, gbest, p, random_clamped(0), random_clamped(r),
            _blocks(p * DIM) * BLOCK)


def pbest_inputs(params, seed):
    """``kernelUpdatePBest``'s first launch: the state after the first particle update (NumPy)."""
    p, r = int(params["p"]), int(params["r"])
    positions, velocities, pbests, gbest = initial_state(p, seed)
    rp, rg = random_clamped(0), random_clamped(r)
    g = np.tile(gbest, p)
    v = OMEGA * velocities + C1 * rp * (pbests - positions) + C2 * rg * (g - positions)
    positions = (positions + v).astype(np.float32)
    return positions, pbests, gbest, p, _blocks(p) * BLOCK


def particle_work(params):
    return _blocks(int(params["p"]) * DIM) * BLOCK, BLOCK


def pbest_work(params):
    return _blocks(int(params["p"])) * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="pso",
        kernel="kernelUpdateParticle",
        description="HeCBench pso: particle swarm velocity and position update, one thread per coordinate",
        cpu=update_particle,
        gpu=GpuPort(_particle_to_device, _particle_launch, _particle_from_device),
        make_inputs=particle_inputs,
        points=POINTS,
        work=particle_work,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-5,
    ),
    MeasuredKernel(
        source="hecbench",
        application="pso",
        kernel="kernelUpdatePBest",
        description="HeCBench pso: per-particle fitness of position and best, best update, atomic sum into "
        "the global accumulator",
        cpu=update_pbest,
        gpu=GpuPort(_pbest_to_device, _pbest_launch, _pbest_from_device),
        make_inputs=pbest_inputs,
        points=POINTS,
        work=pbest_work,
        test_point=TEST_POINT,
        rtol=1e-4,
        atol=1e-4,
    ),
]
