"""KernelBench losses (kernels/measured/kernelbench/losses.py): MSE, Huber, hinge and cross-entropy against NumPy
at the test point and another small size, hand-worked values, and the measured points' shapes against the
vendored problem files."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from kernels.measured.kernelbench import losses
from kernels.measured.registry import get_measured

PROBLEMS = (Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "kernelbench"
            / "sizes_before_2025-07" / "level1")


def problem_constants(stem: str) -> dict:
    """The module-level constant assignments of a vendored problem file (names bound earlier resolved)."""
    found = {}
    for node in ast.parse((PROBLEMS / f"{stem}.py").read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Tuple):  # input_shape = (num_classes, )
                value = ast.Tuple([ast.Constant(found[e.id]) if isinstance(e, ast.Name) else e for e in value.elts],
                                  ast.Load())
            try:
                found[node.targets[0].id] = ast.literal_eval(value)
            except ValueError:
                pass
    return found


def spec(app):
    return get_measured(f"kernelbench/{app}/forward")


@pytest.mark.parametrize("app", ["94_MSELoss", "96_HuberLoss", "100_HingeLoss", "98_KLDivLoss",
                                 "97_CosineSimilarityLoss"])
def test_regression_points_are_the_problem_files_shapes(app):
    c = problem_constants(app)
    p = spec(app).points["before_2025-07"]
    assert (p["batch_size"], (p["features"],)) == (c["batch_size"], c["input_shape"])
    assert spec(app).separate_launches
    if app == "100_HingeLoss":
        assert spec(app).work(p) == (128, 128)
    else:
        assert spec(app).work(p) == (128 * 4096 // 4, 128)


@pytest.mark.parametrize("params", [losses.REGRESSION_TEST, {"batch_size": 5, "features": 700, "reduce_block": 32}])
def test_kl_div_equals_numpy(params):
    inputs = losses.kl_inputs(params, 7)
    p, t = inputs[0].astype(np.float64), inputs[1].astype(np.float64)
    rows = params["batch_size"]
    np.testing.assert_allclose(p.reshape(rows, -1).sum(axis=1), 1.0, rtol=1e-5)
    out = losses.kl_div_loss(*inputs)
    np.testing.assert_allclose(out[0], np.sum(t * (np.log(t) - np.log(p))) / rows, rtol=1e-4)
    assert out[0] > 0


def test_kl_div_hand_worked_with_a_zero_target():
    p = np.array([0.5, 0.5, 0.25, 0.75], dtype=np.float32)
    t = np.array([1.0, 0.0, 0.5, 0.5], dtype=np.float32)  # xlogy(0, 0) = 0
    z = lambda: np.zeros(4, np.float32)  # noqa: E731
    one = lambda: np.zeros(1, np.float32)  # noqa: E731
    out = losses.kl_div_loss(p, t, z(), z(), z(), z(), one(), one(), one(), 4, 2, 4)
    want = (np.log(2.0) + 0.5 * np.log(2.0) + 0.5 * np.log(2.0 / 3.0)) / 2
    assert out[0] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("params", [losses.COS_TEST, {"batch_size": 3, "features": 1000, "reduce_block": 128,
                                                    "mean_block": 4}])
def test_cosine_loss_equals_numpy(params):
    inputs = losses.cos_inputs(params, 8)
    rows = params["batch_size"]
    p, t = inputs[0].reshape(rows, -1).astype(np.float64), inputs[1].reshape(rows, -1).astype(np.float64)
    out = losses.cosine_loss(*inputs)
    cos = (p * t).sum(axis=1) / (np.linalg.norm(p, axis=1) * np.linalg.norm(t, axis=1))
    np.testing.assert_allclose(inputs[11], cos, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out[0], np.mean(1 - cos), rtol=1e-5)


def test_cosine_loss_hand_worked():
    p = np.array([1.0, 0.0, 3.0, 4.0], dtype=np.float32)  # rows (1, 0) and (3, 4)
    t = np.array([0.0, 2.0, 6.0, 8.0], dtype=np.float32)  # orthogonal, parallel: cosines 0 and 1
    small = lambda: np.zeros(2, np.float32)  # noqa: E731
    big = lambda: np.zeros(4, np.float32)  # noqa: E731
    out = losses.cosine_loss(p, t, small(), small(), small(), small(), small(), small(), big(), big(), big(),
                             small(), small(), np.zeros(1, np.float32), np.zeros(1, np.float32), 2, 2, 2, 2)
    assert out[0] == pytest.approx(0.5, rel=1e-6)


def test_cross_entropy_point_is_the_problem_files_shape():
    c = problem_constants("95_CrossEntropyLoss")
    p = spec("95_CrossEntropyLoss").points["before_2025-07"]
    assert (p["batch_size"], p["num_classes"]) == (c["batch_size"], c["num_classes"]) == (4096, 10)
    assert c["input_shape"] == (10,)
    assert spec("95_CrossEntropyLoss").work(p) == (4096 // 16 * 128, 128)


@pytest.mark.parametrize("params", [losses.REGRESSION_TEST, {"batch_size": 3, "features": 5000, "reduce_block": 32}])
def test_mse_and_huber_equal_numpy(params):
    inputs = losses.mse_inputs(params, 4)
    p, t = inputs[0].astype(np.float64), inputs[1].astype(np.float64)
    out = losses.mse_loss(*inputs)
    np.testing.assert_allclose(out[0], np.mean((p - t) ** 2), rtol=1e-5)
    out = losses.huber_loss(*losses.huber_inputs(params, 4))
    z = np.abs(p - t)
    np.testing.assert_allclose(out[0], np.mean(np.where(z < 1, 0.5 * z * z, z - 0.5)), rtol=1e-5)
    assert (z < 1).any() and (z >= 1).any()


@pytest.mark.parametrize("params", [losses.HINGE_TEST, {"batch_size": 1000, "features": 1, "reduce_block": 16}])
def test_hinge_equals_numpy(params):
    inputs = losses.hinge_inputs(params, 5)
    p, t = inputs[0].astype(np.float64), inputs[1].astype(np.float64)
    assert set(np.unique(t)) == {-1.0, 1.0}
    out = losses.hinge_loss(*inputs)
    np.testing.assert_allclose(out[0], np.mean(np.maximum(1 - p * t, 0)), rtol=1e-5)


@pytest.mark.parametrize("params", [losses.CE_TEST, {"batch_size": 33, "num_classes": 7}])
def test_cross_entropy_equals_numpy(params):
    inputs = losses.ce_inputs(params, 6)
    x = inputs[0].reshape(params["batch_size"], params["num_classes"]).astype(np.float64)
    target = inputs[1]
    with np.errstate(invalid="ignore"):  # padding rows past the batch: exp(-inf - -inf), never stored
        out = losses.cross_entropy(*inputs)
    logp = x - x.max(axis=1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(inputs[2].reshape(x.shape), logp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[0], -logp[np.arange(len(target)), target].mean(), rtol=1e-5)


def test_hand_worked_losses():
    p = np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32)
    t = np.array([0.0, 0.0, 1.0, 0.0], dtype=np.float32)
    z = lambda: np.zeros(4, np.float32)  # noqa: E731
    out = losses.mse_loss(p, t, z(), z(), np.zeros(1, np.float32), np.zeros(1, np.float32), 4, 4)
    assert out[0] == pytest.approx((1 + 4 + 4 + 0.25) / 4)
    out = losses.huber_loss(p, t, z(), np.zeros(1, np.float32), np.zeros(1, np.float32), 4, 4)
    assert out[0] == pytest.approx((0.5 + 1.5 + 1.5 + 0.125) / 4)
    t = np.array([1.0, -1.0, -1.0, 1.0], dtype=np.float32)  # 1 - p t: 0, 3, 0, 0.5
    out = losses.hinge_loss(p, t, z(), z(), z(), np.zeros(1, np.float32), np.zeros(1, np.float32), 4, 4)
    assert out[0] == pytest.approx(3.5 / 4)
    x = np.log(np.array([1.0, 3.0, 2.0, 2.0], dtype=np.float32))  # two rows of two classes
    with np.errstate(invalid="ignore"):
        out = losses.cross_entropy(x, np.array([1, 0], dtype=np.int64), np.zeros(4, np.float32),
                                   np.zeros(1, np.float32), 2, 2)
    assert out[0] == pytest.approx(-(np.log(0.75) + np.log(0.5)) / 2, rel=1e-6)
