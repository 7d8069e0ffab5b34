"""KernelBench norms (kernels/measured/kernelbench/norms.py): L1 and L2 row normalisation against NumPy at the
test point and another small size, hand-worked rows, and the measured point's shapes against the problem files."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from kernels.measured.kernelbench import norms
from kernels.measured.registry import get_measured

PROBLEMS = (Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "kernelbench"
            / "sizes_before_2025-07" / "level1")


def problem_constants(stem: str) -> dict:
    """The module-level constant assignments of a vendored problem file."""
    found = {}
    for node in ast.parse((PROBLEMS / f"{stem}.py").read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return found


APPS = ["38_L1Norm_", "39_L2Norm_"]


@pytest.mark.parametrize("app", APPS)
def test_points_are_the_problem_files_shapes(app):
    spec = get_measured(f"kernelbench/{app}/forward")
    c = problem_constants(app)
    p = spec.points["before_2025-07"]
    assert (p["batch_size"], p["dim"]) == (c["batch_size"], c["dim"]) == (16, 16384)
    assert spec.separate_launches
    assert spec.work(p) == (16 * 16384 // 4, 128)


@pytest.mark.parametrize("params", [norms.TEST_POINT, {"batch_size": 2, "dim": 1000, "reduce_block": 32}])
def test_l1_and_l2_equal_numpy(params):
    inputs = norms.l1_inputs(params, 1)
    x = inputs[0].reshape(params["batch_size"], params["dim"]).astype(np.float64)
    out = norms.l1_norm(*inputs).reshape(x.shape)
    np.testing.assert_allclose(out, x / np.abs(x).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(np.abs(out).sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(inputs[2], np.abs(x).sum(axis=1), rtol=1e-5)
    inputs = norms.l2_inputs(params, 1)
    out = norms.l2_norm(*inputs).reshape(x.shape)
    np.testing.assert_allclose(out, x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(out.astype(np.float64), axis=1), 1.0, rtol=1e-5)


def test_hand_worked_rows():
    x = np.array([3.0, -4.0, 0.0, 0.0, 1.0, 1.0, 1.0, -1.0], dtype=np.float32)  # two rows of 4
    out = norms.l1_norm(x, np.zeros_like(x), np.zeros(2, np.float32), np.zeros_like(x), 2, 4, 2)
    np.testing.assert_allclose(out, [3 / 7, -4 / 7, 0, 0, 0.25, 0.25, 0.25, -0.25], rtol=1e-6)
    out = norms.l2_norm(x, np.zeros(2, np.float32), np.zeros_like(x), 2, 4, 4)
    np.testing.assert_allclose(out, [0.6, -0.8, 0, 0, 0.5, 0.5, 0.5, -0.5], rtol=1e-6)
