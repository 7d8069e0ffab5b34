"""Layout positions (features/layout.py): loops' closing control records sit after their body, so the warp views
(features/warp.py) and the SIMT model's warps (gpu_models/simt/threads.py) re-converge at every iteration's end.

Checked on the spec's worked example W2, hand-built cases (nested loops, calls from a loop body to functions
laid out before and after the caller), the slow reference (featref.layout_keys, featref.lockstep) on generated
programs with nested for/while loops, library-style element loops, ifs, breaks and calls run by up to 70
threads, the SIMT model's warps on the same traces, and regions traced by the Python tracer in both modes.
"""

import random
from fractions import Fraction

import numpy as np
import pytest
from featref import records, warp, warp_totals
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import prange

from core.trace_schema import Op, TraceError
from features import FeatureEngine, FeatureSink, WarpAnalyzer
from features.layout import Layout
from gpu_models.simt.threads import build_streams
from profiler.session import trace_function
from profiler.trace import MemorySink, StaticInstruction, StaticTable, TraceChunk

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def table(fields):
    """A static table from {pc: (loop, closes)} (pcs not listed: in no loop)."""
    top = max(fields)
    return StaticTable(StaticInstruction(pc=p, file="t.py", line=p, col=0, text=f"s{p}",
                                         loop=fields.get(p, (0, 0))[0], closes=fields.get(p, (0, 0))[1])
                       for p in range(1, top + 1))


def _run(chunk, static=None, cuts=None, meta=None):
    a = WarpAnalyzer()
    a.configure(meta)
    a.configure_static(static)
    bounds = [0, *(cuts or []), len(chunk)]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        a.consume(chunk.slice(lo, hi))
    return a


def _steps(s):
    """The SIMT streams' warp instructions: per warp, (static id, active lanes) in issue order."""
    return [[(int(s.pc[i]), int(s.active[i])) for i in range(s.warp_ptr[w], s.warp_ptr[w + 1])]
            for w in range(s.n_warps)]


# ------------------------------------------------------------------------------------------ W2


W2_STATIC = {2: (0, 1), 3: (1, 0), 4: (1, 0), 5: (1, 0)}  # s2 the loop's control, s3..s5 its body


def w2_trace():
    """The spec's worked example W2: one warp; s1 INT_ALU; for k in 0, 1: s2 BRANCH (taken: continue), s3 LOAD,
    s4 BRANCH taken iff (k = 0 and t odd) or (k = 1 and t < 16), s5 INT_ALU when s4 is taken; the exiting s2
    (not taken) and s6 STORE."""
    rows = []
    for t in range(32):
        rows.append((1, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t))
        for k in range(2):
            rows.append((2, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, t))
            rows.append((3, Op.LOAD, 0, 0, 0, 0, 0, 0x1000 + 8 * t, 8, t))
            taken = int((k == 0 and t % 2 == 1) or (k == 1 and t < 16))
            rows.append((4, Op.BRANCH, taken, 0, 0, 0, 0, 0, 0, t))
            if taken:
                rows.append((5, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t))
        rows.append((2, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, t))
        rows.append((6, Op.STORE, 0, 0, 0, 0, 0, 0x2000 + 8 * t, 8, t))
    return TraceChunk.from_records(rows)


W2_WARP = [(1, 32), (2, 32), (3, 32), (4, 32), (5, 16), (2, 32), (3, 32), (4, 32), (5, 16), (2, 32), (6, 32)]


@pytest.mark.parametrize("chunk_records", [None, 1, 7, 100])
def test_w2_feature_engine(chunk_records):
    chunk = w2_trace()
    cuts = list(range(chunk_records, len(chunk), chunk_records)) if chunk_records else None
    a = _run(chunk, table(W2_STATIC), cuts)
    c = a.counts()
    assert (c["warp_instructions"], c["active_lanes"], c["branches"], c["divergent_branches"]) == (11, 320, 5, 2)
    r = a.result()
    assert r["warp_simdEfficiency"] == 320 / 352  # 0.90909...
    assert r["warp_bdiv"] == 0.4
    assert warp_totals(records(chunk), table(W2_STATIC))["steps"] == [W2_WARP]  # the reference agrees
    e = FeatureEngine(["warp"], static=table(W2_STATIC))
    e.consume(chunk)
    assert e.result()["warp_simdEfficiency"] == 320 / 352


def test_w2_simt_model():
    """The SIMT model's warp (its W2 details: tests/gpu_models/test_simt_threads.py)."""
    assert _steps(build_streams(w2_trace(), 256, compiled=False, static=table(W2_STATIC))) == [W2_WARP]


def test_w2_without_the_loop_table_never_reconverges():
    """By static id the even lanes run their second iteration (s2 < s5) before the odd lanes' s5: 16 warp
    instructions, the warp split from the first s4 to the end."""
    a = _run(w2_trace())
    assert a.counts()["warp_instructions"] == 16 and a.result()["warp_simdEfficiency"] == 320 / 512
    assert len(_steps(build_streams(w2_trace(), 256, compiled=False))[0]) == 16


# ------------------------------------------------------------------------------------------ the table


def test_positions_of_nested_loops():
    """pc 1 outer control, 2..9 outer body with an inner loop (control 3, 4; body 5, 6) ending at pc 6, and a
    second inner loop (control 7; body 8, 9) ending where the outer body ends: closing slots sit after the body
    end, the inner loop's before the outer's, a loop's control records in id order."""
    lay = Layout.of(table({1: (0, 1), 2: (1, 0), 3: (1, 2), 4: (1, 2), 5: (2, 0), 6: (2, 0),
                           7: (1, 3), 8: (3, 0), 9: (3, 0), 10: (0, 0)}))
    plain = [lay.position(p, False) for p in range(11)]
    assert plain == [0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 14]
    assert [lay.position(p, True) for p in (3, 4)] == [7, 8]  # between 6 and 7
    assert [lay.position(p, True) for p in (7, 1)] == [12, 13]  # inner loop 3 first, then the outer loop
    assert lay.position(2, True) == lay.position(2, False)  # not a control record
    assert lay.position(40, False) == 40 + 4  # beyond the table: after every slot


def test_no_loops_means_static_ids():
    for static in (None, StaticTable(), table({5: (0, 0)})):
        lay = Layout.of(static)
        assert not lay.active and lay.position(3, False) == lay.position(3, True) == 3
        pc = np.array([3, 1, 2], np.int32)
        assert lay.positions(pc, np.zeros(3, np.uint8), np.zeros(3, np.int64)).tolist() == [3, 1, 2]


@pytest.mark.parametrize("fields, what", [
    ({1: (1, 1)}, "pc 1: field 'closes' = 1: an instruction cannot close the loop whose body holds it"),
    ({1: (0, 1), 2: (2, 1), 3: (0, 2)}, "pc 2: field 'loop' = 2: the control instructions of loop 1"),
    ({1: (0, 1), 2: (5, 0)}, "pc 2: field 'loop' = 5: no instruction closes loop 5"),
    ({1: (2, 1), 2: (1, 2)}, "pc 1: field 'loop' = 2: loops [1, 2] are nested in each other"),
])
def test_inconsistent_loop_fields_are_refused(fields, what):
    with pytest.raises(TraceError, match="static table: " + what.replace("[", r"\[").replace("]", r"\]")):
        Layout.of(table(fields))
    with pytest.raises(TraceError, match="static table: pc"):
        WarpAnalyzer().configure_static(table(fields))
    with pytest.raises(TraceError, match="static table: pc"):
        build_streams(w2_trace(), static=table(fields))


# ------------------------------------------------------------------------------------------ calls


def _call_trace(callee_first: bool):
    """32 threads: ``for k in range(2): x = load; if t odd: f(); y = op`` where f (CALL, its two records, RET)
    is laid out before the caller (ids 1..3, as the Python tracer lays out every function: before each call site
    of it) or after it (ids 20..22)."""
    f0 = 1 if callee_first else 20
    rows = []
    for t in range(32):
        for k in range(2):
            if k:
                rows += [(10, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t), (11, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, t)]
            rows.append((12, Op.LOAD, 0, 0, 0, 0, 0, 0x1000 + 8 * t, 8, t))
            rows.append((13, Op.BRANCH, t % 2, 0, 0, 0, 0, 0, 0, t))
            if t % 2:
                rows += [(14, Op.CALL, 0, 0, 0, 0, 0, 0, 0, t), (f0, Op.FP_MUL, 0, 0, 0, 0, 0, 0, 0, t),
                         (f0 + 1, Op.FP_ALU, 0, 0, 0, 0, 0, 0, 0, t), (f0 + 2, Op.RET, 0, 0, 0, 0, 0, 0, 0, t)]
            rows.append((15, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t))
        rows += [(10, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t), (11, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, t),
                 (16, Op.STORE, 0, 0, 0, 0, 0, 0x2000 + 8 * t, 8, t)]
    fields = {10: (0, 1), 11: (0, 1), 12: (1, 0), 13: (1, 0), 14: (1, 0), 15: (1, 0), 22: (0, 0)}
    return TraceChunk.from_records(rows), table(fields)


def _check_call_trace(callee_first, want):
    chunk, static = _call_trace(callee_first)
    assert _steps(build_streams(chunk, 256, compiled=False, static=static)) == [want]
    assert warp_totals(records(chunk), static)["steps"] == [want]
    c = _run(chunk, static).counts()
    assert (c["warp_instructions"], c["active_lanes"]) == (len(want), sum(n for _, n in want))


def test_a_call_from_a_loop_body_reconverges_each_iteration():
    """The odd lanes' call (ids 1..3, below the rest of the body) runs before the even lanes move on; all meet
    at y = op (15) and at the loop's increment and test, whose occurrences after the call's records close the
    iteration: 19 warp instructions, 480 active lanes."""
    it = [(12, 32), (13, 32), (14, 16), (1, 16), (2, 16), (3, 16), (15, 32)]
    want = it + [(10, 32), (11, 32)] + it + [(10, 32), (11, 32), (16, 32)]
    assert (len(want), sum(n for _, n in want)) == (19, 480)
    _check_call_trace(True, want)


def test_a_callee_laid_out_after_its_caller_runs_after_the_others():
    """Positions are static ids, so a callee whose ids lie above the caller's (a layout the Python tracer never
    writes) runs after whatever of the caller has lower positions: the even lanes run y = op (15), close the
    iteration (positions 16, 17), run their second iteration and the STORE (position 18, below the callee's 22)
    before the odd lanes go on from their first call."""
    even = [(15, 16), (10, 16), (11, 16), (12, 16), (13, 16), (15, 16), (10, 16), (11, 16), (16, 16)]
    odd = [(20, 16), (21, 16), (22, 16), (15, 16), (10, 16), (11, 16), (12, 16), (13, 16), (14, 16), (20, 16),
           (21, 16), (22, 16), (15, 16), (10, 16), (11, 16), (16, 16)]
    _check_call_trace(False, [(12, 32), (13, 32), (14, 16)] + even + odd)


# ------------------------------------------------------------------------------------------ generated programs


PLAIN_OPS = [Op.INT_ALU, Op.LOAD, Op.STORE, Op.FP_MUL, Op.BRANCH]


class Program:
    """A random program's static ids, allocated in source order as the Python tracer does (a for's increment
    and test before its body, a while's test before its body, an element loop's control after it, a called
    function's ids before or after its caller's), its loop fields, and its nodes."""

    def __init__(self, draw):
        self.draw = draw
        self.ops = {}  # pc -> Op
        self.fields = {}  # pc -> (loop, closes)
        self.n_loops = 0
        self.funcs = {}

    def pc(self, op, loop, closes=0):
        p = len(self.ops) + 1
        self.ops[p] = op
        self.fields[p] = (loop, closes)
        return p

    def block(self, depth, loop, in_loop, calls, lib=False):
        nodes = []
        kinds = ["op"] if lib or depth >= 3 else ["op", "op", "if", "if", "for", "while", "lib"] + \
            (["call"] if calls else []) + (["break"] if in_loop else [])
        for _ in range(self.draw(st.integers(1, 3))):
            kind = self.draw(st.sampled_from(kinds))
            if kind == "op":
                nodes.append(("op", self.pc(self.draw(st.sampled_from(PLAIN_OPS)), loop)))
            elif kind == "break":
                nodes.append(("break", self.pc(Op.JUMP, loop)))
                break
            elif kind == "if":
                b = self.pc(Op.BRANCH, loop)
                then = self.block(depth + 1, loop, in_loop, calls)
                orelse = self.block(depth + 1, loop, in_loop, calls) if self.draw(st.booleans()) else None
                nodes.append(("if", b, then, orelse))
            elif kind in ("for", "while"):
                self.n_loops += 1
                lp = self.n_loops
                ctl = [self.pc(Op.INT_ALU, loop, lp), self.pc(Op.BRANCH, loop, lp)]
                nodes.append((kind, ctl, self.block(depth + 1, lp, True, calls)))
            elif kind == "lib":
                self.n_loops += 1
                lp = self.n_loops
                body = self.block(depth + 1, lp, False, calls, lib=True)
                nodes.append(("lib", body, [self.pc(Op.INT_ALU, loop, lp), self.pc(Op.BRANCH, loop, lp)]))
            else:
                f = self.draw(st.sampled_from(sorted(calls)))
                nodes.append(("call", self.pc(Op.CALL, loop), f))
        return nodes

    def function(self, name, calls):
        self.funcs[name] = (self.block(1, 0, False, calls), None)
        self.funcs[name] = (self.funcs[name][0], self.pc(Op.RET, 0))


def run(prog, nodes, rnd, out):
    """One thread's records of ``nodes``; True when a ``break`` left the innermost loop."""
    for node in nodes:
        kind = node[0]
        if kind == "op":
            out.append((node[1], rnd.randint(0, 1) if prog.ops[node[1]] == Op.BRANCH else 0))
        elif kind == "break":
            out.append((node[1], 0))
            return True
        elif kind == "if":
            taken = rnd.randint(0, 1)
            out.append((node[1], taken))
            if taken and run(prog, node[2], rnd, out):
                return True
            if not taken and node[3] is not None and run(prog, node[3], rnd, out):
                return True
        elif kind == "for":  # no record before the first iteration; increment and test before the others
            trips, broke = rnd.randint(0, 3), False
            for k in range(trips):
                if k:
                    out += [(node[1][0], 0), (node[1][1], 1)]
                if run(prog, node[2], rnd, out):
                    broke = True
                    break
            if trips and not broke:
                out += [(node[1][0], 0), (node[1][1], 0)]
        elif kind == "while":  # the test before every iteration and at the exit
            trips = rnd.randint(0, 3)
            for k in range(trips + 1):
                out += [(node[1][0], 0), (node[1][1], int(k < trips))]
                if k == trips or run(prog, node[2], rnd, out):
                    break
        elif kind == "lib":  # bottom-tested: body, induction, BRANCH taken while elements follow
            n = rnd.randint(1, 3)
            for e in range(n):
                run(prog, node[1], rnd, out)
                out += [(node[2][0], 0), (node[2][1], int(e < n - 1))]
        else:
            body, ret = prog.funcs[node[2]]
            out.append((node[1], 0))
            run(prog, body, rnd, out)
            out.append((ret, 0))
    return False


@st.composite
def programs(draw):
    """(trace, static table) of a random program run by 1..70 threads (tids 0.., one launch), each thread
    deciding its branches and trip counts at random and ending with one record outside the program."""
    prog = Program(draw)
    order = draw(st.sampled_from(["before", "after", "none"]))
    if order == "before":  # a function laid out before the region (ids below the caller's)
        prog.function("f", {})
    main = prog.block(0, 0, False, {"f"} if order != "none" else set())
    if order == "after":  # laid out after (ids above the caller's)
        prog.function("f", {})
    seed = draw(st.integers(0, 2**32))
    end = prog.pc(Op.INT_ALU, 0)  # every thread's last record (so that no thread is empty), and the host's
    rows = []
    if draw(st.booleans()):
        rows.append((end, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, -1))
    for t in range(draw(st.integers(1, 70))):
        out = []
        run(prog, main, random.Random(seed * 131 + t), out)
        out.append((end, 0))
        for pc, taken in out:
            op = prog.ops[pc]
            mem = op in (Op.LOAD, Op.STORE)
            rows.append((pc, op, taken, 0, 0, 0, 0, 0x10000 + 1024 * pc + 8 * t if mem else 0, 8 if mem else 0, t))
    return TraceChunk.from_records(rows), table(prog.fields)


@settings(max_examples=200, **SETTINGS)
@given(programs(), st.data())
def test_lockstep_matches_the_reference_on_generated_programs(case, data):
    chunk, static = case
    recs = records(chunk)
    ref = warp_totals(recs, static)
    a = _run(chunk, static)
    c = a.counts()
    assert (c["warp_instructions"], c["active_lanes"], c["memory_instructions"], c["sectors"], c["ideal_sectors"],
            c["branches"], c["divergent_branches"], c["instances"]) == \
        (ref["instructions"], ref["active"], ref["mem"], ref["sectors"], ref["ideal"], ref["branches"],
         ref["divergent"], ref["instances"])
    want = warp(recs, static)
    for name, v in a.result().items():
        assert v == pytest.approx(want[name], rel=1e-12, abs=0), name
    n = len(chunk)
    if n > 1:  # however the trace is cut
        cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=6)))
        assert _run(chunk, static, cuts).counts() == c
    # the SIMT model forms the same warps (one launch, threads 0.., whole warps in blocks of 256)
    assert _steps(build_streams(chunk, 256, compiled=False, static=static)) == ref["steps"]
    # records left out of the warps (a kernel loop's latch) still move their lane's state
    pcs = sorted({int(p) for p in chunk.pc})
    skip = data.draw(st.sets(st.sampled_from(pcs), max_size=3)) if pcs else set()
    ref_skip = warp_totals(recs, static, skip)
    c2 = _run(chunk, static, meta={"control_pcs": sorted(skip)}).counts()
    assert (c2["warp_instructions"], c2["active_lanes"], c2["branches"], c2["divergent_branches"]) == \
        (ref_skip["instructions"], ref_skip["active"], ref_skip["branches"], ref_skip["divergent"])


# ------------------------------------------------------------------------------------------ traced regions


def nearest(points, cents, labels):
    n, k = points.shape[0], cents.shape[0]
    for i in prange(n):
        best = np.inf
        idx = 0
        for c in range(k):
            d = abs(points[i] - cents[c])
            if d < best:
                best = d
                idx = c
        labels[i] = idx
    return labels


def _nearest_inputs():
    return np.arange(32.0), np.array([0.0, 40.0, 10.0]), np.zeros(32, np.int64)


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_traced_loop_with_an_if_reconverges(mode):
    """32 threads (points 0..31), 3 centroids 0, 40, 10. Each iteration of ``c`` is LOAD, LOAD, sub, abs,
    compare, BRANCH (6 warp instructions, all lanes), then ``best = d; idx = c`` for the lanes whose d is
    smaller (c = 0: all 32; c = 1: |i - 40| < i for i >= 21, 11 lanes; c = 2: |i - 10| < min(i, 40 - i) for
    i = 6..24, 19 lanes), then the increment and test (all lanes). The kernel loop's own latch is left out;
    with the two initial moves and the final STORE: 2 + 3 x 10 + 1 = 33 warp instructions and
    64 + (192 + 64 + 64) + (192 + 22 + 64) + (192 + 38 + 64) + 32 = 988 active lanes. Branches: the if and
    the loop test per iteration, 6, of which the ifs of c = 1 and c = 2 diverge."""
    sink, mem = FeatureSink(families=["warp"]), MemorySink()
    res = trace_function(nearest, _nearest_inputs(), region="nearest", sinks=[sink, mem], mode=mode)
    assert res.value.tolist() == [0] * 6 + [2] * 19 + [1] * 7
    feats = sink.results[0][1]
    assert feats["warp_simdEfficiency"] == pytest.approx(988 / (33 * 32), rel=1e-15)
    assert feats["warp_bdiv"] == pytest.approx(2 / 6, rel=1e-15)
    info, static, chunk = mem.regions[0]
    e = FeatureEngine(["warp"], static=static, thread_space=info.extra["thread_space"])
    e.consume(chunk)
    c = e.analyzers[0].counts()
    assert (c["warp_instructions"], c["active_lanes"], c["branches"], c["divergent_branches"]) == (33, 988, 6, 2)
    # the same trace without its loop table: the lanes that skip the if run ahead and never re-converge
    old = FeatureEngine(["warp"], thread_space=info.extra["thread_space"])
    old.consume(chunk)
    skip = info.extra["thread_space"]["control_pcs"]
    assert old.analyzers[0].counts()["warp_instructions"] == warp_totals(records(chunk), skip=skip)["instructions"]
    assert old.result()["warp_simdEfficiency"] < feats["warp_simdEfficiency"]
    # the SIMT model forms the same warps; it keeps the kernel loop's latch (increment, then its BRANCH, taken
    # but in the last thread), issued after the STORE with every lane
    s = build_streams(chunk, 256, compiled=False, static=static)
    assert (s.n, int(s.active.sum())) == (33 + 2, 988 + 64)
    a = WarpAnalyzer()
    a.configure_static(static)
    a.consume(chunk)
    assert (a.counts()["warp_instructions"], a.counts()["active_lanes"]) == (s.n, int(s.active.sum()))
    simd = sum(Fraction(int(x), 32) for x in s.active) / s.n
    assert a.result()["warp_simdEfficiency"] == pytest.approx(float(simd), rel=1e-15)


def nearest_while(points, cents, labels):
    n, k = points.shape[0], cents.shape[0]
    for i in prange(n):
        best = np.inf
        idx = 0
        c = 0
        while c < k:
            d = abs(points[i] - cents[c])
            if d < best:
                best = d
                idx = c
            c += 1
        labels[i] = idx
    return labels


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_traced_while_loop_reconverges(mode):
    """The same search as a while loop, whose test (compare, BRANCH) runs before every iteration and at the exit:
    three moves (best, idx, c = 0), the entry test (2), per iteration 6 + the two moves + ``c += 1`` + the test
    (2), and the STORE: 3 + 2 + 3 x 11 + 1 = 39 warp instructions, 39 x 32 - 2 x (32 - 11) - 2 x (32 - 19) =
    1180 active lanes; branches: the entry test, then the if and the test per iteration, 7, two of them
    divergent."""
    mem = MemorySink()
    trace_function(nearest_while, _nearest_inputs(), region="w", sinks=[mem], mode=mode)
    info, static, chunk = mem.regions[0]
    e = FeatureEngine(["warp"], static=static, thread_space=info.extra["thread_space"])
    e.consume(chunk)
    c = e.analyzers[0].counts()
    assert (c["warp_instructions"], c["active_lanes"], c["branches"], c["divergent_branches"]) == (39, 1180, 7, 2)
    s = build_streams(chunk, 256, compiled=False, static=static)
    assert (s.n, int(s.active.sum())) == (39 + 2, 1180 + 64)
