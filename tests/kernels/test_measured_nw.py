"""The nw ports (kernels/measured/nw.py) against a plain cell-by-cell Needleman-Wunsch DP.

Running every launch of both kernels (the host's schedule: kernel 1 for i = 1 .. block_width, then kernel
2 for i = block_width - 1 .. 1) must give the whole score matrix of the plain DP; each first invocation
alone must fill exactly its tiles with the DP's values. Also: the host's inputs (BLOSUM62, sequences,
borders) and a worked example with a constant score.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured import nw
from kernels.measured._glibc import glibc_rand

KERNEL_1 = numba.njit(nw.needle_opencl_shared_1)
KERNEL_2 = numba.njit(nw.needle_opencl_shared_2)


def _plain_dp(reference, matrix, cols, penalty):
    R = reference.reshape(cols, cols)
    H = matrix.reshape(cols, cols).astype(np.int64)
    for r in range(1, cols):
        for c in range(1, cols):
            H[r, c] = max(H[r - 1, c - 1] + R[r, c], H[r, c - 1] - penalty, H[r - 1, c] - penalty)
    return H


def _tiles_changed(before, after, cols):
    diff = (before != after).reshape(cols, cols)[1:, 1:]
    return {(int(r) // 16, int(c) // 16) for r, c in zip(*np.nonzero(diff))}


@pytest.mark.parametrize("n,seed", [(48, 0), (64, 1), (96, 2)])
def test_all_launches_give_the_plain_dp(n, seed):
    reference, matrix, cols = nw.host_setup(n, 10, seed)
    want = _plain_dp(reference, matrix, cols, 10)
    bw = n // 16
    m = matrix.copy()
    for i in range(1, bw + 1):
        m = KERNEL_1(reference, m, cols, 10, i, bw)
    np.testing.assert_array_equal(m, nw.upper_left_numpy(reference, matrix, cols, 10))
    for i in range(bw - 1, 0, -1):
        m = KERNEL_2(reference, m, cols, 10, i, bw)
    np.testing.assert_array_equal(m.reshape(cols, cols), want)


@pytest.mark.parametrize("n", [48, 64])
def test_first_invocations_fill_exactly_their_tiles(n):
    params = {"n": n, "penalty": 10}
    reference, matrix, cols, penalty, i, bw = nw.make_inputs_1(params, 0)
    assert (i, bw, cols) == (1, n // 16, n + 1)
    want = _plain_dp(reference, matrix, cols, penalty)
    after = KERNEL_1(reference, matrix.copy(), cols, penalty, i, bw)
    assert _tiles_changed(matrix, after, cols) == {(0, 0)}
    np.testing.assert_array_equal(after.reshape(cols, cols)[1:17, 1:17], want[1:17, 1:17])

    reference, matrix, cols, penalty, i, bw = nw.make_inputs_2(params, 0)
    assert i == bw - 1
    after = KERNEL_2(reference, matrix.copy(), cols, penalty, i, bw)
    tiles = _tiles_changed(matrix, after, cols)
    assert tiles == {(by, bw - by) for by in range(1, bw)}  # the tile diagonal just below the main one
    H = after.reshape(cols, cols)
    for by, bx in tiles:
        rows, cs = slice(1 + 16 * by, 17 + 16 * by), slice(1 + 16 * bx, 17 + 16 * bx)
        np.testing.assert_array_equal(H[rows, cs], want[rows, cs])


def test_worked_example_constant_score():
    # every residue pair scores +1, penalty 10, one tile: the best path to (r, c) takes min(r, c) diagonal
    # steps and |r - c| gaps, so H[r, c] = min(r, c) - 10 |r - c|
    cols = 17
    reference = np.ones((cols, cols), dtype=np.int32)
    reference[0, :] = 0
    reference[:, 0] = 0
    matrix = np.zeros((cols, cols), dtype=np.int32)
    matrix[0, :] = -10 * np.arange(cols)
    matrix[:, 0] = -10 * np.arange(cols)
    H = nw.needle_opencl_shared_1(reference.ravel(), matrix.ravel(), cols, 10, 1, 1).reshape(cols, cols)
    r, c = np.meshgrid(np.arange(cols), np.arange(cols), indexing="ij")
    np.testing.assert_array_equal(H[1:, 1:], (np.minimum(r, c) - 10 * np.abs(r - c))[1:, 1:])
    assert H[16, 16] == 16 and H[16, 1] == 1 - 150


def test_blosum62_table():
    assert nw.BLOSUM62_LETTERS == "ARNDCQEGHILKMFPSTWYVBZX*"
    B = nw.BLOSUM62
    assert B.shape == (24, 24) and np.array_equal(B, B.T)
    idx = {a: k for k, a in enumerate(nw.BLOSUM62_LETTERS)}
    assert B[idx["W"], idx["W"]] == 11 and B[idx["C"], idx["C"]] == 9 and B[idx["A"], idx["A"]] == 4
    assert B[idx["W"], idx["C"]] == -2 and B[idx["*"], idx["*"]] == 1 and B[idx["*"], idx["A"]] == -4


def test_host_setup():
    reference, matrix, cols = nw.host_setup(48, 10, 0)
    R, H = reference.reshape(cols, cols), matrix.reshape(cols, cols)
    assert np.all(R[0, :] == 0) and np.all(R[:, 0] == 0)
    np.testing.assert_array_equal(H[0, :], -10 * np.arange(cols))
    np.testing.assert_array_equal(H[:, 0], -10 * np.arange(cols))
    assert np.all(H[1:, 1:] == 0)
    # srand(7): the first rand() values 1045618677, 1863967299 give residues 8 (H) and 10 (L) for rows 1, 2
    # (rand() % 10 + 1); values 49 .. 96 give the columns' residues
    cols_seq = glibc_rand(7, 96)[48:] % 10 + 1
    np.testing.assert_array_equal(R[1, 1:], nw.BLOSUM62[8, cols_seq])
    np.testing.assert_array_equal(R[2, 1:], nw.BLOSUM62[10, cols_seq])
    with pytest.raises(ValueError):
        nw.host_setup(40, 10, 0)


def test_work_items_per_invocation():
    assert [nw.work_1(p)[0] for p in nw.POINTS.values()] == [16, 16, 16, 16]
    assert [nw.work_2(p)[0] for p in nw.POINTS.values()] == [32, 160, 992, 4080]
