"""hecbench/laplace: the red and black half sweeps equal a NumPy red-black SOR on the full plate (colour
masks, padded neighbours), and the launch geometry is the data's."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.laplace import KERNELS, fill_coeffs, make_black_inputs, make_red_inputs, work

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
OMEGA = np.float32(1.85)


def _full(half, num, colour):
    """Half array (with ghosts) -> the ``num x num`` plate (column, position) of one colour, zero elsewhere."""
    nr = num // 2 + 2
    out = np.zeros((num, num), dtype=np.float32)
    for c0 in range(num):
        col = c0 + 1
        for p in range(num):
            if (c0 + p) % 2 == colour:
                row = (p + 1 + ((col & 1) if colour == 0 else ((col + 1) & 1))) // 2
                out[c0, p] = half[col * nr + row]
    return out


def _sor_colour(T, coeffs, num, colour):
    aP, aW, aE, aS, aN, b = (a.reshape(num, num).astype(np.float64) for a in coeffs)
    u = np.pad(T.astype(np.float64), 1)
    res = b + aW * u[:-2, 1:-1] + aE * u[2:, 1:-1] + aS * u[1:-1, :-2] + aN * u[1:-1, 2:]
    new = T * (1.0 - 1.85) + 1.85 * res / aP
    c0, p = np.meshgrid(np.arange(num), np.arange(num), indexing="ij")
    mask = (c0 + p) % 2 == colour
    out = np.where(mask, new, T)
    return out, np.where(mask, (out - T) ** 2, 0.0)


@pytest.mark.parametrize("params", [KERNELS[0].test_point, {"num": 32, "block_x": 4, "block_y": 2}])
def test_red_then_black_is_red_black_sor(params):
    num = params["num"]
    coeffs = fill_coeffs(num)
    red_in = make_red_inputs(params, 0)
    red, norm = numba.njit(KERNELS[0].cpu)(*red_in)
    T, change = _sor_colour(np.zeros((num, num)), coeffs, num, 0)
    np.testing.assert_allclose(_full(red, num, 0), T, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(_full(norm, num, 0), change, rtol=1e-4, atol=1e-12)
    assert T.max() > 0.1  # the top wall's source reaches the red cells next to it
    black_in = make_black_inputs(params, 0)
    np.testing.assert_array_equal(black_in[6], red)
    black, norm_b = numba.njit(KERNELS[1].cpu)(*black_in)
    T2, change2 = _sor_colour(T, coeffs, num, 1)
    np.testing.assert_allclose(_full(black, num, 1), T2 * ((np.add.outer(np.arange(num), np.arange(num)) % 2) == 1),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_full(norm_b, num, 1), change2, rtol=1e-4, atol=1e-12)
    assert np.count_nonzero(black) == num  # the top row and the one below it, fed by the red ones


def test_coefficients_by_hand():
    aP, aW, aE, aS, aN, b = (a.reshape(4, 4) for a in fill_coeffs(4))
    k = np.float32(0.01)  # conductivity x width x dy / dx
    assert aW[0, 1] == 0 and aW[1, 1] == k and aE[3, 1] == 0 and aS[2, 0] == 0 and aN[2, 3] == 0
    assert aP[1, 1] == 4 * k  # interior: sum of the four
    assert aP[1, 0] == np.float32(3 * k + 2 * k)  # bottom wall: S missing, source 2k
    assert b[2, 3] == np.float32(2 * k) and b[2, 2] == 0


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as f:
        d = pd.read_csv(f)
    d = d[d.targetName == "laplace-cuda"].drop_duplicates("kernelName", keep="first")
    for spec in KERNELS:
        row = d[d.kernelName == spec.kernel].iloc[0]
        assert pd.isna(row.exeArgs) and list(spec.points) == ["default"]
        gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
        bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
        assert work(spec.points["default"]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
