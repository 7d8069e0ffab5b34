"""Sampled tracing: which records of a region the sinks see, and the exact totals of what they do not.

A region's parallel iterations become GPU threads, 256 consecutive iterations a thread block (8 warps). A
sampled trace keeps

* the records outside the thread space (``tid < 0``: the host code around the launches) of the sampled
  *intervals* of the trace (2^14 consecutive records, hashed at the same rate), and the first host record
  after thread records (it separates the launches, so that no sink sees two launches as one);
* every record of the *sampled blocks*: block ``b = tid // 256`` of the region's ``k``-th launch is kept when
  a hash of ``(b, k)`` (and the plan's seed) falls below ``block_rate`` (each launch samples its own blocks);

and hands every memory record to a second test, the *address sample*: the LOAD and STORE records (of any
thread, and of the host) whose 4 KiB page's hash falls below the page rate go to the sinks that take it (at
the region's end; the page rate halves whenever the sample outgrows :data:`ADDRESS_CAP` rows), so
that distinct bytes, sectors, blocks and pages, and long reuse distances, are estimated from every access to
a random set of pages (spatially hashed sampling, SHARDS, Waldspurger et al., FAST 2015), which block
sampling cannot do when blocks share data (the rows above and below of a stencil). A marker record
(``tid = -1``, OTHER) opens every launch in the address sample so that per-launch unions stay per launch.

The :class:`SampleFilter` counts exactly, on every record, what costs nothing to count: records, records per
operation class (all, and inside threads), records per static instruction, LOAD and STORE bytes, load block
references, thread instances total and kept (per replicate group), host intervals, launches, the largest
tid. What it keeps goes to the sinks as ordinary chunks. ``groups`` replicates: each sampled block and page
belongs to one of ``groups`` groups (another hash), so that estimates from each group alone give the
variance of the estimate from all of them (the random group method).

Everything is deterministic: the same region on the same inputs, with the same plan, keeps the same records
(a page of an array the region got from Python is keyed by its place in the array, wherever the CPU put it;
docs/sampling.md says which pages follow the CPU's placement).
"""

from __future__ import annotations

import dataclasses
import math

import numba
import numpy as np

from core.trace_schema import N_OPS, Op

from .runtime import HAS_ADDR, PC_MASK, PC_SHIFT, SIZE_SHIFT, decode_op
from .trace import TraceChunk

#: iterations per sampling unit: a thread block of 256 (8 warps of 32); a unit's first records see a gap
#: to the unit sampled before it (a stride, a reuse), 1 in 256 iterations' worth: an error within 0.004
UNIT_SHIFT = 8
UNIT = 1 << UNIT_SHIFT
#: bytes per unit of the address sample (a page)
PAGE_SHIFT = 12
#: replicate groups by default (the variance of an estimate comes from these)
DEFAULT_GROUPS = 8
#: records of the sampled blocks a region's sinks should see under ``--sample auto`` (each costs the sinks about
#: 400 ns: 200 for the estimate, 200 for the replicates)
AUTO_BUDGET_RECORDS = 1_000_000
#: ``--sample auto`` samples a region of more records than this (below it the exact trace costs about as much)
AUTO_MIN_RECORDS = 4_000_000
#: rows the address sample keeps at most (about 40 bytes each)
ADDRESS_CAP = 1 << 21

_LOAD, _STORE, _OTHER = int(Op.LOAD), int(Op.STORE), int(Op.OTHER)
_M53 = float(1 << 53)

# the filter's counters (:attr:`SampleFilter.counts`)
RECORDS, THREAD_RECORDS, INSTANCES, KEPT_INSTANCES, LAUNCHES, MAX_TID, PREV_TID, KEPT_RECORDS, LOAD_BYTES, \
    STORE_BYTES, SIDE_RECORDS, CUR_KEEP, CUR_GROUP, THREAD_LOAD_BYTES, THREAD_STORE_BYTES, CUR_INTERVAL, \
    LOAD_BLOCK_REFS, HOST_UNITS, KEPT_HOST_UNITS, CUR_IV_KEEP, CUR_IV_GROUP, ARRAYS_SEEN = range(22)
N_COUNTS = 22
#: records per interval of the sequential trace, the unit of a region without a thread space (2^14)
INTERVAL_SHIFT = 14
INSTANCE_RECORDS = 1 << INTERVAL_SHIFT


@dataclasses.dataclass(frozen=True)
class SamplePlan:
    """What a sampled trace keeps: thread blocks of the thread space at ``block_rate``, pages of the address sample at
    ``page_rate`` (both in (0, 1]), hashed with ``seed``; ``groups`` replicate groups."""

    block_rate: float
    page_rate: float
    seed: int = 0
    groups: int = DEFAULT_GROUPS
    #: the region has no thread space (set per region by the tracer): all its records are host code, sampled by
    #: intervals of 2^14 records (as every region's host code is)
    intervals: bool = False

    def __post_init__(self) -> None:
        for name in ("block_rate", "page_rate"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 < float(v) <= 1.0):
                raise ValueError(f"sample plan: {name} must be in (0, 1], got {v!r}")
        if not (isinstance(self.groups, int) and 2 <= self.groups <= 64):
            raise ValueError(f"sample plan: groups must be an integer in 2..64, got {self.groups!r}")

    @classmethod
    def at_rate(cls, rate: float, seed: int = 0, groups: int = DEFAULT_GROUPS) -> "SamplePlan":
        """Blocks at ``rate``; every page to begin with (the address sample's cap lowers the page rate as the
        region goes on: a region whose memory records fit in the cap has an exact address sample)."""
        return cls(float(rate), 1.0, seed, groups)

    @property
    def page_shift(self) -> int:
        """log2(1 / page_rate), rounded: how many reuse buckets the address sample's distances move up."""
        return max(0, round(-math.log2(self.page_rate)))

    @classmethod
    def auto(cls, records: float | None, seed: int = 0) -> "SamplePlan | None":
        """The plan ``--sample auto`` uses for a region of about ``records`` records: None (the exact trace)
        when that is at most :data:`AUTO_MIN_RECORDS` or unknown, else the rate that leaves the sinks about
        :data:`AUTO_BUDGET_RECORDS` records."""
        if records is None or not records > AUTO_MIN_RECORDS:
            return None
        return cls.at_rate(AUTO_BUDGET_RECORDS / float(records), seed)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@numba.njit(cache=True, inline="always")
def _mix(x):
    """splitmix64's finaliser: a well-mixed 64-bit hash of ``x``."""
    z = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def _unit_hash(x, seed, salt):
    """A hash of unit ``x`` as a float in [0, 1) (53 bits)."""
    h = _mix(np.uint64(x) ^ _mix(np.uint64(seed) * np.uint64(2) + np.uint64(salt)))
    return float(h >> np.uint64(11)) / _M53


@numba.njit(cache=True, inline="always")
def _group_of(x, seed, groups):
    return np.int64(_mix(np.uint64(x) ^ _mix(np.uint64(seed) * np.uint64(2) + np.uint64(7))) % np.uint64(groups))


@numba.njit(cache=True, inline="always")
def _unit_key(block, launch):
    """The sampling unit of thread block ``block`` of the region's ``launch``-th launch (from 1): each launch
    samples its own blocks, so that a region of many small launches is sampled launch by launch."""
    return np.uint64(block) ^ (np.uint64(launch) * np.uint64(0x9E3779B97F4A7C15))


def block_kept(block: int, plan: SamplePlan, launch: int = 1) -> bool:
    """Whether ``plan`` keeps thread block ``block`` (tid // 256) of the ``launch``-th launch (for tests and
    documentation: the filter's rule)."""
    key = np.uint64(_unit_key(np.int64(block), np.int64(launch)))
    return _unit_hash(key, np.int64(plan.seed), np.int64(1)) < plan.block_rate


def interval_kept(interval: int, plan: SamplePlan) -> bool:
    """Whether ``plan`` keeps the host records of interval ``interval`` (record index // 2^14) of the trace."""
    return _unit_hash(np.int64(interval), np.int64(plan.seed), np.int64(3)) < plan.block_rate


def interval_group(interval: int, plan: SamplePlan) -> int:
    """The replicate group of interval ``interval``'s host records."""
    return int(_group_of(np.int64(interval), np.int64(plan.seed), np.int64(plan.groups)))


def page_kept(page: int, plan: SamplePlan) -> bool:
    """Whether ``plan``'s address sample keeps 4 KiB page ``page``."""
    return _unit_hash(np.int64(page), np.int64(plan.seed), np.int64(2)) < plan.page_rate


def block_group(block: int, plan: SamplePlan, launch: int = 1) -> int:
    """The replicate group of thread block ``block`` of the ``launch``-th launch (0 .. groups - 1)."""
    key = np.uint64(_unit_key(np.int64(block), np.int64(launch)))
    return int(_group_of(key, np.int64(plan.seed), np.int64(plan.groups)))


def page_group(page: int, plan: SamplePlan) -> int:
    """The replicate group of page key ``page`` (0 .. groups - 1)."""
    return int(_group_of(np.int64(page), np.int64(plan.seed), np.int64(plan.groups)))


@numba.njit(cache=True, inline="always")
def _address_row(s_addr, s_size, s_op, s_tid, s_pc, s_key, ns, launch_open, a, size, op, tid, pc, key):
    """Append a row to the address sample (after a launch marker, tid -1 and key -1, when the row opens a
    launch); returns the new row count."""
    if launch_open:
        s_addr[ns] = 0
        s_size[ns] = 0
        s_op[ns] = _OTHER
        s_tid[ns] = -1
        s_pc[ns] = 0
        s_key[ns] = -1
        ns += 1
    s_addr[ns] = a
    s_size[ns] = size
    s_op[ns] = op
    s_tid[ns] = tid
    s_pc[ns] = pc
    s_key[ns] = key
    return ns + 1


@numba.njit(cache=True)
def _filter(tid, op, pc, addr, size, bthr, pthr, seed, groups, c, ops_all, ops_thr, pcs, group_inst,
            keep, keep_group, s_addr, s_size, s_op, s_tid, s_pc, s_key):  # pragma: no cover - compiled
    """One pass over a decoded chunk: the exact counts (``c``, ``ops_all``, ``ops_thr``, ``pcs``,
    ``group_inst``: kept thread instances per group), the rows kept (``keep``, their group in ``keep_group``,
    -1 for host rows) and the address sample's rows, decoded (``s_*``; ``s_key``: the page key, -1 for the
    launch marker written before a row that opens a launch). The page key is the page in the trace.
    Returns (kept, address-sample rows)."""
    nk = 0
    ns = 0
    prev = c[PREV_TID]
    cur_keep = c[CUR_KEEP]
    cur_group = c[CUR_GROUP]
    launch_open = 0
    s1 = _salt(seed, 1)
    s2 = _salt(seed, 2)
    s3 = _salt(seed, 3)
    s7 = _salt(seed, 7)
    ug = np.uint64(groups)
    cache_page = np.full(8, -1, np.int64)  # pages seen last (direct-mapped) and whether they are sampled
    cache_in = np.zeros(8, np.int64)
    records = c[RECORDS]
    thread_records = launches = instances = kept_instances = host_units = kept_host_units = 0
    lb = sb = tlb = tsb = brefs = 0
    iv_keep = c[CUR_IV_KEEP]
    iv_group = c[CUR_IV_GROUP]
    top = c[MAX_TID]
    cur_iv = c[CUR_INTERVAL]
    npcs = pcs.shape[0]
    for i in range(tid.shape[0]):
        t = tid[i]
        o = op[i]
        records += 1
        ops_all[o] += 1
        p = pc[i]
        if p >= 0 and p < npcs:
            pcs[p] += 1
        if t >= 0:
            thread_records += 1
            ops_thr[o] += 1
            if t > top:
                top = t
            if t != prev:
                if prev < 0 or t < prev:
                    launches += 1
                    launch_open = 1
                instances += 1
                b = _unit_key(t >> 8, c[LAUNCHES] + launches)
                cur_keep = 1 if _below(b, s1, bthr) else 0
                cur_group = np.int64(_mix(b ^ s7) % ug)
                if cur_keep:
                    kept_instances += 1
                    group_inst[cur_group] += 1
        else:  # host code: kept with its interval of the trace, or as the first record after thread records
            iv = (records - 1) >> INTERVAL_SHIFT
            if iv != cur_iv:
                cur_iv = iv
                host_units += 1
                iv_keep = 1 if _below(iv, s3, bthr) else 0
                iv_group = np.int64(_mix(np.uint64(iv) ^ s7) % ug)
                kept_host_units += iv_keep
            if prev >= 0:  # it separates the launches before and after it: kept, in every replicate
                cur_keep = 1
                cur_group = -1
            else:
                cur_keep = iv_keep
                cur_group = iv_group
        prev = t
        if o == _LOAD or o == _STORE:
            z = size[i]
            if o == _LOAD:
                lb += z
                if t >= 0:
                    tlb += z
            else:
                sb += z
                if t >= 0:
                    tsb += z
            if z > 0:
                if o == _LOAD:  # the 64-byte blocks the load touches (the reuse family's block references)
                    brefs += 1 + (((addr[i] & 63) + z - 1) >> 6)
                pg = addr[i] >> 12
                slot = pg & 7
                if cache_page[slot] != pg:
                    cache_page[slot] = pg
                    cache_in[slot] = 1 if _below(pg, s2, pthr) else 0
                if cache_in[slot]:
                    ns = _address_row(s_addr, s_size, s_op, s_tid, s_pc, s_key, ns, launch_open, addr[i], z, o, t,
                                      p, pg)
                    launch_open = 0
        if cur_keep:
            keep[nk] = i
            keep_group[nk] = cur_group
            nk += 1
    c[RECORDS] = records
    c[THREAD_RECORDS] += thread_records
    c[LAUNCHES] += launches
    c[INSTANCES] += instances
    c[KEPT_INSTANCES] += kept_instances
    c[MAX_TID] = top
    c[CUR_INTERVAL] = cur_iv
    c[LOAD_BYTES] += lb
    c[STORE_BYTES] += sb
    c[THREAD_LOAD_BYTES] += tlb
    c[THREAD_STORE_BYTES] += tsb
    c[LOAD_BLOCK_REFS] += brefs
    c[HOST_UNITS] += host_units
    c[KEPT_HOST_UNITS] += kept_host_units
    c[CUR_IV_KEEP] = iv_keep
    c[CUR_IV_GROUP] = iv_group
    c[PREV_TID] = prev
    c[CUR_KEEP] = cur_keep
    c[CUR_GROUP] = cur_group
    c[KEPT_RECORDS] += nk
    return nk, ns


@numba.njit(cache=True, inline="always")
def _device(a, low, high, delta):
    """``(trace address, allocation, 0)`` of CPU address ``a`` (as :func:`profiler.runtime.to_device`); the
    allocation is -1 for an address outside the arrays the region got from Python. The address sample keys a
    page of such an array by :func:`_page_key`, any other by its page in the trace."""
    m = low.shape[0]
    if m == 0 or a < low[0] or a >= high[m - 1]:
        return a, -1, a >> 12
    lo, hi = 0, m
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if low[mid] <= a:
            lo = mid
        else:
            hi = mid
    if a >= high[lo]:
        return a, -1, a >> 12
    return a + delta[lo], lo, np.int64(0)


@numba.njit(cache=True, inline="always")
def _page_key(a, lo, rank):
    """The page key of CPU address ``a`` in the array starting at ``lo`` that the region touched ``rank``-th
    (first touches come in program order, wherever the CPU put the arrays)."""
    return ((a - lo) >> 12) + rank * np.int64(0x51ED2700000)


@numba.njit(cache=True, inline="always")
def _salt(seed, salt):
    return _mix(np.uint64(seed) * np.uint64(2) + np.uint64(salt))


@numba.njit(cache=True, inline="always")
def _below(x, salt, threshold):
    """Whether unit ``x``'s hash (salted) falls below ``threshold`` (a fraction of 2^64, as an integer)."""
    return _mix(np.uint64(x) ^ salt) < threshold


def _threshold(rate: float) -> np.uint64:
    """``rate`` as a fraction of 2^64 (1.0: every unit)."""
    if rate >= 1.0:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return np.uint64(int(rate * float(1 << 53)) << 11)


# The helpers of _filter_coded take and return scalars only: an array handed to an inlined helper costs a
# reference count increment and decrement per row that Numba does not prune in that loop (2 to 3 times slower).
@numba.njit(cache=True, inline="always")
def _add_bytes(is_load, size, inside, lb, sb, tlb, tsb):
    """The byte counts (loaded, stored, and those of thread code) after a load or store of ``size`` bytes."""
    if is_load:
        lb += size
        if inside:
            tlb += size
    else:
        sb += size
        if inside:
            tsb += size
    return lb, sb, tlb, tsb


@numba.njit(cache=True, inline="always")
def _load_lines(is_load, a, size):
    """The 64-byte lines a load of ``size`` bytes at device address ``a`` touches (0 for a store)."""
    if is_load:
        return 1 + (((a & 63) + size - 1) >> 6)
    return 0


@numba.njit(cache=True, inline="always")
def _interval_choice(iv, s3, s7, bthr, ug):
    """(1 if host interval ``iv`` is kept else 0, its replicate group)."""
    return (1 if _below(iv, s3, bthr) else 0), np.int64(_mix(np.uint64(iv) ^ s7) % ug)


@numba.njit(cache=True)
def _filter_coded(codes, addrs, n, trow, tval, k, tid0, low, high, delta, rank, bthr, pthr, seed, groups, c, low6,
                  pcs, group_inst, ktrow, ktval, kgroup, s_addr, s_size, s_op, s_tid, s_pc,
                  s_key):  # pragma: no cover - compiled
    """:func:`_filter` on the compiled buffer's compact stream, before anything is decoded: counts every row
    (``low6``: rows by the code's low six bits, host rows in the first 64 entries, thread rows in the next 64),
    compacts the kept rows in place (``codes``, ``addrs``; their thread changes into ``ktrow``, ``ktval``,
    their groups into ``kgroup``) and writes the address sample decoded (with a launch marker before each row
    that opens a launch). ``bthr``, ``pthr``: the block and page thresholds (:func:`_threshold`). Returns
    (kept rows, kept thread changes, address-sample rows, the thread after the last row)."""
    nk = 0
    nkt = 0
    ns = 0
    prev = c[PREV_TID]
    cur_keep = c[CUR_KEEP]
    cur_group = c[CUR_GROUP]
    launch_open = 0
    t = tid0
    m = 0
    pc_alloc = np.full(pcs.shape[0], -1, np.int64)
    s1 = _salt(seed, 1)
    s2 = _salt(seed, 2)
    s3 = _salt(seed, 3)
    s7 = _salt(seed, 7)
    ug = np.uint64(groups)
    base = c[RECORDS]
    cur_iv = c[CUR_INTERVAL]
    cache_page = np.full(8, -1, np.int64)  # pages seen last (direct-mapped) and whether they are sampled
    cache_in = np.zeros(8, np.int64)
    lb = sb = tlb = tsb = brefs = 0
    launches = instances = kept_instances = host_units = kept_host_units = 0
    iv_keep = c[CUR_IV_KEEP]
    iv_group = c[CUR_IV_GROUP]
    top = c[MAX_TID]
    npcs = pcs.shape[0]
    next_change = trow[0] if k > 0 else n
    for j in range(n):
        while j >= next_change:
            t = tval[m]
            m += 1
            next_change = trow[m] if m < k else n
            if t > top:
                top = t
        code = codes[j]
        p = (code >> PC_SHIFT) & PC_MASK
        if p < npcs:
            pcs[p] += 1
        inside = t >= 0
        low6[(code & 63) + (64 if inside else 0)] += 1
        if t != prev:
            if inside:
                if prev < 0 or t < prev:
                    launches += 1
                    launch_open = 1
                instances += 1
                b = _unit_key(t >> 8, c[LAUNCHES] + launches)
                cur_keep = 1 if _below(b, s1, bthr) else 0
                if cur_keep:
                    cur_group = np.int64(_mix(b ^ s7) % ug)
                    kept_instances += 1
                    group_inst[cur_group] += 1
        if not inside:  # host code: kept with its interval of the trace, or as the first record after threads
            iv = (base + j) >> INTERVAL_SHIFT
            if iv != cur_iv:
                cur_iv = iv
                host_units += 1
                iv_keep, iv_group = _interval_choice(iv, s3, s7, bthr, ug)
                kept_host_units += iv_keep
            if prev >= 0:  # it separates the launches before and after it: kept, in every replicate
                cur_keep = 1
                cur_group = -1
            else:
                cur_keep = iv_keep
                cur_group = iv_group
        if t != prev:
            prev = t
        if code & HAS_ADDR:
            o4 = (code >> 1) & 15
            if o4 == _LOAD or o4 == _STORE:
                size = code >> SIZE_SHIFT
                lb, sb, tlb, tsb = _add_bytes(o4 == _LOAD, size, inside, lb, sb, tlb, tsb)
                if size > 0:
                    raw = addrs[j]
                    q = pc_alloc[p] if p < npcs else -1  # the array this instruction touched last
                    if q >= 0 and low[q] <= raw and raw < high[q]:
                        a = raw + delta[q]
                    else:
                        a, q, pg = _device(raw, low, high, delta)
                        if p < npcs:
                            pc_alloc[p] = q
                    if q >= 0:
                        if rank[q] < 0:
                            rank[q] = c[ARRAYS_SEEN]
                            c[ARRAYS_SEEN] += 1
                        pg = _page_key(raw, low[q], rank[q])
                    else:
                        pg = a >> 12
                    brefs += _load_lines(o4 == _LOAD, a, size)
                    slot = pg & 7
                    if cache_page[slot] != pg:
                        cache_page[slot] = pg
                        cache_in[slot] = 1 if _below(pg, s2, pthr) else 0
                    if cache_in[slot]:
                        ns = _address_row(s_addr, s_size, s_op, s_tid, s_pc, s_key, ns, launch_open, a, size, o4,
                                          t, p, pg)
                        launch_open = 0
        if cur_keep:
            if nkt == 0 or ktval[nkt - 1] != t:
                ktrow[nkt] = nk
                ktval[nkt] = t
                nkt += 1
            codes[nk] = code
            addrs[nk] = addrs[j]
            kgroup[nk] = cur_group
            nk += 1
    c[CUR_INTERVAL] = cur_iv
    c[RECORDS] += n
    c[MAX_TID] = top
    c[LAUNCHES] += launches
    c[INSTANCES] += instances
    c[KEPT_INSTANCES] += kept_instances
    c[PREV_TID] = prev
    c[CUR_KEEP] = cur_keep
    c[CUR_GROUP] = cur_group
    c[KEPT_RECORDS] += nk
    c[LOAD_BYTES] += lb
    c[STORE_BYTES] += sb
    c[THREAD_LOAD_BYTES] += tlb
    c[THREAD_STORE_BYTES] += tsb
    c[LOAD_BLOCK_REFS] += brefs
    c[HOST_UNITS] += host_units
    c[KEPT_HOST_UNITS] += kept_host_units
    c[CUR_IV_KEEP] = iv_keep
    c[CUR_IV_GROUP] = iv_group
    return nk, nkt, ns, t


@numba.njit(cache=True)
def _low6_ops(low6, ops_all, ops_thr):  # pragma: no cover - compiled
    """Add the rows counted by low code bits (:func:`_filter_coded`) to the counts per operation class."""
    for half in range(2):
        for b in range(64):
            v = low6[half * 64 + b]
            if v:
                o, _ = decode_op(np.int64(b))
                ops_all[o] += v
                if half:
                    ops_thr[o] += v
        low6[half * 64:half * 64 + 64] = 0


@numba.njit(cache=True)
def _page_hashes(keys, seed, groups, hashes, group):  # pragma: no cover - compiled
    """The address sample's hash of each page key (``hashes``; the launch markers, key -1, get 0: they stay
    in every sample) and its replicate group (``group``; -1 for the markers)."""
    s2 = _salt(seed, 2)
    s7 = _salt(seed, 7)
    ug = np.uint64(groups)
    for i in range(keys.shape[0]):
        k = keys[i]
        if k == -1:
            hashes[i] = np.uint64(0)
            group[i] = -1
        else:
            hashes[i] = _mix(np.uint64(k) ^ s2)
            group[i] = np.int64(_mix(np.uint64(k) ^ s7) % ug)


def take(chunk: TraceChunk, rows: np.ndarray) -> TraceChunk:
    """The records ``rows`` of ``chunk`` (a new chunk)."""
    return TraceChunk(**{name: np.asarray(getattr(chunk, name))[rows] for name in
                         ("pc", "op", "taken", "src1", "src2", "src3", "dst", "addr", "size", "tid")})


@dataclasses.dataclass
class SampleCounts:
    """What the filter counted exactly over a whole region invocation, and what it kept."""

    plan: SamplePlan
    counts: np.ndarray  # N_COUNTS counters (module constants)
    ops_all: np.ndarray  # records per operation class
    ops_thread: np.ndarray  # records with tid >= 0 per operation class
    pcs: np.ndarray  # records per static instruction
    group_instances: np.ndarray  # kept thread instances per replicate group
    page_rate: float = 1.0  # the address sample's final page rate (the plan's, halved while it outgrew its cap)

    def __getitem__(self, k: int) -> int:
        return int(self.counts[k])

    @property
    def weight(self) -> float:
        """Thread instances in all / kept: the factor a count over the kept threads is scaled by (1 when the
        region has no thread space or nothing was sampled away)."""
        kept = self[KEPT_INSTANCES]
        return self[INSTANCES] / kept if kept else (1.0 if not self[INSTANCES] else math.inf)

    def group_weight(self, g: int) -> float:
        kept = int(self.group_instances[g])
        return self[INSTANCES] / kept if kept else math.inf

    def to_json(self) -> dict:
        """The counts a region's metadata keeps (``info.extra["sample"]``)."""
        return {"plan": self.plan.to_json(), "records": self[RECORDS], "thread_records": self[THREAD_RECORDS],
                "kept_records": self[KEPT_RECORDS], "address_sample_records": self[SIDE_RECORDS],
                "thread_instances": self[INSTANCES], "kept_thread_instances": self[KEPT_INSTANCES],
                "launches": self[LAUNCHES], "max_tid": self[MAX_TID], "page_rate": self.page_rate,
                "host_intervals": self[HOST_UNITS], "kept_host_intervals": self[KEPT_HOST_UNITS],
                "unit": "thread blocks of 256; host code: intervals of 16,384 records",
                "group_thread_instances": [int(v) for v in self.group_instances]}


class SampleFilter:
    """Sits between a tracer and its sinks: counts every chunk exactly, hands the kept records to the sinks
    (``consume``, with each kept row's replicate group in ``chunk_groups`` during the call) and keeps the
    address sample, bounded: when it grows past ``address_cap`` rows, the page rate halves and the rows of
    the pages no longer sampled go (fixed-size SHARDS: a page below the final rate was below every earlier one,
    so every access to it is kept). At the region's end the address sample goes to the sinks that take it
    (``consume_address_sample``, with the rows' page groups in ``address_groups``)."""

    def __init__(self, plan: SamplePlan, sinks, n_pcs: int = 0, address_cap: int = ADDRESS_CAP) -> None:
        self.plan = plan
        self.sinks = list(sinks)
        self.side_sinks = [s for s in self.sinks if hasattr(s, "consume_address_sample")]
        self.n_pcs = max(1, int(n_pcs))
        self.address_cap = max(16, int(address_cap))
        self.result: SampleCounts | None = None
        self.reset()

    def reset(self) -> None:
        c = np.zeros(N_COUNTS, np.int64)
        c[PREV_TID] = -1
        c[MAX_TID] = -1
        c[CUR_KEEP] = 1
        c[CUR_GROUP] = -1
        c[CUR_INTERVAL] = -1
        self.counts = c
        self.ops_all = np.zeros(N_OPS, np.int64)
        self.ops_thread = np.zeros(N_OPS, np.int64)
        self.pcs = np.zeros(self.n_pcs, np.int64)
        self.group_instances = np.zeros(self.plan.groups, np.int64)
        self._low6 = np.zeros(128, np.int64)
        self.page_rate = float(self.plan.page_rate)
        self._rank = None  # the order in which the region first touched each array it got from Python
        self._parts: list[tuple] = []  # the address sample so far: (addr, size, op, tid, pc, key) arrays
        self._rows = 0

    @property
    def _page_threshold(self) -> np.uint64:
        return _threshold(self.page_rate)

    def _keep_address_rows(self, ns, cols) -> None:
        if not ns or not self.side_sinks:
            return
        self._parts.append(tuple(c[:ns].copy() for c in cols))
        self._rows += ns
        while self._rows > self.address_cap and self.page_rate > 2.0 ** -60:
            self.page_rate /= 2.0
            thr = self._page_threshold
            parts, self._rows = [], 0
            for part in self._parts:
                h = np.empty(len(part[5]), np.uint64)
                _page_hashes(part[5], np.int64(self.plan.seed), np.int64(self.plan.groups), h,
                             np.empty(len(h), np.int64))
                m = h < thr
                if m.any():
                    parts.append(tuple(c[m] for c in part))
                    self._rows += int(m.sum())
            self._parts = parts

    def filter(self, chunk: TraceChunk) -> None:
        """Count a decoded ``chunk``, hand its kept records to the sinks and keep its address sample."""
        n = len(chunk)
        if not n:
            return
        tid, op, pc, addr, size = chunk.tid, chunk.op, chunk.pc, chunk.addr, chunk.size
        keep = np.empty(n, np.int64)
        kgroup = np.empty(n, np.int64)
        cols = _address_columns(2 * n + 1)
        p = self.plan
        nk, ns = _filter(tid, op, pc, addr, size, _threshold(p.block_rate), self._page_threshold, np.int64(p.seed),
                         np.int64(p.groups), self.counts, self.ops_all, self.ops_thread, self.pcs,
                         self.group_instances, keep, kgroup, *cols)
        self._keep_address_rows(ns, cols)
        if nk:
            kept = chunk if nk == n else take(chunk, keep[:nk])
            self.chunk_groups = kgroup[:nk]
            for s in self.sinks:
                s.consume(kept)

    def filter_coded(self, buf, n: int, k: int, tid0: int) -> tuple[int, int, int]:
        """Count the compiled buffer's first ``n`` rows (``k`` thread changes, thread ``tid0`` before the first)
        in place, keep the address sample and leave only the kept rows in the buffer (with their thread
        changes): returns (kept rows, kept thread changes, the thread after the last row). The caller hands the
        kept rows to the sinks with :meth:`deliver_kept`."""
        B = buf.B
        ktrow = np.empty(n + 1, np.int64)
        ktval = np.empty(n + 1, np.int64)
        kgroup = np.empty(n, np.int64)
        cols = _address_columns(2 * n + 1)
        p = self.plan
        low, high, delta = buf.allocations
        if self._rank is None or len(self._rank) != len(low):
            self._rank = np.full(len(low), -1, np.int64)
        nk, nkt, ns, t_end = _filter_coded(
            B[0], B[1], n, B[2], B[3], k, tid0, low, high, delta, self._rank, _threshold(p.block_rate),
            self._page_threshold, np.int64(p.seed), np.int64(p.groups), self.counts, self._low6,
            self.pcs,
            self.group_instances, ktrow, ktval, kgroup, *cols)
        self._keep_address_rows(ns, cols)
        B[2][:nkt] = ktrow[:nkt]
        B[3][:nkt] = ktval[:nkt]
        self.chunk_groups = kgroup[:nk]
        return nk, nkt, t_end

    def deliver_kept(self, chunk) -> None:
        """Hand kept records (counted by :meth:`filter_coded`) to the sinks."""
        for s in self.sinks:
            s.consume(chunk)

    def _deliver_address_sample(self) -> None:
        if not self._parts:
            return
        addr, size, op, tid, pc, key = (np.concatenate([p[i] for p in self._parts]) for i in range(6))
        self._parts, self._rows = [], 0
        h = np.empty(len(key), np.uint64)
        groups = np.empty(len(key), np.int64)
        _page_hashes(key, np.int64(self.plan.seed), np.int64(self.plan.groups), h, groups)
        self.counts[SIDE_RECORDS] = int((key != -1).sum())
        step = 1 << 16
        for a in range(0, len(key), step):
            b = min(len(key), a + step)
            z = np.zeros(b - a, np.int32)
            chunk = TraceChunk(pc=pc[a:b], op=op[a:b], taken=np.zeros(b - a, np.uint8), src1=z, src2=z, src3=z,
                               dst=z, addr=addr[a:b], size=size[a:b], tid=tid[a:b])
            self.address_groups = groups[a:b]
            for s in self.side_sinks:
                s.consume_address_sample(chunk)

    def finish(self) -> SampleCounts:
        """The region's exact counts, after handing the address sample to the sinks (a fresh filter for the
        next region)."""
        self.counts[THREAD_RECORDS] += int(self._low6[64:].sum())
        _low6_ops(self._low6, self.ops_all, self.ops_thread)
        self._deliver_address_sample()
        self.result = SampleCounts(self.plan, self.counts.copy(), self.ops_all.copy(), self.ops_thread.copy(),
                                   self.pcs.copy(), self.group_instances.copy(), self.page_rate)
        self.reset()
        return self.result


def _address_columns(m: int) -> tuple:
    """Empty columns for up to ``m`` address-sample rows: addr, size, op, tid, pc, page key."""
    return (np.empty(m, np.int64), np.empty(m, np.int32), np.empty(m, np.uint8), np.empty(m, np.int64),
            np.empty(m, np.int32), np.empty(m, np.int64))


class SamplingSink:
    """A sink that samples for the sinks behind it: the tracers without a filter of their own (the native
    recorder, the importers, a trace file read back) give it every chunk; it counts them exactly, hands the
    kept records and, at the region's end, the address sample on, and puts the exact counts into the region's
    metadata (``info.extra["sample"]``, ``info.n_records``, ``info.n_threads``) before the sinks behind it
    end the region. Thread records are sampled by blocks, host records by intervals of the trace."""

    def __init__(self, plan: SamplePlan, sinks, n_pcs: int = 1 << 16) -> None:
        # these tracers say nothing of a thread space in advance: their host records (all of a region without
        # threads, e.g. a native region without region_thread markers) are sampled by intervals
        plan = dataclasses.replace(plan, intervals=True)
        self.filter = SampleFilter(plan, sinks, n_pcs)
        for s in self.filter.sinks:
            if hasattr(s, "bind_sample_filter"):
                s.bind_sample_filter(self.filter)

    def start_region(self, info, static) -> None:
        self.filter.n_pcs = max(self.filter.n_pcs, len(static) + 1)
        self.filter.reset()
        for s in self.filter.sinks:
            if hasattr(s, "bind_sample_filter"):
                s.bind_sample_filter(self.filter)
            s.start_region(info, static)

    def consume(self, chunk) -> None:
        self.filter.filter(chunk)

    def end_region(self, info, static) -> None:
        counts = self.filter.finish()
        info.extra["sample"] = counts.to_json()
        info.n_records = counts[RECORDS]
        info.n_threads = counts[MAX_TID] + 1
        for s in self.filter.sinks:
            s.end_region(info, static)
