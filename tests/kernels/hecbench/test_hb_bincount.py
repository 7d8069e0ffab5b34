"""hecbench/bincount: the counts equal ``numpy.histogram`` over ``[min, max]`` (float32 bin edges as the
kernel computes them), every value is counted once, and a hand-worked case with the clamp of the maximum."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench.bincount import KERNELS, make_inputs, work

REGION = numba.njit(KERNELS[0].cpu)


@pytest.mark.parametrize("params", [KERNELS[0].test_point, {"n": 5000, "repeat": 1, "nbins": 1536, "block": 128}])
def test_counts_equal_numpy_binning(params):
    args = make_inputs(params, 1)
    out, inp, nbins, lo, hi = args[:5]
    got = REGION(*args)
    bins = ((inp - lo) * np.float32(nbins) / (hi - lo)).astype(np.int32)
    bins[bins == nbins] = nbins - 1
    np.testing.assert_array_equal(got, np.bincount(bins, minlength=nbins))
    assert got.sum() == params["n"]
    # a normal sample: the middle bins hold the most
    assert got[nbins // 3: 2 * nbins // 3].sum() > got.sum() // 2


def test_by_hand():
    inp = np.array([0.0, 1.0, 2.5, 4.0, 3.99, 1.0], dtype=np.float32)
    out = REGION(np.zeros(4, dtype=np.int32), inp, 4, np.float32(0.0), np.float32(4.0), 6, 32)
    assert out.tolist() == [1, 2, 1, 2]  # 4.0 lands on bin 4 and is clamped to 3


def test_measured_point_grid():
    assert work(KERNELS[0].points["10000000 100"]) == (39063 * 256, 256)
