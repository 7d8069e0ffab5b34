"""The thread space chosen from the source (profiler/threadspace/): verdicts on loop patterns, the choice
among loops and called functions, nest collapse, and what reaches the trace and its metadata."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import portcast
from profiler.session import trace_function
from profiler.threadspace import analyse_function
from profiler.trace import MemorySink

MODES = ("interpreted", "compiled")


def plan(fn):
    meta = analyse_function(fn).to_json()
    loops = [(lp["function"], lp["header"], lp["dims"], lp["static"], lp["reductions"]) for lp in meta["loops"]]
    return meta["how"], loops, meta


# ---- verdicts on single loops -------------------------------------------------------------------------------


def k_independent(x, y):
    for i in range(x.shape[0]):
        t = 2.0 * x[i]
        y[i] = t + 1.0


def k_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def k_max_if(x):
    best = -1e300
    arg = -1
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
            arg = i
    return arg


def k_minmax(x):
    lo = 1e300
    for i in range(x.shape[0]):
        lo = min(lo, x[i])
    return lo


def k_scan(x, out):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
        out[i] = acc


def k_recurrence(x):
    v = 1.0
    for i in range(x.shape[0]):
        v = v * 0.5 + x[i] * v
    return v


def k_in_place_shift(x):
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] + x[i]


def k_same_element_update(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0


def k_histogram(data, count):
    for i in range(data.shape[0]):
        count[data[i]] += 1


def k_same_store(x, out):
    for i in range(x.shape[0]):
        out[0] = x[i]


def k_private(x, out):
    for i in range(x.shape[0]):
        tmp = np.zeros(3)
        tmp[0] = x[i]
        tmp[1] = 2.0 * x[i]
        out[i] = tmp[0] + tmp[1]


def k_row_view(a):
    for i in range(a.shape[0]):
        row = a[i]
        for j in range(a.shape[1]):
            row[j] = 0.0


def k_break(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            break
        x[i] = 1.0


def k_append(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i])
    return out


def k_append_if(x):
    out = []
    for i in range(x.shape[0]):
        if x[i] > 0:
            out.append(x[i])
    return out


def k_compact(x, out):
    n = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            out[n] = x[i]
            n += 1
    return n


def k_counter_read(x, out, pos):
    n = 0
    for i in range(x.shape[0]):
        out[n] = x[i]
        pos[i] = n
        n += 1


def k_while(x):
    i = 0
    while i < x.shape[0]:
        x[i] = 0.0
        i += 1


def k_maybe_unset(x, out):
    for i in range(x.shape[0]):
        for k in range(3):
            last = x[i] + k
        out[i] = last


@pytest.mark.parametrize("fn, verdict, reductions, dims", [
    (k_independent, "independent", [], 1),
    (k_sum, "reduction", ["s (+)"], 1),
    (k_max_if, "reduction", ["best (min/max)"], 1),
    (k_minmax, "reduction", ["lo (min)"], 1),
    (k_scan, "scan", ["acc (+ scan)"], 1),
    (k_same_element_update, "independent", [], 1),
    (k_histogram, "atomic", [], 1),
    (k_private, "independent", [], 1),
    (k_row_view, "independent", [], 1),
    (k_maybe_unset, "independent", [], 1),
    (k_append, "independent", [], 1),
    (k_compact, "atomic", ["n (append counter)"], 1),
])
def test_parallel_verdicts(fn, verdict, reductions, dims):
    how, loops, meta = plan(fn)
    assert how == "inferred"
    assert loops == [(fn.__qualname__, loops[0][1], dims, verdict, reductions)]
    assert meta["rejected"] == []


@pytest.mark.parametrize("fn, why", [
    (k_recurrence, "`v` is read before it is assigned in an iteration"),
    (k_in_place_shift, "reads `x[i - 1]` while the loop stores `x[i]`"),
    (k_same_store, "every iteration stores `out[0]` (the element does not depend on i): conflicting writes"),
    (k_break, "break (the iterations after the exit must not run)"),
    (k_append_if, ".append() grows a container in iteration order"),
    (k_counter_read, "every iteration stores `out[n]` (the element does not depend on i): conflicting writes"),
    (k_while, "a while loop"),
])
def test_sequential_loops_are_no_thread_space(fn, why):
    how, loops, meta = plan(fn)
    assert how == "none" and loops == []
    assert len(meta["rejected"]) == 1
    assert any(why in w for w in meta["rejected"][0]["why"]), meta["rejected"][0]["why"]
    line = fn.__code__.co_firstlineno
    assert any(
        f"test_profiler_threadspace.py:{line + d}:" in w for d in range(1, 6) for w in meta["rejected"][0]["why"]
    )


def test_histogram_names_the_atomic_array():
    _, _, meta = plan(k_histogram)
    line = k_histogram.__code__.co_firstlineno + 2
    assert meta["loops"][0]["atomics"] == [f"`count[data[i]]` ({__file__}:{line})"]


def test_one_append_per_iteration_is_a_map_and_a_counter_is_an_atomic_append():
    _, _, meta = plan(k_append)
    line = k_append.__code__.co_firstlineno + 3
    assert meta["loops"][0]["reasons"] == [f"{__file__}:{line}: `out.append()` adds one entry per iteration: entry k "
                                           "is iteration k's (a GPU thread writes it by its index)"]
    _, _, meta = plan(k_compact)
    line = k_compact.__code__.co_firstlineno + 4
    assert meta["loops"][0]["atomics"] == [f"`out[n]` ({__file__}:{line}): appended through the counter `n` (an atomic "
                                           "add on a GPU; the entries' order may differ)"]


@pytest.mark.parametrize("mode", MODES)
def test_an_append_counter_is_checked_on_the_trace_as_an_atomic_append(mode):
    from features import FeatureSink

    x = np.array([1.0, -2.0, 3.0, 4.0, -5.0, 6.0])
    out = np.zeros(6)
    sink = FeatureSink()
    res = trace_function(k_compact, (x, out), sinks=[sink], mode=mode)
    assert res.value == 4 and list(out[:4]) == [1.0, 3.0, 4.0, 6.0]
    info, f = sink.results[0]
    loop = sink.thread_spaces[0]["loops"][0]
    assert (loop["verdict"], loop["launches"], loop["threads"]) == ("atomic", 1, 6)
    # threads 2, 3 and 5 take the counter from an earlier appending thread, each reading it twice (the store's
    # index and the increment): 6 reads of a reduction register, no carried dependence
    assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == loop["counts"]["reduction"] == 6


# ---- choosing among loops and functions ------------------------------------------------------------------------


def h_scale(x, a):
    for i in range(x.shape[0]):
        x[i] *= a


def h_norm2(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def power_iteration(x, steps):
    lam = 0.0
    for it in range(steps):
        lam = h_norm2(x)
        h_scale(x, 1.0 / lam)
    return lam


def marked_helper(x, y):
    for i in numba.prange(x.shape[0]):
        y[i] = 2.0 * x[i]


def uses_marked_helper(x, y, steps):
    for s in range(steps):
        marked_helper(x, y)
        for i in range(x.shape[0]):  # independent, but the region marks its loops: this one stays on the host
            x[i] = y[i]


def nested_marks(a):
    for i in numba.prange(a.shape[0]):
        for j in numba.prange(a.shape[1]):
            for k in range(a.shape[2]):
                a[i, j, k] = i + j + k


def marked_outer_sequential_inner(a):
    for i in portcast.parallel(range(a.shape[0])):
        for j in range(1, a.shape[1]):
            a[i, j] += a[i, j - 1]


def inner_kernel_also_called_inside(x, y):
    for i in range(x.shape[0]):
        y[i] = h_norm2(x[i:i + 1])
    return h_norm2(x)


def test_kernels_in_called_functions_under_a_host_iteration_loop():
    how, loops, meta = plan(power_iteration)
    assert how == "inferred"
    assert [(f, d, v) for f, _, d, v, _ in loops] == [("h_norm2", 1, "reduction"), ("h_scale", 1, "independent")]
    assert [r["header"] for r in meta["rejected"]] == ["for it in range(steps)"]
    line = h_norm2.__code__.co_firstlineno + 3
    assert meta["rejected"][0]["why"][0] == (
        f"{__file__}:{line}: reads `x` (as `x[i]` in h_norm2) while the loop stores `x` (as `x[i]` in h_scale): "
        "a value written by another iteration may be read")


def test_marks_in_helpers_are_used_and_unmarked_loops_stay_on_the_host():
    how, loops, _ = plan(uses_marked_helper)
    assert how == "marked"
    assert [(f, d, v) for f, _, d, v, _ in loops] == [("marked_helper", 1, "independent")]


def test_perfect_nests_collapse_until_a_sequential_loop():
    assert plan(nested_marks)[1] == [("nested_marks", "for i in numba.prange(a.shape[0])", 3, "independent", [])]
    _, loops, _ = plan(marked_outer_sequential_inner)
    assert [(d, v) for _, _, d, v, _ in loops] == [(1, "independent")]


def grid_stride(x, out, total):
    for gid in numba.prange(total):
        for i in range(gid, x.shape[0], total):
            out[i] = 2.0 * x[i]


def triangle(a):
    for i in numba.prange(a.shape[0]):
        for j in range(i):
            a[i, j] = 1.0


def test_an_inner_loop_whose_range_depends_on_the_outer_index_is_not_collapsed():
    # a grid-stride loop (and a triangle) runs inside the outer loop's threads: one thread per gid, not per element
    for fn in (grid_stride, triangle):
        assert [(d, v) for _, _, d, v, _ in plan(fn)[1]] == [(1, "independent")]


@pytest.mark.parametrize("mode", MODES)
def test_a_grid_stride_region_has_one_thread_per_outer_iteration(mode):
    x, out = np.arange(100.0), np.zeros(100)
    res = trace_function(grid_stride, (x, out, 8), sinks=[MemorySink()], mode=mode)
    assert res.info.n_threads == 8 and out.tolist() == (2.0 * x).tolist()


def test_a_function_called_from_inside_a_kernel_gives_no_second_thread_space():
    how, loops, meta = plan(inner_kernel_also_called_inside)
    assert [(f, v) for f, _, _, v, _ in loops] == [("inner_kernel_also_called_inside", "independent")]
    assert any("h_norm2 is also called from inside another thread loop" in n for n in meta["notes"])


# ---- privatisation: arrays every iteration writes before it reads ------------------------------------------------


def p_row_buffer(u, out):
    n1 = u.shape[1]
    b = np.empty(n1)
    for i in range(u.shape[0]):
        for k in range(n1):
            b[k] = 2.0 * u[i, k]
        for k in range(1, n1 - 1):
            out[i, k] = b[k - 1] + b[k] + b[k + 1]


def p_block(x, out):
    m, n = 4, x.shape[1]
    s = np.zeros((m, n))
    for i in range(x.shape[0]):
        s[:] = 0.0
        for j in range(m):
            for k in range(2, n):
                s[j, k] = x[i, k] * j
        for k in range(n):
            out[i, k] = s[0, k] + s[m - 1, k]


def p_param_buffer(x, buf, out):
    for i in range(x.shape[0]):
        for k in range(len(buf)):
            buf[k] = x[i, k] + 1.0
            buf[k] += 1.0  # the thread's own element: no atomic update
        for k in range(len(buf)):
            out[i, k] = buf[k] * buf[k]


def p_slice_update(x, out):
    b = np.zeros(3)
    for i in range(x.shape[0]):
        b[:] = x[i, 0]
        b[1:3] += x[i, 1]
        out[i, 0] = b[0] + b[2]


def p_read_after(x, out):
    b = np.empty(x.shape[1])
    for i in range(x.shape[0]):
        for k in range(x.shape[1]):
            b[k] = x[i, k]
        for k in range(x.shape[1]):
            out[i, k] = b[k]
    return b.sum()


def p_partial(x, out):
    n = x.shape[1]
    b = np.zeros(n)
    for i in range(x.shape[0]):
        for k in range(1, n):
            b[k] = x[i, k]
        for k in range(n):
            out[i, k] = b[k]


def p_under_if(x, out):
    b = np.zeros(1)
    for i in range(x.shape[0]):
        if x[i] > 0:
            b[0] = x[i]
        out[i] = b[0]


def p_read_first(x, out):
    n = x.shape[1]
    b = np.zeros(n)
    for i in range(x.shape[0]):
        for k in range(n):
            out[i, k] = b[k]
        for k in range(n):
            b[k] = x[i, k]


def p_diagonal(x, out):
    n = x.shape[1]
    b = np.zeros((n, n))
    for i in range(x.shape[0]):
        for k in range(n):
            b[k, k] = x[i, k]
        for k in range(n):
            out[i, k] = b[k, 0]


def p_bound_changes(x, out):
    n = x.shape[1]
    b = np.zeros(n)
    for i in range(x.shape[0]):
        m = n - 2
        for k in range(m):
            b[k] = x[i, k]
        m = n
        for k in range(m):
            out[i, k] = b[k]


def p_shadowed(x, out):
    n = x.shape[1]
    b = np.zeros(n)
    for i in range(x.shape[0]):
        for k in range(n):
            b[k] = x[i, k]
            for k in range(2):
                out[i, k] = b[k]


def p_viewed(x, out):
    b = np.zeros(x.shape[1])
    v = b[1:]
    for i in range(x.shape[0]):
        for k in range(x.shape[1]):
            b[k] = x[i, k]
        v[0] = 1.0
        out[i] = b[1]


def p_fill(b, k, value):
    b[k] = value


def p_called(x, out):
    b = np.zeros(2)
    for i in range(x.shape[0]):
        b[0] = x[i]
        p_fill(b, 1, x[i])
        out[i] = b[0] + b[1]


def _line(fn, offset):
    return f"{__file__}:{fn.__code__.co_firstlineno + offset}"


@pytest.mark.parametrize("fn, loop, line, buffers, note", [
    (p_row_buffer, 3, 5, ["b"], None),
    (p_block, 3, 4, ["s"], None),  # `s[:] = 0.0` covers what the nest below it leaves out
    (p_param_buffer, 1, 3, ["buf"], "(a parameter: the caller sees it)"),
    (p_read_after, 2, 4, ["b"], "(read outside the loop at line {})"),
    (p_slice_update, 2, 3, ["b"], None),
])
def test_a_buffer_written_before_it_is_read_is_private(fn, loop, line, buffers, note):
    how, loops, meta = plan(fn)
    assert how == "inferred" and meta["rejected"] == []
    assert loops == [(fn.__qualname__, loops[0][1], 1, "independent", [])]
    kernel = meta["loops"][0]
    assert kernel["location"] == _line(fn, loop)
    assert kernel["private"] == [f"`{b}` ({_line(fn, line)})" for b in buffers]
    if note is None:
        assert kernel["reasons"] == []
    else:
        text = note.format(fn.__code__.co_firstlineno + 7)  # `return b.sum()`
        assert kernel["reasons"] == [f"{_line(fn, line)}: `{buffers[0]}` is written before it is read in every "
                                     f"iteration (private to the thread); its values after the loop are the last "
                                     f"iteration's {text}"]


@pytest.mark.parametrize("fn, loop, why", [
    (p_partial, 3, "reads `b[k]` before the iteration has written it"),  # b[0] is not written
    (p_under_if, 2, "reads `b[0]` before the iteration has written it"),
    (p_read_first, 3, "reads `b[k]` before the iteration has written it"),
    (p_diagonal, 3, "reads `b[k, 0]` before the iteration has written it"),
    # `m` changes between the loops: the store's region cannot be named, the store fails the buffer
    (p_bound_changes, 3, "every iteration stores `b[k]` (the element does not depend on i): conflicting writes"),
    # the inner loop rebinds `k`: `b[k]` there is not the element just written
    (p_shadowed, 3, "every iteration stores `b[k]` (the element does not depend on i): conflicting writes"),
])
def test_a_buffer_not_surely_written_before_it_is_read_is_not_private(fn, loop, why):
    _, _, meta = plan(fn)
    outer = _line(fn, loop)
    rejected = {r["location"]: r["why"] for r in meta["rejected"]}
    assert outer in rejected
    assert any(why in w for w in rejected[outer]), rejected[outer]
    assert all(outer != lp["location"] for lp in meta["loops"])


@pytest.mark.parametrize("fn, loop, why", [
    (p_viewed, 3, "every iteration stores `b[k]` (the element does not depend on i): conflicting writes"),
    (p_called, 2, "every iteration stores `b[0]` (the element does not depend on i): conflicting writes"),
])
def test_a_buffer_seen_through_another_name_or_function_is_not_private(fn, loop, why):
    _, _, meta = plan(fn)
    rejected = {r["location"]: r["why"] for r in meta["rejected"]}
    assert why in rejected[_line(fn, loop)][0]
    assert not any("before the iteration has written it" in w for w in rejected[_line(fn, loop)])


@pytest.mark.parametrize("mode", MODES)
def test_private_buffers_on_the_trace(mode):
    """The trace check counts no dependence at the private stores (the slice store's elements included)."""
    import features

    x = np.arange(24.0).reshape(6, 4)
    for fn, loop in ((p_row_buffer, 3), (p_block, 3), (p_param_buffer, 1), (p_slice_update, 2)):
        out = np.zeros_like(x)
        args = (x, np.zeros(4), out) if fn is p_param_buffer else (x, out)
        fs = features.FeatureSink()
        trace_function(fn, args, sinks=[fs], mode=mode)
        _, f = fs.results[0]
        ts = fs.thread_spaces[0]
        kernel = ts["loops"][0]
        assert (kernel["location"], kernel["verdict"], kernel["launches"], kernel["threads"]) == \
            (_line(fn, loop), "parallel", 1, 6)
        assert f["ts_carriedDeps"] == 0 and f["ts_atomicDeps"] == 0
        # threads 1..5 store over what the thread before wrote: b's 4 elements; s's 16 (`s[:]`) and, of the
        # nest's 8, the 4 elements the thread before read (s[0, 2:], s[3, 2:]) (each thread wrote them just
        # before); buf's 4, then 4 updates of what the thread before read
        # b's 3 elements, then the 2 updated ones (read by the thread before)
        assert kernel["privatised"] == {p_row_buffer: 5 * 4, p_block: 5 * (16 + 4), p_param_buffer: 5 * 8,
                                        p_slice_update: 5 * (3 + 2)}[fn]
        if fn is p_param_buffer:
            np.testing.assert_allclose(out, (x + 2.0) ** 2)
            np.testing.assert_allclose(args[1], x[-1] + 2.0)  # the last iteration's values


# ---- what reaches the trace -------------------------------------------------------------------------------------


def grid(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = i * 10 + j


@pytest.mark.parametrize("mode", MODES)
def test_a_collapsed_nest_numbers_threads_by_linear_index(mode):
    a = np.zeros((3, 4))
    sink = MemorySink()
    res = trace_function(grid, (a,), sinks=[sink], mode=mode)
    info, static, chunk = sink.regions[0]
    stores = chunk.tid[chunk.op == 9]
    assert stores.tolist() == list(range(12))
    assert res.info.n_threads == 12 and a[2, 3] == 23.0
    ts = info.extra["thread_space"]
    loop = ts["loops"][0]
    assert loop["dims"] == 2 and loop["nest"] == [f"{__file__}:{grid.__code__.co_firstlineno + 1}",
                                                   f"{__file__}:{grid.__code__.co_firstlineno + 2}"]
    assert static[loop["latch_pc"]].kind == "branch:loop" and static[loop["latch_pc"]].line == \
        grid.__code__.co_firstlineno + 2
    assert sorted(ts["induction_pcs"]) == sorted(e.pc for e in static if e.kind == "loop:next")


@pytest.mark.parametrize("mode", MODES)
def test_kernels_in_helpers_are_launched_once_per_call(mode):
    x = np.full(5, 2.0)
    sink = MemorySink()
    trace_function(power_iteration, (x, 3), sinks=[sink], mode=mode)
    info, static, chunk = sink.regions[0]
    tid = chunk.tid
    starts = np.flatnonzero((tid >= 0) & (np.r_[True, tid[:-1] < 0] | (tid < np.r_[-1, tid[:-1]])))
    assert len(starts) == 6  # norm, scale per iteration
    assert info.n_threads == 5
    ts = info.extra["thread_space"]
    assert list(ts["reduction_tokens"].values()) == [f"s (+), {__file__}:{h_norm2.__code__.co_firstlineno + 2}"]


def test_the_report_marks_a_private_buffer_seen_after_the_loop():
    from portcast.report import _private_text

    _, _, meta = plan(p_param_buffer)
    assert _private_text(meta["loops"][0]) == \
        f"per-thread buffers `buf` (test_profiler_threadspace.py:{p_param_buffer.__code__.co_firstlineno + 3}, " \
        "last value kept)"
    _, _, meta = plan(p_row_buffer)
    assert _private_text(meta["loops"][0]) == \
        f"per-thread buffers `b` (test_profiler_threadspace.py:{p_row_buffer.__code__.co_firstlineno + 5})"
