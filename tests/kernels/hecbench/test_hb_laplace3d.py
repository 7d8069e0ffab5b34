"""hecbench/laplace3d: one launch equals a NumPy Jacobi sweep (six-neighbour mean inside, boundary kept) of
any field, including grids whose y size is not a multiple of the block's, and the launch geometry is the
data's."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.laplace3d import KERNELS, initial_field, make_inputs, work

SPEC = KERNELS[0]
REGION = numba.njit(SPEC.cpu)
DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _jacobi(u, nx, ny, nz):
    a = u.reshape(nz, ny, nx).astype(np.float64)
    out = a.copy()
    out[1:-1, 1:-1, 1:-1] = (a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:] + a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1]
                             + a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1]) / 6.0
    return out.ravel()


@pytest.mark.parametrize("params", [SPEC.test_point, {"nx": 64, "ny": 20, "nz": 7, "repeat": 1}])
def test_one_launch_is_a_jacobi_sweep_of_a_random_field(params):
    args = list(make_inputs(params, 0))
    nx, ny, nz = args[:3]
    args[6] = np.random.default_rng(1).random(nx * ny * nz).astype(np.float32)
    args[7] = np.full_like(args[7], np.nan)
    out = REGION(*args)
    assert not np.isnan(out).any()
    np.testing.assert_allclose(out, _jacobi(args[6], nx, ny, nz), rtol=1e-6, atol=1e-7)


def test_programs_field_first_sweep_by_hand():
    args = make_inputs(SPEC.test_point, 0)
    nx, ny, nz = args[:3]
    np.testing.assert_array_equal(args[6], initial_field(nx, ny, nz))
    out = REGION(*args).reshape(nz, ny, nx)
    sixth = np.float32(1.0) / np.float32(6.0)
    assert out[0, 5, 5] == 1.0 and out[2, 0, 7] == 1.0  # boundary nodes keep 1
    assert out[1, 1, 1] == np.float32(3.0) * sixth  # corner-adjacent interior: three boundary neighbours
    assert out[2, 1, 5] == np.float32(1.0) * sixth  # edge of the y = 0 face only
    assert out[2, 5, 5] == 0.0  # deep inside: all neighbours 0


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as f:
        d = pd.read_csv(f)
    row = d[(d.targetName == "laplace3d-cuda") & (d.kernelName == SPEC.kernel)].iloc[0]
    assert list(SPEC.points) == [row.exeArgs]
    gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
    bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
    assert work(SPEC.points[row.exeArgs]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
