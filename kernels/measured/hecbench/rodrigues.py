"""Rotation of points about an axis by Rodrigues' formula, HeCBench ``rodrigues``: kernels ``rotate`` (points as
``float3``) and ``rotate2`` (points as ``float4``, the fourth component written 0).

Each thread takes one point ``p`` of ``n``, evaluates ``sincosf(angle)`` and the nine entries of the rotation
matrix ``R = c I + s [w]x + (1 - c) w w^T`` (``w`` the unit axis, written out entry by entry, as the original,
``m2 = w.z s + w.x w.y (1 - c)`` and so on), and writes ``(p.x m1 + p.y m2 + p.z m3, p.x m4 + p.y m5 + p.z m6,
p.x m7 + p.y m8 + p.z m9)`` back over the point (in place): ``R^T p``, the turn by ``-angle``.

Launch: one thread per point, blocks of 256, ``ceil(n / 256)`` blocks, guard ``i < n``. Measured point
``1000000 10000`` (points, repeat): 3907 blocks. The host launches each kernel ``repeat`` times on its own
array (``rotate`` on the float3 array, then ``rotate2`` on the float4 array); the timed launches are the
first of each, on the unrotated points.

Inputs: the host's ``srand(123)``: per point ``a, b, c = rand()`` (three draws, as floats) normalised by
``sqrt(a^2 + b^2 + c^2)`` (glibc ``rand`` seeded with ``123 + seed``; seed 0 gives the original's points).
Axis ``(-0.3, -0.6, 0.15)`` normalised, angle 0.5.

Layout: a ``float3`` array is an ``(n, 3)`` float32 array, a ``float4`` array ``(n, 4)`` (the same bytes);
``w`` is passed as three float32 scalars. Precision: single (float32), as the original.
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
ONE = np.float32(1.0)
ANGLE = np.float32(0.5)

POINTS = {"1000000 10000": {"n": 1000000, "repeat": 10000}}
TEST_POINT = {"n": 1000, "repeat": 1}
#: 5 x 10^4 points (about 3e6 records; the measured point has 10^6)
FEATURE_POINT = {"n": 50000, "repeat": 10000}


def _axis():
    wx, wy, wz = np.float32(-0.3), np.float32(-0.6), np.float32(0.15)
    norm = ONE / np.sqrt(wx * wx + wy * wy + wz * wz)
    return wx * norm, wy * norm, wz * norm


def rotate(n, angle, wx, wy, wz, d, n_threads):
    """Rotate every point of the ``(n, 3)`` array ``d`` in place."""
    for i in numba.prange(n_threads):
        if i < n:
            s = np.sin(angle)
            c = np.cos(angle)
            px = d[i, 0]
            py = d[i, 1]
            pz = d[i, 2]
            mc = ONE - c
            m1 = c + wx * wx * mc
            m2 = wz * s + wx * wy * mc
            m3 = -wy * s + wx * wz * mc
            m4 = -wz * s + wx * wy * mc
            m5 = c + wy * wy * mc
            m6 = wx * s + wy * wz * mc
            m7 = wy * s + wx * wz * mc
            m8 = -wx * s + wy * wz * mc
            m9 = c + wz * wz * mc
            d[i, 0] = px * m1 + py * m2 + pz * m3
            d[i, 1] = px * m4 + py * m5 + pz * m6
            d[i, 2] = px * m7 + py * m8 + pz * m9
    return d


def rotate2(n, angle, wx, wy, wz, d, n_threads):
    """Rotate every point of the ``(n, 4)`` array ``d`` in place (fourth component written 0)."""
    for i in numba.prange(n_threads):
        if i < n:
            s = np.sin(angle)
            c = np.cos(angle)
            px = d[i, 0]
            py = d[i, 1]
            pz = d[i, 2]
            mc = ONE - c
            m1 = c + wx * wx * mc
            m2 = wz * s + wx * wy * mc
            m3 = -wy * s + wx * wz * mc
            m4 = -wz * s + wx * wy * mc
            m5 = c + wy * wy * mc
            m6 = wx * s + wy * wz * mc
            m7 = wy * s + wx * wz * mc
            m8 = -wx * s + wy * wz * mc
            m9 = c + wz * wz * mc
            d[i, 0] = px * m1 + py * m2 + pz * m3
            d[i, 1] = px * m4 + py * m5 + pz * m6
            d[i, 2] = px * m7 + py * m8 + pz * m9
            d[i, 3] = np.float32(0.0)
    return d




@cuda.jit
def _rotate_gpu(n, angle, wx, wy, wz, d):
    i = cuda.grid(1)
    if i < n:
        s = numba.float32(math.sin(angle))
        c = numba.float32(math.cos(angle))
        px = d[i, 0]
        py = d[i, 1]
        pz = d[i, 2]
        mc = ONE - c
        m1 = c + wx * wx * mc
        m2 = wz * s + wx * wy * mc
        m3 = -wy * s + wx * wz * mc
        m4 = -wz * s + wx * wy * mc
        m5 = c + wy * wy * mc
        m6 = wx * s + wy * wz * mc
        m7 = wy * s + wx * wz * mc
        m8 = -wx * s + wy * wz * mc
        m9 = c + wz * wz * mc
        d[i, 0] = px * m1 + py * m2 + pz * m3
        d[i, 1] = px * m4 + py * m5 + pz * m6
        d[i, 2] = px * m7 + py * m8 + pz * m9
        if d.shape[1] == 4:
            d[i, 3] = numba.float32(0.0)


def _to_device(n, angle, wx, wy, wz, d, n_threads):
    return {"n": int(n), "args": (np.float32(angle), np.float32(wx), np.float32(wy), np.float32(wz)),
            "d": cuda.to_device(d), "threads": int(n_threads)}


def _launch(s):
    _rotate_gpu[s["threads"] // BLOCK, BLOCK](s["n"], *s["args"], s["d"])


def _from_device(s):
    return s["d"].copy_to_host()


def make_points(n, seed, width):
    """The host's points: three ``rand()`` draws per point, normalised; ``width`` 3 or 4 (4th component 0)."""
    r = glibc_rand(123 + seed, 3 * n).astype(np.float32).reshape(n, 3)
    norm = np.sqrt(r[:, 0] * r[:, 0] + r[:, 1] * r[:, 1] + r[:, 2] * r[:, 2])
    d = np.zeros((n, width), dtype=np.float32)
    d[:, :3] = r / norm[:, None]
    return d


def _inputs(width):
    def make_inputs(params, seed):
        """The region's arguments at the first launch: the unrotated points."""
        n = int(params["n"])
        wx, wy, wz = _axis()
        return n, ANGLE, wx, wy, wz, make_points(n, seed, width), work(params)[0]
    return make_inputs


def work(params):
    n = int(params["n"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


def _kernel(name, region, width):
    return MeasuredKernel(
        source="hecbench",
        application="rodrigues",
        kernel=name,
        description=f"HeCBench rodrigues: Rodrigues rotation of float{width} points, one thread per point",
        cpu=region,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=_inputs(width),
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-6,
    )


KERNELS = [_kernel("rotate", rotate, 3), _kernel("rotate2", rotate2, 4)]
