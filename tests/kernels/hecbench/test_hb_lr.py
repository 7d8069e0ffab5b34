"""The lr port (kernels/measured/hecbench/lr.py) against block sums and a line fit in double precision
(``numpy.polyfit``), the odd-size tree worked by hand, and the data's launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import lr

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
SPEC = {k.kernel: k for k in lr.KERNELS}


@pytest.mark.parametrize("blocks,seed", [(5, 0), (12, 3)])
def test_block_sums_equal_numpy(blocks, seed):
    params = {"repeat": 1, "cpu_offset": 0, "size": blocks * lr.WG}
    inputs = SPEC["linear_regression"].make_inputs(params, seed)
    got = numba.njit(lr.linear_regression)(*copy.deepcopy(inputs))
    d = inputs[0].astype(np.float64).reshape(blocks, lr.WG, 2)
    x, y = d[..., 0], d[..., 1]
    want = np.stack([x.sum(1), y.sum(1), (x * y).sum(1), (x * x).sum(1)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert np.array_equal(got, lr.block_tree_sums(np.stack([inputs[0][:, 0], inputs[0][:, 1],
                                                             inputs[0][:, 0] * inputs[0][:, 1],
                                                             inputs[0][:, 0] ** 2], 1), lr.WG))


@pytest.mark.parametrize("blocks,seed", [(5, 0), (12, 3)])
def test_rsquared_sums_equal_numpy(blocks, seed):
    params = {"repeat": 1, "cpu_offset": 0, "size": blocks * lr.WG}
    inputs = SPEC["rsquared"].make_inputs(params, seed)
    data, mean, a0, a1 = inputs[:4]
    x, y = data[:, 0].astype(np.float64), data[:, 1].astype(np.float64)
    slope, icept = np.polyfit(x, y, 1)
    assert a1 == pytest.approx(slope, rel=1e-3) and a0 == pytest.approx(icept, rel=1e-2, abs=1e-2)
    assert mean == pytest.approx(y.mean(), rel=1e-5)
    got = numba.njit(lr.rsquared)(*copy.deepcopy(inputs))
    want = np.stack([((y - mean) ** 2).reshape(blocks, -1).sum(1),
                     ((x * a1 + a0 - mean) ** 2).reshape(blocks, -1).sum(1)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    r2 = got[:, 1].sum() / got[:, 0].sum()
    assert 0.5 < r2 < 1  # the synthetic data's line explains most of the variance


def test_odd_tree_hand_worked():
    # block of 63 ones: every step keeps the left-over element, so the total is 63 (no element lost)
    data = np.ones((63, 2), np.float32)
    got = lr.linear_regression(data, np.zeros((1, 4), np.float32), 63, 63)
    assert got.tolist() == [[63.0, 63.0, 63.0, 63.0]]
    vals = np.arange(63, dtype=np.float32)
    got = lr.linear_regression(np.stack([vals, np.ones(63, np.float32)], 1), np.zeros((1, 4), np.float32), 63, 63)
    assert got[0, 0] == 63 * 62 / 2 and got[0, 3] == sum(v * v for v in range(63))


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in lr.KERNELS:
        row = df[(df.targetName == "lr-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["100000 0"]) == (grid * block, block)
