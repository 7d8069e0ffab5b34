"""The sobel port against a NumPy Sobel filter (float64, so an output byte may differ by one where the float32
magnitude rounds across an integer) and a hand-worked vertical edge."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import sobel

REGION = numba.njit(sobel.sobel_filter)


@pytest.mark.parametrize("w,h,seed", [(48, 32, 0), (64, 80, 1)])
def test_region_equals_numpy_sobel(w, h, seed):
    inp, out, w, h = sobel.make_inputs({"width": w, "height": h}, seed)
    got = REGION(inp, out, w, h).reshape(h, w, 4).astype(np.int64)
    a = inp.reshape(h, w, 4).astype(np.float64)

    def at(dy, dx):
        return a[1 + dy : h - 1 + dy, 1 + dx : w - 1 + dx]

    gx = at(-1, -1) + 2 * at(0, -1) + at(1, -1) - at(-1, 1) - 2 * at(0, 1) - at(1, 1)
    gy = at(-1, -1) - at(1, -1) + 2 * at(-1, 0) - 2 * at(1, 0) + at(-1, 1) - at(1, 1)
    want = np.clip(np.sqrt(gx * gx + gy * gy) / 2, 0, 255).astype(np.int64)
    assert np.abs(got[1:-1, 1:-1] - want).max() <= 1
    assert (got[1:-1, 1:-1] == want).mean() > 0.99 and want.max() > 50
    assert not got[0].any() and not got[-1].any() and not got[:, 0].any() and not got[:, -1].any()


def test_vertical_edge_by_hand():
    # columns 0-1 are 0, columns 2-3 are 100: at x = 1, Gx = -(100 + 200 + 100) = -400 -> 200;
    # at x = 2, Gx = -400 too; Gy = 0
    img = np.zeros((4 * 4, 4), np.uint8)
    img.reshape(4, 4, 4)[:, 2:, :] = 100
    got = REGION(img, np.zeros_like(img), 4, 4).reshape(4, 4, 4)
    assert got[1, 1].tolist() == [200] * 4 and got[2, 2].tolist() == [200] * 4
    assert not got[0].any()
