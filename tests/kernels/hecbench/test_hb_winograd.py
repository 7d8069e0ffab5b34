"""hecbench/winograd: the Winograd F(2x2, 3x3) launch equals the direct 3x3 "valid" correlation of the image
with the program's filter (NumPy), the transformed filter is G g G^T, and the launch geometry is the data's."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.winograd import FILTER, KERNELS, filter_transformation, make_inputs, work

SPEC = KERNELS[0]
DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _correlate(image, m):
    a = image.reshape(m, m).astype(np.float64)
    g = FILTER.astype(np.float64)
    out = np.zeros((m - 2, m - 2))
    for p in range(3):
        for q in range(3):
            out += g[p, q] * a[p:p + m - 2, q:q + m - 2]
    return out


@pytest.mark.parametrize("params", [SPEC.test_point, {"map_size": 45}])
def test_launch_is_the_direct_3x3_correlation(params):
    args = list(make_inputs(params, 0))
    m = args[5]
    args[2] = np.full_like(args[2], np.nan)  # every output must be written
    out = numba.njit(SPEC.cpu)(*args)
    assert not np.isnan(out).any()
    np.testing.assert_allclose(out.reshape(m - 2, m - 2), _correlate(args[0], m), rtol=0, atol=2e-6)


def test_transformed_filter_is_g_g_gt():
    G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    np.testing.assert_allclose(filter_transformation().reshape(4, 4), G @ FILTER.astype(np.float64) @ G.T,
                               rtol=0, atol=1e-7)
    assert filter_transformation()[0] == np.float32(0.2) and filter_transformation()[15] == np.float32(0.1)


def test_image_is_rand_over_rand_max():
    image = make_inputs(SPEC.test_point, 0)[0]
    assert image.dtype == np.float32 and 0.0 <= image.min() and image.max() <= 1.0
    assert abs(image.mean() - 0.5) < 0.05


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as f:
        d = pd.read_csv(f)
    row = d[(d.targetName == "winograd-cuda") & (d.kernelName == SPEC.kernel)].iloc[0]
    assert pd.isna(row.exeArgs) and list(SPEC.points) == ["default"]
    gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
    bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
    assert work(SPEC.points["default"]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
