"""NumPy operations inside a traced region are traced as the element loops they perform (profiler/libcalls.py):
exact records of small cases in both execution modes, broadcasting, views, dtypes, logical threads, the
compiled mode's buffer bound, and a property test against a slow reference of the expansion rule.

Registers in the exact expectations: the function's parameters first, its return register, then variables
and expression sites in the order the rewriter meets them; the registers of expansion sites come after all of
those, in the order the sites were rewritten (so adding an expansion never renumbers the other registers).
"""

import numba
import numpy as np
import profiler_library_kernels as K
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiler_testing import ChunkSizes, trace_rows

from core.trace_schema import COLUMN_NAMES, N_OPS, Op
from profiler.instrument import instrument
from profiler.runtime import DEVICE_BASE
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink

MODES = ["interpreted", "compiled"]
L, S, B, MV = Op.LOAD, Op.STORE, Op.BRANCH, Op.MOVE
# the tests' arrays are float64 unless said: their floating-point records are double precision
IA, FA, IM, FM, FS = Op.INT_ALU, Op.FP64_ALU, Op.INT_MUL, Op.FP64_MUL, Op.FP64_SPECIAL


def trace(fn, args, mode, chunk_records=1 << 20):
    """(result, rows, static, chunk): rows are (static text, op, taken, src1, src2, src3, dst, addr, size, tid)."""
    return trace_rows(fn, args, mode, "text", chunk_records)


def latch(site, ind, taken, tid):
    return [(f"{site}: next element", IA, 0, ind, 0, 0, ind, 0, 0, tid),
            (f"{site}: loop over elements", B, taken, ind, 0, 0, 0, 0, 0, tid)]


# ----------------------------------------------------------------------------------------------------------
# the L2 norm: a map, a full reduction, a scalar special function


@pytest.mark.parametrize("mode", MODES)
def test_l2_norm_exact_records(mode):
    x = np.array([3.0, 4.0, 12.0])
    px = _dev(x)
    res, rows, static, _ = trace(K.l2, (x,), mode)
    assert res.value == 13.0
    t = rows[3][7]  # the temporary x * x: its first element's address, from the first STORE
    # x=1 (ret 2), sites: x * x -> 3, np.sum(...) -> 4, np.sqrt(...) -> 5; expansion registers after them:
    # map: induction 6, loads 7 and 8, product 9; sum: inner induction 10, outer 11, accumulator 12, load 13
    m = "x * x"
    r = "np.sum(x * x)"
    want = []
    for e in range(3):
        want += [
            (f"{m}: load x", L, 0, 6, 1, 0, 7, px + 8 * e, 8, e),
            (f"{m}: load x", L, 0, 6, 1, 0, 8, px + 8 * e, 8, e),
            (f"{m}: *", FM, 0, 7, 8, 0, 9, 0, 0, e),
            (f"{m}: store", S, 0, 9, 6, 3, 0, t + 8 * e, 8, e),
        ]
        want += latch(m, 6, int(e < 2), e)
    want.append((f"{r}: set up the accumulator", MV, 0, 0, 0, 0, 12, 0, 0, -1))
    for e in range(3):
        want += [
            (f"{r}: load x * x", L, 0, 10, 3, 0, 13, t + 8 * e, 8, e),
            (f"{r}: accumulate", FA, 0, 12, 13, 0, 12, 0, 0, e),
        ]
        want += latch(r, 10, int(e < 2), e)
    want += [(f"{r}: result", MV, 0, 12, 0, 0, 4, 0, 0, -1), ("np.sqrt(np.sum(x * x))", FS, 0, 4, 0, 0, 5, 0, 0, -1)]
    assert rows == want
    assert res.info.n_threads == 3
    assert res.info.extra["library_expanded"] == [
        {
            "call": m,
            "location": f"{K.__file__}:{K.l2.__code__.co_firstlineno + 1}",
            "kind": "map",
            "calls": 1,
            "elements": 3,
        },
        {
            "call": r,
            "location": f"{K.__file__}:{K.l2.__code__.co_firstlineno + 1}",
            "kind": "reduce",
            "calls": 1,
            "elements": 3,
        },
    ]
    assert res.info.extra["library_work"] == []


@pytest.mark.parametrize("mode", MODES)
def test_l2_norm_traces_the_work_of_the_explicit_loops(mode):
    x = np.linspace(-1.0, 1.0, 1000)
    res, rows, _, chunk = trace(K.l2, (x,), mode)
    _, _, _, ref = trace(K.l2_loops, (x,), mode)
    assert res.value == pytest.approx(np.linalg.norm(x))
    assert len(chunk) == len(ref) == 10 * 1000 + 3
    ops, ref_ops = np.bincount(chunk.op, minlength=N_OPS), np.bincount(ref.op, minlength=N_OPS)
    # the same loads, stores, multiplies, adds, branches; np.empty's OTHER there is the result MOVE here
    assert ops[Op.LOAD] == ref_ops[Op.LOAD] == 3000 and ops[Op.STORE] == ref_ops[Op.STORE] == 1000
    assert ops[Op.FP64_MUL] == ref_ops[Op.FP64_MUL] == 1000 and ops[Op.FP64_ALU] == ref_ops[Op.FP64_ALU] == 1000
    assert ops[Op.BRANCH] == ref_ops[Op.BRANCH] == 2000 and ops[Op.FP64_SPECIAL] == ref_ops[Op.FP64_SPECIAL] == 1
    assert ops[Op.MOVE] == ref_ops[Op.MOVE] + 1 and ops[Op.OTHER] == ref_ops[Op.OTHER] - 1 == 0
    mem = lambda c: np.isin(c.op, [Op.LOAD, Op.STORE]).mean()  # noqa: E731
    fp = lambda c: np.isin(c.op, [Op.FP64_ALU, Op.FP64_MUL, Op.FP64_DIV, Op.FP64_SPECIAL]).mean()  # noqa: E731
    assert mem(chunk) == mem(ref) == 4000 / 10003 and fp(chunk) == fp(ref) == 2001 / 10003


# ----------------------------------------------------------------------------------------------------------
# elementwise operations


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_operand_is_loaded_by_every_element_thread(mode):
    a = np.array([[1.0], [2.0]])  # (2, 1) against (1, 3): a's element is the same along each row
    b = np.array([[10.0, 20.0, 30.0]])
    res, rows, _, _ = trace(K.mul, (a, b), mode)
    out = res.value
    assert out.tolist() == [[10.0, 20.0, 30.0], [20.0, 40.0, 60.0]]
    # a=1 b=2 (ret 3), a * b -> 4; induction 5, loads 6 and 7, product 8; each element is a thread and loads
    # a's element itself (no thread reads register 6 as another thread left it)
    want = []
    for e in range(6):
        i, j = divmod(e, 3)
        want += [
            ("a * b: load a", L, 0, 5, 1, 0, 6, _dev(a) + 8 * i, 8, e),
            ("a * b: load b", L, 0, 5, 2, 0, 7, _dev(b) + 8 * j, 8, e),
            ("a * b: *", FM, 0, 6, 7, 0, 8, 0, 0, e),
            ("a * b: store", S, 0, 8, 5, 4, 0, _dev(out) + 8 * e, 8, e),
        ]
        want += latch("a * b", 5, int(e < 5), e)
    assert rows == want


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_operand_inside_a_thread_is_loaded_when_its_element_changes(mode):
    a = np.arange(1.0, 5.0).reshape(2, 2, 1)  # a[i] (2, 1) against b (3,): a's element is the same along a row
    b = np.array([10.0, 20.0, 30.0])
    out = np.zeros(2)
    _, rows, _, _ = trace(K.broadcast_in_loop, (a, b, out), mode)
    assert out.tolist() == [3 * 60.0, 7 * 60.0]
    # the expansion runs in thread i: a[i, r] is loaded once per row r, b[j] for every element
    want = []
    for i in range(2):
        for r in range(2):
            want.append(("a[i] * b: load a[i]", _dev(a) + 16 * i + 8 * r, i))
            want += [("a[i] * b: load b", _dev(b) + 8 * j, i) for j in range(3)]
    assert [(r[0], r[7], r[9]) for r in rows if r[0].startswith("a[i] * b: load")] == want


@pytest.mark.parametrize("mode", MODES)
def test_array_scalar_operand_is_a_register(mode):
    x = np.array([1, 2], dtype=np.int64)
    res, rows, static, _ = trace(K.mul, (x, 3), mode)
    out = res.value
    assert out.tolist() == [3, 6]
    # mask "a array, b scalar": the operation reads b's own register (2), no load of b
    assert [(t, op, s1, s2, addr) for t, op, _, s1, s2, _, _, addr, _, _ in rows if "latch" not in t][:3] == [
        ("a * b: load a", L, 5, 1, _dev(x)),
        ("a * b: *", IM, 6, 2, 0),
        ("a * b: store", S, 8, 5, _dev(out)),
    ]
    assert [r[1] for r in rows].count(L) == 2 and [r[1] for r in rows].count(IM) == 2


@pytest.mark.parametrize("mode", MODES)
def test_different_shapes_broadcast_a_row_vector(mode):
    A = np.arange(6.0).reshape(2, 3)
    v = np.array([1.0, 2.0, 3.0])
    res, rows, _, _ = trace(K.mul, (A, v), mode)
    loads = [(t, addr) for t, op, *_, addr, size, tid in rows if op == L]
    assert loads == [x for i in range(2) for j in range(3) for x in
                     (("a * b: load a", _dev(A) + 24 * i + 8 * j), ("a * b: load b", _dev(v) + 8 * j))]
    assert [r[7] for r in rows if r[1] == S] == [_dev(res.value) + 8 * e for e in range(6)]


@pytest.mark.parametrize("mode", MODES)
def test_views_strided_and_transposed_have_their_real_addresses(mode):
    base = np.arange(24.0).reshape(4, 6)
    v = base[::2, 1::2]  # (2, 3), strides (96, 16)
    res, rows, _, _ = trace(K.neg, (v,), mode)
    assert [r[7] for r in rows if r[1] == L] == [
        _dev(base) + 96 * i + 8 * (1 + 2 * j) for i in range(2) for j in range(3)
    ]
    assert res.value.tolist() == (-v).tolist()
    t = base[:3, :2].T  # (2, 3), strides (8, 48)
    res, rows, _, _ = trace(K.mul, (t, 2.0), mode)
    assert [r[7] for r in rows if r[1] == L] == [_dev(base) + 8 * i + 48 * j for i in range(2) for j in range(3)]
    out = res.value  # NumPy keeps the operand's (Fortran) layout, Numba makes C order: the real addresses
    assert [r[7] for r in rows if r[1] == S] == [_dev(out) + out.strides[0] * i + out.strides[1] * j
                                                 for i in range(2) for j in range(3)]


@pytest.mark.parametrize("mode", MODES)
def test_dtypes_choose_the_class_and_size(mode):
    i32 = np.array([1, 2, 3], dtype=np.int32)
    f32 = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    _, rows, _, _ = trace(K.mul, (i32, i32), mode)
    assert {r[1] for r in rows if r[0] == "a * b: *"} == {IM} and {r[8] for r in rows if r[1] in (L, S)} == {4}
    _, rows, _, _ = trace(K.mul, (f32, f32), mode)  # float32: single precision
    assert {r[1] for r in rows if r[0] == "a * b: *"} == {Op.FP_MUL} and {r[8] for r in rows if r[1] in (L, S)} == {4}
    _, rows, _, _ = trace(K.mul, (f32, np.float32(0.5)), mode)
    assert {r[1] for r in rows if r[0] == "a * b: *"} == {Op.FP_MUL}
    _, rows, _, _ = trace(K.less, (f32, np.float32(2.5)), mode)  # a float32 comparison
    assert {r[1] for r in rows if r[0] == "a < b: <"} == {Op.FP_ALU}
    _, rows, _, _ = trace(K.mul, (i32, 0.5), mode)  # int32 array * float: a float64 result
    assert {r[1] for r in rows if r[0] == "a * b: *"} == {FM}
    assert [r[8] for r in rows if r[1] in (L, S)] == [4, 8] * 3
    _, rows, _, _ = trace(K.less, (i32, 2.5), mode)  # a comparison's class follows its operands
    assert {r[1] for r in rows if r[0] == "a < b: <"} == {FA} and [r[8] for r in rows if r[1] == S] == [1, 1, 1]
    _, rows, _, _ = trace(K.less, (i32, i32), mode)
    assert {r[1] for r in rows if r[0] == "a < b: <"} == {IA}
    _, rows, _, _ = trace(K.neg, (np.array([1, -2], dtype=np.int16),), mode)
    assert [(r[1], r[8]) for r in rows if r[1] in (L, S, IA, FA) and "next" not in r[0]] == [
        (L, 2),
        (IA, 0),
        (S, 2),
    ] * 2


@pytest.mark.parametrize("mode", MODES)
def test_inplace_update_loads_and_stores_the_target(mode):
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([10.0, 20.0])
    pa = _dev(a)
    res, rows, _, _ = trace(K.inplace_add, (a, b), mode)
    assert res.value is a and a.tolist() == [[11.0, 22.0], [13.0, 24.0]]
    # a=1 b=2 (ret 3); induction 4, loads 5 and 6, result 7; the result is a itself (register 1)
    want = []
    for e in range(4):
        want += [
            ("a += b: load a", L, 0, 4, 1, 0, 5, pa + 8 * e, 8, e),
            ("a += b: load b", L, 0, 4, 2, 0, 6, _dev(b) + 8 * (e % 2), 8, e),
            ("a += b: +=", FA, 0, 5, 6, 0, 7, 0, 0, e),
            ("a += b: store", S, 0, 7, 4, 1, 0, pa + 8 * e, 8, e),
        ]
        want += latch("a += b", 4, int(e < 3), e)
    assert rows == want


@pytest.mark.parametrize("mode", MODES)
def test_rebinding_an_operand_reads_the_old_array(mode):
    a = np.array([1.0, 2.0])
    res, rows, _, _ = trace(K.rebind, (a,), mode)
    assert [r[7] for r in rows if r[1] == L] == [_dev(a), _dev(a) + 8]
    assert [r[7] for r in rows if r[1] == S] == [_dev(res.value), _dev(res.value) + 8]
    assert rows[2][1] == S and rows[2][5] == 1  # the store's array register is a's: a = a * 2.0 writes it


@pytest.mark.parametrize("mode", MODES)
def test_ufunc_calls(mode):
    x = np.array([4.0, 9.0])
    y = np.array([5.0, 1.0])
    res, rows, _, _ = trace(K.ufuncs, (x, y), mode)
    u, v, w = res.value
    assert u.tolist() == [2.0, 3.0] and v.tolist() == [5.0, 9.0] and w.tolist() == [5.0, 9.0]
    ops = [(r[0], r[1]) for r in rows if r[1] not in (L, S, B) and "next" not in r[0]]
    assert ops == [("np.sqrt(x): sqrt", FS)] * 2 + [("np.maximum(x, y): maximum", FA)] * 2 + [("x > y: >", FA)] * 2 \
        + [("np.where(x > y, x, y): where", FA)] * 2
    where_loads = [r for r in rows if r[1] == L and r[0].startswith("np.where")]
    assert [r[0].split(": ")[1] for r in where_loads] == ["load x > y", "load x", "load y"] * 2
    assert [r[8] for r in where_loads] == [1, 8, 8] * 2  # the boolean condition is one byte per element
    op = next(r for r in rows if r[0].startswith("np.where") and r[1] == FA)
    assert (op[3], op[4], op[5]) == tuple(r[6] for r in where_loads[:3])  # select reads its three loads


@pytest.mark.parametrize("mode", MODES)
def test_scalar_calls_keep_their_single_record(mode):
    res, rows, _, _ = trace(K.ufuncs, (4.0, 9.0), mode)
    assert res.value == (2.0, 9.0, 9.0)
    # np.where returns a 0-d array even for scalars: one element, its operands registers
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("np.sqrt(x)", FS, 0), ("np.maximum(x, y)", FA, 0), ("x > y", FA, 0), ("np.where(x > y, x, y): where", FA, 0),
        ("np.where(x > y, x, y): store", S, 0), ("np.where(x > y, x, y): next element", IA, 0),
        ("np.where(x > y, x, y): loop over elements", B, 0)]


@pytest.mark.parametrize("mode", MODES)
def test_float32_scalar_calls_and_reductions_are_single_precision(mode):
    f = np.float32
    res, rows, _, _ = trace(K.ufuncs, (f(4.0), f(9.0)), mode)
    assert res.value == (2.0, 9.0, 9.0)
    assert [(r[0], r[1]) for r in rows if r[1] not in (S, IA, B)] == [
        ("np.sqrt(x)", Op.FP_SPECIAL), ("np.maximum(x, y)", Op.FP_ALU), ("x > y", Op.FP_ALU),
        ("np.where(x > y, x, y): where", Op.FP_ALU)]
    # float32 reductions accumulate in float32 and np.mean divides in float32; of an int array the mean is a
    # float64 division
    _, rows, _, _ = trace(K.reductions, (np.array([3.0, 1.0, 2.0], np.float32),), mode)
    assert {r[1] for r in rows if r[0].endswith("accumulate")} == {Op.FP_ALU, Op.FP_MUL}
    assert [r[1] for r in rows if r[0] == "np.mean(x): divide by the count"] == [Op.FP_DIV]
    _, rows, _, _ = trace(K.reductions, (np.array([3, 1, 2]),), "interpreted")
    assert [r[1] for r in rows if r[0] == "np.mean(x): divide by the count"] == [Op.FP64_DIV]


# ----------------------------------------------------------------------------------------------------------
# reductions


@pytest.mark.parametrize("mode", MODES)
def test_reductions_classes_and_values(mode):
    x = np.array([3.0, 1.0, 2.0])
    res, rows, _, _ = trace(K.reductions, (x,), mode)
    assert res.value == (6.0, 6.0, 1.0, 3.0, 2.0, 1, 0)
    acc = [(r[0].split(":")[0], r[1]) for r in rows if r[0].endswith("accumulate")]
    assert acc == [
        (f, c)
        for f, c in (
            ("np.sum(x)", FA),
            ("np.prod(x)", FM),
            ("np.min(x)", FA),
            ("np.max(x)", FA),
            ("np.mean(x)", FA),
            ("np.argmin(x)", FA),
            ("np.argmax(x)", FA),
        )
        for _ in range(3)
    ]
    assert [r[1] for r in rows if r[0] == "np.mean(x): divide by the count"] == [Op.FP64_DIV]
    assert sum(r[1] == L for r in rows) == 21 and sum(r[0].endswith(": result") for r in rows) == 7
    # int arrays: int classes, but mean (a float) and argmin of floats
    xi = np.array([3, 1, 2])
    res, rows, _, _ = trace(K.reductions, (xi,), mode)
    assert res.value == (6, 6, 1, 3, 2.0, 1, 0)
    cls = {r[0].split(":")[0]: r[1] for r in rows if r[0].endswith("accumulate")}
    assert cls == {"np.sum(x)": IA, "np.prod(x)": IM, "np.min(x)": IA, "np.max(x)": IA, "np.mean(x)": FA,
                   "np.argmin(x)": IA, "np.argmax(x)": IA}


@pytest.mark.parametrize("mode", MODES)
def test_reduction_method_forms_over_a_2d_array(mode):
    a = np.arange(6.0).reshape(2, 3)
    res, rows, _, _ = trace(K.methods, (a,), mode)
    assert res.value == (15.0, 5.0, 5, 2.5)
    loads = [r[7] for r in rows if r[0] == "x.sum(): load x"]
    assert loads == [_dev(a) + 8 * e for e in range(6)]
    sums = [r for r in rows if r[0].startswith("x.sum()")]
    assert [r[9] for r in sums] == [-1] + [e for e in range(6) for _ in range(4)] + [-1]  # a thread per element


@pytest.mark.parametrize("mode", MODES)
def test_reduction_inside_the_thread_space_runs_in_the_current_thread(mode):
    a = np.arange(6.0).reshape(2, 3)
    out = np.zeros(2)
    res, rows, _, _ = trace(K.row_sums_in_loop, (a, out), mode)
    assert out.tolist() == [6.0, 24.0] and res.info.n_threads == 2
    lib = [r[9] for r in rows if r[0].startswith(("np.sum", "a[i] * 2.0"))]
    assert lib == [0] * (len(lib) // 2) + [1] * (len(lib) // 2)  # each row's work in its own thread
    assert {r[9] for r in rows} == {0, 1}
    assert [r[9] for r in rows if r[0].endswith("set up the accumulator")] == [0, 1]


# ----------------------------------------------------------------------------------------------------------
# dot / matmul


def _dot_rows(rows, prefix):
    return [(r[0][len(prefix) + 2:], r[1], r[7], r[9]) for r in rows if r[0].startswith(prefix + ":")]


@pytest.mark.parametrize("mode", MODES)
def test_dot_1d_1d_is_a_reduction_with_a_multiply(mode):
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    res, rows, _, _ = trace(K.dot, (a, b), mode)
    assert res.value == 11.0
    pa, pb = _dev(a), _dev(b)
    want = [("set up the accumulator", MV, 0, -1)]
    for k in range(2):
        want += [
            ("load a", L, pa + 8 * k, k),
            ("load b", L, pb + 8 * k, k),
            ("multiply", FM, 0, k),
            ("accumulate", FA, 0, k),
            ("next k", IA, 0, k),
            ("loop over k", B, 0, k),
        ]
    want.append(("result", MV, 0, -1))
    assert _dot_rows(rows, "np.dot(a, b)") == want


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2))])
def test_dot_matrix_cases_thread_per_output_element_with_inner_k_loop(mode, shapes):
    a = np.arange(float(np.prod(shapes[0]))).reshape(shapes[0])
    b = np.arange(float(np.prod(shapes[1]))).reshape(shapes[1]) + 1.0
    res, rows, _, _ = trace(K.dot, (a, b), mode)
    out = res.value
    np.testing.assert_array_equal(out, np.dot(a, b))
    got = _dot_rows(rows, "np.dot(a, b)")
    want = []
    outs = list(np.ndindex(out.shape))
    for o, idx in enumerate(outs):
        want.append(("set up the accumulator", MV, 0, o))
        for k in range(3):
            ia = (idx[0], k) if a.ndim == 2 else (k,)
            ib = (k, idx[-1]) if b.ndim == 2 else (k,)
            want += [("load a", L, _dev(a) + sum(i * s for i, s in zip(ia, a.strides)), o),
                     ("load b", L, _dev(b) + sum(i * s for i, s in zip(ib, b.strides)), o),
                     ("multiply", FM, 0, o), ("accumulate", FA, 0, o), ("next k", IA, 0, o),
                     ("loop over k", B, 0, o)]
        want += [("store", S, _dev(out) + sum(i * s for i, s in zip(idx, out.strides)), o),
                 ("next output element", IA, 0, o), ("loop over output elements", B, 0, o)]
    assert got == want
    taken = [r[2] for r in rows if r[0] == "np.dot(a, b): loop over k"]
    assert taken == [1, 1, 0] * len(outs)


@pytest.mark.parametrize("mode", MODES)
def test_matmul_operator(mode):
    a, b = np.arange(4.0).reshape(2, 2), np.eye(2)
    res, rows, _, _ = trace(K.matmul_op, (a, b), mode)
    np.testing.assert_array_equal(res.value, a)
    assert sum(r[0] == "a @ b: multiply" for r in rows) == 8 and sum(r[0] == "a @ b: store" for r in rows) == 4


def test_vdot_flattens_equal_shapes():
    a = np.arange(4.0).reshape(2, 2)
    res, rows, _, _ = trace(K.vdot, (a, a), "interpreted")  # np.vdot does not compile with Numba
    assert res.value == 14.0
    assert [r[7] for r in rows if r[0] == "np.vdot(a, b): load a"] == [_dev(a) + 8 * e for e in range(4)]
    assert [r[9] for r in rows if r[0] == "np.vdot(a, b): multiply"] == [0, 1, 2, 3]


# ----------------------------------------------------------------------------------------------------------
# fancy indexing


@pytest.mark.parametrize("mode", MODES)
def test_gather_loads_index_then_element(mode):
    x = np.array([10.0, 20.0, 30.0, 40.0])
    idx = np.array([3, 0, -1])
    res, rows, _, _ = trace(K.gather, (x, idx), mode)
    out = res.value
    assert out.tolist() == [40.0, 10.0, 40.0]
    # x=1 idx=2 (ret 3), x[idx] -> 4; induction 5, index load 6, element load 7
    want = []
    for e, i in enumerate([3, 0, 3]):
        want += [("x[idx]: load index", L, 0, 5, 2, 0, 6, _dev(idx) + 8 * e, 8, e),
                 ("x[idx]: load element", L, 0, 6, 1, 0, 7, _dev(x) + 8 * i, 8, e),
                 ("x[idx]: store", S, 0, 7, 5, 4, 0, _dev(out) + 8 * e, 8, e)]
        want += latch("x[idx]", 5, int(e < 2), e)
    assert rows == want


@pytest.mark.parametrize("mode", MODES)
def test_gather_rows_load_the_index_in_every_element_thread(mode):
    A = np.arange(6.0).reshape(3, 2)
    idx = np.array([2, 0], dtype=np.int32)
    res, rows, _, _ = trace(K.gather, (A, idx), mode)
    assert res.value.tolist() == [[4.0, 5.0], [0.0, 1.0]]
    assert [(r[0][8:], r[7], r[8], r[9]) for r in rows if r[1] == L] == [
        ("load index", _dev(idx), 4, 0),
        ("load element", _dev(A) + 32, 8, 0),
        ("load index", _dev(idx), 4, 1),
        ("load element", _dev(A) + 40, 8, 1),
        ("load index", _dev(idx) + 4, 4, 2),
        ("load element", _dev(A), 8, 2),
        ("load index", _dev(idx) + 4, 4, 3),
        ("load element", _dev(A) + 8, 8, 3),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_boolean_mask_read_branches_per_element(mode):
    x = np.array([1.0, 5.0, 2.0, 7.0])
    m = x > 3.0
    res, rows, _, _ = trace(K.masked, (x, m), mode)
    out = res.value
    assert out.tolist() == [5.0, 7.0]
    # x=1 m=2 (ret 3), x[m] -> 4; induction 5, index load 6 and element load 7 (unused), mask load 8,
    # selected element 9, output position 10
    want = []
    k = 0
    for e in range(4):
        want += [
            ("x[m]: load mask", L, 0, 5, 2, 0, 8, _dev(m) + e, 1, e),
            ("x[m]: selected?", B, int(m[e]), 8, 0, 0, 0, 0, 0, e),
        ]
        if m[e]:
            want += [("x[m]: load selected element", L, 0, 5, 1, 0, 9, _dev(x) + 8 * e, 8, e),
                     ("x[m]: store selected", S, 0, 9, 10, 4, 0, _dev(out) + 8 * k, 8, e),
                     ("x[m]: next output position", IA, 0, 10, 0, 0, 10, 0, 0, e)]
            k += 1
        want += latch("x[m]", 5, int(e < 3), e)
    assert rows == want


@pytest.mark.parametrize("mode", MODES)
def test_integer_index_keeps_the_single_load(mode):
    x = np.array([10.0, 20.0])
    res, rows, _, _ = trace(K.gather, (x, 1), mode)
    assert res.value == 20.0 and rows == [("x[idx]", L, 0, 2, 1, 0, 4, _dev(x) + 8, 8, -1)]


# ----------------------------------------------------------------------------------------------------------
# iterating arrays


@pytest.mark.parametrize("mode", MODES)
def test_for_over_a_1d_array_loads_each_element(mode):
    x = np.array([1.0, 2.0, 3.0])
    res, rows, _, _ = trace(K.iterate, (x,), mode)
    assert res.value == 6.0
    # x=1 (ret 2), s=3, v=4; the loop's own induction register 5
    want = [("s = 0.0", MV, 0, 0, 0, 0, 3, 0, 0, -1)]
    for e in range(3):
        want += [
            ("v = next element of x", L, 0, 5, 1, 0, 4, _dev(x) + 8 * e, 8, e),
            ("s += v", FA, 0, 3, 4, 0, 3, 0, 0, e),
            ("next v", IA, 0, 5, 0, 0, 5, 0, 0, e),
            ("for v in x", B, int(e < 2), 5, 0, 0, 0, 0, 0, e),
        ]
    assert rows == want


@pytest.mark.parametrize("mode", MODES)
def test_enumerate_uses_the_counter_as_induction(mode):
    x = np.array([1.0, 2.0])
    out = np.zeros(2)
    _, rows, _, _ = trace(K.iterate_enum, (x, out), mode)
    assert out.tolist() == [2.0, 3.0]
    # x=1 out=2 (ret 3), i=4, v=5, v + 1.0 -> 6
    assert rows[:5] == [
        ("v = next element of x", L, 0, 4, 1, 0, 5, _dev(x), 8, 0),
        ("v + 1.0", FA, 0, 5, 0, 0, 6, 0, 0, 0),
        ("out[i]", S, 0, 6, 4, 2, 0, _dev(out), 8, 0),
        ("next (i, v)", IA, 0, 4, 0, 0, 4, 0, 0, 0),
        ("for (i, v) in enumerate(x)", B, 1, 4, 0, 0, 0, 0, 0, 0),
    ]
    assert len(rows) == 10


@pytest.mark.parametrize("mode", MODES)
def test_rows_of_a_2d_array_are_views(mode):
    a = np.arange(6.0).reshape(3, 2)
    res, rows, _, _ = trace(K.iterate_rows, (a,), mode)
    assert res.value == 6.0
    assert [(r[0], r[1]) for r in rows if "element of" in r[0]] == [("row = next element of a", Op.OTHER)] * 3
    assert [r[7] for r in rows if r[1] == L] == [_dev(a) + 16 * e for e in range(3)]  # row[0]


@pytest.mark.parametrize("mode", MODES)
def test_crc_over_bytes_has_its_loads(mode):
    data = np.frombuffer(b"portcast", dtype=np.uint8)
    table = np.array([(k * 2654435761) & 0xFFFFFFFF for k in range(256)], dtype=np.int64)
    res, rows, _, chunk = trace(K.crc_bytes, (data, table), mode)
    byte_loads = [r for r in rows if r[0] == "v = next element of data"]
    assert [(r[7], r[8]) for r in byte_loads] == [(_dev(data) + e, 1) for e in range(8)]
    assert sum(r[1] == L for r in rows) == 16  # each byte and its table entry
    assert np.isin(chunk.op, [Op.LOAD, Op.STORE]).mean() == 16 / len(chunk) > 0.1
    crc = 0xFFFFFFFF
    for v in data:
        crc = int(table[(crc ^ int(v)) & 0xFF]) ^ (crc >> 8)
    assert res.value == crc ^ 0xFFFFFFFF


# ----------------------------------------------------------------------------------------------------------
# program registration, chunking, agreement of the modes


def test_program_registers_sites_and_reductions():
    prog = instrument(K.l2, "interpreted")
    assert [(s["call"], s["kind"], s["threads"]) for s in prog.library_sites] == [
        ("x * x", "map", True), ("np.sum(x * x)", "reduce", True), ("np.sqrt(np.sum(x * x))", "map", True)]
    m, r, _ = prog.library_sites
    assert prog.static[m["latch_pc"]].text == "x * x: loop over elements"
    assert prog.static[r["latch_pc"]].text == "np.sum(x * x): loop over elements"
    assert prog.static[r["outer_latch_pc"]].text == "np.sum(x * x): loop over output elements"
    assert r["reduction_token"] == 12 and list(prog.reduction_tokens) == [12]
    assert prog.reg_dst[prog.library_sites[1]["latch_pc"] - 1] == 10  # the inner induction's INT_ALU
    inside = instrument(K.row_sums_in_loop, "interpreted")
    assert [s["threads"] for s in inside.library_sites] == [False, False]


def _relative(chunk, arrays):
    addr = chunk.addr.copy()
    done = np.zeros(len(addr), bool)
    for k, a in enumerate(arrays):
        span = a.itemsize + sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides)) if a.size else 1
        inside = (chunk.size > 0) & (chunk.addr >= _dev(a)) & (chunk.addr < _dev(a) + span) & ~done
        addr[inside] += (k + 1) * (1 << 50) - _dev(a)
        done |= inside
    return addr


CHUNK_CASES = {
    "l2": (K.l2, lambda: (np.linspace(0.0, 1.0, 50),)),
    "broadcast": (K.mul, lambda: (np.arange(4.0)[:, None], np.arange(5.0))),
    "dot": (K.dot, lambda: (np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2))),
    "mask": (K.masked, lambda: (np.arange(10.0), np.arange(10) % 3 == 0)),
    "gather": (K.gather, lambda: (np.arange(10.0), np.array([9, 1, 1, 4]))),
    "inside_threads": (K.row_sums_in_loop, lambda: (np.arange(12.0).reshape(3, 4), np.zeros(3))),
    "iterate": (K.iterate, lambda: (np.arange(7.0),)),
}


@pytest.mark.parametrize("name", sorted(CHUNK_CASES))
def test_compiled_records_do_not_depend_on_chunk_size_and_match_interpreted(name):
    fn, make = CHUNK_CASES[name]
    args = make()
    res_i, _, _, ci = trace(fn, args, "interpreted")
    results = [
        r for r in (res_i.value if isinstance(res_i.value, tuple) else (res_i.value,)) if isinstance(r, np.ndarray)
    ]
    want = _relative(ci, [a for a in args if isinstance(a, np.ndarray)] + results)
    for mode, chunk_records in [("compiled", 1), ("compiled", 7), ("compiled", 64), ("compiled", 1 << 20),
                                ("interpreted", 1), ("interpreted", 7)]:
        args2 = make()
        res, _, _, c = trace(fn, args2, mode, chunk_records)
        outs = [r for r in (res.value if isinstance(res.value, tuple) else (res.value,)) if isinstance(r, np.ndarray)]
        got = _relative(c, [a for a in args2 if isinstance(a, np.ndarray)] + outs)
        assert len(c) == len(ci) == res.info.n_records, (mode, chunk_records)
        for col in COLUMN_NAMES:
            if col != "addr":
                assert np.array_equal(getattr(c, col), getattr(ci, col)), (name, mode, chunk_records, col)
        known = want < DEVICE_BASE  # the inputs and results (temporaries: elsewhere in each mode)
        assert np.array_equal(got[known], want[known]), (name, mode, chunk_records)
        assert res.info.n_threads == res_i.info.n_threads and res.info.extra == res_i.info.extra


@pytest.mark.parametrize("mode", MODES)
def test_large_expansion_keeps_the_chunk_bound(mode):
    sizes = ChunkSizes()
    x = np.ones(5000)
    res = trace_function(K.l2, (x,), sinks=[sizes], mode=mode, chunk_records=1000)
    assert max(sizes.sizes) <= 1000 and sum(sizes.sizes) == res.info.n_records == 10 * 5000 + 3


def _marked_with_buffer(x):
    buf = np.zeros(3 * x.shape[0])
    for i in numba.prange(x.shape[0]):
        buf[i] = 2.0 * x[i]
    return buf


@pytest.mark.parametrize("mode", MODES)
def test_numpy_outside_marked_kernels_is_host_code(mode):
    # the region marks its kernel: the buffer's expansion (12 stores) runs on the host, not as 12 threads
    res, rows, _, _ = trace(_marked_with_buffer, (np.arange(4.0),), mode)
    stores = [r for r in rows if r[1] == S]
    assert res.value.tolist()[:4] == [0.0, 2.0, 4.0, 6.0]
    assert [r[9] for r in stores] == [-1] * 12 + [0, 1, 2, 3]


class _FailingSink(ChunkSizes):
    """Raises ``exc`` when handed its ``after``-th chunk; keeps the region's end."""

    def __init__(self, exc, after):
        super().__init__()
        self.exc, self.after, self.ended = exc, after, None

    def consume(self, chunk):
        super().consume(chunk)
        if len(self.sizes) == self.after:
            raise self.exc

    def end_region(self, info, static):
        self.ended = info


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("exc, error", [(OSError("disk full"), "OSError: disk full"),
                                        (KeyboardInterrupt(), "interrupted (KeyboardInterrupt)")])
def test_a_sink_failing_inside_an_expansion_stops_it_and_ends_the_region(mode, exc, error):
    # the hand-over inside the kernel raises (compiled mode: behind the kernel's C entry point, which keeps
    # the exception and stops the kernel): the same exception leaves the region, whose trace is kept up to it
    sink = _FailingSink(exc, after=2)
    with pytest.raises(type(exc)):
        trace_function(K.l2, (np.ones(5000),), sinks=[sink], mode=mode, chunk_records=1000)
    assert len(sink.sizes) == 2 and not sink.ended.complete and sink.ended.error == error
    assert sink.ended.n_records == sum(sink.sizes) > 1000
    res = trace_function(K.l2, (np.ones(5000),), sinks=[ChunkSizes()], mode=mode, chunk_records=1000)
    assert res.info.complete and res.info.n_records == 10 * 5000 + 3


# ----------------------------------------------------------------------------------------------------------
# property: the expansion of a broadcast elementwise operation against a slow reference of the rule


def _float_class(op, dtype):
    """The class of a floating-point operation ``op`` (FP_*) on elements of ``dtype``: as it is for float32,
    its double-precision class (FP64_* = FP_* + 12) for float64."""
    return Op(op + 12) if np.dtype(dtype).itemsize == 8 else Op(op)


def _reference_map(a, b, out, threads=True):
    """Records (op, addr, size, taken, tid) of ``out = a * b`` as the rule says, element by element
    (``threads``: each element is a thread of its own and loads every array operand)."""
    recs = []
    n = out.size
    prev = [None, None]
    for e, idx in enumerate(np.ndindex(out.shape)):
        for j, v in enumerate((a, b)):
            if not isinstance(v, np.ndarray):
                continue
            off = out.ndim - v.ndim
            addr = _dev(v) + sum((idx[off + d] if v.shape[d] != 1 else 0) * v.strides[d] for d in range(v.ndim))
            if threads or e == 0 or addr != prev[j]:
                recs.append((Op.LOAD, addr, v.itemsize, 0, e))
            prev[j] = addr
        fp = out.dtype.kind in "fc"
        recs.append((_float_class(Op.FP_MUL, out.dtype) if fp else Op.INT_MUL, 0, 0, 0, e))
        recs.append((Op.STORE, _dev(out) + sum(i * s for i, s in zip(idx, out.strides)), out.itemsize, 0, e))
        recs.append((Op.INT_ALU, 0, 0, 0, e))
        recs.append((Op.BRANCH, 0, 0, int(e < n - 1), e))
    return recs


@st.composite
def _operands(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.int32]))

    def operand():
        kind = draw(st.sampled_from(["full", "broadcast", "scalar", "strided"]))
        if kind == "scalar":
            return 2
        if kind == "broadcast":
            k = draw(st.integers(0, nd))
            sh = tuple(1 if draw(st.booleans()) else s for s in shape[nd - k:]) if k else (1,)
            return np.arange(1, 1 + int(np.prod(sh)), dtype=dtype).reshape(sh)
        if kind == "strided":
            big = np.arange(1, 1 + 2 * int(np.prod(shape)), dtype=dtype).reshape(shape[:-1] + (2 * shape[-1],))
            return big[..., ::2]
        return np.arange(1, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape)

    a, b = operand(), operand()
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        a = np.arange(1, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape)
    return a, b


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_operands(), st.sampled_from(MODES))
def test_broadcast_map_matches_the_reference(ops, mode):
    a, b = ops
    sink = MemorySink()
    res = trace_function(K.mul, (a, b), sinks=[sink], mode=mode)
    out = res.value
    np.testing.assert_array_equal(out, a * b)
    c = sink.regions[0][2]
    got = list(zip((Op(o) for o in c.op), c.addr.tolist(), c.size.tolist(), c.taken.tolist(), c.tid.tolist()))
    assert got == _reference_map(a, b, out)


# ----------------------------------------------------------------------------------------------------------
# slice assignment, copies, constructors, reductions along an axis, scans


@pytest.mark.parametrize("mode", MODES)
def test_slice_assignment_copies_the_computed_temporary(mode):
    a = np.zeros(4)
    b = np.array([1.0, 2.0, 3.0, 4.0])
    _, rows, _, _ = trace(K.slice_store, (a, b), mode)
    assert a.tolist() == [0.0, 4.0, 6.0, 0.0]
    t = [r[7] for r in rows if r[0] == "b[:-2] + b[2:]: store"]  # NumPy computes the sum, then copies it
    copy = [r for r in rows if r[0].startswith("a[1:-1]")]
    # a=1 b=2 (ret 3); views 4, 5, the sum 6; the copy: induction 11, load 12, stored into a's register 1
    want = []
    for e in range(2):
        want += [("a[1:-1]: load b[:-2] + b[2:]", L, 0, 11, 6, 0, 12, t[e], 8, e),
                 ("a[1:-1]: store", S, 0, 12, 11, 1, 0, _dev(a) + 8 * (1 + e), 8, e)]
        want += latch("a[1:-1]", 11, int(e < 1), e)
    assert copy == want
    assert rows[-1] == ("a[0]", S, 0, 1, 0, 0, 0, _dev(a), 8, -1)


@pytest.mark.parametrize("mode", MODES)
def test_filling_a_slice_with_a_scalar_stores_only(mode):
    a = np.ones(3)
    _, rows, _, _ = trace(K.fill_slice, (a,), mode)
    assert a.tolist() == [0.0, 0.0, 0.0]
    # a=1 (ret 2); induction 3; the constant has no register
    want = []
    for e in range(3):
        want += [("a[:]: store", S, 0, 3, 1, 0, 0, _dev(a) + 8 * e, 8, e)] + latch("a[:]", 3, int(e < 2), e)
    assert rows == want


@pytest.mark.parametrize("mode", MODES)
def test_augmented_slice_updates_in_place(mode):
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([10.0, 20.0])
    _, rows, _, _ = trace(K.augmented_slice, (a, b), mode)
    assert a.tolist() == [1.0, 12.0, 23.0]
    assert [(r[1], r[7]) for r in rows if r[1] in (L, S)] == [
        x
        for e in range(2)
        for x in ((L, _dev(a) + 8 + 8 * e), (L, _dev(b) + 8 * e), (S, _dev(a) + 8 + 8 * e))
    ]
    assert [r[1] for r in rows if r[0] in ("a[1:]",)] == [Op.OTHER, Op.OTHER]  # the view and its write-back


@pytest.mark.parametrize("mode", MODES)
def test_copies_of_views_read_the_view(mode):
    base = np.arange(12.0).reshape(3, 4)
    v = base[:, ::2]  # (3, 2), strides (32, 16): not contiguous
    res, rows, _, _ = trace(K.copies, (v,), mode)
    b, c, d = res.value
    src = [_dev(base) + 32 * i + 16 * j for i in range(3) for j in range(2)]
    for call, out in (("a.copy()", b), ("np.copy(a)", c), ("np.ascontiguousarray(a)", d)):
        assert [r[7] for r in rows if r[0] == f"{call}: load a"] == src
        assert [r[7] for r in rows if r[0] == f"{call}: store"] == [_dev(out) + 8 * e for e in range(6)]
        np.testing.assert_array_equal(out, v)
    # a contiguous array is returned as it is: no copy, one OTHER record
    a = np.arange(3.0)
    res, rows, _, _ = trace(K.copies, (a,), mode)
    assert res.value[2] is a or mode == "compiled"
    assert [(r[0], r[1]) for r in rows if r[0].startswith("np.ascontiguousarray")] == [
        ("np.ascontiguousarray(a)", Op.OTHER)
    ]


@pytest.mark.parametrize("mode", MODES)
def test_constructors_store_each_element(mode):
    res, rows, _, _ = trace(K.constructors, (2,), mode)
    z, o, f, e, r = res.value
    # n=1 (ret 2); z 3, o 4, the tuple (2, n) 5, f 6, e 7, r 8, the returned tuple 9; inductions 10 (zeros) ...
    assert rows[:6] == [
        x
        for k in range(2)
        for x in [("np.zeros(n): store", S, 0, 10, 3, 0, 0, _dev(z) + 8 * k, 8, k)]
        + latch("np.zeros(n)", 10, int(k < 1), k)
    ]
    ones = [r for r in rows if r[0].startswith("np.ones")]
    assert [(r[7], r[8], r[9]) for r in ones if r[1] == S] == [(_dev(o) + 4 * k, 4, k) for k in range(4)]
    assert [r[7] for r in rows if r[0] == "np.full(n, 7.0): store"] == [_dev(f), _dev(f) + 8]
    assert [(r[0], r[1], r[6]) for r in rows if r[0].startswith("np.empty")] == [("np.empty(n)", Op.OTHER, 7)]
    assert [r[7] for r in rows if r[0] == "np.arange(n): store"] == [_dev(r), _dev(r) + 8]
    assert len(rows) == 6 + 12 + 6 + 1 + 6 and not any(x[1] == L for x in rows)


def test_like_constructors_linspace_and_array():
    a = np.arange(4.0).reshape(2, 2)
    res, rows, _, _ = trace(K.more_constructors, (3, a), "interpreted")  # np.array(a) of an array is a copy
    lin, arr, ones = res.value
    assert [r[7] for r in rows if r[0] == "np.linspace(0.0, 1.0, n): store"] == [
        _dev(lin) + 8 * k for k in range(3)
    ]
    assert [r[7] for r in rows if r[0] == "np.array(a): load a"] == [_dev(a) + 8 * k for k in range(4)]
    assert [r[7] for r in rows if r[0] == "np.array(a): store"] == [_dev(arr) + 8 * k for k in range(4)]
    assert [r[7] for r in rows if r[0] == "np.ones_like(a): store"] == [_dev(ones) + 8 * k for k in range(4)]
    res, rows, _, _ = trace(K.likes, (a,), "compiled")
    z, f = res.value
    assert [r[7] for r in rows if r[0] == "np.zeros_like(a): store"] == [_dev(z) + 8 * k for k in range(4)]
    fill = [r for r in rows if r[0] == "np.full_like(a, 3.0): store"]
    assert [r[7] for r in fill] == [_dev(f) + 8 * k for k in range(4)] and f.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("mode", MODES)
def test_fill_method_stores_the_value_register(mode):
    a = np.zeros(2)
    _, rows, _, _ = trace(K.fill_method, (a, 5.0), mode)
    assert a.tolist() == [5.0, 5.0]
    # a=1 v=2 (ret 3), call site 4; induction 5: the store reads v and writes a
    assert rows == [
        x
        for k in range(2)
        for x in [("a.fill(v): store", S, 0, 2, 5, 1, 0, _dev(a) + 8 * k, 8, k)]
        + latch("a.fill(v)", 5, int(k < 1), k)
    ]


@pytest.mark.parametrize("mode", MODES)
def test_reductions_along_an_axis_thread_per_output_element(mode):
    a = np.arange(6.0).reshape(2, 3)
    res, rows, _, _ = trace(K.axis_sum, (a,), mode)
    s0, s1 = res.value
    assert s0.tolist() == [3.0, 5.0, 7.0] and s1.tolist() == [3.0, 12.0]
    col = [(r[0].split(": ")[1], r[1], r[7], r[9]) for r in rows if r[0].startswith("np.sum(a, axis=0)")]
    want = []
    for j in range(3):
        want.append(("set up the accumulator", MV, 0, j))
        for i in range(2):
            want += [
                ("load a", L, _dev(a) + 24 * i + 8 * j, j),
                ("accumulate", FA, 0, j),
                ("next element", IA, 0, j),
                ("loop over elements", B, 0, j),
            ]
        want += [("store", S, _dev(s0) + 8 * j, j), ("next output element", IA, 0, j), ("loop over output "
                                                                                              "elements", B, 0, j)]
    assert col == want
    assert [r[7] for r in rows if r[0] == "a.sum(1): load a"] == [_dev(a) + 8 * k for k in range(6)]
    assert [r[7] for r in rows if r[0] == "a.sum(1): store"] == [_dev(s1), _dev(s1) + 8]
    assert not any(r[0].endswith(": result") for r in rows)  # array results: no MOVE of a scalar


def test_mean_along_a_negative_axis_divides_per_output_element():
    a = np.arange(6.0).reshape(2, 3)
    res, rows, _, _ = trace(K.axis_mean, (a,), "interpreted")  # np.mean(a, axis) does not compile with Numba
    assert res.value.tolist() == [1.0, 4.0]
    ops = [r[1] for r in rows if r[1] not in (L, B) and "next" not in r[0]]
    assert ops == [MV, FA, FA, FA, Op.FP64_DIV, S] * 2


@pytest.mark.parametrize("mode", MODES)
def test_cumsum_stores_every_running_value(mode):
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    res, rows, _, _ = trace(K.scans, (a,), mode)
    out = res.value
    assert out.tolist() == [1.0, 3.0, 6.0, 10.0]
    # a=1 (ret 2), np.cumsum(x) -> 3; inner induction 4, outer 5, accumulator 6, load 7
    want = [("np.cumsum(x): set up the accumulator", MV, 0, 0, 0, 0, 6, 0, 0, -1)]
    for e in range(4):
        want += [
            ("np.cumsum(x): load x", L, 0, 4, 1, 0, 7, _dev(a) + 8 * e, 8, e),
            ("np.cumsum(x): accumulate", FA, 0, 6, 7, 0, 6, 0, 0, e),
            ("np.cumsum(x): store", S, 0, 6, 4, 3, 0, _dev(out) + 8 * e, 8, e),
        ] + latch("np.cumsum(x)", 4, int(e < 3), e)
    assert rows == want
    res, rows, _, _ = trace(K.scan_axis, (a,), mode)
    assert res.value.tolist() == [[1.0, 3.0], [3.0, 7.0]]
    assert [r[9] for r in rows if r[1] == S] == [0, 0, 1, 1]  # a thread per row of the scan


# ----------------------------------------------------------------------------------------------------------
# calls that are not expanded: one OTHER record, and their estimated work in the region metadata


def _loc(fn, line_offset):
    return f"{K.__file__}:{fn.__code__.co_firstlineno + line_offset}"


@pytest.mark.parametrize("mode", MODES)
def test_unexpanded_call_accumulates_work_per_site(mode):
    a = np.diag([1.0, 2.0, 3.0, 4.0])
    res, rows, _, _ = trace(K.eig_loop, (a, 3), mode)
    assert res.value == 3.0
    assert [(r[0], r[1]) for r in rows if r[0].startswith("np.linalg")] == [("np.linalg.eigh(a)", Op.OTHER)] * 3
    # eigh of n x n with vectors: 9 n^3 flops; bytes: a read, w and v written
    assert res.info.extra["library_work"] == [{"call": "np.linalg.eigh", "location": _loc(K.eig_loop, 3), "calls": 3,
                                               "flops": 3 * 9 * 4 ** 3, "bytes": 3 * (128 + 32 + 128)}]
    assert res.info.extra["library_expanded"] == []


@pytest.mark.parametrize("mode", MODES)
def test_estimates_by_formula_and_default(mode):
    x = np.array([3.0, 1.0, 2.0, 1.0])
    a = np.arange(6.0).reshape(2, 3)
    res, rows, _, _ = trace(K.estimates, (x, a), mode)
    assert x.tolist() == [1.0, 1.0, 2.0, 3.0] and [r[1] for r in rows] == [Op.OTHER] * 6
    work = {w["call"]: (w["calls"], w["flops"], w["bytes"]) for w in res.info.extra["library_work"]}
    assert work == {
        "np.sort": (1, 8, 32 + 32),  # n log2 n comparisons
        "np.unique": (1, 8, 32 + 24),  # N log2 N; three distinct values written
        "np.diff": (1, 4, 32 + 24),  # no formula: the operands' elements
        "np.outer": (1, 16, 32 + 32 + 128),  # n m
        "np.corrcoef": (1, 2 * 3 * 2 ** 2 + 2 ** 2, 48 + 32),  # 2 variables (rows), 3 observations: 2 n d^2 + d^2
        "ndarray.sort": (1, 8, 32),  # in place: nothing returned
    }
    assert [w["location"] for w in res.info.extra["library_work"]] == [_loc(K.estimates, k) for k in range(1, 7)]


@pytest.mark.parametrize("mode", MODES)
def test_covariance_reads_rowvar(mode):
    res, _, _, _ = trace(K.cov_columns, (np.arange(12.0).reshape(4, 3),), mode)
    assert res.info.extra["library_work"][0]["flops"] == 2 * 4 * 3 ** 2  # 3 variables (columns), 4 observations


def test_estimates_of_calls_numba_does_not_compile():
    res, _, _, _ = trace(K.svd_values, (np.arange(12.0).reshape(4, 3),), "interpreted")
    assert res.info.extra["library_work"][0]["flops"] == 4 * 4 * 3 ** 2 - 4 * 3 ** 3 // 3  # 4 m n^2 - 4/3 n^3
    res, _, _, _ = trace(K.transform, (np.arange(8.0),), "interpreted")
    assert (
        res.info.extra["library_work"][0]["flops"] == 5 * 8 * 3
        and res.info.extra["library_work"][0]["bytes"] == 64 + 128
    )
    res, _, _, _ = trace(K.stacked, (np.ones((2, 3, 4)), np.ones((2, 4, 5))), "interpreted")  # @ beyond 2-D
    assert res.info.extra["library_work"] == [{"call": "@", "location": _loc(K.stacked, 1), "calls": 1,
                                               "flops": 2 * 30 * 4, "bytes": 8 * (24 + 40 + 30)}]


@pytest.mark.parametrize("mode", MODES)
def test_numpy_calls_without_arrays_record_no_work(mode):
    res, rows, _, _ = trace(K.no_array_work, (1,), mode)
    assert res.info.extra["library_work"] == [] and [r[1] for r in rows] == [Op.OTHER, IA]


@pytest.mark.parametrize(
    "kind,dims,want",
    [
        ("W_INV", (2, 5, 5, 50, 0, 1, 1, 0), 2 * 125 * 2),
        ("W_LU", (2, 3, 3, 9, 0, 1, 1, 0), 18),
        ("W_SOLVE", (2, 3, 3, 9, 2, 3, 2, 6), 18 + 2 * 9 * 2),
        ("W_CHOL", (2, 6, 6, 36, 0, 1, 1, 0), 72),
        ("W_EIGH", (2, 2, 2, 4, 0, 1, 1, 0), 72),
        ("W_EIGVALSH", (2, 3, 3, 9, 0, 1, 1, 0), 36),
        ("W_EIG", (2, 2, 2, 4, 0, 1, 1, 0), 200),
        ("W_EIGVALS", (2, 2, 2, 4, 0, 1, 1, 0), 80),
        ("W_SVD", (2, 2, 4, 8, 0, 1, 1, 0), 4 * 16 * 2 + 8 * 4 * 4 + 9 * 8),
        ("W_QR", (2, 6, 3, 18, 0, 1, 1, 0), 4 * 6 * 9 - 36),
        ("W_NORM", (1, 1, 7, 7, 0, 1, 1, 0), 14),
        ("W_FFTN", (2, 4, 4, 16, 0, 1, 1, 0), 5 * 16 * 4),
        ("W_RFFT", (2, 3, 8, 24, 0, 1, 1, 0), 3 * 2.5 * 8 * 3),
        ("W_SORT", (2, 2, 8, 16, 0, 1, 1, 0), 2 * 8 * 3),
        ("W_CONV", (1, 1, 10, 10, 1, 1, 3, 3), 60),
        ("W_TRACE", (2, 3, 5, 15, 0, 1, 1, 0), 3),
    ],
)
def test_work_formulas(kind, dims, want):
    from profiler import libcalls as lc
    nd0, m0, n0, s0, nd1, m1, n1, s1 = dims
    assert lc.work_flops(getattr(lc, kind), nd0, m0, n0, s0, nd1, m1, n1, s1, s0 + s1, 0, 1) == want
    assert lc.work_flops(lc.W_DEFAULT, nd0, m0, n0, s0, nd1, m1, n1, s1, s0 + s1, 5, 1) == s0 + s1
    assert lc.work_flops(lc.W_DEFAULT, 0, 1, 1, 0, 0, 1, 1, 0, 0, 5, 1) == 5  # no array operand: the result's


# ----------------------------------------------------------------------------------------------------------
# features of the unexpanded work and the report table


def test_library_features_from_the_feature_sink_and_from_a_trace_file(tmp_path):
    from features import FeatureSink, compute_features, library_features
    from profiler.tracefile import TraceDirectorySink

    a = np.diag([1.0, 2.0, 3.0, 4.0])
    fs = FeatureSink()
    res = trace_function(K.eig_loop, (a, 3), sinks=[fs, TraceDirectorySink(tmp_path)], mode="compiled")
    flops = 3 * 9 * 64
    n = res.info.n_records
    info, series = fs.results[0]
    assert series["lib_opaqueFlops"] == flops and series["lib_opaqueFraction"] == flops / (flops + n)
    (path,) = list(tmp_path.glob("*.parquet"))
    from_file = compute_features(path)
    assert from_file["lib_opaqueFlops"] == flops and from_file["lib_opaqueFraction"] == flops / (flops + n)
    assert library_features(None, 10) == {"lib_opaqueFlops": 0.0, "lib_opaqueFraction": 0.0}
    assert library_features({"extra": {"library_work": [{"flops": 30}]}}, 10) == {"lib_opaqueFlops": 30.0,
                                                                                  "lib_opaqueFraction": 0.75}
    with pytest.raises(ValueError, match="library_work is malformed"):
        library_features({"extra": {"library_work": [{"calls": 1}]}}, 10)
    # a region whose library calls were all expanded misses nothing
    fs = FeatureSink()
    trace_function(K.l2, (np.ones(8),), sinks=[fs], mode="interpreted")
    assert fs.results[0][1]["lib_opaqueFlops"] == 0.0 and fs.results[0][1]["lib_opaqueFraction"] == 0.0


def test_report_table_of_unexpanded_calls():
    from rich.console import Console

    from portcast.report import print_library_calls

    res = trace_function(K.eig_loop, (np.eye(40), 2), mode="interpreted")
    con = Console(width=200, record=True)
    assert print_library_calls(con, "eig #0", res.info)
    text = con.export_text()
    assert "library calls not traced element by element in eig #0" in text
    assert "np.linalg.eigh" in text and _loc(K.eig_loop, 3) in text and "1.15 M" in text and "51.8 kB" in text
    res = trace_function(K.l2, (np.ones(3),), mode="interpreted")
    assert not print_library_calls(Console(record=True), "l2 #0", res.info)


def _addr(arr, idx):
    return _dev(arr) + sum(i * s for i, s in zip(idx, arr.strides))


def _reference_dot(a, b, out):
    """Records (op, addr, size, taken, tid) of ``np.dot(a, b)`` for 1-D/2-D operands, as the rule says."""
    fp = a.dtype.kind == "f" or b.dtype.kind == "f"
    dtype = np.result_type(a, b)  # the product's (a Python float when compiled code returns a scalar)
    mul, acc = (_float_class(Op.FP_MUL, dtype), _float_class(Op.FP_ALU, dtype)) if fp else (Op.INT_MUL, Op.INT_ALU)
    K_ = a.shape[-1]
    recs = []

    def inner(ia, ib, tid_of):
        for k in range(K_):
            recs.extend(
                [
                    (Op.LOAD, _addr(a, ia(k)), a.itemsize, 0, tid_of(k)),
                    (Op.LOAD, _addr(b, ib(k)), b.itemsize, 0, tid_of(k)),
                    (mul, 0, 0, 0, tid_of(k)),
                    (acc, 0, 0, 0, tid_of(k)),
                    (Op.INT_ALU, 0, 0, 0, tid_of(k)),
                    (Op.BRANCH, 0, 0, int(k < K_ - 1), tid_of(k)),
                ]
            )

    if a.ndim == 1 and b.ndim == 1:
        recs.append((Op.MOVE, 0, 0, 0, -1))
        inner(lambda k: (k,), lambda k: (k,), lambda k: k)
        recs.append((Op.MOVE, 0, 0, 0, -1))
        return recs
    outs = list(np.ndindex(out.shape))
    for o, idx in enumerate(outs):
        recs.append((Op.MOVE, 0, 0, 0, o))
        inner(
            lambda k: (idx[0], k) if a.ndim == 2 else (k,), lambda k: (k, idx[-1]) if b.ndim == 2 else (k,), lambda k: o
        )
        recs += [(Op.STORE, _addr(out, idx), out.itemsize, 0, o), (Op.INT_ALU, 0, 0, 0, o),
                 (Op.BRANCH, 0, 0, int(o < len(outs) - 1), o)]
    return recs


def _reference_sum_axis(a, ax, out):
    fp = out.dtype.kind == "f"
    recs = []
    rest = [d for d in range(a.ndim) if d != ax]
    outs = list(np.ndindex(*[a.shape[d] for d in rest]))
    for o, oidx in enumerate(outs):
        recs.append((Op.MOVE, 0, 0, 0, o))
        n = a.shape[ax]
        for r in range(n):
            idx = list(oidx)
            idx.insert(ax, r)
            recs += [(Op.LOAD, _addr(a, idx), a.itemsize, 0, o),
                     (_float_class(Op.FP_ALU, out.dtype) if fp else Op.INT_ALU, 0, 0, 0, o),
                     (Op.INT_ALU, 0, 0, 0, o), (Op.BRANCH, 0, 0, int(r < n - 1), o)]
        recs += [(Op.STORE, _addr(out, oidx), out.itemsize, 0, o), (Op.INT_ALU, 0, 0, 0, o),
                 (Op.BRANCH, 0, 0, int(o < len(outs) - 1), o)]
    return recs


def _strided(draw, shape, dtype):
    """An array of ``shape`` drawn contiguous, transposed or as a strided view."""
    how = draw(st.sampled_from(["c", "t", "s"]))
    if how == "t" and len(shape) == 2:
        return np.arange(1, 1 + shape[0] * shape[1], dtype=dtype).reshape(shape[::-1]).T
    if how == "s":
        return np.arange(1, 1 + 2 * int(np.prod(shape)), dtype=dtype).reshape(shape[:-1] + (2 * shape[-1],))[..., ::2]
    return np.arange(1, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape)


@st.composite
def _dot_operands(draw):
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    dtype = draw(st.sampled_from([np.float64, np.int64, np.float32]))
    sa = draw(st.sampled_from([(k,), (m, k)]))
    sb = draw(st.sampled_from([(k,), (k, n)]))
    return _strided(draw, sa, dtype), _strided(draw, sb, dtype)


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPerformanceWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_dot_operands(), st.sampled_from(MODES))
def test_dot_matches_the_reference(ops, mode):
    a, b = ops
    if a.dtype.kind == "i":
        mode = "interpreted"  # Numba's np.dot is BLAS: floating point only
    sink = MemorySink()
    res = trace_function(K.dot, (a, b), sinks=[sink], mode=mode)
    out = res.value
    np.testing.assert_allclose(out, np.dot(a, b))
    c = sink.regions[0][2]
    got = list(zip((Op(o) for o in c.op), c.addr.tolist(), c.size.tolist(), c.taken.tolist(), c.tid.tolist()))
    assert got == _reference_dot(a, b, out)


@st.composite
def _axis_operands(draw):
    nd = draw(st.integers(2, 3))
    shape = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    a = _strided(draw, shape, draw(st.sampled_from([np.float64, np.int32])))
    return a, draw(st.integers(-nd, nd - 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_axis_operands(), st.sampled_from(MODES))
def test_axis_sum_matches_the_reference(ops, mode):
    a, ax = ops
    sink = MemorySink()
    res = trace_function(K.sum_axis, (a, ax), sinks=[sink], mode=mode)
    out = res.value
    np.testing.assert_array_equal(out, np.sum(a, axis=ax))
    c = sink.regions[0][2]
    got = list(zip((Op(o) for o in c.op), c.addr.tolist(), c.size.tolist(), c.taken.tolist(), c.tid.tolist()))
    assert got == _reference_sum_axis(a, ax % a.ndim, out)
