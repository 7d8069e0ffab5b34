"""The channelSum ports against NumPy sums over the two layouts, and a hand-worked example."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import channelSum as cs

NHWC = numba.njit(cs.channel_sum_nhwc)
NCHW = numba.njit(cs.channel_sum_nchw)


@pytest.mark.parametrize("params,seed", [(cs.TEST_POINT, 0), ({"W": 30, "H": 7, "N": 3, "C": 5}, 1)])
def test_both_layouts_equal_numpy(params, seed):
    N, C, HW = params["N"], params["C"], params["W"] * params["H"]
    args = cs._inputs(cs.NHWC_BLOCK)(params, seed)
    X = args[3].astype(np.int64)
    s, sq = NHWC(*args)
    nhwc = X.reshape(N * HW, C)
    assert np.array_equal(s, nhwc.sum(axis=0)) and np.array_equal(sq, (nhwc**2).sum(axis=0))
    s, sq = NCHW(*cs._inputs(cs.NCHW_BLOCK)(params, seed))
    nchw = X.reshape(N, C, HW)
    assert np.array_equal(s, nchw.sum(axis=(0, 2))) and np.array_equal(sq, (nchw**2).sum(axis=(0, 2)))
    assert 0 <= X.min() and X.max() <= 255 and s.min() > 0


def test_worked_example():
    # N = 1, C = 2, HW = 3, NHWC rows (1, 2), (3, 4), (5, 6): channel 0 = 1 + 3 + 5, channel 1 = 2 + 4 + 6
    X = np.arange(1, 7, dtype=np.int32)
    z = np.zeros(2, dtype=np.int32)
    t = np.zeros((2, cs.NHWC_BLOCK), dtype=np.int64)
    s, sq = NHWC(1, 2, 3, X, z, z.copy(), t, t.copy())
    assert s.tolist() == [9, 12] and sq.tolist() == [35, 56]
    t = np.zeros((2, cs.NCHW_BLOCK), dtype=np.int64)  # NCHW: channel 0 = 1 + 2 + 3
    s, sq = NCHW(1, 2, 3, X, z.copy(), z.copy(), t, t.copy())
    assert s.tolist() == [6, 15] and sq.tolist() == [14, 77]


def test_host_input_is_the_originals_rand():
    from kernels.measured._glibc import glibc_rand
    X = cs.host_input({"N": 1, "C": 2, "W": 2, "H": 2}, 0)
    assert X.tolist() == (glibc_rand(8, 8) % 256).tolist()
