"""The baselines XAPP compares against (Table 2 and Sec. 5.1 of the paper).

``LinearBaseline`` fits one of

* ``method="ols"``: least squares on all (expanded) features, minimum-norm solution when the design is
  rank deficient (e.g. more expanded features than points);
* ``method="wls"``: weighted least squares with weights ``1 / y**2`` (relative error; ``transform="none"``
  or ``"sqrt"`` only, see :func:`predictor.interaction.relative_weights`);
* ``method="lasso"``: LASSO fitted by least angle regression (the procedure Sec. 2.2 of the paper
  describes), regularisation chosen by K-fold cross-validation (scikit-learn's ``LassoLarsCV``),

on ``expansion="linear"`` (the standardised features) or ``expansion="poly2"`` (the standardised
features, all pairwise interactions and all squares: the paper's "interactions and second-order terms"),
with the response untransformed, log or sqrt.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LassoLarsCV
from sklearn.model_selection import KFold
from sklearn.preprocessing import PolynomialFeatures
from sklearn.utils.validation import check_is_fitted

from ._validation import as_feature_frame, check_finite, check_target, screen_columns
from .interaction import TRANSFORMS, inverse_transform, relative_weights, transform_response

METHODS = ("ols", "wls", "lasso")
EXPANSIONS = ("linear", "poly2")

#: Predictions on the log scale are clipped to this magnitude before ``exp`` so that a wildly
#: extrapolating baseline yields a huge but finite error instead of ``inf``.
LOG_CLIP = 700.0


class LinearBaseline(RegressorMixin, BaseEstimator):
    """Least squares, weighted least squares or LASSO-CV on all features, optionally expanded.

    Parameters
    ----------
    method : {"ols", "wls", "lasso"}, default "ols"
    expansion : {"linear", "poly2"}, default "linear"
    transform : {"none", "log", "sqrt"}, default "none"
    cv : int, default 5
        Folds of the LASSO cross-validation.
    max_iter : int, default 500
        Maximum LARS steps of the LASSO path (convergence warnings are silenced; see ``lasso_alpha_``).
    random_state : int or None
        Shuffles the LASSO folds.

    Attributes
    ----------
    columns_ : list of str
        Input columns used (constant and duplicate columns dropped).
    coef_ : ndarray
        Coefficients on the standardised expanded features.
    intercept_ : float
    n_nonzero_ : int
        Number of non-zero coefficients (LASSO's selected features).
    lasso_alpha_ : float or None
    """

    def __init__(self, method="ols", expansion="linear", transform="none", cv=5, max_iter=500, random_state=None):
        self.method = method
        self.expansion = expansion
        self.transform = transform
        self.cv = cv
        self.max_iter = max_iter
        self.random_state = random_state

    def _expand(self, M: np.ndarray) -> np.ndarray:
        Z = (M - self.x_mean_) / self.x_scale_
        if self.expansion == "poly2":
            Z = self.poly_.transform(Z)
            Z = (Z - self.e_mean_) / self.e_scale_
        return Z

    def fit(self, X, y):
        """Fit on features ``X`` (DataFrame or array) and speedups ``y`` (> 0).

        Parameters
        ----------
        X : DataFrame or array of shape (n, p)
        y : array-like of shape (n,)

        Returns
        -------
        self
        """
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.expansion not in EXPANSIONS:
            raise ValueError(f"expansion must be one of {EXPANSIONS}, got {self.expansion!r}")
        if self.transform not in TRANSFORMS:
            raise ValueError(f"transform must be one of {TRANSFORMS}, got {self.transform!r}")
        df = as_feature_frame(X)
        check_finite(df, "X")
        yv = check_target(y, len(df))
        self.columns_, _ = screen_columns(df)
        if not self.columns_:
            raise ValueError("no usable (non-constant) feature columns")
        M = df[self.columns_].to_numpy(np.float64)
        self.x_mean_ = M.mean(axis=0)
        self.x_scale_ = M.std(axis=0)
        if self.expansion == "poly2":
            self.poly_ = PolynomialFeatures(degree=2, include_bias=False).fit((M - self.x_mean_) / self.x_scale_)
            E = self.poly_.transform((M - self.x_mean_) / self.x_scale_)
            self.e_mean_ = E.mean(axis=0)
            sd = E.std(axis=0)
            self.e_scale_ = np.where(sd > 0, sd, 1.0)
        Z = self._expand(M)
        yt = transform_response(yv, self.transform)
        self.lasso_alpha_ = None
        if self.method == "lasso":
            folds = KFold(n_splits=int(self.cv), shuffle=True, random_state=self.random_state)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                model = LassoLarsCV(cv=folds, max_iter=int(self.max_iter)).fit(Z, yt)
            self.coef_ = model.coef_.astype(np.float64)
            self.intercept_ = float(model.intercept_)
            self.lasso_alpha_ = float(model.alpha_)
        else:
            w = np.ones_like(yt) if self.method == "ols" else relative_weights(yt, "relative", self.transform)
            sw = np.sqrt(w)
            D = np.column_stack([np.ones(len(Z)), Z]) * sw[:, None]
            beta, *_ = np.linalg.lstsq(D, yt * sw, rcond=None)
            self.intercept_ = float(beta[0])
            self.coef_ = beta[1:]
        self.n_nonzero_ = int(np.count_nonzero(self.coef_))
        self.n_features_in_ = df.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted speedups (log predictions clipped to ``LOG_CLIP`` before ``exp``).

        Parameters
        ----------
        X : DataFrame with the training columns, or array in training column order.

        Returns
        -------
        numpy.ndarray
        """
        check_is_fitted(self, "coef_")
        df = as_feature_frame(X)
        missing = [c for c in self.columns_ if c not in df.columns]
        if missing:
            raise ValueError(f"input lacks feature column(s) {missing}")
        check_finite(df[self.columns_], "X")
        v = self._expand(df[self.columns_].to_numpy(np.float64)) @ self.coef_ + self.intercept_
        if self.transform == "log":
            v = np.clip(v, -LOG_CLIP, LOG_CLIP)
        return inverse_transform(v, self.transform)


def paper_baselines(random_state=None) -> dict[str, LinearBaseline]:
    """The baseline grid of Table 2 / Sec. 5.1, keyed by a short label.

    OLS and LASSO on speedup and on log speedup, WLS on speedup (its 1/y^2 weights are the relative error
    of the speedup; on log speedup they are undefined), each with linear features and with pairwise
    interactions plus squares (``poly2``).

    Parameters
    ----------
    random_state : int or None
        Passed to the LASSO folds.

    Returns
    -------
    dict of str -> LinearBaseline
    """
    out: dict[str, LinearBaseline] = {}
    for expansion in EXPANSIONS:
        for method, transforms in (("ols", ("none", "log")), ("wls", ("none",)), ("lasso", ("none", "log"))):
            for tr in transforms:
                label = f"{method.upper()} {expansion} {'speedup' if tr == 'none' else 'log speedup'}"
                out[label] = LinearBaseline(method=method, expansion=expansion, transform=tr, random_state=random_state)
    return out
