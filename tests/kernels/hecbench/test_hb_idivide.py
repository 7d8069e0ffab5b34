"""The idivide port (kernels/measured/hecbench/idivide.py): the magic numbers against Python's exact
division for many divisors, the dead store of the performance kernels, and the data's launch geometry."""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import idivide as idv

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _fast(n, m, s, n_add_sign):
    q = (m * n) >> 32
    q += n * n_add_sign
    if s >= 0:
        q >>= s
        q += 1 if q < 0 else 0
    return q


def _c_div(n, d):
    q = abs(n) // abs(d)
    return q if (n >= 0) == (d > 0) else -q


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7, 10, 641, 99999, -1, -3, -7, 2**30 + 1])
def test_magic_numbers_divide_exactly(d):
    m, s, a = idv.magic(d)
    assert -2**31 <= m < 2**31
    for n in [0, 1, 2, 5, 99, 1000003, 2**31 - 1, -1, -17, -2**31 + 1] + list(range(-300, 300, 7)):
        assert _fast(n, m, s, a) == _c_div(n, d), (n, d)


def test_known_magic_for_seven():
    assert idv.magic(7) == (-1840700269, 2, 1)  # 0x92492493, shift 2, add the dividend (Hacker's Delight)


@pytest.mark.parametrize("blocks", [4, 9])
def test_check_finds_no_mismatch_and_counts_a_broken_one(blocks):
    n = blocks * 256
    spec = next(k for k in idv.KERNELS if k.kernel == "check")
    got = numba.njit(idv.check)(*spec.make_inputs({"repeat": 1, "blocks": blocks}, 0))
    assert got.tolist() == [0, 0, 0, 0]
    # a wrong magic number (M = 1 for d = 1) is off by one for the negative dividends only: (M n) >> 32 = -1
    got = idv.check(1, 1, -1, 1, np.zeros(4, np.int64), n)
    assert got[0] == n - 1 and got[1] == -1 and got[2] == -1 and got[3] == -2


def test_performance_kernels_never_store():
    for spec in idv.KERNELS[:2]:
        out = numba.njit(spec.cpu)(*spec.make_inputs(idv.TEST_POINT, 0))
        assert out.tolist() == [0]
    # with dummy = 1 the store happens for an odd aggregate: 1023/3 + 1023/5 + 1023/7 = 341 + 204 + 146 = 691
    buf = idv.throughput_test(3, 5, 7, 1, np.zeros(1, np.int64), 1024)
    assert buf[0] % 2 == 1
    assert idv.throughput_test(3, 5, 7, 1, np.zeros(1, np.int64), 1024)[0] in {
        x // 3 + x // 5 + x // 7 for x in range(1024)}


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in idv.KERNELS:
        row = df[(df.targetName == "idivide-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["100"]) == (grid * block, block)
