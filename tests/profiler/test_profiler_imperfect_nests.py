"""Imperfect nests (profiler/threadspace/sinking.py, ``_sink_barrier``): which statements between loop headers are
sunk into the inner loop so the nest collapses, and which keep the outer loop's threads."""

from __future__ import annotations

import math

import numpy as np
import pytest

import features
from profiler.session import trace_function
from profiler.threadspace import analyse_function

MODES = ("interpreted", "compiled")


def nest_of(fn):
    """(dims, sunk statement texts) of the region's only kernel loop."""
    meta = analyse_function(fn).to_json()
    assert len(meta["loops"]) == 1
    lp = meta["loops"][0]
    return lp["dims"], [s["text"] for s in lp["sunk"]]


# ---- sunk -----------------------------------------------------------------------------------------------------


def row_scale(x, y, out):
    for i in range(out.shape[0]):
        xi = x[i] * 2.0
        for j in range(out.shape[1]):
            out[i, j] = xi * y[j]


def pure_functions(w, out):
    for i in range(out.shape[0]):
        c = math.cos(i * w) + np.sqrt(i) + abs(w)
        d = 1.0 if c > 0.0 else -1.0
        for j in range(out.shape[1]):
            out[i, j] = c * d + j


def sunk_at_two_levels(out):
    for i in range(out.shape[0]):
        a = i * 3
        for j in range(out.shape[1]):
            b = a + j
            for k in range(out.shape[2]):
                out[i, j, k] = b * k


def test_scalars_from_outer_indices_and_invariants_are_sunk():
    assert nest_of(row_scale) == (2, ["xi = x[i] * 2.0"])
    assert nest_of(pure_functions) == (2, ["c = math.cos(i * w) + np.sqrt(i) + abs(w)",
                                           "d = 1.0 if c > 0.0 else -1.0"])
    assert nest_of(sunk_at_two_levels) == (3, ["a = i * 3", "b = a + j"])


# ---- barriers -------------------------------------------------------------------------------------------------


def stores_between(x, tmp, out):
    for i in range(out.shape[0]):
        tmp[i] = x[i]
        for j in range(out.shape[1]):
            out[i, j] = x[i] * j


def used_after(x, out):
    t = 0.0
    for i in range(out.shape[0]):
        t = x[i] + 1.0
        for j in range(out.shape[1]):
            out[i, j] = t * j
    return t


def reads_stored_array(out):
    for i in range(out.shape[0]):
        t = out[i, 0]
        for j in range(out.shape[1]):
            out[i, j] = t + j


def triangular(out):
    for i in range(out.shape[0]):
        m = i + 1
        for j in range(m):
            out[i, j] = i + j


def bound_between(out):
    for i in range(out.shape[0]):
        m = out.shape[1] - 1
        for j in range(m):
            out[i, j] = i + j


def if_between(x, out):
    for i in range(out.shape[0]):
        if x[i] > 0:
            c = 1.0
        else:
            c = 2.0
        for j in range(out.shape[1]):
            out[i, j] = c * j


def helper(x, i):
    return x[i] * 2.0


def user_call(x, out):
    for i in range(out.shape[0]):
        c = helper(x, i)
        for j in range(out.shape[1]):
            out[i, j] = c * j


def random_draw(out):
    for i in range(out.shape[0]):
        r = np.random.random()
        for j in range(out.shape[1]):
            out[i, j] = r * j


def statement_after_inner(x, out, rowsum):
    for i in range(out.shape[0]):
        t = x[i]
        for j in range(out.shape[1]):
            out[i, j] = t * j
        rowsum[i] = t


def inner_atomic(x, out):
    for i in range(out.shape[0]):
        t = x[i]
        for k in range(x.shape[0]):
            out[i] += t * k


@pytest.mark.parametrize("fn", [stores_between, used_after, reads_stored_array, triangular, bound_between,
                                if_between, user_call, random_draw, statement_after_inner, inner_atomic])
def test_barriers_keep_the_outer_loops_threads(fn):
    """A store, a value used after the nest, a load of an array the nest stores, an inner range computed
    between the headers (a triangular nest stays triangular; an invariant bound is also kept, conservatively),
    an ``if``, a user function, a call that is not pure, a statement after the inner loop, and an inner loop
    with atomic updates behind a sunk statement: no collapse."""
    assert nest_of(fn) == (1, [])


def test_the_tiled_matmul_keeps_one_thread_per_output_tile():
    """The corpus's matmul_tiled: the tile bounds between the headers could be sunk, but the k-tile loop updates
    the output tile (atomic), so the marked tile loop stays the 1-D thread space."""
    from kernels.matmul_tiled import matmul_tiled_cpu

    meta = analyse_function(matmul_tiled_cpu).to_json()
    assert [(lp["header"], lp["dims"], lp["sunk"]) for lp in meta["loops"]] == [
        ("for b in numba.prange(nbi * nbj)", 1, [])]


def test_the_barrier_says_why():
    from profiler.threadspace.plan import Analysis
    from profiler.threadspace.sinking import _sink_barrier

    reasons = {}
    for fn in (stores_between, used_after, reads_stored_array, if_between, user_call, random_draw):
        a = Analysis()
        f = a.facts(fn)
        outer = next(lf for lf in f.loops.values() if lf.parent is None)
        reasons[fn.__name__] = _sink_barrier(f, [outer], outer.node.body[0], set(outer.targets))
    assert reasons == {
        "stores_between": "not an assignment of one scalar local",
        "used_after": f"`t` is read outside the nest (line {used_after.__code__.co_firstlineno + 6})",
        "reads_stored_array": "reads `out[i, 0]` of an array the nest stores",
        "if_between": "not an assignment of one scalar local",
        "user_call": "calls `helper` (not a pure function)",
        "random_draw": "calls `np.random.random` (not a pure function)",
    }


@pytest.mark.parametrize("mode", MODES)
def test_a_sunk_nest_is_one_launch_without_carried_dependences(mode):
    x, y = np.arange(6.0), np.arange(5.0)
    out = np.zeros((6, 5))
    fs = features.FeatureSink()
    trace_function(row_scale, (x, y, out), sinks=[fs], mode=mode)
    np.testing.assert_array_equal(out, 2.0 * x[:, None] * y[None, :])
    _, f = fs.results[0]
    lp = fs.thread_spaces[0]["loops"][0]
    assert (lp["dims"], lp["launches"], lp["threads"], lp["verdict"]) == (2, 1, 30, "parallel")
    assert f["ts_carriedDeps"] == 0 and f["warp_threads"] == 30 and f["warp_launches"] == 1
