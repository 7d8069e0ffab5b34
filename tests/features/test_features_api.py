"""Public API of the feature engine: edge cases, catalogue, sinks, files, explanations, validation."""

import numpy as np
import pandas as pd
import pytest
from featref import bdiv, footprint, records, strides, warp_totals
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors import v1, v4

import features
from core.trace_schema import N_OPS, Op, TraceError
from features import (
    FEATURE_NAMES,
    XAPP_FEATURES,
    FeatureEngine,
    FeatureSink,
    IlpAnalyzer,
    catalogue,
    compute_features,
)
from features._base import MAX_PC
from features.engine import _first_invalid
from features.synthetic_trace import static_table, synthetic_chunks, synthetic_trace
from profiler.trace import RegionInfo, TraceChunk
from profiler.tracefile import TraceFile, write_trace


def test_xapp_feature_list_is_table_1_as_portcast_computes_it():
    assert len(XAPP_FEATURES) == 40  # Table 1's 39 plus ilp16384, which ilpRate is defined on
    assert XAPP_FEATURES[:14] == ("mem", "ctrl", "arith", "fp", "mul", "div", "rem", "spf", "ilp32", "ilp256",
                                  "ilp2048", "ilp16384", "ilp65536", "ilpRate")
    assert XAPP_FEATURES[-14:] == tuple(f"Lbdiv_{2 ** k}" for k in range(4, 11)) + tuple(
        f"Gbdiv_{2 ** k}" for k in range(4, 11))
    cat = catalogue()
    assert list(cat.columns) == ["name", "family", "definition", "range", "source"]
    assert cat["name"].is_unique
    assert set(cat.loc[cat.source == "xapp", "name"]) == set(XAPP_FEATURES)
    assert set(cat["source"]) == {"xapp", "mica", "warp", "portcast"}
    assert all(n.startswith("mica_") for n in cat.loc[cat.source == "mica", "name"])
    assert all(n.startswith("warp_") for n in cat.loc[cat.source == "warp", "name"])
    assert list(cat.loc[cat.source == "portcast", "name"]) == [
        "fp64", "ts_checked", "ts_kernels", "ts_carriedDeps", "ts_reductionDeps", "ts_atomicDeps", "ts_sameValueRaces",
        "ts_parallelFraction", "lib_opaqueFlops", "lib_opaqueFraction"]
    assert set(cat["family"]) == set(features.FAMILIES)
    assert (cat["definition"].str.len() > 10).all()


def test_default_engine_emits_exactly_the_catalogue_in_order():
    e = FeatureEngine()
    e.consume(v4())
    r = e.result()
    assert isinstance(r, pd.Series) and r.dtype == float
    assert tuple(r.index) == FEATURE_NAMES
    assert not r.isna().any()


def test_empty_trace_is_all_zero():
    e = FeatureEngine()
    e.consume(TraceChunk.empty(0))
    r = e.result()
    assert tuple(r.index) == FEATURE_NAMES
    assert (r == 0.0).all()
    assert (FeatureEngine().result() == 0.0).all()  # nothing consumed at all


def test_trace_without_memory_or_branches():
    n = 10
    # a dependence chain r1 <- r1 of 10 INT_ALU and nothing else
    chunk = TraceChunk.from_columns(pc=[1] * n, op=[Op.INT_ALU] * n, src1=[1] * n, dst=[1] * n)
    r = compute_features(chunk)
    assert r["arith"] == 1.0 and r["mem"] == 0.0 and r["ctrl"] == 0.0
    for name in ("locStride0", "locStrideOther", "gStride8", "memInt", "pages", "coldRef", "reuseDist4",
                 "Lbdiv_32", "Gbdiv_1024", "mica_ppm_PAs_h12", "mica_takenRate", "mica_transitionRate",
                 "warp_coalescing", "warp_bdiv", "warp_arithIntensity", "warp_threads"):
        assert r[name] == 0.0, name
    # windows larger than the trace: drained, one instruction per cycle on the chain
    for name in ("ilp32", "ilp256", "ilp65536"):
        assert r[name] == 1.0
    assert r["ilpRate"] == 1.0
    assert r["mica_regDegreeUse"] == 0.9 and r["mica_regDepDist_le1"] == 1.0  # 9 of 10 reads were produced


def test_windows_larger_than_trace_use_the_drained_count():
    # 6 independent instructions: one cycle whatever the window
    chunk = TraceChunk.from_columns(pc=[1] * 6, op=[Op.INT_ALU] * 6, dst=[1, 2, 3, 4, 5, 6])
    ilp = IlpAnalyzer((2, 4, 32))
    ilp.consume(chunk)
    assert ilp.cycles() == {2: 3, 4: 2, 32: 1}
    assert ilp.result() == {"mica_ilp2": 2.0, "mica_ilp4": 3.0, "ilp32": 6.0}
    assert ilp.cycles(drained=False) == {2: 3, 4: 1, 32: 0}  # MICA's count ignores the partial window


def test_no_nan_on_random_and_degenerate_traces():
    rng = np.random.default_rng(1)
    for n in (1, 2, 31, 33):
        chunk = TraceChunk.from_columns(pc=rng.integers(1, 4, n), op=rng.choice([Op.BRANCH, Op.STORE], n),
                                        taken=rng.integers(0, 2, n), addr=rng.integers(0, 1000, n), size=[4] * n)
        r = compute_features(chunk)
        assert not r.isna().any() and np.isfinite(r.to_numpy()).all()


def test_compute_features_accepts_every_source_kind(tmp_path):
    trace = synthetic_trace(19_995, seed=3)  # 1333 iterations of the 15-op body
    path = write_trace(tmp_path / "t.parquet", RegionInfo(name="syn"), static_table(), trace.split(3000))
    by_chunk = compute_features(trace)
    assert by_chunk.equals(compute_features(path, chunk_records=777))
    assert by_chunk.equals(compute_features(str(path)))
    assert by_chunk.equals(compute_features(TraceFile(path), chunk_records=4096))
    assert by_chunk.equals(compute_features(trace.split(5000)))
    assert by_chunk.equals(compute_features(synthetic_chunks(19_995, 1000, seed=3)))
    assert by_chunk["mem"] == 4 / 15 and by_chunk["ctrl"] == 2 / 15 and by_chunk["fp"] == 3 / 15
    assert by_chunk["warp_threads"] == 1333 and by_chunk["mica_instrFootprint"] == 15
    with pytest.raises(TypeError, match="TraceFile, TraceChunk or iterable"):
        compute_features(42)
    with pytest.raises(TraceError, match="no such trace file"):
        compute_features(tmp_path / "missing.parquet")


def test_feature_sink_computes_features_while_a_region_runs(tmp_path):
    trace = synthetic_trace(9000, seed=1)
    sink = FeatureSink()
    info = RegionInfo(name="loop", invocation=0)
    sink.start_region(info, static_table())
    for c in trace.split(1000):
        sink.consume(c)
    sink.end_region(info, static_table())
    # a second region through a file replay
    path = write_trace(tmp_path / "v4.parquet", RegionInfo(name="list", invocation=1), static_table(), v4())
    TraceFile(path).replay(sink, chunk_records=3)
    assert [i.name for i, _ in sink.results] == ["loop", "list"]
    assert sink.results[0][1].equals(compute_features(trace))
    assert sink.results[1][1].equals(compute_features(v4()))
    assert len(sink.explanations) == 2
    ex = sink.explanations[0]
    top = ex[ex.feature == "locStrideOther"].iloc[0]
    assert (top.pc, top.location, top.text) == (2, "synthetic.py:11", "y = b[idx[i]]")
    top = ex[ex.feature == "Lbdiv_32"].iloc[0]
    assert (top.pc, top.location, top.text) == (8, "synthetic.py:17", "if w > limit:")


def test_explanations_count_what_the_reference_counts():
    trace = synthetic_trace(6000, seed=2)
    e = FeatureEngine(static=static_table())
    for c in trace.split(777):
        e.consume(c)
    ex = e.explain(top=20)
    recs = records(trace)
    other = strides(recs)[3]
    div32 = bdiv(recs, (32,))[1][32]
    first = footprint(recs)[1]
    totals = warp_totals(recs)
    assert totals["divergent_pcs"] and totals["excess_pcs"]  # the trace has both, so both are checked
    for feat, want in (("locStrideOther", other), ("Lbdiv_32", div32), ("footprint", first),
                       ("warp_bdiv", totals["divergent_pcs"]), ("warp_coalescing", totals["excess_pcs"])):
        got = ex[ex.feature == feat]
        want = {p: c for p, c in want.items() if c}
        assert dict(zip(got.pc, got["count"])) == {p: float(c) for p, c in want.items()}
        assert got["share"].sum() == pytest.approx(1.0)
        assert list(got["rank"]) == list(range(1, len(got) + 1))
        assert list(got["count"]) == sorted(got["count"], reverse=True)
    assert len(e.explain(top=1)) == 5
    # without a static table, locations are "pc N"
    e2 = FeatureEngine()
    e2.consume(trace)
    assert e2.explain().location.iloc[0].startswith("pc ")


def _first_invalid_reference(c: TraceChunk) -> int:
    """Record by record, the contract's value ranges as the trace docs state them."""
    for i in range(len(c)):
        o = int(c.op[i])
        if o >= N_OPS or c.taken[i] > 1 or not 0 <= c.pc[i] <= MAX_PC:
            return i
        if min(c.src1[i], c.src2[i], c.src3[i], c.dst[i], c.size[i]) < 0:
            return i
        if o in (Op.LOAD, Op.STORE) and c.size[i] == 0:
            return i
    return -1


#: records at the edges of the check's blocks of 4096
_EDGES = [0, 1, 4094, 4095, 4096, 4097, 8191, 8192, 12287, 12288]


@settings(max_examples=60, deadline=None)
@given(n=st.one_of(st.integers(0, 3 * 4096 + 5), st.just(3 * 4096 + 5)), seed=st.integers(0, 2 ** 32 - 1),
       bad=st.lists(st.tuples(st.one_of(st.integers(0, 3 * 4096 + 4), st.sampled_from(_EDGES)), st.sampled_from(
           ["op", "taken", "pc_neg", "pc_big", "src1", "src2", "src3", "dst", "size", "mem_size0"])), max_size=3))
def test_first_invalid_matches_a_record_by_record_check(n, seed, bad):
    """The blockwise branch-free check finds the same first bad record, bad records placed anywhere (block
    edges at multiples of 4096 included)."""
    rng = np.random.default_rng(seed)
    op = rng.choice([Op.INT_ALU, Op.LOAD, Op.STORE, Op.BRANCH], size=n).astype(np.uint8)
    mem = (op == Op.LOAD) | (op == Op.STORE)
    cols = dict(pc=rng.integers(0, 1000, n).astype(np.int32), op=op,
                taken=(rng.random(n) < 0.5).astype(np.uint8) * (op == Op.BRANCH),
                src1=rng.integers(0, 50, n).astype(np.int32), src2=rng.integers(0, 50, n).astype(np.int32),
                src3=rng.integers(0, 50, n).astype(np.int32), dst=rng.integers(0, 50, n).astype(np.int32),
                addr=rng.integers(0, 1 << 20, n) * mem, size=(8 * mem).astype(np.int32))
    for at, kind in bad:
        if at >= n:
            continue
        if kind == "op":
            cols["op"][at] = N_OPS
        elif kind == "taken":
            cols["taken"][at] = 2
        elif kind == "pc_neg":
            cols["pc"][at] = -1
        elif kind == "pc_big":
            cols["pc"][at] = MAX_PC + 1
        elif kind == "mem_size0":
            cols["op"][at], cols["size"][at] = Op.STORE, 0
        else:
            cols[kind][at] = -7
    c = TraceChunk(**cols, tid=np.zeros(n, np.int64))
    assert _first_invalid(c.op, c.taken, c.pc, c.src1, c.src2, c.src3, c.dst, c.size) == \
        _first_invalid_reference(c)


def test_bad_records_are_reported_with_their_trace_index():
    good = v1()
    bad = TraceChunk.from_columns(pc=[1, 2], op=[Op.LOAD, Op.LOAD], addr=[8, 8], size=[8, 0])
    e = FeatureEngine()
    e.consume(good)
    with pytest.raises(TraceError, match=r"record 21: LOAD with size 0"):
        e.consume(bad)
    with pytest.raises(TraceError, match=r"record 0: op=20 is not an operation class \(0..19\)"):
        FeatureEngine().consume(TraceChunk.from_columns(pc=[1], op=[20]))
    with pytest.raises(TraceError, match=r"record 1: src2=-3 is negative"):
        FeatureEngine().consume(TraceChunk.from_columns(pc=[1, 1], src2=[0, -3]))
    with pytest.raises(TraceError, match=r"record 1: pc=16777216 exceeds 16777215"):
        FeatureEngine().consume(TraceChunk.from_columns(pc=[1, 1 << 24]))
    with pytest.raises(TraceError, match=r"pc=16777216 exceeds 16777215"):
        features.StrideAnalyzer().consume(TraceChunk.from_columns(pc=[1, 1 << 24]))
    with pytest.raises(ValueError, match="unknown feature family 'nope'"):
        FeatureEngine(["mix", "nope"])
    with pytest.raises(ValueError, match="ILP windows must be >= 1"):
        IlpAnalyzer((0,))


def test_state_is_bounded_by_distinct_blocks_not_trace_length():
    """Re-walking the same 300 KiB footprint 8 times: the tables stop growing after the first walk."""
    def walk(times):
        n = 4800
        chunk = TraceChunk.from_columns(pc=np.full(n, 3), op=np.full(n, Op.LOAD), addr=np.arange(n) * 64,
                                        size=np.full(n, 8), dst=np.arange(n) % 50 + 1, src1=np.arange(n) % 50 + 1)
        e = FeatureEngine()
        for _ in range(times):
            e.consume(chunk)
        reuse = next(a for a in e.analyzers if a.family == "reuse")
        ilp = next(a for a in e.analyzers if a.family == "ilp")
        return reuse.index.keys.size, reuse.bit.size, ilp.regs.index.keys.size, e.result()

    k1, b1, r1, res1 = walk(2)
    k8, b8, r8, res8 = walk(8)
    assert (k1, b1, r1) == (k8, b8, r8)
    assert res8["mica_dataBlocks"] == 4800 and res8["coldRef"] == 1 / 8
    # the LRU distance of every re-reference is the 4799 other blocks of the walk
    assert res8["mica_reuse_b12"] == 7 / 8
