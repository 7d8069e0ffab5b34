"""Warp-level views (features/warp.py): lockstep warps by the minimum-PC rule, streamed chunk by chunk.

Checked against the spec's worked example W1, hand-built traces with known answers, the slow reference
(featref.warp) on random traces cut at every place, the SIMT model's warps (gpu_models/simt/threads.py) on
traces of corpus kernels, address shifts by whole sectors, and the temporary-file buffer.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from featref import records, warp, warp_totals
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import features.warp as fw
from core.trace_schema import Op, TraceError
from features import FeatureEngine, WarpAnalyzer
from features.warp import _union_bytes_sectors
from profiler.trace import TraceChunk

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
COUNTS = ("warp_threads", "warp_launches")


def _run(chunk, cuts=None, analyzer=None):
    """The analyzer fed ``chunk`` cut before each index in ``cuts`` (sorted, within 1..len-1)."""
    a = analyzer or WarpAnalyzer()
    bounds = [0, *(cuts or []), len(chunk)]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        a.consume(chunk.slice(lo, hi))
    return a


def _assert_equal_to_reference(chunk, a):
    recs = records(chunk)
    want = warp(recs)
    got = a.result()
    assert set(got) == set(want)
    for name, v in want.items():
        if name in COUNTS:
            assert got[name] == v, name
        else:
            assert got[name] == pytest.approx(v, rel=1e-12, abs=0), name
    t = warp_totals(recs)
    c = a.counts()
    assert (c["warp_instructions"], c["active_lanes"], c["memory_instructions"], c["sectors"], c["ideal_sectors"],
            c["branches"], c["divergent_branches"], c["instances"], c["launches"]) == \
        (t["instructions"], t["active"], t["mem"], t["sectors"], t["ideal"], t["branches"], t["divergent"],
         t["instances"], t["launches"])
    # the lines behind warp_bdiv and warp_coalescing: divergent warp branches and sectors beyond the ideal
    # per static id, summing to the totals
    assert a.contributions() == {"warp_bdiv": {pc: float(n) for pc, n in t["divergent_pcs"].items()},
                                 "warp_coalescing": {pc: float(n) for pc, n in t["excess_pcs"].items()}}
    assert sum(a.contributions()["warp_coalescing"].values()) == c["sectors"] - c["ideal_sectors"]


# ------------------------------------------------------------------------------------------ W1 and hand-built


def w1_trace():
    """The spec's worked example W1: 64 threads, LOAD x[t] (8 B, x at 0x1000), BRANCH taken iff t is odd,
    then on the taken side LOAD y[0] (8 B at 0x9000)."""
    rows = []
    for t in range(64):
        rows.append((1, Op.LOAD, 0, 0, 0, 0, 0, 0x1000 + 8 * t, 8, t))
        rows.append((2, Op.BRANCH, t % 2, 0, 0, 0, 0, 0, 0, t))
        if t % 2:
            rows.append((3, Op.LOAD, 0, 0, 0, 0, 0, 0x9000, 8, t))
    return TraceChunk.from_records(rows)


@pytest.mark.parametrize("chunk_records", [None, 1, 5, 47])
def test_worked_example_w1(chunk_records):
    chunk = w1_trace()
    cuts = list(range(chunk_records, len(chunk), chunk_records)) if chunk_records else None
    a = _run(chunk, cuts)
    r = a.result()
    assert r["warp_coalescing"] == 1.0  # (8 + 1 + 8 + 1) / (8 + 1 + 8 + 1)
    assert r["warp_bdiv"] == 1.0  # 2 / 2
    assert r["warp_simdEfficiency"] == pytest.approx(160 / 192, rel=1e-15)  # (32 + 32 + 16) x 2 / (3 x 2 x 32)
    assert r["warp_sectorsPerGroup"] == r["warp_idealSectorsPerGroup"] == 18 / 4
    assert r["warp_threads"] == 64 and r["warp_launches"] == 1 and r["warp_parallelFraction"] == 1.0
    assert r["warp_arithIntensity"] == 0.0
    assert a.counts() == {"warp_instructions": 6, "memory_instructions": 4, "sectors": 18, "ideal_sectors": 18,
                          "branches": 2, "divergent_branches": 2, "active_lanes": 160, "instances": 2,
                          "launches": 1, "parallel_records": 160, "fp_ops": 0, "bytes": 768}
    _assert_equal_to_reference(chunk, a)


def loop_nest_trace(threads=64, J=3, K=4):
    """``for i in parallel(range(threads)): s = 0; for j in range(J): t = ...; for k in range(K):
    s += x[j, k, i]`` then ``out[i] = s``: every thread runs the same branch-free inner loops (the loop
    headers are BRANCHes taken to enter the body, not taken at the exit)."""
    X, OUT = 0x100000, 0x900000
    rows = []
    for i in range(threads):
        rows.append((1, Op.INT_ALU, 0, 0, 0, 0, 1, 0, 0, i))
        for j in range(J):
            rows.append((2, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, i))
            rows.append((3, Op.INT_ALU, 0, 0, 0, 0, 2, 0, 0, i))
            for k in range(K):
                rows.append((4, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, i))
                rows.append((5, Op.LOAD, 0, 0, 0, 0, 3, X + 8 * ((j * K + k) * threads + i), 8, i))
                rows.append((6, Op.FP_ALU, 0, 1, 3, 0, 1, 0, 0, i))
            rows.append((4, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, i))
        rows.append((2, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, i))
        rows.append((7, Op.STORE, 0, 1, 0, 0, 0, OUT + 8 * i, 8, i))
    return TraceChunk.from_records(rows)


def test_branch_free_loop_nest_does_not_diverge():
    """The sequential-trace grouping counted every inner-loop exit as divergence (0.83 on such a nest); in
    lockstep every thread of a warp takes each loop branch the same way."""
    J, K = 3, 4
    chunk = loop_nest_trace(64, J, K)
    a = _run(chunk, [1000, 1001, 2500])
    r = a.result()
    assert r["warp_bdiv"] == 0.0
    assert r["warp_simdEfficiency"] == 1.0
    assert r["warp_coalescing"] == 1.0 and r["warp_sectorsPerGroup"] == 8.0  # 32 x 8 B, 256-byte aligned
    per_thread = 1 + (J + 1) + J * (1 + (K + 1) + 2 * K) + 1  # records of one thread = warp instructions
    c = a.counts()
    assert c["warp_instructions"] == 2 * per_thread == 2 * 48
    assert c["branches"] == 2 * ((J + 1) + J * (K + 1)) and c["divergent_branches"] == 0
    assert c["memory_instructions"] == 2 * (J * K + 1) and c["sectors"] == 8 * c["memory_instructions"]
    assert r["warp_arithIntensity"] == (J * K) / (8 * (J * K + 1))
    _assert_equal_to_reference(chunk, a)


def test_loop_trip_counts_and_if_else():
    """Thread t loops t % 4 + 1 times (pc 2 header, pc 3 body) and then runs the then (pc 5) or else (pc 6)
    side of an if on t % 3 == 0: waiting lanes lower the SIMD efficiency, the loop exit and the if diverge."""
    rows = []
    for t in range(32):
        for _ in range(t % 4 + 1):
            rows += [(2, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, t), (3, Op.FP_MUL, 0, 0, 0, 0, 0, 0, 0, t)]
        rows += [(2, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, t), (4, Op.BRANCH, int(t % 3 == 0), 0, 0, 0, 0, 0, 0, t)]
        rows.append((5 if t % 3 == 0 else 6, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t))
        rows.append((7, Op.STORE, 0, 0, 0, 0, 0, 64 * t, 4, t))
    chunk = TraceChunk.from_records(rows)
    a = _run(chunk, [17, 18, 100])
    c = a.counts()
    # steps: header 2 and body 3 with 32, 32 | 32, 24 | 24, 16 | 16, 8 lanes, the last header 2 with the 8
    # lanes still looping, then 4 (32), 5 (11 lanes: t % 3 == 0), 6 (21), 7 (32)
    assert c["warp_instructions"] == 13
    assert c["active_lanes"] == (32 + 32 + 24 + 16 + 8) + (32 + 24 + 16 + 8) + 32 + 11 + 21 + 32
    assert c["branches"] == 6 and c["divergent_branches"] == 4  # headers 2..4 mix exit/stay; the if; last header not
    # the loop header diverges 3 times, the if once; the store (pc 7) touches 28 sectors beyond its ideal 4
    assert a.contributions() == {"warp_bdiv": {2: 3.0, 4: 1.0}, "warp_coalescing": {7: 28.0}}
    assert c["sectors"] == 32 and c["ideal_sectors"] == 4  # 32 x 4 B, one per sector: 128 bytes
    r = a.result()
    assert r["warp_simdEfficiency"] == pytest.approx(c["active_lanes"] / 32 / 13, rel=1e-15)
    assert r["warp_coalescing"] == 4 / 32
    _assert_equal_to_reference(chunk, a)


def test_launches_instances_and_the_outside():
    """Launch starts: the first record with tid >= 0, after a record with tid -1, a tid below the latest one."""
    tid = [-1, 0, 1, 2, -1, 0, 1, 33, 34, 5, 3, -1]
    chunk = TraceChunk.from_columns(pc=[1] * len(tid), op=[Op.FP_ALU] * len(tid), tid=tid)
    a = _run(chunk, [4, 8])
    c = a.counts()
    assert c["launches"] == 4  # at tids 0, 0, 5, 3
    assert c["instances"] == 5  # {0,1,2}, {0,1}, {33,34}, {5}, {3}
    assert c["warp_instructions"] == 5 and c["active_lanes"] == 9
    r = a.result()
    assert r["warp_launches"] == 4 and r["warp_threads"] == 7  # 0, 1, 2, 3, 5, 33, 34
    _assert_equal_to_reference(chunk, a)


def test_threads_counted_once_across_launches():
    tid = [0, 1, 2, 0, 1, 40, -1, 2, 7]
    chunk = TraceChunk.from_columns(pc=[1] * len(tid), op=[0] * len(tid), tid=tid)
    r = _run(chunk).result()
    assert r["warp_threads"] == 5 and r["warp_launches"] == 3
    assert r["warp_parallelFraction"] == 8 / 9


def test_interleaved_threads_split_launches():
    """Records of two threads interleaved (as a native trace of two OS threads can be): every fall of the tid
    starts a launch, so each warp instance holds what ran between two falls."""
    tid = [0, 1, 0, 1, 0, 1]
    chunk = TraceChunk.from_columns(pc=[1, 1, 2, 2, 3, 3], op=[Op.LOAD] * 6, addr=[0, 8, 16, 24, 32, 40],
                                    size=[8] * 6, tid=tid)
    a = _run(chunk)
    c = a.counts()
    assert c["launches"] == 3 and c["instances"] == 3 and c["warp_instructions"] == 3
    assert c["sectors"] == 3 and c["ideal_sectors"] == 3  # 16 bytes each, within one sector
    _assert_equal_to_reference(chunk, a)


def test_nothing_in_the_thread_space():
    chunk = TraceChunk.from_columns(pc=[1, 2, 3], op=[Op.LOAD, Op.FP_MUL, Op.BRANCH], addr=[0, 0, 0],
                                    size=[8, 0, 0], tid=[-1, -1, -1])
    r = _run(chunk).result()
    assert all(v == 0.0 for v in r.values()), r  # arithmetic intensity counts the thread space only
    assert WarpAnalyzer().result() == {k: 0.0 for k in r}
    e = FeatureEngine(["warp"])
    e.consume(TraceChunk.empty(0))
    assert (e.result() == 0.0).all()


def test_partial_last_warp_and_arith_intensity_inside_only():
    """40 threads: a full warp and an 8-thread one; the records outside the thread space (an FP op and a
    load of 100 bytes) are not in arithIntensity."""
    rows = [(9, Op.FP_DIV, 0, 0, 0, 0, 0, 0, 0, -1), (8, Op.LOAD, 0, 0, 0, 0, 0, 5000, 100, -1)]
    for t in range(40):
        rows += [(1, Op.LOAD, 0, 0, 0, 0, 0, 4 * t, 4, t), (2, Op.FP_MUL, 0, 0, 0, 0, 0, 0, 0, t)]
        if t % 4 == 0:
            rows.append((3, Op.FP_ALU, 0, 0, 0, 0, 0, 0, 0, t))
    chunk = TraceChunk.from_records(rows)
    a = _run(chunk, [3, 50])
    r = a.result()
    # warp 0: 32, 32, 8 of 32 lanes; warp 1: 8, 8, 2 of 8 lanes
    assert r["warp_simdEfficiency"] == pytest.approx((1 + 1 + 8 / 32 + 1 + 1 + 2 / 8) / 6, rel=1e-15)
    assert r["warp_arithIntensity"] == (40 + 10) / (40 * 4)
    assert a.counts()["sectors"] == 4 + 1 and a.counts()["ideal_sectors"] == 5
    _assert_equal_to_reference(chunk, a)


def test_result_does_not_change_the_state():
    chunk = loop_nest_trace(40, 2, 3)
    a = WarpAnalyzer()
    b = WarpAnalyzer()
    for lo in range(0, len(chunk), 101):
        part = chunk.slice(lo, lo + 101)
        a.consume(part)
        b.consume(part)
        a.result()
        a.counts()
    assert a.result() == b.result() and a.counts() == b.counts()


def test_bad_tid_and_pc_are_named():
    with pytest.raises(TraceError, match=r"record 1 of the chunk: tid=68719476736 exceeds"):
        WarpAnalyzer().consume(TraceChunk.from_columns(pc=[1, 1], op=[0, 0], tid=[0, 1 << 36]))
    with pytest.raises(TraceError, match=r"record 1 of the chunk: pc=16777216 exceeds"):
        WarpAnalyzer().consume(TraceChunk.from_columns(pc=[1, 1 << 24], op=[0, 0], tid=[0, 1]))


# ------------------------------------------------------------------------------------------ sectors and bytes


def _union_ref(lo, hi):
    touched = set()
    for a, b in zip(lo, hi):
        touched.update(range(a, b + 1))
    return len(touched), len({x >> 5 for x in touched})


@settings(max_examples=300, **SETTINGS)
@given(st.lists(st.tuples(st.integers(-100, 600), st.sampled_from([1, 1, 4, 8, 8, 16, 40, 100])),
                min_size=1, max_size=32),
       st.sampled_from(["as drawn", "ascending", "descending"]))
def test_union_of_bytes_and_sectors(intervals, order):
    if order != "as drawn":
        intervals = sorted(intervals, reverse=order == "descending")
    lo = np.array([a for a, _ in intervals], np.int64)
    hi = np.array([a + s - 1 for a, s in intervals], np.int64)
    want = _union_ref(lo.tolist(), hi.tolist())
    sa = np.full(32, -7, np.int64)
    sb = np.full(32, -7, np.int64)
    assert _union_bytes_sectors(lo, hi, len(intervals), sa, sb) == want


# ------------------------------------------------------------------------------------------ random traces


PC_OPS = [Op.LOAD, Op.STORE, Op.BRANCH, Op.FP_ALU, Op.INT_ALU, Op.LOAD, Op.BRANCH, Op.MOVE]


@st.composite
def warp_traces(draw, max_threads=70, max_records=10):
    """Launches of threads with random record streams (pcs 1..8, each pc one operation class, or any class
    when ``mixed``), lanes in order or interleaved, tid -1 records in between, addresses as a stride pattern
    across threads plus noise, or random."""
    mixed = draw(st.booleans())
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        n_threads = draw(st.integers(1, max_threads))
        first = draw(st.sampled_from([0, 0, 5, 31, 32, 60]))
        tids = sorted(draw(st.sets(st.integers(first, first + n_threads + 10), min_size=1, max_size=n_threads)))
        stride = draw(st.sampled_from([0, 1, 4, 8, 8, 16, 100, 4096]))
        base = draw(st.integers(0, 1 << 20))
        streams = []
        for t in tids:
            recs = []
            for _ in range(draw(st.integers(0, max_records))):
                pc = draw(st.integers(1, 8))
                op = draw(st.sampled_from(PC_OPS)) if mixed else PC_OPS[pc - 1]
                addr = size = taken = 0
                if op in (Op.LOAD, Op.STORE):
                    size = draw(st.sampled_from([1, 4, 8, 8, 16, 64]))
                    addr = draw(st.one_of(st.just(base + stride * t + 1024 * pc),
                                          st.integers(0, 1 << 16), st.integers(0, 1 << 40)))
                if op == Op.BRANCH:
                    taken = draw(st.integers(0, 1))
                recs.append((pc, op, taken, 0, 0, 0, 0, addr, size, t))
                if draw(st.integers(0, 30)) == 0:
                    recs.append((9, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, -1))
            streams.append(recs)
        if draw(st.integers(0, 3)) == 0:  # interleave the threads' records (keeping each thread's order)
            heads = [0] * len(streams)
            while any(h < len(s) for h, s in zip(heads, streams)):
                k = draw(st.sampled_from([k for k, s in enumerate(streams) if heads[k] < len(s)]))
                rows.append(streams[k][heads[k]])
                heads[k] += 1
        else:
            for s in streams:
                rows.extend(s)
        if draw(st.booleans()):
            rows.append((10, Op.FP_MUL, 0, 0, 0, 0, 0, 0, 0, -1))
    return TraceChunk.from_records(rows) if rows else TraceChunk.empty(0)


@settings(max_examples=150, **SETTINGS)
@given(warp_traces(), st.data())
def test_matches_reference_however_the_trace_is_cut(chunk, data):
    n = len(chunk)
    whole = _run(chunk)
    _assert_equal_to_reference(chunk, whole)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, n - 1)), max_size=8))) if n > 1 else []
    for c in (cuts, list(range(1, n)) if n <= 400 else list(range(1, n, 7))):
        a = _run(chunk, c)
        assert a.result() == whole.result(), c  # to the bit
        assert a.counts() == whole.counts()


@settings(max_examples=40, **SETTINGS)
@given(warp_traces(max_threads=40, max_records=6), st.integers(1, 1 << 30))
def test_shifting_addresses_by_whole_sectors_changes_nothing(chunk, k):
    shifted = TraceChunk.from_columns(**{**chunk.columns(), "addr": chunk.addr + 32 * k})
    assert _run(shifted).result() == _run(chunk).result()


def test_shifting_by_part_of_a_sector_can_change_coalescing():
    n = 32
    base = dict(pc=np.ones(n), op=np.full(n, Op.LOAD), size=np.full(n, 8), tid=np.arange(n))
    aligned = _run(TraceChunk.from_columns(addr=4096 + 8 * np.arange(n), **base)).result()
    off = _run(TraceChunk.from_columns(addr=4104 + 8 * np.arange(n), **base)).result()
    assert aligned["warp_coalescing"] == 1.0 and off["warp_coalescing"] == 8 / 9


def test_engine_family_and_catalogue():
    from features import catalogue

    cat = catalogue()
    names = cat.loc[cat.family == "warp", "name"].tolist()
    assert names == ["warp_coalescing", "warp_sectorsPerGroup", "warp_idealSectorsPerGroup", "warp_bdiv",
                     "warp_simdEfficiency", "warp_threads", "warp_log2Threads", "warp_launches",
                     "warp_parallelFraction", "warp_arithIntensity"]
    e = FeatureEngine(["warp"])
    e.consume(w1_trace())
    r = e.result()
    assert r.index.tolist() == names
    assert r["warp_simdEfficiency"] == pytest.approx(160 / 192, rel=1e-15)
    assert r["warp_log2Threads"] == math.log2(65)


# ------------------------------------------------------------------------------------------ the SIMT model


# single-launch kernels (histogram's np.zeros is a launch of its own since NumPy calls are traced as loops)
SIMT_KERNELS = ["saxpy", "collatz_lengths", "mandelbrot", "spmv_csr", "gather", "string_match", "tree_traversal",
                "stencil2d", "matmul_naive", "transpose"]


@pytest.fixture(scope="module")
def kernel_traces():
    from kernels.registry import all_kernels
    from profiler.session import trace_function
    from profiler.trace import MemorySink

    out = {}
    kernels = all_kernels()
    for name in SIMT_KERNELS:
        spec = kernels[name]
        sink = MemorySink()
        trace_function(spec.cpu, spec.make_inputs(spec.sizes["tiny"], 0), region=name, sinks=[sink],
                       mode="interpreted")
        out[name] = sink.regions[0][2]
        out[name, "static"] = sink.regions[0][1]
    return out


@pytest.mark.parametrize("name", SIMT_KERNELS)
def test_same_warps_as_the_simt_model(kernel_traces, name):
    """One launch, threads numbered 0.. densely: the SIMT model's warps (blocks of 256 = 8 whole warps) are
    the analyzer's warp instances, so their totals agree exactly (the warps of the records as traced: the
    stream builder's ``compiled=False``; its compiled streams drop copies and calls). Both lay the records out
    by the trace's loop table (features/layout.py)."""
    from gpu_models.simt.threads import build_streams

    chunk, static = kernel_traces[name], kernel_traces[name, "static"]
    tids = np.unique(chunk.tid[chunk.tid >= 0])
    assert tids.tolist() == list(range(len(tids)))
    s = build_streams(chunk, block_size=256, compiled=False, static=static)
    a = WarpAnalyzer()
    a.configure_static(static)
    a = _run(chunk, list(range(997, len(chunk), 997)), a)
    c = a.counts()
    mem = (s.op == Op.LOAD) | (s.op == Op.STORE)
    assert c["launches"] == 1 and c["instances"] == s.n_warps
    assert c["warp_instructions"] == s.n
    assert c["active_lanes"] == int(s.active.sum())
    assert c["memory_instructions"] == int(mem.sum())
    assert c["sectors"] == int(s.sectors.shape[0])
    assert c["branches"] == int((s.op == Op.BRANCH).sum())
    assert c["divergent_branches"] == int(s.divergent.sum())
    simd = sum(Fraction(int(s.active[i]), int(s.warp_threads[w]))
               for w in range(s.n_warps) for i in range(s.warp_ptr[w], s.warp_ptr[w + 1]))
    assert a.result()["warp_simdEfficiency"] == pytest.approx(float(simd / s.n), rel=1e-12)


def test_the_kernels_cover_divergence_and_uncoalesced_access(kernel_traces):
    """The SIMT comparison above is not vacuous: some kernels diverge, some access memory uncoalesced."""
    runs = {name: _run(ch) for name, ch in kernel_traces.items() if isinstance(name, str)}
    r = {name: a.result() for name, a in runs.items()}
    assert r["collatz_lengths"]["warp_bdiv"] > 0.2 and r["collatz_lengths"]["warp_simdEfficiency"] < 0.6
    assert r["transpose"]["warp_coalescing"] < 0.5 and r["gather"]["warp_coalescing"] < 0.8  # strided, random
    # saxpy: every lane runs the same records; the one divergent branch is the parallel loop's back edge in the
    # last warp (300 threads: lanes 0..10 of warp 9 loop back, lane 11 exits)
    assert r["saxpy"]["warp_simdEfficiency"] == 1.0 and runs["saxpy"].counts()["divergent_branches"] == 1
    assert all(0 < v["warp_coalescing"] <= 1 for v in r.values())


# ------------------------------------------------------------------------------------------ the file buffer


def _long_threads_trace():
    """Three threads of 3000 records each, each its own random static ids (one diverging warp instance of
    9000 records), then a launch of 40 short threads running the same records, then one more long thread."""
    rng = np.random.default_rng(4)
    parts = []
    for tids, per in (([0, 1, 2], 3000), (list(range(40)), 5), ([7], 2500)):
        n = len(tids) * per
        pc = rng.integers(1, 9, size=n) if per == 3000 else np.tile(rng.integers(1, 9, size=per), len(tids))
        op = np.array([PC_OPS[p - 1] for p in pc], np.uint8)
        mem = (op == Op.LOAD) | (op == Op.STORE)
        parts.append(TraceChunk.from_columns(
            pc=pc, op=op, taken=np.where(op == Op.BRANCH, rng.integers(0, 2, size=n), 0),
            addr=np.where(mem, rng.integers(0, 1 << 20, size=n), 0), size=np.where(mem, 8, 0),
            tid=np.repeat(tids, per)))
        parts.append(TraceChunk.from_columns(pc=[9], op=[0], tid=[-1]))
    return TraceChunk.concat(parts)


@pytest.mark.parametrize("chunk_records", [None, 1000, 4099])
def test_spill_to_temporary_files_gives_the_same_result(monkeypatch, chunk_records):
    chunk = _long_threads_trace()
    cuts = list(range(chunk_records, len(chunk), chunk_records)) if chunk_records else None
    in_memory = _run(chunk, cuts)
    assert in_memory.spills == 0
    monkeypatch.setattr(fw, "SPILL_BYTES", 8192)
    monkeypatch.setattr(fw, "INITIAL_RECORDS", 64)
    a = WarpAnalyzer()
    bounds = [0, *(cuts or []), len(chunk)]
    peak = 0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        a.consume(chunk.slice(lo, hi))
        peak = max(peak, a.buffer_bytes()[0])
    assert a.spills >= 1
    assert peak <= 8192  # never more than the limit in memory
    assert a.result() == in_memory.result() and a.counts() == in_memory.counts()
    _assert_equal_to_reference(chunk, a)


def test_spilled_buffer_goes_back_to_memory_when_the_instance_ends(monkeypatch):
    monkeypatch.setattr(fw, "SPILL_BYTES", 8192)
    monkeypatch.setattr(fw, "INITIAL_RECORDS", 64)
    chunk = _long_threads_trace()
    a = WarpAnalyzer()
    a.consume(chunk.slice(0, 5000))  # inside the first, long instance
    files = [b.file for b in (a.rec, a.maddr, a.msize)]
    assert a.spilled and a.buffer_bytes()[0] == 0 and a.buffer_bytes()[1] > 8192
    a.consume(chunk.slice(5000, 9100))  # the long instance ended; a short one is open
    assert not a.spilled and a.buffer_bytes()[1] == 0
    assert all(f.closed for f in files)  # unlinked when made: closing deletes them
    a.consume(chunk.slice(9100, len(chunk) - 1))
    assert a.spilled and a.spills == 2  # the last long thread is still open: it is buffered in files again
    assert a.result() == _run(chunk.slice(0, len(chunk) - 1)).result()  # the open instance is included
    a.consume(chunk.slice(len(chunk) - 1, len(chunk)))  # a record outside the thread space ends it
    assert not a.spilled and a.result() == _run(chunk).result()
