"""ILP's SIMD lane pass (features/ilp.py, features/fast/gen_ilp.py) against the step-by-step FIFO machine.

Covers what the vector layout adds: more than eight windows (two lane groups), the int32 time rebase
(forced every few records), hash-mode registers together with compaction of the stored blocks, the
running-max property the ring of first issue positions relies on, and the window-size limit.
"""

import numpy as np
import pytest
from featref import ilp_cycles, records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_features_ilp_window import _engine, dep_record, fifo_machine

import features.ilp as ilp_mod
from core.trace_schema import Op
from features import IlpAnalyzer
from features.synthetic_trace import synthetic_trace
from profiler.trace import TraceChunk


def issue_times(recs, w):
    """Issue time t of every record on MICA's machine with a w-entry window (the literal FIFO)."""
    out = []
    fifo_machine(recs, w, issued=out)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(dep_record(), min_size=1, max_size=150), st.integers(1, 12))
def test_issue_time_exceeds_the_running_max_by_at_most_one(recs, w):
    """The property the ring of first issue positions rests on: t_i <= max(t_0 .. t_(i-1)) + 1."""
    m = -1
    for t in issue_times(recs, w):
        assert t <= m + 1
        m = max(m, t)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(dep_record(), min_size=0, max_size=160), st.sampled_from([1, 5, 4096]))
def test_more_than_eight_windows_use_two_lane_groups(recs, chunk_records):
    windows = (1, 2, 3, 4, 5, 7, 9, 11, 16, 33, 100)
    ilp = _engine(recs, windows, chunk_records)
    assert len(ilp.groups) == 2 and not ilp.default
    want = {w: fifo_machine(recs, w) for w in windows}
    assert ilp.cycles() == {w: want[w][0] for w in windows}
    assert ilp.cycles(drained=False) == {w: want[w][1] for w in windows}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(dep_record(), min_size=0, max_size=200),
       st.sampled_from([(1, 2, 3), (2, 4, 8, 16), (32, 64, 128, 256, 2048, 16384, 65536)]),
       st.sampled_from([1, 3, 50]))
def test_time_rebase_keeps_results(recs, windows, segment):
    """Rebase the int32 times whenever a lane reaches 5, in kernel segments of a few records."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ilp_mod, "REBASE_AT", 5)
        mp.setattr(ilp_mod, "SEGMENT", segment)
        ilp = _engine(recs, windows, 7)
    want = {w: fifo_machine(recs, w) for w in windows}
    assert ilp.cycles() == {w: want[w][0] for w in windows}
    assert ilp.cycles(drained=False) == {w: want[w][1] for w in windows}
    if len(recs) > 40 and max(windows) <= 16:
        assert ilp.groups[0].tbase.any()  # the rebase did happen


def test_rebase_on_the_synthetic_trace_matches_the_plain_run(monkeypatch):
    chunk = synthetic_trace(60_000, seed=11)
    plain = IlpAnalyzer()
    for c in chunk.split(4096):
        plain.consume(c)
    monkeypatch.setattr(ilp_mod, "REBASE_AT", 1000)
    monkeypatch.setattr(ilp_mod, "SEGMENT", 777)
    rebased = IlpAnalyzer()
    for c in chunk.split(5000):
        rebased.consume(c)
    assert rebased.groups[0].tbase.any()
    assert rebased.cycles() == plain.cycles()
    assert rebased.cycles(drained=False) == plain.cycles(drained=False)
    assert rebased.result() == plain.result()


def test_hashed_registers_and_stored_block_compaction_against_the_reference():
    """Register tokens beyond the direct table and stores over 5000 blocks at any byte offset, 4 to 16 bytes
    (words written whole, in part and across two words; the table of stored blocks is compacted several
    times), at windows from 1 to 4096."""
    rng = np.random.default_rng(12)
    n = 12_000
    op = rng.choice([Op.LOAD, Op.STORE, Op.INT_ALU], size=n, p=[0.35, 0.35, 0.3])
    mem = (op == Op.LOAD) | (op == Op.STORE)
    toks = rng.integers(0, 3000, size=(4, n)) + ilp_mod.DIRECT_TOKENS * (rng.random((4, n)) < 0.5)
    chunk = TraceChunk.from_columns(
        pc=np.ones(n, np.int32), op=op, src1=toks[0], src2=toks[1], src3=np.zeros(n, np.int64), dst=toks[3],
        addr=np.where(mem, rng.integers(0, 5000, size=n) * 64 + rng.integers(0, 64, size=n), 0),
        size=np.where(mem, rng.choice([4, 8, 16], size=n), 0))
    windows = (1, 3, 32, 4096)
    ilp = IlpAnalyzer(windows)
    for c in chunk.split(1500):
        ilp.consume(c)
    assert not ilp.direct and ilp.mem.compactions > 1
    recs = records(chunk)
    assert ilp.cycles() == {w: ilp_cycles(recs, w) for w in windows}


def test_window_size_limit():
    with pytest.raises(ValueError, match="ILP windows must be <= 268435456"):
        IlpAnalyzer((32, ilp_mod.MAX_WINDOW + 1))
