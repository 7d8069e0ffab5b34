"""The srad ports (kernels/measured/srad.py) against an independent formulation of one SRAD iteration.

The reference below is the SRAD step written over the whole image in float64 with clamped borders (the
host program's own CPU formulation), plus the one place where the OpenCL kernels' indexing departs from it
(a single work group across: the last column's east neighbour is the next flat element). Also: glibc
``rand`` (which the inputs come from) against values the C library gives, the host's ROI statistic on
hand-computed cases, and a worked example on a uniform image.
"""

from __future__ import annotations

import copy

import numba
import numpy as np
import pytest

from kernels.measured import srad
from kernels.measured._glibc import glibc_rand

STEP_1 = numba.njit(srad.srad_cuda_1)
STEP_2 = numba.njit(srad.srad_cuda_2)


def test_glibc_rand_gives_the_c_library_values():
    # srand(1) (also what an unseeded program gets) and srand(7) (srad's and nw's seed), from glibc itself
    assert glibc_rand(1, 3).tolist() == [1804289383, 846930886, 1681692777]
    assert glibc_rand(0, 3).tolist() == [1804289383, 846930886, 1681692777]  # glibc treats seed 0 as 1
    assert glibc_rand(7, 3).tolist() == [1045618677, 1863967299, 1272579899]
    assert glibc_rand(7, 1000)[:3].tolist() == glibc_rand(7, 3).tolist()


def test_roi_statistic_on_hand_computed_cases():
    J = np.array([1, 2, 3, 4, 0], dtype=np.float32)  # a 2 x 2 image and the spare element
    # ROI = the image: mean 2.5, variance 7.5 - 6.25 = 1.25, q0^2 = 1.25 / 6.25
    assert srad.roi_q0sqr(J, 2, 2, 0, 1, 0, 1) == pytest.approx(0.2, rel=1e-6)
    # columns 0..2 of a 2-wide image: flat indices 0 1 2 / 2 3 4, index 4 is past the image and counts as 0;
    # values 1 2 3 3 4 0: mean 13/6, mean of squares 39/6, q0^2 = (65/36) / (169/36)
    assert srad.roi_q0sqr(J, 2, 2, 0, 1, 0, 2) == pytest.approx(5 / 13, rel=1e-6)


def test_the_image_is_exp_of_uniform_numbers_with_a_zero_spare_element():
    J = srad.image(32, 16, 0)
    assert J.shape == (32 * 16 + 1,) and J.dtype == np.float32
    assert J[-1] == 0.0
    assert np.all((J[:-1] >= 1.0) & (J[:-1] <= np.float32(np.e)))
    # the host: (float)exp(I) with I = rand() / (float)RAND_MAX, the first rand() after srand(7)
    assert J[0] == np.float32(np.exp(np.float64(np.float32(1045618677) / np.float32(2147483647))))


def _reference_step_1(J, rows, cols, q0sqr):
    img = J[: rows * cols].astype(np.float64).reshape(rows, cols)
    padded = np.pad(img, 1, mode="edge")
    north = padded[:-2, 1:-1] - img
    south = padded[2:, 1:-1] - img
    west = padded[1:-1, :-2] - img
    east = padded[1:-1, 2:] - img
    if cols == 16:
        east[:, -1] = J[1 : rows * cols + 1].astype(np.float64).reshape(rows, cols)[:, -1] - img[:, -1]
    g2 = (north**2 + south**2 + west**2 + east**2) / img**2
    lap = (north + south + west + east) / img
    qsqr = (g2 / 2 - lap**2 / 16) / (1 + lap / 4) ** 2
    q0 = float(q0sqr)
    c = np.clip(1 / (1 + (qsqr - q0) / (q0 * (1 + q0))), 0, 1)
    return east, west, north, south, c


def _reference_step_2(J, rows, cols, lam, north, south, west, east, c):
    img = J[: rows * cols].astype(np.float64).reshape(rows, cols)
    c_south = np.vstack([c[1:], c[-1:]])
    c_east = np.hstack([c[:, 1:], c[:, -1:]])
    return img + 0.25 * float(lam) * (c * north + c_south * south + c * west + c_east * east)


@pytest.mark.parametrize("params", [srad.TEST_POINT, {**srad.TEST_POINT, "rows": 48, "cols": 64, "y2": 40, "x2": 50}])
@pytest.mark.parametrize("seed", [0, 1])
def test_both_kernels_against_the_reference_iteration(params, seed):
    rows, cols = params["rows"], params["cols"]
    E0, W0, N0, S0, J, C0, cols_, rows_, q0sqr = srad.make_inputs_1(params, seed)
    assert (cols_, rows_) == (cols, rows)
    E, W, N, S, C = STEP_1(E0, W0, N0, S0, J.copy(), C0, cols, rows, q0sqr)
    east, west, north, south, c = _reference_step_1(J, rows, cols, q0sqr)
    for got, want in ((E, east), (W, west), (N, north), (S, south), (C, c)):
        np.testing.assert_allclose(got.reshape(rows, cols), want, rtol=1e-4, atol=1e-5)
    assert 0 < np.mean((C > 0) & (C < 1))  # not everything saturated: the test sees the formula

    inputs_2 = srad.make_inputs_2(params, seed)
    for got, want in zip(inputs_2[:4] + inputs_2[5:6], (E, W, N, S, C)):  # kernel 2 starts from kernel 1's output
        np.testing.assert_array_equal(got, want)
    J1 = STEP_2(*copy.deepcopy(inputs_2))
    want = _reference_step_2(J, rows, cols, params["lam"], north, south, west, east, c)
    np.testing.assert_allclose(J1[:-1].reshape(rows, cols), want, rtol=1e-5, atol=1e-5)
    assert J1[-1] == 0.0


def test_worked_example_uniform_image():
    # J = 2 everywhere, 32 x 16 (one work group across): every difference is 0 and c = (1 + q0^2) / q0^2 > 1
    # saturates to 1, except at the last pixel, whose east neighbour is the spare element 0: e = -2,
    # g2 = 4 / 4 = 1, L = -2 / 2 = -1, q^2 = (1/2 - 1/16) / (3/4)^2 = 7/9, and with q0^2 = 1/4
    # c = 1 / (1 + (7/9 - 1/4) / (1/4 * 5/4)) = 45/121; kernel 2 then moves that pixel by
    # 0.25 * 0.5 * (45/121) * (-2)
    rows, cols = 32, 16
    size = rows * cols
    J = np.full(size + 1, 2.0, dtype=np.float32)
    J[-1] = 0.0
    zeros = [np.zeros(size, dtype=np.float32) for _ in range(5)]
    E, W, N, S, C = srad.srad_cuda_1(*zeros[:4], J, zeros[4], cols, rows, np.float32(0.25))
    assert np.all(W == 0) and np.all(N == 0) and np.all(S == 0)
    assert np.all(E[:-1] == 0) and E[-1] == -2.0
    assert np.all(C[:-1] == 1.0) and C[-1] == pytest.approx(45 / 121, rel=1e-6)
    J1 = srad.srad_cuda_2(E, W, N, S, J.copy(), C, cols, rows, np.float32(0.5))
    assert np.all(J1[: size - 1] == 2.0)
    assert J1[size - 1] == pytest.approx(2.0 - 0.125 * 90 / 121, rel=1e-6)


def test_sizes_the_original_cannot_index_are_refused():
    with pytest.raises(ValueError):
        srad.make_inputs_1({**srad.TEST_POINT, "rows": 16}, 0)  # one work group down reads past the image
    with pytest.raises(ValueError):
        srad.make_inputs_1({**srad.TEST_POINT, "cols": 24}, 0)


def test_q0sqr_at_the_tiny_size_counts_the_roi_past_the_image_as_zero():
    # 80 x 16 image, ROI 128 x 128 at flat index i * 16 + j: most of it lies past the 1280 pixels
    J = srad.image(80, 16, 0)
    i, j = np.meshgrid(np.arange(128), np.arange(128), indexing="ij")
    flat = (i * 16 + j).ravel()
    vals = np.where(flat < 1280, J[np.minimum(flat, 1279)].astype(np.float64), 0.0)
    want = vals.var() / vals.mean() ** 2
    assert srad.roi_q0sqr(J, 80, 16, 0, 127, 0, 127) == pytest.approx(want, rel=1e-4)
