"""nbody: all-pairs gravitational accelerations of ``n`` bodies (one force evaluation, softened).

``a_i = sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2)``: O(n^2) interactions with a square root
and a division each, O(n) data. The GPU port is the classic tiled all-pairs algorithm: each block stages a
tile of bodies (x, y, z, m) in shared memory and every thread accumulates its body's acceleration from it.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 128
EPS2 = 0.01


def nbody_cpu(x, y, z, m, eps2):
    """CPU region: softened gravitational acceleration of every body.

    Parameters
    ----------
    x, y, z, m : numpy.ndarray
        float32 positions and masses (same length).
    eps2 : float
        Squared softening length.

    Returns
    -------
    tuple of numpy.ndarray
        ``(ax, ay, az)`` float32 accelerations.
    """
    n = x.shape[0]
    ax = np.empty(n, dtype=np.float32)
    ay = np.empty(n, dtype=np.float32)
    az = np.empty(n, dtype=np.float32)
    for i in numba.prange(n):
        xi = x[i]
        yi = y[i]
        zi = z[i]
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for j in range(n):
            dx = x[j] - xi
            dy = y[j] - yi
            dz = z[j] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = 1.0 / math.sqrt(r2)
            s = m[j] * inv * inv * inv
            sx += dx * s
            sy += dy * s
            sz += dz * s
        ax[i] = sx
        ay[i] = sy
        az[i] = sz
    return ax, ay, az


@cuda.jit
def _nbody_kernel(x, y, z, m, eps2, ax, ay, az):
    sx_ = cuda.shared.array(shape=TPB, dtype=numba.float32)
    sy_ = cuda.shared.array(shape=TPB, dtype=numba.float32)
    sz_ = cuda.shared.array(shape=TPB, dtype=numba.float32)
    sm_ = cuda.shared.array(shape=TPB, dtype=numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.shape[0]
    xi = numba.float32(0.0)
    yi = numba.float32(0.0)
    zi = numba.float32(0.0)
    if i < n:
        xi = x[i]
        yi = y[i]
        zi = z[i]
    sx = 0.0
    sy = 0.0
    sz = 0.0
    for tile in range((n + TPB - 1) // TPB):
        j = tile * TPB + t
        if j < n:
            sx_[t] = x[j]
            sy_[t] = y[j]
            sz_[t] = z[j]
            sm_[t] = m[j]
        else:
            sx_[t] = 0.0
            sy_[t] = 0.0
            sz_[t] = 0.0
            sm_[t] = 0.0  # a massless body contributes nothing
        cuda.syncthreads()
        for k in range(TPB):
            dx = sx_[k] - xi
            dy = sy_[k] - yi
            dz = sz_[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = 1.0 / math.sqrt(r2)
            s = sm_[k] * inv * inv * inv
            sx += dx * s
            sy += dy * s
            sz += dz * s
        cuda.syncthreads()
    if i < n:
        ax[i] = sx
        ay[i] = sy
        az[i] = sz


def _to_device(x, y, z, m, eps2):
    n = x.shape[0]
    return {"x": cuda.to_device(x), "y": cuda.to_device(y), "z": cuda.to_device(z), "m": cuda.to_device(m),
            "eps2": float(eps2), "ax": cuda.device_array(n, dtype=np.float32),
            "ay": cuda.device_array(n, dtype=np.float32), "az": cuda.device_array(n, dtype=np.float32)}


def _launch(s):
    n = s["x"].shape[0]
    _nbody_kernel[blocks_for(n, TPB), TPB](s["x"], s["y"], s["z"], s["m"], s["eps2"], s["ax"], s["ay"], s["az"])


def _from_device(s):
    return s["ax"].copy_to_host(), s["ay"].copy_to_host(), s["az"].copy_to_host()


def make_inputs(n, seed):
    """``(x, y, z, m, eps2)``: ``n`` bodies uniform in the cube [-1, 1)^3, masses in [0.5, 1.5)/n, eps2=0.01."""
    g = rng(seed)
    x, y, z = (g.uniform(-1.0, 1.0, n).astype(np.float32) for _ in range(3))
    m = (g.uniform(0.5, 1.5, n) / n).astype(np.float32)
    return x, y, z, m, EPS2


KERNEL = KernelSpec(
    name="nbody",
    category="special",
    description="all-pairs softened gravity, O(n^2) with sqrt and division; GPU tiles bodies in shared memory",
    cpu=nbody_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 100, "small": 1024, "medium": 4096, "large": 8192},
    rtol=1e-4,
    atol=1e-4,
    expect_gpu_faster=True,
)
