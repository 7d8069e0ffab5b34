"""XAPP's exhaustive-search interaction regressor (Ardalani et al., Sec. 2.3, 3.3 and 5.2).

The model is a linear regression on ``k`` features and *all* their interactions: the ``2**k`` products of
every subset of the ``k`` features (the empty product is the intercept). The ``k`` features are chosen by
searching the space of ``k``-subsets of the candidate features; each subset is scored by repeated random
sub-sampling validation: the training data is split ``n_splits`` times into an internal training set and an
internal test set of ``validation_size`` points, the model is fitted on the former, the mean absolute
relative error of its predictions (on the original speedup scale) is measured on the latter, and the
subset's score is the harmonic mean of those ``n_splits`` mean errors. The subset with the lowest score is
refitted on all training data.

Two searches: ``"exhaustive"`` scores every ``k``-subset; ``"two-stage"`` follows the paper's shortcut:
score a random ``sample_fraction`` of the subset space, keep the ``n_stage2_features`` features that
first appear when walking the sampled subsets from best to worst (the features covering the best
models), and score every ``k``-subset of those.

Features are standardised with the training mean and standard deviation before the design is built
(Sec. 3.2 "we normalized the features"). The span of the ``2**k`` products is invariant under per-feature
affine maps, so this changes only the conditioning of the least squares, not the fitted predictions.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state

from . import _search
from ._validation import as_feature_frame, check_finite, check_target, screen_columns

TRANSFORMS = ("none", "log", "sqrt")
WEIGHTINGS = ("none", "relative")
SEARCHES = ("exhaustive", "two-stage")
BACKENDS = ("local", "dask")


def term_masks(k: int) -> list[tuple[int, ...]]:
    """Positions (within the subset) multiplied by each of the ``2**k`` terms, in design-column order.

    Term ``t`` multiplies the positions of the set bits of ``t``; term 0 is the intercept ``()``.

    Parameters
    ----------
    k : int

    Returns
    -------
    list of tuple of int
    """
    return [tuple(j for j in range(k) if (t >> j) & 1) for t in range(1 << k)]


def term_names(features: Sequence[str]) -> list[str]:
    """Readable names of the interaction terms of ``features``: ``"(intercept)"``, ``"a"``, ``"a*b"``, ...

    Parameters
    ----------
    features : sequence of str

    Returns
    -------
    list of str
    """
    out = []
    for pos in term_masks(len(features)):
        out.append("(intercept)" if not pos else "*".join(features[j] for j in pos))
    return out


def transform_response(y: np.ndarray, transform: str) -> np.ndarray:
    """Apply the response transform (``none``, ``log`` or ``sqrt``) to positive ``y``."""
    if transform == "none":
        return y.astype(np.float64, copy=True)
    if transform == "log":
        return np.log(y)
    if transform == "sqrt":
        return np.sqrt(y)
    raise ValueError(f"transform must be one of {TRANSFORMS}, got {transform!r}")


def inverse_transform(v: np.ndarray, transform: str) -> np.ndarray:
    """Map predictions on the transformed scale back to speedups (sqrt: negative values map to 0)."""
    v = np.asarray(v, dtype=np.float64)
    if transform == "none":
        return v.copy()
    if transform == "log":
        with np.errstate(over="ignore"):
            return np.exp(v)
    if transform == "sqrt":
        return np.square(np.maximum(v, 0.0))
    raise ValueError(f"transform must be one of {TRANSFORMS}, got {transform!r}")


def relative_weights(y_fit: np.ndarray, weighting: str, transform: str) -> np.ndarray:
    """Least-squares weights: ones, or ``1 / y_fit**2`` (relative error of the fitted response).

    ``"relative"`` weighting is defined for ``transform`` ``none`` and ``sqrt`` only: a log response can be
    zero or negative, and least squares on log speedup already measures relative error.
    """
    if weighting == "none":
        return np.ones_like(y_fit)
    if weighting == "relative":
        if transform == "log":
            raise ValueError(
                "weighting='relative' (1/y^2) is not defined with transform='log': log speedup can be 0 or "
                "negative, and least squares on log speedup already measures relative error"
            )
        return 1.0 / np.square(y_fit)
    raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")


def random_splits(n: int, n_test: int, n_splits: int, random_state) -> np.ndarray:
    """Internal test indices of ``n_splits`` repeated random sub-samples (rows: splits).

    Parameters
    ----------
    n : int
        Number of training points.
    n_test : int
        Points in each internal test set; the other ``n - n_test`` form the internal training set.
    n_splits : int
    random_state : int, RandomState or None

    Returns
    -------
    numpy.ndarray of shape (n_splits, n_test), int64
    """
    rng = check_random_state(random_state)
    out = np.empty((n_splits, n_test), dtype=np.int64)
    for s in range(n_splits):
        out[s] = np.sort(rng.permutation(n)[:n_test])
    return out


def _resolve_validation_size(validation_size, n: int) -> int:
    if isinstance(validation_size, (float, np.floating)) and not float(validation_size).is_integer():
        if not 0.0 < validation_size < 1.0:
            raise ValueError(f"validation_size as a fraction must be in (0, 1), got {validation_size}")
        return max(1, int(round(validation_size * n)))
    v = int(validation_size)
    if v < 1:
        raise ValueError(f"validation_size must be >= 1, got {validation_size}")
    return v


def _dask_score(X, y_fit, y_true, w, chunks, test_idx, code, tol, hat, address, progress):
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError("backend='dask' needs Dask: pip install 'portcast[dask]' (the default backend "
                          "'local' needs nothing more)") from None

    cluster = None
    if address is None:
        cluster = LocalCluster(threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        data = client.scatter([X, y_fit, y_true, w, test_idx], broadcast=True)
        futures = [
            client.submit(_search.score_subsets_serial, data[0], data[1], data[2], data[3], ch, data[4], code, tol,
                          hat, pure=False)
            for ch in chunks
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list = [None] * len(futures)
        done = 0
        for fut in as_completed(futures):
            results[index[fut.key]] = fut.result()
            done += len(chunks[index[fut.key]])
            if progress is not None:
                progress(done)
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class InteractionSearchRegressor(RegressorMixin, BaseEstimator):
    """Best ``k``-feature linear model with all ``2**k`` interaction terms, chosen by random sub-sampling.

    Parameters
    ----------
    k : int, default 4
        Number of features in the model; the model has ``2**k`` terms including the intercept.
    transform : {"none", "log", "sqrt"}, default "none"
        Transform of the response before least squares; predictions are mapped back (``exp``, square of
        the non-negative part). Validation errors are always relative errors of the speedup itself.
    weighting : {"none", "relative"}, default "none"
        ``"relative"`` weights each point by ``1 / y_fit**2`` (weighted least squares of Sec. 2.1; not with
        ``transform="log"``).
    n_splits : int, default 100
        Number of random internal train/test splits per subset.
    validation_size : int or float, default 12
        Size of each internal test set (a count, or a fraction of the training points).
    search : {"exhaustive", "two-stage"}, default "exhaustive"
    sample_fraction : float, default 0.1
        Two-stage search: fraction of the subset space scored in stage 1.
    n_stage2_features : int, default 12
        Two-stage search: number of features kept for the exhaustive stage 2.
    backend : {"local", "dask"}, default "local"
        ``"local"``: Numba threads on this machine. ``"dask"``: chunks of subsets as Dask tasks on a
        LocalCluster (started and closed by ``fit``) or on the scheduler at ``scheduler_address``.
    scheduler_address : str or None
        Dask scheduler to use with ``backend="dask"`` (e.g. ``"tcp://10.0.0.5:8786"``).
    chunk_size : int, default 20000
        Subsets per batch (per Dask task; the progress callback is called per batch).
    singular_tol : float, default 1e-10
        A split is singular when its internal training design loses rank: a Cholesky pivot of the normal
        equations below ``singular_tol`` times its column's squared norm (downdate path), or a pivot of
        ``I - H_tt`` below ``singular_tol`` (leave-group-out path; the engine picks the cheaper path from
        the shapes alone, see :func:`predictor._search.use_hat_path`).
    random_state : int, RandomState or None
        Seeds the validation splits and the stage-1 sample.
    required : tuple of str, default ()
        Features every candidate subset must contain (e.g. the available parallelism, so the model cannot
        ignore it); at most ``k``.
    clip_features : bool, default False
        Clip each input feature to its training range before predicting, so the interaction terms cannot
        grow without bound outside the data (:meth:`clip`); the paper's model does not clip.

    Attributes
    ----------
    subset_ : tuple of str
        The chosen features.
    subset_indices_ : ndarray of int
        Their positions in ``feature_names_in_``.
    terms_ : list of str
        Term names in coefficient order (``"(intercept)"``, ``"a"``, ``"b"``, ``"a*b"``, ...).
    coef_ : ndarray of shape (2**k,)
        Coefficients on the standardised features ``z = (x - mean_) / scale_`` (transformed response).
    mean_, scale_ : ndarray of shape (k,)
        Standardisation of the chosen features (training mean and standard deviation).
    feature_min_, feature_max_ : dict
        Training range of every input feature.
    target_min_, target_max_ : float
        Range of the training speedups (NaN for a model file that does not record it).
    train_points_ : ndarray of shape (n_train, k)
        The training points' values of the chosen features (for :meth:`novelty`; absent from model files
        that do not record them).
    scores_ : DataFrame
        One row per scored subset: ``features`` (tuple), ``score`` (harmonic mean of split errors),
        ``mean_error`` (arithmetic mean), ``n_singular`` (singular splits), ``stage`` (1 or 2; always 2 for
        the exhaustive search), sorted by score.
    best_score_ : float
    excluded_features_ : dict
        Input columns left out of the search and why (constant, duplicate).
    n_features_in_, feature_names_in_ : as in scikit-learn.
    n_train_ : int
    """

    def __init__(
        self,
        k: int = 4,
        transform: str = "none",
        weighting: str = "none",
        n_splits: int = 100,
        validation_size=12,
        search: str = "exhaustive",
        sample_fraction: float = 0.1,
        n_stage2_features: int = 12,
        backend: str = "local",
        scheduler_address: str | None = None,
        chunk_size: int = 20000,
        singular_tol: float = 1e-10,
        random_state=None,
        required=(),
        clip_features: bool = False,
    ) -> None:
        self.k = k
        self.transform = transform
        self.weighting = weighting
        self.n_splits = n_splits
        self.validation_size = validation_size
        self.search = search
        self.sample_fraction = sample_fraction
        self.n_stage2_features = n_stage2_features
        self.backend = backend
        self.scheduler_address = scheduler_address
        self.chunk_size = chunk_size
        self.singular_tol = singular_tol
        self.random_state = random_state
        self.required = required
        self.clip_features = clip_features

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        if int(self.k) != self.k or self.k < 1 or self.k > 8:
            raise ValueError(f"k must be an integer in 1..8, got {self.k!r}")
        if self.transform not in TRANSFORMS:
            raise ValueError(f"transform must be one of {TRANSFORMS}, got {self.transform!r}")
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {self.weighting!r}")
        if self.weighting == "relative" and self.transform == "log":
            relative_weights(np.ones(1), self.weighting, self.transform)
        if int(self.n_splits) != self.n_splits or self.n_splits < 1:
            raise ValueError(f"n_splits must be a positive integer, got {self.n_splits!r}")
        if self.search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {self.search!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if not 0.0 < self.sample_fraction <= 1.0:
            raise ValueError(f"sample_fraction must be in (0, 1], got {self.sample_fraction}")
        if self.n_stage2_features < self.k:
            raise ValueError(f"n_stage2_features ({self.n_stage2_features}) must be >= k ({self.k})")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")
        if isinstance(self.required, str) or len(tuple(self.required)) > self.k:
            raise ValueError(f"required must be a sequence of at most k={self.k} feature names, got {self.required!r}")

    # ------------------------------------------------------------------ search
    def _score(self, subsets: np.ndarray, ctx: dict, progress, offset: int, total: int) -> tuple:
        chunks = [subsets[i : i + self.chunk_size] for i in range(0, len(subsets), self.chunk_size)]
        if not chunks:
            return np.empty(0), np.empty(0), np.empty(0, np.int64)
        args = (ctx["X"], ctx["y_fit"], ctx["y"], ctx["w"])
        n, k = ctx["X"].shape[0], subsets.shape[1]
        S, n_test = ctx["test"].shape
        hat = bool(_search.use_hat_path(n, k, S, n_test))
        tail = (ctx["test"], ctx["code"], float(self.singular_tol), hat)
        if self.backend == "dask":
            cb = None if progress is None else (lambda d: progress(offset + d, total))
            results = _dask_score(*args, chunks, *tail, self.scheduler_address, cb)
        else:
            results = []
            done = 0
            for ch in chunks:
                results.append(_search.score_subsets(*args, ch, *tail))
                done += len(ch)
                if progress is not None:
                    progress(offset + done, total)
        return tuple(np.concatenate([r[i] for r in results]) for i in range(3))

    def fit(self, X, y, progress: Callable[[int, int], None] | None = None) -> "InteractionSearchRegressor":
        """Search the subsets, then refit the best one on all of ``X``.

        Parameters
        ----------
        X : DataFrame or array of shape (n, p)
            Candidate features (numeric, finite). Constant columns and exact duplicates of an earlier
            column are left out of the search (with a warning; see ``excluded_features_``).
        y : array-like of shape (n,)
            Speedups, finite and > 0.
        progress : callable(done, total), optional
            Called after each batch of subsets with the number of subsets scored so far.

        Returns
        -------
        self
        """
        self._check_params()
        k = int(self.k)
        df = as_feature_frame(X)
        check_finite(df, "X")
        yv = check_target(y, len(df))
        n = len(df)
        self.feature_names_in_ = np.array(df.columns, dtype=object)
        self.n_features_in_ = df.shape[1]
        self.feature_min_ = {c: float(df[c].min()) for c in df.columns}
        self.feature_max_ = {c: float(df[c].max()) for c in df.columns}
        self.target_min_ = float(np.min(yv))
        self.target_max_ = float(np.max(yv))
        kept, excluded = screen_columns(df)
        required = [str(c) for c in self.required]
        for c in required:
            if c not in df.columns:
                raise ValueError(f"required feature {c!r} is not an input column")
            if c not in kept:
                raise ValueError(f"required feature {c!r} was left out of the search ({excluded.get(c, 'unusable')})")
        self.excluded_features_ = excluded
        if excluded:
            warnings.warn(
                "left out of the search: " + ", ".join(f"{c} ({why})" for c, why in excluded.items()),
                UserWarning,
                stacklevel=2,
            )
        if len(kept) < k:
            raise ValueError(f"need at least k={k} usable (non-constant, distinct) features, got {len(kept)}")
        T = 1 << k
        n_test = _resolve_validation_size(self.validation_size, n)
        if n - n_test < T:
            raise ValueError(
                f"too few points: {n} points with validation_size={n_test} leave {n - n_test} for each internal "
                f"fit, fewer than the {T} terms of a k={k} interaction model (need n >= {T + n_test})"
            )
        Xk = df[kept].to_numpy(dtype=np.float64)
        mean = Xk.mean(axis=0)
        scale = Xk.std(axis=0)
        Xs = np.ascontiguousarray((Xk - mean) / scale)
        y_fit = transform_response(yv, self.transform)
        w = relative_weights(y_fit, self.weighting, self.transform)
        rng = check_random_state(self.random_state)
        test = random_splits(n, n_test, int(self.n_splits), rng)
        ctx = {"X": Xs, "y_fit": y_fit, "y": yv, "w": w, "test": test,
               "code": _search.TRANSFORM_CODES[self.transform]}
        p = len(kept)
        all_subsets = np.array(list(itertools.combinations(range(p), k)), dtype=np.int64).reshape(-1, k)
        req_idx = [kept.index(c) for c in required]
        if req_idx:
            keep = np.all([np.any(all_subsets == r, axis=1) for r in req_idx], axis=0)
            all_subsets = all_subsets[keep].reshape(-1, k)
        if self.search == "exhaustive":
            subsets = all_subsets
            stage = np.full(len(subsets), 2, dtype=np.int8)
            h, a, ns = self._score(subsets, ctx, progress, 0, len(subsets))
        else:
            n1 = max(1, int(math.ceil(self.sample_fraction * len(all_subsets))))
            pick = np.sort(rng.choice(len(all_subsets), size=n1, replace=False))
            s1 = all_subsets[pick]
            m2 = min(int(self.n_stage2_features), p)
            n2_est = math.comb(m2, k)
            total = n1 + n2_est
            h1, a1, ns1 = self._score(s1, ctx, progress, 0, total)
            order = np.lexsort((np.arange(len(s1)), h1))
            chosen: list[int] = list(req_idx)
            for j in order:
                if not np.isfinite(h1[j]):
                    break
                for f in s1[j]:
                    if f not in chosen and len(chosen) < m2:
                        chosen.append(int(f))
                if len(chosen) >= m2:
                    break
            if len(chosen) < k:
                raise ValueError("two-stage search: every sampled subset is singular; use search='exhaustive'")
            self.stage2_features_ = tuple(kept[j] for j in chosen)
            chosen_sorted = sorted(chosen)
            s2 = np.array(list(itertools.combinations(chosen_sorted, k)), dtype=np.int64).reshape(-1, k)
            if req_idx:
                s2 = s2[np.all([np.any(s2 == r, axis=1) for r in req_idx], axis=0)].reshape(-1, k)
            in_s1 = {tuple(r) for r in s1.tolist()}
            s2 = np.array([r for r in s2.tolist() if tuple(r) not in in_s1], dtype=np.int64).reshape(-1, k)
            h2, a2, ns2 = self._score(s2, ctx, progress, n1, n1 + len(s2))
            subsets = np.concatenate([s1, s2])
            h = np.concatenate([h1, h2])
            a = np.concatenate([a1, a2])
            ns = np.concatenate([ns1, ns2])
            stage = np.concatenate([np.ones(len(s1), np.int8), np.full(len(s2), 2, np.int8)])
            # stage-2 subsets already scored in stage 1 keep their stage-1 row
        order = np.lexsort((np.arange(len(h)), h))
        best = int(order[0])
        if not np.isfinite(h[best]):
            raise ValueError(
                "every candidate subset has a singular design on at least one validation split (features with "
                "too few distinct values, or collinear); add data, lower k, or lower validation_size"
            )
        names = np.array(kept, dtype=object)
        self.scores_ = pd.DataFrame(
            {
                "features": [tuple(names[r]) for r in subsets[order]],
                "score": h[order],
                "mean_error": a[order],
                "n_singular": ns[order],
                "stage": stage[order],
            }
        )
        sub = subsets[best]
        self.best_score_ = float(h[best])
        self.subset_ = tuple(kept[j] for j in sub)
        self.subset_indices_ = np.array([list(df.columns).index(c) for c in self.subset_], dtype=np.int64)
        self.mean_ = mean[sub].copy()
        self.scale_ = scale[sub].copy()
        ok, coef = _search.fit_subset(Xs, y_fit, w, np.ascontiguousarray(sub), float(self.singular_tol))
        if not ok:  # cannot happen: the full data contains every internal training set
            raise ValueError(f"singular design for the chosen subset {self.subset_} on all training data")
        self.coef_ = coef
        self.terms_ = term_names(self.subset_)
        self.train_points_ = df[list(self.subset_)].to_numpy(dtype=np.float64).copy()
        self.n_train_ = n
        self.validation_size_ = n_test
        return self

    # ------------------------------------------------------------------ predict
    def _subset_matrix(self, X) -> np.ndarray:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "coef_")
        if isinstance(X, pd.Series):
            X = X.to_frame().T
        if isinstance(X, dict):
            X = pd.DataFrame([X])
        if isinstance(X, pd.DataFrame):
            missing = [c for c in self.subset_ if c not in X.columns]
            if missing:
                raise ValueError(f"input lacks the model's feature column(s) {missing}")
            df = X[list(self.subset_)]
            try:
                df = df.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"model feature columns must be numeric: {exc}") from None
        else:
            arr = np.asarray(X, dtype=np.float64)
            if arr.ndim == 1:
                arr = arr.reshape(1, -1)
            if arr.ndim != 2 or arr.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has shape {arr.shape}; expected (n, {self.n_features_in_}) in the training column order"
                )
            df = pd.DataFrame(arr[:, self.subset_indices_], columns=list(self.subset_))
        check_finite(df, "X")
        return df.to_numpy(dtype=np.float64)

    def novelty(self, X) -> np.ndarray:
        """How far each row lies from the training points, in the chosen features (standardised): the
        distance to the nearest training point divided by the largest such distance among the training points
        themselves (each to its nearest other). Above 1 a row is farther from the data than any training point
        is from the rest: the interaction terms were never fitted near it, even when every feature on its own
        is inside its range. NaN when the model does not record its training points.

        Parameters
        ----------
        X : as for :meth:`predict`

        Returns
        -------
        numpy.ndarray of shape (n,)
        """
        M = self._subset_matrix(X)
        P = getattr(self, "train_points_", None)
        if P is None or len(P) < 2:
            return np.full(M.shape[0], np.nan)
        Zp = (P - self.mean_) / self.scale_
        Zx = (M - self.mean_) / self.scale_
        dpp = np.sqrt(((Zp[:, None, :] - Zp[None, :, :]) ** 2).sum(axis=2))
        np.fill_diagonal(dpp, np.inf)
        spread = float(dpp.min(axis=1).max())
        d = np.sqrt(((Zx[:, None, :] - Zp[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
        return d / spread if spread > 0 else np.where(d > 0, np.inf, 0.0)

    def clip(self, M: np.ndarray) -> np.ndarray:
        """The chosen features' values (columns of ``M``, in ``subset_`` order) clipped to their training
        ranges: a feature outside the data then contributes as at the edge of the data.

        Parameters
        ----------
        M : ndarray of shape (n, k)

        Returns
        -------
        numpy.ndarray
        """
        lo = np.array([self.feature_min_[c] for c in self.subset_])
        hi = np.array([self.feature_max_[c] for c in self.subset_])
        return np.clip(M, lo, hi)

    def decision_terms(self, X) -> np.ndarray:
        """Design matrix of the chosen terms on standardised features, shape (n, 2**k) (features clipped to
        the training range first when ``clip_features``).

        Parameters
        ----------
        X : DataFrame (needs the chosen feature columns), dict, Series, or array in training column order.

        Returns
        -------
        numpy.ndarray
        """
        M = self._subset_matrix(X)
        if getattr(self, "clip_features", False):
            M = self.clip(M)
        Zs = np.ascontiguousarray((M - self.mean_) / self.scale_)
        return _search.design_matrix(Zs, np.arange(len(self.subset_), dtype=np.int64))

    def predict_transformed(self, X) -> np.ndarray:
        """Predictions on the transformed (fitted) response scale."""
        return self.decision_terms(X) @ self.coef_

    def predict(self, X) -> np.ndarray:
        """Predicted speedups.

        Parameters
        ----------
        X : DataFrame (needs the chosen feature columns), dict, Series, or array in training column order.

        Returns
        -------
        numpy.ndarray of shape (n,)

        Raises
        ------
        ValueError
            On missing or non-finite inputs, or when a prediction overflows (never returns NaN).
        """
        out = inverse_transform(self.predict_transformed(X), self.transform)
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size:
            raise ValueError(f"prediction overflow at row {int(bad[0])} (input far outside the training range)")
        return out
