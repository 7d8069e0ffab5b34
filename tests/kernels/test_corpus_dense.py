"""Dense, reduction and special-function kernels: CPU region (plain Python) == numba.njit(CPU region) ==
GPU port (CUDA simulator)
== an independent NumPy/SciPy reference, at the ``tiny`` size; plus hand-checked worked examples."""

from __future__ import annotations

import functools
import glob
import importlib
import inspect
import math
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy.signal
import scipy.special
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels.registry import all_kernels
from kernels.spec import CATEGORIES

A_KERNELS = [
    "saxpy", "triad", "matmul_naive", "matmul_tiled", "stencil2d", "stencil3d", "conv2d", "transpose",
    "reduce_sum", "dot", "prefix_sum", "histogram",
    "black_scholes", "monte_carlo_option", "nbody", "lennard_jones", "kmeans_assign",
    "matvec", "softmax_rows", "poly_eval", "conv1d", "iir_filter", "heat1d_steps",
]


def _spec(name):
    # straight from the module, so that a broken kernel elsewhere in the corpus cannot break these tests
    return importlib.import_module(f"kernels.{name}").KERNEL


@functools.lru_cache(maxsize=None)
def _jit(name):
    return numba.njit(cache=True)(_spec(name).cpu)


@functools.lru_cache(maxsize=None)
def _tiny(name):
    """(inputs, plain-Python CPU result) at the tiny size, seed 0."""
    spec = _spec(name)
    inputs = spec.make_inputs(spec.sizes["tiny"], 0)
    return inputs, spec.cpu(*_copy(inputs))


def _copy(inputs):
    return tuple(x.copy() if isinstance(x, np.ndarray) else x for x in inputs)


# --------------------------------------------------------------------------------------------------------
# independent references (NumPy / SciPy), computed in float64


def _ref_stencil2d(u):
    u = u.astype(np.float64)
    out = u.copy()
    out[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def _ref_stencil3d(u):
    u = u.astype(np.float64)
    out = u.copy()
    c = (slice(1, -1),) * 3
    nb = (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
          + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:])
    out[c] = 0.4 * u[c] + 0.1 * nb
    return out


def _ref_black_scholes(S, K, T, r, v):
    S, K, T = (a.astype(np.float64) for a in (S, K, T))
    d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / (v * np.sqrt(T))
    d2 = d1 - v * np.sqrt(T)
    disc = np.exp(-r * T)
    call = S * scipy.stats.norm.cdf(d1) - K * disc * scipy.stats.norm.cdf(d2)
    put = K * disc * scipy.stats.norm.cdf(-d2) - S * scipy.stats.norm.cdf(-d1)
    return call, put


def _np_xorshift32(s):
    s = s ^ ((s << np.uint64(13)) & np.uint64(0xFFFFFFFF))
    s = s ^ (s >> np.uint64(17))
    return s ^ ((s << np.uint64(5)) & np.uint64(0xFFFFFFFF))


def _mc_payoffs(n_paths, steps, s0, strike, r, sigma, T, seed):
    """Undiscounted payoff of every path: the same generator and path model, vectorised with uint64 arrays."""
    p = np.arange(n_paths, dtype=np.uint64)
    h = ((p + np.uint64(1)) * np.uint64(2654435761) + np.uint64(seed * 40503)) & np.uint64(0xFFFFFFFF)
    h = (h ^ (h >> np.uint64(16))) & np.uint64(0xFFFFFFFF)
    h[h == 0] = 1
    for _ in range(4):
        h = _np_xorshift32(h)
    dt = T / steps
    logs = np.zeros(n_paths)
    for _ in range(steps):
        h = _np_xorshift32(h)
        u1 = (h.astype(np.float64) + 0.5) / 4294967296.0
        h = _np_xorshift32(h)
        u2 = (h.astype(np.float64) + 0.5) / 4294967296.0
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        logs += (r - 0.5 * sigma * sigma) * dt + sigma * math.sqrt(dt) * z
    return np.maximum(s0 * np.exp(logs) - strike, 0.0)


def _ref_monte_carlo(n_paths, steps, s0, strike, r, sigma, T, seed):
    return math.exp(-r * T) * _mc_payoffs(n_paths, steps, s0, strike, r, sigma, T, seed).sum() / n_paths


def _ref_nbody(x, y, z, m, eps2):
    P = np.stack([x, y, z], axis=1).astype(np.float64)
    d = P[None, :, :] - P[:, None, :]  # d[i, j] = r_j - r_i
    r2 = (d * d).sum(axis=2) + eps2
    w = m.astype(np.float64)[None, :] / r2 ** 1.5
    acc = (d * w[:, :, None]).sum(axis=1)
    return acc[:, 0], acc[:, 1], acc[:, 2]


def _ref_lennard_jones(x, y, z, neigh, nneigh, rc2):
    n, kmax = neigh.shape
    valid = np.arange(kmax)[None, :] < nneigh[:, None]
    j = np.where(valid, neigh, 0)
    dx, dy, dz = x[:, None] - x[j], y[:, None] - y[j], z[:, None] - z[j]
    r2 = dx * dx + dy * dy + dz * dz
    use = valid & (r2 < rc2)
    r2 = np.where(use, r2, 1.0)  # padding entries and pairs beyond the cut-off contribute nothing
    inv6 = np.where(use, 1.0 / r2 ** 3, 0.0)
    f = np.where(use, 24.0 / r2 * inv6 * (2.0 * inv6 - 1.0), 0.0)
    e = np.where(use, 2.0 * inv6 * (inv6 - 1.0), 0.0)
    return (f * dx).sum(1), (f * dy).sum(1), (f * dz).sum(1), e.sum(1)


def _ref_heat1d(u0, alpha, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return u


REFERENCES = {
    "saxpy": lambda a, x, y: np.float64(a) * x + y,
    "triad": lambda b, c, s: b + s * c,
    "matmul_naive": lambda A, B: A.astype(np.float64) @ B.astype(np.float64),
    "matmul_tiled": lambda A, B: A.astype(np.float64) @ B.astype(np.float64),
    "stencil2d": _ref_stencil2d,
    "stencil3d": _ref_stencil3d,
    "conv2d": lambda img, w: scipy.signal.correlate2d(img.astype(np.float64), w.astype(np.float64),
                                                      mode="same", boundary="fill"),
    "transpose": lambda a: a.T,
    "reduce_sum": lambda x: math.fsum(x),
    "dot": lambda x, y: math.fsum(x * y),
    "prefix_sum": lambda x: np.cumsum(x),
    "histogram": lambda data: np.bincount(data, minlength=256),
    "black_scholes": _ref_black_scholes,
    "monte_carlo_option": _ref_monte_carlo,
    "nbody": _ref_nbody,
    "lennard_jones": _ref_lennard_jones,
    "kmeans_assign": lambda X, C: np.argmin(((X[:, None, :].astype(np.float64) - C[None].astype(np.float64)) ** 2)
                                            .sum(axis=2), axis=1),
    "matvec": lambda A, x: A @ x,
    "softmax_rows": lambda X: scipy.special.softmax(X.astype(np.float64), axis=1),
    "poly_eval": lambda c, x: np.polyval(c, x),
    "conv1d": lambda x, w: np.correlate(x.astype(np.float64), w.astype(np.float64), mode="valid"),
    "iir_filter": lambda x, b0, a1, a2: scipy.signal.lfilter([b0], [1.0, -a1, -a2], x, axis=1),
    "heat1d_steps": _ref_heat1d,
}


# --------------------------------------------------------------------------------------------------------
# the corpus contract


def test_registry_has_all_of_helper_a_kernels():
    kernels = all_kernels()
    missing = sorted(set(A_KERNELS) - set(kernels))
    assert missing == []
    assert set(REFERENCES) == set(A_KERNELS)


@pytest.mark.parametrize("name", A_KERNELS)
def test_spec_is_well_formed(name):
    spec = _spec(name)
    assert spec.cpu.__module__ == f"kernels.{name}"
    assert spec.category in CATEGORIES
    sizes = [spec.sizes[k] for k in ("tiny", "small", "medium", "large")]
    assert sizes == sorted(sizes) and len(set(sizes)) == 4
    src = inspect.getsource(spec.cpu)
    assert src.count("numba.prange(") == 1, "exactly one parallel loop"
    a, b, c = spec.make_inputs(spec.sizes["tiny"], 7), spec.make_inputs(spec.sizes["tiny"], 7), \
        spec.make_inputs(spec.sizes["tiny"], 8)
    assert all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))
    if name != "monte_carlo_option":  # its inputs are scalars only; the seed enters the generator
        assert not all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, c))
    else:
        assert a[-1] != c[-1]


@pytest.mark.parametrize("name", A_KERNELS)
def test_njit_matches_plain_python(name):
    spec = _spec(name)
    inputs, py = _tiny(name)
    spec.check(py, _jit(name)(*_copy(inputs)))


@pytest.mark.parametrize("name", A_KERNELS)
def test_gpu_port_matches_cpu_region(name):
    spec = _spec(name)
    inputs, py = _tiny(name)
    spec.check(py, spec.gpu.run(*_copy(inputs)))


@pytest.mark.parametrize("name", A_KERNELS)
def test_matches_independent_reference(name):
    spec = _spec(name)
    inputs, py = _tiny(name)
    ref = REFERENCES[name](*_copy(inputs))
    ref = tuple(np.asarray(r) for r in ref) if isinstance(ref, tuple) else np.asarray(ref)
    if isinstance(py, tuple):
        py = tuple(np.asarray(p, dtype=np.float64) for p in py)
    else:
        py = np.asarray(py, dtype=np.float64)
    spec.check(ref, py)


@pytest.mark.parametrize("name", ["reduce_sum", "dot", "prefix_sum", "histogram", "monte_carlo_option",
                                  "heat1d_steps"])
def test_repeated_launch_gives_the_same_result(name):
    """Calibration launches the same device state many times; multi-kernel ports must reset what they accumulate."""
    spec = _spec(name)
    inputs, py = _tiny(name)
    state = spec.gpu.to_device(*_copy(inputs))
    spec.gpu.launch(state)
    spec.gpu.launch(state)
    spec.check(py, spec.gpu.from_device(state))


# --------------------------------------------------------------------------------------------------------
# hand-checked worked examples (CPU region, njit and GPU port)


def _all_three(name, *inputs):
    spec = _spec(name)
    py = spec.cpu(*_copy(inputs))
    spec.check(py, _jit(name)(*_copy(inputs)))
    spec.check(py, spec.gpu.run(*_copy(inputs)))
    return py


def test_worked_saxpy_triad():
    got = _all_three("saxpy", np.float32(2.0), np.array([1.0, 2.0], np.float32), np.array([10.0, 20.0], np.float32))
    assert got.tolist() == [12.0, 24.0]
    got = _all_three("triad", np.array([1.0, 2.0]), np.array([3.0, 4.0]), 3.0)
    assert got.tolist() == [10.0, 14.0]


@pytest.mark.parametrize("name", ["matmul_naive", "matmul_tiled"])
def test_worked_matmul(name):
    A = np.array([[1, 2], [3, 4]], np.float32)
    B = np.array([[5, 6], [7, 8]], np.float32)
    assert _all_three(name, A, B).tolist() == [[19.0, 22.0], [43.0, 50.0]]


def test_worked_matmul_tiled_cpu_edges():
    """Sizes that are not multiples of the CPU tile (32) or the GPU tile (16)."""
    g = np.random.default_rng(3)
    A = g.uniform(-1, 1, (37, 50)).astype(np.float32)
    B = g.uniform(-1, 1, (50, 33)).astype(np.float32)
    got = _jit("matmul_tiled")(A, B)
    np.testing.assert_allclose(got, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_worked_stencils():
    u = np.ones((3, 3), np.float32)
    u[1, 1] = 5.0
    got = _all_three("stencil2d", u)
    expect = np.ones((3, 3))
    expect[1, 1] = 1.8  # 0.2 * (5 + 1 + 1 + 1 + 1)
    np.testing.assert_allclose(got, expect, rtol=1e-6)
    v = np.zeros((3, 3, 3), np.float32)
    v[1, 1, 1] = 1.0
    got = _all_three("stencil3d", v)
    assert got[1, 1, 1] == pytest.approx(0.4) and got.sum() == pytest.approx(0.4)


def test_worked_conv2d_of_an_impulse_is_the_flipped_filter():
    img = np.zeros((5, 5), np.float32)
    img[2, 2] = 1.0
    w = np.arange(25, dtype=np.float32).reshape(5, 5)
    got = _all_three("conv2d", img, w)
    assert got.tolist() == w[::-1, ::-1].tolist()


def test_worked_transpose():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    assert _all_three("transpose", a).tolist() == [[1, 4], [2, 5], [3, 6]]


def test_worked_reductions():
    assert _all_three("reduce_sum", np.full(1000, 0.5)) == 500.0
    assert _all_three("dot", np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])) == 32.0
    assert _all_three("prefix_sum", np.array([3, -1, 4, 1, 5], np.int64)).tolist() == [3, 2, 6, 7, 12]
    hist = _all_three("histogram", np.array([0, 255, 3, 3, 255, 3], np.uint8))
    assert hist[0] == 1 and hist[3] == 3 and hist[255] == 2 and hist.sum() == 6


def test_worked_black_scholes_at_the_money():
    # S = K = 100, T = 1, r = 0, v = 0.2: call = put = 100 * (2 N(0.1) - 1) = 7.9656
    one = np.array([100.0], np.float32)
    call, put = _all_three("black_scholes", one, one, np.array([1.0], np.float32), 0.0, 0.2)
    assert call[0] == pytest.approx(7.9656, abs=1e-4) and put[0] == pytest.approx(7.9656, abs=1e-4)


def test_worked_xorshift32_matches_marsaglia():
    from kernels.monte_carlo_option import xorshift32

    assert xorshift32(2463534242) == 723471715  # the example of Marsaglia (2003), "Xorshift RNGs"


def test_monte_carlo_converges_to_black_scholes():
    """Terminal price is exactly log-normal, so the estimate must lie within 4 standard errors of the formula."""
    n, steps, s0, strike, r, sigma, T, seed = _spec("monte_carlo_option").make_inputs(1 << 16, 1)
    price = _jit("monte_carlo_option")(n, steps, s0, strike, r, sigma, T, seed)
    d1 = (math.log(s0 / strike) + (r + 0.5 * sigma ** 2) * T) / (sigma * math.sqrt(T))
    d2 = d1 - sigma * math.sqrt(T)
    exact = s0 * scipy.stats.norm.cdf(d1) - strike * math.exp(-r * T) * scipy.stats.norm.cdf(d2)
    payoffs = _mc_payoffs(n, steps, s0, strike, r, sigma, T, seed)
    assert price == pytest.approx(math.exp(-r * T) * payoffs.mean(), rel=1e-12)
    se = math.exp(-r * T) * payoffs.std(ddof=1) / math.sqrt(n)
    assert abs(price - exact) < 4 * se


def test_worked_nbody_two_bodies():
    x = np.array([0.0, 1.0], np.float32)
    zero = np.zeros(2, np.float32)
    m = np.ones(2, np.float32)
    ax, ay, az = _all_three("nbody", x, zero, zero, m, 0.01)
    pull = 1.0 / 1.01 ** 1.5  # m / (r^2 + eps^2)^(3/2) * r with r = 1
    np.testing.assert_allclose(ax, [pull, -pull], rtol=1e-6)
    assert ay.tolist() == [0.0, 0.0] and az.tolist() == [0.0, 0.0]


def test_worked_lennard_jones_pair_at_the_minimum():
    rmin = 2.0 ** (1.0 / 6.0)  # force zero, pair energy -1 (split -0.5 per atom)
    x = np.array([0.0, rmin, 5.0])
    zero = np.zeros(3)
    neigh = np.array([[1, 2], [0, -1], [0, -1]], np.int32)  # atom 2 is beyond the cut-off of atom 0
    nneigh = np.array([2, 1, 1], np.int32)
    fx, fy, fz, e = _all_three("lennard_jones", x, zero, zero, neigh, nneigh, 1.5 ** 2)
    np.testing.assert_allclose(fx, [0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(e, [-0.5, -0.5, 0.0], atol=1e-12)
    x[1] = 1.0  # r = 1: F = 24 (2 - 1) = 24, repulsive; pair energy 4 (1 - 1) = 0
    fx, fy, fz, e = _all_three("lennard_jones", x, zero, zero, neigh, nneigh, 1.5 ** 2)
    np.testing.assert_allclose(fx, [-24.0, 24.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(e, [0.0, 0.0, 0.0], atol=1e-12)


def test_worked_kmeans_assign_cpu_first_minimum_wins():
    X = np.array([[0, 0], [3, 3], [1.4, 1.4], [1.5, 1.5]], np.float32)
    C = np.array([[0, 0], [3, 3]], np.float32)
    assert _jit("kmeans_assign")(X, C).tolist() == [0, 1, 0, 0]
    assert _spec("kmeans_assign").cpu(X, C).tolist() == [0, 1, 0, 0]


def test_worked_matvec_softmax_poly():
    assert _all_three("matvec", np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0])).tolist() == [3.0, 7.0]
    X = np.zeros((2, 1000), np.float32)
    X[0, 1] = math.log(3.0)
    Y = _all_three("softmax_rows", X)
    assert Y[0, 1] / Y[0, 0] == pytest.approx(3.0, rel=1e-5)
    np.testing.assert_allclose(Y[1], 1e-3, rtol=1e-5)
    np.testing.assert_allclose(Y.sum(axis=1), 1.0, rtol=1e-5)
    got = _all_three("poly_eval", np.array([1.0, -3.0, 2.0]), np.array([0.0, 1.0, 2.0, 3.0]))
    assert got.tolist() == [2.0, 0.0, 0.0, 2.0]  # x^2 - 3x + 2 = (x - 1)(x - 2)


def test_worked_conv1d():
    assert _spec("conv1d").cpu(np.array([1, 2, 4, 8], np.float32), np.array([1, 1], np.float32)).tolist() == \
        [3.0, 6.0, 12.0]
    x = np.zeros(40, np.float32)
    x[35] = 1.0
    w = np.arange(31, dtype=np.float32)
    got = _all_three("conv1d", x, w)  # out[i] = w[35 - i] for 5 <= i <= 9
    assert got.tolist() == [0.0] * 5 + [30.0, 29.0, 28.0, 27.0, 26.0]


def test_worked_iir_impulse_response():
    x = np.zeros((4, 4))
    x[:, 0] = 1.0
    y = _all_three("iir_filter", x, 0.2, 1.6, -0.8)
    np.testing.assert_allclose(y[2], [0.2, 0.32, 0.352, 0.3072], rtol=1e-12)


def test_worked_heat1d():
    u0 = np.array([0.0, 0.0, 100.0, 0.0, 0.0])
    assert _all_three("heat1d_steps", u0, 0.25, 1).tolist() == [0.0, 25.0, 50.0, 25.0, 0.0]
    assert _all_three("heat1d_steps", u0, 0.25, 2).tolist() == [0.0, 25.0, 37.5, 25.0, 0.0]


# --------------------------------------------------------------------------------------------------------
# properties against NumPy at random sizes (compiled CPU regions; fast)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 3000), seed=st.integers(0, 2**31 - 1))
def test_property_scan_and_histogram(n, seed):
    g = np.random.default_rng(seed)
    x = g.integers(-10**6, 10**6, n).astype(np.int64)
    assert np.array_equal(_jit("prefix_sum")(x), np.cumsum(x))
    data = g.integers(0, 256, n).astype(np.uint8)
    assert np.array_equal(_jit("histogram")(data), np.bincount(data, minlength=256))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 70), m=st.integers(1, 70), p=st.integers(1, 70), seed=st.integers(0, 1000))
def test_property_matmul_and_transpose_any_shape(n, m, p, seed):
    g = np.random.default_rng(seed)
    A = g.uniform(-1, 1, (n, m)).astype(np.float32)
    B = g.uniform(-1, 1, (m, p)).astype(np.float32)
    ref = A.astype(np.float64) @ B
    np.testing.assert_allclose(_jit("matmul_tiled")(A, B), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_jit("matmul_naive")(A, B), ref, rtol=1e-4, atol=1e-4)
    assert np.array_equal(_jit("transpose")(A), A.T)


@settings(max_examples=4, deadline=None)
@given(n=st.integers(1, 400))
def test_property_gpu_scan_across_block_boundaries(n):
    x = np.random.default_rng(n).integers(-50, 50, n).astype(np.int64)
    assert np.array_equal(_spec("prefix_sum").gpu.run(x), np.cumsum(x))


# --------------------------------------------------------------------------------------------------------
# the simulator accepts code that the real compiler rejects (e.g. a shared-array shape computed from an
# expression): compile every kernel each port launches to sm_90 PTX with the real NVVM. Needs no GPU, only
# NVVM and libdevice (a CUDA toolkit); skipped, saying why, where there is none.

_TOOLCHAIN_MISSING = 3


def _find_libdevice():
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")] + sorted(glob.glob("/usr/local/cuda*"))
    for root in roots:
        if root:
            hits = sorted(glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice*.bc")))
            if hits:
                return hits[0]
    return None


def _ptx_main(names):
    """Run as a script with the simulator off: launch each port's ``to_device`` + ``launch`` at the tiny size
    with host arrays standing in for device arrays and every kernel launch replaced by a PTX compile."""
    try:
        import numba.cuda.dispatcher as cuda_dispatcher
        from numba import cuda, typeof
        from numba.cuda.cudadrv import nvvm

        libdevice = os.environ["PORTCAST_LIBDEVICE"]
        nvvm.get_libdevice = lambda: libdevice
        nvvm.open_libdevice = lambda: open(libdevice, "rb").read()

        class _Device:  # device functions ask the current device for its compute capability
            compute_capability = (9, 0)

        cuda_dispatcher.get_current_device = lambda: _Device()
        nvvm.NVVM()
    except Exception as exc:  # no NVVM, or numba-cuda internals moved
        print(f"toolchain unavailable: {type(exc).__name__}: {exc}")
        return _TOOLCHAIN_MISSING
    class _HostArray(np.ndarray):  # stands in for a device array
        def copy_to_host(self, *args, **kw):
            return np.array(self, copy=True)

        def copy_to_device(self, a, *args, **kw):
            self[...] = a

    cuda.to_device = lambda a, *args, **kw: np.array(a, copy=True).view(_HostArray)
    cuda.device_array = lambda shape, dtype=np.float64, *args, **kw: np.zeros(shape, dtype=dtype).view(_HostArray)
    cuda.device_array_like = lambda a, *args, **kw: np.zeros_like(np.asarray(a)).view(_HostArray)

    class _CompileInsteadOfLaunch:
        def __init__(self, label, dispatcher):
            self.label, self.dispatcher, self.done = label, dispatcher, set()

        def __getitem__(self, config):
            def launch(*args):
                sig = tuple(typeof(a.view(np.ndarray) if isinstance(a, np.ndarray) else a) for a in args)
                if sig not in self.done:
                    ptx, _ = cuda.compile_ptx(self.dispatcher.py_func, sig, cc=(9, 0))
                    assert ".target sm_90" in ptx
                    self.done.add(sig)
                    print(f"{self.label}{sig}: {len(ptx)} bytes of PTX")
            return launch

    failures = 0
    for name in names:
        module = importlib.import_module(f"kernels.{name}")
        for attr, value in list(vars(module).items()):
            if isinstance(value, cuda_dispatcher.CUDADispatcher) and not value.targetoptions.get("device"):
                setattr(module, attr, _CompileInsteadOfLaunch(f"{name}.{attr}", value))
        spec = module.KERNEL
        try:
            spec.gpu.launch(spec.gpu.to_device(*spec.make_inputs(spec.sizes["tiny"], 0)))
        except Exception as exc:
            failures += 1
            print(f"{name}: FAILED {type(exc).__name__}: {exc}")
    return 1 if failures else 0


def test_gpu_ports_compile_to_ptx_with_the_real_compiler():
    libdevice = _find_libdevice()
    if libdevice is None:
        pytest.skip("no CUDA toolkit (NVVM + libdevice) on this machine: real-compiler check not possible")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", NUMBA_FORCE_CUDA_CC="9.0", PORTCAST_LIBDEVICE=libdevice)
    run = subprocess.run([sys.executable, __file__, *A_KERNELS], env=env, capture_output=True, text=True,
                         timeout=900)
    if run.returncode == _TOOLCHAIN_MISSING:
        pytest.skip(run.stdout.strip())
    assert run.returncode == 0, run.stdout + run.stderr
    for name in A_KERNELS:
        assert f"{name}." in run.stdout


if __name__ == "__main__":
    sys.exit(_ptx_main(sys.argv[1:]))
