"""HeCBench remap (kernels/measured/hecbench/remap.py) against ``numpy.unique``'s inverse (the rank of each
key among the distinct values), the program's worked example and the data's grid."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import remap

REGION = numba.njit(remap.remap_kernel)


@pytest.mark.parametrize("n,seed", [(2000, 0), (3001, 4)])
def test_ranks_equal_numpy_unique_inverse(n, seed):
    args = remap.make_inputs({"n": n, "repeat": 1, "k": 0}, seed)
    got = REGION(*args)
    _, inverse = np.unique(remap.keys(n, seed), return_inverse=True)
    assert got.tolist() == inverse.tolist()


def test_programs_example():
    # the program's EXAMPLE input 1 3 5 1 5 7 9 -> ranks 0 1 2 0 2 3 4
    x = np.array([1, 3, 5, 1, 5, 7, 9], dtype=np.int32)
    first = np.argsort(x, kind="stable").astype(np.int32)
    second = np.array([0, 2, 3, 5, 6, 5, 6], dtype=np.int32)  # group starts in 1 1 3 5 5 7 9, then the tail
    got = REGION(second, first, np.zeros(7, dtype=np.int32), 7, 5, 256)
    assert got.tolist() == [0, 1, 2, 0, 2, 3, 4]


@pytest.mark.parametrize("label", ["test", "features"])
def test_distinct_counts_of_the_points(label):
    spec = remap.KERNELS[0]
    p = spec.params(label)
    assert make_k(p) == p["k"]


def make_k(p):
    return int(np.unique(remap.keys(int(p["n"]), 0)).size)


def test_measured_point_has_the_datas_grid():
    p = remap.POINTS["10000000 1000"]
    assert make_k(p) == p["k"]
    assert remap.work(p) == (24692 * 256, 256)
