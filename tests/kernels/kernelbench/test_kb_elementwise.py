"""The KernelBench element-wise ports (kernels/measured/kernelbench/elementwise.py) against NumPy formulas of the
PyTorch operations (float64 references), hand-worked values, the vendored problem files' shapes and parameters
(read with ``ast``), and one parallel loop per PyTorch kernel."""

from __future__ import annotations

import ast
import copy
import math
from pathlib import Path

import numba
import numpy as np
import pytest

from features.work import WorkSink
from kernels.measured.kernelbench import elementwise as ew
from profiler.session import trace_function

PROBLEMS = (Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "kernelbench"
            / "sizes_before_2025-07" / "level1")
SPECS = {s.application: s for s in ew.KERNELS}
SMALL = {"batch_size": 2, "dim": 1024}

_erf = np.vectorize(math.erf)


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
#: float64 NumPy formulas of the PyTorch operations
REFERENCE = {
    "19_ReLU": lambda x: np.maximum(x, 0.0),
    "20_LeakyReLU": lambda x: np.where(x > 0, x, 0.01 * x),
    "21_Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "22_Tanh": np.tanh,
    "25_Swish": lambda x: x / (1.0 + np.exp(-x)),
    "26_GELU_": lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
    "27_SELU_": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
    "28_HardSigmoid": lambda x: np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "29_Softplus": lambda x: np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0)))),
    "30_Softsign": lambda x: x / (1.0 + np.abs(x)),
    "31_ELU": lambda x: np.where(x > 0, x, np.expm1(x)),
    "32_HardTanh": lambda x: np.clip(x, -1.0, 1.0),
    "88_MinGPTNewGelu": _gelu_tanh,
}
#: PyTorch kernels each forward launches
LAUNCHES = {"25_Swish": 2, "30_Softsign": 3, "88_MinGPTNewGelu": 8}


def test_ported_problems():
    assert sorted(SPECS) == sorted(REFERENCE)
    for spec in ew.KERNELS:
        assert (spec.source, spec.kernel) == ("kernelbench", "forward")
        assert (PROBLEMS / f"{spec.application}.py").exists(), spec.application
        assert spec.separate_launches == (spec.application in LAUNCHES)


@pytest.mark.parametrize("app", sorted(REFERENCE))
@pytest.mark.parametrize("params,seed", [(ew.TEST_POINT, 0), (SMALL, 1)])
def test_region_equals_numpy_formula(app, params, seed):
    spec = SPECS[app]
    inputs = spec.make_inputs(params, seed)
    x = inputs[0]
    assert x.dtype == np.float32 and x.shape == (math.prod(params.values()),)
    assert 2.0 < x.max() and x.min() < -2.0 and abs(float(x.mean())) < 0.2  # standard normal draws
    got = numba.njit(spec.cpu)(*copy.deepcopy(inputs))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, REFERENCE[app](x.astype(np.float64)), rtol=1e-5, atol=1e-6)


#: hand-worked values (float32 inputs exactly representable)
EXAMPLES = {
    "19_ReLU": ([-2.0, 0.0, 3.5, np.nan], [0.0, 0.0, 3.5, np.nan]),
    "20_LeakyReLU": ([-2.0, 0.0, 3.5], [-0.02, 0.0, 3.5]),
    "21_Sigmoid": ([0.0, 50.0, -50.0], [0.5, 1.0, 0.0]),
    "22_Tanh": ([0.0, 50.0, -50.0], [0.0, 1.0, -1.0]),
    "25_Swish": ([0.0, 50.0, -50.0], [0.0, 50.0, 0.0]),
    "26_GELU_": ([0.0, 1.0, -1.0], [0.0, 0.8413447460685429, -0.15865525393145707]),
    "27_SELU_": ([0.0, 1.0, -50.0], [0.0, SELU_SCALE, -SELU_SCALE * SELU_ALPHA]),
    "28_HardSigmoid": ([-3.0, 0.0, 3.0, 1.5, -10.0], [0.0, 0.5, 1.0, 0.75, 0.0]),
    "29_Softplus": ([0.0, 25.0, -30.0], [math.log(2.0), 25.0, math.exp(-30.0)]),
    "30_Softsign": ([1.0, -3.0, 0.0], [0.5, -0.75, 0.0]),
    "31_ELU": ([2.0, -50.0, 0.0], [2.0, -1.0, 0.0]),
    "32_HardTanh": ([-2.0, 0.25, 7.0, np.nan], [-1.0, 0.25, 1.0, np.nan]),
    "88_MinGPTNewGelu": ([0.0, 10.0, -10.0], [0.0, 10.0, 0.0]),
}


@pytest.mark.parametrize("app", sorted(EXAMPLES))
def test_hand_worked_values(app):
    xs, want = EXAMPLES[app]
    x = np.array(xs, dtype=np.float32)
    n_arrays = len(SPECS[app].make_inputs(ew.TEST_POINT, 0))
    got = SPECS[app].cpu(x, *(np.zeros(len(xs), np.float32) for _ in range(n_arrays - 1)))
    np.testing.assert_allclose(got, np.array(want, dtype=np.float64), rtol=1e-6, atol=1e-7, equal_nan=True)


def test_gelu_is_the_erf_form_not_the_tanh_approximation():
    x = np.linspace(-4, 4, 4096, dtype=np.float32)
    got = ew.gelu(x, np.zeros_like(x)).astype(np.float64)
    assert np.max(np.abs(got - REFERENCE["26_GELU_"](x.astype(np.float64)))) < 1e-6
    assert np.max(np.abs(got - _gelu_tanh(x.astype(np.float64)))) > 1e-4
    mingpt = ew.min_gpt_new_gelu(x, *(np.zeros_like(x) for _ in range(8))).astype(np.float64)
    assert np.max(np.abs(mingpt - _gelu_tanh(x.astype(np.float64)))) < 1e-6


def test_gpu_ports_at_a_second_size():
    for spec in ew.KERNELS:
        inputs = spec.make_inputs(SMALL, 2)
        spec.check(spec.cpu(*copy.deepcopy(inputs)), spec.gpu.run(*copy.deepcopy(inputs)))


@pytest.mark.parametrize("app", sorted(REFERENCE))
def test_one_parallel_loop_per_pytorch_kernel_and_one_thread_per_element(app):
    spec = SPECS[app]
    sink = WorkSink()
    trace_function(spec.cpu, spec.make_inputs(ew.TEST_POINT, 0), sinks=[sink], mode="compiled")
    row = sink.results[-1]
    n = spec.work(ew.TEST_POINT)[0]
    assert spec.work(ew.TEST_POINT) == (1024, 256)
    assert row["launches"] == LAUNCHES.get(app, 1)
    assert row["threads"] == n
    # every kernel reads its operands and writes its result once per element
    assert row["store_bytes"] == 4 * n * LAUNCHES.get(app, 1)


# ---------------------------------------------------------------------------------- the problem files


def _module(app):
    return ast.parse((PROBLEMS / f"{app}.py").read_text())


def _assignments(tree):
    """Module-level ``name = <constant>`` assignments of a problem file."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


@pytest.mark.parametrize("app", sorted(REFERENCE))
def test_point_shapes_are_the_problem_files(app):
    assigned = _assignments(_module(app))
    point = SPECS[app].points
    assert list(point) == ["before_2025-07"]
    assert dict(point["before_2025-07"]) == {k: assigned[k] for k in ("batch_size", "dim")}


def _function(tree, name):
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_parameters_are_the_problem_files():
    # LeakyReLU: __init__(negative_slope=0.01), get_init_inputs() -> [] (the default)
    init = _function(_module("20_LeakyReLU"), "__init__")
    assert ast.literal_eval(init.args.defaults[0]) == 0.01 and ew.LEAKY_SLOPE == np.float32(0.01)
    # ELU: get_init_inputs() -> [1.0]
    ret = _function(_module("31_ELU"), "get_init_inputs").body[-1]
    assert ast.literal_eval(ret.value) == [1.0] == [float(ew.ELU_ALPHA)]
    # HardTanh: F.hardtanh(x, min_val=-1., max_val=1.)
    call = next(n for n in ast.walk(_module("32_HardTanh")) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr == "hardtanh")
    kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    assert kw == {"min_val": float(ew.HARDTANH_MIN), "max_val": float(ew.HARDTANH_MAX)}
    # GELU: the default approximate='none' (no keyword)
    call = next(n for n in ast.walk(_module("26_GELU_")) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr == "gelu")
    assert not call.keywords
    # every input is one torch.randn tensor
    for app in REFERENCE:
        src = ast.unparse(_function(_module(app), "get_inputs"))
        assert src.count("torch.randn(batch_size, dim)") == 1, app


def test_feature_point_of_the_large_expression_only():
    assert SPECS["88_MinGPTNewGelu"].feature_point == {"batch_size": 64, "dim": 2000}
    assert all(s.feature_point is None for a, s in SPECS.items() if a != "88_MinGPTNewGelu")
