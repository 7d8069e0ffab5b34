"""Baselines of Table 2: exact recovery on noise-free data, weighting, LASSO, expansions."""

import numpy as np
import pandas as pd
import pytest

from predictor import LinearBaseline, paper_baselines


def data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0, 1, (n, 3)), columns=["a", "b", "c"])
    return X, rng


def test_ols_recovers_linear_model_exactly():
    X, _ = data()
    y = 2.0 + 3.0 * X["a"] - 1.0 * X["c"]
    m = LinearBaseline("ols").fit(X, y)
    Xn = pd.DataFrame({"a": [0.1, 0.9], "b": [5.0, -2.0], "c": [0.3, 0.0]})
    np.testing.assert_allclose(m.predict(Xn), [2.0 + 0.3 - 0.3, 2.0 + 2.7], rtol=1e-10)


def test_ols_log_and_poly2():
    X, _ = data()
    y = np.exp(0.5 + X["a"] * X["b"] - 0.5 * X["c"] ** 2)
    m = LinearBaseline("ols", expansion="poly2", transform="log").fit(X, y)
    assert m.coef_.shape == (9,)  # 3 linear, 3 pairwise products, 3 squares
    np.testing.assert_allclose(m.predict(X), y, rtol=1e-9)
    lin = LinearBaseline("ols", transform="log").fit(X, y)
    assert np.max(np.abs(lin.predict(X) / y - 1)) > 1e-3  # the linear model cannot represent the product


def test_wls_matches_weighted_normal_equations():
    X, rng = data(seed=1)
    y = np.exp(rng.normal(0, 1, 40))
    m = LinearBaseline("wls").fit(X, y)
    Z = np.column_stack([np.ones(40), (X - X.mean()) / X.std(ddof=0)])
    W = np.diag(1 / y**2)
    beta = np.linalg.solve(Z.T @ W @ Z, Z.T @ W @ y)
    np.testing.assert_allclose(np.r_[m.intercept_, m.coef_], beta, rtol=1e-8)
    with pytest.raises(ValueError, match="not defined with transform='log'"):
        LinearBaseline("wls", transform="log").fit(X, y)


def test_lasso_selects_the_informative_feature():
    X, rng = data(n=80, seed=2)
    y = np.exp(1.0 + 2.0 * X["b"] + rng.normal(0, 0.01, 80))
    m = LinearBaseline("lasso", transform="log", random_state=0).fit(X, y)
    assert m.lasso_alpha_ > 0
    assert np.argmax(np.abs(m.coef_)) == 1
    assert abs(m.coef_[1]) > 10 * max(abs(m.coef_[0]), abs(m.coef_[2]))


def test_constant_columns_dropped_and_bad_params():
    X, rng = data()
    X["k"] = 1.0
    y = np.exp(rng.normal(0, 1, 40))
    m = LinearBaseline("ols").fit(X, y)
    assert m.columns_ == ["a", "b", "c"]
    with pytest.raises(ValueError, match="method must be"):
        LinearBaseline("ridge").fit(X, y)
    with pytest.raises(ValueError, match="lacks feature column"):
        m.predict(X[["a"]])


def test_paper_baselines_grid():
    labels = list(paper_baselines(0))
    assert len(labels) == 10
    assert "WLS poly2 speedup" in labels and "LASSO linear log speedup" in labels
    assert not any(lbl.startswith("WLS") and "log" in lbl for lbl in labels)
