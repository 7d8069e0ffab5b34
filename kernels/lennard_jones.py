"""lennard_jones: Lennard-Jones forces and energies from a neighbour list (molecular dynamics force step).

Atoms sit on a jittered cubic lattice; each atom's neighbour list holds the up to 26 surrounding lattice
sites (fewer at the surface), padded with -1. Per neighbour: a gather of its position, a distance, a
cut-off test (about half the listed pairs are beyond the cut-off: divergent branches) and the 12-6 force.
Float64. The GPU port runs one atom per thread and stores the neighbour list neighbour-major (transposed
in ``to_device``) so that a warp's reads of ``neigh[k, i]`` are coalesced, as GPU MD codes do.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 128
MAX_NEIGH = 26
SPACING = 1.12
CUTOFF = 1.5


def lennard_jones_cpu(x, y, z, neigh, nneigh, rc2):
    """CPU region: force on and potential energy of every atom (epsilon = sigma = 1).

    Parameters
    ----------
    x, y, z : numpy.ndarray
        float64 positions of ``n`` atoms.
    neigh : numpy.ndarray
        int32 array ``(n, max_neigh)``: neighbour indices, the first ``nneigh[i]`` valid.
    nneigh : numpy.ndarray
        int32 neighbour counts.
    rc2 : float
        Squared cut-off radius.

    Returns
    -------
    tuple of numpy.ndarray
        ``(fx, fy, fz, energy)`` float64; each pair's energy is split half to each atom.
    """
    n = x.shape[0]
    fx = np.empty(n, dtype=np.float64)
    fy = np.empty(n, dtype=np.float64)
    fz = np.empty(n, dtype=np.float64)
    en = np.empty(n, dtype=np.float64)
    for i in numba.prange(n):
        xi = x[i]
        yi = y[i]
        zi = z[i]
        ax = 0.0
        ay = 0.0
        az = 0.0
        e = 0.0
        for k in range(nneigh[i]):
            j = neigh[i, k]
            dx = xi - x[j]
            dy = yi - y[j]
            dz = zi - z[j]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < rc2:
                inv2 = 1.0 / r2
                inv6 = inv2 * inv2 * inv2
                f = 24.0 * inv2 * inv6 * (2.0 * inv6 - 1.0)
                ax += f * dx
                ay += f * dy
                az += f * dz
                e += 2.0 * inv6 * (inv6 - 1.0)
        fx[i] = ax
        fy[i] = ay
        fz[i] = az
        en[i] = e
    return fx, fy, fz, en


@cuda.jit
def _lj_kernel(x, y, z, neigh_t, nneigh, rc2, fx, fy, fz, en):
    i = cuda.grid(1)
    if i < x.shape[0]:
        xi = x[i]
        yi = y[i]
        zi = z[i]
        ax = 0.0
        ay = 0.0
        az = 0.0
        e = 0.0
        for k in range(nneigh[i]):
            j = neigh_t[k, i]
            dx = xi - x[j]
            dy = yi - y[j]
            dz = zi - z[j]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < rc2:
                inv2 = 1.0 / r2
                inv6 = inv2 * inv2 * inv2
                f = 24.0 * inv2 * inv6 * (2.0 * inv6 - 1.0)
                ax += f * dx
                ay += f * dy
                az += f * dz
                e += 2.0 * inv6 * (inv6 - 1.0)
        fx[i] = ax
        fy[i] = ay
        fz[i] = az
        en[i] = e


def _to_device(x, y, z, neigh, nneigh, rc2):
    n = x.shape[0]
    out = {k: cuda.device_array(n, dtype=np.float64) for k in ("fx", "fy", "fz", "en")}
    out.update({"x": cuda.to_device(x), "y": cuda.to_device(y), "z": cuda.to_device(z),
                "neigh_t": cuda.to_device(np.ascontiguousarray(neigh.T)), "nneigh": cuda.to_device(nneigh),
                "rc2": float(rc2)})
    return out


def _launch(s):
    n = s["x"].shape[0]
    _lj_kernel[blocks_for(n, TPB), TPB](s["x"], s["y"], s["z"], s["neigh_t"], s["nneigh"], s["rc2"],
                                        s["fx"], s["fy"], s["fz"], s["en"])


def _from_device(s):
    return tuple(s[k].copy_to_host() for k in ("fx", "fy", "fz", "en"))


def make_inputs(n, seed):
    """``(x, y, z, neigh, nneigh, rc2)`` for a jittered ``m^3`` lattice, ``m = round(n ** (1/3))`` (at least 2).

    Lattice spacing 1.12 (near the LJ minimum), jitter uniform in [-0.1, 0.1) per coordinate, cut-off 1.5.
    """
    m = max(2, int(round(n ** (1.0 / 3.0))))
    g = rng(seed)
    iz, iy, ix = np.meshgrid(np.arange(m), np.arange(m), np.arange(m), indexing="ij")
    iz, iy, ix = iz.ravel(), iy.ravel(), ix.ravel()
    natoms = m ** 3
    x = ix * SPACING + g.uniform(-0.1, 0.1, natoms)
    y = iy * SPACING + g.uniform(-0.1, 0.1, natoms)
    z = iz * SPACING + g.uniform(-0.1, 0.1, natoms)
    cols, valid = [], []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if dx == 0 and dy == 0 and dz == 0:
                    continue
                jz, jy, jx = iz + dz, iy + dy, ix + dx
                ok = (jz >= 0) & (jz < m) & (jy >= 0) & (jy < m) & (jx >= 0) & (jx < m)
                cols.append(np.where(ok, (jz * m + jy) * m + jx, -1))
                valid.append(ok)
    neigh = np.stack(cols, axis=1)
    ok = np.stack(valid, axis=1)
    order = np.argsort(~ok, axis=1, kind="stable")  # valid entries first, in offset order
    neigh = np.take_along_axis(neigh, order, axis=1).astype(np.int32)
    nneigh = ok.sum(axis=1).astype(np.int32)
    return x, y, z, neigh, nneigh, CUTOFF * CUTOFF


KERNEL = KernelSpec(
    name="lennard_jones",
    category="special",
    description="Lennard-Jones 12-6 forces over a neighbour list with a cut-off; gathers and divergent branches",
    cpu=lennard_jones_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 64, "small": 32768, "medium": 262144, "large": 2097152},
    rtol=1e-9,
    atol=1e-9,
    expect_gpu_faster=True,
)
