"""The phmm port (kernels/measured/hecbench/phmm.py) against the forward recursion written as NumPy matrix
products, and the data's launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import phmm

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _numpy_cell(i, j, forward, trans, emis, like):
    out = np.zeros((phmm.BATCH, 2))
    for b in range(phmm.BATCH):
        t_prev, t_cur = trans[i - 1, b, :, :2], trans[i, b, :, :2]  # [k, state]
        terms = [forward[i - 1, j - 1, b] @ t_prev * like[0, 0, b], forward[i - 1, j, b] @ t_prev * like[0, 1, b],
                 forward[i, j - 1, b] @ t_cur * like[1, 0, b], forward[i, j, b] @ t_cur * like[1, 1, b]]
        out[b] = sum(terms) * emis[i, j, b]
    return out


@pytest.mark.parametrize("i,j,seed", [(1, 1, 0), (3, 5, 2), (11, 40, 1)])
def test_cell_equals_numpy(i, j, seed):
    inputs = phmm.make_inputs({"repeat": 1, "cur_i": i, "cur_j": j}, seed)
    got = numba.njit(phmm.pair_HMM_forward)(*copy.deepcopy(inputs))
    _, _, forward, trans, emis, like, _, _, _ = inputs
    np.testing.assert_allclose(got[i, j], _numpy_cell(i, j, forward, trans, emis, like), rtol=1e-13)
    mask = np.ones(got.shape[:2], bool)
    mask[i, j] = False
    assert np.all(got[mask] == 0)  # only the cell is written


def test_hand_worked_cell():
    # all ones: each s_n = 2 * 1 * 1, four of them, times emission 0.5: 4
    shape_f = (phmm.X_DIM + 1, phmm.Y_DIM + 1, phmm.BATCH, 2)
    out = phmm.pair_HMM_forward(1, 1, np.ones(shape_f), np.ones((12, 4, 2, 3)), np.full(shape_f, 0.5),
                                np.ones((2, 2, 4, 2)), np.ones((4, 2)), np.zeros(shape_f), 8)
    assert np.all(out[1, 1] == 4.0)


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    row = df[(df.targetName == "phmm-cuda") & (df.kernelName == "pair_HMM_forward")].iloc[0]
    block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
    grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
    assert phmm.work(phmm.POINTS["1000"]) == (grid * block, block)
