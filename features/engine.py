"""The feature engine: runs every analyzer over a chunk stream; sink, file and explanation helpers."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable

import numpy as np
from numba import njit

from core.trace_schema import N_OPS, TraceError
from profiler.trace import RegionInfo, StaticTable, TraceChunk

from ._base import MAX_PC, Analyzer, env_int, pc_capacity
from .bdiv import BranchDivergenceAnalyzer
from .branch import BranchAnalyzer
from .catalogue import FEATURE_NAMES
from .fast.blocks import BlockMap
from .ilp import IlpAnalyzer, _max_token
from .library import LibraryAnalyzer
from .mix import MixAnalyzer
from .regs import RegisterTrafficAnalyzer
from .reuse import FootprintAnalyzer, ReuseDistanceAnalyzer
from .strides import MicaStrideAnalyzer, StrideAnalyzer
from .thread_dependences import ThreadSpaceChecker
from .warp import WarpAnalyzer

#: family name -> analyzer class, in output order.
FAMILIES: dict[str, type[Analyzer]] = {
    "mix": MixAnalyzer,
    "ilp": IlpAnalyzer,
    "stride": StrideAnalyzer,
    "footprint": FootprintAnalyzer,
    "reuse": ReuseDistanceAnalyzer,
    "bdiv": BranchDivergenceAnalyzer,
    "mica_stride": MicaStrideAnalyzer,
    "regs": RegisterTrafficAnalyzer,
    "branch": BranchAnalyzer,
    "warp": WarpAnalyzer,
    "threadspace": ThreadSpaceChecker,
    "library": LibraryAnalyzer,
}

_CATALOGUED = frozenset(FEATURE_NAMES)

#: CPU nanoseconds per record of each family inside the whole engine (benchmarks/bench_features.py -k
#: breakdown): how the first chunk is shared among threads, before the analyzers' own times are known.
COST_NS = {"mix": 0.5, "ilp": 6.2, "stride": 1.0, "footprint": 1.3, "reuse": 5.3, "bdiv": 1.0,
           "mica_stride": 1.5, "regs": 3.0, "branch": 5.4, "warp": 9.0, "threadspace": 6.0, "blockmap": 7.0,
           "library": 0.0}

_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    """A process-wide pool of ``workers`` threads (engines come and go with regions; threads stay)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            pool = _POOLS[workers] = ThreadPoolExecutor(workers, thread_name_prefix="portcast-features")
        return pool


def default_threads() -> int:
    """Threads the engine uses unless told otherwise: ``PORTCAST_FEATURE_THREADS`` when set, else the
    processors this process may run on, at most 4 (beyond that the serial block mapping dominates)."""
    n = env_int("PORTCAST_FEATURE_THREADS")
    if n is not None:
        return n
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _groups(costs: list[float], k: int, first_load: float = 0.0) -> list[list[int]]:
    """Split analyzer indices into at most ``k`` groups of similar total cost (longest first, each to the
    least loaded group); the first group starts with ``first_load`` (the calling thread's block mapping);
    groups keep program order inside. Only the first group may be empty."""
    loads = [float(first_load)] + [0.0] * (k - 1)
    members: list[list[int]] = [[] for _ in range(k)]
    for i in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        g = min(range(k), key=lambda j: (loads[j], j))
        loads[g] += costs[i]
        members[g].append(i)
    return [sorted(members[0])] + [sorted(m) for m in members[1:] if m]


#: features the explanation table covers, and the analyzer contribution each one reads.
EXPLAINED = ("locStrideOther", "Lbdiv_32", "warp_bdiv", "warp_coalescing", "footprint")


#: records checked per branch-free pass of ``_first_invalid``
_CHECK_BLOCK = 4096


@njit(cache=True, inline="always")
def _breaks_contract(o, t, p, s1, s2, s3, d, z):
    """One record's values outside the contract's ranges (no branches: usable in a vectorised loop)."""
    return ((o >= N_OPS) | (t > 1) | (p < 0) | (p > MAX_PC) | (s1 < 0) | (s2 < 0) | (s3 < 0) | (d < 0) | (z < 0)
            | (((o == 8) | (o == 9)) & (z <= 0)))


@njit(cache=True, nogil=True, boundscheck=False)
def _first_invalid(op, taken, pc, src1, src2, src3, dst, size):
    """Index of the first record breaking the contract's value ranges, -1 when none does. Each block of
    records is first checked by one branch-free pass (an OR over the block, which the compiler vectorises);
    only a block with a bad record is searched record by record."""
    n = op.shape[0]
    for lo in range(0, n, _CHECK_BLOCK):
        hi = min(n, lo + _CHECK_BLOCK)
        bad = False
        for i in range(lo, hi):
            bad |= _breaks_contract(op[i], taken[i], pc[i], src1[i], src2[i], src3[i], dst[i], size[i])
        if bad:
            for i in range(lo, hi):
                if _breaks_contract(op[i], taken[i], pc[i], src1[i], src2[i], src3[i], dst[i], size[i]):
                    return i
    return -1


def validate_chunk(chunk: TraceChunk, offset: int = 0) -> None:
    """Raise :class:`TraceError` naming the first record (counted from the trace start) that breaks the contract.

    Parameters
    ----------
    chunk : TraceChunk
    offset : index of the chunk's first record in the whole trace
    """
    i = _first_invalid(chunk.op, chunk.taken, chunk.pc, chunk.src1, chunk.src2, chunk.src3, chunk.dst, chunk.size)
    if i < 0:
        return
    try:
        chunk.slice(i, i + 1).validate()
    except TraceError as exc:
        msg = str(exc)
        raise TraceError(msg.replace("record 0:", f"record {offset + i}:", 1)) from None
    raise TraceError(f"record {offset + i}: pc={int(chunk.pc[i])} exceeds {MAX_PC}; pc must index the static table")


class FeatureEngine:
    """Runs the analyzers of the chosen families over a trace, chunk by chunk.

    Parameters
    ----------
    families : names from :data:`FAMILIES` (default: all), or ready analyzer objects
    static : the static instruction table, used by :meth:`explain` for file:line and source text, and by the warp
        views for the layout positions of its loops (features/layout.py)
    validate : check each chunk against the trace contract before analysing it (one fast pass)
    threads : analyzers run on up to this many threads at once (their Numba kernels release the GIL); each
        chunk is finished by all of them before :meth:`consume` returns, and the results are identical for
        any number of threads. None: :func:`default_threads`.
    thread_space : the region's ``thread_space`` metadata (``RegionInfo.extra``), which the thread-space
        check needs to know the kernel loops, loop variables and reductions; None: not checked.
    """

    #: chunks shorter than this are analysed on the calling thread alone (handing over costs tens of us)
    min_parallel_records = 4096

    def __init__(self, families: Iterable[str | Analyzer] | None = None, static: StaticTable | None = None,
                 validate: bool = True, threads: int | None = None, thread_space: dict | None = None) -> None:
        self.static = static
        self.validate = validate
        self.threads = default_threads() if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.analyzers: list[Analyzer] = []
        for f in (FAMILIES if families is None else families):
            if isinstance(f, Analyzer):
                self.analyzers.append(f)
            elif f in FAMILIES:
                self.analyzers.append(FAMILIES[f]())
            else:
                raise ValueError(f"unknown feature family {f!r}; known: {', '.join(FAMILIES)}")
        for a in self.analyzers:
            if hasattr(a, "configure") and a.n == 0:
                a.configure(thread_space)
            if hasattr(a, "configure_static") and a.n == 0:
                a.configure_static(static)  # the warp views' layout positions (the static table's loops)
        self.n = 0
        # One block index for every analyzer that reads block ids: each chunk's memory references are
        # hashed once (features/fast/blocks.py). Analyzers that consumed something on their own keep their map.
        self.blockmap = BlockMap()
        # An analyzer with ``blocks_optional`` (ILP) hashes its blocks faster than a map made for it alone:
        # it joins the shared map only when an analyzer that needs it (footprint, reuse) is mapped too.
        self._mapped = [a for a in self.analyzers
                        if getattr(a, "uses_blocks", False) and a.n == 0 and a.blockmap.n_blocks == 0]
        if all(getattr(a, "blocks_optional", False) for a in self._mapped):
            self._mapped = []
        for a in self._mapped:
            a.blockmap = self.blockmap
        self._is_mapped = [any(a is b for b in self._mapped) for a in self.analyzers]
        # analyzers that need the chunk's largest register token (ILP, register traffic): one pass for all
        self._tokens = [a for a in self.analyzers if hasattr(a, "next_max_token")]
        if len(self._tokens) < 2:
            self._tokens = []
        # CPU seconds each analyzer (and the block mapping) spent so far, which balances the threads
        self._spent = [0.0] * len(self.analyzers)
        self._map_spent = 0.0

    def hint_max_token(self, chunk: TraceChunk) -> None:
        """Compute the chunk's largest register token once and hand it to every analyzer that needs it
        (ILP and register traffic, which would each make the same pass over the four register columns).

        Parameters
        ----------
        chunk : TraceChunk
            The chunk the analyzers consume next (a hint is used by that chunk object only, then cleared).
        """
        if self._tokens:
            top = int(_max_token(chunk.src1, chunk.src2, chunk.src3, chunk.dst))
            for a in self._tokens:
                a.next_max_token = (chunk, top)

    def consume(self, chunk: TraceChunk) -> None:
        """Feed the next chunk (see :meth:`features._base.Analyzer.consume`).

        Parameters
        ----------
        chunk : TraceChunk
        """
        if self.validate:
            validate_chunk(chunk, self.n)
        # 1 + the largest pc, which most analyzers size their per-instruction tables by: one pass for all
        hint = (chunk, pc_capacity(chunk))
        self.blockmap.pc_hint = hint
        for a in self.analyzers:
            a.pc_hint = hint
        try:
            self.hint_max_token(chunk)
            k = min(self.threads, len(self.analyzers))
            if k <= 1 or len(chunk) < self.min_parallel_records:
                refs = self.blockmap.map(chunk) if self._mapped else None
                self._run(range(len(self.analyzers)), chunk, refs)
            else:
                self._run_threads(k, chunk)
        finally:  # hints are for this chunk only (and must not keep it alive)
            self.blockmap.pc_hint = None
            for a in self.analyzers:
                a.pc_hint = None
            for a in self._tokens:
                a.next_max_token = None
        self.n += len(chunk)

    def _run(self, which, chunk: TraceChunk, refs) -> None:
        """Feed ``chunk`` to the analyzers ``which`` (indices), in order, timing each with its thread's clock."""
        for i in which:
            a = self.analyzers[i]
            t0 = time.thread_time()
            if self._is_mapped[i]:
                a.consume_refs(chunk, refs)
            else:
                a.consume(chunk)
            self._spent[i] += time.thread_time() - t0

    def _run_group(self, which, chunk: TraceChunk, mapped: dict, ready: threading.Event) -> None:
        """A pool thread's share of a chunk: its analyzers that do not read the block map, then, once the
        calling thread has mapped the chunk, those that do."""
        self._run([i for i in which if not self._is_mapped[i]], chunk, None)
        need = [i for i in which if self._is_mapped[i]]
        if need:
            ready.wait()
            if "refs" in mapped:  # else the mapping failed: the calling thread raises its error
                self._run(need, chunk, mapped["refs"])

    def _run_threads(self, k: int, chunk: TraceChunk) -> None:
        """Feed ``chunk`` to all analyzers on ``k`` threads (this one and ``k - 1`` of the pool). The calling
        thread maps the chunk's blocks first while the pool threads run analyzers that do not need the map."""
        if any(self._spent):
            costs, map_cost = self._spent, self._map_spent
        else:
            costs = [COST_NS.get(getattr(a, "family", ""), 3.0) for a in self.analyzers]
            map_cost = COST_NS["blockmap"]
        groups = _groups(list(costs), k, first_load=map_cost if self._mapped else 0.0)
        mapped: dict = {}
        ready = threading.Event()
        futures = [_pool(k - 1).submit(self._run_group, g, chunk, mapped, ready) for g in groups[1:]]
        error = None
        try:
            try:
                if self._mapped:
                    t0 = time.thread_time()
                    mapped["refs"] = self.blockmap.map(chunk)
                    self._map_spent += time.thread_time() - t0
            finally:
                ready.set()
            self._run(groups[0], chunk, mapped.get("refs"))
        except BaseException as exc:  # wait for the others before the chunk's buffers may go away
            error = exc
        for f in futures:
            try:
                f.result()
            except BaseException as exc:
                error = error or exc
        if error is not None:
            raise error

    def result(self):
        """Features of everything consumed so far.

        Returns
        -------
        pandas.Series
            Index = feature names (catalogue order for the catalogued ones), float values, never NaN.
        """
        import pandas as pd

        values: dict[str, float] = {}
        for a in self.analyzers:
            values.update(a.result())
        order = [n for n in FEATURE_NAMES if n in values] + sorted(n for n in values if n not in _CATALOGUED)
        arr = np.array([float(values[n]) for n in order], dtype=float)
        s = pd.Series(arr, index=pd.Index(order), name="value")
        if np.isnan(arr).any():  # pragma: no cover - guarded by the analyzers' zero-denominator rule
            raise AssertionError(f"NaN feature(s): {list(s.index[s.isna()])}")
        return s

    def thread_space_report(self, meta: dict | None) -> dict | None:
        """The region's thread space: the source analysis's loops (``meta``) joined with what the check on
        the trace found per loop (:meth:`features.thread_dependences.ThreadSpaceChecker.report`); None without
        metadata."""
        from .thread_dependences import join_report

        checker = next((a for a in self.analyzers if isinstance(a, ThreadSpaceChecker)), None)
        return join_report(meta, checker.report(self.static) if checker is not None else None)

    def set_region_info(self, info) -> None:
        """Give the analyzers that read region metadata (the library-call features) the region's info."""
        for a in self.analyzers:
            if isinstance(a, LibraryAnalyzer):
                a.info = info

    def contributions(self) -> dict[str, dict[int, float]]:
        out: dict[str, dict[int, float]] = {}
        for a in self.analyzers:
            out.update(a.contributions())
        return out

    def explain(self, top: int = 5):
        """The static instructions contributing most to locStrideOther, Lbdiv_32, warp_bdiv, warp_coalescing and
        footprint.

        Parameters
        ----------
        top : rows per feature

        Returns
        -------
        pandas.DataFrame
            Columns ``feature``, ``rank``, ``pc``, ``location`` (file:line or ``pc N``), ``text`` (source text),
            ``count`` (stride observations > 128 bytes, divergent 32-groups, divergent warp branches,
            sectors of warp memory instructions beyond the ideal, first-touched 64-byte blocks)
            and ``share`` (count / the feature's total count).
        """
        import pandas as pd

        contrib = self.contributions()
        rows = []
        for feat in EXPLAINED:
            per_pc = contrib.get(feat, {})
            total = sum(per_pc.values())
            ranked = sorted(per_pc.items(), key=lambda kv: (-kv[1], kv[0]))[: max(0, int(top))]
            for rank, (pc, cnt) in enumerate(ranked, 1):
                entry = self.static.get(pc) if self.static is not None else None
                rows.append({
                    "feature": feat,
                    "rank": rank,
                    "pc": int(pc),
                    "location": f"{entry.file}:{entry.line}" if entry else f"pc {pc}",
                    "text": entry.text if entry else "",
                    "count": float(cnt),
                    "share": cnt / total if total else 0.0,
                })
        return pd.DataFrame(rows, columns=["feature", "rank", "pc", "location", "text", "count", "share"])


class FeatureSink:
    """A :class:`profiler.trace.TraceSink` that computes features while a region runs.

    After each region ``results`` gains ``(RegionInfo, pandas.Series)`` and ``explanations`` the matching
    :meth:`FeatureEngine.explain` table.

    Parameters
    ----------
    families : as for :class:`FeatureEngine`
    top : rows per feature in the explanation tables
    threads : as for :class:`FeatureEngine`
    """

    def __init__(self, families: Iterable[str] | None = None, top: int = 5, threads: int | None = None) -> None:
        self.families = None if families is None else list(families)
        self.top = top
        self.threads = threads
        self.results: list = []
        self.explanations: list = []
        self.thread_spaces: list = []
        self._engine: FeatureEngine | None = None

    def start_region(self, info: RegionInfo, static: StaticTable) -> None:
        self._engine = FeatureEngine(self.families, static=static, threads=self.threads,
                                     thread_space=info.extra.get("thread_space"))

    def consume(self, chunk: TraceChunk) -> None:
        if self._engine is None:
            raise TraceError("FeatureSink.consume called before start_region")
        self._engine.consume(chunk)

    def end_region(self, info: RegionInfo, static: StaticTable) -> None:
        if self._engine is None:
            raise TraceError("FeatureSink.end_region called before start_region")
        self._engine.static = static
        self._engine.set_region_info(info)  # library-call features (features/library.py) read its metadata
        self.results.append((info, self._engine.result()))
        self.explanations.append(self._engine.explain(self.top))
        self.thread_spaces.append(self._engine.thread_space_report(info.extra.get("thread_space")))
        self._engine = None


def _chunks_of(source, chunk_records: int) -> tuple[Iterable[TraceChunk], StaticTable | None, RegionInfo | None]:
    """(chunks, static table, region metadata) of a features source; the last two None when it has none."""
    from profiler.tracefile import TraceFile

    if isinstance(source, (str, os.PathLike)):
        source = TraceFile(source)
    if isinstance(source, TraceFile):
        return source.chunks(chunk_records), source.static, source.info
    if isinstance(source, TraceChunk):
        return source.split(chunk_records) if len(source) else [source], None, None
    if isinstance(source, Iterable):
        return source, None, None
    raise TypeError(f"cannot compute features of a {type(source).__name__}: expected a trace file path, "
                    "TraceFile, TraceChunk or iterable of TraceChunk")


def compute_features(source, *, chunk_records: int = 1 << 20, families=None,
                     progress: Callable[[int], None] | None = None, engine_out: list | None = None):
    """Features of a whole trace.

    Parameters
    ----------
    source : path of a Portcast trace file, :class:`profiler.tracefile.TraceFile`, :class:`TraceChunk`, or an
        iterable of :class:`TraceChunk`
    chunk_records : records per chunk when reading a file or splitting a chunk
    families : feature families (default all)
    progress : called with the number of records of each chunk once it is analysed
    engine_out : when a list is given, the engine is appended to it (for :meth:`FeatureEngine.explain`)

    Returns
    -------
    pandas.Series
        Feature name -> value.
    """
    if chunk_records < 1:
        raise ValueError(f"chunk_records must be >= 1, got {chunk_records}")
    chunks, static, info = _chunks_of(source, chunk_records)
    engine = FeatureEngine(families, static=static, thread_space=info.extra.get("thread_space") if info else None)
    engine.set_region_info(info)
    for c in chunks:
        if not isinstance(c, TraceChunk):
            raise TypeError(f"expected TraceChunk items, got {type(c).__name__}")
        engine.consume(c)
        if progress is not None:
            progress(len(c))
    if engine_out is not None:
        engine_out.append(engine)
    return engine.result()
