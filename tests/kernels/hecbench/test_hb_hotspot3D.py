"""hecbench/hotspot3D: one launch equals a NumPy 7-point explicit step with edge-replicated neighbours, a
uniform chip at the ambient temperature with no power stays put (the coefficients sum to one), and the launch
geometry is the data's."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.hotspot3D import KERNELS, coefficients, make_inputs, work

SPEC = KERNELS[0]
REGION = numba.njit(SPEC.cpu)
DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _numpy_step(t, p, cols, rows, layers, ce, cw, cn, cs, ct, cb, cc, sdc):
    T = t.reshape(layers, rows, cols).astype(np.float64)
    P = p.reshape(layers, rows, cols).astype(np.float64)
    u = np.pad(T, 1, mode="edge")
    c = u[1:-1, 1:-1, 1:-1]
    new = (cc * c + cw * u[1:-1, 1:-1, :-2] + ce * u[1:-1, 1:-1, 2:] + cs * u[1:-1, 2:, 1:-1]
           + cn * u[1:-1, :-2, 1:-1] + cb * u[:-2, 1:-1, 1:-1] + ct * u[2:, 1:-1, 1:-1] + sdc * P + ct * 80.0)
    return new.ravel()


@pytest.mark.parametrize("params", [SPEC.test_point, {"cols": 128, "rows": 4, "layers": 3, "iterations": 1}])
def test_one_launch_is_a_numpy_explicit_step(params):
    args = list(make_inputs(params, 3))
    args[2] = np.full_like(args[2], np.nan)
    out = REGION(*args)
    want = _numpy_step(args[0], args[1], *args[3:])
    assert not np.isnan(out).any()
    np.testing.assert_allclose(out, want, rtol=0, atol=2e-4)
    assert np.abs(want - args[0]).max() > 0.01  # the step changes the temperatures


def test_ambient_chip_without_power_is_steady():
    cols, rows, layers = 64, 8, 4
    ce, cw, cn, cs, ct, cb, cc, sdc = (float(v) for v in coefficients(cols, rows, layers))
    # the seven stencil weights sum to 1 - ct; the ambient term (weight ct) makes up the rest
    assert abs((cc + cw + ce + cn + cs + cb + ct) - (1.0 - ct)) < 1e-6 and ct > 0
    args = list(make_inputs({"cols": cols, "rows": rows, "layers": layers}, 0))
    args[0] = np.full_like(args[0], 80.0)
    args[1] = np.zeros_like(args[1])
    out = REGION(*args)
    np.testing.assert_allclose(out, 80.0, rtol=0, atol=1e-3)


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as f:
        d = pd.read_csv(f)
    row = d[(d.targetName == "hotspot3D-cuda") & (d.kernelName == SPEC.kernel)].iloc[0]
    assert list(SPEC.points) == [row.exeArgs]
    gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
    bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
    assert work(SPEC.points[row.exeArgs]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
