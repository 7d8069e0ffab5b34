"""The floydwarshall port against a NumPy relaxation pass and a hand-worked 3-node graph."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import floydwarshall as fw

REGION = numba.njit(fw.floyd_warshall_pass)


@pytest.mark.parametrize("nodes,k,seed", [(48, 0, 0), (32, 5, 1)])
def test_pass_equals_numpy(nodes, k, seed):
    d, p, n, _ = fw.make_inputs({"nodes": nodes, "pass": 0}, seed)
    D = d.reshape(n, n).astype(np.int64)
    via = D[:, k : k + 1] + D[k : k + 1, :]
    better = via < D
    want_d = np.where(better, via, D)
    want_p = np.where(better, k, p.reshape(n, n))
    got_d, got_p = REGION(d.copy(), p.copy(), n, k)
    assert np.array_equal(got_d.reshape(n, n), want_d)
    assert np.array_equal(got_p.reshape(n, n), want_p)
    assert better.any()


def test_host_matrix_is_glibc_rand_mod_201():
    d, p, n, _ = fw.make_inputs({"nodes": 16, "pass": 0}, 0)
    assert d.max() <= 200 and np.all(d[:: n + 1] == 0)
    assert p.reshape(n, n)[3, 1] == 3 and p.reshape(n, n)[1, 3] == 1


def test_worked_example():
    # 0 -> 1 costs 9 directly, 0 -> 2 -> 1 costs 2 + 3 = 5; pass k = 2 takes it
    d = np.array([0, 9, 2, 9, 0, 9, 9, 3, 0], dtype=np.uint32)
    p = np.zeros(9, dtype=np.uint32)
    got_d, got_p = REGION(d, p, 3, 2)
    assert got_d.tolist() == [0, 5, 2, 9, 0, 9, 9, 3, 0]
    assert got_p.tolist() == [0, 2, 0, 0, 0, 0, 0, 0, 0]
