"""Lennard-Jones forces from neighbour lists (SHOC's MD), HeCBench ``md``: the kernel ``md``.

``nAtom`` atoms at integer lattice positions in a cube of edge ``domainEdge = 20``; each has a list of its
``maxNeighbors = 128`` nearest atoms (built on the host). Thread ``idx`` (one per atom, guard ``idx <
nAtom``) loops over its 128 neighbours ``jidx = neighborList[j nAtom + idx]`` (the list stored neighbour-major
for coalesced reads, the positions read uncoalesced), and for each neighbour with ``0 < r^2 < cutsq = 13.5``
adds ``d (1/r^2)(1/r^6)(lj1 / r^6 - lj2)`` to its force (``lj1 = 1.5``, ``lj2 = 2``; ``d`` the position
difference), then writes the force (a 4-vector, ``w = 0``).

Launch: blocks of 256, ``ceil(nAtom / 256)`` blocks. Measured point ``3 1000`` (size class 3, iterations):
``nAtom = 73728``, 288 blocks; the timed launch is the first (the warm-up launch whose result the host
checks). ``domain_edge`` is a parameter (the program's constant 20 at the measured and test points; the
feature point keeps the measured density in a smaller cube).

Inputs: the host's ``srand(123)``, then per atom ``x, y, z = rand() % 20`` (glibc ``rand`` seeded with ``123 +
seed``; seed 0 gives the original's positions). The neighbour list is the host's: for atom ``i`` the 128
atoms ``j != i`` of smallest squared distance, ties in ascending ``j`` (the original's ordered insertion
keeps an equal distance behind those already in the list); built here by visiting the lattice offsets in
order of squared length, which gives the same list without the host's quadratic search.

Precision: double (float64): the data's first launch counts FP64 operations only (the program built with
``FPTYPE double``). Positions and forces as ``(nAtom, 4)`` arrays (``double4``), ``w`` zero.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
MAX_NEIGHBORS = 128
DOMAIN_EDGE = 20
CUTSQ = 13.5
LJ1 = 1.5
LJ2 = 2.0
PROB_SIZES = (12288, 24576, 36864, 73728)

POINTS = {"3 1000": {"n_atom": PROB_SIZES[3], "domain_edge": DOMAIN_EDGE}}
TEST_POINT = {"n_atom": 200, "domain_edge": DOMAIN_EDGE}
#: 1152 atoms in a cube of edge 5 (the measured point's 9.216 atoms per lattice point, so that a similar
#: share of the 128 neighbours lies within the cutoff; about 5e6 records)
FEATURE_POINT = {"n_atom": 1152, "domain_edge": 5}


def md(position, force, neighbor_list, n_atom, max_neighbors, lj1, lj2, cutsq, n_threads):
    """Every atom's Lennard-Jones force from its neighbour list into ``force``."""
    for idx in numba.prange(n_threads):
        if idx < n_atom:
            ix = position[idx, 0]
            iy = position[idx, 1]
            iz = position[idx, 2]
            fx = 0.0
            fy = 0.0
            fz = 0.0
            j = 0
            while j < max_neighbors:
                jidx = neighbor_list[j * n_atom + idx]
                delx = ix - position[jidx, 0]
                dely = iy - position[jidx, 1]
                delz = iz - position[jidx, 2]
                r2inv = delx * delx + dely * dely + delz * delz
                if r2inv > 0 and r2inv < cutsq:
                    r2inv = 1.0 / r2inv
                    r6inv = r2inv * r2inv * r2inv
                    force_c = r2inv * r6inv * (lj1 * r6inv - lj2)
                    fx += delx * force_c
                    fy += dely * force_c
                    fz += delz * force_c
                j += 1
            force[idx, 0] = fx
            force[idx, 1] = fy
            force[idx, 2] = fz
            force[idx, 3] = 0.0
    return force


@cuda.jit
def _md_gpu(position, force, neighbor_list, n_atom, max_neighbors, lj1, lj2, cutsq):
    idx = cuda.grid(1)
    if idx < n_atom:
        ix = position[idx, 0]
        iy = position[idx, 1]
        iz = position[idx, 2]
        fx = 0.0
        fy = 0.0
        fz = 0.0
        j = 0
        while j < max_neighbors:
            jidx = neighbor_list[j * n_atom + idx]
            delx = ix - position[jidx, 0]
            dely = iy - position[jidx, 1]
            delz = iz - position[jidx, 2]
            r2inv = delx * delx + dely * dely + delz * delz
            if r2inv > 0 and r2inv < cutsq:
                r2inv = 1.0 / r2inv
                r6inv = r2inv * r2inv * r2inv
                force_c = r2inv * r6inv * (lj1 * r6inv - lj2)
                fx += delx * force_c
                fy += dely * force_c
                fz += delz * force_c
            j += 1
        force[idx, 0] = fx
        force[idx, 1] = fy
        force[idx, 2] = fz
        force[idx, 3] = 0.0


def _to_device(position, force, neighbor_list, n_atom, max_neighbors, lj1, lj2, cutsq, n_threads):
    return {"pos": cuda.to_device(position), "force": cuda.to_device(force), "nl": cuda.to_device(neighbor_list),
            "n_atom": int(n_atom), "maxn": int(max_neighbors), "lj1": float(lj1), "lj2": float(lj2),
            "cutsq": float(cutsq), "n": int(n_threads)}


def _launch(s):
    _md_gpu[s["n"] // BLOCK, BLOCK](s["pos"], s["force"], s["nl"], s["n_atom"], s["maxn"], s["lj1"], s["lj2"],
                                    s["cutsq"])


def _from_device(s):
    return s["force"].copy_to_host()


def _offsets(edge):
    """Lattice offsets of the cube ``(-edge, edge)^3``, sorted by squared length; and where each length
    starts."""
    r = np.arange(-(edge - 1), edge)
    o = np.stack(np.meshgrid(r, r, r, indexing="ij"), axis=-1).reshape(-1, 3)
    d2 = (o * o).sum(axis=1)
    order = np.argsort(d2, kind="stable")
    o, d2 = o[order], d2[order]
    return o.astype(np.int64), d2.astype(np.int64)


@numba.njit(cache=False)
def _neighbors(cells, n_atom, edge, max_neighbors, offsets, d2):
    """The neighbour list (neighbour-major) of atoms at integer cells ``cells`` (``(n_atom, 3)``)."""
    ncell = edge * edge * edge
    key = np.empty(n_atom, np.int64)
    for i in range(n_atom):
        key[i] = (cells[i, 0] * edge + cells[i, 1]) * edge + cells[i, 2]
    order = np.argsort(key, kind="mergesort")  # atoms by cell, ascending index within a cell
    start = np.zeros(ncell + 1, np.int64)
    for i in range(n_atom):
        start[key[i] + 1] += 1
    for c in range(ncell):
        start[c + 1] += start[c]
    out = np.full(max_neighbors * n_atom, -1, np.int64)
    buf = np.empty(n_atom, np.int64)
    n_off = offsets.shape[0]
    for i in range(n_atom):
        count = 0
        k = 0
        while k < n_off and count < max_neighbors:
            # every atom at this squared distance, in ascending index
            m = 0
            k0 = k
            while k < n_off and d2[k] == d2[k0]:
                x = cells[i, 0] + offsets[k, 0]
                y = cells[i, 1] + offsets[k, 1]
                z = cells[i, 2] + offsets[k, 2]
                if 0 <= x < edge and 0 <= y < edge and 0 <= z < edge:
                    c = (x * edge + y) * edge + z
                    for p in range(start[c], start[c + 1]):
                        j = order[p]
                        if j != i:
                            buf[m] = j
                            m += 1
                k += 1
            shell = np.sort(buf[:m])
            for q in range(m):
                if count < max_neighbors:
                    out[count * n_atom + i] = shell[q]
                    count += 1
    return out


def make_inputs(params, seed):
    """The host's positions (``rand() % 20``) and its 128-nearest neighbour lists; a zeroed force."""
    n, edge = int(params["n_atom"]), int(params["domain_edge"])
    cells = (glibc_rand(123 + seed, 3 * n) % edge).reshape(n, 3).astype(np.int64)
    position = np.zeros((n, 4))
    position[:, :3] = cells
    offsets, d2 = _offsets(edge)
    nl = _neighbors(cells, n, edge, MAX_NEIGHBORS, offsets, d2).astype(np.int32)
    return position, np.zeros((n, 4)), nl, n, MAX_NEIGHBORS, LJ1, LJ2, CUTSQ, work(params)[0]


def work(params):
    n = int(params["n_atom"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="md",
        kernel="md",
        description="HeCBench md: Lennard-Jones force of every atom over its 128-nearest neighbour list",
        cpu=md,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-9,
        atol=1e-9,
    ),
]
