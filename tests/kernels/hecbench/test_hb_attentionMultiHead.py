"""The attentionMultiHead port (kernels/measured/hecbench/attentionMultiHead.py) against softmax attention in
NumPy (double precision), a butterfly worked by hand, and the data's launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import attentionMultiHead as amh

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _numpy_attention(q, k, v, beam, nhead, dph, steps, scale):
    dim = nhead * dph
    qh = q.astype(np.float64).reshape(beam, nhead, dph)
    kh = k.astype(np.float64).reshape(beam, steps, nhead, dph)
    vh = v.astype(np.float64).reshape(beam, steps, nhead, dph)
    s = np.einsum("bhd,bthd->bht", qh, kh) * float(scale)
    s = np.maximum(s - s.max(-1, keepdims=True), -64)
    p = np.exp(s) / np.exp(s).sum(-1, keepdims=True)
    return np.einsum("bht,bthd->bhd", p, vh).reshape(beam * dim)


@pytest.mark.parametrize("params,seed", [(amh.TEST_POINT, 0), ({"repeat": 1, "beamsize": 3, "nhead": 2,
                                                                 "dim_per_head": 96, "n_steps": 5}, 2)])
def test_region_equals_numpy_attention(params, seed):
    inputs = amh.make_inputs(params, seed)
    got = numba.njit(amh.mha)(*copy.deepcopy(inputs))
    want = _numpy_attention(inputs[0], inputs[1], inputs[2], params["beamsize"], params["nhead"],
                            params["dim_per_head"], params["n_steps"], inputs[8])
    np.testing.assert_allclose(got, want, rtol=2e-5)


def test_hand_worked_single_step():
    # one step: softmax weight 1, the output is the value row itself
    beam, nhead, dph = 1, 1, 32
    q = np.ones(dph, np.float32)
    k = np.full(dph, 0.5, np.float32)
    v = np.arange(dph, dtype=np.float32)
    out = amh.mha(q, k, v, beam, 1, dph, dph, nhead, np.float32(0.25), 64, np.zeros(dph, np.float32), dph, dph)
    assert np.array_equal(out, v)


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    row = df[(df.targetName == "attentionMultiHead-cuda") & (df.kernelName == "mha")].iloc[0]
    block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
    grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
    assert amh.work(amh.POINTS["100000"]) == (grid * block, block)
