"""The background-subtract port (kernels/measured/hecbench/background_subtract.py) against NumPy formulations,
hand-worked pixels, and the launch geometry of the data's first launches."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench import background_subtract as bs

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
SPEC = {k.kernel: k for k in bs.KERNELS}


@pytest.mark.parametrize("params,seed", [(bs.TEST_POINT, 0), ({"width": 100, "height": 7, "merge": 0,
                                                               "repeat": 3}, 5)])
def test_three_kernels_equal_numpy(params, seed):
    img, img1, img2, bn, tn = bs.state(params, seed)
    d1 = np.abs(img.astype(float) - img1)
    d2 = np.abs(img.astype(float) - img2)
    want_mp = np.where((d1 > 128) | (d2 > 128), 255, 0)
    mp = numba.njit(bs.findMovingPixels)(*SPEC["findMovingPixels"].make_inputs(params, seed))
    assert np.array_equal(mp, want_mp) and 0 < (mp == 0).sum() < mp.size
    got_bn = numba.njit(bs.updateBackground)(*SPEC["updateBackground"].make_inputs(params, seed))
    want_bn = np.where(mp == 0, np.floor(0.92 * bn.astype(float) + 0.08 * img), bn)
    assert np.max(np.abs(got_bn.astype(float) - want_bn)) <= 1  # float32 rounding at a truncation edge
    got_tn = numba.njit(bs.updateThreshold)(*copy.deepcopy(SPEC["updateThreshold"].make_inputs(params, seed)))
    th = np.maximum(0.92 * 128 + 0.24 * (img.astype(float) - got_bn), 20)
    want_tn = np.where(mp == 0, np.floor(th), 128)
    assert np.max(np.abs(got_tn.astype(float) - want_tn)) <= 1
    assert np.mean(got_tn.astype(float) == want_tn) > 0.99


def test_hand_worked_pixels():
    img = np.array([100, 100, 10], np.uint8)
    img1 = np.array([100, 250, 10], np.uint8)
    img2 = np.array([90, 100, 200], np.uint8)
    tn = np.array([20, 20, 20], np.uint8)
    mp = bs.findMovingPixels(3, img, img1, img2, tn, np.zeros(3, np.uint8), 256)
    assert mp.tolist() == [0, 255, 255]  # |100 - 90| = 10 <= 20 still; 150 > 20; 190 > 20 (no uint8 wrap)
    bn = bs.updateBackground(3, img, mp, np.array([50, 50, 50], np.uint8), 256)
    assert bn.tolist() == [int(np.float32(0.92) * np.float32(50) + np.float32(0.08) * np.float32(100)), 50, 50]
    tn2 = bs.updateThreshold(3, img, mp, bn, np.array([20, 20, 20], np.uint8), 256)
    # 0.92 * 20 + 0.24 * (100 - 54) = 29.44 -> 29
    assert bn[0] == 54 and tn2.tolist() == [29, 20, 20]


def test_work_equals_the_datas_first_launch():
    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in bs.KERNELS:
        row = df[(df.targetName == "background-subtract-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["4096 2048 0 102"]) == (grid * block, block)
