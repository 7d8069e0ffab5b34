"""hecbench/permute: the three outputs equal NumPy's reshape-and-transpose of the QKV tensor (the program's
own CPU reference loop, written as array operations), and one element by hand."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench.permute import KERNELS, make_inputs, work

REGION = numba.njit(KERNELS[0].cpu)


@pytest.mark.parametrize("params", [KERNELS[0].test_point,
                                    {"B": 3, "T": 5, "C": 16, "NH": 4, "block": 64, "repeat": 1}])
def test_outputs_are_the_transposed_thirds(params):
    args = make_inputs(params, 2)
    B, T, C, NH = (params[key] for key in ("B", "T", "C", "NH"))
    q, k, v = REGION(*args)
    qkv = args[3].reshape(B, T, 3, NH, C // NH).transpose(2, 0, 3, 1, 4)
    for i, out in enumerate((q, k, v)):
        np.testing.assert_array_equal(out.reshape(B, NH, T, C // NH), qkv[i])


def test_one_element_by_hand():
    B, T, NH, d = 2, 3, 2, 4
    C = NH * d
    inp = np.arange(3 * B * T * C, dtype=np.float32)
    q, k, v = (np.zeros(B * T * C, dtype=np.float32) for _ in range(3))
    REGION(q, k, v, inp, B, T, NH, d, 32)
    # q[b=1][h=1][t=2][e=3] (flat 1*24 + 1*12 + 2*4 + 3 = 47) is inp[b=1][t=2][0][h=1][e=3] = 72 + 48 + 4 + 3
    assert q[47] == 127 and k[47] == 127 + C and v[47] == 127 + 2 * C


def test_measured_point_is_block_32():
    assert work(KERNELS[0].points["8 100"]) == (196608 * 32, 32)
