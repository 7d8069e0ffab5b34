"""The md port (kernels/measured/hecbench/md.py): its neighbour lists against the host's ordered-insertion
search written out literally, and its forces against a vectorised NumPy Lennard-Jones sum."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import md

REGION = numba.njit(md.md)


def _host_neighbor_list(pos, max_neighbors):
    # the original's insertInOrder: a sorted list of (distance, atom), an equal distance goes behind
    n = len(pos)
    out = np.full(max_neighbors * n, -1, np.int64)
    for i in range(n):
        dist, lst = [np.finfo(np.float32).max] * max_neighbors, [-1] * max_neighbors
        for j in range(n):
            if i == j:
                continue
            d = float(((pos[i] - pos[j]) ** 2).sum())
            if d > dist[-1]:
                continue
            for k, dk in enumerate(dist):
                if d < dk:
                    dist.insert(k, d)
                    lst.insert(k, j)
                    del dist[max_neighbors:], lst[max_neighbors:]
                    break
        out[np.arange(max_neighbors) * n + i] = lst
    return out


@pytest.mark.parametrize("n,edge,seed", [(200, 20, 0), (300, 4, 1)])
def test_neighbor_list_equals_host_search(n, edge, seed):
    inputs = md.make_inputs({"n_atom": n, "domain_edge": edge}, seed)
    want = _host_neighbor_list(inputs[0][:, :3], md.MAX_NEIGHBORS)
    np.testing.assert_array_equal(inputs[2], want)


@pytest.mark.parametrize("n,edge,seed", [(200, 20, 0), (1280, 5, 2)])
def test_region_equals_numpy_forces(n, edge, seed):
    inputs = md.make_inputs({"n_atom": n, "domain_edge": edge}, seed)
    pos, nl = inputs[0], inputs[2].reshape(md.MAX_NEIGHBORS, n)
    got = REGION(*inputs)
    d = pos[:n, None, :3] - pos[nl.T, :3]  # (atom, neighbour, xyz)
    r2 = (d * d).sum(axis=2)
    inside = (r2 > 0) & (r2 < md.CUTSQ)
    with np.errstate(divide="ignore"):
        inv = np.where(inside, 1.0 / r2, 0.0)
    c = inv * inv**3 * (md.LJ1 * inv**3 - md.LJ2)
    want = (d * c[:, :, None]).sum(axis=1)
    np.testing.assert_allclose(got[:, :3], want, rtol=1e-12, atol=1e-12)
    assert np.all(got[:, 3] == 0.0) and np.abs(want).max() > 0.1
    if edge == 5:
        # the dense cube: coincident atoms (r2 = 0) are skipped, many neighbours lie within the cutoff
        assert (r2 == 0).any() and inside.mean() > 0.5


def test_hand_worked_pair_and_work():
    pos = np.zeros((2, 4))
    pos[1, 0] = 1.0
    nl = np.array([1, 0], np.int32)  # one neighbour each
    f = md.md(pos, np.zeros((2, 4)), nl, 2, 1, md.LJ1, md.LJ2, md.CUTSQ, 256)
    # r2 = 1: force coefficient 1 * 1 * (1.5 - 2) = -0.5, along d = -1 for atom 0
    assert f[0, 0] == 0.5 and f[1, 0] == -0.5 and f[0, 1] == 0.0
    assert md.work(md.POINTS["3 1000"]) == (73728, 256)
