"""Input checks at the predictor's public boundary: clear messages naming the column and row."""

from __future__ import annotations

import numpy as np
import pandas as pd


def as_feature_frame(X, feature_names=None) -> pd.DataFrame:
    """Return ``X`` as a float DataFrame with string column names.

    Parameters
    ----------
    X : DataFrame or 2-D array-like
        Feature matrix, one row per region / data point.
    feature_names : sequence of str, optional
        Column names to use when ``X`` is an array (default ``x0, x1, ...``).

    Returns
    -------
    pandas.DataFrame
    """
    if isinstance(X, pd.DataFrame):
        df = X.copy()
        df.columns = [str(c) for c in df.columns]
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-D (rows x features), got an array of shape {arr.shape}")
        names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(arr.shape[1])]
        if len(names) != arr.shape[1]:
            raise ValueError(f"got {len(names)} feature names for {arr.shape[1]} columns")
        df = pd.DataFrame(arr, columns=names)
    if df.columns.duplicated().any():
        dup = sorted(set(df.columns[df.columns.duplicated()]))
        raise ValueError(f"duplicate column names: {dup}")
    bad = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])]
    if bad:
        raise ValueError(f"non-numeric feature columns: {bad} (drop them or pass only numeric features)")
    return df.astype(np.float64)


def check_finite(df: pd.DataFrame, what: str = "X") -> None:
    """Raise ``ValueError`` naming the first non-finite cell of ``df``."""
    vals = df.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(vals)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        n_bad = int(bad.sum())
        raise ValueError(
            f"{what} has {n_bad} non-finite value(s) (NaN or inf); first at row {df.index[r]!r}, "
            f"column {df.columns[c]!r}: {vals[r, c]!r}"
        )


def check_target(y, n_rows: int) -> np.ndarray:
    """Validate the response: finite, strictly positive (relative errors divide by it), right length.

    Parameters
    ----------
    y : array-like of shape (n,)
    n_rows : int
        Expected length.

    Returns
    -------
    numpy.ndarray of float64
    """
    arr = np.asarray(y, dtype=np.float64).reshape(-1)
    if arr.shape[0] != n_rows:
        raise ValueError(f"y has {arr.shape[0]} values but X has {n_rows} rows")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"target has {bad.size} non-finite value(s); first at row {int(bad[0])}: {arr[bad[0]]!r}")
    bad = np.flatnonzero(arr <= 0)
    if bad.size:
        raise ValueError(
            f"target must be > 0 (speedups; relative errors divide by it); row {int(bad[0])} is {arr[bad[0]]!r}"
            f" ({bad.size} such rows)"
        )
    return arr


def screen_columns(df: pd.DataFrame) -> tuple[list[str], dict[str, str]]:
    """Split columns into usable ones and excluded ones (constant, or duplicating an earlier column).

    Parameters
    ----------
    df : DataFrame of finite floats.

    Returns
    -------
    kept : list of str
        Usable columns, in input order.
    excluded : dict
        Excluded column -> reason (``"constant"`` or ``"duplicate of <col>"``).
    """
    kept: list[str] = []
    excluded: dict[str, str] = {}
    seen: dict[bytes, str] = {}
    for c in df.columns:
        v = df[c].to_numpy(dtype=np.float64)
        if v.size == 0 or np.all(v == v[0]):
            excluded[c] = "constant"
            continue
        key = np.ascontiguousarray(v).tobytes()
        if key in seen:
            excluded[c] = f"duplicate of {seen[key]}"
            continue
        seen[key] = c
        kept.append(c)
    return kept, excluded
