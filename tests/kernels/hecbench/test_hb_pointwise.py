"""The pointwise port (kernels/measured/hecbench/pointwise.py) against a NumPy LSTM cell and the LCG worked in
Python integers, and the launch geometry of the data's first launches."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import pointwise as pw

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
SMALL = {"seqLength": 2, "numLayers": 3, "hiddenSize": 20, "miniBatch": 5, "repeat": 1}


def test_lcg_hand_worked():
    # index 3 of a buffer of 8: seed = 3 ^ 8 = 11; (26757677 * 11 + 1) mod 2^32 mod 2^31
    s = (26757677 * 11 + 1) % 2**32 % 2**31
    got = pw.init(np.zeros(8, np.float32), 8, 256)
    assert got[3] == np.float32(s) / np.float32(2**31)
    assert np.array_equal(got, pw.lcg_fill(8))


@pytest.mark.parametrize("params", [pw.TEST_POINT, SMALL])
def test_init_equals_python_integers(params):
    inputs = pw.make_inputs_init(params, 0)
    got = numba.njit(pw.init)(*copy.deepcopy(inputs))
    size = inputs[1]
    want = [np.float32((26757677 * (i ^ size) + 1) % 2**32 % 2**31) / np.float32(2**31) for i in range(size)]
    assert np.array_equal(got, np.array(want, np.float32))
    assert 0 <= got.min() and got.max() < 1


@pytest.mark.parametrize("params", [pw.TEST_POINT, SMALL])
def test_lstm_cell_equals_numpy(params):
    inputs = pw.make_inputs_ew(params, 0)
    hs, mb, tmp_h, tmp_i, bias, _, _, _, c_in, _, _ = inputs
    gates, h, i_out, c = numba.njit(pw.elementWise_fp)(*copy.deepcopy(inputs))
    n = hs * mb
    idx = np.arange(n)
    gi = idx % hs + 4 * (idx // hs) * hs
    pre = [tmp_i[gi + k * hs].astype(float) + tmp_h[gi + k * hs] + bias[k * hs + idx % hs]
           + bias[(k + 4) * hs + idx % hs] for k in range(4)]
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    want_c = sig(pre[1]) * c_in + sig(pre[0]) * np.tanh(pre[2])
    np.testing.assert_allclose(c, want_c, rtol=1e-5)
    np.testing.assert_allclose(h, sig(pre[3]) * np.tanh(want_c), rtol=1e-5)
    assert np.array_equal(h, i_out)
    for k in range(4):
        np.testing.assert_allclose(gates[gi + k * hs], pre[k], rtol=1e-6)


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in pw.KERNELS:
        row = df[(df.targetName == "pointwise-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["100 8 512 64 100"]) == (grid * block, block)
