"""HeCBench merge (kernels/measured/hecbench/merge.py): the diagonals' crossings against a stable NumPy merge,
the merged output against ``numpy.sort``, and the glibc key stream."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import merge

WD = numba.njit(merge.workload_diagonals)
MP = numba.njit(merge.merge_single_path)


@pytest.mark.parametrize("size,blocks,seed", [(1500, 6, 0), (4000, 11, 1), (100, 3, 2)])
def test_crossings_and_merge(size, blocks, seed):
    p = {"size": size, "runs": 1, "blocks": blocks}
    A, la, B, lb, dpi, nb = merge.make_inputs_wd(p, seed)
    got = WD(A, la, B, lb, dpi, nb)
    assert got.tolist() == merge.crossings(A, la, B, lb, nb).tolist()
    C = MP(A, la, B, lb, got, np.zeros(la + lb + merge.PADDING, dtype=np.uint32), nb)
    assert C[: la + lb].tolist() == np.sort(np.concatenate([A[:la], B[:lb]])).tolist()


def test_ties_between_the_arrays():
    # many equal keys on both sides: the crossings put A first, the merge is still sorted
    pad = np.full(merge.PADDING, merge.POS_INF, dtype=np.uint32)
    A = np.concatenate([np.repeat(np.arange(1, 41, dtype=np.uint32), 5), pad])
    B = np.concatenate([np.repeat(np.arange(1, 41, dtype=np.uint32), 5), pad])
    dpi = WD(A, 200, B, 200, np.zeros(10, dtype=np.uint32), 4)
    # diagonal 100 (block 1): the first 100 keys are 1..10 x 5 from A and the same from B; A first on ties
    assert dpi.tolist() == [0, 50, 100, 150, 200, 0, 50, 100, 150, 200]
    C = MP(A, 200, B, 200, dpi, np.zeros(400 + merge.PADDING, dtype=np.uint32), 4)
    assert C[:400].tolist() == np.repeat(np.arange(1, 41), 10).tolist()


def test_keys_are_the_hosts_rand_stream():
    A, B = merge.sorted_keys(5, 0)
    r = [int(v) for v in merge.glibc_rand(1, 10)]
    assert A[:5].tolist() == sorted(r[0::2]) and B[:5].tolist() == sorted(r[1::2])
    assert A[5:].tolist() == [merge.POS_INF] * merge.PADDING
    assert merge.work_wd(merge.POINTS["100000 100"]) == (112 * 32, 32)
    assert merge.work_mp(merge.POINTS["100000 100"]) == (112 * 128, 128)
