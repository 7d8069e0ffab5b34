"""Characterisation: trace every corpus kernel at every size and tabulate its features.

Each (kernel, size) point runs the kernel's CPU region once under the profiler
(``profiler.trace_function(spec.cpu, inputs, region=name, sinks=[features.FeatureSink()])``) and
becomes one row: ``kernel, size, n, category`` followed by the feature engine's features. The table
is the training-feature side of the corpus (the calibration table is the response side); it needs no GPU.
The tracer and the sink factory are parameters so the table assembly can be tested on its own.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from core.atomic import atomic_path

FEATURE_TABLE_SCHEMA_VERSION = 1
DEFAULT_SIZES = ("tiny", "small", "medium", "large")
#: The corpus's characterised feature table, shipped as package data (regenerate: see docs/kernels.md).
SHIPPED_TABLE = Path(__file__).resolve().parents[2] / "kernels" / "data" / "corpus_features.parquet"
KEY_COLUMNS = ("kernel", "size", "n", "category")


def default_tracer() -> Callable:
    """``profiler.trace_function`` (from ``profiler.session`` while the package does not re-export it)."""
    import profiler

    fn = getattr(profiler, "trace_function", None)
    if fn is None:
        from profiler.session import trace_function as fn
    return fn


def default_sink_factory() -> Callable[[], Any]:
    """``features.FeatureSink``."""
    from features import FeatureSink

    return FeatureSink


def characterize(points, *, tracer: Callable | None = None, sink_factory: Callable[[], Any] | None = None,
                 seed: int = 0, progress: Callable[[str, str], None] | None = None):
    """Trace every point and return the feature table.

    Parameters
    ----------
    points : list of (KernelSpec, size name) (see :func:`portcast.calibration.select`).
    tracer : called as ``tracer(spec.cpu, inputs, region=name, sinks=[sink])`` (default
        ``profiler.trace_function``).
    sink_factory : makes a fresh sink per point whose ``results`` is a list of
        ``(RegionInfo, pandas.Series)`` after the region (default ``features.FeatureSink``).
    seed : input seed passed to ``make_inputs``.
    progress : called with (kernel, size) after each point.

    Returns
    -------
    pandas.DataFrame, one row per point: :data:`KEY_COLUMNS`, then the features (union of the
    feature names in first-seen order; a feature a region lacks is NaN).
    """
    import pandas as pd

    tracer = tracer or default_tracer()
    sink_factory = sink_factory or default_sink_factory()
    rows: list[dict[str, Any]] = []
    feature_order: dict[str, None] = {}
    for spec, size in points:
        n = spec.sizes[size]
        inputs = spec.make_inputs(n, seed)
        sink = sink_factory()
        tracer(spec.cpu, inputs, region=spec.name, sinks=[sink])
        results = getattr(sink, "results", None)
        if not results:
            raise RuntimeError(f"kernel {spec.name!r} size {size!r}: the feature sink produced no result")
        info, feats = results[-1]
        if getattr(info, "complete", True) is False:
            raise RuntimeError(f"kernel {spec.name!r} size {size!r}: trace incomplete ({info.error})")
        clash = set(KEY_COLUMNS) & set(feats.index)
        if clash:
            raise RuntimeError(f"feature name(s) {sorted(clash)} collide with the table's key columns")
        row = {"kernel": spec.name, "size": size, "n": int(n), "category": spec.category}
        for name, value in feats.items():
            feature_order.setdefault(str(name), None)
            row[str(name)] = value
        rows.append(row)
        if progress is not None:
            progress(spec.name, size)
    return pd.DataFrame(rows, columns=list(KEY_COLUMNS) + list(feature_order))


def write_feature_table(table, out: str | os.PathLike, *, seed: int = 0, extra: dict | None = None) -> Path:
    """Write the feature table as Parquet (atomically) with its schema version in the file metadata.

    Parameters
    ----------
    table : the DataFrame from :func:`characterize`.
    out : path ending in ``.parquet``.
    seed : the input seed, recorded in the metadata.
    extra : more metadata to record (JSON-serialisable).

    Returns
    -------
    The written path. The key-value metadata ``portcast.features`` holds JSON with ``schema_version``,
    ``kind``, ``seed``, ``n_rows`` and ``extra``.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    if out.suffix.lower() != ".parquet":
        raise ValueError(f"{out}: the feature table is written as Parquet; give a path ending in .parquet")
    if not out.parent.exists():
        raise FileNotFoundError(f"{out.parent}: output folder does not exist")
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    meta = {"schema_version": FEATURE_TABLE_SCHEMA_VERSION, "kind": "portcast.corpus_features", "seed": seed,
            "n_rows": int(len(table)), "extra": extra or {}}
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}),
                                           b"portcast.features": json.dumps(meta).encode()})
    with atomic_path(out) as tmp:
        pq.write_table(arrow, tmp, compression="zstd")
    return out


def read_feature_table_metadata(path: str | os.PathLike) -> dict:
    """The ``portcast.features`` metadata of a feature table written by :func:`write_feature_table`."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).schema_arrow.metadata or {}
    if b"portcast.features" not in meta:
        raise ValueError(f"{path}: not a Portcast corpus feature table (no portcast.features metadata)")
    return json.loads(meta[b"portcast.features"])


def load_corpus_features(path: str | os.PathLike | None = None):
    """The characterised feature table of the corpus (one row per kernel x size), as a DataFrame.

    Parameters
    ----------
    path : a table written by :func:`write_feature_table`; default the one shipped with Portcast.

    Returns
    -------
    pandas.DataFrame
        :data:`KEY_COLUMNS` then the features; ``attrs["portcast.features"]`` holds the file's metadata.
    """
    import pandas as pd

    path = SHIPPED_TABLE if path is None else Path(path)
    meta = read_feature_table_metadata(path)
    if meta.get("schema_version") != FEATURE_TABLE_SCHEMA_VERSION:
        raise ValueError(f"{path}: feature table schema version {meta.get('schema_version')!r}; this Portcast "
                         f"reads version {FEATURE_TABLE_SCHEMA_VERSION}")
    table = pd.read_parquet(path)
    table.attrs["portcast.features"] = meta
    return table
