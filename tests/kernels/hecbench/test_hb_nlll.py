"""The nlll port against a NumPy weighted NLL loss and a hand-worked example."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import nlll

REGION = numba.njit(nlll.nll_loss_forward_reduce2d)


@pytest.mark.parametrize("params,seed", [(nlll.TEST_POINT, 0), ({"nframe": 1000, "n_classes": 7}, 1)])
def test_region_equals_numpy(params, seed):
    args = nlll.make_inputs(params, seed)
    inp, target, weights = args[2], args[3].astype(np.int64), args[4].astype(np.float64)
    n, k, ignore = params["nframe"], params["n_classes"], args[8]
    keep = target != ignore
    picked = inp.reshape(n, k)[np.arange(n), target].astype(np.float64)
    loss = -(picked * weights[target])[keep].sum()
    tw = weights[target][keep].sum()
    out, got_tw = REGION(*args)
    assert got_tw[0] == pytest.approx(tw, rel=1e-4, abs=1e-4)
    assert out[0] == pytest.approx(loss / tw, rel=1e-3)
    assert (~keep).any()


def test_worked_example():
    # 3 frames, 3 classes, targets (0, 1, 2) with class 1 ignored: loss = -(0.5 * 2 + 0.25 * 4) / (2 + 4)
    inp = np.array([0.5, 9, 9, 9, 9, 9, 9, 9, 0.25], dtype=np.float32)
    target = np.array([0, 1, 2], dtype=np.int32)
    weights = np.array([2, 3, 4], dtype=np.float32)
    z = np.zeros((1, nlll.THREADS), np.float32)
    out, tw = REGION(np.zeros(1, np.float32), np.zeros(1, np.float32), inp, target, weights, True, 3, 3, 1, z,
                     z.copy())
    assert tw[0] == 6.0 and out[0] == pytest.approx(-2.0 / 6.0)
