"""ILP's memory dependences on exact bytes (docs/features.md, "ILP"): neighbouring elements of an array,
written and read by independent chains, do not depend on each other, whatever their size and alignment.

Under the earlier rule (64-byte blocks) a LOAD waited for the last STORE to any byte of its block, so the
ILP of such chains depended on whether the allocator put the elements in one block or in several. Here the
analyzer is compared with the byte-exact reference (tests/features/featref.py) on traces of independent
chains over neighbouring 1-, 2-, 4- and 8-byte elements at any alignment (elements sharing a word, a block,
or straddling both), and the same trace with each element moved to a page of its own must give the same
cycles.
"""

from collections import deque

import pytest
from featref import ilp_cycles, records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features import FeatureEngine, IlpAnalyzer
from profiler.trace import TraceChunk

WINDOWS = [(1, 2, 3, 5), (4, 8, 32), (32, 64, 128, 256, 2048, 16384, 65536)]


def block_rule_cycles(recs, w):
    """Drained cycles under the earlier rule (a LOAD waits for the last STORE to any 64-byte block it
    touches), only to show where the two rules differ."""
    c, reg, blk, window, cycles = 0, {}, {}, deque(), 0
    for r in recs:
        t = max([c] + [reg.get(s, 0) for s in (r["src1"], r["src2"], r["src3"]) if s])
        mem = r["op"] in (Op.LOAD, Op.STORE)
        blocks = range(r["addr"] >> 6, ((r["addr"] + r["size"] - 1) >> 6) + 1) if mem else ()
        if r["op"] == Op.LOAD:
            t = max([t] + [blk.get(b, 0) for b in blocks])
        if r["dst"]:
            reg[r["dst"]] = t + 1
        if r["op"] == Op.STORE:
            for b in blocks:
                blk[b] = t + 1
        window.append(t)
        if len(window) == w:
            c += 1
            while window and window[0] < c:
                window.popleft()
        cycles = max(cycles, t + 1)
    return cycles


def chains_trace(steps, es, addr_of):
    """Records of independent chains: chain j keeps its value in register j + 1 and its element at
    ``addr_of(j)`` (``es`` bytes); a step (j, kind) is ``store`` (element <- register), ``load`` (register <-
    element) or ``alu`` (register <- register)."""
    rows = []
    for j, kind in steps:
        r = j + 1
        if kind == "store":
            rows.append((10, Op.STORE, 0, r, 0, 0, 0, addr_of(j), es, 0))
        elif kind == "load":
            rows.append((11, Op.LOAD, 0, 0, 0, 0, r, addr_of(j), es, 0))
        else:
            rows.append((12, Op.INT_ALU, 0, r, 0, 0, r, 0, 0, 0))
    return TraceChunk.from_records(rows)


def _cycles(chunk, windows, chunk_records, engine=False):
    ilp = IlpAnalyzer(windows)
    e = FeatureEngine([ilp, "footprint"]) if engine else None
    for c in chunk.split(chunk_records) if len(chunk) else [chunk]:
        (e or ilp).consume(c)
    return ilp.cycles(), ilp.cycles(drained=False)


@pytest.mark.parametrize("es", [1, 4, 8])
def test_neighbouring_elements_do_not_wait_for_each_other(es):
    """Chain A stores x[0] and loads it back; chain B, in between, loads x[1], increments it and stores it.
    Bytes: B's load waits for nothing and A's load only for A's store, so the issue times are 0, 0, 1, 2, 1, 2
    and the drained cycles 3. The block rule made B's load wait for A's store and A's load for B's store (one
    block): a single chain, issue times 0 to 5, 6 cycles."""
    x0 = 0x1018  # x[0] and x[1] in one block (in one word for 1 and 4 bytes)
    steps = [(0, "store"), (1, "load"), (1, "alu"), (1, "store"), (0, "load"), (0, "alu")]
    chunk = chains_trace(steps, es, lambda j: x0 + j * es)
    recs = records(chunk)
    assert (x0 >> 6) == ((x0 + 2 * es - 1) >> 6)
    for cr in (1, 4, 6):
        assert _cycles(chunk, (8,), cr) == ({8: 3}, {8: 0})
    assert ilp_cycles(recs, 8) == 3 and block_rule_cycles(recs, 8) == 6


@st.composite
def chains(draw):
    es = draw(st.sampled_from([1, 2, 4, 8]))
    k = draw(st.integers(2, 8))
    base = 0x40000 + draw(st.integers(0, 63))  # any byte alignment: elements straddle words and blocks
    steps = draw(st.lists(st.tuples(st.integers(0, k - 1), st.sampled_from(["store", "store", "load", "load", "alu"])),
                          min_size=1, max_size=120))
    return es, base, steps


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), st.sampled_from(WINDOWS), st.sampled_from([1, 3, 4096]), st.booleans())
def test_independent_chains_on_neighbouring_elements(case, windows, chunk_records, engine):
    es, base, steps = case
    packed = chains_trace(steps, es, lambda j: base + j * es)
    spread = chains_trace(steps, es, lambda j: base + j * 4096)  # each element on a page of its own
    got = _cycles(packed, windows, chunk_records, engine)
    recs = records(packed)
    assert got[0] == {w: ilp_cycles(recs, w) for w in windows}
    assert got == _cycles(spread, windows, chunk_records, engine)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([Op.LOAD, Op.STORE, Op.INT_ALU]), st.integers(0, 4), st.integers(0, 4),
                          st.integers(0, 40), st.sampled_from([1, 2, 3, 4, 8, 9, 16, 64, 70])),
                min_size=1, max_size=150),
       st.sampled_from(WINDOWS), st.sampled_from([1, 5, 4096]))
def test_overlapping_accesses_of_any_size_match_the_reference(recs_, windows, chunk_records):
    """Loads and stores of 1 to 70 bytes at any offset over a few blocks: partial overlaps, a word written
    whole after being written in part and the other way round, accesses over several words and blocks."""
    rows = []
    for op, src, dst, off, size in recs_:
        mem = op in (Op.LOAD, Op.STORE)
        rows.append((1, op, 0, src, 0, 0, 0 if op == Op.STORE else dst, 0x7000 + 3 * off if mem else 0,
                     size if mem else 0, 0))
    chunk = TraceChunk.from_records(rows)
    recs = records(chunk)
    got = _cycles(chunk, windows, chunk_records)
    assert got[0] == {w: ilp_cycles(recs, w) for w in windows}


@pytest.mark.parametrize("engine", [False, True])
def test_state_stays_bounded_over_a_large_array(engine):
    """60,000 float32 elements written once each (every STORE writes half a word) and read back 500 elements
    later: ILP keeps only the stored blocks that can still delay something, not one entry per byte or block
    ever stored (the array spans 3,750 blocks; the table holds a few hundred), with the reference's cycles."""
    n, lag = 60_000, 500
    rows = []
    for i in range(n):
        rows.append((1, Op.STORE, 0, 1, 0, 0, 0, 0x100000 + 4 * i, 4, 0))
        if i >= lag:
            rows.append((2, Op.LOAD, 0, 0, 0, 0, 1, 0x100000 + 4 * (i - lag), 4, 0))
    chunk = TraceChunk.from_records(rows)
    windows = (32, 256)
    ilp = IlpAnalyzer(windows)
    e = FeatureEngine([ilp, "footprint"]) if engine else None
    for c in chunk.split(20_000):
        (e or ilp).consume(c)
    assert ilp.mode == ("refs" if engine else "own")
    mem = ilp.mem
    assert mem.compactions > 3 and mem.n < 400 and int(mem.state[1]) <= 2048 and int(mem.state[3]) <= 1024
    recs = records(chunk)
    assert ilp.cycles() == {w: ilp_cycles(recs, w) for w in windows}
