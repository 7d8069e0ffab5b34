"""Filling the Eiger trials database from tables: CSV or Parquet files of trials, feature tables with
measured results, machine tables, and the bundled AIWC dataset (papers/001; the database is
:mod:`predictor.eiger.db`).

Each import function takes a :class:`TrialsDB` (the import is then one transaction of its own) or a
:class:`TrialsWriter` (it joins that transaction): ``portcast eiger import`` runs one inside
:meth:`TrialsDB.import_once`, which stores the rows and the record of the import together, so an import is
there whole or not at all, and the same import is not stored twice.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .db import DatabaseError, TrialsDB, TrialsWriter


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV (optionally gzipped) or Parquet table.

    Parameters
    ----------
    path : ``.csv``, ``.csv.gz`` or ``.parquet`` file.

    Returns
    -------
    DataFrame; ``df.attrs["source"]`` is the path and ``df.attrs["first_line"]`` the file line of the first
    data row (2 for CSV with a header, None for Parquet) so errors can name lines.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    name = path.name.lower()
    try:
        if name.endswith(".parquet") or name.endswith(".pq"):
            df = pd.read_parquet(path)
            first = None
        elif name.endswith(".csv") or name.endswith(".csv.gz"):
            df = pd.read_csv(path)
            first = 2
        else:
            raise DatabaseError(f"{path}: unknown table format; expected .csv, .csv.gz or .parquet")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise DatabaseError(f"{path}: cannot read the table: {str(exc).strip()}") from None
    except Exception as exc:  # pyarrow errors have no common public base class
        if type(exc).__module__.startswith("pyarrow"):
            raise DatabaseError(f"{path}: cannot read the Parquet table: {exc}") from None
        raise
    df.attrs["source"] = str(path)
    df.attrs["first_line"] = first
    return df


def frame_to_records(df: pd.DataFrame, result_cols: Sequence[str], application_col: str | None = None,
                     machine_col: str | None = None, dataset_col: str | None = None,
                     kernel_col: str | None = None, metric_cols: Sequence[str] | None = None,
                     application: str | None = None, machine: str | None = None) -> list[dict]:
    """Turn a table (one row per trial) into trial records for :meth:`TrialsDB.add_trials`.

    Parameters
    ----------
    df : the table (``df.attrs["source"]``/``["first_line"]`` name rows in errors, see :func:`read_table`).
    result_cols : columns holding results.
    application_col, machine_col : columns naming the application and machine, or give a constant
        ``application`` / ``machine`` instead.
    dataset_col, kernel_col : optional columns naming the dataset and kernel.
    metric_cols : application metric columns (None: every other column with at least one number in it;
        a non-number in such a column is an error naming its line).
    application, machine : constant names for all rows.

    Returns
    -------
    list of record dicts.
    """
    src = df.attrs.get("source", "table")
    first = df.attrs.get("first_line")

    def row_name(i: int) -> str:
        return f"{src}: line {first + i}" if first is not None else f"{src}: row {i}"

    if not result_cols:
        raise DatabaseError(f"{src}: name at least one result column")
    for label, col in (("application", application_col), ("machine", machine_col)):
        const = application if label == "application" else machine
        if (col is None) == (const is None):
            raise DatabaseError(f"{src}: give either a {label} column or one {label} name for all rows")
    used = [c for c in (application_col, machine_col, dataset_col, kernel_col) if c is not None]
    for c in list(used) + list(result_cols) + list(metric_cols or []):
        if c not in df.columns:
            raise DatabaseError(f"{src}: no column {c!r} (columns: {', '.join(map(str, df.columns))})")
    if metric_cols is None:  # every other column holding at least one number (text-only columns are skipped)
        metric_cols = [c for c in df.columns if c not in used and c not in result_cols
                       and (pd.api.types.is_numeric_dtype(df[c])
                            or pd.to_numeric(df[c], errors="coerce").notna().any())]
    num_cols = list(metric_cols) + list(result_cols)
    values = {}
    for c in num_cols:
        col = pd.to_numeric(df[c], errors="coerce")
        bad = col.isna() & df[c].notna() | ~np.isfinite(col.fillna(0.0))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DatabaseError(f"{row_name(i)}: field {c!r} is not a finite number: {df[c].iloc[i]!r}")
        values[c] = col.to_numpy(dtype=float)
    texts = {}
    for c in used:
        s = df[c]
        miss = s.isna() | (s.astype(str).str.strip() == "")
        if miss.any():
            i = int(np.flatnonzero(miss.to_numpy())[0])
            raise DatabaseError(f"{row_name(i)}: field {c!r} is empty")
        texts[c] = s.astype(str).tolist()
    recs = []
    for i in range(len(df)):
        res = {c: values[c][i] for c in result_cols if not math.isnan(values[c][i])}
        if not res:
            raise DatabaseError(f"{row_name(i)}: no result value (columns {', '.join(result_cols)} are empty)")
        recs.append({
            "application": texts[application_col][i] if application_col else application,
            "machine": texts[machine_col][i] if machine_col else machine,
            "dataset": texts[dataset_col][i] if dataset_col else None,
            "kernel": texts[kernel_col][i] if kernel_col else None,
            "metrics": {c: values[c][i] for c in metric_cols if not math.isnan(values[c][i])},
            "results": res,
        })
    return recs


def import_table(db: TrialsDB | TrialsWriter, df: pd.DataFrame, result_cols: Sequence[str],
                 progress: Callable[[int, int], None] | None = None, **columns) -> int:
    """Import a table of trials (see :func:`frame_to_records` for ``columns``), all rows in one transaction;
    returns the trial count."""
    recs = frame_to_records(df, result_cols, **columns)
    db.add_trials(recs, progress=progress)
    return len(recs)


def feature_table_records(df: pd.DataFrame, machine: str, result_cols: Sequence[str]) -> list[dict]:
    """The trial records of a Portcast feature table (:func:`import_feature_table`)."""
    src = df.attrs.get("source", "feature table")
    app_col = next((c for c in ("application", "kernel", "region", "name") if c in df.columns), None)
    if app_col is None:
        raise DatabaseError(f"{src}: a feature table needs an application, kernel, region or name column")
    kernel_col = next((c for c in ("kernel", "region") if c in df.columns and c != app_col), None)
    dataset_col = next((c for c in ("dataset", "size", "input") if c in df.columns), None)
    return frame_to_records(df, result_cols, application_col=app_col, machine=machine, kernel_col=kernel_col,
                            dataset_col=dataset_col)


def import_feature_table(db: TrialsDB | TrialsWriter, df: pd.DataFrame, machine: str,
                         result_cols: Sequence[str], progress: Callable[[int, int], None] | None = None) -> int:
    """Import a Portcast feature table: one row per profiled region, its feature columns, and measured
    result columns (e.g. GPU time) for ``machine``; all rows in one transaction.

    The application is read from the first of the columns ``application``, ``kernel``, ``region``,
    ``name`` present; ``kernel``/``region`` also fills the trial's kernel, ``dataset``/``size``/``input``
    its dataset, and every other numeric column is an application metric.

    Returns
    -------
    number of trials imported.
    """
    recs = feature_table_records(df, machine, result_cols)
    db.add_trials(recs, progress=progress)
    return len(recs)


def machine_rows(df: pd.DataFrame, name_col: str = "device", metric_cols: Sequence[str] | None = None
                 ) -> list[tuple[str, dict]]:
    """``(name, metric vector)`` of every row of a machines table (:func:`import_machines`)."""
    src = df.attrs.get("source", "machines table")
    if name_col not in df.columns:
        raise DatabaseError(f"{src}: no column {name_col!r}")
    cols = list(metric_cols) if metric_cols is not None else [
        c for c in df.columns if c != name_col and pd.api.types.is_numeric_dtype(df[c])]
    for c in cols:
        if c not in df.columns:
            raise DatabaseError(f"{src}: no column {c!r}")
    return [(str(row[name_col]), {c: row[c] for c in cols}) for _, row in df.iterrows()]


def import_machines(db: TrialsDB | TrialsWriter, df: pd.DataFrame, name_col: str = "device",
                    metric_cols: Sequence[str] | None = None) -> int:
    """Import machine metric vectors from a table with one row per machine, all in one transaction; returns
    the machine count."""
    rows = machine_rows(df, name_col, metric_cols)

    def write(w) -> int:
        for name, vec in rows:
            w.add_machine(name, vec)
        return len(rows)

    return db.write(write) if isinstance(db, TrialsDB) else write(db)


def import_aiwc(db: TrialsDB | TrialsWriter, progress: Callable[[int, int], None] | None = None) -> int:
    """Import the vendored AIWC dataset (1560 trials: median over runs) with the device table's machine
    vectors. Results: ``kernel_time`` and ``total_time``; dataset = problem size; kernel = kernel name.

    The machines and the trials are one transaction.

    Returns
    -------
    number of trials imported.
    """
    if isinstance(db, TrialsDB):
        return db.write(lambda w: import_aiwc(w, progress=progress))
    from predictor.eiger.aiwc_trials import AIWC_METRICS, aiwc_trials
    from predictor.eiger.devices import load_devices, machine_vectors

    devs = load_devices()
    for name, vec in machine_vectors().items():
        db.add_machine(name, vec, description=str(devs.loc[name, "model"]))
    df = aiwc_trials(with_devices=False)
    recs = frame_to_records(df, ["kernel_time", "total_time"], application_col="application",
                            machine_col="device", dataset_col="size", kernel_col="kernel",
                            metric_cols=list(AIWC_METRICS))
    for r, n in zip(recs, df["n_runs"].tolist()):
        r["properties"] = {"source": "aiwc", "n_runs": int(n), "aggregate": "median"}
    db.add_trials(recs, progress=progress)
    return len(recs)
