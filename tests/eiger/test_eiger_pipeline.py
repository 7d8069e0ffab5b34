"""Eiger pipeline: pool, adjusted R^2, Algorithm 1, PCA/varimax, clusters, validation helpers."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from predictor.eiger.synthesis import (
    EigerError,
    EigerRegressor,
    Term,
    adjusted_r2,
    candidate_terms,
    error_metrics,
    forward_stepwise,
    kfold_predict,
    leave_one_group_out_predict,
    varimax,
    varimax_criterion,
)


def test_adjusted_r2_worked_example():
    assert adjusted_r2(0.9, 11, 2) == pytest.approx(1 - 0.1 * 10 / 8, abs=1e-15)
    assert adjusted_r2(0.5, 3, 2) == -math.inf  # n - p - 1 = 0: undefined


def test_pool_terms_values_and_formulas():
    z = np.array([[4.0, 2.0]])
    want = {"inv2": 1 / 16, "inv": 0.25, "invsqrt": 0.5, "log2": 2.0, "sqrt": 2.0, "linear": 4.0, "square": 16.0}
    terms = candidate_terms(2)
    assert len(terms) == 7 * 2 + 1
    assert [t.function for t in terms[:7]] == list(want)
    for t in terms[:7]:
        assert t.components == (0,)
        assert t.evaluate(z)[0] == want[t.function]
    assert terms[-1] == Term("product", (0, 1))
    assert terms[-1].evaluate(z)[0] == 8.0
    assert [t.formula() for t in terms[:7]] == ["PC0^-2", "PC0^-1", "PC0^-1/2", "log2(PC0)", "PC0^1/2", "PC0",
                                               "PC0^2"]
    assert terms[-1].formula() == "PC0*PC1"
    assert len(candidate_terms(3, ["log2"], interactions=False)) == 3
    with pytest.raises(EigerError, match="unknown pool function 'cube'"):
        candidate_terms(2, ["cube"])


def test_stepwise_hand_checked_single_regressor():
    # x = 1..4, y = 1,2,3,5: Sxy = 6.5, Sxx = 5, Syy = 8.75 -> R^2 = 42.25/43.75, adjR^2 = 41.5/43.75
    F = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([1.0, 2.0, 3.0, 5.0])
    sel, adj, hist = forward_stepwise(F, y, threshold=0.01)
    assert sel == [0]
    assert adj == pytest.approx(41.5 / 43.75, abs=1e-13)
    assert hist == [adj]


def test_stepwise_stops_when_gain_below_threshold():
    x = np.arange(1.0, 11.0)
    F = np.column_stack([x ** 2, x, np.sin(x)])
    y = 2.0 + 3.0 * x  # exact in column 1
    sel, adj, _ = forward_stepwise(F, y, threshold=0.01)
    assert sel == [1]
    assert adj == pytest.approx(1.0, abs=1e-12)


def test_stepwise_degenerate_inputs():
    assert forward_stepwise(np.ones((5, 2)), np.arange(5.0), 0.01)[0] == []  # constant candidates
    assert forward_stepwise(np.random.default_rng(0).normal(size=(6, 2)), np.full(6, 3.0), 0.01)[0] == []
    F = np.column_stack([np.arange(6.0), 2 * np.arange(6.0)])  # collinear: only one can enter
    assert len(forward_stepwise(F, np.arange(6.0) ** 1.5, 0.0)[0]) == 1


def reference_stepwise(F, y, threshold):
    """Algorithm 1 verbatim: refit every candidate model by least squares."""
    m, q = F.shape
    final, pool = [], list(range(q))
    current = -math.inf
    tss = np.sum((y - y.mean()) ** 2)
    while True:
        maximum, new = -math.inf, None
        for f in pool:
            cols = final + [f]
            A = np.column_stack([np.ones(m)] + [F[:, c] for c in cols])
            if np.linalg.matrix_rank(A) < A.shape[1]:
                continue
            beta = np.linalg.lstsq(A, y, rcond=None)[0]
            rss = np.sum((y - A @ beta) ** 2)
            adj = adjusted_r2(1 - rss / tss, m, len(cols))
            if adj > maximum:
                maximum, new = adj, f
        if new is not None and maximum - current > threshold:
            final.append(new)
            pool.remove(new)
            current = maximum
        else:
            return final, current


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), m=st.integers(8, 40), q=st.integers(1, 8),
       threshold=st.sampled_from([0.001, 0.01, 0.05]))
def test_stepwise_matches_reference(seed, m, q, threshold):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(m, q))
    beta = rng.normal(size=q) * (rng.random(q) < 0.5)
    y = F @ beta + rng.normal(scale=0.5, size=m)
    sel, adj, _ = forward_stepwise(F, y, threshold)
    ref_sel, ref_adj = reference_stepwise(F, y, threshold)
    assert sel == ref_sel
    if sel:
        assert adj == pytest.approx(ref_adj, rel=1e-9, abs=1e-9)


def test_pca_matches_correlation_eigenvectors():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5)) @ rng.normal(size=(5, 5)) + rng.normal(size=5) * 10
    est = EigerRegressor(n_components=3).fit(X, rng.normal(size=200))
    w, v = np.linalg.eigh(np.corrcoef(X, rowvar=False))
    order = np.argsort(w)[::-1]
    np.testing.assert_allclose(est.explained_variance_, w[order][:3], rtol=1e-10)
    np.testing.assert_allclose(np.abs(est.components_), np.abs(v[:, order[:3]].T), atol=1e-10)
    for row in est.components_:  # sign convention: largest loading positive
        assert row[np.argmax(np.abs(row))] > 0
    np.testing.assert_allclose(est.explained_variance_ratio_.sum(), w[order][:3].sum() / 5, rtol=1e-12)


def test_varimax_recovers_simple_structure():
    L0 = np.array([[1.0, 0], [0.9, 0], [0.8, 0], [0, 1.0], [0, 0.9], [0, 0.8]])
    th = math.radians(30)
    rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    L = L0 @ rot
    R = varimax(L)
    np.testing.assert_allclose(R @ R.T, np.eye(2), atol=1e-12)
    got = np.abs(L @ R)
    if got[0, 0] < got[0, 1]:
        got = got[:, ::-1]
    np.testing.assert_allclose(got, L0, atol=1e-8)
    assert varimax_criterion(L @ R) > varimax_criterion(L)


def test_one_metric_exact_recovery_of_the_shifted_square():
    # one metric, one component: u = (x - mean)/std, z = u - min(u) + 1 = (x - min x)/std + 1
    x = np.array([3.0, 5.0, 6.0, 10.0, 11.0, 15.0, 20.0, 21.0])
    z = (x - x.min()) / x.std() + 1.0
    y = 3.0 + 2.0 * z ** 2
    est = EigerRegressor(n_components=1, threshold=0.01, interactions=False).fit(x[:, None], y)
    (mdl,) = est.models_
    assert [t.formula() for t in mdl.terms] == ["PC0^2"]
    assert mdl.intercept == pytest.approx(3.0, abs=1e-9)
    assert mdl.coefficients[0] == pytest.approx(2.0, abs=1e-12)
    assert mdl.adjusted_r2 == pytest.approx(1.0, abs=1e-12)
    xn = np.array([[4.0], [12.5]])
    zn = (xn[:, 0] - x.min()) / x.std() + 1.0
    np.testing.assert_allclose(est.predict(xn), 3.0 + 2.0 * zn ** 2, rtol=1e-12)
    # beyond the training range the score is clipped (default) ...
    assert est.predict([[100.0]])[0] == pytest.approx(est.predict([[21.0]])[0], rel=1e-12)
    # ... or extrapolated with clip_scores=False
    est2 = EigerRegressor(n_components=1, interactions=False, clip_scores=False, output_margin=None).fit(
        x[:, None], y)
    z100 = (100.0 - x.min()) / x.std() + 1.0
    assert est2.predict([[100.0]])[0] == pytest.approx(3.0 + 2.0 * z100 ** 2, rel=1e-9)
    # with the default output_margin=0.5 the extrapolated output stops at max + 0.5 * (max - min)
    est3 = EigerRegressor(n_components=1, interactions=False, clip_scores=False).fit(x[:, None], y)
    assert est3.models_[0].upper == pytest.approx(y.max() + 0.5 * (y.max() - y.min()), rel=1e-15)
    assert est3.predict([[100.0]])[0] == pytest.approx(y.max() + 0.5 * (y.max() - y.min()), rel=1e-12)


def test_two_clusters_two_laws_nearest_centroid():
    rng = np.random.default_rng(3)
    a = np.column_stack([rng.uniform(0, 10, 60), rng.normal(0, 0.3, 60)])
    b = np.column_stack([rng.uniform(0, 10, 60), rng.normal(50, 0.3, 60)])
    X = np.vstack([a, b])
    y = np.concatenate([1 + 2 * a[:, 0] + 0.5 * a[:, 1], 40 - 3 * b[:, 0] + 0.5 * b[:, 1]])
    est = EigerRegressor(n_clusters=2, pool=["linear"], interactions=False, threshold=1e-6).fit(X, y)
    assert sorted(np.bincount(est.labels_).tolist()) == [60, 60]
    assert len(set(est.labels_[:60])) == 1 and len(set(est.labels_[60:])) == 1
    np.testing.assert_allclose(est.predict(X), y, atol=1e-8)
    one = EigerRegressor(n_clusters=1, pool=["linear"], interactions=False).fit(X, y)
    assert np.max(np.abs(one.predict(X) - y)) > 1.0  # one linear law cannot fit both
    new = np.array([[5.0, 0.0], [5.0, 50.0]])
    np.testing.assert_allclose(est.predict(new), [11.0, 25.0 + 25.0], atol=1e-8)
    np.testing.assert_array_equal(est.predict_cluster(new), [est.labels_[0], est.labels_[60]])


def test_log2_target_and_slog_inputs():
    rng = np.random.default_rng(5)
    x = rng.uniform(1, 1000, 80)
    y = 7.0 * x ** 1.0
    est = EigerRegressor(n_components=1, target_transform="log2", input_transform="slog",
                         pool=["linear"], interactions=False).fit(x[:, None], y)
    # log2 y = log2 7 + log2 x, nearly linear in ln(1+x) for large x; check the exact pipeline arithmetic
    u = (np.log1p(x) - np.log1p(x).mean()) / np.log1p(x).std()
    z = u - u.min() + 1
    A = np.column_stack([np.ones_like(z), z])
    beta = np.linalg.lstsq(A, np.log2(y), rcond=None)[0]
    np.testing.assert_allclose(est.predict(x[:5, None]), 2.0 ** (A[:5] @ beta), rtol=1e-10)


def test_estimator_conventions_and_errors():
    est = EigerRegressor(n_components=2, n_clusters=3, threshold=0.05, random_state=7)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(EigerError, match="not fitted"):
        est.predict(np.zeros((1, 2)))
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(EigerError, match="n_components must be between 1 and 3"):
        EigerRegressor(n_components=4).fit(X, np.arange(20.0))
    with pytest.raises(EigerError, match="n_clusters must be between 1 and 20"):
        EigerRegressor(n_clusters=21).fit(X, np.arange(20.0))
    Xn = X.copy()
    Xn[4, 2] = np.nan
    with pytest.raises(EigerError, match="row 4, column 2"):
        EigerRegressor().fit(Xn, np.arange(20.0))
    with pytest.raises(EigerError, match="positive results"):
        EigerRegressor(target_transform="log2").fit(X, np.arange(20.0))
    with pytest.raises(EigerError, match="input_transform"):
        EigerRegressor(input_transform="log").fit(X, np.arange(20.0))
    fitted = EigerRegressor(n_clusters=2, random_state=1).fit(X, np.arange(20.0))
    again = EigerRegressor(n_clusters=2, random_state=1).fit(X, np.arange(20.0))
    np.testing.assert_array_equal(fitted.predict(X), again.predict(X))
    with pytest.raises(EigerError, match="X has 2 metrics, the model expects 3"):
        fitted.predict(np.zeros((1, 2)))


def test_error_metrics_worked_example():
    e = error_metrics([100.0, 200.0], [110.0, 180.0])
    assert e["mse"] == 250.0
    assert e["mape"] == pytest.approx(10.0, abs=1e-12)
    assert e["median_ape"] == pytest.approx(10.0, abs=1e-12)
    assert e["mse_log10"] == pytest.approx((math.log10(1.1) ** 2 + math.log10(0.9) ** 2) / 2, rel=1e-12)
    assert math.isnan(error_metrics([1.0, 2.0], [-1.0, 2.0])["mse_log10"])


def test_kfold_exact_law_and_logo_matches_explicit_refits():
    rng = np.random.default_rng(11)
    X = rng.uniform(0, 5, size=(30, 2))
    y = 4.0 + 1.5 * X[:, 0] - 2.0 * X[:, 1]
    lin = EigerRegressor(pool=["linear"], interactions=False, clip_scores=False, output_margin=None,
                         threshold=1e-9)
    np.testing.assert_allclose(kfold_predict(lin, X, y, n_splits=5), y, atol=1e-9)
    groups = np.repeat(["a", "b", "c"], 10)
    y2 = y + np.where(groups == "b", 10.0 * X[:, 0] ** 2, 0.0)
    est = EigerRegressor(n_components=2, threshold=0.01)
    pred = leave_one_group_out_predict(est, X, y2, groups)
    for g in "abc":
        ref = clone(est).fit(X[groups != g], y2[groups != g]).predict(X[groups == g])
        np.testing.assert_array_equal(pred[groups == g], ref)
    with pytest.raises(EigerError, match="at least 2 groups"):
        leave_one_group_out_predict(est, X, y2, np.zeros(30))
    with pytest.raises(EigerError, match="n_splits"):
        kfold_predict(est, X, y, n_splits=1)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(3, 8), p=st.integers(2, 4),
       angle=st.floats(-0.05, 0.05).filter(lambda a: abs(a) > 1e-4))
def test_varimax_is_a_local_maximum(seed, n, p, angle):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, p))
    R = varimax(L)
    np.testing.assert_allclose(R.T @ R, np.eye(p), atol=1e-10)
    best = varimax_criterion(L @ R)
    assert best >= varimax_criterion(L) - 1e-12
    # any small plane rotation of the result does not raise the criterion
    i, j = rng.choice(p, size=2, replace=False)
    G = np.eye(p)
    G[i, i] = G[j, j] = math.cos(angle)
    G[i, j], G[j, i] = -math.sin(angle), math.sin(angle)
    assert varimax_criterion(L @ R @ G) <= best + 1e-9


def slow_predict(est, X):
    """Row-by-row prediction straight from the fitted attributes (the definition, no vectorisation)."""
    out = []
    for row in np.asarray(X, dtype=float):
        v = np.sign(row) * np.log1p(np.abs(row)) if est.input_transform == "slog" else row
        u = [sum(est.components_[j][i] * (v[i] - est.mean_[i]) / est.scale_[i] for i in range(len(v)))
             for j in range(est.n_components_)]
        d = [sum((u[j] - c[j]) ** 2 for j in range(len(u))) for c in est.cluster_centers_]
        mdl = est.models_[int(np.argmin(d))]
        z = []
        for j, uj in enumerate(u):
            if est.clip_scores:
                uj = min(max(uj, est.score_min_[j]), est.score_max_[j])
            z.append(max(uj + est.offset_[j], est.domain_floor))
        y = mdl.intercept + sum(b * t.evaluate(np.array([z]))[0] for b, t in zip(mdl.coefficients, mdl.terms))
        y = min(max(y, mdl.lower), mdl.upper)
        out.append(2.0 ** y if est.target_transform == "log2" else y)
    return np.array(out)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), m=st.integers(20, 60), n=st.integers(2, 5), k=st.integers(1, 3),
       slog_in=st.booleans(), log_out=st.booleans(), rot=st.sampled_from([None, "varimax"]),
       clip=st.booleans())
def test_predict_matches_row_by_row_definition(seed, m, n, k, slog_in, log_out, rot, clip):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(0, 1.5, size=(m, n)) * rng.choice([-1, 1], size=n)
    y = np.exp(0.3 * np.log(np.abs(X[:, 0]) + 1) + rng.normal(0, 0.2, m))
    est = EigerRegressor(n_components=min(n, 3), n_clusters=k, rotation=rot, threshold=0.01,
                         input_transform="slog" if slog_in else "none",
                         target_transform="log2" if log_out else "none", clip_scores=clip).fit(X, y)
    probe = np.vstack([X, X[:5] * 4.0, X[:3] * -2.0])
    np.testing.assert_allclose(est.predict(probe), slow_predict(est, probe), rtol=1e-9, atol=1e-12)
