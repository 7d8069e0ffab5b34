"""The distort port (kernels/measured/hecbench/distort.py) against a vectorised NumPy distortion, the host's
shift bisection, and the launch geometry of the data's first launch."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench import distort as ds

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _numpy_distort(src, propf, width, height):
    k, cx, cy, _, xs, ys, xsh, ysh = (np.float64(v) for v in propf)
    h, w = np.mgrid[0:height, 0:width].astype(np.float64)
    x, y = w * xs + xsh, h * ys + ysh
    r2 = (x - cx) ** 2 + (y - cy) ** 2
    rx, ry = x + (x - cx) * k * r2, y + (y - cy) * k * r2
    inside = (ry >= 0) & (rx >= 0) & (ry <= height - 1) & (rx <= width - 1)
    f0, c0 = np.floor(ry).astype(int), np.ceil(ry).astype(int)
    f1, c1 = np.floor(rx).astype(int), np.ceil(rx).astype(int)
    f0, c0, f1, c1 = (np.clip(a, 0, m - 1) for a, m in ((f0, height), (c0, height), (f1, width), (c1, width)))
    img = src.reshape(height, width, 3).astype(np.float64)
    fx, fy = (ry - f0)[..., None], (rx - f1)[..., None]
    out = (img[f0, f1] * (1 - fx) * (1 - fy) + img[f0, c1] * (1 - fx) * fy + img[c0, c1] * fx * fy
           + img[c0, f1] * fx * (1 - fy))
    return np.where(inside[..., None], out, 0.0).reshape(-1, 3)


@pytest.mark.parametrize("width,height,seed", [(40, 30, 0), (64, 50, 3)])
def test_region_equals_numpy(width, height, seed):
    inputs = ds.make_inputs({"width": width, "height": height, "K": 0.001, "repeat": 1}, seed)
    got = numba.njit(ds.barrel_distort)(*copy.deepcopy(inputs))
    want = _numpy_distort(inputs[0], inputs[2], width, height)
    # float32 weights and truncation to unsigned char: at most one unit off (a truncation edge)
    assert np.max(np.abs(got.astype(float) - np.floor(want + 1e-9))) <= 1
    assert np.mean(got.astype(float) == np.floor(want + 1e-9)) > 0.95
    assert 0.5 < np.mean(got > 0) < 1  # part of the frame falls outside the image: black


def test_shift_bisection_brings_the_edge_to_the_frame():
    k, cx = np.float32(0.001), np.float32(512)
    x = ds.calc_shift(0, cx - 1, cx, k, 1)
    assert abs(x + (x - cx) * k * (x - cx) ** 2) < 1  # the host's stopping rule: the radial map of x near 0
    assert ds.properties(1024, 1024, 0.001)[0][6] == x


def test_hand_worked_pixel_at_the_centre():
    # a 2 x 2 image, K = 0: shifts 0, scales 1, every pixel maps onto itself
    src = np.array([[10, 20, 30], [40, 50, 60], [70, 80, 90], [100, 110, 120]], np.uint8)
    propf = np.array([0, 1, 1, 1, 1, 1, 0, 0], np.float32)
    out = ds.barrel_distort(src, np.zeros_like(src), propf, np.array([2, 2], np.int32), 1, 256)
    assert np.array_equal(out, src)


def test_work_equals_the_datas_first_launch():
    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    row = df[(df.targetName == "distort-cuda") & (df.kernelName == "barrel_distort")].iloc[0]
    block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
    grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
    assert ds.work(ds.POINTS["1024 1024 0.001 1000"]) == (grid * block, block)
