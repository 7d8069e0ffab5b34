"""The thread-space check on the trace (features/thread_dependences.py) against a slow, obviously correct reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features.thread_dependences import KINDS, PAGE, ThreadSpaceChecker, join_report
from profiler.trace import TraceChunk

LOAD, STORE, ALU, OTHER = int(Op.LOAD), int(Op.STORE), int(Op.INT_ALU), int(Op.OTHER)


class _Reference:
    """What :func:`reference` knows while it reads the rows: the metadata as sets, the register and byte
    shadows (dicts), the launch in progress, and the counts found so far."""

    def __init__(self, meta):
        self.ind = set(meta["induction_pcs"])
        self.upd = set(meta["update_pcs"])
        self.alloc = {int(p) for p in meta.get("alloc_pcs", [])}
        self.sval = {int(p): int(v) for p, v in meta.get("store_values", {}).items()}
        self.red = {int(t) for t in meta["reduction_tokens"]}
        self.latch = {loop["latch_pc"]: loop["id"] for loop in meta["loops"] if loop["latch_pc"]}
        self.uni: dict = {}
        self.stats: dict = {}
        self.per_pc: dict = {}
        self.wtag: dict = {}
        self.wbyte: dict = {}
        self.rbyte: dict = {}
        self.launch, self.prev_host, self.last_tid, self.loop, self.lrec, self.lmax = 0, True, -1, -1, 0, -1

    def _loop_stats(self):
        return self.stats.setdefault(self.loop, {"launches": 0, "threads": 0, "records": 0, **{k: 0 for k in KINDS}})

    def end(self):
        """The launch in progress, counted for its loop."""
        if self.launch > 0:
            s = self._loop_stats()
            s["launches"] += 1
            s["records"] += self.lrec
            s["threads"] = max(s["threads"], self.lmax + 1)

    def note(self, kind, pc):
        self._loop_stats()[KINDS[kind]] += 1
        self.per_pc[(pc, KINDS[kind])] = self.per_pc.get((pc, KINDS[kind]), 0) + 1

    def row(self, pc, op, srcs, dst, addr, size, tid):
        """One record: a host record's register, or a thread's (a new launch first when it starts one)."""
        if tid < 0:
            self.prev_host = True
            if dst:
                self.wtag[dst] = None
                self.uni[dst] = True
            return
        if self.prev_host or tid < self.last_tid:
            self.end()
            self.launch += 1
            self.loop, self.lrec, self.lmax = -1, 0, -1
        self.prev_host = False
        self.last_tid = tid
        self.lmax = max(self.lmax, tid)
        if self.loop < 0 and pc in self.latch:
            self.loop = self.latch[pc]
        self.registers(pc, op, srcs, dst, tid)
        if pc in self.alloc and op in (LOAD, STORE, OTHER):  # an allocation record (other records have no bytes):
            # its bytes are fresh memory, before its own access
            for b in range(addr, addr + size):
                self.wbyte.pop(b, None)
                self.rbyte.pop(b, None)
        if op in (LOAD, STORE):
            self.memory(pc, op, addr, size, tid)
        self.lrec += 1

    def registers(self, pc, op, srcs, dst, tid):
        """Sources last written by another thread of the launch; the destination's writer and sameness."""
        for s in srcs:
            if s:
                w = self.wtag.get(s)
                if w is not None and w[0] == self.launch and w[1] != tid:
                    self.note(1 if s in self.red else 0, pc)
        same = op != LOAD and pc not in self.ind and all(self.uni.get(s, False) for s in srcs if s)
        if dst:
            self.wtag[dst] = None if pc in self.ind else (self.launch, tid)
            self.uni[dst] = same

    def memory(self, pc, op, addr, size, tid):
        """A LOAD or STORE, byte by byte, then the kinds it found counted."""
        found = {"raw": False, "war": False, "waw": False, "race": False}
        v = self.sval.get(pc, -1)
        mine_same = op == STORE and (v == 0 or (v > 0 and self.uni.get(v, False)))
        for b in range(addr, addr + size):
            if op == LOAD:
                self.load_byte(b, tid, found)
            else:
                self.store_byte(b, tid, mine_same, found)
        raw, war, waw, race = found["raw"], found["war"], found["waw"], found["race"]
        if raw or war or waw or race:
            if pc in self.upd:
                self.note(5, pc)
            else:
                for flag, kind in ((raw, 2), (war, 3), (waw, 4)):
                    if flag:
                        self.note(kind, pc)
                if race and not (raw or war or waw):
                    self.note(6, pc)

    def load_byte(self, b, tid, found):
        w = self.wbyte.get(b)
        rb = self.rbyte.get(b)
        if w is not None and w[0] == self.launch and w[1] != tid:
            found["race"] |= w[2]
            found["raw"] |= not w[2]
        if rb is None or rb[0] != self.launch:
            self.rbyte[b] = (self.launch, {tid})
        else:
            rb[1].add(tid)

    def store_byte(self, b, tid, mine_same, found):
        w = self.wbyte.get(b)
        rb = self.rbyte.get(b)
        if w is not None and w[0] == self.launch and w[1] != tid:
            found["race"] |= w[2] and mine_same
            found["waw"] |= not (w[2] and mine_same)
        if rb is not None and rb[0] == self.launch and bool(rb[1] - {tid}):
            found["race"] |= mine_same
            found["war"] |= not mine_same
        self.wbyte[b] = (self.launch, tid, mine_same)


def reference(rows, meta):
    """Per loop (id -> dict) and per (pc, kind) counts, straight from the definitions in the module docstring."""
    ref = _Reference(meta)
    for pc, op, srcs, dst, addr, size, tid in rows:
        ref.row(pc, op, srcs, dst, addr, size, tid)
    ref.end()
    return ref.stats, ref.per_pc


def chunk_of(rows):
    cols = {k: [] for k in ("pc", "op", "taken", "src1", "src2", "src3", "dst", "addr", "size", "tid")}
    for pc, op, srcs, dst, addr, size, tid in rows:
        cols["pc"].append(pc)
        cols["op"].append(op)
        cols["taken"].append(0)
        for k, s in zip(("src1", "src2", "src3"), srcs):
            cols[k].append(s)
        cols["dst"].append(dst)
        cols["addr"].append(addr if op in (LOAD, STORE, OTHER) else 0)  # OTHER: an allocation record's
        cols["size"].append(size if op in (LOAD, STORE, OTHER) else 0)
        cols["tid"].append(tid)
    return TraceChunk(pc=np.array(cols["pc"], np.int32), op=np.array(cols["op"], np.uint8),
                      taken=np.array(cols["taken"], np.uint8), src1=np.array(cols["src1"], np.int32),
                      src2=np.array(cols["src2"], np.int32), src3=np.array(cols["src3"], np.int32),
                      dst=np.array(cols["dst"], np.int32), addr=np.array(cols["addr"], np.int64),
                      size=np.array(cols["size"], np.int32), tid=np.array(cols["tid"], np.int64))


def run(rows, meta, cuts=(), budget=None):
    c = ThreadSpaceChecker()
    if budget is not None:
        c.budget = budget
    c.configure(meta)
    ch = chunk_of(rows)
    lo = 0
    for cut in sorted(set(cuts)) + [len(rows)]:
        if cut > lo:
            c.consume(
                ch.slice(lo, cut)
                if hasattr(ch, "slice")
                else TraceChunk(**{k: v[lo:cut] for k, v in ch.columns().items()})
            )
            lo = cut
    return c


def checker_tables(c):
    rep = c.report(None, examples=10 ** 6)
    stats = {}
    for loop in rep["loops"]:
        stats[loop["id"]] = {"launches": loop["launches"], "threads": loop["threads"], "records": loop["records"],
                             **loop["counts"]}
    per_pc = {}
    for p in range(c.counts.shape[0]):
        for k in range(len(KINDS)):
            if c.counts[p, k]:
                per_pc[(p, KINDS[k])] = int(c.counts[p, k])
    return stats, per_pc


META = {"induction_pcs": [3], "update_pcs": [6, 7], "reduction_tokens": {"5": "s (+)"},
        "store_values": {"4": 0, "7": 6, "8": 2, "10": 3, "12": 1},
        "loops": [{"id": 0, "latch_pc": 2}, {"id": 1, "latch_pc": 9}], "how": "marked"}


#: META with allocation records: pc 13 (OTHER, an np.empty), 14 (a STORE of a new result), 10 (a same-value STORE)
META_ALLOC = {**META, "alloc_pcs": [10, 13, 14]}


@st.composite
def traces(draw, allocs=False):
    """Launches of a few threads; records read and write a small pool of registers and bytes of a small or a
    page-spanning address range, so dependences of every kind occur, and launches of two kernel loops. With
    ``allocs``, also OTHER records with an address and a size (allocation records at the pcs of
    ``META_ALLOC["alloc_pcs"]``, ignored at other pcs), some spanning pages."""
    rows = []
    wide = draw(st.booleans())
    span = 300 * PAGE if wide else 96
    for _ in range(draw(st.integers(1, 4))):
        for _ in range(draw(st.integers(0, 3))):
            rows.append((1, ALU, (draw(st.integers(0, 6)), 0, 0), draw(st.integers(0, 6)), 0, 0, -1))
        latch = draw(st.sampled_from([2, 9, 10]))
        for t in range(draw(st.integers(1, 6))):
            for _ in range(draw(st.integers(1, 8))):
                pc = draw(st.integers(1, 14 if allocs else 12))
                op = draw(st.sampled_from([LOAD, STORE, ALU, ALU] + ([OTHER, OTHER] if allocs else [])))
                srcs = tuple(draw(st.integers(0, 6)) for _ in range(3))
                dst = draw(st.integers(0, 6)) if op != STORE else 0
                size = draw(st.sampled_from([1, 2, 4, 8] + ([24, PAGE + 40] if op == OTHER else [])))
                addr = draw(st.integers(0, span - 8))
                rows.append((pc, op, srcs, dst, addr, size, t))
            rows.append((latch, int(Op.BRANCH), (0, 0, 0), 0, 0, 0, t))
    cuts = draw(st.lists(st.integers(0, len(rows)), max_size=4))
    return rows, cuts


@given(traces())
@settings(max_examples=300, deadline=None)
def test_checker_matches_reference(case):
    rows, cuts = case
    c = run(rows, META, cuts)
    ref_stats, ref_pc = reference(rows, META)
    stats, per_pc = checker_tables(c)
    assert per_pc == ref_pc
    for k, s in ref_stats.items():
        assert stats[k] == s, k
    assert all(k in ref_stats or (not v["launches"] and not any(v[x] for x in KINDS)) for k, v in stats.items())


@given(traces())
@settings(max_examples=60, deadline=None)
def test_small_shadow_budget_keeps_registers_exact(case):
    """With room for 2 pages, memory is not checked past them in a launch; register dependences stay exact."""
    rows, cuts = case
    c = run(rows, META, cuts, budget=2 * 2 * 4 * PAGE)
    ref_stats, ref_pc = reference(rows, META)
    _, per_pc = checker_tables(c)
    for (pc, kind), n in ref_pc.items():
        if kind in ("carried_register", "reduction"):
            assert per_pc.get((pc, kind)) == n
        else:
            assert per_pc.get((pc, kind), 0) <= n


def test_a_carried_register_a_reduction_and_an_atomic_update():
    """Three threads of one launch: r4 flows from thread 0 to 1 (carried), token 5 is the reduction, pcs 6/7
    update the same 8 bytes (atomic), pc 8 writes what thread 0 read (write after read)."""
    rows = [
        (1, ALU, (0, 0, 0), 4, 0, 0, 0),
        (6, LOAD, (0, 0, 0), 0, 800, 8, 0),
        (7, STORE, (0, 0, 0), 0, 800, 8, 0),
        (4, LOAD, (0, 0, 0), 0, 900, 4, 0),
        (11, ALU, (5, 0, 0), 5, 0, 0, 0),
        (2, int(Op.BRANCH), (3, 0, 0), 0, 0, 0, 0),
        (3, ALU, (3, 0, 0), 3, 0, 0, 0),
        (12, ALU, (4, 3, 0), 0, 0, 0, 1),
        (6, LOAD, (0, 0, 0), 0, 800, 8, 1),
        (7, STORE, (0, 0, 0), 0, 800, 8, 1),
        (11, ALU, (5, 0, 0), 5, 0, 0, 1),
        (8, STORE, (0, 0, 0), 0, 902, 1, 1),
        (2, int(Op.BRANCH), (3, 0, 0), 0, 0, 0, 1),
        (1, ALU, (0, 0, 0), 0, 0, 0, -1),
    ]
    c = run(rows, META)
    res = c.result()
    assert res == {"ts_checked": 1.0, "ts_kernels": 1.0, "ts_carriedDeps": 2.0, "ts_reductionDeps": 1.0,
                   "ts_atomicDeps": 2.0, "ts_sameValueRaces": 0.0, "ts_parallelFraction": 0.0}
    loop = c.report(None)["loops"][0]
    assert loop["verdict"] == "sequential" and loop["launches"] == 1 and loop["threads"] == 2 and loop["records"] == 13
    assert loop["counts"] == {"carried_register": 1, "reduction": 1, "read_after_write": 0, "write_after_read": 1,
                              "write_after_write": 0, "atomic": 2, "same_value_race": 0}
    assert {(e["kind"], e["pc"], tuple(e["threads"])) for e in c.report(None, examples=10)["loops"][0]["examples"]} \
        == {("carried_register", 12, (1, 0)), ("reduction", 11, (1, 0)), ("atomic", 6, (1, 0)), ("atomic", 7, (1, 0)),
            ("write_after_read", 8, (1, 0))}


def test_threads_storing_the_same_value_race_benignly():
    """BFS style: a host value (register 3, written at tid -1) plus one is stored by two threads to the same
    element, and a third reads it: same-value races, not dependences. A stored loaded value is a dependence."""
    rows = [(1, ALU, (0, 0, 0), 3, 0, 0, -1)]
    rows += [(11, ALU, (3, 0, 0), 2, 0, 0, t) for t in range(1)]
    rows += [
        (8, STORE, (2, 0, 0), 0, 400, 4, 0),
        (8, STORE, (2, 0, 0), 0, 400, 4, 1),
        (5, LOAD, (0, 0, 0), 0, 400, 4, 2),
        (5, LOAD, (0, 0, 0), 1, 500, 4, 2),
        (12, STORE, (1, 0, 0), 0, 400, 4, 2),
    ]
    c = run(rows, META)
    assert c.report(None)["loops"][-1]["counts"]["same_value_race"] == 2
    assert c.result()["ts_sameValueRaces"] == 2.0
    assert c.result()["ts_carriedDeps"] == 2.0  # pc 12 stores a loaded value over what threads 0/1 wrote and read
    ref_stats, ref_pc = reference(rows, META)
    assert checker_tables(c)[1] == ref_pc


def test_launches_are_ordered_and_independent_threads_are_parallel():
    """A second launch reads what the first wrote: no dependence (launches run one after the other)."""
    rows = [(4, STORE, (0, 0, 0), 0, 64 * t, 8, t) for t in range(4)] + [(2, int(Op.BRANCH), (0, 0, 0), 0, 0, 0, 3)]
    rows += [(5, LOAD, (0, 0, 0), 0, 64 * (3 - t), 8, t) for t in range(4)]
    c = run(rows, META)
    rep = join_report({**META, "loops": [{"id": 0, "latch_pc": 2, "static": "independent", "location": "f.py:3",
                                          "header": "for i in range(4)"}, {"id": 1, "latch_pc": 9}]}, c.report(None))
    assert rep["loops"][0]["verdict"] == "parallel" and rep["loops"][0]["launches"] == 1
    assert rep["loops"][-1]["id"] == -1 and rep["loops"][-1]["launches"] == 1  # the second launch names no loop
    assert c.result()["ts_parallelFraction"] == 1.0 and c.result()["ts_carriedDeps"] == 0.0


def test_without_metadata_nothing_is_checked():
    rows = [(1, ALU, (0, 0, 0), 4, 0, 0, 0), (1, ALU, (4, 0, 0), 4, 0, 0, 1), (1, ALU, (0, 0, 0), 0, 0, 0, -1)]
    c = ThreadSpaceChecker()
    c.configure(None)
    c.consume(chunk_of(rows))
    assert c.result() == {"ts_checked": 0.0, "ts_kernels": 0.0, "ts_carriedDeps": 0.0, "ts_reductionDeps": 0.0,
                          "ts_atomicDeps": 0.0, "ts_sameValueRaces": 0.0, "ts_parallelFraction": pytest.approx(2 / 3)}
    assert c.report(None) == {"checked": False, "loops": []}


def test_private_stores_meet_no_thread_but_a_read_of_another_threads_copy_is_a_dependence():
    """pc 20 stores a constant to a buffer the source analysis privatised, pc 21 reads it. Threads 0 and 1
    write the buffer before they read it: their stores over each other's bytes are privatised, no write after
    write or after read. Thread 2 reads the buffer before writing it: it reads thread 1's copy, a read after
    write (not a same-value race: a private store's value is the thread's own)."""
    meta = {"induction_pcs": [3], "update_pcs": [], "private_pcs": [20], "reduction_tokens": {},
            "store_values": {"20": 0}, "loops": [{"id": 0, "latch_pc": 2}], "how": "inferred"}
    rows = [(1, ALU, (0, 0, 0), 0, 0, 0, -1)]
    for t in range(2):
        rows += [(2, int(Op.BRANCH), (3, 0, 0), 0, 0, 0, t), (20, STORE, (0, 0, 0), 0, 1000, 8, t),
                 (21, LOAD, (0, 0, 0), 4, 1000, 8, t)]
    rows += [(2, int(Op.BRANCH), (3, 0, 0), 0, 0, 0, 2), (21, LOAD, (0, 0, 0), 4, 1000, 8, 2),
             (20, STORE, (0, 0, 0), 0, 1000, 8, 2)]
    c = run(rows, meta)
    loop = c.report(None, examples=10)["loops"][0]
    assert loop["counts"] == {"carried_register": 0, "reduction": 0, "read_after_write": 1, "write_after_read": 0,
                              "write_after_write": 0, "atomic": 0, "same_value_race": 0}
    assert loop["privatised"] == 2 and loop["verdict"] == "sequential"
    assert [(e["kind"], e["pc"], e["threads"]) for e in loop["examples"]] == [("read_after_write", 21, [2, 1])]
    assert c.result()["ts_carriedDeps"] == 1.0
    # the same trace with nothing private: the constant stores and the read of one are same-value races
    without = run(rows, {**meta, "private_pcs": []}).report(None)["loops"][0]
    assert without["privatised"] == 0 and without["verdict"] == "parallel"
    assert without["counts"]["same_value_race"] == 3 and without["counts"]["read_after_write"] == 0
    # stores of a loaded value, nothing private: every write between threads counts
    loaded = run(rows, {**meta, "private_pcs": [], "store_values": {"20": 7}}).report(None)["loops"][0]
    assert [loaded["counts"][k] for k in ("read_after_write", "write_after_read", "write_after_write")] == [1, 2, 2]
    loaded = run(rows, {**meta, "store_values": {"20": 7}}).report(None)["loops"][0]
    assert [loaded["counts"][k] for k in ("read_after_write", "write_after_read", "write_after_write")] == [1, 0, 0]
    assert loaded["privatised"] == 2


@given(traces(allocs=True))
@settings(max_examples=300, deadline=None)
def test_checker_matches_reference_with_allocation_records(case):
    rows, cuts = case
    c = run(rows, META_ALLOC, cuts)
    ref_stats, ref_pc = reference(rows, META_ALLOC)
    stats, per_pc = checker_tables(c)
    assert per_pc == ref_pc
    for k, s in ref_stats.items():
        assert stats[k] == s, k
    assert all(k in ref_stats or (not v["launches"] and not any(v[x] for x in KINDS)) for k, v in stats.items())


def _private_buffer_rows(addr=1000, size=64):
    """Three threads of one launch, each allocating a buffer (pc 13, OTHER) that the allocator puts at the
    same address, writing it (pc 5) and reading it back (pc 1), then storing to its own element of a shared
    array (pc 11, bytes 4096 + 8 t)."""
    rows = []
    for t in range(3):
        rows += [(13, OTHER, (0, 0, 0), 4, addr, size, t),
                 (5, STORE, (4, 0, 0), 0, addr, 8, t),
                 (5, STORE, (4, 0, 0), 0, addr + size - 8, 8, t),
                 (1, LOAD, (4, 0, 0), 1, addr, 8, t),
                 (11, STORE, (1, 0, 0), 0, 4096 + 8 * t, 8, t),
                 (2, int(Op.BRANCH), (0, 0, 0), 0, 0, 0, t)]
    return rows + [(1, ALU, (0, 0, 0), 0, 0, 0, -1)]


def test_an_allocation_record_clears_the_shadow_of_its_bytes():
    rows = _private_buffer_rows()
    c = run(rows, META_ALLOC)
    loop = c.report(None)["loops"][0]
    assert loop["verdict"] == "parallel" and loop["launches"] == 1 and loop["threads"] == 3
    assert c.result()["ts_carriedDeps"] == 0.0 and c.result()["ts_parallelFraction"] == 18 / 19
    # without the allocation event (a version-2 trace, or metadata without alloc_pcs) the same trace is
    # sequential: threads 1 and 2 overwrite both words the thread before wrote and the one it read (the first
    # of each kind: thread 1 over thread 0)
    c = run(rows, META)
    loop = c.report(None, examples=10)["loops"][0]
    assert loop["verdict"] == "sequential"
    assert loop["counts"] == {"carried_register": 0, "reduction": 0, "read_after_write": 0, "write_after_read": 2,
                              "write_after_write": 4, "atomic": 0, "same_value_race": 0}
    assert {(e["kind"], e["pc"], tuple(e["threads"])) for e in loop["examples"]} == {
        ("write_after_write", 5, (1, 0)), ("write_after_read", 5, (1, 0))}
    assert c.result()["ts_carriedDeps"] == 6.0 and c.result()["ts_parallelFraction"] == 0.0
    assert checker_tables(c)[1] == reference(rows, META)[1]


def test_an_allocation_forgets_only_its_own_bytes_and_launch():
    """Thread 0 writes bytes 1000..1007 and 1064..1071; thread 1 allocates [1000, 1064) and reads 1000 (its
    own fresh memory: nothing) and 1064 (outside its allocation: a read after write). An allocation across a
    page boundary is forgotten in both pages, and no further."""
    rows = [(5, STORE, (0, 0, 0), 0, 1000, 8, 0), (5, STORE, (0, 0, 0), 0, 1064, 8, 0),
            (5, STORE, (0, 0, 0), 0, PAGE - 8, 16, 0), (2, int(Op.BRANCH), (0, 0, 0), 0, 0, 0, 0),
            (13, OTHER, (0, 0, 0), 4, 1000, 64, 1), (1, LOAD, (0, 0, 0), 1, 1000, 8, 1),
            (1, LOAD, (0, 0, 0), 1, 1064, 8, 1),
            (13, OTHER, (0, 0, 0), 4, PAGE - 4, 8, 1), (1, LOAD, (0, 0, 0), 1, PAGE - 8, 16, 1),
            (2, int(Op.BRANCH), (0, 0, 0), 0, 0, 0, 1)]
    c = run(rows, META_ALLOC)
    assert c.report(None)["loops"][0]["counts"]["read_after_write"] == 2  # 1064, and PAGE - 8 .. PAGE - 5
    assert checker_tables(c)[1] == reference(rows, META_ALLOC)[1] == {(1, "read_after_write"): 2}
    c = run(rows, META)
    assert c.report(None)["loops"][0]["counts"]["read_after_write"] == 3
    # a STORE at an allocation pc (a NumPy operation's new result) is the first write of fresh bytes
    rows = [(14, STORE, (0, 0, 0), 0, 500, 8, t) for t in range(4)] + [(2, int(Op.BRANCH), (0, 0, 0), 0, 0, 0, 3)]
    assert run(rows, META_ALLOC).result()["ts_carriedDeps"] == 0.0
    assert run(rows, META).result()["ts_carriedDeps"] == 3.0
