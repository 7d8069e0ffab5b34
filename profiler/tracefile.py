"""Trace files: Parquet (pyarrow, zstd, row groups of bounded size), readable by pandas and DuckDB.

Layout of one file = one region invocation:

* columns: the record columns of :mod:`profiler.trace`, one row per record;
* key-value metadata ``portcast.trace``: JSON with ``schema_version``, ``region`` (:class:`RegionInfo`)
  and ``static`` (the static instruction table).

Files are written atomically: records go to a hidden temporary file in the target folder, which is renamed
over the target only when the region ends (also when it ended with an error: the file then says
``complete: false``), so a reader never sees a half-written file under the final name.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from .atomic import make_temp
from .loops import LoopTable
from .trace import (
    COLUMN_NAMES,
    DEFAULT_CHUNK_RECORDS,
    READABLE_SCHEMA_VERSIONS,
    RECORD_COLUMNS,
    TRACE_SCHEMA_VERSION,
    RegionInfo,
    StaticTable,
    TraceChunk,
    TraceError,
    json_dumps,
    n_ops_of_version,
)

METADATA_KEY = b"portcast.trace"

ARROW_SCHEMA = pa.schema([pa.field(name, pa.from_numpy_dtype(dtype), nullable=False) for name, dtype in RECORD_COLUMNS])


def _metadata_blob(info: RegionInfo, static: StaticTable) -> bytes:
    return json_dumps(
        {"schema_version": TRACE_SCHEMA_VERSION, "region": info.to_json(), "static": static.to_json()}
    ).encode()


def region_file_name(info: RegionInfo) -> str:
    """``<region>.<invocation>.parquet`` with the region name made safe for a file name."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", info.name).strip("._") or "region"
    return f"{safe}.{info.invocation}.parquet"


class ParquetTraceWriter:
    """Writes one region invocation to ``path`` as a sink (see :class:`profiler.trace.TraceSink`)."""

    def __init__(self, path: str | os.PathLike, row_group_records: int = DEFAULT_CHUNK_RECORDS) -> None:
        self.path = Path(path)
        self.row_group_records = int(row_group_records)
        self._writer: pq.ParquetWriter | None = None
        self._tmp: str | None = None
        self._pending: list[TraceChunk] = []
        self._pending_n = 0
        self.n_records = 0

    def start_region(self, info: RegionInfo, static: StaticTable) -> None:
        fd, self._tmp = make_temp(self.path)
        os.close(fd)
        self._writer = pq.ParquetWriter(self._tmp, ARROW_SCHEMA, compression="zstd")
        self.n_records = 0

    def consume(self, chunk: TraceChunk) -> None:
        if self._writer is None:
            raise TraceError("ParquetTraceWriter.consume called before start_region")
        if len(chunk) == 0:
            return
        self._pending.append(TraceChunk(**{k: v.copy() for k, v in chunk.columns().items()}))
        self._pending_n += len(chunk)
        self.n_records += len(chunk)
        while self._pending_n >= self.row_group_records:
            self._flush(self.row_group_records)

    def _flush(self, n: int | None = None) -> None:
        if not self._pending:
            return
        merged = TraceChunk.concat(self._pending)
        n = len(merged) if n is None else n
        head, tail = merged.slice(0, n), merged.slice(n, len(merged))
        table = pa.Table.from_arrays([pa.array(getattr(head, name)) for name in COLUMN_NAMES], schema=ARROW_SCHEMA)
        self._writer.write_table(table, row_group_size=max(1, len(head)))
        self._pending = [tail] if len(tail) else []
        self._pending_n = len(tail)

    def end_region(self, info: RegionInfo, static: StaticTable) -> None:
        if self._writer is None:
            raise TraceError("ParquetTraceWriter.end_region called before start_region")
        try:
            while self._pending_n:
                self._flush(min(self._pending_n, self.row_group_records))
            self._writer.add_key_value_metadata({METADATA_KEY: _metadata_blob(info, static)})
            self._writer.close()
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        finally:
            self._writer = None
            self._tmp = None

    def abort(self) -> None:
        """Drop the temporary file (used only when the writer itself fails)."""
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:
                pass
        if self._tmp and os.path.exists(self._tmp):
            os.unlink(self._tmp)


def next_run_folder(folder: str | os.PathLike) -> Path:
    """Where a run's traces go when ``folder`` is asked for: ``folder`` itself when it holds no trace yet,
    else its first ``run-<k>`` subfolder (k = 2, 3, ...) that holds none, so that no earlier trace is
    replaced."""
    folder = Path(folder)
    if not any(folder.glob("*.parquet")):
        return folder
    k = 2
    while any((folder / f"run-{k}").glob("*.parquet")):
        k += 1
    return folder / f"run-{k}"


class TraceDirectorySink:
    """Writes every region invocation to ``<folder>/<region>.<invocation>.parquet``. With ``replace=False``
    a folder that already holds traces of an earlier run is left as it is and this run writes to its next
    ``run-<k>`` subfolder (:func:`next_run_folder`; ``redirected`` says so)."""

    def __init__(self, folder: str | os.PathLike, row_group_records: int = DEFAULT_CHUNK_RECORDS, *,
                 replace: bool = True) -> None:
        self.asked = Path(folder)
        self.folder = self.asked if replace else next_run_folder(folder)
        self.redirected = self.folder != self.asked
        self.row_group_records = row_group_records
        self._writer: ParquetTraceWriter | None = None
        self.written: list[Path] = []

    def start_region(self, info: RegionInfo, static: StaticTable) -> None:
        self._writer = ParquetTraceWriter(self.folder / region_file_name(info), self.row_group_records)
        self._writer.start_region(info, static)

    def consume(self, chunk: TraceChunk) -> None:
        self._writer.consume(chunk)

    def end_region(self, info: RegionInfo, static: StaticTable) -> None:
        self._writer.end_region(info, static)
        self.written.append(self._writer.path)
        self._writer = None


def write_trace(path: str | os.PathLike, info: RegionInfo, static: StaticTable, chunks) -> Path:
    """Write a whole trace (an iterable of chunks, or one chunk) to ``path``."""
    if isinstance(chunks, TraceChunk):
        chunks = [chunks]
    writer = ParquetTraceWriter(path)
    writer.start_region(info, static)
    n = 0
    for c in chunks:
        writer.consume(c)
        n += len(c)
    if not info.n_records:
        info.n_records = n
    writer.end_region(info, static)
    return writer.path


class TraceFile:
    """A trace file opened for reading; ``chunks()`` streams records without loading the whole file."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise TraceError(f"{self.path}: no such trace file")
        try:
            self._pf = pq.ParquetFile(self.path)
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise TraceError(f"{self.path}: not a readable Parquet trace file ({exc})") from None
        meta = self._pf.metadata.metadata or {}
        if METADATA_KEY not in meta:
            raise TraceError(f"{self.path}: Parquet file without Portcast trace metadata (key 'portcast.trace')")
        try:
            blob = json.loads(meta[METADATA_KEY])
        except json.JSONDecodeError as exc:
            raise TraceError(f"{self.path}: trace metadata is not valid JSON ({exc})") from None
        version = blob.get("schema_version")
        if isinstance(version, bool) or version not in READABLE_SCHEMA_VERSIONS:
            readable = ", ".join(str(v) for v in READABLE_SCHEMA_VERSIONS)
            raise TraceError(f"{self.path}: trace schema version {version!r}; this Portcast reads versions {readable}")
        #: the file's schema version (1: floating-point records of unknown precision, no FP64_* classes)
        self.schema_version = int(version)
        names = self._pf.schema_arrow.names
        missing = [c for c in COLUMN_NAMES if c not in names]
        if missing:
            raise TraceError(f"{self.path}: trace file lacks column(s) {missing}")
        self.info = RegionInfo.from_json(blob.get("region", {}))
        try:
            self.static = StaticTable.from_json(blob.get("static", []))
            self.loops = LoopTable.of(self.static)  # checks the loop fields (docs/trace-format.md, "Loops")
        except TraceError as exc:
            raise TraceError(f"{self.path}: {exc}") from None

    @property
    def n_records(self) -> int:
        return int(self._pf.metadata.num_rows)

    @property
    def n_row_groups(self) -> int:
        return int(self._pf.metadata.num_row_groups)

    def chunks(self, chunk_records: int = DEFAULT_CHUNK_RECORDS, *, validate: bool = True) -> Iterator[TraceChunk]:
        """The records in chunks of at most ``chunk_records``. ``validate``: check each chunk's operation
        classes, branch outcomes, sizes and static ids against the format (:meth:`check_chunk`; one vectorised
        pass) and raise :class:`TraceError` naming the file and the first bad row."""
        offset = 0
        try:
            for batch in self._pf.iter_batches(batch_size=chunk_records, columns=list(COLUMN_NAMES)):
                chunk = TraceChunk(**{name: batch.column(name).to_numpy(zero_copy_only=False)
                                      for name in COLUMN_NAMES})
                if validate:
                    self.check_chunk(chunk, offset)
                offset += len(chunk)
                yield chunk
        except TraceError:
            raise
        except Exception as exc:
            raise TraceError(f"{self.path}: corrupt trace data ({exc})") from None

    def _known_pcs(self):
        import numpy as np

        if getattr(self, "_pcs", None) is None:
            ids = np.array(sorted(int(e.pc) for e in self.static), dtype=np.int64) if len(self.static) else \
                np.zeros(0, np.int64)
            known = np.zeros(int(ids.max()) + 1 if len(ids) else 1, dtype=bool)
            known[ids] = True
            known[0] = False  # id 0 is reserved
            self._pcs = known
        return self._pcs

    def check_chunk(self, chunk: TraceChunk, offset: int = 0) -> None:
        """Raise :class:`TraceError` (``<file>: row <n>: ...``) for the first record of ``chunk`` whose operation
        class is not one of the file's schema version (0..19; version 1: 0..15), whose branch outcome is not 0
        or 1, whose size is negative, or whose static id is not in the file's static table (when it has one;
        without, a negative id). ``offset``: the chunk's first row in the file."""
        import numpy as np

        n_ops = n_ops_of_version(self.schema_version)
        pc = chunk.pc.astype(np.int64, copy=False)
        if len(self.static):
            known = self._known_pcs()
            inside = (pc >= 0) & (pc < len(known))
            bad_pc = ~inside
            bad_pc[inside] = ~known[pc[inside]]
        else:  # no static table (a synthetic or imported trace without source information): ids are opaque
            bad_pc = pc < 0
        checks = (
            (
                chunk.op >= n_ops,
                lambda i: f"op code {int(chunk.op[i])} is not an operation class of trace schema version "
                          f"{self.schema_version} (0..{n_ops - 1})",
            ),
            (chunk.taken > 1, lambda i: f"branch outcome {int(chunk.taken[i])} is not 0 or 1"),
            (chunk.size < 0, lambda i: f"size {int(chunk.size[i])} is negative"),
            (
                bad_pc,
                lambda i: f"static id {int(pc[i])} is not in the file's static table ({len(self.static)} entries)",
            ),
        )
        first = None
        for mask, what in checks:
            hits = np.flatnonzero(mask)
            if len(hits) and (first is None or hits[0] < first[0]):
                first = (int(hits[0]), what)
        if first is not None:
            i, what = first
            raise TraceError(f"{self.path}: row {offset + i}: {what(i)}")

    def read(self) -> TraceChunk:
        """All records in one chunk (small traces only)."""
        return TraceChunk.concat(self.chunks())

    def replay(self, sink, chunk_records: int = DEFAULT_CHUNK_RECORDS) -> None:
        """Send this file's region to a sink as a tracer would."""
        sink.start_region(self.info, self.static)
        for c in self.chunks(chunk_records):
            sink.consume(c)
        sink.end_region(self.info, self.static)


def is_trace_file(path: str | os.PathLike, *, strict: bool = False) -> bool:
    """Whether ``path`` is a Portcast trace: a ``.parquet`` file with ``portcast.trace`` metadata.

    Lets commands that take either a trace or another table (features, counters, datasets) tell them apart
    without reading the records.

    Parameters
    ----------
    path : path-like
    strict : raise :class:`TraceError` for a ``.parquet`` file that cannot be read, instead of answering False

    Returns
    -------
    bool
    """
    p = Path(path)
    if p.suffix.lower() != ".parquet" or not p.is_file():
        return False
    try:
        meta = pq.read_metadata(p).metadata or {}
    except Exception as exc:  # pyarrow raises several types on non-Parquet input
        if strict:
            raise TraceError(f"{p}: not a readable Parquet file ({exc})") from None
        return False
    return METADATA_KEY in meta


def read_trace(path: str | os.PathLike) -> tuple[RegionInfo, StaticTable, TraceChunk]:
    tf = TraceFile(path)
    return tf.info, tf.static, tf.read()
