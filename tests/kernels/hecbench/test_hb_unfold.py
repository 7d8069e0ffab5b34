"""hecbench/unfold: the program's case gives ``grad_out == grad_in`` after one launch (its own check with
repeat 1), and other window positions sum the windows that cover an element, as a NumPy loop over folds."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench.unfold import KERNELS, make_inputs, work

REGION = numba.njit(KERNELS[0].cpu)


@pytest.mark.parametrize("n", [1000, 777])
def test_programs_case_copies_the_gradient(n):
    args = make_inputs({"n": n, "repeat": 1}, 0)
    got = REGION(*args)
    np.testing.assert_array_equal(got, args[1])
    assert 0 <= got.min() and got.max() <= 255 and got.max() > 200
    twice = REGION(got, *args[1:])
    np.testing.assert_array_equal(twice, 2 * args[1])


def test_first_keys_are_glibc():
    # glibc after srand(123): rand() = 128959393, 1692901013, 436085873 -> % 256
    assert make_inputs({"n": 3, "repeat": 1}, 0)[1].tolist() == [128959393 % 256, 1692901013 % 256, 436085873 % 256]


@pytest.mark.parametrize("idx_dim,size,step", [(5, 3, 2), (4, 2, 1), (1, 4, 3)])
def test_other_positions_sum_their_folds(idx_dim, size, step):
    n = 300
    grad_in = np.arange(1, 3 * n, dtype=np.int32)
    got = REGION(np.zeros(n, dtype=np.int32), grad_in, np.array([idx_dim], dtype=np.int64), size, step, 1, 1, n)
    folds = [f for f in range(n) if f * step <= idx_dim < f * step + size]
    expected = sum(grad_in[np.arange(n) + f + (idx_dim - f * step)] for f in folds)
    np.testing.assert_array_equal(got, expected)


def test_measured_point_grid():
    assert work(KERNELS[0].points["10000000 1000"]) == (39063 * 64, 64)
