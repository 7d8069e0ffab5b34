"""Property tests: instrumented code computes exactly what the original computes (generated programs), and
the two execution modes emit the same records."""

import itertools

import numba
import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from profiler_testing import load_source

from core.trace_schema import Op
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink

INT_VARS = ("a", "b", "c")

leaf_int = st.one_of(st.sampled_from(INT_VARS), st.integers(-5, 9).map(str))


def _int_expr(depth):
    if depth <= 0:
        return leaf_int
    sub = _int_expr(depth - 1)
    return st.one_of(
        leaf_int,
        st.tuples(sub, st.sampled_from(["+", "-", "*"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, st.sampled_from(["//", "%"]), st.integers(1, 4)).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(_bool_expr(depth - 1), sub, sub).map(lambda t: f"({t[1]} if {t[0]} else {t[2]})"),
        st.tuples(sub, sub).map(lambda t: f"min({t[0]}, {t[1]})"),
        sub.map(lambda e: f"abs({e})"),
    )


def _float_expr(depth):
    leaf = st.one_of(
        st.sampled_from(INT_VARS).map(lambda v: f"x[{v} % 4]"),
        st.floats(-3, 3, allow_nan=False).map(lambda f: repr(round(f, 3))),
    )
    if depth <= 0:
        return leaf
    sub = _float_expr(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(sub, st.sampled_from(["+", "-", "*"]), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        sub.map(lambda e: f"math.sqrt(abs({e}))"),
    )


def _bool_expr(depth):
    leaf = st.tuples(leaf_int, st.sampled_from(["<", "<=", "==", "!=", ">"]), leaf_int).map(lambda t: f"{t[0]} {t[1]} "
                                                                                                      f"{t[2]}")
    if depth <= 0:
        return leaf
    return st.one_of(
        leaf,
        st.tuples(leaf, st.sampled_from(["and", "or"]), leaf).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(leaf_int, leaf_int, leaf_int).map(lambda t: f"{t[0]} < {t[1]} <= {t[2]}"),
        leaf.map(lambda e: f"not ({e})"),
    )


def _stmt(depth):
    simple = st.one_of(
        st.tuples(st.sampled_from(INT_VARS), _int_expr(2)).map(lambda t: [f"{t[0]} = {t[1]}"]),
        st.tuples(st.sampled_from(INT_VARS), st.sampled_from(["+", "-", "*"]), _int_expr(1)).map(lambda t: [f"{t[0]} "
                                                                                                            f"{t[1]}= "
                                                                                                            f"{t[2]}"]),
        st.tuples(st.sampled_from(INT_VARS), _float_expr(2)).map(lambda t: [f"x[{t[0]} % 4] = {t[1]}"]),
        st.tuples(st.sampled_from(INT_VARS), _float_expr(1)).map(lambda t: [f"x[-1 - {t[0]} % 4] += {t[1]}"]),
        st.tuples(st.sampled_from(INT_VARS), st.sampled_from(INT_VARS)).map(lambda t: [f"{t[0]}, {t[1]} = {t[1]}, "
                                                                                       f"{t[0]}"]),
    )
    if depth <= 0:
        return simple
    block = st.lists(_stmt(depth - 1), min_size=1, max_size=3).map(lambda ls: list(itertools.chain(*ls)))
    ind = lambda ls: ["    " + s for s in ls]  # noqa: E731
    return st.one_of(
        simple,
        st.tuples(_bool_expr(1), block, block).map(lambda t: [f"if {t[0]}:", *ind(t[1]), "else:", *ind(t[2])]),
        st.tuples(st.integers(0, 3), block).map(lambda t: [f"for i in range({t[0]}):", *ind(t[1])]),
        # one counter per nesting depth, so an inner while cannot reset an outer one's counter
        st.tuples(_bool_expr(0), block).map(
            lambda t: [f"w{depth} = 0", f"while w{depth} < 3 and ({t[0]}):", f"    w{depth} += 1", *ind(t[1])]
        ),
        st.tuples(_bool_expr(0), block).map(
            lambda t: ["for j in range(4):", f"    if {t[0]}:", "        break", *ind(t[1])]
        ),
    )


programs = st.lists(_stmt(2), min_size=1, max_size=5).map(lambda ls: list(itertools.chain(*ls)))
_counter = itertools.count()


def _load(tmp_dir, lines):
    src = ("import math\n\n\ndef prog(a, b, c, x):\n    w0 = w1 = w2 = 0\n" + "".join(f"    {line}\n" for line in lines)
           + "    return a, b, c, w0 + 10 * w1 + 100 * w2\n")
    return load_source(tmp_dir, f"pc_generated_{next(_counter)}", src).prog, src


def _run_both(fn, ints, mode):
    x0 = np.array([0.5, -1.25, 2.0, 3.5])
    x_ref, x_tr = x0.copy(), x0.copy()
    want = fn(*ints, x_ref)
    sink = MemorySink()
    res = trace_function(fn, (*ints, x_tr), sinks=[sink], mode=mode)
    return want, x_ref, res, x_tr, sink.regions[0][2]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(lines=programs, ints=st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.integers(-6, 6)))
def test_generated_programs_compute_the_same_interpreted(tmp_path_factory, lines, ints):
    fn, src = _load(tmp_path_factory.mktemp("gen"), lines)
    want, x_ref, res, x_tr, chunk = _run_both(fn, ints, "interpreted")
    assert res.value == want, src
    assert np.array_equal(x_ref, x_tr), src
    chunk.validate()
    # every memory record points into x, 8 bytes, 8-aligned
    mem = (chunk.op == Op.LOAD) | (chunk.op == Op.STORE)
    base = _dev(x_tr)
    assert np.all((chunk.addr[mem] >= base) & (chunk.addr[mem] < base + 32) & ((chunk.addr[mem] - base) % 8 == 0)), src
    assert np.all(chunk.size[mem] == 8)


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(lines=programs, ints=st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.integers(-6, 6)))
def test_generated_programs_same_records_in_both_modes(tmp_path_factory, lines, ints):
    fn, src = _load(tmp_path_factory.mktemp("gen"), lines)
    want, x_ref, res_i, x_i, ci = _run_both(fn, ints, "interpreted")
    # compiled mode has Numba's semantics: programs whose plain njit run differs from Python (int64
    # overflow of `b *= abs(b)` chains, say) are not comparable, so they are not counted as examples
    x_nj = np.array([0.5, -1.25, 2.0, 3.5])
    assume(numba.njit(fn)(*ints, x_nj) == want and np.array_equal(x_nj, x_ref))
    _, _, res_c, x_c, cc = _run_both(fn, ints, "compiled")
    assert res_c.value == want and np.array_equal(x_c, x_ref), src
    assert len(ci) == len(cc), src
    for col in ("pc", "op", "taken", "src1", "src2", "src3", "dst", "size", "tid"):
        assert np.array_equal(getattr(ci, col), getattr(cc, col)), (col, src)
    mem = ci.size > 0
    assert np.array_equal(ci.addr[mem] - _dev(x_i), cc.addr[mem] - _dev(x_c)), src
