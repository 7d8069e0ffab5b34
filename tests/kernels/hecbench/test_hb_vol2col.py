"""hecbench/vol2col: the unfold equals a NumPy gather of the dilated, strided, padded windows; the fold
equals its adjoint (a NumPy scatter-add); a second grid-stride pass starts from the pointers the first left
(as the original's ``data_vol +=``/``data_col +=``); the launch geometry is the data's."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.vol2col import KERNELS, make_col2vol_inputs, make_vol2col_inputs, work

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
UNFOLD = numba.njit(KERNELS[0].cpu)
FOLD = numba.njit(KERNELS[1].cpu)


def _mapping(p):
    """For every column entry: (column index, volume index or -1 when outside the volume)."""
    c_, d, h, w, k = (p[x] for x in ("channels", "depth", "height", "width", "ksize"))
    pad, s, dil = p["pad"], p["stride"], p["dilation"]
    cs, vs = [], []
    for c in range(c_):
        for i in range(k):
            for j in range(k):
                for q in range(k):
                    row = c * k ** 3 + (i * k + j) * k + q
                    for t in range(d):
                        for y in range(h):
                            for x in range(w):
                                tt, yy, xx = t * s - pad + i * dil, y * s - pad + j * dil, x * s - pad + q * dil
                                inside = 0 <= tt < d and 0 <= yy < h and 0 <= xx < w
                                cs.append(((row * d + t) * h + y) * w + x)
                                vs.append(((c * d + tt) * h + yy) * w + xx if inside else -1)
    return np.array(cs), np.array(vs)


PARAMS = [{"channels": 2, "depth": 2, "height": 16, "width": 8, "pad": 1, "stride": 2, "dilation": 2, "ksize": k,
           "repeat": 1} for k in (1, 3)] + [{"channels": 1, "depth": 4, "height": 8, "width": 16, "pad": 1,
                                              "stride": 1, "dilation": 1, "ksize": 3, "repeat": 1}]


@pytest.mark.parametrize("params", PARAMS)
def test_unfold_and_fold_equal_numpy_gather_and_scatter(params):
    args = list(make_vol2col_inputs(params, 0))
    assert args[0] == args[-1]  # 512 items, one block: no second pass here
    rng = np.random.default_rng(5)
    args[1] = rng.integers(1, 100, args[1].size).astype(np.float32)
    cs, vs = _mapping(params)
    col = UNFOLD(*args)
    want = np.zeros_like(col)
    want[cs] = np.where(vs >= 0, args[1][np.maximum(vs, 0)], 0.0)
    np.testing.assert_array_equal(col, want)
    assert np.count_nonzero(col) > 0.05 * cs.size  # stride 2 and padding put most windows partly outside
    fargs = list(make_col2vol_inputs(params, 0))
    fargs[1] = rng.integers(1, 100, fargs[1].size).astype(np.float32)
    vol = FOLD(*fargs)
    back = np.zeros(args[0], dtype=np.float64)
    np.add.at(back, vs[vs >= 0], fargs[1][cs[vs >= 0]])
    np.testing.assert_array_equal(vol[: args[0]], back.astype(np.float32))
    assert np.all(vol[args[0]:] == 1.0)  # the padding part of the buffer keeps the host's ones


def test_second_grid_stride_pass_continues_from_the_moved_pointers():
    # the test point's size (1350 items on 1024 threads), stride 1 so that second-pass items fall inside
    p = {**KERNELS[0].test_point, "stride": 1, "dilation": 1}
    n, vol, *shape, col, threads = make_vol2col_inputs(p, 0)
    assert (n, threads) == (1350, 1024)
    vol = np.arange(vol.size, dtype=np.float32)
    out = UNFOLD(n, vol, *shape, col.copy(), threads)
    d, h, w = 3, 15, 15
    dhw = d * h * w

    def base(item):  # (column offset, volume offset, inside) of an item, kernel size 1, stride 1
        x, y, t, c = item % w, item // w % h, item // (w * h) % d, item // (w * h * d)
        tt, yy, xx = t - 1, y - 1, x - 1
        return (((c * d + t) * h + y) * w + x, ((c * d + tt) * h + yy) * w + xx,
                0 <= tt < d and 0 <= yy < h and 0 <= xx < w)

    checked = 0
    for g in range(n - threads):
        c1, v1, _ = base(g)
        c2, v2, inside = base(g + threads)
        assert out[c1 + dhw + c2] == (vol[v1 + v2] if inside else 0.0)
        checked += inside
    assert checked > 20


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as f:
        d = pd.read_csv(f)
    d = d[d.targetName == "vol2col-cuda"].drop_duplicates("kernelName", keep="first")
    for spec in KERNELS:
        row = d[d.kernelName == spec.kernel].iloc[0]
        assert list(spec.points) == [str(row.exeArgs)]
        gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
        bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
        assert work(spec.points[str(row.exeArgs)]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
