"""The lud ports (kernels/measured/lud.py): the whole LU decomposition that their kernels make over all offsets
against plain elimination without pivoting, one launch against the same step done by NumPy, a hand-checked
matrix whose factors are all ones, the states ``make_inputs`` prepares, and the launch geometry of the points
(the Amaris sweep's first launches)."""

from __future__ import annotations

import functools

import numba
import numpy as np
import pytest

from kernels.measured import lud
from kernels.measured.registry import get_measured

BS = lud.BS
VARIANTS = {"aiwc": (lud.lud_diagonal, lud.lud_perimeter),
            "amaris": (lud.lud_diagonal_staged, lud.lud_perimeter_staged)}


@functools.lru_cache(maxsize=None)
def _jit(fn):
    return numba.njit(fn)


def _factor(a, variant):
    """The application's host loop over every offset, with the variant's diagonal and perimeter regions (Amaris
    has no internal kernel of its own in the data: AIWC's, the same arithmetic, stands in)."""
    diagonal, perimeter = (_jit(f) for f in VARIANTS[variant])
    internal = _jit(lud.lud_internal)
    m = a.copy()
    n = m.shape[0]
    for o in range(0, n - BS, BS):
        diagonal(m, o)
        perimeter(m, o)
        internal(m, o)
    diagonal(m, n - BS)
    return m


def _reference_lu(a):
    """L (unit diagonal, below) and U packed in one matrix: Gaussian elimination without pivoting, float64."""
    a = a.astype(np.float64)
    n = a.shape[0]
    for k in range(n - 1):
        for i in range(k + 1, n):
            a[i, k] /= a[k, k]
            a[i, k + 1:] -= a[i, k] * a[k, k + 1:]
    return a


def _min_matrix(n):
    """``1 + min(i, j)``: the product of the unit lower triangle of ones and the upper triangle of ones."""
    k = np.arange(n)
    return (1 + np.minimum(k[:, None], k[None, :])).astype(np.float32)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_worked_example_factors_are_all_ones(variant):
    # (L U)[i, j] = sum over k <= min(i, j) of 1 * 1 = 1 + min(i, j); every intermediate value is a small
    # integer and every pivot 1, so float32 is exact and the packed factors are exactly ones
    assert np.array_equal(_factor(_min_matrix(48), variant), np.ones((48, 48), dtype=np.float32))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_worked_example_one_launch_of_each_kernel(variant):
    diagonal, perimeter = (_jit(f) for f in VARIANTS[variant])
    a = _min_matrix(48)
    m = diagonal(a.copy(), 0)
    want = a.copy()
    want[:BS, :BS] = 1.0
    assert np.array_equal(m, want)  # the tile's factors, nothing else touched
    m = perimeter(m, 0)
    want[:BS, :] = 1.0  # U's first 16 rows: ones on and right of the diagonal
    want[:, :BS] = 1.0  # L's first 16 columns: ones
    assert np.array_equal(m, want)
    m = _jit(lud.lud_internal)(m, 0)
    # the trailing 32 x 32 less 16 ones products: 1 + min(i, j) - 16 = the min matrix of the rest
    want[BS:, BS:] = _min_matrix(48 - BS)
    assert np.array_equal(m, want)


@pytest.mark.parametrize("n", [48, 80])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_full_decomposition_equals_elimination_without_pivoting(variant, n):
    # the generated matrices: AIWC's uniform one made diagonally dominant (elimination without pivoting is
    # then stable: float32 agrees with float64 to ~3e-5 absolute on entries up to n), and Rodinia's as it is
    # (symmetric positive definite, but its pivots are ~0.02 for entries ~10: float32 differs by ~3e-4)
    matrices = [(lud.aiwc_matrix(n, 5) + np.float32(n) * np.eye(n, dtype=np.float32), 1e-4),
                (lud.rodinia_matrix(n), 1e-3)]
    for a, tol in matrices:
        got = _factor(a, variant)
        want = _reference_lu(a)
        assert np.allclose(got, want, rtol=tol, atol=tol), np.abs(got - want).max()
        lower = np.tril(got.astype(np.float64), -1) + np.eye(n)
        upper = np.triu(got.astype(np.float64))
        assert np.allclose(lower @ upper, a, rtol=1e-5, atol=1e-4)


_NUMPY_STEP = {"lud_diagonal": lud.numpy_diagonal_step, "lud_perimeter": lud.numpy_perimeter_step,
               "lud_internal": lud.numpy_internal_step}


def _launch_points(name):
    spec = get_measured(name)
    return [spec.test_point, {"n": 64, "offset": 16}]


@pytest.mark.parametrize("name", [f"{s}/lud/{k}" for s in ("aiwc", "amaris") for k in ("lud_diagonal", "lud_perimeter")]
                         + ["aiwc/lud/lud_internal"])
def test_one_launch_equals_the_same_step_in_numpy(name):
    spec = get_measured(name)
    region = _jit(spec.cpu)
    for params in _launch_points(name):
        m, offset = spec.make_inputs(params, 1)
        got = region(m.copy(), offset)
        want = m.copy()
        _NUMPY_STEP[spec.kernel](want, offset)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5), (params, np.abs(got - want).max())
        # elements the step does not own are left exactly as they were
        owned = np.zeros(m.shape, dtype=bool)
        e = offset + BS
        if spec.kernel == "lud_diagonal":
            owned[offset:e, offset:e] = True
        elif spec.kernel == "lud_perimeter":
            owned[offset:e, e:] = owned[e:, offset:e] = True
        else:
            owned[e:, e:] = True
        assert np.array_equal(got[~owned], m[~owned])
        assert not np.array_equal(got[owned], m[owned])


def test_make_inputs_prepares_the_state_the_earlier_kernels_leave():
    n = 64
    for source in ("aiwc", "amaris"):
        diagonal, perimeter = (_jit(f) for f in VARIANTS[source])
        for offset in (0, 16, 32):
            params = {"n": n, "offset": offset}
            m, o = get_measured(f"{source}/lud/lud_diagonal").make_inputs(params, 2)
            assert o == offset
            before_perimeter, _ = get_measured(f"{source}/lud/lud_perimeter").make_inputs(params, 2)
            assert np.allclose(diagonal(m.copy(), offset), before_perimeter, rtol=1e-4, atol=1e-5)
            if source == "aiwc":
                before_internal, _ = get_measured("aiwc/lud/lud_internal").make_inputs(params, 2)
                assert np.allclose(perimeter(before_perimeter.copy(), offset), before_internal, rtol=1e-4, atol=1e-5)
        # the state at offset 16 is the whole first step (all three kernels at offset 0) of the same matrix
        first, _ = get_measured(f"{source}/lud/lud_diagonal").make_inputs({"n": n, "offset": 0}, 2)
        for step in (diagonal, perimeter, _jit(lud.lud_internal)):
            first = step(first, 0)
        later, _ = get_measured(f"{source}/lud/lud_diagonal").make_inputs({"n": n, "offset": 16}, 2)
        assert np.allclose(first, later, rtol=1e-4, atol=1e-5)


def test_matrix_generators():
    a = lud.aiwc_matrix(32, 0)
    assert a.dtype == np.float32 and a.shape == (32, 32) and 0 <= a.min() and a.max() < 1
    assert np.array_equal(a, lud.aiwc_matrix(32, 0)) and not np.array_equal(a, lud.aiwc_matrix(32, 1))
    r = lud.rodinia_matrix(300)
    assert r.dtype == np.float32 and np.array_equal(r, r.T)
    assert r[0, 0] == np.float32(10.0) and r[5, 5] == np.float32(10.0)
    assert np.isclose(r[0, 1], 10 * np.exp(-0.001), rtol=1e-6) and np.isclose(r[299, 0], 10 * np.exp(-0.299), rtol=1e-6)
    assert r[3, 7] == r[10, 14]  # Toeplitz: depends on |i - j| only


def test_points_and_launch_geometry():
    # AIWC: the sizes of opendwarf_application_parameters.py; its workitems are checked in test_measured.py
    for name in ("aiwc/lud/lud_diagonal", "aiwc/lud/lud_perimeter", "aiwc/lud/lud_internal"):
        points = get_measured(name).points
        assert {k: v["n"] for k, v in points.items()} == {"tiny": 80, "small": 240, "medium": 1440, "large": 4096}
        assert all(p["offset"] == 0 for p in points.values())
    # Amaris: -s 256, 512, ..., 8192; the first launch of each run in the data is lud_diagonal on grid 1 x 16
    # threads and lud_perimeter on grid N / 16 - 1 x 32 threads (e.g. 15 blocks at 256, 511 at 8192)
    diagonal, perimeter = get_measured("amaris/lud/lud_diagonal"), get_measured("amaris/lud/lud_perimeter")
    for spec in (diagonal, perimeter):
        assert sorted(spec.points, key=int) == [str(n) for n in range(256, 8193, 256)]
        assert all(p == {"n": int(label), "offset": 0} for label, p in spec.points.items())
    assert all(diagonal.work(p) == (16, 16) for p in diagonal.points.values())
    assert perimeter.work(perimeter.points["256"]) == (15 * 32, 32)
    assert perimeter.work(perimeter.points["8192"]) == (511 * 32, 32)
    # later launches of a run: the perimeter and the trailing matrix shrink by one tile per step
    assert perimeter.work({"n": 256, "offset": 224}) == (32, 32)
    assert get_measured("aiwc/lud/lud_internal").work({"n": 80, "offset": 16}) == (48 * 48, 256)


def test_offsets_outside_the_host_loop_are_refused():
    with pytest.raises(ValueError):
        get_measured("aiwc/lud/lud_perimeter").make_inputs({"n": 64, "offset": 48}, 0)  # the last tile: no perimeter
    with pytest.raises(ValueError):
        get_measured("aiwc/lud/lud_diagonal").make_inputs({"n": 64, "offset": 8}, 0)
    m, o = get_measured("aiwc/lud/lud_diagonal").make_inputs({"n": 64, "offset": 48}, 0)  # the final diagonal launch
    assert o == 48 and m.shape == (64, 64)
