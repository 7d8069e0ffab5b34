"""OpenDwarfs dwt2d ports (kernels/measured/dwt2d.py): the component split equals a NumPy reshape, and
one cl_fdwt53Kernel invocation equals a plain NumPy 5/3 lifting (vertical then horizontal, C's truncating
division, mirrored borders, bands LL HL LH HH) of the same component, for every window width the host picks,
with one and several sliding-window steps."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured import dwt2d

FDWT = numba.njit(dwt2d.fdwt53)


def _tdiv(x, d):
    return np.where(x < 0, -((-x) // d), x // d)


def _lift(a, axis):
    """Forward 5/3 lifting of every line of ``a`` along ``axis`` (even length), mirrored at both ends."""
    a = np.moveaxis(a.astype(np.int64), axis, 0).copy()
    n = a.shape[0]
    for i in range(1, n, 2):
        right = a[i + 1] if i + 1 < n else a[n - 2]
        a[i] -= _tdiv(a[i - 1] + right, 2)
    for i in range(0, n, 2):
        left = a[i - 1] if i > 0 else a[1]
        a[i] += _tdiv(left + a[i + 1] + 2, 4)
    return np.moveaxis(a, 0, axis)


def _reference(component, sx, sy):
    t = _lift(_lift(component.reshape(sy, sx), 0), 1)
    return np.concatenate([t[0::2, 0::2].ravel(), t[0::2, 1::2].ravel(), t[1::2, 0::2].ravel(), t[1::2, 1::2].ravel()])


def _inputs(sx, sy, component):
    steps, win_x, win_y, _, _ = dwt2d.fdwt_launch(sx, sy)
    return component.astype(np.int32).reshape(-1), sx, sy, steps, win_x, win_y


@pytest.mark.parametrize("sx,sy", [(72, 54), (16, 130), (256, 24), (480, 40), (960, 16)])
def test_fdwt53_equals_numpy_lifting(sx, sy):
    inp = dwt2d.make_inputs_fdwt({"width": sx, "height": sy}, 4)
    assert np.array_equal(FDWT(*inp), _reference(inp[0], sx, sy))


def test_fdwt53_plain_python_at_the_test_point():
    spec = dwt2d.KERNELS[1]
    inp = spec.make_inputs(spec.test_point, 0)
    assert np.array_equal(dwt2d.fdwt53(*inp), _reference(inp[0], inp[1], inp[2]))


def test_fdwt53_gpu_port_with_two_window_steps():
    inp = dwt2d.make_inputs_fdwt({"width": 16, "height": 130}, 2)
    assert inp[3] == 2  # two sliding-window steps per group
    assert np.array_equal(dwt2d.KERNELS[1].gpu.run(*inp), _reference(inp[0], 16, 130))


def test_fdwt53_worked_examples_by_hand():
    sx, sy = 16, 8
    # a ramp along x: rows are equal, so the vertical pass leaves even rows and zeroes odd ones; along x
    # the predicted odd columns are 0 but the last (its right neighbour mirrors to x = 14): 15 - 14 = 1
    ramp = np.tile(np.arange(sx), (sy, 1))
    out = FDWT(*_inputs(sx, sy, ramp))
    ll, hl, rest = out[:32].reshape(4, 8), out[32:64].reshape(4, 8), out[64:]
    assert (ll == np.arange(0, 16, 2)).all()
    assert (hl == [0, 0, 0, 0, 0, 0, 0, 1]).all()
    assert not rest.any()
    # C's division truncates toward zero: a single -1 predicts 0 - (-1 + 0) / 2 = 0 for its neighbours
    # (a floor would give 1) and the update keeps it at -1 + (0 + 0 + 2) / 4 = -1
    spike = np.zeros((sy, sx), dtype=np.int32)
    spike[0, 0] = -1
    out = FDWT(*_inputs(sx, sy, spike))
    assert out[0] == -1 and not out[1:].any()


def test_copy_src_to_components_splits_the_bytes():
    src, pixels = dwt2d.make_inputs_copy({"width": 72, "height": 54}, 1)
    r, g, b = numba.njit(dwt2d.copy_src_to_components)(src, pixels)
    rgb = src.reshape(-1, 3).astype(np.int32) - 128
    assert np.array_equal(r, rgb[:, 0]) and np.array_equal(g, rgb[:, 1]) and np.array_equal(b, rgb[:, 2])
    assert r.min() >= -128 and r.max() <= 127 and r.std() > 10  # the synthetic image is not flat
    # the first cl_fdwt53Kernel transforms this red component
    inp = dwt2d.make_inputs_fdwt({"width": 72, "height": 54}, 1)
    assert np.array_equal(inp[0], r)


def test_launch_geometry_of_the_host():
    assert dwt2d.fdwt_launch(72, 54) == (1, 8, 8, 9, 7)  # 72 x 7 = 504 items
    assert dwt2d.fdwt_launch(200, 150) == (2, 8, 8, 25, 10)
    assert dwt2d.fdwt_launch(1152, 864) == (8, 192, 8, 6, 14)
    assert dwt2d.fdwt_launch(3648, 2736) == (23, 192, 8, 19, 15)
    assert dwt2d.work_copy({"width": 72, "height": 54}) == (4096, 256)
    assert dwt2d.work_fdwt({"width": 72, "height": 54}) == (504, 8)
