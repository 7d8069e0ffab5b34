"""KernelBench reductions (kernels/measured/kernelbench/reductions.py): each region against a NumPy formulation
at its test point and at another small size, and each measured point's shapes against the vendored problem file."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from kernels.measured.kernelbench import reductions as red
from kernels.measured.registry import get_measured

PROBLEMS = (Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "kernelbench"
            / "sizes_before_2025-07" / "level1")


def problem_constants(stem: str) -> dict:
    """The module-level constant assignments (``batch_size = 16`` ...) of a vendored problem file."""
    tree = ast.parse((PROBLEMS / f"{stem}.py").read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return found


def spec(app):
    return get_measured(f"kernelbench/{app}/forward")


def run(app, params, seed=0):
    s = spec(app)
    return s.make_inputs(params, seed), s.cpu(*s.make_inputs(params, seed))


ROWS = ["23_Softmax", "24_LogSoftmax"]
DIM1 = ["47_Sum_reduction_over_a_dimension", "48_Mean_reduction_over_a_dimension",
        "49_Max_reduction_over_a_dimension", "53_Min_reduction_over_a_dimension",
        "50_Product_reduction_over_a_dimension", "51_Argmax_over_a_dimension", "52_Argmin_over_a_dimension"]
OTHER_ROWS = {"batch_size": 2, "dim": 77, "block": 32}
OTHER_DIM1 = {"batch_size": 3, "dim1": 5, "dim2": 7, "block": 32}


@pytest.mark.parametrize("app", ROWS)
def test_row_points_are_the_problem_files_shapes(app):
    c = problem_constants(app)
    p = spec(app).points["before_2025-07"]
    assert (p["batch_size"], p["dim"]) == (c["batch_size"], c["dim"]) == (16, 16384)
    assert spec(app).work(p) == (16 * 1024, 1024)


@pytest.mark.parametrize("app", DIM1)
def test_dim1_points_are_the_problem_files_shapes(app):
    c = problem_constants(app)
    p = spec(app).points["before_2025-07"]
    assert (p["batch_size"], p["dim1"], p["dim2"]) == (c["batch_size"], c["dim1"], c["dim2"])
    assert spec(app).work(p) == (16 * 256, 256)
    # every problem reduces over dim 1 (its get_init_inputs or a named constant)
    src = (PROBLEMS / f"{app}.py").read_text()
    init = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef) and n.name == "get_init_inputs"]
    ret = [n for n in ast.walk(init[0]) if isinstance(n, ast.Return)][0].value
    val = ret.elts[0]
    assert (c[val.id] if isinstance(val, ast.Name) else ast.literal_eval(val)) == 1


def test_pool_points_are_the_problem_files_shapes():
    c = problem_constants("41_Max_Pooling_1D")
    p = spec("41_Max_Pooling_1D").points["before_2025-07"]
    for k in ("batch_size", "features", "sequence_length", "kernel_size", "stride", "padding", "dilation"):
        assert p[k] == c[k], k
    assert c["return_indices"] is False
    assert red.pool_out_length(128, 4, 2, 2, 3) == 62
    assert spec("41_Max_Pooling_1D").work(p) == (16 * 64 * 62, 256)
    c = problem_constants("44_Average_Pooling_1D")
    p = spec("44_Average_Pooling_1D").points["before_2025-07"]
    for k in ("batch_size", "in_channels", "input_length", "kernel_size", "stride", "padding"):
        assert p[k] == c[k], k
    assert spec("44_Average_Pooling_1D").work(p) == (16 * 32 * 64, 1024)


@pytest.mark.parametrize("params", [red.SOFTMAX_TEST, OTHER_ROWS])
def test_softmax_and_log_softmax_equal_numpy(params):
    (x, _, _), out = run("23_Softmax", params)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
    (_, _, _), lout = run("24_LogSoftmax", params)
    np.testing.assert_allclose(lout, np.log(want), rtol=1e-5, atol=2e-5)


def test_softmax_hand_worked_row():
    x = np.array([[0.0, np.log(3.0)]], dtype=np.float32)
    out = red.softmax_rows(x, np.zeros_like(x), 2)
    np.testing.assert_allclose(out, [[0.25, 0.75]], rtol=1e-6)
    lout = red.log_softmax_rows(x, np.zeros_like(x), 2)
    np.testing.assert_allclose(lout, [[np.log(0.25), np.log(0.75)]], rtol=1e-6)


@pytest.mark.parametrize("params", [red.DIM1_TEST, OTHER_DIM1])
def test_dim1_reductions_equal_numpy(params):
    (x, _, _), out = run("47_Sum_reduction_over_a_dimension", params)
    assert out.shape == (x.shape[0], 1, x.shape[2])
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    (_, _, _), out = run("48_Mean_reduction_over_a_dimension", params)
    np.testing.assert_allclose(out, x.astype(np.float64).mean(axis=1), rtol=1e-5, atol=1e-6)
    (_, _, _), out = run("50_Product_reduction_over_a_dimension", params)
    np.testing.assert_allclose(out, x.astype(np.float64).prod(axis=1), rtol=1e-5, atol=1e-7)
    (_, _, _, _), (vals, idx) = run("49_Max_reduction_over_a_dimension", params)
    np.testing.assert_array_equal(vals, x.max(axis=1))
    np.testing.assert_array_equal(idx, x.argmax(axis=1))
    assert idx.dtype == np.int64
    (_, _, _, _), (vals, idx) = run("53_Min_reduction_over_a_dimension", params)
    np.testing.assert_array_equal(vals, x.min(axis=1))
    np.testing.assert_array_equal(idx, x.argmin(axis=1))
    (_, _, _), idx = run("51_Argmax_over_a_dimension", params)
    np.testing.assert_array_equal(idx, x.argmax(axis=1))
    (_, _, _), idx = run("52_Argmin_over_a_dimension", params)
    np.testing.assert_array_equal(idx, x.argmin(axis=1))


def test_argmax_ties_keep_the_first_index():
    x = np.array([[[1.0], [3.0], [3.0], [-2.0], [-2.0]]], dtype=np.float32)
    idx = red.argmax_dim1(x, np.zeros((1, 1), dtype=np.int64), 32)
    assert idx[0, 0] == 1
    idx = red.argmin_dim1(x, np.zeros((1, 1), dtype=np.int64), 32)
    assert idx[0, 0] == 3


def _np_max_pool(x, k, s, p, d):
    n, c, length = x.shape
    lout = red.pool_out_length(length, k, s, p, d)
    padded = np.full((n, c, length + 2 * p), -np.inf, dtype=np.float32)
    padded[:, :, p:p + length] = x
    vals = np.empty((n, c, lout), dtype=np.float32)
    idx = np.empty((n, c, lout), dtype=np.int64)
    for o in range(lout):
        taps = o * s + d * np.arange(k)
        win = padded[:, :, taps]
        j = win.argmax(axis=2)
        vals[:, :, o] = win.max(axis=2)
        idx[:, :, o] = taps[j] - p
    return vals, idx


@pytest.mark.parametrize("params", [red.MAXPOOL_TEST, {**red.MAXPOOL_TEST, "sequence_length": 23, "stride": 3,
                                                         "padding": 1, "dilation": 2, "kernel_size": 3}])
def test_max_pool1d_equals_numpy(params):
    (x, *_), (vals, idx) = run("41_Max_Pooling_1D", params)
    want_v, want_i = _np_max_pool(x, params["kernel_size"], params["stride"], params["padding"], params["dilation"])
    np.testing.assert_array_equal(vals, want_v)
    np.testing.assert_array_equal(idx, want_i)


@pytest.mark.parametrize("params", [red.AVGPOOL_TEST, {**red.AVGPOOL_TEST, "input_length": 21, "kernel_size": 3,
                                                         "stride": 1, "padding": 1}])
def test_avg_pool1d_equals_numpy(params):
    (x, *_), out = run("44_Average_Pooling_1D", params)
    k, s, p = params["kernel_size"], params["stride"], params["padding"]
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p)))
    lout = red.pool_out_length(x.shape[2], k, s, p)
    want = np.stack([padded[:, :, o * s:o * s + k].sum(axis=2) / k for o in range(lout)], axis=2)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_avg_pool1d_hand_worked():
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)  # 1..6, padding 1: windows [0,1,2,3], [2,3,4,5], [4,5,6,0]
    out = red.avg_pool1d(x, np.zeros((1, 1, 3), dtype=np.float32), 4, 2, 1, 32)
    np.testing.assert_allclose(out[0, 0], [6 / 4, 14 / 4, 15 / 4])
