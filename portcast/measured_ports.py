"""Measured kernels (``kernels/measured``): trace the ports at their measured points, and compare the work
Portcast sees with the counts of the data the times come from.

:func:`trace_points` runs each port's region at each point under the profiler with a :class:`WorkSink`
(threads, instructions, loads, stores, the exact bytes touched) and the feature engine, and gives one row
per point; :func:`write_points_table` saves them (Parquet, schema-versioned) as the committed table
``kernels/measured/data/measured_points.parquet``. :func:`faithfulness` joins those rows with AIWC's
per-invocation counts (``workitems``, ``total_instruction_count``, ``total_memory_footprint``) and with the
first launch of each size in the Amaris data (grid x block, ``inst_executed``, ``gld_inst_32bit``,
``gst_inst_32bit``), as ratios Portcast / data. With ``simulate``, each point also gets the SIMT model's time
on the preset of every GPU of its data; :func:`correlation` sets those beside the measured times
(:func:`measured_times`) and :func:`fit_floors` fits a launch floor per GPU on the training half of the
applications (:func:`split_applications`). ``portcast measured trace``, ``report`` and ``correlate`` are the
commands (docs/measured.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numba
import numpy as np
import pandas as pd

from core.atomic import atomic_path
from core.trace_schema import Op
from kernels.measured.spec import FEATURES_LABEL

POINTS_SCHEMA_VERSION = 1
ROOT = Path(__file__).resolve().parent.parent
SHIPPED_POINTS = ROOT / "kernels" / "measured" / "data" / "measured_points.parquet"
AIWC_DATA = ROOT / "predictor" / "data" / "aiwc" / "full_dat.csv.gz"
AMARIS_DATA = ROOT / "kernels" / "measured" / "data" / "amaris" / "launches.parquet"
HECBENCH_DATA = ROOT / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
BABELSTREAM_DATA = ROOT / "kernels" / "measured" / "data" / "babelstream"
KERNELBENCH_DATA = ROOT / "kernels" / "measured" / "data" / "kernelbench"
WARP = 32
#: the data's GPU names -> SIMT presets (gpu_models/simt/presets, docs/gpus.md)
AIWC_GPUS = {"titanx": "titanx", "gtx1080": "gtx1080", "gtx1080ti": "gtx1080ti", "k20c": "k20", "k40c": "k40"}
AMARIS_GPUS = {"GTX-680": "gtx680", "GTX-970": "gtx970", "GTX-980": "gtx980", "Quadro": "quadro_k5200",
               "Tesla-K20": "k20", "Tesla-K40": "k40", "Tesla-P100": "p100", "Titan": "gtxtitan", "TitanX": "titanx"}
HECBENCH_GPUS = {"NVIDIA GeForce RTX 3080": "rtx3080"}
#: BabelStream's "Using CUDA device ..." names
BABELSTREAM_GPUS = {"Tesla K20m": "k20", "Tesla K20X": "k20x", "Tesla P100-PCIE-16GB": "p100",
                    "Tesla V100-SXM2-16GB": "v100", "GeForce RTX 2080 Ti": "rtx2080ti",
                    "A100-SXM4-40GB MIG 7g.40gb": "a100"}
#: KernelBench timing files (``<folder>/<file>.json``) -> presets; the folder is the point label of the shapes
KERNELBENCH_GPUS = {"before_2025-07/A100_modal": "a100", "before_2025-07/A100-80GB_modal": "a100_80gb",
                    "before_2025-07/A10G_modal": "a10g", "before_2025-07/L4_modal": "l4",
                    "before_2025-07/L40S_matx3": "l40s", "before_2025-07/L40S_modal": "l40s",
                    "before_2025-07/T4_modal": "t4", "before_2025-07/H100_together": "h100_sxm",
                    "before_2025-07/B200_together": "b200", "2026/H100_Modal": "h100_sxm",
                    "2026/H100_PCIe_LambdaLabs": "h100_pcie"}
#: the data's GPU names of every source -> presets
DATA_GPUS = {"aiwc": AIWC_GPUS, "amaris": AMARIS_GPUS, "hecbench": HECBENCH_GPUS,
             "babelstream": BABELSTREAM_GPUS, "kernelbench": KERNELBENCH_GPUS}
#: bytes BabelStream counts per element of each kernel (float64 arrays read and written)
BABELSTREAM_BYTES = {"copy": 16, "mul": 16, "add": 24, "triad": 24, "dot": 16}

#: readable names of the data's GPUs (tables and plots)
GPU_LABELS = {"gtx1080": "GTX 1080 (AIWC)", "gtx1080ti": "GTX 1080 Ti (AIWC)", "k20c": "K20c (AIWC)",
              "k40c": "K40c (AIWC)", "titanx": "Titan X (AIWC)", "GTX-680": "GTX 680", "GTX-970": "GTX 970",
              "GTX-980": "GTX 980", "Quadro": "Quadro K5200", "Tesla-K20": "Tesla K20", "Tesla-K40": "Tesla K40",
              "Tesla-P100": "Tesla P100", "Titan": "GTX Titan", "TitanX": "GTX Titan X (Amaris)",
              "NVIDIA GeForce RTX 3080": "RTX 3080 (HeCBench)", "Tesla K20m": "K20m (BabelStream)",
              "Tesla K20X": "K20X (BabelStream)", "Tesla P100-PCIE-16GB": "P100 PCIe (BabelStream)",
              "Tesla V100-SXM2-16GB": "V100 SXM2 (BabelStream)", "GeForce RTX 2080 Ti": "RTX 2080 Ti (BabelStream)",
              "A100-SXM4-40GB MIG 7g.40gb": "A100 40 GB (BabelStream)", "a100": "A100 40 GB (KernelBench)",
              "a100_80gb": "A100 80 GB (KernelBench)", "a10g": "A10G (KernelBench)", "l4": "L4 (KernelBench)",
              "l40s": "L40S (KernelBench)", "t4": "T4 (KernelBench)", "h100_sxm": "H100 SXM (KernelBench)",
              "h100_pcie": "H100 PCIe (KernelBench)", "b200": "B200 (KernelBench)"}


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


#: SMs simulated when a region is sampled (``slice_config``): two waves of blocks on this many SMs
SLICE_SMS = 4
#: records a sampled region may keep for the SIMT model (about 45 bytes each while tracing, 280 in the
#: warp streams); past it the sample falls back to a 1-SM slice, and past that the region is not simulated
#: (``not_simulated``)
SAMPLE_RECORDS = 30_000_000
#: a sampled region whose threads all fit in the sample is simulated whole when it has at most this many
#: thread records, else on the slice (its share of the blocks): a whole simulation costs about 1 s per
#: million records and preset
WHOLE_RECORDS = 4_000_000


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


def wave_blocks(cfg, block_size: int) -> int:
    """Thread blocks of ``block_size`` threads resident on the whole GPU at once (one wave)."""
    warps = -(-int(block_size) // WARP)
    return max(1, min(cfg.max_blocks_per_sm, cfg.max_warps_per_sm // warps)) * cfg.sm_count


def slice_config(cfg, sms: int):
    """``cfg`` cut down to ``sms`` of its SMs with their share of everything the SMs share: the L2's capacity
    (whole sets) and bandwidth and the DRAM bandwidth scale by ``sms / sm_count``; latencies, clocks and the
    SMs themselves stay. A wave on the slice is a slice of a wave on the whole GPU."""
    k = min(int(sms), cfg.sm_count)
    if k == cfg.sm_count:
        return cfg
    share = k / cfg.sm_count
    set_bytes = 32 * cfg.l2_ways
    return cfg.replace(sm_count=k, l2_bytes=max(1, round(cfg.l2_bytes * share / set_bytes)) * set_bytes,
                       l2_bytes_per_ns=cfg.l2_bytes_per_ns * share,
                       transfers_per_clock=cfg.transfers_per_clock * share)


def sample_threads(presets: Iterable[str], block_size: int, slice_sms: int | None = SLICE_SMS) -> int:
    """Threads :func:`simulated_times` needs of a sampled region: two waves of the largest slice."""
    from gpu_models.simt.config import load_config

    cfgs = [load_config(p) for p in presets]
    if slice_sms is not None:
        cfgs = [slice_config(c, slice_sms) for c in cfgs]
    return 2 * max(wave_blocks(c, block_size) for c in cfgs) * int(block_size)


def simulated_times(chunk, threads: int, block_size: int, presets: Iterable[str], *,
                    complete: bool = True, name: str = "", slice_sms: int | None = SLICE_SMS, static=None) -> dict:
    """SIMT model time (s) of a region on each preset, from the records of its first threads. The tiles a
    block stages and reads back are in shared memory (:func:`gpu_models.simt.threads.block_scratch`), as the
    CUDA and OpenCL kernels keep them.

    ``complete``: ``chunk`` holds every thread's records, simulated whole. Else the region's
    ``B = ceil(threads / block_size)`` blocks run on ``slice_sms`` SMs of the preset with their share of the
    L2 and the DRAM (:func:`slice_config`; ``None``: all SMs), which get their share of the blocks,
    ``b = ceil(B k / sm_count)``, the first ``b`` blocks of the region standing for any. If ``b`` is at most
    two of the slice's waves (``c`` blocks, :func:`wave_blocks`), they are simulated; else the first wave alone
    (``t1``) and the first two waves (``t2``) give ``t1 + (b / c - 1) (t2 - t1)``: the second wave's time stands
    for every later one (the first also pays the start of the pipelines and the caches) and a last partial
    wave counts by its share of blocks. ``chunk`` must hold the records of the blocks simulated
    (:func:`sample_threads`); docs/measured.md gives the error against whole simulations. ``static``: the
    region's static table, whose loops the warps follow (:func:`gpu_models.simt.threads.build_streams`)."""
    from gpu_models.simt.config import load_config
    from gpu_models.simt.model import simulate as run_model
    from gpu_models.simt.threads import block_scratch, build_streams

    scratch = block_scratch(chunk, block_size)
    blocks = -(-int(threads) // int(block_size))
    held = int(chunk.tid.max()) + 1 if len(chunk.tid) else 0
    # per preset: the configuration simulated, the thread counts it runs (None: every thread) and, for two
    # runs, the waves the slice's share of the grid makes (the second run's extra time stands for each later one)
    plan: dict = {}
    for preset in presets:
        cfg = load_config(preset)
        if complete:
            plan[preset] = (cfg, [None], None)
            continue
        part = cfg if slice_sms is None else slice_config(cfg, slice_sms)
        c = wave_blocks(part, block_size)
        # the slice's share of the blocks (every SM gets the same share of a grid)
        share = -(-blocks * part.sm_count // cfg.sm_count)
        need = min(share, 2 * c) * int(block_size)
        if held < need:
            raise ValueError(f"{name}: {preset} needs the records of {need} threads, the sample holds {held}")
        if share <= 2 * c:
            plan[preset] = (part, [share * int(block_size)], None)
        else:
            plan[preset] = (part, [c * int(block_size), 2 * c * int(block_size)], share / c)
    # one set of warp streams at a time, shared by every run of that many threads
    times: dict = {}
    for n_threads in dict.fromkeys(n for _, counts, _ in plan.values() for n in counts):
        keep = None if n_threads is None else chunk.tid < n_threads
        streams = build_streams(chunk if keep is None else chunk.select(keep), block_size,
                                scratch if keep is None else scratch[keep], static=static)
        for preset, (cfg, counts, _) in plan.items():
            if n_threads in counts:
                times[preset, n_threads] = run_model(streams, cfg, crisp=False, name=name).time_ns * 1e-9
        del streams
    out = {}
    for preset, (_, counts, waves) in plan.items():
        t = [times[preset, n] for n in counts]
        out[preset] = t[0] if waves is None else t[0] + (waves - 1) * (t[1] - t[0])
    return out


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


def _default_tracer() -> Callable:
    from profiler.session import trace_function

    return trace_function


def data_gpus(source: str) -> dict:
    """The data's GPU names of ``source`` mapped to their SIMT presets."""
    return DATA_GPUS[source]


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


def aiwc_counts(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """AIWC's per-invocation counts: one row per (application, kernel, size)."""
    cols = ["application", "kernel", "size", "workitems", "total_instruction_count", "total_memory_footprint"]
    d = pd.read_csv(path or AIWC_DATA, usecols=cols)
    return d.groupby(["application", "kernel", "size"], as_index=False).first()


def amaris_first_launches(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The first launch of every (GPU, kernel, problem size) of the Amaris data, with its thread count."""
    d = pd.read_parquet(path or AMARIS_DATA)
    d = d.sort_values("row_in_file").groupby(["gpu", "kernel", "input.size.1", "input.size.2"], as_index=False).head(1)
    d = d.assign(threads=d["grid.x"] * d["grid.y"] * d["block.x"] * d["block.y"])
    return d.reset_index(drop=True)


def _fft_rows(aiwc: pd.DataFrame, spec, label: str) -> pd.DataFrame:
    """The FFT region's counterpart of an AIWC row: its passes (``fftRadix<r>Kernel`` rows, one invocation
    each) summed for the instructions, the largest pass for the work items and the footprint."""
    from kernels.measured.fft import pass_work_items

    rows = aiwc[(aiwc.application == "fft") & (aiwc["size"] == label)].set_index("kernel")
    passes = pass_work_items(spec.points[label])
    if any(f"fftRadix{r}Kernel" not in rows.index for r, _ in passes):
        return rows.iloc[:0]
    got = [rows.loc[f"fftRadix{r}Kernel"] for r, _ in passes]
    return pd.DataFrame([{"workitems": max(g.workitems for g in got),
                          "total_instruction_count": sum(g.total_instruction_count for g in got),
                          "total_memory_footprint": max(g.total_memory_footprint for g in got)}])


def faithfulness(points: pd.DataFrame, specs: dict, *, aiwc: pd.DataFrame | None = None,
                 amaris: pd.DataFrame | None = None, hecbench: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per traced point, Portcast's work against the data's counts.

    AIWC points: ``threads`` / ``workitems``; ``records`` / ``total_instruction_count`` (AIWC counts LLVM IR
    instructions of the OpenCL kernel, Portcast one record per Python-level operation); ``unique_bytes`` /
    ``total_memory_footprint`` (the FFT region against its passes' rows: instructions summed, the largest
    pass's work items and footprint). Amaris points (the first launch of the size, median over the GPUs that have
    it): ``threads`` / grid x block; warp instructions (``thread_records`` / (32 x the lockstep SIMD
    efficiency ``warp_simdEfficiency`` when the features were traced, else / 32, a lower bound)) /
    ``inst_executed``; ``loads`` / ``gld_inst_32bit`` and ``stores`` /
    ``gst_inst_32bit`` (Portcast's loads include the staging tiles a CUDA kernel keeps in shared memory).
    HeCBench points (Nsight Compute on the RTX 3080): ``threads`` / grid x block; ``dram_ratio``: 32 x the
    distinct sectors the threads touch / DRAM bytes moved; ``fp32_ratio``, ``fp64_ratio``: the threads' FP32 and
    FP64 records / the FP32 and FP64 operations (an FMA counts 2 there, one multiply and one add record here);
    ``int_ratio``: integer arithmetic records / integer instructions (which include the address arithmetic a
    Python subscript hides). BabelStream points: ``bytes_ratio``: the distinct bytes the region touches / the
    bytes BabelStream counts (exact: 1). KernelBench points: threads only (the data has no counts).
    Feature points and test points are not in the table."""
    sources = set(points.source)
    aiwc = (aiwc_counts() if aiwc is None else aiwc) if "aiwc" in sources else None
    hb = (hecbench_first_launches() if hecbench is None else hecbench).set_index(["application", "kernel"]) \
        if "hecbench" in sources else None
    rows = []
    amaris_rows = None
    for r in points.itertuples(index=False):
        if spec_point(specs, r) is None:
            continue  # a feature point or the test point: nothing measured there
        spec = specs.get(r.port)
        base = {"port": r.port, "point": r.point, "threads": r.threads, "global_work": r.global_work}
        if r.source == "aiwc":
            m = aiwc[(aiwc.application == r.application) & (aiwc.kernel == r.kernel) & (aiwc["size"] == r.point)]
            if m.empty and spec is not None and r.application == "fft" and r.point in spec.points:
                m = _fft_rows(aiwc, spec, r.point)
            if m.empty:
                continue
            a = m.iloc[0]
            rows.append({**base, "data_threads": float(a.workitems),
                         "work_ratio": r.records / a.total_instruction_count,
                         "footprint_ratio": r.unique_bytes / a.total_memory_footprint,
                         "records": r.records, "data_instructions": float(a.total_instruction_count),
                         "unique_bytes": r.unique_bytes, "data_footprint": float(a.total_memory_footprint)})
        elif r.source == "amaris" and spec is not None and r.point in spec.points:
            if amaris_rows is None:
                amaris_rows = amaris_first_launches() if amaris is None else amaris
            s1, s2 = spec.data_sizes(spec.points[r.point])
            m = amaris_rows[(amaris_rows.kernel == r.kernel) & (amaris_rows["input.size.1"] == s1)
                            & (amaris_rows["input.size.2"] == s2)]
            if m.empty:
                continue
            inst = float(m.inst_executed.median())
            simd = getattr(r, "f_warp_simdEfficiency", float("nan"))
            warps = r.thread_records / (WARP * (simd if simd == simd and simd > 0 else 1.0))
            rows.append({**base, "data_threads": float(m.threads.median()),
                         "work_ratio": warps / inst,
                         "load_ratio": r.loads / float(m.gld_inst_32bit.median()),
                         "store_ratio": r.stores / float(m.gst_inst_32bit.median()),
                         "records": r.records, "data_instructions": inst})
        elif r.source == "hecbench" and (r.application, r.kernel) in hb.index:
            h = hb.loc[(r.application, r.kernel)]
            fp32 = r.thread_fp - r.thread_fp64
            rows.append({**base, "data_threads": float(h.threads),
                         "dram_ratio": _ratio(r.sector_bytes, h.dram_bytes),
                         "fp32_ratio": _ratio(fp32, h.fp32_ops), "fp64_ratio": _ratio(r.thread_fp64, h.fp64_ops),
                         "int_ratio": _ratio(getattr(r, "thread_int", float("nan")), h.int_ops),
                         "records": r.records, "sector_bytes": r.sector_bytes, "data_dram_bytes": h.dram_bytes,
                         "fp32_records": fp32, "data_fp32_ops": h.fp32_ops, "fp64_records": r.thread_fp64,
                         "data_fp64_ops": h.fp64_ops, "int_records": getattr(r, "thread_int", float("nan")),
                         "data_int_ops": h.int_ops})
        elif r.source == "babelstream":
            n = int(spec_point(specs, r)["n"])
            counted = BABELSTREAM_BYTES[r.kernel] * n
            rows.append({**base, "data_threads": float(r.global_work), "bytes_ratio": r.unique_bytes / counted,
                         "unique_bytes": r.unique_bytes, "data_bytes": float(counted), "records": r.records})
        elif r.source == "kernelbench":
            rows.append({**base, "data_threads": float(r.global_work), "records": r.records,
                         "unique_bytes": r.unique_bytes})
    return pd.DataFrame(rows)


def _ratio(ours, theirs) -> float:
    """``ours / theirs``; NaN where the data counts none (whether or not the port has any)."""
    ours, theirs = float(ours), float(theirs)
    return ours / theirs if theirs > 0 else float("nan")


def spec_point(specs: dict, r) -> Mapping | None:
    """The parameters of a points-table row's measured point (None for a port not in ``specs``, a feature point
    or the test point)."""
    spec = specs.get(r.port)
    return None if spec is None else spec.points.get(r.point)


def hecbench_first_launches(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The first launch (first row in file order) of every kernel of the HeCBench CUDA programs measured on the
    RTX 3080: ``application`` (the program without ``-cuda``), ``kernel``, ``point`` (the program's arguments,
    ``"default"`` when it ran without), ``gpu``, ``measured_s`` (Nsight Compute's device time), ``threads`` and
    ``block`` (grid x block, block), and the measured counts ``dram_bytes``, ``fp32_ops``, ``fp64_ops``,
    ``int_ops`` (rates x time)."""
    d = pd.read_csv(path or HECBENCH_DATA)
    d = d[d.targetName.str.endswith("-cuda")]
    d = d.groupby(["targetName", "kernelName"], as_index=False, sort=False).head(1)

    def product(text: str) -> int:
        return int(np.prod([int(v) for v in str(text).strip("()").split(",")]))

    t = d.xtime.to_numpy(np.float64) * 1e-9
    block = d["Block Size"].map(product).to_numpy(np.int64)
    return pd.DataFrame({
        "application": d.targetName.str[:-len("-cuda")].to_numpy(), "kernel": d.kernelName.to_numpy(),
        "point": d.exeArgs.fillna("default").astype(str).to_numpy(), "gpu": d.device.to_numpy(),
        "measured_s": t, "threads": d["Grid Size"].map(product).to_numpy(np.int64) * block, "block": block,
        "dram_bytes": d.traffic.to_numpy(np.float64) * t, "fp32_ops": d.spPerf.to_numpy(np.float64) * t,
        "fp64_ops": d.dpPerf.to_numpy(np.float64) * t, "int_ops": d.intops.to_numpy(np.float64)})


def babelstream_results(folder: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every (file, run) of the BabelStream result files: ``file``, ``gpu`` (the header's device name),
    ``elements`` (float64 elements per array, a power of two), ``point`` (``"2^<k>"``), ``kernel`` (copy, mul,
    add, triad, dot), ``mbytes_per_s`` and ``measured_s``: the fastest of the 100 runs, from the bandwidth column
    (``bytes / (MBytes/sec x 10^6)``: the min-seconds column has only five decimals)."""
    rows = []
    for f in sorted(Path(folder or BABELSTREAM_DATA).glob("*.out")):
        elements = gpu = None
        for line in f.read_text(errors="replace").splitlines():
            parts = line.split()
            if line.startswith("Array size:"):
                mb = float(parts[2])
                elements = 1 << int(round(np.log2(mb * 1e6 / 8)))
            elif line.startswith("Using CUDA device"):
                gpu = line[len("Using CUDA device"):].strip()
            elif parts and parts[0].lower() in BABELSTREAM_BYTES and len(parts) >= 5 and elements and gpu:
                k = parts[0].lower()
                mbps = float(parts[1])
                rows.append({"file": f.name, "gpu": gpu, "elements": elements,
                             "point": f"2^{int(np.log2(elements))}", "kernel": k, "mbytes_per_s": mbps,
                             "measured_s": BABELSTREAM_BYTES[k] * elements / (mbps * 1e6)})
    return pd.DataFrame(rows)


def kernelbench_times(folder: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every level-1 problem time of the KernelBench timing files: ``point`` (the shapes' folder:
    ``before_2025-07`` or ``2026``), ``file`` (the timing file's stem), ``gpu`` (``<point>/<file>``, the key
    of :data:`KERNELBENCH_GPUS`), ``application`` (the problem's file stem), ``measured_s`` (the mean of the
    100 calls; PyTorch eager, so with its launch overhead) and ``min_s``. The H100 PCIe file's
    ``92_cumsum_exclusive`` is left out (its shapes differ from the problem file of its folder)."""
    rows = []
    root = Path(folder or KERNELBENCH_DATA)
    for sub, point in (("sizes_before_2025-07", "before_2025-07"), ("sizes_2026", "2026")):
        for f in sorted((root / sub).glob("*.json")):
            level = json.loads(f.read_text()).get("level1", {})
            for problem, t in sorted(level.items()):
                app = problem[:-3] if problem.endswith(".py") else problem
                if f.stem == "H100_PCIe_LambdaLabs" and app == "92_cumsum_exclusive":
                    continue
                rows.append({"point": point, "file": f.stem, "gpu": f"{point}/{f.stem}", "application": app,
                             "measured_s": float(t["mean"]) * 1e-3, "min_s": float(t["min"]) * 1e-3})
    return pd.DataFrame(rows)


def measured_times(specs: dict, *, aiwc_path=None, amaris=None, hecbench=None, babelstream=None,
                   kernelbench=None) -> pd.DataFrame:
    """Measured kernel time (seconds) of every port x point x GPU of the data: AIWC's median ``kernel_time``
    over its runs (microseconds in the file; a host timer around one enqueue and ``clFinish``, so it
    includes the launch); Amaris's first launch of the size (nvprof's ``duration``, on the GPU); HeCBench's
    first launch (Nsight Compute's device time on the RTX 3080 at its base clock); BabelStream's fastest run
    of the size (median over the files of the same GPU); KernelBench's mean time per call (PyTorch eager, so
    with its per-call overhead; the median over the files of the same GPU, e.g. two L40S files)."""
    rows = []
    sources = {s.source for s in specs.values()}
    if "aiwc" in sources:
        aiwc = pd.read_csv(aiwc_path or AIWC_DATA, usecols=["application", "kernel", "size", "device", "kernel_time"])
        aiwc = aiwc[aiwc.device.isin(list(AIWC_GPUS))]
        med = aiwc.groupby(["application", "kernel", "size", "device"]).kernel_time.median()
    if "amaris" in sources:
        first = amaris_first_launches() if amaris is None else amaris
    if "hecbench" in sources:
        hb = (hecbench_first_launches() if hecbench is None else hecbench).set_index(["application", "kernel"])
    if "babelstream" in sources:
        bs = babelstream_results() if babelstream is None else babelstream
        bs = bs.groupby(["kernel", "point", "gpu"]).measured_s.median()
    if "kernelbench" in sources:
        kb = kernelbench_times() if kernelbench is None else kernelbench
        kb = kb.assign(preset=kb.gpu.map(KERNELBENCH_GPUS))
        kb = kb.groupby(["application", "point", "preset"]).measured_s.median()
    for spec in specs.values():
        if spec.source == "aiwc":
            kernels = [spec.kernel]
            if spec.application == "fft" and spec.kernel == "fft":  # every radix row times the whole FFT
                kernels = sorted({k for (a, k, _, _) in med.index if a == "fft"})
            for label in spec.points:
                for dev, preset in AIWC_GPUS.items():
                    vals = [med[(spec.application, k, label, dev)] for k in kernels
                            if (spec.application, k, label, dev) in med.index]
                    if vals:
                        rows.append({"port": spec.name, "point": label, "gpu": dev, "preset": preset,
                                     "measured_s": float(np.median(vals)) * 1e-6})
        elif spec.source == "amaris":
            for label, params in spec.points.items():
                s1, s2 = spec.data_sizes(params)
                m = first[(first.kernel == spec.kernel) & (first["input.size.1"] == s1) & (first["input.size.2"] == s2)]
                for r in m.itertuples(index=False):
                    rows.append({"port": spec.name, "point": label, "gpu": r.gpu, "preset": AMARIS_GPUS[r.gpu],
                                 "measured_s": float(r.duration)})
        elif spec.source == "hecbench":
            if (spec.application, spec.kernel) in hb.index:
                r = hb.loc[(spec.application, spec.kernel)]
                if r.point in spec.points:
                    rows.append({"port": spec.name, "point": r.point, "gpu": r.gpu, "preset": HECBENCH_GPUS[r.gpu],
                                 "measured_s": float(r.measured_s)})
        elif spec.source == "babelstream":
            for label in spec.points:
                for dev, preset in BABELSTREAM_GPUS.items():
                    if (spec.kernel, label, dev) in bs.index:
                        rows.append({"port": spec.name, "point": label, "gpu": dev, "preset": preset,
                                     "measured_s": float(bs[(spec.kernel, label, dev)])})
        elif spec.source == "kernelbench":
            for label in spec.points:
                for preset in sorted(set(KERNELBENCH_GPUS.values())):
                    if (spec.application, label, preset) in kb.index:
                        rows.append({"port": spec.name, "point": label, "gpu": preset, "preset": preset,
                                     "measured_s": float(kb[(spec.application, label, preset)])})
    return pd.DataFrame(rows)


def application_of(port: str) -> str:
    """``source/application`` of a port name."""
    return "/".join(port.split("/")[:2])


def split_applications(ports: Iterable[str]) -> tuple[list[str], list[str]]:
    """(training, held-out) halves of the applications: in name order, alternately (the first to training),
    so that no constant fitted on the training half has seen a held-out application in any form."""
    apps = sorted({application_of(p) for p in ports})
    return apps[0::2], apps[1::2]


#: ports whose measured time holds more than the kernel, left out of the correlation, with the reason
NOT_KERNEL_TIME = {
    "aiwc/kmeans/invert_mapping": "its AIWC time includes the host-to-device copy of the points (the data's notes)",
}


def pair_times(points: pd.DataFrame, times: pd.DataFrame, *, kernel_only: bool = True,
               simulated_only: bool = True) -> pd.DataFrame:
    """Every traced point's simulated time on every GPU of its data beside the measured one (without the
    ports of :data:`NOT_KERNEL_TIME` when ``kernel_only``); with ``simulated_only=False`` also the traced points
    the SIMT model did not simulate (``simulated_s`` NaN; e.g. a few threads with more records than the
    sample may keep)."""
    if kernel_only:
        points = points[~points.port.isin(list(NOT_KERNEL_TIME))]
    cols = [c for c in points.columns if c.startswith("sim_") and pd.api.types.is_numeric_dtype(points[c])]
    sims = points.melt(id_vars=["port", "point"], value_vars=cols,
                       var_name="preset", value_name="simulated_s").dropna()
    sims["preset"] = sims["preset"].str[4:]
    if simulated_only:
        pairs = times.merge(sims, on=["port", "point", "preset"])
    else:
        traced = times.merge(points[["port", "point"]].drop_duplicates(), on=["port", "point"])
        pairs = traced.merge(sims, on=["port", "point", "preset"], how="left")
    pairs["application"] = pairs.port.map(application_of)
    return pairs


#: candidate launch floors (seconds) for :func:`fit_floors`: 0 and 0.25 us to 200 us, 2% apart
FLOOR_GRID = np.concatenate([[0.0], 0.25e-6 * 1.02 ** np.arange(0, 340)])


#: candidate scale factors for :func:`fit_calibration`: 1/4 to 4, 2% apart (and 1 exactly)
SCALE_GRID = np.unique(np.concatenate([[1.0], 0.25 * 1.02 ** np.arange(0, 141)]))


def fit_calibration(pairs: pd.DataFrame, scales: np.ndarray = SCALE_GRID) -> dict:
    """Per GPU, the scale ``k`` (from ``scales``) and the constant ``f`` (from :data:`FLOOR_GRID`) that
    minimise the median of ``|log(k simulated + f) - log(measured)|`` over ``pairs`` (the training
    applications' pairs only): ``{gpu: (k, f)}``. The scale takes what the model gets wrong on every kernel
    of a GPU alike (its clocks under load, a DRAM efficiency), the constant the launch and the timer."""
    scales = np.asarray(scales, dtype=float)
    out = {}
    for gpu, g in pairs.groupby("gpu"):
        sim, meas = g.simulated_s.to_numpy(), np.log(g.measured_s.to_numpy())
        pred = scales[:, None, None] * sim[None, None, :] + FLOOR_GRID[None, :, None]
        err = np.median(np.abs(np.log(pred) - meas[None, None, :]), axis=2)
        i, j = np.unravel_index(int(np.argmin(err)), err.shape)
        out[gpu] = (float(scales[i]), float(FLOOR_GRID[j]))
    return out


def fit_floors(pairs: pd.DataFrame) -> dict:
    """Per GPU, the constant time ``f`` (a launch overhead and the timer's floor, which the SIMT model does
    not have) that minimises the median of ``|log(simulated + f) - log(measured)|`` over ``pairs`` (give
    it the training applications' pairs only), from :data:`FLOOR_GRID`: :func:`fit_calibration` at scale 1."""
    return {gpu: f for gpu, (_, f) in fit_calibration(pairs, scales=[1.0]).items()}


def correlation(points: pd.DataFrame, times: pd.DataFrame,
                floors: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`summarize` of :func:`pair_times`."""
    return summarize(pair_times(points, times), floors)


def summarize(pairs: pd.DataFrame, floors: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pairs, summary): the pairs with the simulated time plus ``floors[gpu]`` seconds when given (see
    :func:`fit_floors`; or a ``(scale, floor)`` pair per GPU, :func:`fit_calibration`: ``scale x simulated +
    floor``) and its absolute percentage error ``ape``, and per GPU (and ``all``) the number of pairs, the
    mean absolute percentage error, the Pearson correlation of the log times and the Spearman rank
    correlation."""
    from scipy import stats

    pairs = pairs.copy()
    if floors:
        cal = {g: v if isinstance(v, tuple) else (1.0, v) for g, v in floors.items()}
        scale = pairs.gpu.map({g: v[0] for g, v in cal.items()}).fillna(1.0)
        pairs["simulated_s"] = scale * pairs.simulated_s + pairs.gpu.map({g: v[1] for g, v in cal.items()}).fillna(0.0)
    pairs["ape"] = (pairs.simulated_s - pairs.measured_s).abs() / pairs.measured_s
    out = []
    for gpu, g in [*pairs.groupby("gpu"), ("all", pairs)]:
        # a correlation needs three pairs and times that vary on both sides
        ok = len(g) >= 3 and g.simulated_s.nunique() > 1 and g.measured_s.nunique() > 1
        out.append({"gpu": gpu, "pairs": len(g), "mape": float(g.ape.mean()) if len(g) else float("nan"),
                    "pearson_log": float(stats.pearsonr(np.log(g.simulated_s), np.log(g.measured_s))[0]) if ok
                    else float("nan"),
                    "spearman": float(stats.spearmanr(g.simulated_s, g.measured_s)[0]) if ok else float("nan")})
    return pairs, pd.DataFrame(out)


def correlation_parts(raw: pd.DataFrame, floor: bool,
                      scale: bool = False) -> tuple[list[tuple[str, pd.DataFrame, pd.DataFrame]], dict]:
    """(title, pairs, summary) per part of :func:`pair_times`' ``raw`` pairs, and the fitted constants: all
    pairs as the model gives them, or (``floor``) the training half of the applications with a per-GPU floor
    fitted there (:func:`fit_floors`; with ``scale``, a scale and a floor, :func:`fit_calibration`) and the
    held-out half with the same constants."""
    if not floor:
        return [("all applications, the model as it is", *summarize(raw))], {}
    train, held = split_applications(raw.port)
    fit = fit_calibration if scale else fit_floors
    floors = fit(raw[raw.application.isin(train)])
    what = "scale and floor" if scale else "floor"
    parts = [(f"training half ({', '.join(train)}), {what} fitted there", raw[raw.application.isin(train)]),
             (f"held-out half ({', '.join(held)}), never fitted on", raw[raw.application.isin(held)])]
    return [(title, *summarize(p, floors)) for title, p in parts], floors


def calibration_text(fitted: dict) -> str:
    """``GPU floor us`` or ``GPU xscale + floor us`` per GPU of :func:`fit_floors` / :func:`fit_calibration`."""
    def one(v):
        return f"{1e6 * v:.1f} us" if not isinstance(v, tuple) else f"x{v[0]:.2f} + {1e6 * v[1]:.1f} us"

    return ", ".join(f"{GPU_LABELS.get(g, g)} {one(v)}" for g, v in fitted.items())


def faithfulness_by_application(f: pd.DataFrame) -> pd.DataFrame:
    """One row per application of :func:`faithfulness`' table: points, how many have the data's threads,
    the range of the work ratio, and the range of the footprint ratio (AIWC) or the median load and store
    ratios (Amaris)."""
    rows = []
    for app, g in f.assign(application=f.port.map(application_of)).groupby("application", sort=True):
        same = int((g.threads == g.data_threads).sum())
        row = {"application": app, "points": len(g), "threads = data": "all" if same == len(g) else f"{same}",
               "work ratio": (f"{g.work_ratio.min():.2f}-{g.work_ratio.max():.2f}"
                              if "work_ratio" in g and g.work_ratio.notna().any() else "-")}
        if app.startswith("aiwc/"):
            row["footprint ratio / loads, stores"] = f"{g.footprint_ratio.min():.1f}-{g.footprint_ratio.max():.1f}"
        elif app.startswith("hecbench/"):
            row["footprint ratio / loads, stores"] = ", ".join(
                f"{name} {_span(g[col])}" for name, col in (("DRAM", "dram_ratio"), ("FP32", "fp32_ratio"),
                                                            ("FP64", "fp64_ratio"), ("int", "int_ratio"))
                if g[col].notna().any())
        elif app.startswith("babelstream/"):
            row["footprint ratio / loads, stores"] = f"bytes {_span(g.bytes_ratio)}"
        elif app.startswith("kernelbench/"):
            row["footprint ratio / loads, stores"] = "-"
        else:
            row["footprint ratio / loads, stores"] = (f"loads {g.load_ratio.median():.1f}, "
                                                      f"stores {g.store_ratio.median():.1f}")
        rows.append(row)
    return pd.DataFrame(rows)


def _span(values: pd.Series) -> str:
    v = values.dropna()
    if v.empty:
        return "-"
    lo, hi = float(v.min()), float(v.max())
    return f"{lo:.2f}" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f}"


def markdown_table(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (floats with 3 significant digits)."""
    def cell(v):
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def correlation_plot(pairs: pd.DataFrame, out: str | os.PathLike) -> Path:
    """Log-log scatter of simulated against measured time, one colour per GPU (PNG, written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    fig, ax = plt.subplots(figsize=(7, 6))
    colours = plt.get_cmap("tab20").colors  # one of 20 distinct colours per GPU
    for k, (gpu, g) in enumerate(pairs.groupby("gpu")):
        ax.scatter(g.measured_s * 1e6, g.simulated_s * 1e6, s=14, label=GPU_LABELS.get(gpu, gpu), alpha=0.8,
                   color=colours[k % len(colours)])
    if len(pairs):
        lo = min(pairs.measured_s.min(), pairs.simulated_s.min()) * 1e6
        hi = max(pairs.measured_s.max(), pairs.simulated_s.max()) * 1e6
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured kernel time (us)")
    ax.set_ylabel("SIMT model time (us)")
    ax.set_title("Measured kernels: SIMT model against the hardware")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
    return out
