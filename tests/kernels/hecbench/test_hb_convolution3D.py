"""hecbench/convolution3D: the three grid mappings each compute the valid convolution layer (NumPy einsum
over shifted windows, and a hand-worked pixel), write every output pixel exactly once, and launch the data's
geometry."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.convolution3D import KERNELS, program_data, sizes, work

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _numpy_layer(X, W, params):
    N, C, M, K, Hin, Win, Hout, Wout, _, _ = sizes(params)
    x = X.reshape(N, C, Hin, Win).astype(np.int64)
    w = W.reshape(M, C, K, K).astype(np.int64)
    windows = np.lib.stride_tricks.sliding_window_view(x, (K, K), axis=(2, 3))  # n c h w p q
    return np.einsum("nchwpq,mcpq->nmhw", windows, w)


@pytest.mark.parametrize("spec", KERNELS, ids=[s.kernel for s in KERNELS])
@pytest.mark.parametrize("params", [KERNELS[0].test_point,
                                    {"n": 3, "c": 2, "m": 2, "win": 20, "hin": 18, "k": 4, "repeat": 1}])
def test_each_mapping_is_the_convolution_layer(spec, params):
    args = list(spec.make_inputs(params, 1))
    args[2] = np.full_like(args[2], np.nan)  # every output pixel must be written
    Y = numba.njit(spec.cpu)(*args)
    want = _numpy_layer(args[0], args[1], params)
    assert not np.isnan(Y).any()
    np.testing.assert_array_equal(Y.reshape(want.shape), want.astype(np.float32))


def test_a_pixel_by_hand_and_the_programs_value_ranges():
    params = KERNELS[0].test_point
    X, W = program_data(params, 0)
    assert X.min() == 0 and X.max() == 12 and W.max() <= 30
    Y = numba.njit(KERNELS[0].cpu)(*KERNELS[0].make_inputs(params, 0))
    # image 1, filter 0, output (2, 5): 3x3 window of the single channel
    x = X.reshape(2, 1, 12, 12)[1, 0, 2:5, 5:8]
    w = W.reshape(2, 1, 3, 3)[0, 0]
    assert Y.reshape(2, 2, 10, 10)[1, 0, 2, 5] == float((x * w).sum())
    # s2 and s3 run after s1: their output buffer already holds the layer
    assert np.array_equal(KERNELS[1].make_inputs(params, 0)[2], Y)


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as f:
        d = pd.read_csv(f)
    d = d[d.targetName == "convolution3D-cuda"].drop_duplicates("kernelName", keep="first")
    for spec in KERNELS:
        row = d[d.kernelName == spec.kernel].iloc[0]
        assert list(spec.points) == [row.exeArgs]
        gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
        bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
        assert work(spec.points[row.exeArgs]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
