"""The SM event-timeline model: true run time at any clock, and every model's counters at a base clock.

The model has two layers, each a small Numba function over plain arrays, so that a later trace-driven SIMT
timing model can replace the first layer with its own multi-warp simulator and still use the second:

1. :func:`simulate` runs an *issue stream* (one instruction per issue cycle, in program order; loads with
   a memory latency fixed in nanoseconds; instructions that wait for loads; stores that take an entry of a
   store queue of given depth for a fixed time) at one core clock. Computation scales with the clock, memory
   latency does not, and instructions issue only on clock edges. It returns an :class:`Execution`: the state
   of every cycle (issue, load stall, store stall) and the issue/ready cycle of every load.
2. :func:`derive_counters` reads an execution at the base clock (any producer's: cycle states + load
   intervals) and computes the counters of every model (STALL, MISS, LEAD, CRIT, CRISP, CRISP-L) as a
   :class:`~gpu_models.dvfs.counter_record.CounterRecord`.

Definitions (cycle ``c`` covers ``[c*p, (c+1)*p)`` with ``p = 1000 / mhz`` ns):

* A load issued in cycle ``i`` with latency ``L`` ns returns at ``i*p + L``; its data can be used from the
  first clock edge at or after that, the *ready cycle* ``r``. It is *outstanding* in cycles ``i .. r-1``.
* A stall cycle (no issue) is a *load stall* when some load is outstanding (Sec. 3.5 rule B of the CRISP
  paper), otherwise a *store stall* (rule C: the store queue is full).
* STALL: load-stall cycles. LEAD: summed latency (ready - issue) of leading loads, a leading load being one
  issued while no earlier leading load is outstanding. MISS: contributor misses, a miss being a contributor
  when it is issued at least the fixed miss latency after the previous contributor; T_Memory = count x that
  latency. CRIT: the critical-path counter (a snapshot of the global counter at each miss, the counter raised
  to snapshot + latency at each return; returns are processed before misses of the same cycle).
* CRISP: the load critical path (LCP) is the CRIT chain; overlapped computation is the issue cycles under
  the loads of that chain (found by following each load's snapshot back to the load that set it); the
  adjusted LCP of the paper's hardware (load stalls added as 1-cycle increments) is reported as well.
  CRISP-L: the cycles with any load outstanding.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numba as nb
import numpy as np

from gpu_models.dvfs.counter_record import CounterRecord

#: Instruction kinds of an issue stream.
COMPUTE = 0
LOAD = 1
STORE = 2

#: Cycle states of an execution.
ISSUE = 0
LOAD_STALL = 1
STORE_STALL = 2

_EPS = 1e-9


class TimelineError(ValueError):
    """An issue stream or execution record that breaks the rules of this module."""


@dataclasses.dataclass(frozen=True)
class Timeline:
    """An issue stream: one instruction per issue slot, in program order.

    Parameters
    ----------
    kind : ndarray of int8, shape (n,)
        :data:`COMPUTE`, :data:`LOAD` or :data:`STORE`.
    latency_ns : ndarray of float64, shape (n,)
        For loads the memory latency (ns, fixed in time); for stores the time the store holds a store-queue
        entry (ns); ignored for computation.
    dep_ptr, dep_idx : ndarray of int64
        Dependencies in compressed sparse rows: instruction ``i`` waits for the loads
        ``dep_idx[dep_ptr[i]:dep_ptr[i+1]]`` (indices of earlier LOAD instructions).
    store_queue_depth : int
        Number of store-queue entries (at least 1).
    """

    kind: np.ndarray
    latency_ns: np.ndarray
    dep_ptr: np.ndarray
    dep_idx: np.ndarray
    store_queue_depth: int = 8

    def __post_init__(self) -> None:
        kind = np.ascontiguousarray(self.kind, dtype=np.int8)
        lat = np.ascontiguousarray(self.latency_ns, dtype=np.float64)
        ptr = np.ascontiguousarray(self.dep_ptr, dtype=np.int64)
        idx = np.ascontiguousarray(self.dep_idx, dtype=np.int64)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "latency_ns", lat)
        object.__setattr__(self, "dep_ptr", ptr)
        object.__setattr__(self, "dep_idx", idx)
        n = kind.shape[0]
        if kind.ndim != 1 or lat.shape != (n,):
            raise TimelineError(f"kind and latency_ns must be 1-D of equal length (got {kind.shape}, {lat.shape})")
        if ptr.shape != (n + 1,) or ptr[0] != 0 or ptr[-1] != idx.shape[0] or np.any(np.diff(ptr) < 0):
            raise TimelineError("dep_ptr must have n+1 non-decreasing entries from 0 to len(dep_idx)")
        bad = np.flatnonzero((kind < COMPUTE) | (kind > STORE))
        if bad.size:
            raise TimelineError(f"instruction {bad[0]}: kind {kind[bad[0]]} is not 0 (compute), 1 (load) or 2 (store)")
        mem = kind != COMPUTE
        bad = np.flatnonzero(mem & ~(np.isfinite(lat) & (lat >= 0)))
        if bad.size:
            raise TimelineError(f"instruction {bad[0]}: latency_ns {lat[bad[0]]} must be finite and >= 0")
        bad = np.flatnonzero((kind == LOAD) & (lat <= 0))
        if bad.size:
            raise TimelineError(f"instruction {bad[0]}: a load needs a positive latency_ns")
        if int(self.store_queue_depth) < 1:
            raise TimelineError(f"store_queue_depth must be >= 1 (got {self.store_queue_depth})")
        owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        bad = np.flatnonzero((idx < 0) | (idx >= owner))
        if bad.size:
            raise TimelineError(f"instruction {owner[bad[0]]}: dependency {idx[bad[0]]} is not an earlier instruction")
        bad = np.flatnonzero(kind[idx] != LOAD)
        if bad.size:
            raise TimelineError(f"instruction {owner[bad[0]]}: dependency {idx[bad[0]]} is not a load")

    @property
    def n(self) -> int:
        """Number of instructions."""
        return int(self.kind.shape[0])

    @classmethod
    def from_lists(
        cls,
        kind: Sequence[int],
        latency_ns: Sequence[float],
        deps: Sequence[Sequence[int]],
        store_queue_depth: int = 8,
    ) -> "Timeline":
        """Build a timeline from Python lists (``deps[i]`` lists the loads instruction ``i`` waits for).

        Parameters
        ----------
        kind, latency_ns : sequences of length n
            As in :class:`Timeline`.
        deps : sequence of n sequences of int
            Load indices each instruction waits for.
        store_queue_depth : int
            Store-queue entries.

        Returns
        -------
        Timeline
        """
        if not (len(kind) == len(latency_ns) == len(deps)):
            raise TimelineError("kind, latency_ns and deps must have the same length")
        ptr = np.zeros(len(deps) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(d) for d in deps])
        idx = np.array([j for d in deps for j in d], dtype=np.int64)
        return cls(np.asarray(kind), np.asarray(latency_ns, dtype=np.float64), ptr, idx, store_queue_depth)


@dataclasses.dataclass(frozen=True)
class Execution:
    """One run of a timeline at one clock (or any producer's record of a run).

    Attributes
    ----------
    mhz : float
        Core clock of the run.
    state : ndarray of int8, shape (cycles,)
        :data:`ISSUE`, :data:`LOAD_STALL` or :data:`STORE_STALL` per cycle.
    load_issue, load_ready : ndarray of int64, shape (loads,)
        Issue cycle and ready cycle of each load, in issue order.
    """

    mhz: float
    state: np.ndarray
    load_issue: np.ndarray
    load_ready: np.ndarray

    @property
    def cycles(self) -> int:
        """Number of cycles of the run."""
        return int(self.state.shape[0])

    @property
    def period_ns(self) -> float:
        """Clock period in ns."""
        return 1000.0 / self.mhz

    @property
    def total_ns(self) -> float:
        """Run time in ns."""
        return self.cycles * self.period_ns


@nb.njit(cache=True)
def _edge(t, period):
    """First clock edge index at or after time ``t`` (tolerant to rounding)."""
    k = math.ceil(t / period - 1e-9)
    return max(k, 0)


@nb.njit(cache=True)
def _simulate(kind, lat, dep_ptr, dep_idx, depth, period):
    n = kind.shape[0]
    issue = np.empty(n, np.int64)
    ready = np.zeros(n, np.int64)  # ready cycle of each load (0 for others)
    queue = np.zeros(depth, np.float64)  # time each store-queue entry frees
    # stall[k] = (first stalled cycle, count, is_store_wait) runs, resolved below
    stall_start = np.empty(n, np.int64)
    stall_len = np.empty(n, np.int64)
    cur = 0
    max_ready = 0
    for i in range(n):
        t = cur
        for q in range(dep_ptr[i], dep_ptr[i + 1]):
            r = ready[dep_idx[q]]
            if r > t:
                t = r
        slot = -1
        if kind[i] == 2:
            slot = 0
            for s in range(1, depth):
                if queue[s] < queue[slot]:
                    slot = s
            e = _edge(queue[slot], period)
            if e > t:
                t = e
        stall_start[i] = cur
        stall_len[i] = t - cur
        issue[i] = t
        if kind[i] == 1:
            r = _edge(t * period + lat[i], period)
            if r <= t:
                r = t + 1
            ready[i] = r
            if r > max_ready:
                max_ready = r
        elif kind[i] == 2:
            queue[slot] = t * period + lat[i]
        cur = t + 1
    total = cur if cur > max_ready else max_ready
    state = np.zeros(total, np.int8)
    # A stall cycle is a load stall if any load issued before it is still outstanding. Loads issue in
    # order, so a running maximum of ready cycles over loads issued so far answers that.
    run_max = 0
    for i in range(n):
        for c in range(stall_start[i], stall_start[i] + stall_len[i]):
            state[c] = 1 if run_max > c else 2
        if kind[i] == 1 and ready[i] > run_max:
            run_max = ready[i]
    for c in range(cur, total):
        state[c] = 1
    nl = 0
    for i in range(n):
        if kind[i] == 1:
            nl += 1
    li = np.empty(nl, np.int64)
    lr = np.empty(nl, np.int64)
    k = 0
    for i in range(n):
        if kind[i] == 1:
            li[k] = issue[i]
            lr[k] = ready[i]
            k += 1
    return state, li, lr


def simulate(timeline: Timeline, mhz: float) -> Execution:
    """Run an issue stream at a core clock.

    Parameters
    ----------
    timeline : Timeline
        The issue stream.
    mhz : float
        Core clock in MHz (positive).

    Returns
    -------
    Execution
        Cycle states and load intervals; ``total_ns`` is the true run time at this clock.
    """
    if not (mhz > 0 and math.isfinite(mhz)):
        raise TimelineError(f"mhz must be positive (got {mhz})")
    state, li, lr = _simulate(
        timeline.kind, timeline.latency_ns, timeline.dep_ptr, timeline.dep_idx,
        int(timeline.store_queue_depth), 1000.0 / float(mhz),
    )
    return Execution(float(mhz), state, li, lr)


def true_time_ns(timeline: Timeline, mhz: float) -> float:
    """True run time of ``timeline`` at ``mhz`` in ns (see :func:`simulate`).

    Parameters
    ----------
    timeline : Timeline
    mhz : float

    Returns
    -------
    float
    """
    return simulate(timeline, mhz).total_ns


# Counter indices returned by _counters (all in base-clock cycles, except miss count).
_C_TOTAL, _C_LSTALL, _C_SSTALL, _C_OUT, _C_OUT_COMP, _C_LEAD, _C_MISS, _C_CRIT, _C_LCP_COMP, _C_ADJ = range(10)


@nb.njit(cache=True)
def _counters(state, li, lr, miss_window_cycles):
    total = state.shape[0]
    out = np.zeros(10, np.float64)
    out[_C_TOTAL] = total
    comp_prefix = np.zeros(total + 1, np.int64)
    diff = np.zeros(total + 1, np.int64)
    for c in range(total):
        s = state[c]
        comp_prefix[c + 1] = comp_prefix[c] + (1 if s == 0 else 0)
        if s == 1:
            out[_C_LSTALL] += 1
        elif s == 2:
            out[_C_SSTALL] += 1
    nl = li.shape[0]
    for k in range(nl):
        diff[li[k]] += 1
        diff[lr[k]] -= 1
    run = 0
    for c in range(total):
        run += diff[c]
        if run > 0:
            out[_C_OUT] += 1
            if state[c] == 0:
                out[_C_OUT_COMP] += 1
    # LEAD and MISS (loads in issue order)
    lead_until = -1
    last_contrib = -1.0e300
    for k in range(nl):
        if li[k] >= lead_until:
            out[_C_LEAD] += lr[k] - li[k]
            lead_until = lr[k]
        if li[k] - last_contrib >= miss_window_cycles - 1e-9:
            out[_C_MISS] += 1
            last_contrib = li[k]
    # CRIT with owner tracking, and the adjusted LCP, walking the cycles.
    by_ready = np.argsort(lr, kind="mergesort")
    ts = np.zeros(nl, np.int64)
    ts_adj = np.zeros(nl, np.int64)
    pred = np.full(nl, -1, np.int64)
    crit = 0
    owner = -1
    adj = 0
    pi = 0  # next load to issue (issue order)
    pr = 0  # next load to return (ready order)
    for c in range(total + 1):
        while pr < nl and lr[by_ready[pr]] <= c:
            j = by_ready[pr]
            v = ts[j] + (lr[j] - li[j])
            if v > crit:
                crit = v
                owner = j
            va = ts_adj[j] + (lr[j] - li[j])
            if va > adj:
                adj = va
            pr += 1
        if c < total and state[c] == 1:
            adj += 1
        while pi < nl and li[pi] <= c:
            ts[pi] = crit
            ts_adj[pi] = adj
            pred[pi] = owner
            pi += 1
    out[_C_CRIT] = crit
    out[_C_ADJ] = adj
    j = owner
    while j >= 0:
        out[_C_LCP_COMP] += comp_prefix[lr[j]] - comp_prefix[li[j]]
        j = pred[j]
    return out


def _check_execution(ex: Execution) -> None:
    state, li, lr = ex.state, ex.load_issue, ex.load_ready
    if state.ndim != 1 or state.shape[0] == 0:
        raise TimelineError("execution has no cycles")
    bad = np.flatnonzero((state < ISSUE) | (state > STORE_STALL))
    if bad.size:
        raise TimelineError(
            f"cycle {bad[0]}: state {state[bad[0]]} is not 0 (issue), 1 (load stall) or 2 (store stall)"
        )
    if li.shape != lr.shape:
        raise TimelineError("load_issue and load_ready must have the same length")
    bad = np.flatnonzero((li < 0) | (lr <= li) | (lr > state.shape[0]))
    if bad.size:
        k = bad[0]
        raise TimelineError(
            f"load {k}: issue cycle {li[k]} / ready cycle {lr[k]} must satisfy 0 <= issue < ready <= {state.shape[0]}"
        )
    if li.size > 1 and np.any(np.diff(li) < 0):
        k = int(np.flatnonzero(np.diff(li) < 0)[0]) + 1
        raise TimelineError(f"load {k}: loads must be in issue order (issue cycle {li[k]} < {li[k - 1]})")


def derive_counters(ex: Execution, miss_latency_ns: float | None = None, name: str = "") -> CounterRecord:
    """Every model's counters from an execution at the base clock.

    Parameters
    ----------
    ex : Execution
        Cycle states and load intervals at the base clock (from :func:`simulate` or another producer).
    miss_latency_ns : float, optional
        The MISS model's fixed memory latency in ns; default: the mean load latency of the execution.
    name : str
        Name stored in the record.

    Returns
    -------
    CounterRecord
        All times in ns at the base clock ``ex.mhz``.
    """
    state = np.ascontiguousarray(ex.state, dtype=np.int8)
    li = np.ascontiguousarray(ex.load_issue, dtype=np.int64)
    lr = np.ascontiguousarray(ex.load_ready, dtype=np.int64)
    ex = Execution(ex.mhz, state, li, lr)
    _check_execution(ex)
    p = ex.period_ns
    if miss_latency_ns is None:
        miss_latency_ns = float(np.mean(lr - li)) * p if li.size else 0.0
    if not (miss_latency_ns >= 0 and math.isfinite(miss_latency_ns)):
        raise TimelineError(f"miss_latency_ns must be finite and >= 0 (got {miss_latency_ns})")
    c = _counters(state, li, lr, miss_latency_ns / p)
    return CounterRecord(
        base_mhz=ex.mhz,
        total=float(c[_C_TOTAL] * p),
        load_stall=float(c[_C_LSTALL] * p),
        store_stall=float(c[_C_SSTALL] * p),
        lcp=float(c[_C_CRIT] * p),
        lcp_comp=float(c[_C_LCP_COMP] * p),
        adjusted_lcp=float(c[_C_ADJ] * p),
        load_outstanding=float(c[_C_OUT] * p),
        lead=float(c[_C_LEAD] * p),
        miss_count=float(c[_C_MISS]),
        miss_latency=float(miss_latency_ns),
        crit=float(c[_C_CRIT] * p),
        name=name,
    )


def counters_at(timeline: Timeline, mhz: float, miss_latency_ns: float | None = None) -> CounterRecord:
    """Run ``timeline`` at ``mhz`` and derive the counters there (shorthand for simulate + derive).

    Parameters
    ----------
    timeline : Timeline
    mhz : float
        The base clock.
    miss_latency_ns : float, optional
        As in :func:`derive_counters`.

    Returns
    -------
    CounterRecord
    """
    return derive_counters(simulate(timeline, mhz), miss_latency_ns)
