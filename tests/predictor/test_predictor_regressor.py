"""InteractionSearchRegressor: the search finds planted models, estimator conventions, bad input."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from predictor import InteractionSearchRegressor, term_names


def planted(n=60, p=7, seed=0):
    """y = exp(0.4 + 0.5 f2 - 0.3 f5 + 0.2 f2*f5) exactly, 7 random features."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0.0, 2.0, (n, p)), columns=[f"f{j}" for j in range(p)])
    y = np.exp(0.4 + 0.5 * X["f2"] - 0.3 * X["f5"] + 0.2 * X["f2"] * X["f5"]).to_numpy()
    return X, y


def test_exhaustive_search_finds_planted_subset_and_predicts_exactly():
    X, y = planted()
    est = InteractionSearchRegressor(k=2, transform="log", n_splits=10, validation_size=10, random_state=0).fit(X, y)
    assert est.subset_ == ("f2", "f5")
    assert est.best_score_ < 1e-12
    assert len(est.scores_) == math.comb(7, 2)
    assert list(est.scores_.columns) == ["features", "score", "mean_error", "n_singular", "stage"]
    assert est.scores_["score"].is_monotonic_increasing
    assert est.terms_ == ["(intercept)", "f2", "f5", "f2*f5"]
    Xn = pd.DataFrame({"f2": [0.5, 1.5], "f5": [1.0, 0.2]})
    expect = np.exp(0.4 + 0.5 * Xn["f2"] - 0.3 * Xn["f5"] + 0.2 * Xn["f2"] * Xn["f5"])
    np.testing.assert_allclose(est.predict(Xn), expect, rtol=1e-10)
    # array input in training column order gives the same
    arr = np.zeros((2, 7))
    arr[:, 2], arr[:, 5] = Xn["f2"], Xn["f5"]
    np.testing.assert_allclose(est.predict(arr), expect, rtol=1e-10)


def test_coefficients_are_on_standardised_features():
    X, y = planted()
    est = InteractionSearchRegressor(k=2, transform="log", n_splits=5, validation_size=10, random_state=0).fit(X, y)
    m, s = est.mean_, est.scale_
    np.testing.assert_allclose(m, [X["f2"].mean(), X["f5"].mean()])
    np.testing.assert_allclose(s, [X["f2"].std(ddof=0), X["f5"].std(ddof=0)])
    # expand b0 + b1 z2 + b2 z5 + b3 z2 z5 back to raw x: the raw x2*x5 coefficient is b3 / (s2 s5) = 0.2
    assert est.coef_[3] / (s[0] * s[1]) == pytest.approx(0.2, rel=1e-9)


def test_two_stage_search_keeps_best_features():
    X, y = planted(p=9)
    est = InteractionSearchRegressor(k=2, transform="log", n_splits=5, validation_size=10, search="two-stage",
                                     sample_fraction=0.3, n_stage2_features=4, random_state=1).fit(X, y)
    n1 = math.ceil(0.3 * math.comb(9, 2))
    assert (est.scores_["stage"] == 1).sum() == n1
    assert len(est.stage2_features_) == 4
    # stage 2 covers every pair of the kept features (those not already scored in stage 1)
    kept = sorted(est.stage2_features_, key=lambda c: int(c[1:]))
    pairs = {(a, b) for i, a in enumerate(kept) for b in kept[i + 1:]}
    assert pairs <= set(est.scores_["features"])
    # the best sampled subsets contain f2 or f5, so both are kept and the exact planted pair is found
    assert {"f2", "f5"} <= set(est.stage2_features_)
    assert est.subset_ == ("f2", "f5") and est.best_score_ < 1e-12


def test_same_random_state_same_result_and_clone():
    X, y = planted(seed=4)
    y = y * np.exp(np.random.default_rng(9).normal(0, 0.1, len(y)))
    a = InteractionSearchRegressor(k=2, n_splits=6, validation_size=8, random_state=5).fit(X, y)
    b = clone(a).fit(X, y)
    pd.testing.assert_frame_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert clone(a).get_params() == a.get_params()


def test_relative_weighting_changes_the_fit_and_not_with_log():
    X, y = planted(seed=2)
    y = y * np.exp(np.random.default_rng(1).normal(0, 0.2, len(y)))
    a = InteractionSearchRegressor(k=2, n_splits=4, validation_size=8, random_state=0).fit(X, y)
    b = InteractionSearchRegressor(k=2, weighting="relative", n_splits=4, validation_size=8, random_state=0).fit(X, y)
    assert not np.allclose(a.scores_.sort_values("features")["score"], b.scores_.sort_values("features")["score"])
    with pytest.raises(ValueError, match="not defined with transform='log'"):
        InteractionSearchRegressor(transform="log", weighting="relative").fit(X, y)


def test_constant_and_duplicate_columns_are_left_out_with_a_warning():
    X, y = planted()
    X["const"] = 3.0
    X["dup"] = X["f2"]
    with pytest.warns(UserWarning, match="const \\(constant\\), dup \\(duplicate of f2\\)"):
        est = InteractionSearchRegressor(k=2, transform="log", n_splits=3, validation_size=10, random_state=0).fit(X, y)
    assert est.excluded_features_ == {"const": "constant", "dup": "duplicate of f2"}
    assert len(est.scores_) == math.comb(7, 2)
    assert est.n_features_in_ == 9


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda X, y: (X.assign(f1=np.r_[np.nan, X["f1"].to_numpy()[1:]]), y), "non-finite.*row 0, column 'f1'"),
        (lambda X, y: (X.assign(f3=np.r_[X["f3"].to_numpy()[:-1], np.inf]), y), "non-finite.*column 'f3'"),
        (lambda X, y: (X, np.r_[y[:-1], 0.0]), "target must be > 0"),
        (lambda X, y: (X, np.r_[y[:-1], np.nan]), "target has 1 non-finite"),
        (lambda X, y: (X, y[:-1]), "y has 59 values but X has 60 rows"),
        (lambda X, y: (X.assign(name="a"), y), "non-numeric feature columns: \\['name'\\]"),
        (lambda X, y: (X.iloc[:19], y[:19]), "too few points: 19 points with validation_size=12 leave 7"),
    ],
)
def test_bad_input_gives_clear_errors(mutate, match):
    X, y = planted()
    Xb, yb = mutate(X, y)
    with pytest.raises(ValueError, match=match):
        InteractionSearchRegressor(k=3, n_splits=2, random_state=0).fit(Xb, yb)


def test_bad_hyperparameters():
    X, y = planted()
    for kw, match in [({"transform": "exp"}, "transform must be"), ({"k": 0}, "k must be"),
                      ({"search": "greedy"}, "search must be"), ({"backend": "ray"}, "backend must be"),
                      ({"n_stage2_features": 1, "k": 2}, "n_stage2_features")]:
        with pytest.raises(ValueError, match=match):
            InteractionSearchRegressor(**kw).fit(X, y)


def test_all_singular_designs_raise():
    # two binary features: every 2-feature interaction model on points where one value is rare is singular
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": np.r_[np.ones(29), 0.0], "b": np.r_[np.zeros(29), 1.0]})
    y = np.exp(rng.standard_normal(30))
    with pytest.raises(ValueError, match="singular design on at least one validation split"):
        InteractionSearchRegressor(k=2, n_splits=20, validation_size=5, random_state=0).fit(X, y)


def test_predict_never_returns_nan():
    X, y = planted()
    est = InteractionSearchRegressor(k=2, transform="log", n_splits=3, validation_size=10, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="non-finite"):
        est.predict(pd.DataFrame({"f2": [np.nan], "f5": [1.0]}))
    with pytest.raises(ValueError, match="lacks the model's feature"):
        est.predict(pd.DataFrame({"f2": [1.0]}))
    with pytest.raises(ValueError, match="prediction overflow"):
        est.predict(pd.DataFrame({"f2": [1e6], "f5": [1e6]}))
    with pytest.raises(ValueError, match="expected \\(n, 7\\)"):
        est.predict(np.ones((1, 3)))


def test_sqrt_transform_maps_negative_to_zero():
    X, y = planted()
    est = InteractionSearchRegressor(k=2, transform="sqrt", n_splits=3, validation_size=10, random_state=0).fit(X, y)
    v = est.predict_transformed(X)
    np.testing.assert_allclose(est.predict(X), np.maximum(v, 0) ** 2)


def test_term_names():
    assert term_names(["a", "b", "c"]) == ["(intercept)", "a", "b", "a*b", "c", "a*c", "b*c", "a*b*c"]


def test_dask_backend_gives_identical_results():
    from dask.distributed import LocalCluster

    X, y = planted(p=8, seed=6)
    y = y * np.exp(np.random.default_rng(2).normal(0, 0.2, len(y)))
    kw = dict(k=3, transform="log", n_splits=7, validation_size=9, chunk_size=13, random_state=3)
    local = InteractionSearchRegressor(**kw).fit(X, y)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        dist = InteractionSearchRegressor(backend="dask", scheduler_address=cluster.scheduler_address, **kw).fit(X, y)
    pd.testing.assert_frame_equal(local.scores_, dist.scores_, check_exact=True)
    np.testing.assert_array_equal(local.coef_, dist.coef_)
    assert local.subset_ == dist.subset_


@pytest.mark.slow
def test_dask_backend_default_local_cluster_with_processes():
    X, y = planted(p=6, seed=7)
    kw = dict(k=2, transform="log", n_splits=5, validation_size=9, chunk_size=4, random_state=3)
    local = InteractionSearchRegressor(**kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist = InteractionSearchRegressor(backend="dask", **kw).fit(X, y)
    pd.testing.assert_frame_equal(local.scores_, dist.scores_, check_exact=True)


def test_both_engine_paths_choose_the_same_model(monkeypatch):
    from predictor import _search

    X, y = planted(n=40, p=6, seed=8)
    y = y * np.exp(np.random.default_rng(3).normal(0, 0.2, len(y)))
    kw = dict(k=4, transform="log", n_splits=100, validation_size=12, random_state=2)
    assert _search.use_hat_path(40, 4, 100, 12)
    a = InteractionSearchRegressor(**kw).fit(X, y)
    monkeypatch.setattr(_search, "use_hat_path", lambda *args: False)
    b = InteractionSearchRegressor(**kw).fit(X, y)
    assert a.subset_ == b.subset_
    pd.testing.assert_frame_equal(a.scores_, b.scores_, check_exact=False, rtol=1e-9)
