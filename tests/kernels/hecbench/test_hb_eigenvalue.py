"""The eigenvalue port (kernels/measured/hecbench/eigenvalue.py) against ``numpy.linalg.eigvalsh`` of the
tridiagonal matrix, a bisection pass worked from the counts, and the data's launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import eigenvalue as ev

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
SPEC = {k.kernel: k for k in ev.KERNELS}


def _eigenvalues(diagonal, off):
    t = np.diag(diagonal.astype(np.float64)) + np.diag(off.astype(np.float64), 1) + np.diag(off.astype(np.float64),
                                                                                             -1)
    return np.linalg.eigvalsh(t)


@pytest.mark.parametrize("n,seed", [(256, 0), (512, 1)])
def test_counts_equal_eigvalsh(n, seed):
    inputs = SPEC["calNumEigenValueInterval"].make_inputs({"length": n, "repeat": 1}, seed)
    got = numba.njit(ev.calNumEigenValueInterval)(*copy.deepcopy(inputs))
    assert got[0] == n and np.all(got[1:] == 0)  # the Gerschgorin interval holds every eigenvalue
    diagonal, off = inputs[2], inputs[3]
    lam = _eigenvalues(diagonal, off)
    # counts at points between the eigenvalues, away from them: exactly the number below
    xs = ((lam[:-1] + lam[1:]) / 2)[np.diff(lam) > 1e-2][:40].astype(np.float32)
    intervals = np.empty(2 * n, np.float32)
    intervals[0::2] = lam[0] - 1
    intervals[1::2] = np.resize(xs, n)
    counts = numba.njit(ev.calNumEigenValueInterval)(np.zeros(n, np.uint32), intervals, diagonal, off, n, n)
    want = np.searchsorted(lam, np.resize(xs, n).astype(np.float64))
    assert np.array_equal(counts, want)


@pytest.mark.parametrize("n,seed", [(256, 0), (512, 2)])
def test_first_recalculation_splits_into_equal_parts(n, seed):
    inputs = SPEC["recalculateEigenIntervals"].make_inputs({"length": n, "repeat": 1}, seed)
    new = numba.njit(ev.recalculateEigenIntervals)(*copy.deepcopy(inputs))
    lo, hi = inputs[1][0], inputs[1][1]
    edges = lo + (hi - lo) / n * np.arange(n + 1)
    np.testing.assert_allclose(new[0::2], edges[:-1], rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(new[1::2] - new[0::2], (hi - lo) / n, rtol=1e-4)


def test_bisection_of_single_eigenvalue_intervals():
    # 2 x 2 matrix diag(1.5, 3.5): intervals [0, 2) and [2, 4) hold one eigenvalue each
    diagonal, off = np.array([1.5, 3.5], np.float32), np.array([0], np.float32)
    intervals = np.array([0, 2, 2, 4], np.float32)
    num = np.array([1, 1], np.uint32)
    new = ev.recalculateEigenIntervals(np.zeros(4, np.float32), intervals, num, diagonal, off, 2, ev.TOLERANCE, 2)
    assert new.tolist() == [1, 2, 3, 4]  # 1.5 is in the right half of [0, 2), 3.5 in the right half of [2, 4)
    narrow = np.array([1.4999, 1.5003, 2, 4], np.float32)  # narrower than the tolerance: kept
    new = ev.recalculateEigenIntervals(np.zeros(4, np.float32), narrow, num, diagonal, off, 2, ev.TOLERANCE, 2)
    assert new.tolist() == [narrow[0], narrow[1], 3, 4]


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in ev.KERNELS:
        row = df[(df.targetName == "eigenvalue-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["2048 10000"]) == (grid * block, block)
