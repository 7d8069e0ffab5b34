"""The bitpermute port (kernels/measured/hecbench/bitpermute.py) against a bit-reversal written with Python
strings, and the launch geometry of the data's first launches."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pandas as pd

from kernels.measured.hecbench import bitpermute as bp

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _reversed(lg):
    rev = [int(format(i, f"0{lg}b")[::-1], 2) for i in range(1 << lg)]
    out = np.empty(1 << lg, np.int64)
    out[rev] = np.arange(1 << lg)
    return out


def test_brev_hand_worked():
    assert bp._brev(1, 10) == 512 and bp._brev(6, 3) == 3 and bp._brev(0b1011, 4) == 0b1101
    assert bp._brev(1, 1) == 1 and bp._brev(0, 1) == 0


def test_small_domain_permutation():
    inputs = bp.make_inputs_1(bp.TEST_POINT, 0)
    got = numba.njit(bp.bit_rev_permutation)(*copy.deepcopy(inputs))
    assert np.array_equal(got, _reversed(10))
    # a second size: 256 elements in one block of 256
    got = bp.bit_rev_permutation(np.arange(256, dtype=np.int64) * 3, 8, 256)
    assert np.array_equal(got, _reversed(8) * 3)


def test_tiled_permutation():
    inputs = bp.make_inputs_z(bp.TEST_POINT, 0)
    got = numba.njit(bp.bit_rev_permutation_z)(*copy.deepcopy(inputs))
    assert np.array_equal(got, _reversed(11))


def test_tiled_permutation_with_partner_groups():
    # lg = 12: group indices of 2 bits, groups 1 and 2 are partners (swap-back half taken); 128 threads
    got = bp.bit_rev_permutation_z(np.arange(4096, dtype=np.int64), 12, 32, 128)
    assert np.array_equal(got, _reversed(12))


def test_work_equals_the_datas_first_launch():
    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in bp.KERNELS:
        row = df[(df.targetName == "bitpermute-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["100"]) == (grid * block, block)
