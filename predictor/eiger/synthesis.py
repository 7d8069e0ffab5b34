"""The Eiger modelling pipeline (Kerr et al., papers/001, Sec. II).

Trials ``X`` (m x n metrics) and results ``y`` go through:

1. an optional element-wise input transform (``"slog"``: sign(x) * ln(1 + |x|), for counts that span
   orders of magnitude);
2. standardisation (zero mean, unit variance: PCA of the correlation matrix, as in the paper);
3. principal component analysis by SVD, keeping ``n_components`` components, optionally followed by a
   varimax rotation of the retained loadings;
4. k-means partitioning of the projected trials (squared Euclidean distance);
5. per cluster, forward-stepwise selection (Algorithm 1) over the model pool of Table I applied to the
   components: x^-2, x^-1, x^-1/2, log2 x, x^1/2, x, x^2 of every component and x_i * x_j of every pair,
   each candidate kept only if it raises the adjusted R^2 by more than ``threshold``;
6. prediction of a trial by the model of the cluster whose centroid is nearest.

The pool functions need positive arguments; principal component scores are not. Every function of the
pool therefore reads the *shifted* score ``z_j = max(u_j + offset_j, domain_floor)`` where
``offset_j = 1 - min(u_j over the training trials)``: training scores map onto [1, ...), and scores of new
trials that fall below the training range are clamped at ``domain_floor`` (0.5 by default). With
``clip_scores=True`` (the default) scores of new trials are first clipped to the range seen in training, so
that no pool function (x^2, x^-2, ...) is extrapolated beyond the data it was fitted on. The box of
clipped scores still holds corners no training trial is near, where terms that cancel on the data can
add up; with ``output_margin`` set (0.5 by default) each cluster model's output (in the fitted, possibly
log2, space) is clamped to its training targets' range widened by ``output_margin`` times that range on
each side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

#: Unary functions of Table I, by name, in the paper's order.
UNARY_FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "inv2": lambda z: 1.0 / (z * z),
    "inv": lambda z: 1.0 / z,
    "invsqrt": lambda z: 1.0 / np.sqrt(z),
    "log2": np.log2,
    "sqrt": np.sqrt,
    "linear": lambda z: z,
    "square": lambda z: z * z,
}
#: Human-readable formula of each unary function, ``{x}`` standing for the argument.
UNARY_FORMULAS = {
    "inv2": "{x}^-2",
    "inv": "{x}^-1",
    "invsqrt": "{x}^-1/2",
    "log2": "log2({x})",
    "sqrt": "{x}^1/2",
    "linear": "{x}",
    "square": "{x}^2",
}
DEFAULT_POOL = tuple(UNARY_FUNCTIONS)
INPUT_TRANSFORMS = ("none", "slog")
TARGET_TRANSFORMS = ("none", "log2")


class EigerError(ValueError):
    """Invalid input or hyper-parameter for the Eiger pipeline."""


@dataclass(frozen=True)
class Term:
    """One basis function of a model: ``function`` of component ``components[0]`` or, for
    ``function == "product"``, the product of two components ``components[0] * components[1]``."""

    function: str
    components: tuple[int, ...]

    def evaluate(self, z: np.ndarray) -> np.ndarray:
        """Value of the term for shifted scores ``z`` (trials x components)."""
        if self.function == "product":
            i, j = self.components
            return z[:, i] * z[:, j]
        return UNARY_FUNCTIONS[self.function](z[:, self.components[0]])

    def formula(self, names: Sequence[str] | None = None) -> str:
        """Readable formula, e.g. ``log2(PC0)`` or ``PC2*PC3``."""
        nm = [names[c] if names else f"PC{c}" for c in self.components]
        if self.function == "product":
            return f"{nm[0]}*{nm[1]}"
        return UNARY_FORMULAS[self.function].format(x=nm[0])

    def to_dict(self) -> dict:
        return {"function": self.function, "components": list(self.components)}


@dataclass
class ClusterModel:
    """Linear model of one cluster: ``intercept + sum(coefficients[k] * terms[k](z))``."""

    terms: list[Term]
    intercept: float
    coefficients: np.ndarray
    adjusted_r2: float
    r2: float
    n_train: int
    history: list[float] = field(default_factory=list)
    lower: float = -math.inf
    upper: float = math.inf

    def predict_z(self, z: np.ndarray) -> np.ndarray:
        out = np.full(z.shape[0], self.intercept, dtype=float)
        for coef, term in zip(self.coefficients, self.terms):
            out += coef * term.evaluate(z)
        return np.clip(out, self.lower, self.upper)


def candidate_terms(n_components: int, pool: Iterable[str] = DEFAULT_POOL, interactions: bool = True
                    ) -> list[Term]:
    """All terms of the model pool for ``n_components`` components.

    Parameters
    ----------
    n_components : number of retained components.
    pool : names of the unary functions to use (keys of :data:`UNARY_FUNCTIONS`).
    interactions : include the pairwise products x_i * x_j (i < j).

    Returns
    -------
    list of :class:`Term`, unary terms component by component, then the products.
    """
    pool = list(pool)
    for name in pool:
        if name not in UNARY_FUNCTIONS:
            raise EigerError(f"unknown pool function {name!r}; expected one of {sorted(UNARY_FUNCTIONS)}")
    terms = [Term(f, (j,)) for j in range(n_components) for f in pool]
    if interactions:
        terms += [Term("product", (i, j)) for i in range(n_components) for j in range(i + 1, n_components)]
    return terms


def adjusted_r2(r2: float, n: int, p: int) -> float:
    """Adjusted coefficient of determination, Eq. (3): ``1 - (1 - R^2) (n - 1) / (n - p - 1)``.

    Parameters
    ----------
    r2 : coefficient of determination of the fit.
    n : number of samples.
    p : number of regressors, not counting the intercept.

    Returns
    -------
    float; ``-inf`` when ``n - p - 1 <= 0`` (the adjustment is undefined).
    """
    if n - p - 1 <= 0:
        return -math.inf
    return 1.0 - (1.0 - r2) * (n - 1) / (n - p - 1)


def forward_stepwise(F: np.ndarray, y: np.ndarray, threshold: float, max_terms: int | None = None,
                     collinear_tol: float = 1e-10) -> tuple[list[int], float, list[float]]:
    """Forward-stepwise selection by adjusted R^2 (Algorithm 1 of the paper).

    Every model has an intercept. At each step the candidate column of ``F`` whose addition gives the
    largest adjusted R^2 is found; it is added when that adjusted R^2 exceeds the current one by more than
    ``threshold`` (the empty model's adjusted R^2 is -inf, so the first usable candidate is always added).
    The residual sum of squares of every candidate is computed at once by Gram-Schmidt: the candidates are
    kept orthogonal to the selected columns, and adding column c lowers the RSS by (r.c)^2 / |c|^2.

    Parameters
    ----------
    F : (m, q) candidate columns (the model pool evaluated on the trials).
    y : (m,) results.
    threshold : minimal gain of adjusted R^2 for a candidate to be added.
    max_terms : stop after this many terms (None: no limit but the sample count).
    collinear_tol : a candidate whose part orthogonal to the current model has squared norm below
        ``collinear_tol`` times its centred squared norm adds nothing and is skipped.

    Returns
    -------
    (selected column indices in order of addition, final adjusted R^2, adjusted R^2 after each addition)
    """
    F = np.asarray(F, dtype=float)
    y = np.asarray(y, dtype=float)
    m, q = F.shape
    selected: list[int] = []
    history: list[float] = []
    if m < 3:
        return selected, -math.inf, history
    tss = float(np.sum((y - y.mean()) ** 2))
    if tss <= 0.0 or not np.isfinite(tss):
        return selected, -math.inf, history
    usable = np.all(np.isfinite(F), axis=0)
    C = np.where(usable, F, 0.0) - np.where(usable, F, 0.0).mean(axis=0)  # orthogonal to the intercept
    base_norm = np.einsum("ij,ij->j", C, C)
    usable &= base_norm > 0.0
    r = y - y.mean()
    rss = tss
    current = -math.inf
    limit = m - 2 if max_terms is None else min(max_terms, m - 2)
    while len(selected) < limit:
        norms = np.einsum("ij,ij->j", C, C)
        ok = usable & (norms > collinear_tol * np.maximum(base_norm, 1e-300))
        if not ok.any():
            break
        dots = r @ C
        gain = np.zeros(q)
        gain[ok] = dots[ok] ** 2 / norms[ok]
        k = len(selected) + 1
        if m - k - 1 <= 0:
            break
        new_rss = np.maximum(rss - gain, 0.0)
        adj = np.full(q, -np.inf)
        adj[ok] = 1.0 - (new_rss[ok] / (m - k - 1)) / (tss / (m - 1))
        best = int(np.argmax(adj))
        maximum = float(adj[best])
        if not (maximum - current > threshold):
            break
        selected.append(best)
        history.append(maximum)
        current = maximum
        qv = C[:, best] / math.sqrt(norms[best])
        r = r - (r @ qv) * qv
        rss = float(r @ r)
        C = C - np.outer(qv, qv @ C)
        C[:, best] = 0.0
        usable[best] = False
    return selected, current, history


def varimax(loadings: np.ndarray, gamma: float = 1.0, max_iter: int = 1000, tol: float = 1e-12
            ) -> np.ndarray:
    """Orthogonal rotation maximising the varimax criterion of ``loadings`` (Kaiser 1958).

    Parameters
    ----------
    loadings : (n, p) loading matrix.
    gamma : 1 for varimax (0 would give quartimax).
    max_iter, tol : iteration limit; stop when no entry of the rotation changes by more than ``tol``.

    Returns
    -------
    (p, p) orthogonal rotation ``R``; the rotated loadings are ``loadings @ R``.
    """
    L = np.asarray(loadings, dtype=float)
    n, p = L.shape
    R = np.eye(p)
    if p < 2:
        return R
    for _ in range(max_iter):
        Lr = L @ R
        target = Lr ** 3 - (gamma / n) * Lr * np.sum(Lr ** 2, axis=0)
        u, _, vt = np.linalg.svd(L.T @ target)
        R_new = u @ vt
        done = float(np.max(np.abs(R_new - R))) <= tol
        R = R_new
        if done:
            break
    return R


def varimax_criterion(loadings: np.ndarray) -> float:
    """Sum over columns of the variance of the squared loadings (the quantity varimax maximises)."""
    sq = np.asarray(loadings, dtype=float) ** 2
    return float(np.sum(np.mean(sq ** 2, axis=0) - np.mean(sq, axis=0) ** 2))


def slog(x: np.ndarray) -> np.ndarray:
    """Signed logarithm ``sign(x) * ln(1 + |x|)``."""
    return np.sign(x) * np.log1p(np.abs(x))


class EigerRegressor(RegressorMixin, BaseEstimator):
    """Eiger statistical performance model: PCA -> k-means -> per-cluster stepwise regression.

    Parameters
    ----------
    n_components : principal components kept (None: all).
    rotation : None or ``"varimax"``.
    n_clusters : number of k-means clusters.
    threshold : minimal adjusted-R^2 gain for adding a function (Algorithm 1).
    pool : unary functions of Table I to use (see :data:`UNARY_FUNCTIONS`).
    interactions : include the products x_i * x_j.
    max_terms : cap on the number of terms per cluster model (None: no cap).
    input_transform : ``"none"`` or ``"slog"`` applied to every metric before standardising.
    target_transform : ``"none"`` or ``"log2"`` (fit log2 of the result, predict 2**model).
    domain_floor : lower clamp of the shifted scores fed to the pool functions.
    clip_scores : clip the scores of predicted trials to the training range of each component.
    output_margin : clamp each cluster model's output to its training target range widened by this
        fraction of the range on each side (None: no clamp).
    n_init : k-means restarts.
    random_state : seed of k-means.
    """

    def __init__(self, n_components: int | None = None, rotation: str | None = None, n_clusters: int = 1,
                 threshold: float = 0.01, pool: Sequence[str] = DEFAULT_POOL, interactions: bool = True,
                 max_terms: int | None = None, input_transform: str = "none",
                 target_transform: str = "none", domain_floor: float = 0.5, clip_scores: bool = True,
                 output_margin: float | None = 0.5, n_init: int = 10, random_state: int | None = 0):
        self.n_components = n_components
        self.rotation = rotation
        self.n_clusters = n_clusters
        self.threshold = threshold
        self.pool = pool
        self.interactions = interactions
        self.max_terms = max_terms
        self.input_transform = input_transform
        self.target_transform = target_transform
        self.domain_floor = domain_floor
        self.clip_scores = clip_scores
        self.output_margin = output_margin
        self.n_init = n_init
        self.random_state = random_state

    # ----------------------------------------------------------------------------------------------
    def _check_params(self, n_samples: int, n_features: int) -> int:
        if self.input_transform not in INPUT_TRANSFORMS:
            raise EigerError(f"input_transform must be one of {INPUT_TRANSFORMS}, got {self.input_transform!r}")
        if self.target_transform not in TARGET_TRANSFORMS:
            raise EigerError(
                f"target_transform must be one of {TARGET_TRANSFORMS}, got {self.target_transform!r}")
        if self.rotation not in (None, "varimax"):
            raise EigerError(f"rotation must be None or 'varimax', got {self.rotation!r}")
        p = n_features if self.n_components is None else int(self.n_components)
        if not 1 <= p <= n_features:
            raise EigerError(f"n_components must be between 1 and {n_features} (the number of metrics), "
                             f"got {self.n_components}")
        if not 1 <= int(self.n_clusters) <= n_samples:
            raise EigerError(f"n_clusters must be between 1 and {n_samples} (the number of trials), "
                             f"got {self.n_clusters}")
        if self.output_margin is not None and not (self.output_margin >= 0):
            raise EigerError(f"output_margin must be None or >= 0, got {self.output_margin}")
        if not (self.domain_floor > 0):
            raise EigerError(f"domain_floor must be positive, got {self.domain_floor}")
        candidate_terms(0, self.pool)
        return p

    def _input(self, X: np.ndarray) -> np.ndarray:
        return slog(X) if self.input_transform == "slog" else X

    def fit(self, X, y, progress: Callable[[int, int], None] | None = None):
        """Fit the pipeline.

        Parameters
        ----------
        X : (m, n) array-like of metrics (a DataFrame's column names become ``feature_names_in_``).
        y : (m,) results.
        progress : optional callback ``progress(done, total)`` called after each cluster model.

        Returns
        -------
        self
        """
        with _one_thread():
            return self._fit(X, y, progress)

    def _fit(self, X, y, progress):
        names = getattr(X, "columns", None)
        X = _as_matrix(X, "X")
        y = np.asarray(y, dtype=float).ravel()
        m, n = X.shape
        if y.shape[0] != m:
            raise EigerError(f"X has {m} trials but y has {y.shape[0]} results")
        if m < 2:
            raise EigerError("need at least 2 trials to fit")
        if not np.all(np.isfinite(y)):
            raise EigerError("y contains NaN or infinite values")
        p = self._check_params(m, n)
        if self.target_transform == "log2":
            if np.any(y <= 0):
                raise EigerError("target_transform='log2' needs positive results")
            yt = np.log2(y)
        else:
            yt = y
        self.feature_names_in_ = np.asarray([str(c) for c in names], dtype=object) if names is not None \
            else np.asarray([f"x{i}" for i in range(n)], dtype=object)
        self.n_features_in_ = n
        Xt = self._input(X)
        self.mean_ = Xt.mean(axis=0)
        std = Xt.std(axis=0)
        self.scale_ = np.where(std > 0, std, 1.0)
        Z = (Xt - self.mean_) / self.scale_
        _, s, vt = np.linalg.svd(Z, full_matrices=False)
        eig = s ** 2 / m
        self.explained_variance_ = eig[:p]
        total = float(np.sum(eig))
        self.explained_variance_ratio_ = eig[:p] / total if total > 0 else np.zeros(p)
        W = vt[:p].T.copy()  # (n, p)
        if self.rotation == "varimax":
            self.rotation_ = varimax(W * np.sqrt(eig[:p]))
            W = W @ self.rotation_
        else:
            self.rotation_ = np.eye(p)
        # deterministic signs: the largest-magnitude loading of each component is positive
        idx = np.argmax(np.abs(W), axis=0)
        W = W * np.where(W[idx, np.arange(p)] < 0, -1.0, 1.0)
        self.components_ = W.T.copy()  # (p, n)
        self.n_components_ = p
        U = Z @ W
        self.score_min_ = U.min(axis=0)
        self.score_max_ = U.max(axis=0)
        self.offset_ = 1.0 - self.score_min_
        zs = self._shift(U)
        k = int(self.n_clusters)
        if k == 1:
            labels = np.zeros(m, dtype=int)
            self.cluster_centers_ = U.mean(axis=0, keepdims=True)
        else:
            from sklearn.cluster import KMeans

            km = KMeans(n_clusters=k, n_init=self.n_init, random_state=self.random_state).fit(U)
            self.cluster_centers_ = km.cluster_centers_.copy()
            labels = self._nearest(U)
        self.labels_ = labels
        self.terms_pool_ = candidate_terms(p, self.pool, self.interactions)
        F_all = np.column_stack([t.evaluate(zs) for t in self.terms_pool_]) if self.terms_pool_ else \
            np.zeros((m, 0))
        self.models_ = []
        for c in range(k):
            rows = labels == c
            self.models_.append(self._fit_cluster(F_all[rows], yt[rows]))
            if progress is not None:
                progress(c + 1, k)
        return self

    def _fit_cluster(self, F: np.ndarray, y: np.ndarray) -> ClusterModel:
        n = y.shape[0]
        if n == 0:
            return ClusterModel([], 0.0, np.zeros(0), -math.inf, 0.0, 0)
        sel, adj, hist = forward_stepwise(F, y, self.threshold, self.max_terms)
        terms = [self.terms_pool_[i] for i in sel]
        A = np.column_stack([np.ones(n)] + [F[:, i] for i in sel])
        beta, *_ = np.linalg.lstsq(A, y, rcond=None)
        resid = y - A @ beta
        tss = float(np.sum((y - y.mean()) ** 2))
        r2 = 1.0 - float(resid @ resid) / tss if tss > 0 else 0.0
        lo, hi = -math.inf, math.inf
        if self.output_margin is not None:
            span = float(y.max() - y.min())
            lo, hi = float(y.min()) - self.output_margin * span, float(y.max()) + self.output_margin * span
        return ClusterModel(terms, float(beta[0]), beta[1:].astype(float), float(adj), r2, n, hist, lo, hi)

    def _shift(self, U: np.ndarray) -> np.ndarray:
        if self.clip_scores:
            U = np.clip(U, self.score_min_, self.score_max_)
        return np.maximum(U + self.offset_, self.domain_floor)

    def _nearest(self, U: np.ndarray) -> np.ndarray:
        d = ((U[:, None, :] - self.cluster_centers_[None, :, :]) ** 2).sum(axis=2)
        return np.argmin(d, axis=1)

    def transform(self, X) -> np.ndarray:
        """Project trials onto the retained (possibly rotated) principal components.

        Parameters
        ----------
        X : (m, n) metrics.

        Returns
        -------
        (m, p) scores.
        """
        self._check_fitted()
        X = _as_matrix(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise EigerError(f"X has {X.shape[1]} metrics, the model expects {self.n_features_in_}")
        return ((self._input(X) - self.mean_) / self.scale_) @ self.components_.T

    def predict_cluster(self, X) -> np.ndarray:
        """Index of the nearest cluster centroid for each trial."""
        return self._nearest(self.transform(X))

    def predict(self, X) -> np.ndarray:
        """Predicted results: each trial by the model of its nearest centroid.

        Parameters
        ----------
        X : (m, n) metrics.

        Returns
        -------
        (m,) predictions in the units of ``y``.
        """
        U = self.transform(X)
        with _one_thread():
            labels = self._nearest(U)
        z = self._shift(U)
        out = np.empty(U.shape[0])
        for c, model in enumerate(self.models_):
            rows = labels == c
            if rows.any():
                out[rows] = model.predict_z(z[rows])
        if self.target_transform == "log2":
            out = np.exp2(out)
        return out

    def describe(self) -> list[str]:
        """One line per cluster with its formula."""
        self._check_fitted()
        lines = []
        for c, mdl in enumerate(self.models_):
            parts = [f"{mdl.intercept:.6g}"] + [f"{b:+.6g}*{t.formula()}" for b, t in
                                                  zip(mdl.coefficients, mdl.terms)]
            lhs = "log2(y)" if self.target_transform == "log2" else "y"
            lines.append(f"cluster {c} (n={mdl.n_train}, adjR2={mdl.adjusted_r2:.4f}): {lhs} = "
                         + " ".join(parts))
        return lines

    def _check_fitted(self) -> None:
        if not hasattr(self, "models_"):
            raise EigerError("this EigerRegressor is not fitted yet; call fit() first")


def _one_thread():
    """Run BLAS/OpenMP with one thread: the matrices here are small, and on a loaded machine thread pools
    spin far longer than the work takes (measured 40x slower with the default pools)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def _as_matrix(X, name: str) -> np.ndarray:
    try:
        A = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise EigerError(f"{name} must be numeric: {exc}") from None
    if A.ndim != 2:
        raise EigerError(f"{name} must be 2-D (trials x metrics), got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        bad = np.argwhere(~np.isfinite(A))[0]
        raise EigerError(f"{name} has a NaN or infinite value at row {bad[0]}, column {bad[1]}")
    return A


# ------------------------------------------------------------------------------------------------
# validation


def error_metrics(y_true, y_pred) -> dict[str, float]:
    """Error measures used in the reports.

    Parameters
    ----------
    y_true, y_pred : (m,) actual and predicted results.

    Returns
    -------
    dict with ``mse``, ``rmse``, ``mape`` (mean absolute percentage error, %), ``median_ape`` (%),
    ``mse_log10`` (mean squared error of log10 values, only when all values are positive, else NaN)
    and ``n``.
    """
    yt = np.asarray(y_true, dtype=float)
    yp = np.asarray(y_pred, dtype=float)
    err = yp - yt
    mse = float(np.mean(err ** 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        ape = np.abs(err) / np.abs(yt) * 100.0
    if np.all(yt > 0) and np.all(yp > 0):
        msl = float(np.mean((np.log10(yp) - np.log10(yt)) ** 2))
    else:
        msl = float("nan")
    return {"n": int(yt.size), "mse": mse, "rmse": math.sqrt(mse), "mape": float(np.mean(ape)),
            "median_ape": float(np.median(ape)), "mse_log10": msl}


def kfold_predict(estimator: EigerRegressor, X, y, n_splits: int = 5, random_state: int = 0,
                  shuffle: bool = True) -> np.ndarray:
    """Out-of-fold predictions of K-fold cross-validation (each trial predicted by the model trained on
    the other K-1 parts).

    Parameters
    ----------
    estimator : unfitted template; cloned for every fold.
    X, y : trials and results.
    n_splits : K.
    random_state, shuffle : passed to the fold split.

    Returns
    -------
    (m,) predictions.
    """
    from sklearn.base import clone
    from sklearn.model_selection import KFold

    X = _as_matrix(X, "X")
    y = np.asarray(y, dtype=float)
    if not 2 <= n_splits <= X.shape[0]:
        raise EigerError(f"n_splits must be between 2 and the number of trials ({X.shape[0]}), got {n_splits}")
    out = np.empty(X.shape[0])
    split = KFold(n_splits=n_splits, shuffle=shuffle, random_state=random_state if shuffle else None)
    for train, test in split.split(X):
        est = clone(estimator).fit(X[train], y[train])
        out[test] = est.predict(X[test])
    return out


def leave_one_group_out_predict(estimator: EigerRegressor, X, y, groups) -> np.ndarray:
    """Predictions where every trial is predicted by a model trained on all trials of *other* groups
    (leave-one-application-out with ``groups`` = application names; leave-one-machine-out with machines).

    Parameters
    ----------
    estimator : unfitted template; cloned for every group.
    X, y : trials and results.
    groups : (m,) group label of each trial.

    Returns
    -------
    (m,) predictions.
    """
    from sklearn.base import clone

    X = _as_matrix(X, "X")
    y = np.asarray(y, dtype=float)
    groups = np.asarray(groups)
    uniq = list(dict.fromkeys(groups.tolist()))
    if len(uniq) < 2:
        raise EigerError("leave-one-group-out needs at least 2 groups")
    out = np.empty(X.shape[0])
    for g in uniq:
        test = groups == g
        est = clone(estimator).fit(X[~test], y[~test])
        out[test] = est.predict(X[test])
    return out
