"""The doh port (kernels/measured/hecbench/doh.py) against box sums taken directly from the image (not the
integral image) in NumPy, and the launch geometry of the data's first launch."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench import doh

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _box(integral, rows, cols, r, c, rl, cl):
    # _integ from the integral image's definition: A + D - B - C over the clipped corners equals the sum of
    # the image over rows (r, r2] x columns (c, c2] (an empty box when a corner is clipped onto another)
    r, c = min(max(r, 0), rows - 1), min(max(c, 0), cols - 1)
    r2, c2 = min(max(r + rl, 0), rows - 1), min(max(c + cl, 0), cols - 1)
    img = np.diff(np.diff(np.pad(integral.reshape(rows, cols).astype(np.float64), ((1, 0), (1, 0))), axis=0),
                  axis=1)
    return max(0.0, img[r + 1:r2 + 1, c + 1:c2 + 1].sum())


def _numpy_doh(integral, rows, cols):
    size, out = 12, np.zeros(rows * cols)
    b, l, w, wi = 6, 4, 12, 1 / 144  # noqa: E741 (the original's names)
    for t in range(rows * cols):
        r, c = divmod(t, cols)
        B = lambda *a: _box(integral, rows, cols, *a)  # noqa: E731
        dxy = -(B(r - l, c + 1, l, l) + B(r + 1, c - l, l, l) - B(r - l, c - l, l, l) - B(r + 1, c + 1, l, l)) * wi
        dxx = -(B(r - l + 1, c - l, 2 * l - 1, w) - 3 * B(r - l + 1, c - l // 2, 2 * l - 1, l)) * wi
        dyy = -(B(r - l, c - b + 1, w, 2 * b - 1) - 3 * B(r - b // 2, c - b + 1, b, 2 * b - 1)) * wi
        out[t] = dxx * dyy - 0.81 * dxy * dxy
    assert size == int(3 * doh.SIGMA)
    return out


@pytest.mark.parametrize("h,w,seed", [(24, 32, 0), (13, 20, 4)])
def test_region_equals_direct_box_sums(h, w, seed):
    inputs = doh.make_inputs({"height": h, "width": w, "repeat": 1}, seed)
    got = numba.njit(doh.hessian_matrix_det)(*copy.deepcopy(inputs))
    want = _numpy_doh(inputs[0], h, w)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=2e-3)
    assert np.count_nonzero(got) > h * w // 2


def test_integral_image_of_ones_gives_rectangle_areas():
    # an integral image of ones: every interior box is its area, the clamp max(0, .) never bites
    rows, cols = 20, 20
    integral = (np.arange(1, rows + 1)[:, None] * np.arange(1, cols + 1)[None, :]).astype(np.float32).ravel()
    assert doh._integ(integral, rows, cols, 5, 6, 4, 3) == 12.0
    assert doh._integ(integral, rows, cols, -3, 6, 4, 3) == 12.0  # r clipped to 0, then r2 = 4
    out = doh.hessian_matrix_det(integral, rows, cols, doh.SIGMA, np.zeros(rows * cols, np.float32), 512)
    # centre pixel of a flat image: dxy = 0, dxx = -(7 * 12 - 3 * 7 * 4) / 144 = 0, likewise dyy: determinant 0
    assert out[10 * cols + 10] == 0.0


def test_work_equals_the_datas_first_launch():
    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    row = df[(df.targetName == "doh-cuda") & (df.kernelName == "hessian_matrix_det")].iloc[0]
    block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
    grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
    assert doh.work(doh.POINTS["480 640 100"]) == (grid * block, block)
