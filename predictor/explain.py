"""Why the model predicts what it predicts: term contributions and feature values against training ranges."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .interaction import InteractionSearchRegressor, inverse_transform, term_masks


def explain_prediction(model: InteractionSearchRegressor, x) -> pd.DataFrame:
    """Break one prediction into the contributions of the model's terms.

    The model predicts, on its transformed scale (``transform``: none, log or sqrt),
    ``sum_t coef_t * prod_{j in t} z_j`` with ``z_j = (x_j - mean_j) / scale_j`` (training mean and standard
    deviation). Each row is one term; ``contribution`` is its share of that sum (for a log model a
    contribution ``c`` multiplies the speedup by ``exp(c)``).

    Parameters
    ----------
    model : fitted InteractionSearchRegressor (e.g. from :func:`predictor.load_model`)
    x : dict, Series, or one-row DataFrame with (at least) the model's features

    Returns
    -------
    pandas.DataFrame
        One row per term, in coefficient order, with columns ``term``, ``order`` (number of features in
        the term, 0 for the intercept), ``z_value`` (product of standardised values), ``coefficient``,
        ``contribution``, and for single-feature rows (order 1) ``value`` (raw input), ``train_min``,
        ``train_max`` and ``extrapolating`` (value outside the training range; for interaction rows
        True when any of its features is). ``attrs`` holds ``prediction`` (speedup),
        ``prediction_transformed``, ``transform``, ``extrapolating`` (any feature out of range),
        ``clipped`` (for a model with ``clip_features``: the features that were clipped to their training
        range, as ``(name, value, bound)``; their terms use the bound), ``outside_targets`` (the
        prediction lies outside the range of the training speedups, when the model records it) and
        ``novelty`` (:meth:`InteractionSearchRegressor.novelty`: above 1 the region is farther from the
        training points than any of them is from the rest; NaN when the model does not record them).

    Raises
    ------
    ValueError
        When ``x`` has more than one row, lacks a feature, or has a non-finite value.
    """
    if isinstance(x, dict):
        frame = pd.DataFrame([x])
    elif isinstance(x, pd.Series):
        frame = x.to_frame().T
    elif isinstance(x, pd.DataFrame):
        frame = x
    else:
        arr = np.asarray(x, dtype=np.float64).reshape(1, -1)
        frame = pd.DataFrame(arr, columns=list(model.feature_names_in_)[: arr.shape[1]])
    if len(frame) != 1:
        raise ValueError(f"explain_prediction takes one row, got {len(frame)}")
    Z = model.decision_terms(frame)[0]
    raw = frame[list(model.subset_)].astype(np.float64).iloc[0].to_numpy()
    lo = np.array([model.feature_min_[c] for c in model.subset_])
    hi = np.array([model.feature_max_[c] for c in model.subset_])
    out_of_range = (raw < lo) | (raw > hi)
    clipped = []
    if getattr(model, "clip_features", False):
        for j, c in enumerate(model.subset_):
            if out_of_range[j]:
                clipped.append((c, float(raw[j]), float(lo[j] if raw[j] < lo[j] else hi[j])))
    rows = []
    for t, pos in enumerate(term_masks(len(model.subset_))):
        row = {
            "term": model.terms_[t],
            "order": len(pos),
            "z_value": float(Z[t]),
            "coefficient": float(model.coef_[t]),
            "contribution": float(model.coef_[t] * Z[t]),
            "value": np.nan,
            "train_min": np.nan,
            "train_max": np.nan,
            "extrapolating": bool(any(out_of_range[j] for j in pos)),
        }
        if len(pos) == 1:
            j = pos[0]
            row.update(value=float(raw[j]), train_min=float(lo[j]), train_max=float(hi[j]))
        rows.append(row)
    df = pd.DataFrame(rows)
    total = float(df["contribution"].sum())
    pred = float(inverse_transform(np.array([total]), model.transform)[0])
    if not np.isfinite(pred):
        raise ValueError("prediction overflow (input far outside the training range)")
    novelty = float(model.novelty(frame)[0])
    tmin, tmax = getattr(model, "target_min_", np.nan), getattr(model, "target_max_", np.nan)
    outside = bool(np.isfinite(tmin) and np.isfinite(tmax) and not (tmin <= pred <= tmax))
    df.attrs.update(
        prediction=pred,
        prediction_transformed=total,
        transform=model.transform,
        extrapolating=bool(out_of_range.any()),
        clipped=clipped,
        outside_targets=outside,
        target_range=(float(tmin), float(tmax)),
        novelty=novelty,
    )
    return df
