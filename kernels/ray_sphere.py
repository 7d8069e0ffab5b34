"""Nearest ray-sphere intersection for many rays against a small scene (divergent branches, sqrt).

CPU region: one iteration of the parallel loop per ray; for each sphere the discriminant decides
whether a square root and the nearest-hit update run. GPU port: one thread per ray; each block first
stages the whole scene (centres and radii) in shared memory, which every thread then reads.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 128
N_SPHERES = 32
EPS = 1e-9


def ray_sphere(origins, dirs, spheres):
    """Distance to and index of the nearest sphere hit by each ray.

    Parameters
    ----------
    origins, dirs : float64 arrays ``(n, 3)``; directions are unit vectors.
    spheres : float64 array ``(s, 4)`` of centre x, y, z and radius.

    Returns
    -------
    (t, hit): float64 distance (inf if nothing is hit) and int64 sphere index (-1 if none).
    """
    n = origins.shape[0]
    ns = spheres.shape[0]
    t_out = np.empty(n, dtype=np.float64)
    hit = np.empty(n, dtype=np.int64)
    for r in numba.prange(n):
        ox = origins[r, 0]
        oy = origins[r, 1]
        oz = origins[r, 2]
        dx = dirs[r, 0]
        dy = dirs[r, 1]
        dz = dirs[r, 2]
        best = np.inf
        bid = -1
        for s in range(ns):
            lx = ox - spheres[s, 0]
            ly = oy - spheres[s, 1]
            lz = oz - spheres[s, 2]
            rad = spheres[s, 3]
            b = dx * lx + dy * ly + dz * lz
            c = lx * lx + ly * ly + lz * lz - rad * rad
            disc = b * b - c
            if disc >= 0.0:
                sq = math.sqrt(disc)
                t = -b - sq
                if t < EPS:
                    t = -b + sq
                if t > EPS and t < best:
                    best = t
                    bid = s
        t_out[r] = best
        hit[r] = bid
    return t_out, hit


@cuda.jit
def _trace(origins, dirs, spheres, t_out, hit):
    sc = cuda.shared.array((N_SPHERES, 4), dtype=numba.float64)
    ns = spheres.shape[0]
    k = cuda.threadIdx.x
    while k < ns * 4:
        sc[k // 4, k % 4] = spheres[k // 4, k % 4]
        k += cuda.blockDim.x
    cuda.syncthreads()
    r = cuda.grid(1)
    if r < origins.shape[0]:
        ox = origins[r, 0]
        oy = origins[r, 1]
        oz = origins[r, 2]
        dx = dirs[r, 0]
        dy = dirs[r, 1]
        dz = dirs[r, 2]
        best = math.inf
        bid = -1
        for s in range(ns):
            lx = ox - sc[s, 0]
            ly = oy - sc[s, 1]
            lz = oz - sc[s, 2]
            rad = sc[s, 3]
            b = dx * lx + dy * ly + dz * lz
            c = lx * lx + ly * ly + lz * lz - rad * rad
            disc = b * b - c
            if disc >= 0.0:
                sq = math.sqrt(disc)
                t = -b - sq
                if t < EPS:
                    t = -b + sq
                if t > EPS and t < best:
                    best = t
                    bid = s
        t_out[r] = best
        hit[r] = bid


def _to_device(origins, dirs, spheres):
    if spheres.shape[0] > N_SPHERES:
        raise ValueError(f"ray_sphere GPU port holds at most {N_SPHERES} spheres, got {spheres.shape[0]}")
    n = origins.shape[0]
    return {"o": cuda.to_device(origins), "d": cuda.to_device(dirs), "s": cuda.to_device(spheres),
            "t": cuda.device_array(n), "hit": cuda.device_array(n, dtype=np.int64)}


def _launch(s):
    n = s["o"].shape[0]
    tpb = min(TPB, 32 * ((n + 31) // 32))
    _trace[(n + tpb - 1) // tpb, tpb](s["o"], s["d"], s["s"], s["t"], s["hit"])


def _from_device(s):
    return s["t"].copy_to_host(), s["hit"].copy_to_host()


def make_inputs(n, seed):
    """``n`` rays from a camera near the origin into a field of 32 random spheres ahead of it."""
    rng = np.random.default_rng(seed)
    origins = rng.uniform(-0.5, 0.5, size=(n, 3))
    dirs = rng.normal(size=(n, 3))
    dirs[:, 2] = np.abs(dirs[:, 2]) + 1.0
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    spheres = np.empty((N_SPHERES, 4))
    spheres[:, 0:2] = rng.uniform(-4.0, 4.0, size=(N_SPHERES, 2))
    spheres[:, 2] = rng.uniform(3.0, 12.0, size=N_SPHERES)
    spheres[:, 3] = rng.uniform(0.3, 1.5, size=N_SPHERES)
    return origins, dirs, spheres


KERNEL = KernelSpec(
    name="ray_sphere",
    category="divergent",
    description="nearest hit of rays against 32 spheres; GPU: thread per ray, scene in shared memory",
    cpu=ray_sphere,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 64, "small": 20_000, "medium": 500_000, "large": 4_000_000},
    rtol=1e-9,
    atol=1e-12,
    expect_gpu_faster=True,
)
