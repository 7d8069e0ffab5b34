"""Exact trace records of small kernels, in both execution modes.

Each expected record is (kind, op, taken, src1, src2, src3, dst, addr, size, tid), ``kind`` being the static
table's description of the record's pc. Registers were checked by hand against the kernels' source in
profiler_test_kernels.py: parameters get the first registers in signature order, then the function's
return register, then variables and expression sites in the order the rewriter meets them.
"""

import numpy as np
import profiler_test_kernels as K
import pytest

from core.trace_schema import Op
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink

MODES = ["interpreted", "compiled"]
L, S, B, J = Op.LOAD, Op.STORE, Op.BRANCH, Op.JUMP


def trace(fn, args, mode, **kw):
    sink = MemorySink()
    res = trace_function(fn, args, sinks=[sink], mode=mode, **kw)
    assert res.info.mode == mode
    info, static, chunk = sink.regions[0]
    chunk.validate()
    rows = [(static[r[0]].kind, Op(r[1]), *r[2:]) for r in chunk.records()]
    return res, rows, static


@pytest.mark.parametrize("mode", MODES)
def test_saxpy_records(mode):
    x = np.array([1.0, 2.0])
    y = np.array([10.0, 20.0])
    px, py = _dev(x), _dev(y)
    res, rows, static = trace(K.saxpy, (3.0, x, y), mode)
    # registers: a=1 x=2 y=3 (ret 4), i=7; x[i] -> 8, a*x[i] -> 9, y[i] -> 10, sum -> 11
    body = lambda i: [  # noqa: E731
        ("load", L, 0, 7, 2, 0, 8, px + 8 * i, 8, i),
        ("binop:*", Op.FP64_MUL, 0, 1, 8, 0, 9, 0, 0, i),
        ("load", L, 0, 7, 3, 0, 10, py + 8 * i, 8, i),
        ("binop:+", Op.FP64_ALU, 0, 9, 10, 0, 11, 0, 0, i),
        ("store", S, 0, 11, 7, 3, 0, py + 8 * i, 8, i),
    ]
    latch = lambda i, taken: [  # noqa: E731
        ("loop:next", Op.INT_ALU, 0, 7, 0, 0, 7, 0, 0, i),
        ("branch:loop", B, taken, 7, 0, 0, 0, 0, 0, i),
    ]
    assert rows == body(0) + latch(0, 1) + body(1) + latch(1, 0)
    assert y.tolist() == [13.0, 26.0]
    assert res.info.n_records == 14 and res.info.n_threads == 2 and res.info.complete
    assert static[rows and 4].line == K.saxpy.__code__.co_firstlineno + 2


@pytest.mark.parametrize("mode", MODES)
def test_float32_saxpy_records_single_precision(mode):
    # float32 data and a float32 scalar: both modes compute in float32, so FP_MUL / FP_ALU
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([10.0, 20.0], np.float32)
    _, rows, _ = trace(K.saxpy, (np.float32(3.0), x, y), mode)
    assert [op for _, op, *_ in rows if op not in (L, S, B, Op.INT_ALU)] == [Op.FP_MUL, Op.FP_ALU] * 2
    assert y.tolist() == [13.0, 26.0]


def test_a_python_float_with_float32_data_follows_each_mode():
    # a Python float scalar: NumPy (interpreted) computes np.float32 * float in float32 (NEP 50), Numba
    # (compiled) types the scalar float64 and computes a * x[i] and the sum in double; each mode records what
    # it computes
    fp = lambda rows: [op for _, op, *_ in rows if op not in (L, S, B, Op.INT_ALU)]  # noqa: E731
    x = np.array([1.0, 2.0], np.float32)
    _, rows, _ = trace(K.saxpy, (3.0, x, np.zeros(2, np.float32)), "interpreted")
    assert fp(rows) == [Op.FP_MUL, Op.FP_ALU] * 2
    _, rows, _ = trace(K.saxpy, (3.0, x, np.zeros(2, np.float32)), "compiled")
    assert fp(rows) == [Op.FP64_MUL, Op.FP64_ALU] * 2


@pytest.mark.parametrize("mode", MODES)
def test_stencil_2d_records_addresses_and_threads(mode):
    a = np.arange(12.0).reshape(3, 4)
    b = np.zeros((3, 4))
    pa, pb = _dev(a), _dev(b)
    res, rows, _ = trace(K.stencil, (a, b), mode)
    # a=1 b=2, i=7, j=11; a.shape[0]-1 -> 6, a.shape[1]-1 -> 10, i-1 -> 12, a[i-1,j] -> 13, j+1 -> 14,
    # a[i,j+1] -> 15, sum -> 16. The prange loop and the j loop perfectly nested in it (no dependence
    # between its iterations) form one 2-D thread space: (i, j) = (1, 1) is thread 0, (1, 2) thread 1; the
    # i loop's own record in an iteration goes to the row's first thread, a latch to the thread that ends.
    inner = lambda j: [  # noqa: E731
        ("binop:-", Op.INT_ALU, 0, 7, 0, 0, 12, 0, 0, j - 1),
        ("load", L, 0, 12, 11, 1, 13, pa + 0 * 32 + 8 * j, 8, j - 1),
        ("binop:+", Op.INT_ALU, 0, 11, 0, 0, 14, 0, 0, j - 1),
        ("load", L, 0, 7, 14, 1, 15, pa + 1 * 32 + 8 * (j + 1), 8, j - 1),
        ("binop:+", Op.FP64_ALU, 0, 13, 15, 0, 16, 0, 0, j - 1),
        ("store", S, 0, 16, 7, 11, 0, pb + 32 + 8 * j, 8, j - 1),
    ]
    assert rows == (
        [("binop:-", Op.INT_ALU, 0, 5, 0, 0, 6, 0, 0, -1), ("binop:-", Op.INT_ALU, 0, 9, 0, 0, 10, 0, 0, 0)]
        + inner(1) + [("loop:next", Op.INT_ALU, 0, 11, 0, 0, 11, 0, 0, 0), ("branch:loop", B, 1, 11, 0, 0, 0, 0, 0, 0)]
        + inner(2) + [("loop:next", Op.INT_ALU, 0, 11, 0, 0, 11, 0, 0, 1), ("branch:loop", B, 0, 11, 0, 0, 0, 0, 0, 1)]
        + [("loop:next", Op.INT_ALU, 0, 7, 0, 0, 7, 0, 0, 1), ("branch:loop", B, 0, 7, 0, 0, 0, 0, 0, 1)]
    )
    assert res.info.n_threads == 2
    ts = res.info.extra["thread_space"]
    assert ts["how"] == "marked" and [loop["dims"] for loop in ts["loops"]] == [2]
    assert b[1].tolist() == [0.0, 1.0 + 6.0, 2.0 + 7.0, 0.0]
    assert res.info.parallel_loop.endswith(f"profiler_test_kernels.py:{K.stencil.__code__.co_firstlineno + 1}")


@pytest.mark.parametrize("mode", MODES)
def test_branchy_loop_outcomes_and_jumps(mode):
    x = np.array([1.0, -2.0, -0.5])
    out = np.zeros(3, np.int32)
    px, po = _dev(x), _dev(out)
    res, rows, _ = trace(K.branchy, (x, out), mode)
    # x=1 out=2 (ret 3), n=4, i=7, x[i] -> 9, cmp -> 8, second x[i] -> 11, cmp2 -> 10
    latch = lambda i, t: [("loop:next", Op.INT_ALU, 0, 7, 0, 0, 7, 0, 0, i), ("branch:loop", B, t, 7, 0, 0, 0, 0, 0, i)]  # noqa: E731
    first = lambda i, t: [  # noqa: E731
        ("load", L, 0, 7, 1, 0, 9, px + 8 * i, 8, i),
        ("cmp:>", Op.FP64_ALU, 0, 9, 0, 0, 8, 0, 0, i),
        ("branch:if", B, t, 8, 0, 0, 0, 0, 0, i),
    ]
    second = lambda i, t: [  # noqa: E731
        ("load", L, 0, 7, 1, 0, 11, px + 8 * i, 8, i),
        ("cmp:<", Op.FP64_ALU, 0, 11, 0, 0, 10, 0, 0, i),
        ("branch:if", B, t, 10, 0, 0, 0, 0, 0, i),
    ]
    assert rows == (
        [("move", Op.MOVE, 0, 0, 0, 0, 4, 0, 0, -1)]
        + first(0, 1)
        + [("store", S, 0, 7, 2, 0, 0, po, 4, 0), ("jump:else", J, 0, 0, 0, 0, 0, 0, 0, 0)]
        + latch(0, 1)
        + first(1, 0)
        + second(1, 1)
        + [("store", S, 0, 7, 2, 0, 0, po + 4, 4, 1), ("jump:else", J, 0, 0, 0, 0, 0, 0, 0, 1)]
        + latch(1, 1)
        + first(2, 0)
        + second(2, 0)
        + [("binop:+=", Op.INT_ALU, 0, 4, 0, 0, 4, 0, 0, 2)]
        + latch(2, 0)
    )
    assert res.value == 1 and out.tolist() == [1, 2, 0]


@pytest.mark.parametrize("mode", MODES)
def test_pointer_chasing_dependences(mode):
    nxt = np.array([2, 0, 1], dtype=np.int64)
    p = _dev(nxt)
    res, rows, _ = trace(K.chase, (nxt, 0, 3), mode)
    # nxt=1 start=2 steps=3 (ret 4), k=5, s=6: each load's index is the previous load's destination. The
    # loop carries k from one iteration to the next, so it is no thread space: every tid is -1.
    latch = lambda t: [("loop:next", Op.INT_ALU, 0, 6, 0, 0, 6, 0, 0, -1), ("branch:loop", B, t, 6, 0, 0, 0, 0, 0, -1)]  # noqa: E731
    assert rows == (
        [("move", Op.MOVE, 0, 2, 0, 0, 5, 0, 0, -1)]
        + [("load", L, 0, 5, 1, 0, 5, p + 0, 8, -1)] + latch(1)
        + [("load", L, 0, 5, 1, 0, 5, p + 16, 8, -1)] + latch(1)
        + [("load", L, 0, 5, 1, 0, 5, p + 8, 8, -1)] + latch(0)
    )
    assert res.value == 0
    ts = res.info.extra["thread_space"]
    assert ts["how"] == "none" and ts["loops"] == [] and res.info.n_threads == 0
    assert len(ts["rejected"]) == 1 and "`k` is read before it is assigned" in ts["rejected"][0]["why"][0]


@pytest.mark.parametrize("mode", MODES)
def test_reduction_carries_accumulator(mode):
    x = np.array([1.0, 2.0])
    p = _dev(x)
    res, rows, _ = trace(K.reduce_sum, (x,), mode)
    # x=1 (ret 2), total=3, i=6, x[i] -> 7
    assert rows == [
        ("move", Op.MOVE, 0, 0, 0, 0, 3, 0, 0, -1),
        ("load", L, 0, 6, 1, 0, 7, p, 8, 0), ("binop:+=", Op.FP64_ALU, 0, 3, 7, 0, 3, 0, 0, 0),
        ("loop:next", Op.INT_ALU, 0, 6, 0, 0, 6, 0, 0, 0), ("branch:loop", B, 1, 6, 0, 0, 0, 0, 0, 0),
        ("load", L, 0, 6, 1, 0, 7, p + 8, 8, 1), ("binop:+=", Op.FP64_ALU, 0, 3, 7, 0, 3, 0, 0, 1),
        ("loop:next", Op.INT_ALU, 0, 6, 0, 0, 6, 0, 0, 1), ("branch:loop", B, 0, 6, 0, 0, 0, 0, 0, 1),
    ]
    assert res.value == 3.0


@pytest.mark.parametrize("mode", MODES)
def test_call_into_njit_helper(mode):
    x = np.array([3.0])
    out = np.zeros(1)
    res, rows, static = trace(K.call_helper, (x, out), mode)
    # caller x=1 out=2 (ret 3), i=6, x[i] -> 10; callee sq: v=7 (ret 8), v*v -> 9
    assert rows == [
        ("load", L, 0, 6, 1, 0, 10, _dev(x), 8, 0),
        ("arg:v", Op.MOVE, 0, 10, 0, 0, 7, 0, 0, 0),
        ("call", Op.CALL, 0, 0, 0, 0, 0, 0, 0, 0),
        ("binop:*", Op.FP64_MUL, 0, 7, 7, 0, 9, 0, 0, 0),
        ("ret", Op.RET, 0, 9, 0, 0, 8, 0, 0, 0),
        ("store", S, 0, 8, 6, 2, 0, _dev(out), 8, 0),
        ("loop:next", Op.INT_ALU, 0, 6, 0, 0, 6, 0, 0, 0),
        ("branch:loop", B, 0, 6, 0, 0, 0, 0, 0, 0),
    ]
    assert out.tolist() == [9.0]
    assert {e.function for e in static} == {"call_helper", "sq"}


@pytest.mark.parametrize("mode", MODES)
def test_short_circuit_chains_and_conditional_expression(mode):
    res, rows, _ = trace(K.shortcircuit, (1, 2, 3), mode)
    # a=1 b=2 c=3 (ret 4), r=5, chain site 6, s=7, t=8
    assert rows == [
        ("cmp:<", Op.INT_ALU, 0, 1, 2, 0, 6, 0, 0, -1),
        ("branch:chain", B, 1, 6, 0, 0, 0, 0, 0, -1),
        ("cmp:<", Op.INT_ALU, 0, 2, 3, 0, 6, 0, 0, -1),
        ("move", Op.MOVE, 0, 6, 0, 0, 5, 0, 0, -1),
        ("move", Op.MOVE, 0, 1, 0, 0, 7, 0, 0, -1),
        ("branch:or", B, 1, 7, 0, 0, 0, 0, 0, -1),
        ("branch:ifexp", B, 1, 2, 0, 0, 0, 0, 0, -1),
        ("move", Op.MOVE, 0, 1, 0, 0, 8, 0, 0, -1),
    ]
    assert res.value == (True, 1, 1)
    _, rows, _ = trace(K.shortcircuit, (2, 1, 3), mode)
    assert [(k, t) for k, op, t, *_ in rows if op == B] == [("branch:chain", 0), ("branch:or", 1), ("branch:ifexp", 1)]


@pytest.mark.parametrize("mode", MODES)
def test_special_functions_and_int_vs_float(mode):
    # a Python float argument: every operation computes in double
    res, rows, _ = trace(K.special, (4.0,), mode)
    assert [(k, op) for k, op, *_ in rows] == [
        ("call:special", Op.FP64_SPECIAL), ("call:special", Op.FP64_SPECIAL), ("binop:+", Op.FP64_ALU),
        ("unary:-", Op.FP64_ALU), ("call:abs", Op.FP64_ALU), ("binop:+", Op.FP64_ALU),
    ]
    assert res.value == pytest.approx(2.0 + np.exp(4.0) + 4.0)


def test_while_continue_break_and_for_else():
    res, rows, _ = trace(K.loops, (3,), "interpreted")
    assert res.value == 4
    kinds = [(k, op, t) for k, op, t, *_ in rows]
    assert kinds.count(("branch:while", B, 1)) == 3 and kinds.count(("branch:while", B, 0)) == 1
    assert ("jump:continue", J, 0) in kinds and ("jump:break", J, 0) in kinds
    # the for loop breaks in its second iteration: one taken back edge, no not-taken one, else not run
    assert kinds.count(("branch:loop", B, 1)) == 1 and ("branch:loop", B, 0) not in kinds
    res2, _, _ = trace(K.loops, (3,), "compiled")
    assert res2.value == 4


@pytest.mark.parametrize("mode", MODES)
def test_negative_index_on_strided_fortran_view(mode):
    base = np.asfortranarray(np.arange(24.0).reshape(4, 6))
    v = base[::2, 1::2]  # shape (2, 3), strides (16, 64), F-order parent
    out = np.zeros(2)
    res, rows, _ = trace(K.strided, (v, out), mode)
    loads = [r for r in rows if r[1] == L]
    expect = [_dev(v) + i * v.strides[0] + 2 * v.strides[1] for i in range(2)]
    assert [r[7] for r in loads] == expect
    assert out.tolist() == [v[0, -1], v[1, -1]]


def test_float32_and_int16_sizes():
    x = np.array([1.5, 2.5], dtype=np.float32)
    y = np.zeros(2, dtype=np.float32)
    _, rows, _ = trace(K.saxpy, (np.float32(2.0), x, y), "interpreted")
    assert {r[8] for r in rows if r[1] in (L, S)} == {4}
    assert [r[7] for r in rows if r[1] == S] == [_dev(y), _dev(y) + 4]
    _, rows_c, _ = trace(K.saxpy, (np.float32(2.0), x, np.zeros(2, np.float32)), "compiled")
    assert [r[:7] + r[8:] for r in rows_c] == [r[:7] + r[8:] for r in rows]


def test_lists_and_dicts_get_consistent_synthetic_addresses():
    res, rows, _ = trace(K.with_lists, ([1, 2, 3], {"k": 10}), "interpreted")
    assert res.value == 36
    loads = [r for r in rows if r[1] == L]
    list_addrs = [r[7] for r in loads if r[0] == "load" and r[3] != 0 and r[7] % 8 == 0][::2]
    assert list_addrs[1] - list_addrs[0] == 8 and list_addrs[2] - list_addrs[1] == 8
    dict_addrs = {r[7] for r in loads[1::2]}
    assert len(dict_addrs) == 1 and all(r[8] == 8 for r in loads)


def test_auto_mode_falls_back_to_interpreted_with_notice(capsys):
    res = trace_function(K.with_lists, ([1, 2], {"k": 1}), mode="auto")
    assert res.info.mode == "interpreted" and res.value == 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interpreted mode" in err


def test_auto_mode_compiles_numba_compatible_region():
    res = trace_function(K.saxpy, (2.0, np.ones(3), np.ones(3)), mode="auto")
    assert res.info.mode == "compiled" and res.info.n_records == 21


@pytest.mark.parametrize("mode", MODES)
def test_chunks_are_bounded_and_concatenate_to_the_same_trace(mode):
    class Chunks:
        def __init__(self):
            self.sizes, self.ends = [], []

        def start_region(self, info, static):
            pass

        def consume(self, chunk):
            self.sizes.append(len(chunk))

        def end_region(self, info, static):
            self.ends.append(info.n_records)

    c, m = Chunks(), MemorySink()
    x, y = np.arange(50.0), np.ones(50)
    trace_function(K.saxpy, (2.0, x, y), sinks=[c, m], mode=mode, chunk_records=16)
    assert max(c.sizes) <= 16 and sum(c.sizes) == 350 == c.ends[0]
    ref = MemorySink()
    trace_function(K.saxpy, (2.0, x, np.ones(50)), sinks=[ref], mode=mode)
    got, want = m.regions[0][2], ref.regions[0][2]
    assert np.array_equal(got.pc, want.pc) and np.array_equal(got.tid, want.tid) and np.array_equal(got.op, want.op)


def test_modes_agree_on_every_record():
    x = np.array([1.0, -2.0, -0.5, 3.0, 0.0])
    out_i, out_c = np.zeros(5, np.int32), np.zeros(5, np.int32)
    _, ri, _ = trace(K.branchy, (x, out_i), "interpreted")
    _, rc, _ = trace(K.branchy, (x, out_c), "compiled")
    def strip(rows, base_o):
        return [r[:7] + ((r[7] - base_o) if r[7] >= base_o and r[7] < base_o + 64 else r[7],) + r[8:] for r in rows]

    assert strip(ri, _dev(out_i)) == strip(rc, _dev(out_c))
    assert out_i.tolist() == out_c.tolist()


@pytest.mark.parametrize("mode", MODES)
def test_special_functions_of_a_float32(mode):
    # interpreted, math.sqrt computes in double whatever its argument (its result is a Python float):
    # FP64_SPECIAL, and float + np.float32 is float32 again (NEP 50); Numba's math.sqrt of a float32 is a
    # float32 square root. np.exp, abs and negation of a float32 stay float32 in both modes.
    res, rows, _ = trace(K.special, (np.float32(4.0),), mode)
    sqrt = Op.FP64_SPECIAL if mode == "interpreted" else Op.FP_SPECIAL
    assert [(k, op) for k, op, *_ in rows] == [
        ("call:special", sqrt), ("call:special", Op.FP_SPECIAL), ("binop:+", Op.FP_ALU),
        ("unary:-", Op.FP_ALU), ("call:abs", Op.FP_ALU), ("binop:+", Op.FP_ALU),
    ]
    assert res.value == pytest.approx(2.0 + np.exp(4.0) + 4.0, rel=1e-6)
