"""The overlay port against a NumPy blend of the box, the original's first box, and a hand-worked pixel."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import overlay

REGION = numba.njit(overlay.detection_overlay_box)


@pytest.mark.parametrize("params,seed", [(overlay.TEST_POINT, 0), ({"width": 100, "height": 90}, 1)])
def test_region_equals_numpy_blend(params, seed):
    args = overlay.make_inputs(params, seed)
    img, w, h = args[0], args[2], args[3]
    bw, bh, left, top = overlay.box_of(params, seed)
    want = img.reshape(h, w, 3).astype(np.float64).copy()
    a = 1.0 / 255.0
    sub = want[top : top + bh, left : left + bw]
    sub[:] = a * np.array(overlay.COLOR[:3]) + (1 - a) * sub
    got = REGION(*args).reshape(h, w, 3)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-4)
    assert not np.array_equal(got, img.reshape(h, w, 3))


def test_first_box_is_the_datas():
    assert overlay.box_of(overlay.POINTS["640 480"]) == (83, 124, 155, 136)
    assert overlay.work(overlay.POINTS["640 480"]) == (11 * 16 * 64, 64)


def test_pixel_by_hand():
    img = np.zeros((4, 3), np.float32)
    img[3] = (0.0, 255.0, 100.0)
    f = np.float32
    got = REGION(img, img.copy(), 2, 2, 1, 1, 1, 1, f(255), f(204), f(203), f(1), 8, 64)
    # alpha = 1 / 255: x = 1 * 255 / 255 = 1, y = 204 / 255 + 254 = 254.8, z = 203 / 255 + 100 * 254 / 255
    assert got[3].tolist() == pytest.approx([1.0, 254.0 + 204.0 / 255.0, (203.0 + 25400.0) / 255.0], rel=1e-6)
    assert not got[:3].any()
