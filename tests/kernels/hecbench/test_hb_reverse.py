"""HeCBench reverse (kernels/measured/hecbench/reverse.py) against NumPy's reversal."""

from __future__ import annotations

import numba
import numpy as np

from kernels.measured.hecbench import reverse

REGION = numba.njit(reverse.reverse)


def test_first_launch_reverses_gold_even():
    d, n = reverse.make_inputs(reverse.POINTS["100"], 0)
    got = REGION(d, n)
    assert got.tolist() == list(range(255, -1, -1))


def test_other_values_and_twice_is_identity():
    d = np.array([7, -3, 12, 0, 5, 9, -8, 1], dtype=np.int32)
    assert REGION(d.copy(), 8).tolist() == [1, -8, 9, 5, 0, 12, -3, 7]
    assert REGION(REGION(d.copy(), 8), 8).tolist() == d.tolist()
    assert reverse.KERNELS[0].gpu.run(d.copy(), 8).tolist() == d[::-1].tolist()
