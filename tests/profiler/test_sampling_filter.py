"""The sampling filter (profiler/sampling.py) against a slow, obviously correct reference, and the compiled
tracer's in-place filter against the exact trace of the same region."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.trace_schema import N_OPS, Op
from profiler.sampling import (
    HOST_UNITS,
    INSTANCES,
    KEPT_HOST_UNITS,
    KEPT_INSTANCES,
    LAUNCHES,
    LOAD_BLOCK_REFS,
    LOAD_BYTES,
    MAX_TID,
    RECORDS,
    STORE_BYTES,
    THREAD_RECORDS,
    SampleFilter,
    SamplePlan,
    block_group,
    block_kept,
    interval_group,
    interval_kept,
    page_group,
    page_kept,
)
from profiler.session import trace_function
from profiler.trace import TraceChunk

LOAD, STORE, OTHER = int(Op.LOAD), int(Op.STORE), int(Op.OTHER)


class Keep:
    """Keeps copies of what a filter hands over, with the replicate groups of each row."""

    def __init__(self, filt_holder: list) -> None:
        self.holder = filt_holder
        self.rows: list[dict] = []
        self.side: list[dict] = []
        self.groups: list[np.ndarray] = []
        self.side_groups: list[np.ndarray] = []

    def start_region(self, info, static):
        pass

    def end_region(self, info, static):
        pass

    def consume(self, chunk):
        self.rows.append({k: np.array(getattr(chunk, k)) for k in ("pc", "op", "addr", "size", "tid")})
        self.groups.append(np.array(self.holder[0].chunk_groups))

    def consume_address_sample(self, chunk):
        self.side.append({k: np.array(getattr(chunk, k)) for k in ("pc", "op", "addr", "size", "tid")})
        self.side_groups.append(np.array(self.holder[0].address_groups))


def _chunk(rows) -> TraceChunk:
    pc, op, addr, size, tid = (np.array(c) for c in zip(*rows))
    z = np.zeros(len(rows), np.int32)
    return TraceChunk(pc=pc.astype(np.int32), op=op.astype(np.uint8), taken=z.astype(np.uint8), src1=z, src2=z,
                      src3=z, dst=z, addr=addr.astype(np.int64), size=size.astype(np.int32),
                      tid=tid.astype(np.int64))


def _reference(rows, plan: SamplePlan):
    """Every count, kept row and address-sample row, one record at a time."""
    c = {"records": 0, "thread_records": 0, "instances": 0, "kept": 0, "launches": 0, "max_tid": -1,
         "load_bytes": 0, "store_bytes": 0, "host_units": 0, "kept_host_units": 0}
    ops_all, ops_thr = np.zeros(N_OPS, np.int64), np.zeros(N_OPS, np.int64)
    kept, kept_groups, side, side_groups = [], [], [], []
    groups = np.zeros(plan.groups, np.int64)
    prev, keep, group, last_iv = -1, True, -1, -1
    for index, r in enumerate(rows):
        pc, op, addr, size, tid = r
        c["records"] += 1
        ops_all[op] += 1
        if tid >= 0:
            c["thread_records"] += 1
            ops_thr[op] += 1
            c["max_tid"] = max(c["max_tid"], tid)
            if prev < 0 or tid < prev:
                c["launches"] += 1
            if tid != prev:
                c["instances"] += 1
                keep = block_kept(tid // 256, plan, c["launches"])
                group = block_group(tid // 256, plan, c["launches"])
                if keep:
                    c["kept"] += 1
                    groups[group] += 1
        else:
            iv = index >> 14
            if iv != last_iv:
                last_iv = iv
                c["host_units"] += 1
                c["kept_host_units"] += interval_kept(iv, plan)
            if prev >= 0:  # the first host record after thread records separates launches: always kept
                keep, group = True, -1
            else:
                keep, group = interval_kept(iv, plan), interval_group(iv, plan)
        prev = tid
        if op == LOAD:
            c["load_bytes"] += size
            if size > 0:
                c["block_refs"] = c.get("block_refs", 0) + 1 + ((addr % 64) + size - 1) // 64
        if op == STORE:
            c["store_bytes"] += size
        if op in (LOAD, STORE) and size > 0 and page_kept(addr >> 12, plan):
            side.append((pc, op, addr, size, tid))
            side_groups.append(page_group(addr >> 12, plan))
        if keep:
            kept.append(r)
            kept_groups.append(group)
    return c, ops_all, ops_thr, kept, kept_groups, side, side_groups, groups


_row = st.tuples(st.integers(1, 9), st.sampled_from([0, 4, 8, 9, 10, 16, 15]), st.integers(0, 1 << 20),
                 st.sampled_from([0, 4, 8]), st.integers(-1, 3000))


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, min_size=1, max_size=400), st.sampled_from([0.05, 0.3, 0.7, 1.0]), st.integers(0, 3),
       st.integers(1, 4))
def test_filter_counts_and_keeps_what_the_reference_does(rows, rate, seed, n_chunks):
    rows = [(pc, op, addr if op in (LOAD, STORE) else 0, size if op in (LOAD, STORE) else 0, tid)
            for pc, op, addr, size, tid in rows]
    plan = SamplePlan.at_rate(rate, seed=seed)
    holder: list = []
    sink = Keep(holder)
    filt = SampleFilter(plan, [sink], n_pcs=16)
    holder.append(filt)
    bounds = np.linspace(0, len(rows), n_chunks + 1).astype(int)
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            filt.filter(_chunk(rows[a:b]))
    got = filt.finish()
    c, ops_all, ops_thr, kept, kept_groups, side, side_groups, groups = _reference(rows, plan)
    assert got[RECORDS] == c["records"] and got[THREAD_RECORDS] == c["thread_records"]
    assert got[INSTANCES] == c["instances"] and got[KEPT_INSTANCES] == c["kept"]
    assert got[LAUNCHES] == c["launches"] and got[MAX_TID] == c["max_tid"]
    assert got[LOAD_BYTES] == c["load_bytes"] and got[STORE_BYTES] == c["store_bytes"]
    assert got[LOAD_BLOCK_REFS] == c.get("block_refs", 0)
    assert got[HOST_UNITS] == c["host_units"] and got[KEPT_HOST_UNITS] == c["kept_host_units"]
    assert got.ops_all.tolist() == ops_all.tolist() and got.ops_thread.tolist() == ops_thr.tolist()
    assert got.group_instances.tolist() == groups.tolist()
    assert got.pcs.tolist() == np.bincount([r[0] for r in rows], minlength=16).tolist()
    kept_rows = [tuple(int(v[k][i]) for k in ("pc", "op", "addr", "size", "tid"))
                 for v in sink.rows for i in range(len(v["pc"]))]
    assert kept_rows == [tuple(r) for r in kept]
    assert (np.concatenate(sink.groups).tolist() if sink.groups else []) == kept_groups
    side_rows = [tuple(int(v[k][i]) for k in ("pc", "op", "addr", "size", "tid"))
                 for v in sink.side for i in range(len(v["pc"]))]
    real = [r for r in side_rows if not (r[1] == OTHER and r[4] == -1)]  # the launch markers aside
    assert real == [tuple(r) for r in side]
    g = np.concatenate(sink.side_groups).tolist() if sink.side_groups else []
    assert [x for x, r in zip(g, side_rows) if not (r[1] == OTHER and r[4] == -1)] == side_groups


def test_host_code_is_sampled_by_intervals_and_the_first_host_record_after_threads_is_kept():
    rows = []
    for k in range(12):  # host stretches of 9,000 records, each followed by a launch of 600 threads
        rows += [(5 if k else 2, 0, 0, 0, -1)] + [(2, 0, 0, 0, -1)] * 8999  # pc 5: the first after a launch
        rows += [(3, LOAD, 8 * t, 8, t) for t in range(600)]
    plan = SamplePlan.at_rate(0.3, seed=4)
    holder: list = []
    sink = Keep(holder)
    filt = SampleFilter(plan, [sink], n_pcs=8)
    holder.append(filt)
    for a in range(0, len(rows), 20000):
        filt.filter(_chunk(rows[a:a + 20000]))
    got = filt.finish()
    c, _, _, kept, kept_groups, *_ = _reference(rows, plan)
    assert got[HOST_UNITS] == c["host_units"] == 7  # of 8 intervals: the last holds thread records only
    assert 0 < got[KEPT_HOST_UNITS] == c["kept_host_units"] < got[HOST_UNITS]
    out = [tuple(int(v[k][i]) for k in ("pc", "op", "addr", "size", "tid")) for v in sink.rows
           for i in range(len(v["pc"]))]
    assert out == [tuple(r) for r in kept] and np.concatenate(sink.groups).tolist() == kept_groups
    # the host record that ends each launch is kept, whatever its interval
    assert sum(r[0] == 5 for r in out) == 11


def test_plan_checks_its_values():
    with pytest.raises(ValueError, match="block_rate must be in"):
        SamplePlan(0.0, 0.5)
    with pytest.raises(ValueError, match="page_rate must be in"):
        SamplePlan(0.5, 1.5)
    with pytest.raises(ValueError, match="groups must be"):
        SamplePlan(0.5, 0.5, groups=1)
    p = SamplePlan.at_rate(0.01)
    assert p.page_rate == 1.0 and p.page_shift == 0  # every page until the address sample's cap lowers it
    assert SamplePlan(0.5, 0.0625).page_shift == 4
    assert SamplePlan.auto(None) is None and SamplePlan.auto(4_000_000) is None
    assert SamplePlan.auto(1e8).block_rate == pytest.approx(0.01)


def test_a_full_address_sample_halves_its_page_rate_and_keeps_every_access_to_the_pages_below_it():
    rows = [(1, LOAD if i % 3 else STORE, 4096 * (i % 997) + 8 * (i % 7), 8, i % 5000) for i in range(20000)]
    plan = SamplePlan(1.0, 1.0, seed=5)
    holder: list = []
    sink = Keep(holder)
    filt = SampleFilter(plan, [sink], n_pcs=4, address_cap=3000)
    holder.append(filt)
    for a in range(0, len(rows), 4096):
        filt.filter(_chunk(rows[a:a + 4096]))
    assert sink.side == []  # the address sample goes to the sinks when the region ends
    got = filt.finish()
    assert got.page_rate == 0.125  # 20,000 accesses to 997 pages: 1/8 of them is under 3,000 accesses
    final = SamplePlan(1.0, got.page_rate, seed=5)
    want = [r for r in rows if page_kept(r[2] >> 12, final)]
    side = [tuple(int(v[k][i]) for k in ("pc", "op", "addr", "size", "tid")) for v in sink.side
            for i in range(len(v["pc"]))]
    assert [r for r in side if r[4] >= 0] == want and got.to_json()["address_sample_records"] == len(want)


def test_block_choice_follows_the_rate():
    plan = SamplePlan.at_rate(0.25, seed=3)
    share = np.mean([block_kept(b, plan) for b in range(20000)])
    assert abs(share - 0.25) < 0.01
    counts = np.bincount([block_group(b, plan) for b in range(16000)], minlength=plan.groups)
    assert counts.min() > 1800 and counts.max() < 2200


@numba.njit
def _triad(a, b, c, s):
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


@numba.njit
def _steps(u, v, steps):
    n = u.shape[0]
    t = 0.0
    for k in range(steps):
        for i in numba.prange(1, n - 1):
            v[i] = 0.5 * (u[i - 1] + u[i + 1])
        for i in numba.prange(1, n - 1):
            u[i] = v[i]
        t += u[1]
    return t


class Rows:
    def __init__(self):
        self.tid, self.op, self.n = [], [], 0

    def start_region(self, info, static):
        pass

    def end_region(self, info, static):
        pass

    def consume(self, chunk):
        self.tid.append(np.array(chunk.tid))
        self.op.append(np.array(chunk.op))


@pytest.mark.parametrize("fn,make", [
    (_triad, lambda: (np.zeros(70_000), np.arange(70_000.0), np.ones(70_000), 2.0)),
    (_steps, lambda: (np.linspace(0, 1, 9_000), np.zeros(9_000), 3)),
])
def test_compiled_filter_counts_the_exact_trace(fn, make):
    exact = Rows()
    r0 = trace_function(fn, make(), sinks=[exact], mode="compiled")
    tid, op = np.concatenate(exact.tid), np.concatenate(exact.op)
    plan = SamplePlan.at_rate(0.2, seed=1)
    kept = Rows()
    r1 = trace_function(fn, make(), sinks=[kept], mode="compiled", sample=plan)
    s = r1.info.extra["sample"]
    assert r1.info.n_records == r0.info.n_records == s["records"] == len(tid)
    assert s["thread_records"] == int((tid >= 0).sum())
    assert s["max_tid"] == int(tid.max())
    starts = (tid >= 0) & ((np.r_[-1, tid[:-1]] < 0) | (tid < np.r_[-1, tid[:-1]]))
    assert len(set(np.cumsum(starts)[tid >= 0].tolist())) == s["launches"]
    assert s["launches"] == int(starts.sum())
    changes = (tid >= 0) & (tid != np.r_[-1, tid[:-1]])
    assert s["thread_instances"] == int(changes.sum())
    launch = np.cumsum(starts)  # the launch of each record (from 1)
    keep_block = {(int(lc), int(b)): block_kept(int(b), plan, int(lc)) for lc, b in
                  set(zip(launch[tid >= 0].tolist(), (tid[tid >= 0] // 256).tolist()))}
    prev = np.r_[-1, tid[:-1]]
    ivs = {int(iv): interval_kept(int(iv), plan) for iv in set((np.arange(len(tid)) >> 14).tolist())}
    want = np.array([(p >= 0 or ivs[j >> 14]) if t < 0 else keep_block[(int(lc), int(t) // 256)]
                     for j, (t, p, lc) in enumerate(zip(tid, prev, launch))])
    got_tid = np.concatenate(kept.tid)
    assert got_tid.tolist() == tid[want].tolist()
    assert np.concatenate(kept.op).tolist() == op[want].tolist()
    assert s["kept_records"] == int(want.sum())
    assert s["kept_thread_instances"] == int((changes & want).sum())


def test_same_plan_same_sample_wherever_the_arrays_lie():
    plan = SamplePlan.at_rate(0.1)
    out = []
    for pad in (0, 3):
        junk = [np.empty(1000 + 517 * pad) for _ in range(pad)]  # moves the next allocations
        args = (np.zeros(60_000), np.arange(60_000.0), np.ones(60_000), 2.0)
        r = trace_function(_triad, args, sinks=[], mode="compiled", sample=plan)
        out.append(r.info.extra["sample"])
        del junk
    assert out[0] == out[1]


def test_sampling_sink_samples_for_a_tracer_without_a_filter():
    from profiler.sampling import SamplingSink
    from profiler.trace import RegionInfo, StaticTable

    rows = [(1 + i % 3, [0, LOAD, STORE][i % 3], 8 * i, 8 if i % 3 else 0, i // 3) for i in range(30000)]
    plan = SamplePlan.at_rate(0.25, seed=1)
    seen = {}

    class Ends(Keep):
        def end_region(self, info, static):
            seen.update(info.extra["sample"], n_records=info.n_records, n_threads=info.n_threads)

    holder: list = []
    sink = Ends(holder)
    sampler = SamplingSink(plan, [sink])
    holder.append(sampler.filter)
    info = RegionInfo(name="r")
    sampler.start_region(info, StaticTable([]))
    for a in range(0, len(rows), 7000):
        sampler.consume(_chunk(rows[a:a + 7000]))
    sampler.end_region(info, StaticTable([]))
    c, *_ = _reference(rows, plan)
    assert seen["records"] == seen["n_records"] == 30000 and seen["n_threads"] == 10000
    assert seen["kept_thread_instances"] == c["kept"] and seen["thread_instances"] == 10000
    assert sum(len(v["pc"]) for v in sink.rows) == 3 * c["kept"]
