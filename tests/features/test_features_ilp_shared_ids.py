"""ILP on the engine's shared block ids, the shared register-token pass.

ILP fed by a :class:`FeatureEngine` finds the blocks of LOADs and STOREs through the engine's dense ids
(``IlpAnalyzer.consume_refs``, the ``*_refs`` passes of ``features/fast/ilp_unrolled.py``; the bytes within a
block from the addresses) instead of hashing them; fed alone it keeps its own table. Both are compared here
with the literal FIFO machine (memory dependences on exact bytes) and the slow reference
(tests/features/featref.py), at several chunk sizes, with more than eight windows, forced time rebases,
hashed registers and the dropping and renumbering of stored blocks. The engine computes the largest register token
of a chunk once for ILP and register traffic (``FeatureEngine.hint_max_token``).
"""

import numpy as np
import pytest
from featref import ilp_cycles, records
from featref import regs as regs_ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_features_ilp_window import _chunk, dep_record, fifo_machine

import features.ilp as ilp_mod
import features.regs as regs_mod
from core.trace_schema import Op
from features import FeatureEngine, IlpAnalyzer
from features.regs import RegisterTrafficAnalyzer
from features.synthetic_trace import synthetic_trace
from profiler.trace import TraceChunk


def _engine_ilp(recs_or_chunk, windows, chunk_records, families=("footprint",)):
    """ILP fed through the engine together with families that need the block map (so ILP reads the engine's
    block ids); returns (engine, the ILP analyzer)."""
    chunk = recs_or_chunk if isinstance(recs_or_chunk, TraceChunk) else _chunk(recs_or_chunk)
    ilp = IlpAnalyzer(windows)
    e = FeatureEngine([ilp, *families])
    for c in chunk.split(chunk_records) if len(chunk) else [chunk]:
        e.consume(c)
    return e, ilp


@st.composite
def wide_record(draw):
    """A record of dep_record's kind, with addresses that straddle word and block boundaries, and more blocks."""
    op = draw(st.sampled_from([Op.INT_ALU, Op.FP_MUL, Op.LOAD, Op.LOAD, Op.STORE, Op.STORE, Op.MOVE]))
    src = [draw(st.sampled_from([0, 0, 1, 2, 3, 4])) for _ in range(3)]
    dst = draw(st.sampled_from([0, 1, 2, 3, 4]))
    mem = op in (Op.LOAD, Op.STORE)
    addr = draw(st.integers(0, 40)) * 24 if mem else 0
    size = draw(st.sampled_from([1, 4, 8, 16, 64, 130])) if mem else 0
    return (op, tuple(src), dst, addr, size)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(dep_record(), wide_record()), min_size=0, max_size=150),
       st.lists(st.integers(1, 12), min_size=1, max_size=4), st.sampled_from([1, 4, 7, 4096]))
def test_engine_fed_ilp_matches_fifo(recs, windows, chunk_records):
    e, ilp = _engine_ilp(recs, windows, chunk_records)
    assert ilp.blockmap is e.blockmap
    assert ilp.mode == ("refs" if recs else None)
    ws = sorted(set(windows))
    want = {w: fifo_machine(recs, w) for w in ws}
    assert ilp.cycles() == {w: want[w][0] for w in ws}
    assert ilp.cycles(drained=False) == {w: want[w][1] for w in ws}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(dep_record(), wide_record()), min_size=0, max_size=160), st.sampled_from([1, 5, 4096]))
def test_engine_fed_ilp_with_two_lane_groups(recs, chunk_records):
    windows = (1, 2, 3, 4, 5, 7, 9, 11, 16, 33, 100)
    e, ilp = _engine_ilp(recs, windows, chunk_records, families=("reuse", "regs"))
    assert len(ilp.groups) == 2
    want = {w: fifo_machine(recs, w) for w in windows}
    assert ilp.cycles() == {w: want[w][0] for w in windows}
    assert ilp.cycles(drained=False) == {w: want[w][1] for w in windows}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(dep_record(), wide_record()), min_size=0, max_size=200),
       st.sampled_from([(1, 2, 3), (32, 64, 128, 256, 2048, 16384, 65536)]), st.sampled_from([1, 3, 50]))
def test_engine_fed_ilp_time_rebase(recs, windows, segment):
    """The stored blocks' rows (word and byte rows) of the refs path are rebased with the others (forced whenever
    a lane reaches 5)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ilp_mod, "REBASE_AT", 5)
        mp.setattr(ilp_mod, "SEGMENT", segment)
        _, ilp = _engine_ilp(recs, windows, 7)
    want = {w: fifo_machine(recs, w) for w in windows}
    assert ilp.cycles() == {w: want[w][0] for w in windows}
    assert ilp.cycles(drained=False) == {w: want[w][1] for w in windows}


def _random_chunk(seed, n, ntok, nblk):
    rng = np.random.default_rng(seed)
    op = rng.choice([Op.LOAD, Op.STORE, Op.INT_ALU], size=n, p=[0.35, 0.35, 0.3])
    mem = (op == Op.LOAD) | (op == Op.STORE)
    toks = rng.integers(0, 3000, size=(4, n)) + ntok * (rng.random((4, n)) < 0.5)
    return TraceChunk.from_columns(
        pc=np.ones(n, np.int32), op=op, src1=toks[0], src2=toks[1], src3=np.zeros(n, np.int64), dst=toks[3],
        addr=np.where(mem, rng.integers(0, nblk, size=n) * 64 + rng.integers(0, 64, size=n), 0),
        size=np.where(mem, rng.choice([4, 8, 16, 100], size=n), 0))


@pytest.mark.parametrize("big_tokens", [False, True])
def test_engine_fed_ilp_drops_dead_blocks_and_hashes_registers(big_tokens):
    """Stores over 5000 blocks at any byte offset and size (words written whole, in part and straddled): the
    slots of stored blocks run out and the dead blocks are dropped several times (the kernel stopping at the
    STORE that needs room, the engine's block ids following), with register tokens beyond the direct table
    (hash mode) or not."""
    chunk = _random_chunk(12, 12_000, ilp_mod.DIRECT_TOKENS if big_tokens else 0, 5000)
    windows = (1, 3, 32, 4096)
    e, ilp = _engine_ilp(chunk, windows, 1500, families=("regs", "footprint"))
    assert ilp.mode == "refs" and ilp.direct is not big_tokens
    assert ilp.mem.compactions > 1 and ilp.mem.n < e.blockmap.n_blocks
    recs = records(chunk)
    assert ilp.cycles() == {w: ilp_cycles(recs, w) for w in windows}
    alone = IlpAnalyzer(windows)
    for c in chunk.split(999):
        alone.consume(c)
    assert alone.mode == "own" and alone.mem.compactions > 1 and alone.result() == ilp.result()
    got = e.result()
    want = regs_ref(recs)
    assert {k: float(got[k]) for k in want} == pytest.approx(want, rel=1e-12, abs=0)


def test_ilp_fed_alone_first_keeps_its_own_blocks_in_the_engine():
    chunk = synthetic_trace(30_000, seed=5)
    first, rest = chunk.slice(0, 10_000), chunk.slice(10_000, 30_000)
    ilp = IlpAnalyzer()
    ilp.consume(first)
    e = FeatureEngine([ilp, "reuse"])
    assert ilp.blockmap is not e.blockmap and ilp.mode == "own"
    for c in rest.split(4096):
        e.consume(c)
    plain = IlpAnalyzer()
    plain.consume(chunk)
    assert ilp.mode == "own" and ilp.result() == plain.result()


def test_engine_fed_ilp_consumed_directly_afterwards_stays_on_block_ids():
    """Once on block ids, a direct ``consume`` maps the chunk with the (shared) map and goes on."""
    chunk = synthetic_trace(20_000, seed=9)
    windows = (4, 32, 256)
    e, ilp = _engine_ilp(chunk.slice(0, 8000), windows, 3000)
    ilp.consume(chunk.slice(8000, 20_000))
    plain = IlpAnalyzer(windows)
    plain.consume(chunk)
    assert ilp.mode == "refs" and ilp.result() == plain.result()


def test_token_hint_is_computed_once_and_only_used_for_its_chunk():
    chunk = _random_chunk(3, 4000, regs_mod.DIRECT_TOKENS, 300)  # tokens beyond both direct tables
    small = synthetic_trace(500, seed=1)
    e = FeatureEngine(["ilp", "regs", "mix"])
    assert [a.family for a in e._tokens] == ["ilp", "regs"]
    e.hint_max_token(chunk)
    assert all(a.next_max_token[0] is chunk and a.next_max_token[1] == int(max(
        chunk.src1.max(), chunk.src2.max(), chunk.src3.max(), chunk.dst.max())) for a in e._tokens)
    # a stale hint (for another chunk object) is ignored and cleared
    regs = RegisterTrafficAnalyzer()
    regs.next_max_token = (small, 0)
    regs.consume(chunk)
    assert regs.next_max_token is None and not regs.direct
    ilp = IlpAnalyzer()
    ilp.next_max_token = (small, 0)
    ilp.consume(chunk)
    assert ilp.next_max_token is None and not ilp.direct
    want = regs_ref(records(chunk))
    assert regs.result() == pytest.approx(want, rel=1e-12, abs=0)
    assert ilp.cycles() == {int(w): ilp_cycles(records(chunk), int(w)) for w in ilp.windows}


@pytest.mark.parametrize("chunk_records", [1, 7, 4096, None])
def test_engine_with_token_hint_equals_analyzers_alone(chunk_records):
    chunk = _random_chunk(8, 3000, ilp_mod.DIRECT_TOKENS + 4_000, 400)  # beyond ILP's direct table, within regs'
    e = FeatureEngine(["ilp", "regs"])
    ilp, regs = IlpAnalyzer(), RegisterTrafficAnalyzer()
    for c in chunk.split(chunk_records) if chunk_records else [chunk]:
        e.consume(c)
        ilp.consume(c)
        regs.consume(c)
    # no analyzer needing the block map: ILP hashes its own blocks (faster than a map made for it alone)
    assert e.analyzers[0].mode == "own" and e.analyzers[0].blockmap is not e.blockmap and not e._mapped
    assert not e.analyzers[0].direct and e.analyzers[1].direct
    got = e.result()
    alone = {**ilp.result(), **regs.result()}
    assert {k: float(got[k]) for k in alone} == alone


def test_ilp_joins_the_shared_map_only_with_an_analyzer_that_needs_it():
    chunk = synthetic_trace(5000, seed=4)
    alone = FeatureEngine(["ilp", "mix"])
    assert alone._mapped == []
    both = FeatureEngine(["ilp", "footprint"])
    assert both._mapped == both.analyzers and all(a.blockmap is both.blockmap for a in both.analyzers)
    alone.consume(chunk)
    both.consume(chunk)
    assert alone.analyzers[0].mode == "own" and both.analyzers[0].mode == "refs"
    assert alone.analyzers[0].result() == both.analyzers[0].result()


def test_pc_hint_is_used_once_for_its_chunk_and_cleared():
    """The engine finds 1 + the largest pc once per chunk for every analyzer; a hint for another chunk object
    is ignored (an analyzer sized by it would index past its tables), and none is left after a chunk."""
    from features.warp import WarpAnalyzer

    small = synthetic_trace(100, seed=2)  # pcs 1..15
    big = TraceChunk.from_columns(pc=np.array([3, 70_000, 5], np.int32), op=np.full(3, Op.BRANCH, np.uint8),
                                  taken=np.array([1, 0, 1], np.uint8), tid=np.array([0, 1, 40]))
    w = WarpAnalyzer()
    assert w.pc_capacity(big) == 70_001
    w.pc_hint = (small, 16)
    assert w.pc_capacity(big) == 70_001 and w.pc_hint is None
    w.pc_hint = (big, 70_001)
    assert w.pc_capacity(big) == 70_001 and w.pc_hint is None
    e = FeatureEngine()
    for c in (small, big):
        e.consume(c)
        assert e.blockmap.pc_hint is None
        assert all(a.pc_hint is None for a in e.analyzers)
        assert all(a.next_max_token is None for a in e._tokens)
    whole = FeatureEngine()
    whole.consume(TraceChunk.concat([small, big]))
    assert whole.result().equals(e.result())
