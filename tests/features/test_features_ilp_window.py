"""ILP's O(1) window retirement (features/ilp.py, ``_ilp_window``) against the step-by-step FIFO.

The engine no longer stores the FIFO of issue times; these tests drive it with dependence-heavy traces
(long chains mixed with independent instructions, memory dependences through few, overlapping addresses)
at tiny and odd window sizes, where retirement patterns are most varied, and check both the drained
cycles (the features) and MICA's undrained clock, at several chunk sizes.
"""

from collections import deque

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features import IlpAnalyzer
from profiler.trace import TraceChunk


def fifo_machine(recs, w, issued=None):
    """(drained cycles, clock c) of MICA's machine (memory dependences on exact bytes), the FIFO kept
    explicitly; also checks that the window never holds more than w entries and that the head left by a
    retirement equals the new clock. When ``issued`` is a list, every record's issue time t is appended."""
    c = 0
    reg = {}
    mem = {}  # byte address -> ready time
    window = deque()
    cycles = 0
    for op, src, dst, addr, size in recs:
        t = c
        for s in src:
            if s:
                t = max(t, reg.get(s, 0))
        touched = range(addr, addr + size) if op in (Op.LOAD, Op.STORE) else ()
        if op == Op.LOAD:
            for b in touched:
                t = max(t, mem.get(b, 0))
        if dst:
            reg[dst] = t + 1
        if op == Op.STORE:
            for b in touched:
                mem[b] = t + 1
        if issued is not None:
            issued.append(t)
        window.append(t)
        assert len(window) <= w
        if len(window) == w:
            c += 1
            while window and window[0] < c:
                window.popleft()
            assert not window or window[0] == c
        cycles = max(cycles, t + 1)
    return cycles, c


def _chunk(recs):
    return TraceChunk.from_records(
        [(1 + i % 5, int(op), 0, *src, dst, addr, size, 0) for i, (op, src, dst, addr, size) in enumerate(recs)])


def _engine(recs, windows, chunk_records):
    ilp = IlpAnalyzer(windows)
    chunk = _chunk(recs)
    for c in chunk.split(chunk_records) if len(chunk) else [chunk]:
        ilp.consume(c)
    return ilp


@st.composite
def dep_record(draw):
    op = draw(st.sampled_from([Op.INT_ALU, Op.INT_ALU, Op.FP_MUL, Op.LOAD, Op.STORE, Op.MOVE]))
    src = [draw(st.sampled_from([0, 0, 1, 2, 3])) for _ in range(3)]
    dst = draw(st.sampled_from([0, 1, 1, 2, 3]))
    mem = op in (Op.LOAD, Op.STORE)
    addr = draw(st.sampled_from([0, 8, 64, 120, 200])) if mem else 0
    size = draw(st.sampled_from([4, 8, 16])) if mem else 0
    return (op, tuple(src), dst, addr, size)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(dep_record(), min_size=0, max_size=120),
       st.lists(st.integers(1, 10), min_size=1, max_size=4), st.sampled_from([1, 4, 4096]))
def test_window_retirement_matches_fifo(recs, windows, chunk_records):
    ilp = _engine(recs, windows, chunk_records)
    ws = sorted(set(windows))
    want = {w: fifo_machine(recs, w) for w in ws}
    assert ilp.cycles() == {w: want[w][0] for w in ws}
    assert ilp.cycles(drained=False) == {w: want[w][1] for w in ws}


def test_worked_example_value_below_clock_stays_behind_the_head():
    """A: r1 <- ; B: r2 <- r1; C: independent; D: <- r2; E, F: independent.

    W = 3: issue times 0, 1, 0 fill the window [0, 1, 0]; c = 1 retires only the head (the next entry, 1,
    is not below c), so the 0 of C stays in the window behind it: [1, 0]. D waits for r2 (t = 2):
    [1, 0, 2], c = 2 retires 1 and 0: [2]. E, F issue at 2: [2, 2, 2], c = 3 empties it. Cycles 3, ILP 2.
    W = 2: t = 0, 1 (c = 1, [1]), 1 (c = 2, []), 2, 2 (c = 3, []), 3: cycles 4, clock 3.
    W = 1: every instruction advances the clock: t = 0, 1, 2, 3, 4, 5: cycles 6, clock 6.
    """
    alu = Op.INT_ALU
    recs = [(alu, (0, 0, 0), 1, 0, 0), (alu, (1, 0, 0), 2, 0, 0), (alu, (0, 0, 0), 0, 0, 0),
            (alu, (2, 0, 0), 0, 0, 0), (alu, (0, 0, 0), 0, 0, 0), (alu, (0, 0, 0), 0, 0, 0)]
    for cr in (1, 2, 6):
        ilp = _engine(recs, (1, 2, 3), cr)
        assert ilp.cycles() == {1: 6, 2: 4, 3: 3}
        assert ilp.cycles(drained=False) == {1: 6, 2: 3, 3: 3}
        res = ilp.result()
        assert (res["mica_ilp1"], res["mica_ilp2"], res["mica_ilp3"]) == (1.0, 1.5, 2.0)
    assert {w: fifo_machine(recs, w) for w in (1, 2, 3)} == {1: (6, 6), 2: (4, 3), 3: (3, 3)}


def test_long_chain_then_independent_burst_at_the_seven_windows():
    """A chain of 3000 dependent instructions, then 70000 independent ones, at the default windows: the
    chain fills the windows with one value per position, the burst with many equal values."""
    alu = Op.INT_ALU
    recs = [(alu, (1, 0, 0), 1, 0, 0)] * 3000 + [(alu, (0, 0, 0), 0, 0, 0)] * 70000
    ilp = _engine(recs, (32, 64, 128, 256, 2048, 16384, 65536), 5000)
    got = ilp.cycles()
    got_c = ilp.cycles(drained=False)
    for w in (32, 64, 128, 256, 2048, 16384, 65536):
        assert (got[w], got_c[w]) == fifo_machine(recs, w), w


def test_generated_window_pass_is_current_and_matches_the_analyzer_layout():
    """features/fast/ilp_unrolled.py is what the generator writes, and the constants baked into the pass
    specialised for the default windows are the analyzer's table offsets, masks and sizes."""
    import re
    from pathlib import Path

    import features.fast.gen_ilp as gen
    from features.ilp import ILP_WINDOWS

    text = Path(gen.__file__).with_name("ilp_unrolled.py").read_text()
    assert text == gen.source()
    special = text[text.index("def ilp_windows_default"):]
    const = {name: int(v) for name, v in re.findall(r"^    ([omw]\d) = (\d+)$", special, re.M)}
    ilp = IlpAnalyzer()
    assert ilp.default and tuple(ilp.windows) == ILP_WINDOWS
    for k in range(len(ILP_WINDOWS)):
        assert (const[f"o{k}"], const[f"m{k}"], const[f"w{k}"]) == (ilp.offs[k], ilp.rmask[k], ilp.windows[k])
    assert not IlpAnalyzer((32, 64, 128, 256, 2048, 16384, 32768)).default


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(dep_record(), min_size=0, max_size=200),
       st.sampled_from([(1, 2, 3, 5, 8, 13, 21), (32, 64, 128, 256, 2048, 16384, 65536)]),
       st.sampled_from([1, 6, 4096]))
def test_seven_window_passes_match_fifo(recs, windows, chunk_records):
    """The generated seven-window pass, general (any seven windows) and specialised (the defaults)."""
    ilp = _engine(recs, windows, chunk_records)
    assert ilp.default == (windows[-1] == 65536)
    want = {w: fifo_machine(recs, w) for w in windows}
    assert ilp.cycles() == {w: want[w][0] for w in windows}
    assert ilp.cycles(drained=False) == {w: want[w][1] for w in windows}
