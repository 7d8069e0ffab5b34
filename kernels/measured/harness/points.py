"""The ports traced at their measured points: :func:`trace_point` runs a port's region under the profiler with a
:class:`features.work.WorkSink` (threads, instructions, loads, stores, the exact bytes touched), the feature
engine and (``simulate``) the SIMT model on every GPU of the point's data, one row per point;
:func:`write_points_table` saves the rows (Parquet, schema-versioned) as the committed table
``kernels/measured/data/measured_points.parquet``, which :func:`read_points_table` reads back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from core.atomic import atomic_path
from features.work import BoundedSink, ThreadRecordsSink, WorkSink
from gpu_models.simt.slice_sample import SAMPLE_RECORDS, SLICE_SMS, WHOLE_RECORDS, sample_threads, simulated_times
from kernels.measured.harness.sources import ROOT, data_gpus
from kernels.measured.spec import FEATURES_LABEL

POINTS_SCHEMA_VERSION = 1
SHIPPED_POINTS = ROOT / "kernels" / "measured" / "data" / "measured_points.parquet"


def _default_tracer() -> Callable:
    from profiler.session import trace_function

    return trace_function


def trace_point(spec, label: str, *, seed: int = 0, tracer: Callable | None = None,
                features: bool = True, simulate: bool = False, sample: bool = False,
                feature_records: int | None = None) -> dict:
    """One row: the keys, ``work()``'s global and local work, :class:`WorkSink`'s counts, (``features``) the
    feature engine's features (``f_<name>``; only for a region of at most ``feature_records`` records if
    given) and (``simulate``) the SIMT model's time in seconds on the preset of every GPU of the point's data
    (``sim_<preset>``; blocks of the port's local work size) of the region at ``spec.points[label]``.
    ``sample``: keep only the records of the blocks that two waves on a slice of each GPU need and estimate
    the rest (:func:`simulated_times`; ``sampled`` says whether it did, ``slice_sms`` on how many SMs; a
    region whose threads all fit is simulated whole if it has at most :data:`WHOLE_RECORDS` thread records),
    so that a region of any size is simulated in bounded memory and time. A sample of more than
    :data:`SAMPLE_RECORDS` records falls back to a 1-SM slice, and past that the region is not simulated."""
    params = spec.params(label)
    g, loc = spec.work(params)
    work = WorkSink()
    sinks: list[Any] = [work]
    fsink = ssink = None
    if features:
        from features import FeatureSink

        # (bounded: no other reference to the feature sink, so that dropping it frees its state)
        fsink = FeatureSink() if feature_records is None else BoundedSink(FeatureSink(), feature_records)
        sinks.append(fsink)
    presets = sorted(set(data_gpus(spec.source).values()))
    if simulate:
        ssink = ThreadRecordsSink(sample_threads(presets, int(loc)), SAMPLE_RECORDS,
                                  sample_threads(presets, int(loc), slice_sms=1)) if sample else None
        ssink = ssink or ThreadRecordsSink()
        sinks.append(ssink)
    tracer = tracer or _default_tracer()
    tracer(spec.cpu, spec.make_inputs(params, seed), region=spec.name, sinks=sinks)
    row = {"port": spec.name, "source": spec.source, "application": spec.application, "kernel": spec.kernel,
           "point": label, "global_work": int(g), "local_work": int(loc), **work.results[-1]}
    if isinstance(fsink, BoundedSink):
        fsink = fsink.inner
    if fsink is not None and fsink.results:
        row.update({f"f_{k}": float(v) for k, v in fsink.results[-1][1].items()})
    if ssink is not None and ssink.overflow:
        row["not_simulated"] = f"the sample holds more than {SAMPLE_RECORDS} records"
    if ssink is not None and ssink.chunk is not None:
        complete = ssink.kept == ssink.total and (not sample or ssink.kept <= WHOLE_RECORDS)
        row["sampled"] = not complete
        row["slice_sms"] = 0 if complete else 1 if ssink.fell_back else SLICE_SMS
        times = simulated_times(ssink.chunk, ssink.threads, int(loc), presets, complete=complete, name=spec.name,
                                slice_sms=1 if ssink.fell_back else SLICE_SMS, static=ssink.static)
        row.update({f"sim_{p}": t for p, t in times.items()})
    return row


def selected_points(specs, labels: Iterable[str] | None = None,
                    max_global_work: int | None = None) -> list[tuple[Any, str]]:
    """(port, label) pairs to trace: every port in ``specs`` at each of its points (and its feature point, label
    ``"features"``, if it has one), or only at ``labels`` if given (a point label for every port that has it,
    ``"test"`` for the port's test point, or ``"<port>@<label>"`` for one port's point), without points of more
    than ``max_global_work`` work items."""
    labels = list(labels) if labels is not None else None
    out = []
    for spec in specs:
        extra = [FEATURES_LABEL] if spec.feature_point is not None else []
        mine = list(spec.points) + extra if labels is None else [
            lab.split("@", 1)[1] if "@" in lab else lab for lab in labels
            if "@" not in lab or lab.split("@", 1)[0] == spec.name]
        for label in dict.fromkeys(mine):
            if label not in ("test", *extra) and label not in spec.points:
                continue
            params = spec.params(label)
            if max_global_work is None or spec.work(params)[0] <= max_global_work:
                out.append((spec, label))
    return out


def trace_points(specs, labels: Iterable[str] | None = None, *, seed: int = 0, tracer: Callable | None = None,
                 features: bool = True, simulate: bool = False, sample: bool = False,
                 feature_records: int | None = None, max_global_work: int | None = None,
                 progress: Callable[[str, str], None] | None = None) -> pd.DataFrame:
    """Rows of :func:`trace_point` at the :func:`selected_points` of ``specs``."""
    rows = []
    for spec, label in selected_points(specs, labels, max_global_work):
        rows.append(trace_point(spec, label, seed=seed, tracer=tracer, features=features, simulate=simulate,
                                sample=sample, feature_records=feature_records))
        if progress:
            progress(spec.name, label)
    return pd.DataFrame(rows)


def write_points_table(table: pd.DataFrame, out: str | os.PathLike, *, extra: dict | None = None) -> Path:
    """Write the traced points as Parquet (atomically), the schema version and ``extra`` in its metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    if out.suffix.lower() != ".parquet":
        raise ValueError(f"{out}: the measured points table is written as Parquet; give a path ending in .parquet")
    if not out.parent.exists():
        raise FileNotFoundError(f"{out.parent}: output folder does not exist")
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    meta = {"schema_version": POINTS_SCHEMA_VERSION, "kind": "portcast.measured_points", "n_rows": int(len(table)),
            "extra": extra or {}}
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}),
                                           b"portcast.measured": json.dumps(meta).encode()})
    with atomic_path(out) as tmp:
        pq.write_table(arrow, tmp, compression="zstd")
    return out


def read_points_table(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The traced points table (default: the shipped one); refuses another kind or schema version."""
    import pyarrow.parquet as pq

    path = Path(path or SHIPPED_POINTS)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no measured points table (make one with `portcast measured trace`)")
    meta = (pq.read_schema(path).metadata or {}).get(b"portcast.measured")
    info = json.loads(meta) if meta else {}
    if info.get("kind") != "portcast.measured_points" or info.get("schema_version") != POINTS_SCHEMA_VERSION:
        raise ValueError(f"{path}: not a measured points table of schema version {POINTS_SCHEMA_VERSION} "
                         f"(kind {info.get('kind')!r}, version {info.get('schema_version')!r})")
    return pd.read_parquet(path)


def points_table_extra(path: str | os.PathLike) -> dict:
    """The ``extra`` metadata of a points table (the command that made it, its date, ...)."""
    import pyarrow.parquet as pq

    meta = (pq.read_schema(Path(path)).metadata or {}).get(b"portcast.measured")
    return json.loads(meta).get("extra", {}) if meta else {}


def merge_points_tables(tables: Iterable[pd.DataFrame], specs: dict) -> pd.DataFrame:
    """Rows of several points tables as one, in the order of ``specs`` and of each port's points; refuses a
    (port, point) that two of them hold."""
    both = pd.concat(list(tables), ignore_index=True)
    dup = both[both.duplicated(["port", "point"], keep=False)]
    if len(dup):
        r = dup.iloc[0]
        raise ValueError(f"{r.port} at {r.point} is in more than one table")
    rank = {(name, label): (i, j) for i, (name, spec) in enumerate(specs.items())
            for j, label in enumerate([*spec.points, FEATURES_LABEL, "test"])}
    key = [rank.get((r.port, r.point), (len(specs), 0)) for r in both.itertuples(index=False)]
    order = sorted(range(len(both)), key=lambda i: key[i])
    return both.iloc[order].reset_index(drop=True)
