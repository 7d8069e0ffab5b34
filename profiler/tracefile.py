"""Trace files: Parquet (pyarrow, zstd, row groups of bounded size), readable by pandas and DuckDB.

Layout of one file = one region invocation:

* columns: the record columns of :mod:`core.trace_schema`, one row per record;
* key-value metadata ``portcast.trace``: JSON with ``schema_version``, ``region`` (:class:`RegionInfo`)
  and ``static`` (the static instruction table).

Files are written atomically: records go to a hidden temporary file in the target folder, which is renamed
over the target only when the region ends (also when it ended with an error: the file then says
``complete: false``), so a reader never sees a half-written file under the final name.

File names cannot collide: each region name gets its own stem (:func:`region_stem`), and a run writes into a
folder it has claimed (:func:`claim_run_folder`), so two runs at once never write the same file. A file that
cannot be written raises :class:`TraceWriteError`, which names the file and the cause.
"""

from __future__ import annotations

import errno as _errno
import hashlib
import json
import os
import re
import weakref
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from core.atomic import OutputWriteError, _umask, make_temp
from core.trace_schema import (
    COLUMN_NAMES,
    READABLE_SCHEMA_VERSIONS,
    RECORD_COLUMNS,
    TRACE_SCHEMA_VERSION,
    TraceError,
    n_ops_of_version,
)

from .loops import LoopTable
from .trace import DEFAULT_CHUNK_RECORDS, RegionInfo, StaticTable, TraceChunk, json_dumps

METADATA_KEY = b"portcast.trace"

ARROW_SCHEMA = pa.schema([pa.field(name, pa.from_numpy_dtype(dtype), nullable=False) for name, dtype in RECORD_COLUMNS])


def _metadata_blob(info: RegionInfo, static: StaticTable) -> bytes:
    return json_dumps(
        {"schema_version": TRACE_SCHEMA_VERSION, "region": info.to_json(), "static": static.to_json()}
    ).encode()


#: the longest stem a region name keeps as it is; a longer name is cut to fit beside its hash
STEM_MAX = 100
#: hex digits of the hash that tells apart the names whose stems are not the name itself
STEM_HASH = 10
_PLAIN_STEM = re.compile(r"[a-z0-9_][a-z0-9_.-]*")
_HASHED_STEM = re.compile(rf".*-[0-9a-f]{{{STEM_HASH}}}")


def region_stem(name: str) -> str:
    """The file-name stem of region ``name``, one per exact name.

    A name of lower-case ASCII letters, digits, ``_``, ``.`` and ``-`` (not starting with ``.`` or ``-``), at
    most :data:`STEM_MAX` characters long and not ending like a hashed stem, is its own stem (``saxpy``). Any
    other name is made safe (each run of other characters becomes ``_``, at most 89 characters kept, ``region``
    when nothing is left) and gets ``-`` and the first 10 hex digits of the SHA-256 of its exact UTF-8 bytes:
    ``a/b`` -> ``a_b-c14cddc033``. So two names never share a stem, also on a file system that ignores case,
    and no stem is ``.``, ``..``, empty or too long for a file name. The exact name stays in the file's
    metadata (``region.name``)."""
    if len(name) <= STEM_MAX and _PLAIN_STEM.fullmatch(name) and not _HASHED_STEM.fullmatch(name):
        return name
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._-")[:STEM_MAX - STEM_HASH - 1].rstrip("._-")
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:STEM_HASH]
    return f"{safe or 'region'}-{digest}"


def region_file_name(info: RegionInfo) -> str:
    """``<stem>.<invocation>.parquet``, the stem of the region's name by :func:`region_stem`."""
    return f"{region_stem(info.name)}.{info.invocation}.parquet"


class TraceWriteError(TraceError, OutputWriteError):
    """A trace file or folder that could not be written: ``path`` (the file's final name, or the folder) and
    ``reason`` (the system's words for ``errno``: "No space left on device", "Read-only file system", ...)."""

    def __init__(self, path: str | os.PathLike, cause: BaseException | str, what: str = "trace") -> None:
        OutputWriteError.__init__(self, path, cause, what)


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
        os.chmod(self._tmp, 0o666 & ~_umask())  # the permissions a plain open() gives, not mkstemp's 0600
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


def _holds_traces(folder: Path) -> bool:
    return any(folder.glob("*.parquet"))


def _lock(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding an exclusive ``flock`` on it, or None when another process (or
    another claim in this one) holds it. Where there is no ``flock`` (Windows), -1: the folder is taken
    unlocked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return -1
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:  # a file system without flock: taken unlocked
        os.close(fd)
        return -1
    return fd


def claim_run_folder(folder: str | os.PathLike) -> tuple[Path, int, bool, str]:
    """Claim the folder a run writes its traces to when ``folder`` is asked for: ``folder`` itself when it
    holds no trace and no other run has claimed it, else its first ``run-<k>`` subfolder (k = 2, 3, ...)
    that holds none and is not claimed. A claim is an exclusive ``flock`` on the folder, taken before the
    folder is looked at and held until the run ends (:meth:`TraceDirectorySink.close`, or the process
    ending), so two runs at once never pick the same folder and no earlier trace is replaced.

    Returns ``(folder, descriptor holding the lock (-1: none), whether this call created the folder, why
    ``folder`` itself was not taken ("" when it was))``.
    Raises :class:`TraceWriteError` for a folder that cannot be created or used (a file of that name, a
    read-only file system, no permission, a name too long)."""
    asked = Path(folder)
    k, why = 1, ""
    while True:
        cand = asked if k == 1 else asked / f"run-{k}"
        try:
            created = not cand.is_dir()
            if created:
                try:
                    cand.mkdir(parents=True)
                except FileExistsError:
                    created = False
                    if not cand.is_dir():
                        if k > 1:  # a file named run-<k>: not a folder of this run's
                            k += 1
                            continue
                        raise NotADirectoryError(_errno.ENOTDIR, os.strerror(_errno.ENOTDIR)) from None
            fd = _lock(cand)
            if fd is None:
                why = why or "busy"
            elif _holds_traces(cand):
                if fd >= 0:
                    os.close(fd)
                fd, why = None, why or "traces"
            if fd is not None:
                code = _not_writable(cand)
                if code:
                    if fd >= 0:
                        os.close(fd)
                    raise OSError(code, os.strerror(code))
                return cand, fd, created, why
        except TraceWriteError:
            raise
        except OSError as exc:
            raise TraceWriteError(_failing_part(cand), exc, "trace folder") from None
        k += 1


def _not_writable(folder: Path) -> int:
    """EROFS for a folder on a read-only file system, EACCES for one this process may not write to, else 0."""
    if hasattr(os, "statvfs") and os.statvfs(folder).f_flag & getattr(os, "ST_RDONLY", 1):
        return _errno.EROFS
    return 0 if os.access(folder, os.W_OK | os.X_OK) else _errno.EACCES


def _failing_part(folder: Path) -> Path:
    """``folder``, or its first ancestor that exists and is not a folder (the file that stops ``mkdir``)."""
    for p in reversed([folder, *folder.parents]):
        try:
            if p.exists() and not p.is_dir():
                return p
        except OSError:  # a name too long: the folder itself is the one to name
            break
    return folder


class TraceDirectorySink:
    """Writes every region invocation to ``<folder>/<stem>.<invocation>.parquet`` (:func:`region_file_name`).
    With ``replace=False`` the run claims its folder (:func:`claim_run_folder`): a folder that holds traces of
    an earlier run, or that another run is writing to, is left as it is and this run writes to its next
    ``run-<k>`` subfolder (``redirected`` says so); :meth:`close` releases the claim. ``replace=True`` writes
    into ``folder`` whatever it holds, replacing files of the same names.

    A file that cannot be written raises :class:`TraceWriteError` (its temporary is removed); with
    ``keep_going`` the sink instead keeps the error in ``failure``, writes nothing more, and lets the run go on
    (the files written before stay; ``written`` lists only files that exist under their final names). The
    folder is created (and claimed) here, so that a folder that cannot be used fails before anything runs."""

    def __init__(self, folder: str | os.PathLike, row_group_records: int = DEFAULT_CHUNK_RECORDS, *,
                 replace: bool = True, keep_going: bool = False) -> None:
        self.asked = Path(folder)
        self.row_group_records = row_group_records
        self.keep_going = keep_going
        self._writer: ParquetTraceWriter | None = None
        self.written: list[Path] = []
        #: the error that stopped the writing (with ``keep_going``), else None
        self.failure: TraceWriteError | None = None
        self._fd, self._created = -1, False
        #: why the asked folder was not taken: "traces" (it holds an earlier run's), "busy" (another run is
        #: writing to it) or "" (it was)
        self.redirect_reason = ""
        if replace:
            self.folder = self.asked
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise TraceWriteError(_failing_part(self.folder), exc, "trace folder") from None
        else:
            self.folder, self._fd, self._created, self.redirect_reason = claim_run_folder(self.asked)
            if self._fd >= 0:
                self._release = weakref.finalize(self, os.close, self._fd)
        self.redirected = self.folder != self.asked

    def close(self) -> None:
        """Release the folder's claim; remove the folder when this sink created it and wrote nothing in it."""
        if self._fd >= 0:
            self._release()
            self._fd = -1
            if self._created and not self.written:
                try:
                    self.folder.rmdir()
                except OSError:
                    pass  # something else was put there meanwhile

    def _guard(self, step, *args) -> None:
        if self.failure is not None:
            return
        try:
            step(*args)
        except (OSError, pa.ArrowException) as exc:
            path = self._writer.path if self._writer is not None else self.folder
            if self._writer is not None:
                self._writer.abort()
                self._writer = None
            err = exc if isinstance(exc, TraceWriteError) else TraceWriteError(path, exc)
            if not self.keep_going:
                raise err from None
            self.failure = err

    def start_region(self, info: RegionInfo, static: StaticTable) -> None:
        self._writer = ParquetTraceWriter(self.folder / region_file_name(info), self.row_group_records)
        self._guard(self._writer.start_region, info, static)

    def consume(self, chunk: TraceChunk) -> None:
        if self._writer is not None:
            self._guard(self._writer.consume, chunk)

    def end_region(self, info: RegionInfo, static: StaticTable) -> None:
        if self._writer is None:
            return
        self._guard(self._writer.end_region, info, static)
        if self._writer is not None and self._writer.path.is_file():
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
        if not isinstance(blob, dict):
            raise TraceError(f"{self.path}: trace metadata must be a JSON object, not {type(blob).__name__}")
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
        try:
            self.info = RegionInfo.from_json(blob.get("region", {}))
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
