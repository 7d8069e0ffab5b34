"""The feature table: one row per region (or trace, or kernel x size), one column per feature, in CSV, JSON
or Parquet, with a schema version. The one reader and writer every command uses.

Layouts (``portcast.features``, schema version 1):

* **CSV**: a first comment line ``# portcast.features schema_version=1``, then an ordinary header and rows
  (a CSV without the comment line, as people write them, is read too);
* **JSON**: ``{"format": "portcast.features", "schema_version": 1, ..., "rows": [{column: value, ...}, ...]}``
  (a bare list of row objects, or one object, is read too);
* **Parquet**: the table, with ``{"schema_version": 1, ...}`` under the file metadata key ``portcast.features``
  (a Parquet file without it is read too).

Reading refuses a table whose column names repeat (naming them), a newer schema version, and a JSON document
of another layout, each with one line naming the file.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from core.atomic import atomic_path
from core.jsonfile import read_json

FORMAT = "portcast.features"
SCHEMA_VERSION = 1
FORMATS = ("csv", "json", "parquet")
_CSV_HEADER = f"# {FORMAT} schema_version="
_PARQUET_KEY = FORMAT.encode()


class FeatureTableError(ValueError):
    """A feature table that cannot be read or written; the message names the file."""


def table_format(path: str | os.PathLike) -> str:
    """``csv``, ``json`` or ``parquet`` from the file name (``.csv``, ``.csv.gz``, ``.json``, ``.parquet``)."""
    name = Path(path).name.lower()
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith(".json"):
        return "json"
    if name.endswith(".parquet"):
        return "parquet"
    raise FeatureTableError(f"{path}: unsupported feature table type (use .csv, .csv.gz, .json or .parquet)")


def _duplicates(names) -> list[str]:
    seen, dup = set(), []
    for n in names:
        if n in seen and n not in dup:
            dup.append(n)
        seen.add(n)
    return dup


def write_feature_table(frame: pd.DataFrame, path: str | os.PathLike, fmt: str | None = None, *,
                        extra: dict[str, Any] | None = None) -> Path:
    """Write ``frame`` (its index becomes a column when it is named) atomically as ``fmt`` (default: from the
    file name). ``extra``: more metadata (JSON: top-level keys; Parquet: in the metadata; CSV: not kept)."""
    path = Path(path)
    fmt = fmt or table_format(path)
    if fmt not in FORMATS:
        raise FeatureTableError(f"{path}: format must be one of {FORMATS}, got {fmt!r}")
    flat = frame.reset_index() if frame.index.name is not None else frame
    dup = _duplicates([str(c) for c in flat.columns])
    if dup:
        raise FeatureTableError(f"{path}: column names repeat: {', '.join(dup)}")
    meta = {"schema_version": SCHEMA_VERSION, **(extra or {})}
    with atomic_path(path) as tmp:
        if fmt in ("csv", "json"):
            tmp.write_text(feature_table_text(frame, fmt, extra=extra), encoding="utf-8")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(flat, preserve_index=False)
            table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                                   _PARQUET_KEY: json.dumps(meta).encode()})
            pq.write_table(table, tmp)
    return path


def feature_table_text(frame: pd.DataFrame, fmt: str, *, extra: dict[str, Any] | None = None) -> str:
    """The CSV or JSON text :func:`write_feature_table` writes (for printing to the terminal)."""
    flat = frame.reset_index() if frame.index.name is not None else frame
    if fmt == "csv":
        return f"{_CSV_HEADER}{SCHEMA_VERSION}\n" + flat.to_csv(index=False)
    if fmt == "json":
        rows = [{str(k): (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
                for r in flat.to_dict(orient="records")]
        doc = {"format": FORMAT, "schema_version": SCHEMA_VERSION, **(extra or {}), "rows": rows}
        return json.dumps(doc, indent=1) + "\n"
    raise FeatureTableError(f"no text form for format {fmt!r} (csv or json)")


def _check_version(path: Path, version: Any) -> None:
    if version is None:
        return
    if not isinstance(version, int) or version > SCHEMA_VERSION or version < 1:
        raise FeatureTableError(f"{path}: feature table schema_version {version!r}; this Portcast reads up to "
                                f"{SCHEMA_VERSION}")


def read_feature_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a feature table written by :func:`write_feature_table` (or a plain CSV / JSON / Parquet table of
    the same shape). ``attrs["feature_table"]`` holds its metadata (``{}`` for a plain one)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    fmt = table_format(path)
    meta: dict = {}
    try:
        if fmt == "csv":
            import gzip

            opener = gzip.open if path.name.lower().endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8", newline="") as fh:
                text = fh.read()
            if text.startswith(_CSV_HEADER):
                first, _, text = text.partition("\n")
                try:
                    meta = {"schema_version": int(first[len(_CSV_HEADER):].strip())}
                except ValueError:
                    raise FeatureTableError(f"{path}: line 1: unreadable schema version {first!r}") from None
                _check_version(path, meta["schema_version"])
            header = next(csv.reader(io.StringIO(text)), [])
            dup = _duplicates(header)
            if dup:
                raise FeatureTableError(f"{path}: column names repeat: {', '.join(dup)}")
            frame = pd.read_csv(io.StringIO(text))
        elif fmt == "json":
            doc = read_json(path, what="feature table")
            if isinstance(doc, dict) and "rows" in doc:
                if doc.get("format", FORMAT) != FORMAT:
                    raise FeatureTableError(f"{path}: format {doc.get('format')!r} is not {FORMAT!r}")
                _check_version(path, doc.get("schema_version"))
                meta = {k: v for k, v in doc.items() if k != "rows"}
                rows = doc["rows"]
            else:
                rows = [doc] if isinstance(doc, dict) else doc
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise FeatureTableError(f"{path}: JSON features must be a list of row objects (or one object, or "
                                        f"a {FORMAT} document with 'rows')")
            _check_json_keys(path)
            frame = pd.DataFrame(rows)
        else:
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(path)
            names = pf.schema_arrow.names
            dup = _duplicates(names)
            if dup:
                raise FeatureTableError(f"{path}: column names repeat: {', '.join(dup)}")
            raw = (pf.schema_arrow.metadata or {}).get(_PARQUET_KEY)
            if raw:
                meta = json.loads(raw)
                _check_version(path, meta.get("schema_version"))
            frame = pf.read().to_pandas()
    except (FeatureTableError, FileNotFoundError):
        raise
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise FeatureTableError(f"{path}: cannot read the feature table ({exc})") from None
    frame.attrs["feature_table"] = meta
    return frame


def _check_json_keys(path: Path) -> None:
    """Refuse a JSON table whose objects repeat a key (json keeps the last one silently)."""
    def hook(pairs):
        dup = _duplicates([k for k, _ in pairs])
        if dup:
            raise FeatureTableError(f"{path}: column names repeat: {', '.join(dup)}")
        return dict(pairs)

    json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=hook)
