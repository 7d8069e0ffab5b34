"""Lifetimes (issue 31): memory allocated inside an iteration is private to it whatever address it gets. The
allocation records (``np.empty``'s OTHER with the new array's address and size, the STOREs of a NumPy
operation's new result; the thread space's ``alloc_pcs``) make the dependence check forget what other threads
did with those bytes, in both tracing modes; an array that lives across iterations keeps its flow."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
import pytest
import realistic_programs as P
from test_realistic_programs import MODES, library_of, line_of, loops_of, profile

import features
from core.trace_schema import Op


def knn_inputs():
    rng = np.random.default_rng(0)
    return rng.random((50, 3)), rng.random((20, 3)), 4, np.zeros((20, 4))


def csr_inputs(n: int = 30):
    rng = np.random.default_rng(0)
    rowptr = np.concatenate([[0], np.cumsum(rng.integers(1, 6, n))]).astype(np.int64)
    cols = rng.integers(0, n, rowptr[-1]).astype(np.int64)
    return rng.random(rowptr[-1]), cols, rowptr, rng.random(n), np.zeros(n)


def alloc_records(info, static, trace):
    """(text of the allocation record's site, op, address) of every record at an ``alloc_pcs`` pc."""
    pcs = set(info.extra["thread_space"]["alloc_pcs"])
    at = np.flatnonzero(np.isin(trace.pc, list(pcs)))
    return [(static[int(trace.pc[i])].text, Op(int(trace.op[i])), int(trace.addr[i])) for i in at]


def recheck_without_allocations(res, trace):
    """The dependence check of the same trace with the metadata's ``alloc_pcs`` removed (as a trace of
    schema version 2 would be checked): its thread space and features."""
    ts = dict(res.info.extra["thread_space"])
    ts.pop("alloc_pcs")
    info = dataclasses.replace(res.info, extra={**res.info.extra, "thread_space": ts})
    fs = features.FeatureSink()
    fs.start_region(info, res.static)
    fs.consume(trace)
    fs.end_region(info, res.static)
    return fs.thread_spaces[0], fs.results[0][1]


@pytest.mark.parametrize("mode", MODES)
def test_knn_queue_allocated_in_each_query_is_private(mode):
    res, f, ts, trace = profile(P.knn_search, knn_inputs(), mode)
    assert ts["how"] == "marked"
    assert loops_of(ts) == [(line_of("knn.queries"), 1, "parallel", 1, 20)]
    assert library_of(ts) == []
    assert f["ts_carriedDeps"] == 0 and f["ts_atomicDeps"] == 0 and f["ts_reductionDeps"] == 0
    assert f["ts_parallelFraction"] == pytest.approx(1.0, abs=0.01)
    allocs = alloc_records(res.info, res.static, trace)
    empties = [a for a in allocs if a[1] == Op.OTHER]
    assert len(empties) == 20  # one np.empty((k, 2)) per query, with its address and size
    assert all(trace.size[i] == 4 * 2 * 8 for i in np.flatnonzero((trace.op == Op.OTHER) & (trace.size > 0)))
    if mode == "compiled":
        # Numba's allocator hands the freed queue back to the next query: without the allocation records the
        # check sees every query overwrite what the previous one read (how many depends on the allocator)
        assert len({a[2] for a in empties}) < 20
        ts2, f2 = recheck_without_allocations(res, trace)
        assert [lp["verdict"] for lp in ts2["loops"]] == ["sequential"] and f2["ts_carriedDeps"] > 0


@pytest.mark.parametrize("mode", MODES)
def test_knn_shared_queue_keeps_its_flow(mode):
    """Negative twin: one queue, allocated before the prange and never reset, carries each query's result
    into the next: the same read-after-write flow in both modes, with or without allocation records."""
    res, f, ts, trace = profile(P.knn_shared_queue, knn_inputs(), mode)
    assert ts["how"] == "marked"
    assert loops_of(ts) == [(line_of("knns.queries"), 1, "sequential", 1, 20)]
    assert ts["loops"][0]["counts"] == {"carried_register": 0, "reduction": 0, "read_after_write": 834,
                                        "write_after_read": 86, "write_after_write": 36, "atomic": 0,
                                        "same_value_race": 0}
    assert f["ts_carriedDeps"] == 834 + 86 + 36
    assert {e["kind"] for e in ts["loops"][0]["examples"]} >= {"read_after_write"}
    # the queue's np.full is host code (tid -1) before the launch: its allocation STOREs forget nothing inside it
    allocs = alloc_records(res.info, res.static, trace)
    assert {a[0] for a in allocs} == {"np.full((k, 2), np.inf): store"}
    assert all(trace.tid[i] == -1 for i in np.flatnonzero(np.isin(trace.pc, res.info.extra["thread_space"]
                                                                  ["alloc_pcs"])))


@pytest.mark.parametrize("mode", MODES)
def test_csr_rows_gather_temporaries_are_private(mode):
    res, f, ts, trace = profile(P.csr_matvec_slices, csr_inputs(), mode)
    assert ts["how"] == "inferred"
    assert loops_of(ts) == [(line_of("csrs.rows"), 1, "parallel", 1, 30)]
    assert library_of(ts) == []
    assert ts["rejected"] == []
    assert f["ts_carriedDeps"] == 0 and f["ts_atomicDeps"] == 0
    # the gather x[cols[lo:hi]] writes its new result with allocation STOREs, at addresses the rows share
    allocs = alloc_records(res.info, res.static, trace)
    assert {(a[0], a[1]) for a in allocs} == {("x[cols[lo:hi]]: store", Op.STORE)}
    rowptr = csr_inputs()[2]
    assert len(allocs) == int(rowptr[-1])
    assert len({a[2] for a in allocs}) < len(allocs)
    ts2, f2 = recheck_without_allocations(res, trace)
    assert [lp["verdict"] for lp in ts2["loops"]] == ["sequential"] and f2["ts_carriedDeps"] > 0


@pytest.mark.parametrize("mode", MODES)
def test_smooth_rows_flow_through_a_temporary_stays_on_the_host(mode):
    """Negative twin: each row is made from a temporary of the previous row; the rows loop carries the flow
    and stays on the host; the temporaries' expansions are launches of their own, parallel."""
    rng = np.random.default_rng(0)
    res, f, ts, trace = profile(P.smooth_rows, (rng.random((12, 8)), rng.random((12, 8))), mode)
    assert ts["how"] == "library"
    assert loops_of(ts) == []
    assert [r["location"] for r in ts["rejected"]] == [line_of("smr.rows")]
    assert "reads `a[i - 1]` while the loop stores `a[i]`" in ts["rejected"][0]["why"][0]
    assert library_of(ts) == [("a[i - 1] * 0.5", "parallel", 11, 8), ("a[i - 1] * 0.5 + b[i]", "parallel", 11, 8)]
    assert f["ts_carriedDeps"] == 0
    assert {a[0] for a in alloc_records(res.info, res.static, trace)} == {"a[i - 1] * 0.5: store",
                                                                          "a[i - 1] * 0.5 + b[i]: store"}


def test_both_modes_record_the_same_allocations():
    """The allocation records of the two modes: the same pcs, classes, sizes, threads and metadata (the
    addresses are each run's own)."""
    seen = []
    for mode in MODES:
        res, f, ts, trace = profile(P.knn_search, knn_inputs(), mode)
        pcs = res.info.extra["thread_space"]["alloc_pcs"]
        at = np.isin(trace.pc, pcs)
        seen.append((pcs, [res.static[p].text for p in pcs], trace.pc[at].tolist(), trace.op[at].tolist(),
                     trace.size[at].tolist(), trace.tid[at].tolist()))
    assert seen[0] == seen[1]
    pcs, texts, pc, op, size, tid = seen[0]
    # every site that may make a new array is listed (`t * t` too, which only ever meets numbers here); the
    # queue's slice assignments and the in-place `d += t * t`, `m -= 1` write memory that already lives
    assert texts == ["np.empty((k, 2))", "train[j, c] - test[q, c]: store", "t * t: store", "k - 1: store",
                     "d < queue[k - 1, 0]: store", "k - 1: store", "m > 0: store", "m - 1: store",
                     "queue[m - 1, 0] > d: store", "m - 1: store", "m - 1: store"]
    assert {res.static[p].text for p in pc} == {"np.empty((k, 2))"}
    assert op == [int(Op.OTHER)] * 20 and size == [64] * 20 and tid == list(range(20))


def test_allocation_records_survive_a_trace_file(tmp_path):
    """Schema version 3: the records' addresses and sizes and the metadata's alloc_pcs are in the file, and the
    check of the file finds what the check during tracing found."""
    from profiler.tracefile import TraceFile, write_trace

    res, f, ts, trace = profile(P.knn_search, knn_inputs(), "compiled")
    path = write_trace(tmp_path / "knn.parquet", res.info, res.static, [trace])
    tf = TraceFile(path)
    assert tf.schema_version == 3
    assert tf.info.extra["thread_space"]["alloc_pcs"] == res.info.extra["thread_space"]["alloc_pcs"]
    back = tf.read()
    assert np.array_equal(back.addr, trace.addr) and np.array_equal(back.size, trace.size)
    g = features.compute_features(path)
    assert g["ts_checked"] == 1 and g["ts_carriedDeps"] == 0 and g["ts_parallelFraction"] == f["ts_parallelFraction"]


def smooth_rows_marked(a, b):
    """smooth_rows with its rows loop marked (the user says it is parallel; it is not)."""
    for i in numba.prange(1, a.shape[0]):
        a[i, :] = a[i - 1] * 0.5 + b[i]


def smooth_rows_marked_row_store(a, b):
    """The same with the row written as ``a[i] = ...``."""
    for i in numba.prange(1, a.shape[0]):
        a[i] = a[i - 1] * 0.5 + b[i]


@pytest.mark.parametrize("mode", MODES)
def test_a_marked_flow_through_temporaries_stays_sequential(mode):
    """The temporaries of each row are forgotten (they reuse their addresses), the flow through ``a`` is not:
    row i reads the 8 elements row i - 1 stored, for rows 2..11."""
    rng = np.random.default_rng(0)
    res, f, ts, trace = profile(smooth_rows_marked, (rng.random((12, 8)), rng.random((12, 8))), mode)
    assert [(lp["static"], lp["verdict"], lp["launches"], lp["threads"]) for lp in ts["loops"]] == [
        ("sequential", "sequential", 1, 11)]
    assert {k: v for k, v in ts["loops"][0]["counts"].items() if v} == {"read_after_write": 80}
    assert f["ts_carriedDeps"] == 80


@pytest.mark.xfail(strict=True, reason="a row store `a[i] = v` of a 2-D array is one OTHER record (the tracer "
                   "expands slice assignments, not integer-indexed row stores), so the trace does not show the "
                   "write the next row reads; before allocation records the temporaries' reused addresses made "
                   "the loop sequential for the wrong reason")
@pytest.mark.parametrize("mode", MODES)
def test_a_marked_flow_through_a_row_store_stays_sequential(mode):
    rng = np.random.default_rng(0)
    res, f, ts, trace = profile(smooth_rows_marked_row_store, (rng.random((12, 8)), rng.random((12, 8))), mode)
    assert [lp["verdict"] for lp in ts["loops"]] == ["sequential"]
