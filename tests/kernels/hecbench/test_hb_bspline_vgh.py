"""The bspline-vgh port (kernels/measured/hecbench/bspline_vgh.py) against the tricubic contraction written with
``numpy.einsum`` in double precision, the B-spline basis identities, and the data's launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import bspline_vgh as bs

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


@pytest.mark.parametrize("params", [bs.TEST_POINT, {"nsize": 37, "walker": 0}])
def test_region_equals_einsum(params):
    inputs = bs.make_inputs(params, 0)
    coefs, xs, ys, zs = inputs[:4]
    a, b, c, da, db, dc, d2a, d2b, d2c = (w.astype(np.float64) for w in inputs[7:16])
    nsize = params["nsize"]
    vals, grads, hess = numba.njit(bs.bspline)(*copy.deepcopy(inputs))
    i, j, k, n = np.meshgrid(range(4), range(4), range(4), range(nsize), indexing="ij")
    C = coefs[i * xs + j * ys + k * zs + n].astype(np.float64)  # C[i, j, k, n]
    f = lambda x, y, z: np.einsum("i,j,k,ijkn->n", x, y, z, C) * 1.0  # noqa: E731
    s = 45.0
    np.testing.assert_allclose(vals, f(a, b, c), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(grads.reshape(-1, 3), np.stack([f(da, b, c), f(a, db, c), f(a, b, dc)], 1) * s,
                               rtol=1e-4, atol=1e-2)
    H = np.stack([f(d2a, b, c), f(da, db, c), f(da, b, dc), f(da, db, c), f(a, d2b, c), f(a, db, dc),
                  f(da, b, dc), f(a, db, dc), f(a, b, d2c)], 1) * s * s
    np.testing.assert_allclose(hess.reshape(-1, 9), H, rtol=1e-4, atol=1.0)


def test_basis_weights_partition_unity():
    # cubic B-spline weights sum to 1 (the host's 6-digit constants: to 1e-5), their derivatives to 0
    for t in (0.0, 0.3, 0.99):
        assert bs.eval_abc(bs.AF, t).sum() == pytest.approx(1.0, abs=2e-6)
        assert bs.eval_abc(bs.DAF, t).sum() == pytest.approx(0.0, abs=1e-6)
        assert bs.eval_abc(bs.D2AF, t).sum() == pytest.approx(0.0, abs=1e-6)


def test_walker_zero_cell():
    (ix, iy, iz), (tx, ty, tz) = bs.cell(0)
    assert (ix, iy, iz) == (37, 44, 4)  # 0.822387 * 45 = 37.007..., 0.989919 * 45 = 44.546..., 0.104573 * 45
    assert tx == pytest.approx(0.822387 * 45 - 37, abs=1e-5)


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "exeArgs", "Block Size", "Grid Size"])
    row = df[(df.targetName == "bspline-vgh-cuda") & (df.kernelName == "bspline")].iloc[0]
    assert row["exeArgs"] != row["exeArgs"]  # NaN: the label "default"
    block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
    grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
    assert bs.work(bs.POINTS["default"]) == (grid * block, block)
