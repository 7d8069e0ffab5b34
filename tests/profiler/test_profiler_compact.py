"""The compact compiled-mode buffer: codes + addresses written by compiled code, thread changes on the side,
decoded into record columns at check points. Records must not depend on where the buffer is handed over."""

import numpy as np
import profiler_compact_kernels as CK
import profiler_test_kernels as K
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiler_testing import ChunkSizes

from core.trace_schema import COLUMN_NAMES, RECORD_COLUMNS, Op
from profiler import runtime as rt
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink, TraceChunk


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _trace(fn, args, mode, chunk_records=1 << 20):
    sink, sizes = MemorySink(), ChunkSizes()
    res = trace_function(fn, args, sinks=[sink, sizes], mode=mode, chunk_records=chunk_records)
    assert res.info.mode == mode
    chunk = sink.regions[0][2]
    chunk.validate()
    return res, chunk, sizes.sizes


def _relative(chunk, args):
    """Records with memory addresses made relative to the base of the array they fall into."""
    addr = chunk.addr.copy()
    for a in args:
        if isinstance(a, np.ndarray):
            base = _dev(a)
            span = a.itemsize + sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides)) if a.size else 1
            inside = (chunk.size > 0) & (chunk.addr >= base) & (chunk.addr < base + span)
            addr[inside] -= base
    return {name: (addr if name == "addr" else getattr(chunk, name)) for name in COLUMN_NAMES}


CASES = {
    "saxpy": (K.saxpy, lambda: (2.0, np.arange(9.0), np.ones(9))),
    "stencil": (K.stencil, lambda: (np.arange(20.0).reshape(4, 5), np.zeros((4, 5)))),
    "branchy": (K.branchy, lambda: (np.array([1.0, -2.0, -0.5, 3.0, 0.0]), np.zeros(5, np.int32))),
    "chase": (K.chase, lambda: (np.array([3, 0, 1, 2]), 0, 9)),
    "call_helper": (K.call_helper, lambda: (np.arange(6.0), np.zeros(6))),
    "loops": (K.loops, lambda: (4,)),
    "strided": (K.strided, lambda: (np.arange(12.0).reshape(4, 3)[::2], np.zeros(2))),
    **{name: (getattr(CK, name), (lambda name=name: CK.kernel_inputs()[name])) for name in CK.kernel_inputs()},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_records_do_not_depend_on_chunk_size_and_match_interpreted(name):
    fn, make = CASES[name]
    args_i = make()
    res_i, ci, _ = _trace(fn, args_i, "interpreted")
    want = _relative(ci, args_i)
    for chunk_records in (1, 2, 3, 7, 64, 1 << 20):
        args_c = make()
        res_c, cc, sizes = _trace(fn, args_c, "compiled", chunk_records)
        assert max(sizes, default=0) <= chunk_records and sum(sizes) == len(ci) == res_c.info.n_records
        got = _relative(cc, args_c)
        for col in COLUMN_NAMES:
            assert np.array_equal(got[col], want[col]), (name, chunk_records, col)
        assert res_c.info.n_threads == res_i.info.n_threads
        for a, b in zip(args_i, args_c):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b)


def test_thread_changes_without_records_in_between():
    # loops 1 and 3 run 5 empty iterations each; loop 2 runs none: tids 0..4, -1, 0..4, -1
    res, chunk, _ = _trace(CK.empty_parallel_loops, (5, np.zeros(2)), "compiled", chunk_records=3)
    kinds = chunk.op.tolist()
    assert len(chunk) == 20  # per loop: 4 latches taken + 1 not taken, 2 records each
    assert chunk.tid.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4] * 2
    assert kinds[1::2] == [Op.BRANCH] * 10
    assert chunk.taken.tolist()[1::2] == [1, 1, 1, 1, 0] * 2


@pytest.mark.parametrize("chunk_records", [1, 4, 1 << 20])
def test_exception_keeps_a_prefix_of_the_trace(chunk_records):
    x = np.zeros(5, np.int64)
    sink = MemorySink()
    with pytest.raises(ZeroDivisionError):
        trace_function(K.raises_midway, (x,), sinks=[sink], mode="compiled", chunk_records=chunk_records)
    info, _, chunk = sink.regions[0]
    assert not info.complete and info.n_records == len(chunk)
    # iterations 0 and 1 completed (5 records each, the first without latch): a prefix of the full pattern
    ref = MemorySink()
    with pytest.raises(ZeroDivisionError):
        trace_function(K.raises_midway, (np.zeros(5, np.int64),), sinks=[ref], mode="interpreted")
    full = ref.regions[0][2]
    assert 0 < len(chunk) <= len(full)
    assert np.array_equal(chunk.pc, full.pc[:len(chunk)]) and np.array_equal(chunk.tid, full.tid[:len(chunk)])


def _reference_decode(codes, addrs, trow, tval, tid):
    """Slow, obvious decoder: one record per code, thread from the last change at or before its row."""
    out = []
    for j, c in enumerate(codes):
        for r, v in zip(trow, tval):
            if r <= j:
                tid = v
        pc = (c >> rt.PC_SHIFT) & rt.PC_MASK
        has = bool(c & rt.HAS_ADDR)
        op, taken = (c >> 1) & 15, c & 1
        if taken and op in (Op.FP_ALU, Op.FP_MUL, Op.FP_DIV, Op.FP_SPECIAL):  # a double-precision record
            op, taken = op + 12, 0
        out.append((pc, op, taken, 10 * pc + 1, 10 * pc + 2, 10 * pc + 3, 10 * pc + 4,
                    addrs[j] if has else 0, c >> rt.SIZE_SHIFT, tid))
    for r, v in zip(trow, tval):
        if r <= len(codes):
            tid = v
    return out, tid


record = st.tuples(
    st.integers(1, 40),
    st.integers(0, 15),
    st.integers(0, 1),
    st.booleans(),
    st.sampled_from([1, 2, 4, 8, 16]),
    st.integers(0, 2**47),
)


@settings(max_examples=200, deadline=None)
@given(
    recs=st.lists(record, max_size=40),
    changes=st.lists(st.tuples(st.integers(0, 45), st.integers(-1, 10**12)), max_size=8),
    tid0=st.integers(-1, 5),
)
def test_expand_codes_matches_reference(recs, changes, tid0):
    codes = np.array(
        [
            (size << rt.SIZE_SHIFT if has else 0) | pc << rt.PC_SHIFT | (rt.HAS_ADDR if has else 0) | op << 1 | tk
            for pc, op, tk, has, size, _ in recs
        ],
        dtype=np.int64,
    )
    addrs = np.array([a for *_, a in recs], dtype=np.int64)
    changes = sorted(changes, key=lambda t: t[0])
    trow = np.array([r for r, _ in changes], dtype=np.int64)
    tval = np.array([v for _, v in changes], dtype=np.int64)
    regs = np.array([[10 * p + 1, 10 * p + 2, 10 * p + 3, 10 * p + 4] for p in range(41)], dtype=np.int32)
    n = len(recs)
    out = tuple(np.full(n + 3, 77, dtype) for _, dtype in RECORD_COLUMNS)
    tid_after, top = rt.expand_codes(codes, addrs, n, trow, tval, len(changes), regs, tid0, *out)
    want, want_tid = _reference_decode(codes.tolist(), addrs.tolist(), trow.tolist(), tval.tolist(), tid0)
    got = list(zip(*[o[:n].tolist() for o in out]))
    assert got == want
    assert tid_after == want_tid
    assert top == max((r[-1] for r in want), default=-1)
    assert all(o[n:].tolist() == [77] * 3 for o in out)  # nothing written past n


def test_interpreted_two_index_fast_path_and_its_fallbacks():
    a = np.arange(12.0).reshape(3, 4)
    c = np.zeros((2, 3, 5))
    d = {(1, 2): 7.0}
    ii = np.array([2, 0])
    res, chunk, _ = _trace(CK.two_index_forms, (a, c, d, ii), "interpreted")
    assert res.value == 9.0 + 10.0 + 1.0 + 10.0 + 7.0 + 0.0
    mem = chunk.op == Op.LOAD
    base = _dev(a)
    in_a = mem & (chunk.addr >= base) & (chunk.addr < base + a.nbytes)
    # per iteration: a[ii[k], 1] then a[-1, -2] = a[2, 2]
    assert (chunk.addr[in_a] - base).tolist() == [(2 * 4 + 1) * 8, (2 * 4 + 2) * 8, (0 * 4 + 1) * 8, (2 * 4 + 2) * 8]
    assert set(chunk.size[in_a].tolist()) == {8}
    # c[k, 1] is a view: one OTHER record per iteration, no address
    views = [
        i for i, p in enumerate(chunk.pc.tolist()) if res.static[p].kind == "load" and "c[k, 1]" in res.static[p].text
    ]
    assert len(views) == 2 and all(chunk.op[i] == Op.OTHER and chunk.addr[i] == 0 for i in views)
    # the dict element has a synthetic address, 8 bytes
    dict_loads = [
        i for i, p in enumerate(chunk.pc.tolist()) if res.static[p].kind == "load" and res.static[p].text == "d[1, 2]"
    ]
    assert len(dict_loads) == 1 and chunk.op[dict_loads[0]] == Op.LOAD and chunk.size[dict_loads[0]] == 8
    assert chunk.addr[dict_loads[0]] >= rt.SYNTHETIC_BASE


def test_trusted_chunk_equals_checked_chunk():
    cols = {name: np.arange(5).astype(dtype) for name, dtype in RECORD_COLUMNS}
    a = TraceChunk.trusted(*cols.values())
    b = TraceChunk(**cols)
    assert len(a) == 5 and a.records() == b.records()
    assert all(getattr(a, n) is cols[n] for n in COLUMN_NAMES)  # no copies


class _Partial:
    """Reads only the columns named, and remembers which columns each chunk had decoded afterwards."""

    def __init__(self, names):
        self.names, self.got, self.decoded, self.kept = names, {n: [] for n in names}, [], []

    def start_region(self, info, static):
        pass

    def consume(self, chunk):
        for n in self.names:
            self.got[n].append(getattr(chunk, n).copy())
        self.decoded.append(sorted(k for k in COLUMN_NAMES if k in vars(chunk)))
        self.kept.append(chunk)

    def end_region(self, info, static):
        pass


def test_coded_chunks_decode_only_the_columns_a_sink_reads():
    args = (2.0, np.arange(300.0), np.ones(300))
    full = MemorySink()
    op_only, regs_only = _Partial(["op"]), _Partial(["dst"])
    res = trace_function(K.saxpy, _copy(args), sinks=[op_only, full], mode="compiled", chunk_records=64)
    assert res.info.mode == "compiled"
    trace_function(K.saxpy, _copy(args), sinks=[regs_only], mode="compiled", chunk_records=64)
    chunk = full.regions[0][2]
    assert len(op_only.kept) > 5  # several hand-overs
    # the op-only sink ran first: the code-word group (pc, op, taken, addr, size) only, no registers, no tid
    assert all(d == ["addr", "op", "pc", "size", "taken"] for d in op_only.decoded)
    assert all(d == ["dst", "src1", "src2", "src3"] for d in regs_only.decoded)
    assert np.concatenate(op_only.got["op"]).tolist() == chunk.op.tolist()
    assert np.concatenate(regs_only.got["dst"]).tolist() == chunk.dst.tolist()
    assert all(isinstance(c, rt.CodedChunk) for c in op_only.kept)


def test_coded_chunk_read_after_consume_is_an_error_not_other_records():
    sink = _Partial(["op"])
    trace_function(K.saxpy, (2.0, np.arange(300.0), np.ones(300)), sinks=[sink], mode="compiled", chunk_records=64)
    first = sink.kept[0]
    assert len(first) == len(sink.got["op"][0]) > 0
    with pytest.raises(rt.TraceError, match=r"trace column 'tid' read after the tracer reused its buffer"):
        first.tid
    with pytest.raises(AttributeError):
        first.no_such_column


def test_coded_chunk_read_from_several_threads_decodes_each_group_once(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    calls = {"fields": 0, "regs": 0, "tids": 0}
    for key, name in (("fields", "decode_fields"), ("regs", "decode_regs"), ("tids", "walk_tids")):
        real = getattr(rt, name)

        def counted(*a, _real=real, _key=key):
            if _key != "tids" or len(a[-1]):  # walk_tids with an empty output only walks (at hand-over)
                calls[_key] += 1
            return _real(*a)

        monkeypatch.setattr(rt, name, counted)

    class Threaded:
        def __init__(self):
            self.cols, self.n = {n: [] for n in COLUMN_NAMES}, 0

        def start_region(self, info, static):
            pass

        def consume(self, chunk):
            self.n += 1
            with ThreadPoolExecutor(4) as pool:
                got = list(pool.map(lambda name: (name, getattr(chunk, name).copy()), list(COLUMN_NAMES) * 2))
            for name, col in got[: len(COLUMN_NAMES)]:
                self.cols[name].append(col)

        def end_region(self, info, static):
            pass

    args = (2.0, np.arange(500.0), np.ones(500))  # the same arrays both times: the same addresses
    full, sink = MemorySink(), Threaded()
    trace_function(K.saxpy, args, sinks=[full], mode="compiled", chunk_records=128)
    calls.update(fields=0, regs=0, tids=0)
    trace_function(K.saxpy, args, sinks=[sink], mode="compiled", chunk_records=128)
    assert sink.n > 5
    assert calls == {"fields": sink.n, "regs": sink.n, "tids": sink.n}
    want = full.regions[0][2]
    for name in COLUMN_NAMES:
        assert np.concatenate(sink.cols[name]).tolist() == getattr(want, name).tolist()


def test_fp64_records_are_coded_as_fp_with_the_taken_bit():
    # code_of puts FP64_X into the 4-bit op field as FP_X with the taken bit; both decoders give FP64_X back
    assert rt.code_of(5, Op.FP64_MUL) == rt.code_of(5, Op.FP_MUL) | 1 == (5 << 6) | (5 << 1) | 1
    assert rt.code_of(5, Op.BRANCH, 1) == (5 << 6) | (10 << 1) | 1
    assert rt.fp64_code(rt.code_of(5, Op.FP_DIV)) == rt.code_of(5, Op.FP64_DIV)
    assert rt.fp64_code(rt.code_of(5, Op.INT_DIV)) == rt.code_of(5, Op.INT_DIV)  # not floating point: unchanged
    ops = [Op.FP_ALU, Op.FP64_ALU, Op.FP64_MUL, Op.FP64_DIV, Op.FP64_SPECIAL, Op.BRANCH, Op.FP_SPECIAL]
    taken = [0, 0, 0, 0, 0, 1, 0]
    codes = np.array([rt.code_of(p + 1, o, t) for p, (o, t) in enumerate(zip(ops, taken))], np.int64)
    regs = np.zeros((8, 4), np.int32)
    out = tuple(np.zeros(len(ops), dtype) for _, dtype in RECORD_COLUMNS)
    rt.expand_codes(codes, codes, len(ops), codes[:0], codes[:0], 0, regs, -1, *out)
    assert out[1].tolist() == [4, 16, 17, 18, 19, 10, 7] and out[2].tolist() == taken
    out2 = tuple(np.zeros(len(ops), dtype) for _, dtype in RECORD_COLUMNS)
    m, _ = rt.decode_interpreted(codes, codes, regs, -1, *out2)
    assert m == len(ops) and out2[1].tolist() == out[1].tolist() and out2[2].tolist() == taken
