"""Inverse kinematics of a three-joint planar arm, HeCBench ``inversek2j``: the kernel ``invkin_kernel``.

One thread per target point (guard ``idx < size``) runs cyclic coordinate descent on an arm of three unit links
(joints at ``x = 0, 1, 2``, end effector at ``x = 3``, on the x axis): ``MAX_LOOP = 25`` sweeps, each over the
joints from the last to the first. For joint ``iter - 1`` it takes the unit vectors ``a`` from the joint to the
end effector and ``b`` from the joint to the target, the angle ``acos(a . b)`` (the dot product clamped to
[-1, 1]) in degrees, signed by the cross product ``a x b`` and clamped to [-30, 30], stores it as the joint's
angle and then accumulates the angles along the chain (``angle[1] += angle[0]``, ``angle[2] += angle[1]``).
The joint positions are never updated by the original (its ``xData``/``yData`` keep their initial values), so
every sweep sees the same geometry. The three angles are written to ``angles[3 idx ..]``.

Launch: blocks of 128 threads, ``ceil(size / 128)`` blocks. Measured point ``../inversek2j-sycl/coord_in.txt
100000`` (input file, repeat): the data's grid of 256 blocks means ``32641 <= size <= 32768`` targets; here
``size = 32768``. The timed launch is the first of ``repeat`` identical launches.

Inputs: the original reads the targets from its ``coord_in.txt`` (a count, then ``x y`` pairs), not available
here; the file is synthesized with the same size: targets reachable by the arm, the forward kinematics of
three joint angles drawn uniformly from [0, pi/2] (NumPy generator seeded with ``seed``). The kernel's work
does not depend on the values (fixed trip counts, no data-dependent loop exit; only the clamps branch).

Deliberate differences: the joint coordinates (constant local arrays in the original, folded by the compiler
once its fixed-count loops are unrolled) are computed from the joint index; the three angles are scalars
(registers after unrolling) rather than a local array.

Precision: single (float32; ``sqrtf``, ``acosf``), as the original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 128
MAX_LOOP = 25
NUM_JOINTS = 3
PI = np.float32(3.14159265358979)
DEG = np.float32(np.float32(180.0) / PI)
ONE = np.float32(1.0)
ZERO = np.float32(0.0)
LIMIT = np.float32(30.0)

POINTS = {"../inversek2j-sycl/coord_in.txt 100000": {"size": 32768, "max_loop": MAX_LOOP}}
TEST_POINT = {"size": 300, "max_loop": 4}
#: 1024 targets (about 4e6 records; the measured point has 32768)
FEATURE_POINT = {"size": 1024, "max_loop": MAX_LOOP}


def invkin(x_target, y_target, angles, size, max_loop, n_threads):
    """Cyclic coordinate descent for every target; the three joint angles into ``angles``."""
    for idx in numba.prange(n_threads):
        if idx < size:
            tx = x_target[idx]
            ty = y_target[idx]
            a0 = ZERO
            a1 = ZERO
            a2 = ZERO
            for _ in range(max_loop):
                for it in range(NUM_JOINTS, 0, -1):
                    pe_x = np.float32(NUM_JOINTS)
                    pe_y = ZERO
                    pc_x = np.float32(it - 1)
                    pc_y = ZERO
                    dpx = pe_x - pc_x
                    dpy = pe_y - pc_y
                    dtx = tx - pc_x
                    dty = ty - pc_y
                    len_p = np.sqrt(dpx * dpx + dpy * dpy)
                    len_t = np.sqrt(dtx * dtx + dty * dty)
                    ax = dpx / len_p
                    ay = dpy / len_p
                    bx = dtx / len_t
                    by = dty / len_t
                    dot = ax * bx + ay * by
                    if dot > ONE:
                        dot = ONE
                    elif dot < -ONE:
                        dot = -ONE
                    angle = np.arccos(dot) * DEG
                    if ax * by - ay * bx < ZERO:
                        angle = -angle
                    if angle > LIMIT:
                        angle = LIMIT
                    elif angle < -LIMIT:
                        angle = -LIMIT
                    if it == 3:
                        a2 = angle
                    elif it == 2:
                        a1 = angle
                    else:
                        a0 = angle
                    a1 += a0
                    a2 += a1
            angles[idx * NUM_JOINTS] = a0
            angles[idx * NUM_JOINTS + 1] = a1
            angles[idx * NUM_JOINTS + 2] = a2
    return angles


@cuda.jit
def _invkin_gpu(x_target, y_target, angles, size, max_loop):
    idx = cuda.grid(1)
    if idx < size:
        tx = x_target[idx]
        ty = y_target[idx]
        out = cuda.local.array(NUM_JOINTS, numba.float32)
        xd = cuda.local.array(NUM_JOINTS + 1, numba.float32)
        yd = cuda.local.array(NUM_JOINTS + 1, numba.float32)
        for i in range(NUM_JOINTS):
            out[i] = ZERO
        for i in range(NUM_JOINTS + 1):
            xd[i] = numba.float32(i)
            yd[i] = ZERO
        for _ in range(max_loop):
            for it in range(NUM_JOINTS, 0, -1):
                dpx = xd[NUM_JOINTS] - xd[it - 1]
                dpy = yd[NUM_JOINTS] - yd[it - 1]
                dtx = tx - xd[it - 1]
                dty = ty - yd[it - 1]
                len_p = numba.float32(math.sqrt(dpx * dpx + dpy * dpy))
                len_t = numba.float32(math.sqrt(dtx * dtx + dty * dty))
                ax = dpx / len_p
                ay = dpy / len_p
                bx = dtx / len_t
                by = dty / len_t
                dot = ax * bx + ay * by
                if dot > ONE:
                    dot = ONE
                elif dot < -ONE:
                    dot = -ONE
                angle = numba.float32(math.acos(dot)) * DEG
                if ax * by - ay * bx < ZERO:
                    angle = -angle
                if angle > LIMIT:
                    angle = LIMIT
                elif angle < -LIMIT:
                    angle = -LIMIT
                out[it - 1] = angle
                for i in range(NUM_JOINTS - 1):
                    out[i + 1] += out[i]
        for i in range(NUM_JOINTS):
            angles[idx * NUM_JOINTS + i] = out[i]


def _to_device(x_target, y_target, angles, size, max_loop, n_threads):
    return {"x": cuda.to_device(x_target), "y": cuda.to_device(y_target), "angles": cuda.to_device(angles),
            "size": int(size), "max_loop": int(max_loop), "n": int(n_threads)}


def _launch(s):
    _invkin_gpu[s["n"] // BLOCK, BLOCK](s["x"], s["y"], s["angles"], s["size"], s["max_loop"])


def _from_device(s):
    return s["angles"].copy_to_host()


def targets(size, seed):
    """Synthesized ``coord_in.txt``: the end points of the arm at three joint angles uniform in [0, pi/2]."""
    rng = np.random.default_rng(seed)
    theta = np.cumsum(rng.uniform(0.0, np.pi / 2, size=(size, NUM_JOINTS)), axis=1)
    return np.cos(theta).sum(axis=1).astype(np.float32), np.sin(theta).sum(axis=1).astype(np.float32)


def make_inputs(params, seed):
    size = int(params["size"])
    x, y = targets(size, seed)
    return x, y, np.zeros(size * NUM_JOINTS, dtype=np.float32), size, int(params["max_loop"]), work(params)[0]


def work(params):
    size = int(params["size"])
    return (size + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="inversek2j",
        kernel="invkin_kernel",
        description="HeCBench inversek2j: cyclic-coordinate-descent inverse kinematics of a three-link arm, "
        "one thread per target, 25 sweeps of acos/sqrt/divides",
        cpu=invkin,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-4,
        atol=1e-3,
    ),
]
