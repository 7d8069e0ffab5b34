"""KernelBench scans (kernels/measured/kernelbench/scans.py): each region against NumPy (cumsum, cumprod, their
reversed, exclusive and masked forms) at the test point and another small size, a hand-worked row, and the
measured point's shapes against the vendored problem files."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from kernels.measured.kernelbench import scans
from kernels.measured.registry import get_measured

PROBLEMS = (Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "kernelbench"
            / "sizes_before_2025-07" / "level1")
APPS = ["89_cumsum", "90_cumprod", "91_cumsum_reverse", "92_cumsum_exclusive", "93_masked_cumsum"]
OTHER = {"batch_size": 33, "length": 100}  # two blocks, the second with one row; a partial last chunk


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


def spec(app):
    return get_measured(f"kernelbench/{app}/forward")


@pytest.mark.parametrize("app", APPS)
def test_points_are_the_problem_files_shapes(app):
    c = problem_constants(app)
    p = spec(app).points["before_2025-07"]
    assert (p["batch_size"], (p["length"],), 1) == (c["batch_size"], c["input_shape"], c["dim"])
    assert spec(app).feature_point == {"batch_size": 128, "length": 256}
    elements = 128 * (4001 if app == "92_cumsum_exclusive" else 4000)  # the element-wise launches'
    want = (2048, 512) if app in ("89_cumsum", "90_cumprod") else (-(-elements // 512) * 128, 128)
    assert spec(app).work(p) == want
    assert spec(app).separate_launches == (want[1] == 128)


@pytest.mark.parametrize("params", [scans.TEST_POINT, OTHER])
def test_scans_equal_numpy(params):
    rows, length = params["batch_size"], params["length"]
    inputs = scans.inputs_scan(params, 2)
    x = inputs[0].reshape(rows, length).astype(np.float64)
    out = scans.cumsum(*inputs).reshape(rows, length)
    np.testing.assert_allclose(out, np.cumsum(x, axis=1), rtol=1e-5, atol=1e-4)
    out = scans.cumprod(*scans.inputs_scan(params, 2)).reshape(rows, length)
    np.testing.assert_allclose(out, np.cumprod(x, axis=1), rtol=1e-4, atol=1e-30)
    out = scans.cumsum_reverse(*scans.inputs_reverse(params, 2)).reshape(rows, length)
    np.testing.assert_allclose(out, np.cumsum(x[:, ::-1], axis=1)[:, ::-1], rtol=1e-5, atol=1e-4)
    out = scans.cumsum_exclusive(*scans.inputs_exclusive(params, 2)).reshape(rows - 1, length + 1)
    want = np.cumsum(np.concatenate([np.zeros((rows, 1)), x], axis=1)[:-1], axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    inputs = scans.inputs_masked(params, 2)
    mask = inputs[1].reshape(rows, length)
    assert 0.3 < mask.mean() < 0.7
    out = scans.masked_cumsum(*inputs).reshape(rows, length)
    np.testing.assert_allclose(out, np.cumsum(x * mask, axis=1), rtol=1e-5, atol=1e-4)


def test_hand_worked_row_across_chunks():
    x = np.arange(1, 41, dtype=np.float32)  # one row of 40: two chunks of 32, the second partial
    out = scans.cumsum(x, np.zeros_like(x), 1, 40)
    np.testing.assert_array_equal(out, np.arange(1, 41) * np.arange(2, 42) / 2)
    x = np.full(40, 2.0, dtype=np.float32)
    out = scans.cumprod(x, np.zeros_like(x), 1, 40)
    np.testing.assert_array_equal(out, 2.0 ** np.arange(1, 41))
