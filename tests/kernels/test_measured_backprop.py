"""amaris/backprop: bpnn_layerforward_CUDA's partial sums and reduction tree, bpnn_adjust_weights_cuda's
momentum update, and the two with the host's part in between, against plain NumPy formulations; hand-worked
examples; the launch geometry of the data."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.backprop import (
    ETA,
    KERNELS,
    MOMENTUM,
    POINTS,
    TEST_POINT,
    bpnn_adjust_weights_cuda,
    bpnn_layerforward_cuda,
    hidden_deltas,
    network,
    squash,
    work,
)

FORWARD = numba.njit(bpnn_layerforward_cuda)
ADJUST = numba.njit(bpnn_adjust_weights_cuda)
HID = 16


def _forward(x, W):
    """Run the forward region on input units ``x`` ((n + 1,)) and weights ``W`` ((n + 1, 17))."""
    n = x.shape[0] - 1
    partial = np.full(n // 16 * HID, np.nan, dtype=np.float32)
    partial, w_after = FORWARD(x.copy(), W.ravel().copy(), partial, n, HID)
    return partial.reshape(n // 16, HID), w_after.reshape(W.shape)


def _tree_rows(products):
    """What the halving tree leaves in row ``r`` of a block's 16 rows: the sum of rows ``r .. r + s - 1``,
    ``s`` the largest power of two dividing ``r`` (16 for row 0)."""
    out = np.empty_like(products)
    for r in range(16):
        s = 16 if r == 0 else r & -r
        out[r] = products[r:r + s].sum(axis=0)
    return out


@pytest.mark.parametrize("n", [TEST_POINT["layer_size"], 48])
def test_layerforward_sums_each_block_and_leaves_its_tree_in_the_weights(n):
    x, W, _ = network({"layer_size": n}, 5)
    partial, w_after = _forward(x, W)
    x64, W64 = x.astype(np.float64), W.astype(np.float64)
    for by in range(n // 16):
        rows = slice(16 * by + 1, 16 * by + 17)
        products = x64[rows, None] * W64[rows, 1:]
        np.testing.assert_allclose(partial[by], products.sum(axis=0), rtol=1e-6)
        np.testing.assert_allclose(w_after[rows, 1:], _tree_rows(products), rtol=1e-6)
    # the bias row and the bias column are not touched
    assert np.array_equal(w_after[0], W[0]) and np.array_equal(w_after[:, 0], W[:, 0])
    # all blocks' sums are the input layer's product
    np.testing.assert_allclose(partial.sum(axis=0), x64[1:] @ W64[1:, 1:], rtol=1e-6)


def test_layerforward_worked_example():
    # inputs 1..16, weight of hidden unit j = j: unit j's sum is 136 j; the tree leaves in column j row 8 the
    # sum 9..16 = 100 (times j), row 4: 5..8 = 26, row 12: 13..16 = 58, row 2: 3 + 4 = 7, odd rows their own
    x = np.arange(17, dtype=np.float32)
    W = np.tile(np.arange(17, dtype=np.float32), (17, 1))
    partial, w_after = _forward(x, W)
    j = np.arange(1, 17, dtype=np.float32)
    assert np.array_equal(partial[0], 136 * j)
    for row, s in ((1, 136), (9, 100), (5, 26), (13, 58), (3, 7), (2, 2), (16, 16)):
        assert np.array_equal(w_after[row, 1:], s * j), row


def _adjust(delta, x, w, oldw):
    n = x.shape[0] - 1
    w2, old2 = ADJUST(delta.copy(), HID, x.copy(), n, w.ravel().copy(), oldw.ravel().copy())
    return w2.reshape(w.shape), old2.reshape(w.shape)


@pytest.mark.parametrize("n", [TEST_POINT["layer_size"], 48])
def test_adjust_weights_is_the_momentum_update(n):
    rng = np.random.default_rng(2)
    x = rng.random(n + 1, dtype=np.float32)
    delta = rng.uniform(-1, 1, HID + 1).astype(np.float32)
    w = rng.random((n + 1, HID + 1), dtype=np.float32)
    oldw = rng.uniform(-0.5, 0.5, (n + 1, HID + 1)).astype(np.float32)
    w2, old2 = _adjust(delta, x, w, oldw)
    bias_input = x.astype(np.float64).copy()
    bias_input[0] = 1.0  # the bias row sees an input of 1
    change = ETA * np.outer(bias_input, delta.astype(np.float64)) + MOMENTUM * oldw.astype(np.float64)
    np.testing.assert_allclose(w2[:, 1:], (w + change)[:, 1:], rtol=1e-6)
    np.testing.assert_allclose(old2[:, 1:], change[:, 1:], rtol=1e-6, atol=1e-7)
    assert np.array_equal(w2[:, 0], w[:, 0]) and np.array_equal(old2[:, 0], oldw[:, 0])
    assert np.abs(change[:, 1:]).min() < 1e-2 < np.abs(change[:, 1:]).max()


def test_adjust_weights_worked_example():
    # w = 1, delta_j = 0.5, input 2, old change 0.25: 0.3 * 0.5 * 2 + 0.3 * 0.25 = 0.375; the bias row (input 1):
    # 0.3 * 0.5 + 0.075 = 0.225
    n = 16
    x = np.full(n + 1, 2.0, dtype=np.float32)
    delta = np.full(HID + 1, 0.5, dtype=np.float32)
    w = np.ones((n + 1, HID + 1), dtype=np.float32)
    oldw = np.full((n + 1, HID + 1), 0.25, dtype=np.float32)
    w2, old2 = _adjust(delta, x, w, oldw)
    assert np.all(w2[1:, 1:] == np.float32(1.375)) and np.all(old2[1:, 1:] == np.float32(0.375))
    assert np.all(w2[0, 1:] == np.float32(1.225)) and np.all(old2[0, 1:] == np.float32(0.225))
    assert np.all(w2[:, 0] == 1.0) and np.all(old2[:, 0] == 0.25)


def test_one_training_step_through_both_kernels_is_the_plain_algorithm():
    # forward kernel -> the host's sums, output layer and deltas -> adjust kernel, against one NumPy step of
    # the same network (hidden = squash(x W), ..., W += ETA outer(x, delta_hidden)); weights scaled so that
    # the hidden units are not saturated and the update is well above float32 rounding of the weights
    n = 64
    x, W, who = network({"layer_size": n}, 9)
    W = (W - np.float32(0.5)) * np.float32(0.2)
    partial, _ = _forward(x, W)
    delta = hidden_deltas(x, W, who, partial.sum(axis=0, dtype=np.float32))
    w2, old2 = _adjust(delta, x, W, np.zeros_like(W))
    xb = x.astype(np.float64).copy()
    xb[0] = 1.0
    hidden = np.concatenate(([1.0], squash(xb @ W.astype(np.float64)[:, 1:])))
    out = squash(hidden @ who.astype(np.float64)[:, 1:])
    out_delta = out * (1 - out) * (0.1 - out)
    want_delta = hidden[1:] * (1 - hidden[1:]) * (who.astype(np.float64)[1:, 1:] @ out_delta)
    np.testing.assert_allclose(delta[1:], want_delta, rtol=1e-4)
    assert np.abs(want_delta).min() > 1e-4
    want_change = ETA * np.outer(xb, want_delta)
    np.testing.assert_allclose(old2[:, 1:], want_change, rtol=1e-4, atol=1e-8)
    np.testing.assert_allclose(w2[:, 1:] - W[:, 1:], want_change, rtol=1e-3, atol=2e-7)


def test_launch_geometry_is_the_datas():
    # the data's rows (both kernels, every GPU): grid (1, in / 16), block 16 x 16, warps_launched in / 2, for
    # input.size.1 = 8192, 9216, ..., 65536 (57 sizes); e.g. 8192 -> grid.y 512, 4096 warps
    assert len(POINTS) == 57
    sizes = sorted(p["layer_size"] for p in POINTS.values())
    assert sizes[0] == 8192 and sizes[-1] == 65536 and set(np.diff(sizes)) == {1024}
    assert work(POINTS["in8192"]) == (512 * 256, 256) and work(POINTS["in8192"])[0] // 32 == 4096
    assert work(POINTS["in65536"]) == (4096 * 256, 256) and work(POINTS["in65536"])[0] // 32 == 32768
    for spec in KERNELS:
        assert spec.points is POINTS
        for params in POINTS.values():
            assert work(params)[0] // 32 == params["layer_size"] // 2
