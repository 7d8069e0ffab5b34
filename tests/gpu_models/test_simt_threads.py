"""Warp instruction streams: lockstep, min-PC divergence and re-convergence, coalescing, dependencies."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import Op, TraceError
from gpu_models.simt.threads import block_scratch, build_streams
from gpu_models.simt.trace_input import StreamsSink, load_region
from profiler.trace import RegionInfo, StaticInstruction, StaticTable, TraceChunk
from profiler.tracefile import write_trace


def reference_streams(chunk: TraceChunk, block_size: int):
    """Slow, obviously-correct version: list of (warp, pc, op, active, sectors, deps) per warp instruction."""
    recs = [r for r in chunk.records() if r[9] >= 0]
    by_t = {}
    for r in recs:
        by_t.setdefault(r[9], []).append(r)
    tids = sorted(by_t)
    wpb = -(-block_size // 32)
    warps = {}
    for t_index, tid in enumerate(tids):
        key = (t_index // block_size) * wpb + (t_index % block_size) // 32
        warps.setdefault(key, []).append(tid)
    out = []
    for wkey in sorted(warps):
        threads = warps[wkey]
        cur = {t: 0 for t in threads}
        last_write = {t: {} for t in threads}  # token -> warp instruction index that wrote it
        while True:
            live = [t for t in threads if cur[t] < len(by_t[t])]
            if not live:
                break
            pc = min(by_t[t][cur[t]][0] for t in live)
            act = [t for t in live if by_t[t][cur[t]][0] == pc]
            sectors = set()
            deps = [-1, -1, -1]
            wi = len(out)
            for t in act:
                r = by_t[t][cur[t]]
                for k in range(3):
                    tok = r[3 + k]
                    if tok and tok in last_write[t]:
                        deps[k] = max(deps[k], last_write[t][tok])
                if r[1] in (Op.LOAD, Op.STORE):
                    a, sz = r[7], r[8]
                    sectors.update(range(a // 32, (a + sz - 1) // 32 + 1))
            for t in act:
                r = by_t[t][cur[t]]
                if r[6]:
                    last_write[t][r[6]] = wi
                cur[t] += 1
            out.append((wkey, pc, by_t[act[0]][cur[act[0]] - 1][1], len(act),
                        sorted(sectors), deps))
    return out


def as_tuples(s):
    res = []
    for w in range(s.n_warps):
        for i in range(s.warp_ptr[w], s.warp_ptr[w + 1]):
            res.append((int(s.pc[i]), int(s.op[i]), int(s.active[i]),
                        s.sectors[s.sector_ptr[i]:s.sector_ptr[i + 1]].tolist(), s.dep[i].tolist()))
    return res


def test_if_else_serialises_and_reconverges():
    # 4 threads: 0 and 2 take pc 3 (then), 1 and 3 take pc 4 (else); all reconverge at pc 5
    rows = []
    for t in range(4):
        rows += [(1, Op.INT_ALU, 0, 0, 0, 0, 7, 0, 0, t), (2, Op.BRANCH, t % 2, 7, 0, 0, 0, 0, 0, t)]
        rows.append((3 if t % 2 == 0 else 4, Op.FP_MUL, 0, 0, 0, 0, 8, 0, 0, t))
        rows.append((5, Op.FP_ALU, 0, 8, 0, 0, 9, 0, 0, t))
    s = build_streams(TraceChunk.from_records(rows), 32)
    assert s.n_warps == 1 and s.n_threads == 4
    assert s.pc.tolist() == [1, 2, 3, 4, 5]
    assert s.active.tolist() == [4, 4, 2, 2, 4]
    assert s.divergent.tolist() == [0, 1, 0, 0, 0]
    # the branch depends on pc 1; the re-converged add on both sides' multiplies (latest: index 3)
    assert s.dep[1].tolist() == [0, -1, -1]
    assert s.dep[4].tolist() == [3, -1, -1]


def test_loop_with_different_trip_counts():
    # thread t runs the loop body (pc 2) t+1 times, header pc 1 once more; exits to pc 3
    rows = []
    for t in range(3):
        for _ in range(t + 1):
            rows += [(1, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, t), (2, Op.FP_ALU, 0, 0, 0, 0, 0, 0, 0, t)]
        rows += [(1, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, t), (3, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t)]
    s = build_streams(TraceChunk.from_records(rows), 256)
    assert s.pc.tolist() == [1, 2, 1, 2, 1, 2, 1, 3]
    assert s.active.tolist() == [3, 3, 3, 2, 2, 1, 1, 3]


def _static(fields, top):
    """A static table of ids 1..top; ``fields``: {pc: (loop, closes)} (docs/trace-format.md, "Loops")."""
    return StaticTable(StaticInstruction(pc=p, file="t.py", line=p, col=0, text=f"s{p}",
                                         loop=fields.get(p, (0, 0))[0], closes=fields.get(p, (0, 0))[1])
                       for p in range(1, top + 1))


W2_STATIC = _static({2: (0, 1), 3: (1, 0), 4: (1, 0), 5: (1, 0)}, 6)


def w2_trace():
    """Worked example W2 (docs/features.md): s1; for k in 0, 1: s2 (the loop test), s3 LOAD, s4 BRANCH taken iff
    (k = 0 and t odd) or (k = 1 and t < 16), s5 when taken; the exiting s2 and s6 STORE."""
    rows = []
    for t in range(32):
        rows.append((1, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t))
        for k in range(2):
            taken = int((k == 0 and t % 2 == 1) or (k == 1 and t < 16))
            rows += [(2, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, t), (3, Op.LOAD, 0, 0, 0, 0, 0, 0x1000 + 8 * t, 8, t),
                     (4, Op.BRANCH, taken, 0, 0, 0, 0, 0, 0, t)]
            rows += [(5, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t)] if taken else []
        rows += [(2, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, t), (6, Op.STORE, 0, 0, 0, 0, 0, 0x2000 + 8 * t, 8, t)]
    return TraceChunk.from_records(rows)


def test_w2_reconverges_at_each_iteration_end():
    """The loop test after a body record sits at the end of the body: 11 warp instructions, 320 active lanes
    (docs/features.md, W2); by static id alone the warp stays split: 16."""
    s = build_streams(w2_trace(), 256, static=W2_STATIC)
    assert s.pc.tolist() == [1, 2, 3, 4, 5, 2, 3, 4, 5, 2, 6]
    assert s.active.tolist() == [32, 32, 32, 32, 16, 32, 32, 32, 16, 32, 32]
    assert s.divergent.tolist() == [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]
    assert s.sectors.tolist() == [128 + k for k in range(8)] * 2 + [256 + k for k in range(8)]
    assert build_streams(w2_trace(), 256).n == 16


def test_the_loaders_pass_the_static_table(tmp_path):
    """A trace file's loop table reaches the warps (load_region), and so does the table a sink is given at the
    end of a region (StreamsSink); a chunk alone has none."""
    path = write_trace(tmp_path / "w2.parquet", RegionInfo(name="w2"), W2_STATIC, w2_trace())
    assert load_region(path)[1].n == 11
    assert load_region(w2_trace())[1].n == 16
    sink = StreamsSink()
    sink.start_region(RegionInfo(name="w2"), W2_STATIC)
    for part in w2_trace().split(50):
        sink.consume(part)
    sink.end_region(RegionInfo(name="w2"), W2_STATIC)
    assert sink.regions[0][1].n == 11


def test_positions_come_from_the_records_as_traced():
    """A call at the end of a loop body (CALL, the callee's two records at ids 1..2, RET): the loop's increment
    and test after the call close the iteration, so every lane meets there. Compiled streams drop the CALL and
    RET after the positions are known: 11 warp instructions instead of 15."""
    rows = []
    for t in range(32):
        for k in range(2):
            if k:
                rows += [(10, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t), (11, Op.BRANCH, 1, 0, 0, 0, 0, 0, 0, t)]
            rows += [(12, Op.LOAD, 0, 0, 0, 0, 0, 0x1000 + 8 * t, 8, t), (13, Op.BRANCH, t % 2, 0, 0, 0, 0, 0, 0, t)]
            if t % 2:
                rows += [(14, Op.CALL, 0, 0, 0, 0, 0, 0, 0, t), (1, Op.FP_MUL, 0, 0, 0, 0, 0, 0, 0, t),
                         (2, Op.RET, 0, 0, 0, 0, 0, 0, 0, t)]
        rows += [(10, Op.INT_ALU, 0, 0, 0, 0, 0, 0, 0, t), (11, Op.BRANCH, 0, 0, 0, 0, 0, 0, 0, t),
                 (16, Op.STORE, 0, 0, 0, 0, 0, 0x2000 + 8 * t, 8, t)]
    chunk = TraceChunk.from_records(rows)
    static = _static({10: (0, 1), 11: (0, 1), 12: (1, 0), 13: (1, 0), 14: (1, 0)}, 16)
    it = [(12, 32), (13, 32), (14, 16), (1, 16), (2, 16), (10, 32), (11, 32)]
    s = build_streams(chunk, 256, compiled=False, static=static)
    assert list(zip(s.pc.tolist(), s.active.tolist())) == it + it + [(16, 32)]
    it = [(12, 32), (13, 32), (1, 16), (10, 32), (11, 32)]
    s = build_streams(chunk, 256, static=static)
    assert list(zip(s.pc.tolist(), s.active.tolist())) == it + it + [(16, 32)]


def test_coalescing_into_sectors():
    n = 32
    tid = np.arange(n)
    contiguous = TraceChunk.from_columns(pc=np.ones(n), op=np.full(n, Op.LOAD), addr=4096 + 4 * tid,
                                         size=np.full(n, 4), tid=tid)
    s = build_streams(contiguous, 32)
    assert s.sectors.tolist() == [128, 129, 130, 131]  # 128 bytes, aligned: 4 sectors
    strided = TraceChunk.from_columns(pc=np.ones(n), op=np.full(n, Op.STORE), addr=256 * tid,
                                      size=np.full(n, 4), tid=tid)
    assert build_streams(strided, 32).n_sectors().tolist() == [32]
    crossing = TraceChunk.from_columns(pc=[1], op=[Op.LOAD], addr=[60], size=[8], tid=[0])
    assert build_streams(crossing, 32).sectors.tolist() == [1, 2]  # bytes 60..67 span two sectors
    same = TraceChunk.from_columns(pc=np.ones(n), op=np.full(n, Op.LOAD), addr=np.full(n, 100),
                                   size=np.full(n, 4), tid=tid)
    assert build_streams(same, 32).sectors.tolist() == [3]  # broadcast


def test_blocks_warps_and_outside_records():
    n = 100
    tid = np.r_[-1, np.arange(n), -1]
    ch = TraceChunk.from_columns(pc=np.ones(n + 2), op=np.zeros(n + 2), tid=tid)
    s = build_streams(ch, 48)  # 48 threads: a full warp and a 16-thread warp per block
    assert s.n_records == n and s.n_threads == 100 and s.n_blocks == 3
    assert s.warp_threads.tolist() == [32, 16, 32, 16, 4]
    assert s.warp_block.tolist() == [0, 0, 1, 1, 2]
    assert s.warps_per_block == 2


def test_errors():
    with pytest.raises(TraceError, match="no record inside a parallel loop"):
        build_streams(TraceChunk.from_columns(pc=[1], op=[0], tid=[-1]))
    with pytest.raises(TraceError, match="record 0: op=99"):
        build_streams(TraceChunk.from_columns(pc=[1], op=[99], tid=[0]))
    with pytest.raises(ValueError, match="block_size"):
        build_streams(TraceChunk.from_columns(pc=[1], op=[0], tid=[0]), 0)


def reference_compiled(chunk: TraceChunk, block_size: int):
    """Slow version of ``compiled=True``: per thread, a division or remainder by a constant (``src2 == 0``) is a
    multiply; a copy, call or return is dropped and what it writes names what its first source named (the
    record that produced it, or nothing); then warps form over the kept records as in reference_streams."""
    through = (Op.MOVE, Op.CALL, Op.RET)
    by_t = {}
    for r in chunk.records():
        if r[9] >= 0:
            by_t.setdefault(r[9], []).append(r)
    kept = {}
    for t, recs in by_t.items():
        env, out = {}, []
        for r in recs:
            op = Op.INT_MUL if r[1] in (Op.INT_DIV, Op.INT_REM) and r[4] == 0 else Op(r[1])
            if op in through:
                if r[6]:
                    env[r[6]] = env.get(r[3]) if r[3] else None
                continue
            rec = {"pc": r[0], "op": op, "addr": r[7], "size": r[8],
                   "prods": [env.get(tok) if tok else None for tok in r[3:6]]}
            if r[6]:
                env[r[6]] = rec
            out.append(rec)
        kept[t] = out
    tids = sorted(kept)
    wpb = -(-block_size // 32)
    warps = {}
    for t_index, tid in enumerate(tids):
        warps.setdefault((t_index // block_size) * wpb + (t_index % block_size) // 32, []).append(tid)
    out, where = [], {}
    for wkey in sorted(warps):
        threads = warps[wkey]
        cur = {t: 0 for t in threads}
        while True:
            live = [t for t in threads if cur[t] < len(kept[t])]
            if not live:
                break
            pc = min(kept[t][cur[t]]["pc"] for t in live)
            act = [t for t in live if kept[t][cur[t]]["pc"] == pc]
            sectors, deps, wi = set(), [-1, -1, -1], len(out)
            for t in act:
                rec = kept[t][cur[t]]
                for k, p in enumerate(rec["prods"]):
                    if p is not None:
                        deps[k] = max(deps[k], where[id(p)])
                if rec["op"] in (Op.LOAD, Op.STORE):
                    sectors.update(range(rec["addr"] // 32, (rec["addr"] + rec["size"] - 1) // 32 + 1))
            for t in act:
                where[id(kept[t][cur[t]])] = wi
                cur[t] += 1
            out.append((pc, int(kept[act[0]][cur[act[0]] - 1]["op"]), len(act), sorted(sectors), deps))
    return out


@st.composite
def traces(draw, ops=(Op.INT_ALU, Op.FP_MUL, Op.LOAD, Op.STORE, Op.BRANCH)):
    n_threads = draw(st.integers(1, 70))
    rows = []
    for t in draw(st.permutations(list(range(n_threads)))):
        length = draw(st.integers(1, 6))
        pcs = sorted(draw(st.lists(st.integers(1, 8), min_size=length, max_size=length)))
        if draw(st.booleans()):
            pcs = pcs + pcs[: draw(st.integers(0, len(pcs)))]  # a second loop iteration
        for pc in pcs:
            op = ops[pc % len(ops)]
            addr = draw(st.integers(0, 400)) if op in (Op.LOAD, Op.STORE) else 0
            size = draw(st.sampled_from([1, 4, 8, 40])) if op in (Op.LOAD, Op.STORE) else 0
            rows.append((pc, op, 0, pc % 3, (pc + 1) % 4, 0, pc % 4, addr, size, t))
    return TraceChunk.from_records(rows), draw(st.sampled_from([1, 16, 32, 40, 64]))


@settings(max_examples=60, deadline=None)
@given(traces())
def test_matches_reference(case):
    chunk, block = case
    s = build_streams(chunk, block)
    ref = reference_streams(chunk, block)
    assert as_tuples(s) == [(pc, int(op), act, sec, deps) for (_, pc, op, act, sec, deps) in ref]
    assert int(s.active.sum()) == s.n_records == len(chunk)
    assert as_tuples(build_streams(chunk, block, compiled=False)) == as_tuples(s)  # nothing here to compile


@settings(max_examples=80, deadline=None)
@given(traces(ops=(Op.MOVE, Op.INT_DIV, Op.LOAD, Op.RET, Op.INT_REM, Op.FP_MUL, Op.CALL, Op.STORE, Op.BRANCH)))
def test_compiled_streams_match_reference(case):
    chunk, block = case
    s = build_streams(chunk, block)
    assert as_tuples(s) == reference_compiled(chunk, block)
    dropped = np.isin(chunk.op, [Op.MOVE, Op.CALL, Op.RET])
    assert int(s.active.sum()) == int((~dropped).sum()) and s.n_records == len(chunk)
    assert not np.isin(s.op, [Op.MOVE, Op.CALL, Op.RET]).any()


def test_compiled_code_drops_copies_and_strength_reduces_constant_division():
    # t = a // 16 (constant divisor), u = t (copy), v = u % w (w from a load: a real remainder), x = v * 2
    rows = []
    for t in range(32):
        rows += [(1, Op.LOAD, 0, 0, 0, 0, 5, 4096 + 4 * t, 4, t), (2, Op.INT_DIV, 0, 5, 0, 0, 6, 0, 0, t),
                 (3, Op.MOVE, 0, 6, 0, 0, 7, 0, 0, t), (4, Op.LOAD, 0, 0, 0, 0, 8, 8192, 4, t),
                 (5, Op.INT_REM, 0, 7, 8, 0, 9, 0, 0, t), (6, Op.INT_MUL, 0, 9, 0, 0, 10, 0, 0, t)]
    chunk = TraceChunk.from_records(rows)
    s = build_streams(chunk, 32)
    assert s.pc.tolist() == [1, 2, 4, 5, 6]
    assert [Op(int(o)).name for o in s.op] == ["LOAD", "INT_MUL", "LOAD", "INT_REM", "INT_MUL"]
    # the remainder reads the division's result through the copy, and the second load
    assert s.dep[3].tolist() == [1, 2, -1]
    plain = build_streams(chunk, 32, compiled=False)
    assert [Op(int(o)).name for o in plain.op] == ["LOAD", "INT_DIV", "MOVE", "LOAD", "INT_REM", "INT_MUL"]
    assert plain.dep[4].tolist() == [2, 3, -1]


def test_negative_address_rejected():
    with pytest.raises(TraceError, match="record 1: LOAD at negative address -64"):
        build_streams(TraceChunk.from_columns(pc=[1, 2], op=[0, Op.LOAD], addr=[0, -64], size=[0, 4], tid=[0, 0]))


def reference_scratch(rows, block_size):
    """Slow block_scratch: per 32-byte sector, the blocks touching it, its first operation, whether loaded."""
    info = {}
    for pc, op, taken, s1, s2, s3, dst, addr, size, tid in rows:
        if op in (Op.LOAD, Op.STORE) and tid >= 0 and size > 0:
            d = info.setdefault(addr // 32, {"blocks": set(), "first": op, "loaded": False})
            d["blocks"].add(tid // block_size)
            d["loaded"] |= op == Op.LOAD
    out = []
    for pc, op, taken, s1, s2, s3, dst, addr, size, tid in rows:
        d = info.get(addr // 32) if op in (Op.LOAD, Op.STORE) and tid >= 0 and size > 0 else None
        out.append(bool(d) and len(d["blocks"]) == 1 and d["first"] == Op.STORE and d["loaded"])
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([Op.LOAD, Op.STORE, Op.FP_ALU]), st.integers(-1, 7),
                          st.integers(0, 9), st.sampled_from([0, 4, 8])), min_size=1, max_size=60),
       st.sampled_from([1, 2, 4]))
def test_block_scratch_matches_reference(recs, block_size):
    rows = [(1 + k, op, 0, 0, 0, 0, 0, 4096 + 16 * slot if op != Op.FP_ALU else 0, size if op != Op.FP_ALU else 0,
             tid) for k, (op, tid, slot, size) in enumerate(recs)]
    chunk = TraceChunk.from_records(rows)
    assert block_scratch(chunk, block_size).tolist() == reference_scratch(rows, block_size)


def test_shared_records_touch_no_sector():
    # thread t stores then loads its word of a tile: with the mask the two warp instructions have no sectors
    rows = []
    for t in range(32):
        rows += [(1, Op.STORE, 0, 0, 0, 0, 0, 8192 + 4 * t, 4, t), (2, Op.LOAD, 0, 0, 0, 0, 5, 8192 + 4 * t, 4, t)]
    chunk = TraceChunk.from_records(rows)
    plain = build_streams(chunk, 32)
    assert np.diff(plain.sector_ptr).tolist() == [4, 4]
    shared = build_streams(chunk, 32, block_scratch(chunk, 32))
    assert np.diff(shared.sector_ptr).tolist() == [0, 0] and shared.op.tolist() == plain.op.tolist()
    with pytest.raises(ValueError, match="shared has shape"):
        build_streams(chunk, 32, np.zeros(3, bool))
