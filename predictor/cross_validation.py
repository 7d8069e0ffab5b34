"""Leave-one-group-out cross-validation of a whole XAPP model search, and its errors.

Used by ``portcast train --cv`` and the default model's evaluation: every held-out group (a kernel, an
application) is predicted by a model whose feature search never saw it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from predictor import metrics
from predictor.interaction import inverse_transform

#: Log predictions are clipped here in cross-validation (exp(700) ~ 1e304), so an overflowing held-out
#: prediction scores a huge but finite error (counted in ``n_clipped``); ``predict`` itself never clips.
CV_LOG_CLIP = 700.0


def grouped_cross_validation(make_estimator, X: pd.DataFrame, y: np.ndarray, groups, progress=None) -> pd.DataFrame:
    """Leave-one-group-out cross-validation of a whole model search (e.g. leave one kernel out).

    For each group the estimator from ``make_estimator()`` is fitted (its feature search included) on the other
    groups' points and predicts the held-out group's points, which were never seen by the search.

    Parameters
    ----------
    make_estimator : callable returning a fresh, unfitted InteractionSearchRegressor.
    X : candidate feature columns, one row per point.
    y : speedups (> 0).
    groups : group label per point (e.g. the kernel name).
    progress : callable(done, total), optional; called after each group.

    Returns
    -------
    pandas.DataFrame
        One row per point: ``group``, ``actual``, ``predicted``, ``clipped`` (a log prediction clipped at
        exp(:data:`CV_LOG_CLIP`)), ``subset`` (the features chosen without that group).
    """
    groups = np.asarray(groups)
    y = np.asarray(y, dtype=np.float64)
    names = list(dict.fromkeys(groups.tolist()))
    rows = []
    for i, g in enumerate(names):
        test = groups == g
        est = make_estimator().fit(X.loc[~test], y[~test])
        raw = est.predict_transformed(X.loc[test])
        clipped = np.zeros(raw.shape, dtype=bool)
        if est.transform == "log":
            clipped = np.abs(raw) > CV_LOG_CLIP
            raw = np.clip(raw, -CV_LOG_CLIP, CV_LOG_CLIP)
        pred = inverse_transform(raw, est.transform)
        if est.transform == "none":
            pred = np.where(pred > 0, pred, np.nan)  # a non-positive speedup prediction has no relative error
        for a, p_, c in zip(y[test], pred, clipped):
            rows.append({"group": g, "actual": float(a), "predicted": float(p_), "clipped": bool(c),
                         "subset": ",".join(est.subset_)})
        if progress is not None:
            progress(i + 1, len(names))
    return pd.DataFrame(rows)


def summarize_cv(cv: pd.DataFrame) -> dict:
    """Errors of a :func:`grouped_cross_validation` table.

    Parameters
    ----------
    cv : the table.

    Returns
    -------
    dict
        ``n_points``, ``n_groups``, ``mean_abs_relative_error``, ``median_abs_relative_error``,
        ``weighted_error`` (XAPP Table 4 weights), ``decision_accuracy`` (speedup > 1), ``n_clipped``,
        ``n_nonpositive`` (linear-model predictions <= 0, left out of the errors).
    """
    ok = cv["predicted"].notna().to_numpy()
    a, p = cv["actual"].to_numpy()[ok], cv["predicted"].to_numpy()[ok]
    rel = np.abs(p - a) / a
    return {"n_points": int(len(cv)), "n_groups": int(cv["group"].nunique()),
            "mean_abs_relative_error": float(np.mean(rel)), "median_abs_relative_error": float(np.median(rel)),
            "weighted_error": metrics.weighted_error(a, p), "decision_accuracy": metrics.decision_accuracy(a, p),
            "n_clipped": int(cv["clipped"].sum()), "n_nonpositive": int((~ok).sum())}
