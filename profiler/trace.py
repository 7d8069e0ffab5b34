"""The trace's containers: the chunks of records a tracer hands to its sinks (:class:`TraceChunk`), the static
instruction table (what each static id means in the source), the region metadata, the sink protocol.

The record layout, the operation classes and the schema versions they follow are :mod:`core.trace_schema`
(defined for people in ``docs/trace-format.md``; the analyses that read traces in ``docs/features.md``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Iterable, Iterator, Protocol, Sequence

import numpy as np

from core.trace_schema import COLUMN_NAMES, N_OPS, RECORD_COLUMNS, Op, TraceError

#: Default number of records per chunk handed to sinks (and per Parquet row group).
DEFAULT_CHUNK_RECORDS = 1 << 20


@dataclasses.dataclass(eq=False)
class TraceChunk:
    """A bounded run of consecutive trace records, one array per column (all the same length)."""

    pc: np.ndarray
    op: np.ndarray
    taken: np.ndarray
    src1: np.ndarray
    src2: np.ndarray
    src3: np.ndarray
    dst: np.ndarray
    addr: np.ndarray
    size: np.ndarray
    tid: np.ndarray

    def __post_init__(self) -> None:
        n = None
        for name, dtype in RECORD_COLUMNS:
            arr = np.asarray(getattr(self, name))
            if arr.ndim != 1:
                raise TraceError(f"trace column {name!r} must be one-dimensional, got shape {arr.shape}")
            if arr.dtype != dtype:
                arr = arr.astype(dtype)
            setattr(self, name, arr)
            if n is None:
                n = arr.shape[0]
            elif arr.shape[0] != n:
                raise TraceError(
                    f"trace column {name!r} has {arr.shape[0]} records but column 'pc' has {n}"
                )

    def __len__(self) -> int:
        return int(self.pc.shape[0])

    @classmethod
    def trusted(cls, pc, op, taken, src1, src2, src3, dst, addr, size, tid) -> "TraceChunk":
        """A chunk from columns already known to be one-dimensional, of the record dtypes and of equal length
        (a tracer's own buffers), without the checks of the constructor."""
        chunk = object.__new__(cls)
        chunk.__dict__.update(pc=pc, op=op, taken=taken, src1=src1, src2=src2, src3=src3, dst=dst, addr=addr,
                              size=size, tid=tid)
        return chunk

    @classmethod
    def empty(cls, n: int = 0) -> "TraceChunk":
        """A chunk of ``n`` zeroed records (``tid`` = -1)."""
        cols = {name: np.zeros(n, dtype) for name, dtype in RECORD_COLUMNS}
        cols["tid"][:] = -1
        return cls(**cols)

    @classmethod
    def from_columns(cls, **columns: Sequence | np.ndarray) -> "TraceChunk":
        """Build a chunk from the columns given; missing columns default to 0 (``tid`` to -1)."""
        unknown = set(columns) - set(COLUMN_NAMES)
        if unknown:
            raise TraceError(f"unknown trace column(s): {sorted(unknown)}; known: {list(COLUMN_NAMES)}")
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise TraceError(f"trace columns have different lengths: { {k: len(v) for k, v in columns.items()} }")
        n = lengths.pop() if lengths else 0
        chunk = cls.empty(n)
        for name, values in columns.items():
            getattr(chunk, name)[:] = np.asarray(values)
        return chunk

    @classmethod
    def from_records(cls, records: Iterable[Sequence]) -> "TraceChunk":
        """Build a chunk from tuples in column order (pc, op, taken, src1, src2, src3, dst, addr, size, tid)."""
        rows = list(records)
        if not rows:
            return cls.empty(0)
        cols = list(zip(*rows))
        if len(cols) != len(COLUMN_NAMES):
            raise TraceError(f"a record has {len(cols)} fields, expected {len(COLUMN_NAMES)}: {COLUMN_NAMES}")
        return cls.from_columns(**{name: col for name, col in zip(COLUMN_NAMES, cols)})

    def columns(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in COLUMN_NAMES}

    def slice(self, start: int, stop: int) -> "TraceChunk":
        return TraceChunk(**{name: arr[start:stop] for name, arr in self.columns().items()})

    def select(self, mask: np.ndarray) -> "TraceChunk":
        """The records where ``mask`` (bool, one per record) is true, as a new chunk (copies of the columns)."""
        return TraceChunk.trusted(**{name: arr[mask] for name, arr in self.columns().items()})

    def records(self) -> list[tuple[int, ...]]:
        """The records as tuples of Python ints (for tests and small traces)."""
        cols = [getattr(self, name).tolist() for name in COLUMN_NAMES]
        return list(zip(*cols))

    @staticmethod
    def concat(chunks: Iterable["TraceChunk"]) -> "TraceChunk":
        chunks = list(chunks)
        if not chunks:
            return TraceChunk.empty(0)
        return TraceChunk(
            **{name: np.concatenate([getattr(c, name) for c in chunks]) for name in COLUMN_NAMES}
        )

    def split(self, chunk_records: int) -> Iterator["TraceChunk"]:
        """Consecutive sub-chunks of at most ``chunk_records`` records."""
        if chunk_records < 1:
            raise ValueError(f"chunk_records must be >= 1, got {chunk_records}")
        for start in range(0, len(self), chunk_records):
            yield self.slice(start, start + chunk_records)

    def validate(self) -> None:
        """Check the value constraints of the record layout; raise :class:`TraceError` naming the first bad record."""
        bad = np.flatnonzero(self.op >= N_OPS)
        if bad.size:
            i = int(bad[0])
            raise TraceError(f"record {i}: op={int(self.op[i])} is not an operation class (0..{N_OPS - 1})")
        bad = np.flatnonzero(self.taken > 1)
        if bad.size:
            i = int(bad[0])
            raise TraceError(f"record {i}: taken={int(self.taken[i])}, expected 0 or 1")
        for name in ("src1", "src2", "src3", "dst", "size", "pc"):
            bad = np.flatnonzero(getattr(self, name) < 0)
            if bad.size:
                i = int(bad[0])
                raise TraceError(f"record {i}: {name}={int(getattr(self, name)[i])} is negative")
        mem = (self.op == Op.LOAD) | (self.op == Op.STORE)
        bad = np.flatnonzero(mem & (self.size <= 0))
        if bad.size:
            i = int(bad[0])
            raise TraceError(f"record {i}: {Op(int(self.op[i])).name} with size {int(self.size[i])}, expected > 0")


@dataclasses.dataclass
class StaticInstruction:
    """One static instruction: where it is in the source and what it is."""

    pc: int
    file: str
    line: int
    col: int
    text: str
    function: str = ""
    kind: str = ""  # what the tracer emits there ("load", "binop", "branch:if", ...); informative only
    loop: int = 0  # the innermost source loop whose body holds this instruction (0: none); see profiler/loops.py
    closes: int = 0  # the loop whose control (increment, test) this instruction is (0: none)


class StaticTable:
    """Maps static instruction ids to source locations. Id 0 is reserved (never used by a record)."""

    def __init__(self, entries: Iterable[StaticInstruction] = ()) -> None:
        self._entries: dict[int, StaticInstruction] = {}
        for e in entries:
            self.add(e)

    def add(self, entry: StaticInstruction) -> None:
        self._entries[int(entry.pc)] = entry

    def __getitem__(self, pc: int) -> StaticInstruction:
        return self._entries[int(pc)]

    def get(self, pc: int) -> StaticInstruction | None:
        return self._entries.get(int(pc))

    def __contains__(self, pc: int) -> bool:
        return int(pc) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[StaticInstruction]:
        return iter(sorted(self._entries.values(), key=lambda e: e.pc))

    def where(self, pc: int) -> str:
        """``file:line`` of a static id, or ``pc <id>`` when unknown."""
        e = self.get(pc)
        return f"{e.file}:{e.line}" if e else f"pc {pc}"

    def to_json(self) -> list[dict]:
        return [dataclasses.asdict(e) for e in self]

    @classmethod
    def from_json(cls, data: list[dict]) -> "StaticTable":
        """The table of a trace file's ``static`` list; raises :class:`TraceError` naming the entry and field of a
        malformed entry (the loop fields' consistency is checked by :func:`profiler.loops.LoopTable.of`)."""
        if not isinstance(data, list):
            shown = "null" if data is None else repr(data)
            raise TraceError(f"the static table must be a list of entries, not {shown}")
        fields = {f.name for f in dataclasses.fields(StaticInstruction)}
        table = cls()
        for i, item in enumerate(data):
            if not isinstance(item, dict) or not {"pc", "file", "line", "col", "text"} <= set(item):
                raise TraceError(f"static table entry {i} is malformed: {item!r}")
            for name in ("loop", "closes"):
                v = item.get(name, 0)
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise TraceError(f"static table entry {i}: field {name!r} = {v!r}, expected an integer >= 0")
            table.add(StaticInstruction(**{k: v for k, v in item.items() if k in fields}))
        return table

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.to_json(), columns=[f.name for f in dataclasses.fields(StaticInstruction)])


@dataclasses.dataclass
class RegionInfo:
    """Metadata of one traced region invocation."""

    name: str
    invocation: int = 0
    n_records: int = 0
    complete: bool = True
    error: str | None = None  # why the region is incomplete (exception text, "interrupted")
    mode: str = "interpreted"  # interpreted | compiled | imported | native
    portcast_version: str = ""
    wall_time_s: float | None = None  # traced run
    uninstrumented_time_s: float | None = None  # plain run of the same region, when measured
    parallel_loop: str | None = None  # file:line of the loop whose iterations are the threads
    n_threads: int = 0  # distinct tids seen
    source: str = ""  # what was traced: script path, module:qualname, imported file
    extra: dict = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "RegionInfo":
        """The region metadata of a trace file; a :class:`TraceError` naming the field whose value is not of its
        type (a file written by hand or damaged: ``region: null``, ``extra: "zz"``)."""
        if not isinstance(data, dict):
            raise TraceError(f"region metadata must be an object, not {'null' if data is None else repr(data)}")
        fields = {f.name for f in dataclasses.fields(cls)}
        missing = {"name"} - set(data)
        if missing:
            raise TraceError(f"region metadata lacks field(s) {sorted(missing)}")
        number, count, text = (int, float), (int,), (str,)
        kinds = {"name": (text, False), "invocation": (count, False), "n_records": (count, False),
                 "complete": ((bool,), False), "error": (text, True), "mode": (text, False),
                 "portcast_version": (text, False), "wall_time_s": (number, True),
                 "uninstrumented_time_s": (number, True), "parallel_loop": (text, True),
                 "n_threads": (count, False), "source": (text, False), "extra": ((dict,), False)}
        words = {number: "a finite number >= 0", count: "an integer >= 0", text: "a string", (bool,): "true or false",
                 (dict,): "an object"}
        for k, (types, nullable) in kinds.items():
            if k not in data or (nullable and data[k] is None):
                continue
            v = data[k]
            ok = isinstance(v, types) and (types == (bool,) or not isinstance(v, bool))
            if ok and types is count:
                ok = v >= 0
            if ok and types is number:
                ok = math.isfinite(v) and v >= 0
            if not ok:
                also = " or null" if nullable else ""
                raise TraceError(f"region metadata field {k!r} = {v!r} is not {words[types]}{also}")
        return cls(**{k: v for k, v in data.items() if k in fields})


class TraceSink(Protocol):
    """Where a tracer sends a region's records. Writing a file is one sink; the feature engine is another.

    Protocol per region invocation: ``start_region`` once, ``consume`` for each chunk in order,
    ``end_region`` once (also when the region raised or was interrupted: then ``info.complete`` is False).
    ``static`` passed to ``end_region`` is the final table (a tracer may discover code as it runs).
    """

    def start_region(self, info: RegionInfo, static: StaticTable) -> None: ...

    def consume(self, chunk: TraceChunk) -> None: ...

    def end_region(self, info: RegionInfo, static: StaticTable) -> None: ...


class MemorySink:
    """Collects every chunk in memory. For tests and small regions only."""

    def __init__(self) -> None:
        self.regions: list[tuple[RegionInfo, StaticTable, TraceChunk]] = []
        self._chunks: list[TraceChunk] = []

    def start_region(self, info: RegionInfo, static: StaticTable) -> None:
        self._chunks = []

    def consume(self, chunk: TraceChunk) -> None:
        # copy: a tracer may reuse its buffers after handing a chunk over
        self._chunks.append(TraceChunk(**{k: v.copy() for k, v in chunk.columns().items()}))

    def end_region(self, info: RegionInfo, static: StaticTable) -> None:
        self.regions.append((info, static, TraceChunk.concat(self._chunks)))
        self._chunks = []


def json_dumps(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))
