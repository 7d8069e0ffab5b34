"""The Numba engine against the slow pure-Python reference (featref.py) on random traces."""

import math

import numpy as np
import pytest
from featref import all_features, bdiv, ilp_cycles, records, strides
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features import (
    BranchDivergenceAnalyzer,
    FeatureEngine,
    IlpAnalyzer,
    ReuseDistanceAnalyzer,
    StrideAnalyzer,
)
from features.ilp import DIRECT_TOKENS
from profiler.trace import TraceChunk

COUNT_FEATURES = {
    "mica_instructions", "mica_branches", "mica_staticBranches", "mica_loadBlockRefs", "mica_dataBlocks",
    "mica_dataPages", "mica_instrFootprint", "warp_threads",
}
# LOAD, STORE and BRANCH weighted up so that memory and branch features see enough events
OPS = [int(o) for o in Op] + [Op.LOAD] * 6 + [Op.STORE] * 3 + [Op.BRANCH] * 5


@st.composite
def record(draw):
    op = draw(st.sampled_from(OPS))
    pc = 1 + 3 * op + draw(st.integers(0, 2))
    mem = op in (Op.LOAD, Op.STORE)
    addr = 0
    if mem:
        addr = draw(st.one_of(st.integers(0, 300), st.integers(0, 1 << 14), st.integers(0, 1 << 40)))
    size = draw(st.sampled_from([1, 4, 8, 8, 16, 64, 100])) if mem else 0
    taken = draw(st.integers(0, 1)) if op == Op.BRANCH else 0
    regs = [draw(st.integers(0, 6)) for _ in range(4)]
    tid = draw(st.integers(-1, 80))
    return (pc, op, taken, *regs, addr, size, tid)


traces = st.lists(record(), min_size=0, max_size=140).map(TraceChunk.from_records)


def _engine_result(chunk, chunk_records):
    e = FeatureEngine()
    parts = [chunk] if chunk_records is None else list(chunk.split(chunk_records))
    for c in parts:
        e.consume(c)
    return e.result()


def _assert_matches(ref, got):
    for name, want in ref.items():
        assert name in got.index, name
        v = float(got[name])
        assert not math.isnan(v), name
        if name in COUNT_FEATURES:
            assert v == want, (name, v, want)
        else:
            assert abs(v - want) <= 1e-12 * max(1.0, abs(want)), (name, v, want)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces)
def test_engine_matches_reference_at_every_chunk_size(chunk):
    ref = all_features(chunk)
    whole = _engine_result(chunk, None)
    assert not whole.isna().any()
    _assert_matches(ref, whole)
    for cr in (1, 7, 4096):
        got = _engine_result(chunk, cr)
        assert got.index.tolist() == whole.index.tolist()
        assert np.array_equal(got.to_numpy(), whole.to_numpy()), cr  # chunking changes nothing, to the bit


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces, st.lists(st.integers(1, 12), min_size=1, max_size=4), st.sampled_from([1, 3, 7]))
def test_small_and_odd_windows(chunk, windows, chunk_records):
    """Windows smaller than, equal to and larger than the trace; non-powers of two."""
    ilp = IlpAnalyzer(windows)
    bd = BranchDivergenceAnalyzer(windows)
    st_ = StrideAnalyzer()
    for c in chunk.split(chunk_records) if len(chunk) else [chunk]:
        ilp.consume(c)
        bd.consume(c)
        st_.consume(c)
    recs = records(chunk)
    assert ilp.cycles() == {w: ilp_cycles(recs, w) for w in sorted(set(windows))}
    want, per_pc = bdiv(recs, sorted(set(windows)))
    got = bd.result()
    for k, v in want.items():
        assert abs(got[k] - v) <= 1e-12, k
    for w in sorted(set(windows)):
        assert {p: c for p, c in bd.contributions()[f"Lbdiv_{w}"].items()} == \
            {p: float(c) for p, c in per_pc[w].items() if c}
    _, loc, glo, other = strides(recs)
    got_loc = st_.local.sum(axis=0).tolist() if st_.local.shape[0] else [0, 0, 0, 0]
    assert got_loc == loc
    assert st_.glob.tolist() == glo
    assert st_.contributions()["locStrideOther"] == {p: float(c) for p, c in other.items()}


def _big_trace(n, n_blocks, n_regs, seed):
    """A trace with many distinct blocks and register tokens: drives table growth, pruning and tree compaction."""
    rng = np.random.default_rng(seed)
    op = rng.choice([Op.LOAD, Op.STORE, Op.INT_ALU, Op.FP_MUL, Op.BRANCH], size=n, p=[0.4, 0.15, 0.25, 0.1, 0.1])
    mem = (op == Op.LOAD) | (op == Op.STORE)
    blocks = rng.integers(0, n_blocks, size=n)
    # mostly a stream with re-use, sometimes a random far block, sometimes an access spanning two blocks
    addr = np.where(mem, (blocks << 6) + rng.integers(0, 60, size=n), 0)
    size = np.where(mem, rng.choice([4, 8, 8, 16], size=n), 0)
    return TraceChunk.from_columns(
        pc=1 + op.astype(np.int64) * 10 + rng.integers(0, 10, size=n),
        op=op,
        taken=np.where(op == Op.BRANCH, rng.integers(0, 2, size=n), 0),
        src1=rng.integers(0, n_regs, size=n),
        src2=rng.integers(0, n_regs, size=n),
        dst=np.where(rng.random(n) < 0.8, rng.integers(1, n_regs, size=n), 0),
        addr=addr,
        size=size,
        tid=np.arange(n) // 7,
    )


@pytest.mark.parametrize("chunk_records", [None, 997])
def test_table_growth_pruning_and_compaction(chunk_records):
    chunk = _big_trace(12000, 3000, 2500, seed=5)
    ref = all_features(chunk, ilp_windows=(32, 256, 2048, 16384), bdiv_windows=(16, 32))
    e = FeatureEngine([IlpAnalyzer((32, 256, 2048, 16384)), ReuseDistanceAnalyzer(), BranchDivergenceAnalyzer((16, 32)),
                       "stride", "footprint", "mica_stride", "regs", "branch", "warp", "mix"])
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
    got = e.result()
    _assert_matches(ref, got)
    reuse = e.analyzers[1]
    assert reuse.bit.shape[0] - 1 >= 2 * int(reuse.state[0])  # the tree was compacted/grown, not trace-sized
    assert got["mica_dataBlocks"] > 1500


def test_ilp_prunes_dead_registers_so_state_stays_bounded():
    """SSA-like register tokens (a new one per instruction) must not grow the ILP tables with the trace."""
    n = 200_000
    base = DIRECT_TOKENS  # tokens beyond the direct table: the hash index, which prunes dead entries
    chunk = TraceChunk.from_columns(
        pc=np.ones(n, np.int32), op=np.zeros(n, np.uint8), src1=np.where(np.arange(n) > 0, base + np.arange(n), 0),
        dst=base + np.arange(1, n + 1)
    )
    ilp = IlpAnalyzer((32, 256))
    for c in chunk.split(4096):
        ilp.consume(c)
    assert not ilp.direct
    assert ilp.cycles() == {32: n, 256: n}  # one long dependence chain
    assert ilp.regs.index.keys.shape[0] <= 1 << 16


@pytest.mark.parametrize("chunk_records", [None, 1000, 4093])
def test_warp_views_with_many_threads(chunk_records):
    """Thread ids beyond the initial bitmap (8192) and many memory instructions: growth paths of the warp analyzer."""
    from featref import warp

    rng = np.random.default_rng(11)
    n = 30000
    op = rng.choice([Op.LOAD, Op.STORE, Op.FP_MUL, Op.BRANCH, Op.INT_ALU], size=n)
    mem = (op == Op.LOAD) | (op == Op.STORE)
    tid = np.where(rng.random(n) < 0.9, np.sort(rng.integers(0, 200_000, size=n)), -1)
    chunk = TraceChunk.from_columns(
        pc=1 + rng.integers(0, 300, size=n), op=op, taken=np.where(op == Op.BRANCH, rng.integers(0, 2, size=n), 0),
        addr=np.where(mem, rng.integers(0, 1 << 16, size=n), 0), size=np.where(mem, rng.choice([4, 8, 40], n), 0),
        tid=tid,
    )
    e = FeatureEngine(["warp"])
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
    _assert_matches(warp(records(chunk)), e.result())
    assert e.result()["warp_threads"] == len(set(tid[tid >= 0].tolist())) > 8192


@pytest.mark.parametrize("chunk_records", [None, 333])
def test_branch_predictability_with_many_static_branches(chunk_records):
    """More static branches than the first allocation (16 slots); patterned and random outcomes."""
    from featref import ppm

    rng = np.random.default_rng(12)
    n = 4000
    pcs = 1 + rng.integers(0, 60, size=n)
    # each branch mixes a loop-like pattern (taken except every 5th) with noise
    taken = np.where(rng.random(n) < 0.8, (np.arange(n) % 5 != 0), rng.integers(0, 2, size=n)).astype(np.uint8)
    chunk = TraceChunk.from_columns(pc=pcs, op=np.full(n, Op.BRANCH), taken=taken)
    e = FeatureEngine(["branch"])
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
    _assert_matches(ppm(records(chunk)), e.result())
    assert e.result()["mica_staticBranches"] == 60
