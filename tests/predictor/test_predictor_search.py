"""The batched least-squares engine against a slow, obviously correct reference (np.linalg.lstsq per fit)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predictor import _search
from predictor.interaction import random_splits, term_masks


def reference_scores(X, y, subsets, test_idx, transform, weighted):
    """One explicit design and one lstsq per (subset, split): the definition of Sec. 3.3."""
    n = X.shape[0]
    yf = {"none": y, "log": np.log(y), "sqrt": np.sqrt(y)}[transform]
    w = 1.0 / yf**2 if weighted else np.ones(n)
    hm, am = [], []
    for sub in subsets:
        Z = np.column_stack([np.prod(X[:, [sub[j] for j in pos]], axis=1) if pos else np.ones(n)
                             for pos in term_masks(len(sub))])
        errs = []
        for test in test_idx:
            train = np.setdiff1d(np.arange(n), test)
            sw = np.sqrt(w[train])
            beta = np.linalg.lstsq(Z[train] * sw[:, None], yf[train] * sw, rcond=None)[0]
            v = Z[test] @ beta
            pred = {"none": v, "log": np.exp(v), "sqrt": np.maximum(v, 0) ** 2}[transform]
            errs.append(np.mean(np.abs(pred - y[test]) / y[test]))
        errs = np.array(errs)
        hm.append(len(errs) / np.sum(1 / errs))
        am.append(errs.mean())
    return np.array(hm), np.array(am)


def test_worked_example_by_hand():
    # x = 0,1,2,3 and y = 1,2,3,5, model y = b0 + b1 x.
    # split A tests point 3: fit on (0,1),(1,2),(2,3) is y = 1 + x, predicts 4 for y = 5: error 0.2.
    # split B tests point 0: fit on (1,2),(2,3),(3,5) has slope 3/2, intercept 1/3; predicts 1/3 for y = 1:
    # error 2/3. Harmonic mean 2 / (1/0.2 + 1/(2/3)) = 2/6.5; arithmetic mean (0.2 + 2/3) / 2.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1.0, 2.0, 3.0, 5.0])
    test = np.array([[3], [0]], dtype=np.int64)
    h, a, ns = _search.score_subsets(X, y, y, np.ones(4), np.array([[0]], dtype=np.int64), test, 0, 1e-10)
    assert h[0] == pytest.approx(2 / 6.5, rel=1e-12)
    assert a[0] == pytest.approx((0.2 + 2 / 3) / 2, rel=1e-12)
    assert ns[0] == 0


def test_interaction_design_columns():
    X = np.array([[2.0, 3.0, 5.0], [7.0, 11.0, 13.0]])
    Z = _search.design_matrix(X, np.array([0, 2], dtype=np.int64))
    # terms: 1, a, c, a*c
    np.testing.assert_array_equal(Z, [[1, 2, 5, 10], [1, 7, 13, 91]])
    Z3 = _search.design_matrix(X, np.array([0, 1, 2], dtype=np.int64))
    np.testing.assert_array_equal(Z3[0], [1, 2, 3, 6, 5, 10, 15, 30])


def test_exact_model_scores_zero_and_refit_recovers_coefficients():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 5))
    beta = np.array([0.5, 0.3, -0.2, 0.1])  # 1, x1, x3, x1*x3
    y = np.exp(beta[0] + beta[1] * X[:, 1] + beta[2] * X[:, 3] + beta[3] * X[:, 1] * X[:, 3])
    test = random_splits(40, 8, 5, 0)
    subs = np.array(list(itertools.combinations(range(5), 2)), dtype=np.int64)
    h, a, ns = _search.score_subsets(X, np.log(y), y, np.ones(40), subs, test, 1, 1e-10)
    best = subs[np.argmin(h)]
    assert tuple(best) == (1, 3)
    assert h.min() < 1e-12
    ok, coef = _search.fit_subset(X, np.log(y), np.ones(40), best, 1e-10)
    assert ok
    np.testing.assert_allclose(coef, beta, atol=1e-12)


@pytest.mark.parametrize("hat", [False, True])
def test_singular_split_scores_inf(hat):
    # feature 1 is zero except on points 8 and 9. A split testing point 9 leaves x1 non-zero on point 8
    # only, so x1 and x0*x1 are proportional: singular. A split keeping both is regular.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 2))
    X[:, 1] = 0.0
    X[8, 1] = 1.0
    X[9, 1] = 2.0
    y = np.exp(rng.standard_normal(10))
    test = np.array([[9, 0], [1, 2]], dtype=np.int64)
    h, a, ns = _search.score_subsets(X, y, y, np.ones(10), np.array([[0, 1]], dtype=np.int64),
                                      test, 0, 1e-10, hat)
    assert ns[0] == 1 and np.isinf(h[0]) and np.isinf(a[0])


@pytest.mark.parametrize("hat", [False, True])
def test_serial_and_parallel_kernels_agree_bitwise(hat):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 7))
    y = np.exp(rng.standard_normal(30))
    subs = np.array(list(itertools.combinations(range(7), 3)), dtype=np.int64)
    test = random_splits(30, 6, 7, 2)
    r1 = _search.score_subsets(X, np.log(y), y, np.ones(30), subs, test, 1, 1e-10, hat)
    r2 = _search.score_subsets_serial(X, np.log(y), y, np.ones(30), subs, test, 1, 1e-10, hat)
    for u, v in zip(r1, r2):
        np.testing.assert_array_equal(u, v)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(18, 40),
    p=st.integers(2, 5),
    k=st.integers(1, 3),
    n_test=st.integers(1, 6),
    transform=st.sampled_from(["none", "log", "sqrt"]),
    weighted=st.booleans(),
    hat=st.booleans(),
)
def test_batched_engine_matches_reference(seed, n, p, k, n_test, transform, weighted, hat):
    k = min(k, p)
    if transform == "log":
        weighted = False
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.exp(0.5 * X[:, 0] + 0.3 * rng.standard_normal(n)) + 0.5
    subs = np.array(list(itertools.combinations(range(p), k)), dtype=np.int64)
    test = random_splits(n, n_test, 4, seed)
    yf = {"none": y, "log": np.log(y), "sqrt": np.sqrt(y)}[transform]
    w = 1.0 / yf**2 if weighted else np.ones(n)
    code = _search.TRANSFORM_CODES[transform]
    h, a, ns = _search.score_subsets(X, yf, y, w, subs, test, code, 1e-12, hat)
    rh, ra = reference_scores(X, y, subs, test, transform, weighted)
    assert (ns == 0).all()
    np.testing.assert_allclose(h, rh, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(a, ra, rtol=1e-6, atol=1e-12)


def test_all_data_singular_makes_every_split_singular_on_the_hat_path():
    X = np.column_stack([np.arange(12.0), 2 * np.arange(12.0)])  # x1 = 2 x0: the design is singular
    y = np.arange(1.0, 13.0)
    test = random_splits(12, 3, 4, 0)
    h, a, ns = _search.score_subsets(X, y, y, np.ones(12), np.array([[0, 1]], dtype=np.int64), test, 0, 1e-10, True)
    assert ns[0] == 4 and np.isinf(h[0])


def test_path_choice_rule():
    # the downdate path for small designs and few splits, the leave-group-out path for 2**k large
    assert not _search.use_hat_path(92, 4, 10, 12)
    assert _search.use_hat_path(104, 4, 100, 12)
    assert _search.use_hat_path(104, 5, 100, 12)
