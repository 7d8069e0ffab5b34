"""The p4 port (kernels/measured/hecbench/p4.py) against a vectorised NumPy decoding, the feature-map size the
host's constants give, and the data's launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import p4

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def test_feature_map_size_from_the_hosts_float_constants():
    fx = int(np.float32(69.12) / np.float32(0.16)) // 2
    fy = int((np.float32(39.68) - np.float32(-39.68)) / np.float32(0.16)) // 2
    assert (fx, fy) == (p4.POINTS["10000"]["feature_x"], p4.POINTS["10000"]["feature_y"])


@pytest.mark.parametrize("fx,fy,seed", [(6, 5, 0), (9, 4, 3)])
def test_region_equals_numpy(fx, fy, seed):
    inputs = p4.make_inputs({"repeat": 1, "feature_x": fx, "feature_y": fy}, seed)
    cls, box0, dirs = (a.astype(np.float64) for a in inputs[:3])
    box, bnd, counter = numba.njit(p4.postprocess)(*copy.deepcopy(inputs))
    n = fx * fy * 6
    assert counter[0] == n and bnd[0] == n  # every score is at least sigmoid(0) = 0.5 > 0.1
    t = np.arange(n)
    loc, a = t // 6, t % 6
    x0 = (loc % fx) * 69.12 / (fx - 1)
    y0 = -39.68 + (loc // fx) * 79.36 / (fy - 1)
    anc = p4.ANCHORS.reshape(6, 4).astype(np.float64)[a]
    z0 = anc[:, 2] / 2 + p4.BOTTOM.astype(np.float64)[a // 2]
    b = box0.reshape(n, 7)
    diag = np.hypot(anc[:, 0], anc[:, 1])
    want = np.stack([b[:, 0] * diag + x0, b[:, 1] * diag + y0, b[:, 2] * anc[:, 2] + z0,
                     np.exp(b[:, 3]) * anc[:, 0], np.exp(b[:, 4]) * anc[:, 1], np.exp(b[:, 5]) * anc[:, 2],
                     b[:, 6] + anc[:, 3]], 1)
    np.testing.assert_allclose(box.reshape(n, 7), want, rtol=1e-5, atol=1e-4)
    rows = bnd[1:].reshape(n, 9)
    np.testing.assert_allclose(rows[:, :6], want[:, :6], rtol=1e-5, atol=1e-4)
    scores = 1 / (1 + np.exp(-cls.reshape(n, 3)))
    assert np.array_equal(rows[:, 7], scores.argmax(1))
    np.testing.assert_allclose(rows[:, 8], scores.max(1), rtol=1e-6)
    label = np.where(dirs.reshape(n, 2)[:, 0] > dirs.reshape(n, 2)[:, 1], 0, 1)
    val = want[:, 6] - 0.78539
    yaw = val - np.floor(val / np.pi) * np.pi + 0.78539 + np.pi * label
    np.testing.assert_allclose(rows[:, 6], yaw, rtol=1e-5, atol=1e-4)


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    row = df[(df.targetName == "p4-cuda") & (df.kernelName == "postprocess")].iloc[0]
    block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
    grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
    assert p4.work(p4.POINTS["10000"]) == (grid * block, block)
