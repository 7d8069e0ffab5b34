"""HeCBench layout (kernels/measured/hecbench/layout.py) against the program's closed-form reference
(tree ``i`` sums ``i * S + j`` over ``j < S``) and NumPy sums."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import layout

AOS = numba.njit(layout.aos_kernel)
SOA = numba.njit(layout.soa_kernel)


def _closed_form(n, s):
    i = np.arange(n, dtype=np.int64)
    return ((i * s * s + s * (s - 1) // 2) & 0xFFFFFFFF).astype(np.uint32)


@pytest.mark.parametrize("n,s", [(512, 16), (256, 3)])
def test_both_layouts_give_the_reference_sums(n, s):
    p = {"repeat": 1, "tree_num": n, "tree_size": s}
    assert AOS(*layout.make_inputs_aos(p, 0)).tolist() == _closed_form(n, s).tolist()
    apples, out = layout.make_inputs_soa(p, 0)
    assert apples[2, 1] == s + 2  # apple 2 of tree 1
    assert SOA(apples, np.zeros_like(out)).tolist() == _closed_form(n, s).tolist()


def test_wraps_like_the_original_unsigned_32_bit_sum():
    # tree 4095 of the measured size: 4095 * 4096^2 + 4096 * 4095 / 2 = 68,711,086,080 -> mod 2^32
    trees = np.arange(4095 * 4096, 4096 * 4096, dtype=np.int32).reshape(1, 4096)
    got = AOS(np.repeat(trees, 256, axis=0), np.zeros(256, dtype=np.uint32))
    assert int(got[0]) == 68711086080 % 2**32
    assert layout.work(layout.POINTS["1000"]) == (4096, 256)
