"""The work a region does, counted from its trace: the trace sinks that count threads, records, loads and
stores and the exact bytes touched (:class:`WorkSink`), the distinct bytes read and written (:class:`BytesSink`),
the records of a region's first threads (:class:`ThreadRecordsSink`, for the SIMT model), a size bound around
another sink (:class:`BoundedSink`), and the interval unions they share (:func:`merge_intervals`,
:func:`union_length`). Every layer above reads these counts: the measured-kernel harness, the GPU-time model's
input row, the sampled-profile estimator and the pipeline.
"""

from __future__ import annotations

from typing import Iterable

import numba
import numpy as np

from core.trace_schema import Op

SECTOR = 32
#: :class:`WorkSink`'s instruction-mix counts of the records inside threads: key -> operation classes
THREAD_MIX = {"thread_mem": (int(Op.LOAD), int(Op.STORE)),
              "thread_ctrl": (int(Op.BRANCH), int(Op.JUMP), int(Op.CALL), int(Op.RET)),
              "thread_fp": tuple(int(o) for o in Op if o.name.startswith("FP")),
              "thread_fp64": tuple(int(o) for o in Op if o.name.startswith("FP64")),
              "thread_int": tuple(int(o) for o in Op if o.name.startswith("INT_"))}


@numba.njit(cache=True)
def _grouped_union(ids, start, end):  # pragma: no cover - compiled
    """Length of the union of ``[start, end)`` per group, summed over groups (rows sorted by id, then start)."""
    total = 0
    i = 0
    n = ids.shape[0]
    while i < n:
        g = ids[i]
        lo = start[i]
        hi = end[i]
        i += 1
        while i < n and ids[i] == g:
            if start[i] > hi:
                total += hi - lo
                lo = start[i]
                hi = end[i]
            elif end[i] > hi:
                hi = end[i]
            i += 1
        total += hi - lo
    return total


@numba.njit(cache=True)
def _chunk_counts(op, tid, size, last_tid, thread_ops, lid):  # pragma: no cover - compiled
    """One pass over a chunk: records inside threads (their operation classes added to ``thread_ops``), LOAD and
    STORE records and their bytes, the largest tid, and ``lid``: the launch of each record (0: the launch open
    before the chunk, k: the k-th launch starting in it; a launch starts at a record with tid >= 0 after one
    outside the thread space or with a larger tid)."""
    inside = loads = stores = lb = sb = 0
    top = -1
    prev = last_tid
    k = 0
    for i in range(op.shape[0]):
        t = tid[i]
        o = op[i]
        if t >= 0:
            inside += 1
            thread_ops[o] += 1
            if t > top:
                top = t
            if prev < 0 or t < prev:
                k += 1
        lid[i] = k
        prev = t
        if o == _LOAD:
            loads += 1
            lb += size[i]
        elif o == _STORE:
            stores += 1
            sb += size[i]
    return inside, loads, stores, lb, sb, top


@numba.njit(cache=True)
def _memory_records(op, tid, size, addr, lid):  # pragma: no cover - compiled
    """The byte ranges ``[a, e)`` of a chunk's LOAD and STORE records of positive size, and of those inside
    threads their launch ids and sector ranges ``[s0, s1)``."""
    n = 0
    for i in range(op.shape[0]):
        if (op[i] == _LOAD or op[i] == _STORE) and size[i] > 0:
            n += 1
    a = np.empty(n, np.int64)
    e = np.empty(n, np.int64)
    ids = np.empty(n, np.int64)
    s0 = np.empty(n, np.int64)
    s1 = np.empty(n, np.int64)
    j = m = 0
    for i in range(op.shape[0]):
        if (op[i] == _LOAD or op[i] == _STORE) and size[i] > 0:
            a[j] = addr[i]
            e[j] = addr[i] + size[i]
            j += 1
            if tid[i] >= 0:
                ids[m] = lid[i]
                s0[m] = addr[i] // SECTOR
                s1[m] = (addr[i] + size[i] - 1) // SECTOR + 1
                m += 1
    return a, e, ids[:m], s0[:m], s1[:m]


@numba.njit(cache=True)
def _mark_seen(tid, seen):  # pragma: no cover - compiled
    for i in range(tid.shape[0]):
        if tid[i] >= 0:
            seen[tid[i]] = True


_LOAD, _STORE = int(Op.LOAD), int(Op.STORE)


class WorkSink:
    """A trace sink counting a region's work: logical threads, records (all, and those inside threads),
    LOAD and STORE records and their bytes, and the exact number of distinct bytes read or written (the
    union of the accessed byte ranges). ``results`` gets one dict per region.

    Also, for the GPU kernel the region's thread space becomes (records with ``tid >= 0``):

    * ``launches``: launches of the thread space, by the feature engine's rule (``warp_launches``: a launch
      starts at a record with tid >= 0 that follows a record outside the thread space, or whose tid is below
      the tid of the record before it);
    * ``sector_bytes``: 32 x the distinct 32-byte sectors the threads' loads and stores touch (what DRAM must
      move at least once);
    * ``launch_sector_bytes``: the same counted per launch and summed over launches (what DRAM moves when
      no launch finds the data of an earlier one in a cache);
    * ``thread_mem``, ``thread_ctrl``, ``thread_fp``, ``thread_fp64``, ``thread_int``: the threads' loads and
      stores, control records (BRANCH, JUMP, CALL, RET), floating-point records (FP64 ones included), FP64
      records and integer arithmetic records (INT_ALU, INT_MUL, INT_DIV, INT_REM): the instruction mix of the
      GPU kernel alone, which the host code around the launches does not dilute."""

    #: chunk intervals collected before they are merged with the region's (at least this many)
    merge_batch = 1 << 16

    def __init__(self) -> None:
        self.results: list[dict] = []

    def start_region(self, info, static) -> None:
        self._n = self._in_threads = self._loads = self._stores = self._lb = self._sb = 0
        self._seen = np.zeros(0, bool)  # the logical threads seen, by tid
        self._start = self._end = np.zeros(0, np.int64)  # the bytes touched so far: disjoint, sorted intervals
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []  # and of the chunks since (merged in batches)
        self._n_pending = 0
        self._sectors = _Union(self.merge_batch)  # distinct sectors of the threads' accesses
        self._launch = _Union(self.merge_batch)  # those of the launch still open
        self._last_tid = -1
        self._launches = 0
        self._launch_sectors = 0  # summed over the closed launches
        self._thread_ops = np.zeros(256, np.int64)  # records inside threads, by operation class

    def consume(self, chunk) -> None:
        op, tid, size, addr = chunk.op, chunk.tid, chunk.size, chunk.addr
        n = len(op)
        if n == 0:
            return
        self._n += n
        lid = np.empty(n, np.int64)
        inside, loads, stores, lb, sb, top = _chunk_counts(op, tid, size, self._last_tid, self._thread_ops, lid)
        self._in_threads += inside
        self._loads, self._stores, self._lb, self._sb = self._loads + loads, self._stores + stores, \
            self._lb + lb, self._sb + sb
        if top + 1 > len(self._seen):
            grown = np.zeros(max(top + 1, 2 * len(self._seen)), bool)
            grown[:len(self._seen)] = self._seen
            self._seen = grown
        if inside:
            _mark_seen(tid, self._seen)
        a, e, ids, s0, s1 = _memory_records(op, tid, size, addr, lid)
        if len(a):
            part = merge_intervals(a, e)
            self._pending.append(part)
            self._n_pending += len(part[0])
            if self._n_pending > max(len(self._start), self.merge_batch):  # amortised: a merge at least doubles
                self._merge()
        # launches and the sectors each touches (lid: 0 for the launch open before this chunk, if any, k for the
        # k-th one starting in it)
        self._last_tid = int(tid[-1])
        self._sectors.add(s0, s1)
        k = int(lid[-1])
        if k == 0:  # the open launch goes on
            self._launch.add(s0, s1)
            return
        old = ids == 0
        self._launch.add(s0[old], s1[old])
        self._launch_sectors += self._launch.length()  # the open launch closed (0 when there was none)
        self._launches += k
        closed = (ids > 0) & (ids < k)
        if closed.any():
            i, lo, hi = ids[closed], s0[closed], s1[closed]
            order = np.lexsort((lo, i))
            self._launch_sectors += int(_grouped_union(i[order], lo[order], hi[order]))
        last = ids == k
        self._launch = _Union(self.merge_batch)
        self._launch.add(s0[last], s1[last])

    def _merge(self) -> None:
        if self._pending:
            self._start, self._end = merge_intervals(np.concatenate([self._start] + [p[0] for p in self._pending]),
                                                     np.concatenate([self._end] + [p[1] for p in self._pending]))
            self._pending, self._n_pending = [], 0

    def end_region(self, info, static) -> None:
        self._merge()
        launch_sectors = self._launch_sectors + self._launch.length()
        self.results.append({"threads": int(np.count_nonzero(self._seen)), "records": self._n,
                             "thread_records": self._in_threads, "loads": self._loads, "stores": self._stores,
                             "load_bytes": self._lb, "store_bytes": self._sb,
                             "unique_bytes": int((self._end - self._start).sum()),
                             "launches": self._launches, "sector_bytes": SECTOR * self._sectors.length(),
                             "launch_sector_bytes": SECTOR * launch_sectors,
                             **{k: int(self._thread_ops[list(v)].sum()) for k, v in THREAD_MIX.items()}})


class _Union:
    """The union of half-open integer intervals added in batches (merged when the batch outgrows the union)."""

    def __init__(self, batch: int) -> None:
        self.batch = batch
        self.start = self.end = np.zeros(0, np.int64)
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.n_pending = 0

    def add(self, start: np.ndarray, end: np.ndarray) -> None:
        if len(start):
            part = merge_intervals(start, end)
            self.pending.append(part)
            self.n_pending += len(part[0])
            if self.n_pending > max(len(self.start), self.batch):
                self._merge()

    def _merge(self) -> None:
        if self.pending:
            self.start, self.end = merge_intervals(np.concatenate([self.start] + [p[0] for p in self.pending]),
                                                   np.concatenate([self.end] + [p[1] for p in self.pending]))
            self.pending, self.n_pending = [], 0

    def length(self) -> int:
        self._merge()
        return int((self.end - self.start).sum())


class ThreadRecordsSink:
    """Keeps the records of threads ``0 .. limit - 1`` of every launch (the first blocks), for the SIMT model,
    and counts ``threads`` (the largest tid + 1) and the thread records seen (``total``) and kept
    (``kept``). ``chunk`` holds the kept records after a complete region (None otherwise), ``static`` the
    region's static table (whose loop table the SIMT model's warps follow). With
    ``max_records``, a region whose kept records outgrow it falls back to the first ``fallback`` threads
    (``limit`` becomes ``fallback``; ``fell_back``), and keeps none if they outgrow it too (``overflow``): a
    memory bound."""

    def __init__(self, limit: int | None = None, max_records: int | None = None,
                 fallback: int | None = None) -> None:
        self.limit, self.max_records, self.fallback = limit, max_records, fallback
        self._limit0 = limit
        self.chunk = None
        self.static = None
        self.threads = self.kept = self.total = 0
        self.overflow = self.fell_back = False

    def start_region(self, info, static) -> None:
        self._chunks: list = []
        self.chunk = None
        self.threads = self.kept = self.total = 0
        self.overflow = self.fell_back = False
        self.limit = self._limit0

    def consume(self, chunk) -> None:
        tid = chunk.tid
        inside = tid >= 0
        keep = inside if self.limit is None else inside & (tid < self.limit)
        self.total += int(np.count_nonzero(inside))
        self.kept += int(np.count_nonzero(keep))
        if inside.any():
            self.threads = max(self.threads, int(tid.max()) + 1)
        if self.max_records is not None and self.kept > self.max_records and not self.overflow:
            if self.fallback is not None and not self.fell_back:
                self.fell_back, self.limit = True, self.fallback
                self._chunks = [c.select(c.tid < self.limit) for c in self._chunks]
                keep = inside & (tid < self.limit)
                self.kept = sum(len(c.tid) for c in self._chunks) + int(np.count_nonzero(keep))
            if self.kept > self.max_records:
                self.overflow, self._chunks = True, []
        if keep.any() and not self.overflow:
            self._chunks.append(chunk.select(keep))

    def end_region(self, info, static) -> None:
        from profiler.trace import TraceChunk

        chunks, self._chunks = self._chunks, []
        self.static = static
        if info.complete and chunks and not self.overflow:
            self.chunk = TraceChunk.concat(chunks)


class BoundedSink:
    """Hands a region's chunks to ``inner`` while the region has at most ``limit`` records; past that it lets
    go of ``inner`` (``inner`` becomes None, so that what it holds can be freed: keep no other reference to
    it) and the region gets no result from it (``dropped``). One region."""

    def __init__(self, inner, limit: int) -> None:
        self.inner, self.limit = inner, int(limit)
        self.dropped = False

    def start_region(self, info, static) -> None:
        self._n = 0
        if self.inner is not None:
            self.inner.start_region(info, static)

    def consume(self, chunk) -> None:
        self._n += len(chunk.op)
        if self.inner is not None and self._n > self.limit:
            self.inner, self.dropped = None, True
        if self.inner is not None:
            self.inner.consume(chunk)

    def end_region(self, info, static) -> None:
        if self.inner is not None:
            self.inner.end_region(info, static)


def merge_intervals(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the byte intervals ``[start, end)`` as disjoint, sorted intervals (touching ones joined)."""
    if len(start) == 0:
        return start, end
    order = np.argsort(start, kind="stable")
    start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)
    # an interval opens a new run when it starts past everything before it
    new = np.ones(len(start), bool)
    new[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(start)] - 1
    return start[first], reach[last]


def union_length(ranges: Iterable[np.ndarray]) -> int:
    """Bytes covered by the union of ``[addr, addr + size)`` ranges (rows of (addr, size) arrays)."""
    parts = [r for r in ranges if len(r)]
    if not parts:
        return 0
    r = np.concatenate(parts)
    start, end = merge_intervals(r[:, 0], r[:, 0] + r[:, 1])
    return int((end - start).sum())


class BytesSink:
    """Distinct bytes a region reads (``read_bytes``: union of its LOAD ranges) and writes (``written_bytes``:
    union of its STORE ranges): what a GPU port copies in and out. ``results`` gets one dict per region."""

    def __init__(self) -> None:
        self.results: list[dict] = []

    def start_region(self, info, static) -> None:
        self._parts: dict[int, list] = {int(Op.LOAD): [], int(Op.STORE): []}
        self._runs: dict[int, tuple] = {k: (np.zeros(0, np.int64), np.zeros(0, np.int64)) for k in self._parts}

    def consume(self, chunk) -> None:
        for op, parts in self._parts.items():
            m = (chunk.op == op) & (chunk.size > 0)
            if m.any():
                a = chunk.addr[m].astype(np.int64)
                parts.append(merge_intervals(a, a + chunk.size[m].astype(np.int64)))
                if len(parts) >= 64:
                    self._fold(op)

    def _fold(self, op: int) -> None:
        parts = self._parts[op]
        if parts:
            s, e = self._runs[op]
            self._runs[op] = merge_intervals(np.concatenate([s] + [p[0] for p in parts]),
                                             np.concatenate([e] + [p[1] for p in parts]))
            parts.clear()

    def end_region(self, info, static) -> None:
        for op in self._parts:
            self._fold(op)
        length = {op: int((e - s).sum()) for op, (s, e) in self._runs.items()}
        self.results.append({"read_bytes": length[int(Op.LOAD)], "written_bytes": length[int(Op.STORE)]})
