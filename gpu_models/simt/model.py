"""The SIMT timing model: warp instruction streams on a configured GPU -> cycles, time, counters, power.

The model (docs/simt.md) is an event-driven, cycle-accurate-at-issue simulator over plain arrays in Numba:

* **Blocks and SMs.** Block ``b`` runs on SM ``b mod sm_count``; an SM holds ``min(max_blocks_per_sm,
  max_warps_per_sm // warps_per_block)`` blocks at a time and starts its next block when a resident one has
  finished (all its warps' results returned).
* **Issue.** Each SM has ``schedulers_per_sm`` warp schedulers; warp slot ``q`` belongs to scheduler
  ``q mod schedulers``. Every core cycle each scheduler issues at most one instruction, from the first
  eligible warp in loose round-robin order after the last one it issued. A warp issues in order, at most one
  instruction per cycle; an instruction is eligible when its producers' results are ready, its pipeline is
  free, and (memory) the SM's MSHRs / store queue have room.
* **Pipelines.** Integer, single-precision floating-point, special-function and double-precision
  floating-point pipelines per scheduler (units 0-3, ``config.PIPES``): result after the op's latency (core
  cycles), the pipeline busy for ``ceil(32 / lanes) * repeat`` cycles. The load/store unit (unit 4) is per SM
  and handles ``lsu_sectors_per_cycle`` sectors per cycle.
* **Memory.** A warp access touches its coalesced 32-byte sectors. L1 (per SM, core clock): set-associative
  LRU over sectors; a hit returns after ``l1_latency_cycles`` (or when a pending fill arrives: MSHR merging);
  a miss takes an MSHR until its data returns; a load of shared memory (no sectors: the stream builder's
  ``shared`` records) returns after ``shared_latency_cycles``. Stores write through (no L1 allocation) and
  are posted: each sector holds a store-queue entry until the L2 takes it, or until the dirty sector it
  evicts has left for the DRAM. L2 (shared, own clock domain): set-associative LRU, write-back,
  write-allocate, bandwidth ``l2_bytes_per_ns``, latency ``l2_latency_ns``. DRAM: one bandwidth
  server (``mem_mhz * transfers_per_clock * bus_bits / 8``) plus ``dram_latency_ns``; dirty evictions use it
  too. Memory times are in ns and do not scale with the core clock; an answer is used from the first core
  clock edge at or after it arrives.

Outputs (:class:`SimResult`): cycles and time; Table II-style counters (papers/000); CRISP / LEAD / CRIT /
... counters through :func:`gpu_models.dvfs.timeline.derive_counters` read on the SM that finishes last;
an activity-based dynamic power estimate.
"""

from __future__ import annotations

import dataclasses
import math

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from gpu_models.dvfs.counter_record import CounterRecord
from gpu_models.dvfs.timeline import Execution, derive_counters
from gpu_models.simt.config import MAX_VALUE, N_PIPES, SECTOR_BYTES, UNIT_FP, UNIT_FP64, UNIT_INT, UNIT_LSU, GPUConfig
from gpu_models.simt.threads import WarpStreams

_INF = np.int64(1) << np.int64(62)
_TAG = np.int64(0x7FFFFFFF)  # packed cache way word: LRU stamp << 32 | dirty << 31 | tag
_DIRTY = np.int64(1) << np.int64(31)
_EPS = 1e-9

# indices of the statistics vector returned by the kernel
(S_CYCLES, S_INT, S_FP, S_SFU, S_LOAD, S_STORE, S_ALU_LANES, S_L1_HIT, S_L1_MISS, S_L2_HIT, S_L2_MISS,
 S_DRAM_RD, S_DRAM_WR, S_LOAD_SECT, S_STORE_SECT, S_SM_BUSY, S_WARP_RES, S_LSU_BUSY, S_ALU_BUSY, S_ISSUE_CYC,
 S_MEM_BLOCKED, S_DIVERGENT, S_BRANCH, S_WINSTR, S_LOAD_WAIT, S_EVENTS, S_CHECKS, S_FP64, N_STATS) = range(29)
# the kernel's unit indices (gpu_models.simt.config.UNITS): pipelines 0 .. N_PIPES - 1, then the load/store unit;
# pmask's last row (index N_PIPES) is the union of the pipelines' rows
_LSU = UNIT_LSU
_PIPES = N_PIPES


@nb.njit(cache=True, inline="always")
def _ceil_cycle(t_ns, period):
    k = math.ceil(t_ns / period - _EPS)
    return np.int64(k)


@nb.njit(cache=True, inline="always")
def _own_ready(i, t, w_dep, ready):
    """Earliest cycle of warp instruction ``i`` from its own warp: ``t`` (the warp's next issue cycle) and its
    producers' results (earlier instructions of the same warp, so final once ``i`` is the warp's next)."""
    e = t
    for d in range(3):
        p = w_dep[i, d]
        if p >= 0 and ready[p] > e:
            e = ready[p]
    return e


@nb.njit(cache=True, inline="always")
def _l2_lookup(l2_map, key, n_l2, c2, rec2, l2_ways, tg, c, dep_c, period, st, l2_xfer):
    """One sector's request at the L2, the part loads and stores share: find (or start) the record of L2 set
    ``key``, book the request's slot on the L2 server and look the tag ``tg`` up in the set.

    Bandwidth is booked on the shared servers (``st[0]`` = L2 free time, ``st[1]`` = DRAM free time, in ns)
    at the simulation time ``c * period`` so that the servers see requests in time order; the request is
    served at the later of its booked slot and its departure ``dep_c * period``.

    Returns ``(n_l2, h2, v2, lb0, start)``: the sets started so far, the hit way's word index (-1 on a miss),
    the LRU victim's, the booked slot and the service start (ns).
    """
    m2 = l2_map[key]
    if m2 == 0:
        n_l2 += 1
        m2 = n_l2
        l2_map[key] = m2
        for kk in range((m2 - 1) * rec2, m2 * rec2):
            c2[kk] = 0
    now_ns = c * period
    t_ns = dep_c * period
    lb0 = now_ns if now_ns > st[0] else st[0]
    st[0] = lb0 + l2_xfer
    start = t_ns if t_ns > lb0 else lb0
    base2 = (m2 - 1) * rec2
    h2 = -1
    v2 = base2
    for k2 in range(base2, base2 + l2_ways):
        if (c2[k2] & _TAG) == tg:
            h2 = k2
            break
        if c2[k2] < c2[v2]:
            v2 = k2
    return n_l2, h2, v2, lb0, start


@nb.njit(cache=True)
def _grow(a, n):
    size = a.shape[0]
    if n < size:
        return a
    while size <= n:
        size = size * 2 + 16
    b = np.zeros(size, a.dtype)
    b[:a.shape[0]] = a
    return b


# the kernel's stages: compiled without reference counting (they only read and write the kernel's arrays, and
# return no array) and inlined by LLVM into the kernel (forceinline), so that the event loop compiles as if
# written out in one function; the two that allocate (the tracked SM's growing arrays) are inlined by Numba
_STAGE = dict(cache=True, error_model="numpy", forceinline=True, _nrt=False)


@nb.njit(**_STAGE)
def _queue_head(q, head, s, c):
    """The cycle from which SM ``s``'s earliest-free entry of a memory queue (MSHRs or store queue: the head of
    its sorted window, see :func:`_run`) serves a request made at cycle ``c``."""
    dep_c = q[s, head[s]]
    if c > dep_c:
        dep_c = c
    return dep_c


@nb.njit(**_STAGE)
def _queue_take(q, head, s, n, t):
    """Take SM ``s``'s earliest-free entry of a memory queue of ``n`` entries and put it back freeing at cycle
    ``t``: drop the window's head and insert ``t`` in order; the window moves right and is copied back to the
    row start when it reaches the row's end."""
    h0 = head[s] + 1
    tq = h0 + n - 1
    if tq >= q.shape[1]:
        for jj in range(n - 1):
            q[s, jj] = q[s, h0 + jj]
        h0 = 0
        tq = n - 1
    while tq > h0 and q[s, tq - 1] > t:
        q[s, tq] = q[s, tq - 1]
        tq -= 1
    q[s, tq] = t
    head[s] = h0


@nb.njit(**_STAGE)
def _queue_wait(q, head, s, need, n, c):
    """The cycle from which SM ``s`` has ``need`` entries (at most ``n``, the queue's size) of a memory queue
    free: the need-th entry's free cycle, or ``c`` when they are free at ``c`` or none is needed."""
    t = c
    if need > n:
        need = n
    if need > 0:
        vq = q[s, head[s] + need - 1]
        if vq > c:
            t = vq
    return t


@nb.njit(**_STAGE)
def _l1_misses(i, s, sptr, acc, l1_map, c1, l1_geo):
    """How many of the sectors of load ``i`` miss SM ``s``'s L1 now (MSHRs the load needs; reads only)."""
    l1_sets, l1_ways, rec1 = l1_geo
    need = 0
    for j in range(sptr[i], sptr[i + 1]):
        tg = np.int64(acc[j, 0])
        m1 = l1_map[s * l1_sets + acc[j, 1]]
        if m1 == 0:
            need += 1
            continue
        b0 = (m1 - 1) * rec1
        found = False
        for kk in range(b0, b0 + l1_ways):
            if (c1[kk] & _TAG) == tg:
                found = True
                break
        if not found:
            need += 1
    return need


@nb.njit(**_STAGE)
def _l1_lookup(l1_map, key, n_l1, c1, rec1, l1_ways, tg):
    """One sector's lookup in an L1 set: find (or start) the record of set ``key`` and look the tag ``tg`` up.

    Returns ``(n_l1, hit, victim)``: the sets started so far, the hit way's word index (-1 on a miss) and the
    LRU victim's.
    """
    m1 = l1_map[key]
    if m1 == 0:
        n_l1 += 1
        m1 = n_l1
        l1_map[key] = m1
        for kk in range((m1 - 1) * rec1, m1 * rec1):
            c1[kk] = 0
    b0 = (m1 - 1) * rec1
    hit = -1
    victim = b0
    for kk in range(b0, b0 + l1_ways):
        if (c1[kk] & _TAG) == tg:
            hit = kk
            break
        if c1[kk] < c1[victim]:
            victim = kk
    return n_l1, hit, victim


@nb.njit(**_STAGE)
def _l2_fill(c2, v2, word, lb0, st, dram_xfer, stats):
    """An L2 miss takes the LRU way ``v2`` for the packed word ``word``; a dirty victim is written back first
    (a DRAM slot booked from ``lb0``, the request's L2 slot). Returns whether a dirty sector was evicted (its
    write then ends at ``st[1]``)."""
    stats[S_L2_MISS] += 1
    evicted = (c2[v2] & _DIRTY) != 0
    if evicted:
        d0 = lb0 if lb0 > st[1] else st[1]
        st[1] = d0 + dram_xfer
        stats[S_DRAM_WR] += 1
    c2[v2] = word
    return evicted


@nb.njit(**_STAGE)
def _slot_check(w, s, k, c, warp_own, warp_unit, unit_free, lsu_free, warp_cur, w_op, sptr, acc, l1_map, c1,
                l1_geo, mq, mh, qq, qh):
    """The check of warp ``w`` in the slot scan: the earliest cycle its next instruction can issue (own
    readiness, its pipeline or the load/store unit, and, when that is now, the MSHRs / store-queue entries a
    memory instruction needs). Returns ``(cycle, unit, whether a memory queue set the cycle)``."""
    e = warp_own[w]
    u = warp_unit[w]
    if u < _PIPES:
        if unit_free[s, k, u] > e:
            e = unit_free[s, k, u]
    elif lsu_free[s] > e:
        e = lsu_free[s]
    res = False
    if e <= c and u == _LSU:
        i = warp_cur[w]
        if w_op[i] == 8:
            vq = _queue_wait(mq, mh, s, _l1_misses(i, s, sptr, acc, l1_map, c1, l1_geo), mq.shape[1] // 2, c)
        else:
            vq = _queue_wait(qq, qh, s, sptr[i + 1] - sptr[i], qq.shape[1] // 2, c)
        if vq > c:
            e = vq
            res = True
    return e, u, res


@nb.njit(**_STAGE)
def _wake_pipe_slot(s, k, c, greedy, pmask, unit_free, scanm, sl_lb):
    """The first pipeline-waiting slot of scheduler ``k`` in scan order whose pipeline is free at ``c`` can
    issue: hand it back to the scan as a slot due for a check (the scan stops there at the latest)."""
    if pmask[s, k, _PIPES] != 0:
        el = np.int64(0)
        for uu in range(_PIPES):
            if unit_free[s, k, uu] <= c:
                el |= pmask[s, k, uu]
        if el != 0:
            if greedy < 63 and (el >> greedy) & 1:
                p = greedy
            else:
                p = np.int64(trailing_zeros(el))
            nbit = ~(np.int64(1) << p)
            for uu in range(_PIPES + 1):
                pmask[s, k, uu] &= nbit
            scanm[s, k] |= ~nbit
            sl_lb[s, k, p] = c


@nb.njit(**_STAGE)
def _scan(s, k, c, greedy, sl_warp, sl_lb, sl_res, scanm, pmask, stats, warp_own, warp_unit, unit_free, lsu_free,
          warp_cur, w_op, sptr, acc, l1_map, c1, l1_geo, mq, mh, qq, qh):
    """Scheduler ``k``'s slot scan at cycle ``c``, greedy-then-oldest: the warp that issued last (slot
    ``greedy``), then the others in slot order; of slots 0-62 only those in the scan mask, slots 63 and above
    all. A slot whose stored bound is after ``c`` is passed over; others are checked (:func:`_slot_check`).

    Returns ``(warp, slot, bound, flag)``: the first eligible warp and its slot (-1, 0 if none), and, when none
    is eligible, the least bound found and whether a memory resource gave it.
    """
    chosen = -1
    chosen_idx = 0
    kbound = _INF
    kres = False
    rest = scanm[s, k]
    gfirst = True
    if greedy < 63:
        gfirst = ((rest >> greedy) & 1) != 0
        rest &= ~(np.int64(1) << greedy)
    hi = np.int64(63)
    while True:
        if gfirst:
            idx = greedy
            gfirst = False
        elif rest != 0:
            idx = np.int64(trailing_zeros(rest))
            rest &= rest - 1
        elif hi < sl_lb.shape[2]:
            idx = hi
            hi += 1
            if idx == greedy:
                continue
        else:
            break
        lbw = sl_lb[s, k, idx]
        if lbw > c:  # not before this cycle (dependencies, pipelines, memory entries; _INF: finished or no warp)
            if lbw < kbound:
                kbound = lbw
                kres = sl_res[s, k, idx]
            continue
        w = sl_warp[s, k, idx]
        stats[S_CHECKS] += 1
        e, u, res = _slot_check(w, s, k, c, warp_own, warp_unit, unit_free, lsu_free, warp_cur, w_op, sptr, acc,
                                l1_map, c1, l1_geo, mq, mh, qq, qh)
        if e <= c:
            sl_lb[s, k, idx] = e
            chosen = w
            chosen_idx = idx
            break
        if u < _PIPES and idx < 63 and e == unit_free[s, k, u]:
            # blocked only by its busy pipeline (e is unit_free): a pipeline-waiting slot from now on
            pbit = np.int64(1) << idx
            pmask[s, k, u] |= pbit
            pmask[s, k, _PIPES] |= pbit
            scanm[s, k] &= ~pbit
            sl_lb[s, k, idx] = _INF
            continue
        sl_lb[s, k, idx] = e
        sl_res[s, k, idx] = res
        if e < kbound:
            kbound = e
            kres = res
    return chosen, chosen_idx, kbound, kres


@nb.njit(**_STAGE)
def _merge_pipe_bounds(s, k, greedy, kbound, kres, pmask, unit_free, sl_lb):
    """When scheduler ``k`` issues nothing: the pipeline-waiting slots' bounds (all pipelines with such slots
    are busy here), merged with the scanned ones as the scan would: the first slot in scan order with the
    least bound gives the memory-resource flag. A scanned slot's (sl_lb, sl_res) is what it gave the scan.

    Returns ``(bound, flag)``.
    """
    if pmask[s, k, _PIPES] != 0:
        for u in range(_PIPES):
            pmu = pmask[s, k, u]
            if pmu == 0:
                continue
            v = unit_free[s, k, u]
            if v < kbound:
                kbound = v
                kres = False
            elif v == kbound and kres:
                if greedy < 63 and (pmu >> greedy) & 1:
                    kres = False
                elif sl_lb[s, k, greedy] != kbound:
                    p = np.int64(trailing_zeros(pmu))
                    for idx in range(p):
                        if sl_lb[s, k, idx] == kbound:
                            break
                    else:
                        kres = False
    return kbound, kres


@nb.njit(**_STAGE)
def _issue_alu(s, k, c, i, op, u, unit_free, lat_of, ivl_of, w_active, w_div, stats):
    """Issue instruction ``i`` (op ``op``) on pipeline ``u`` of scheduler ``k``; returns its result cycle."""
    unit_free[s, k, u] = c + ivl_of[op]
    stats[S_ALU_BUSY] += ivl_of[op]
    stats[S_ALU_LANES] += w_active[i]
    if u == UNIT_INT:
        stats[S_INT] += 1
    elif u == UNIT_FP:
        stats[S_FP] += 1
    elif u == UNIT_FP64:
        stats[S_FP64] += 1
    else:
        stats[S_SFU] += 1
    if op == 10:
        stats[S_BRANCH] += 1
        stats[S_DIVERGENT] += w_div[i]
    return c + lat_of[op]


@nb.njit(**_STAGE)
def _load_miss(s, c, tg, key2, mq, mh, l2_map, n_l2, c2, c2f, l2_ways, clock, st, stats, times):
    """A load's sector that missed the L1: an MSHR (the earliest-free one), the L2 lookup and, on an L2 miss, the
    DRAM read (after a dirty victim's write-back). Returns ``(cycle the sector's data is back, n_l2, clock)``."""
    period, l1_lat, l2_lat, l2_xfer, dram_lat, dram_xfer = times
    dep_c = _queue_head(mq, mh, s, c)
    # the sector at the L2: the set's record, the L2 server's slot, the tag lookup
    clock += 1
    n_l2, h2, v2, lb0, start = _l2_lookup(l2_map, key2, n_l2, c2, 2 * l2_ways, l2_ways, tg, c, dep_c, period, st,
                                          l2_xfer)
    if h2 >= 0:
        stats[S_L2_HIT] += 1
        c2[h2] = (clock << 32) | (c2[h2] & _DIRTY) | tg
        t_ret = start + l2_lat
        if c2f[h2 + l2_ways] > t_ret:
            t_ret = c2f[h2 + l2_ways]
    else:
        _l2_fill(c2, v2, (clock << 32) | tg, lb0, st, dram_xfer, stats)
        d0 = lb0 if lb0 > st[1] else st[1]
        st[1] = d0 + dram_xfer
        if start > d0:
            d0 = start
        stats[S_DRAM_RD] += 1
        t_ret = d0 + dram_xfer + dram_lat + l2_lat
        c2f[v2 + l2_ways] = t_ret
    rc = _ceil_cycle(t_ret, period)
    if rc < c + l1_lat:
        rc = c + l1_lat
    if rc <= dep_c:
        rc = dep_c + 1
    # the MSHR frees at rc
    _queue_take(mq, mh, s, mq.shape[1] // 2, rc)
    return rc, n_l2, clock


@nb.njit(**_STAGE)
def _issue_load(s, i, c, sptr, acc, l1_map, c1, l1_geo, l2_map, c2, c2f, l2_ways, mq, mh, st, pf_sink, stats,
                smem_lat, times, counts):
    """Issue load ``i`` on SM ``s`` at cycle ``c``: its sectors through the L1 (and on misses the L2 and DRAM).

    ``counts`` = ``(n_l1, n_l2, clock, l1_clock)``: L1 / L2 set records started, L2 / L1 LRU clocks. Returns
    ``(result cycle, whether a sector missed the L1, counts)``.
    """
    n_l1, n_l2, clock, l1_clock = counts
    l1_sets, l1_ways, rec1 = l1_geo
    l1_lat = times[1]
    nsec = sptr[i + 1] - sptr[i]
    stats[S_LOAD] += 1
    stats[S_LOAD_SECT] += nsec
    # a load that touches no sector reads shared memory (the stream builder's shared records)
    r_i = c + (l1_lat if nsec > 0 else smem_lat)
    missed = False
    # prefetch pass: read the L1 and L2 records of all the load's sectors first, in a loop without data-dependent
    # branches, so that the host's cache misses on them overlap instead of waiting one after the other inside
    # the lookups below (reads only)
    pf = np.int64(0)
    for j in range(sptr[i], sptr[i + 1]):
        m1 = l1_map[s * l1_sets + acc[j, 1]]
        m2 = l2_map[acc[j, 2]]
        pf += c1[max(m1 - 1, 0) * rec1] + c2[max(m2 - 1, 0) * 2 * l2_ways]
    pf_sink[0] += pf
    for j in range(sptr[i], sptr[i + 1]):
        tg = np.int64(acc[j, 0])
        n_l1, hit, victim = _l1_lookup(l1_map, s * l1_sets + acc[j, 1], n_l1, c1, rec1, l1_ways, tg)
        l1_clock += 1
        if hit >= 0:
            stats[S_L1_HIT] += 1
            c1[hit] = (l1_clock << 32) | tg
            rc = c + l1_lat
            if c1[hit + l1_ways] > rc:
                rc = c1[hit + l1_ways]
        else:
            stats[S_L1_MISS] += 1
            missed = True
            rc, n_l2, clock = _load_miss(s, c, tg, acc[j, 2], mq, mh, l2_map, n_l2, c2, c2f, l2_ways, clock, st,
                                         stats, times)
            c1[victim] = (l1_clock << 32) | tg
            c1[victim + l1_ways] = rc
        if rc > r_i:
            r_i = rc
    return r_i, missed, (n_l1, n_l2, clock, l1_clock)


@nb.njit(**_STAGE)
def _issue_store(s, i, c, sptr, acc, l1_map, c1, l1_geo, l2_map, c2, c2f, l2_ways, qq, qh, st, stats, times,
                 counts):
    """Issue store ``i`` on SM ``s`` at cycle ``c``: each sector takes a store-queue entry and goes to the L2
    (write-back, write-allocate); the L1 is written through (a copy it holds is kept current, none allocated).
    Returns the updated ``counts`` (see :func:`_issue_load`)."""
    n_l1, n_l2, clock, l1_clock = counts
    l1_sets, l1_ways, rec1 = l1_geo
    period, l1_lat, l2_lat, l2_xfer, dram_lat, dram_xfer = times
    stats[S_STORE] += 1
    stats[S_STORE_SECT] += sptr[i + 1] - sptr[i]
    for j in range(sptr[i], sptr[i + 1]):
        tg = np.int64(acc[j, 0])
        dep_c = _queue_head(qq, qh, s, c)
        # the sector at the L2: the set's record, the L2 server's slot, the tag lookup
        clock += 1
        n_l2, h2, v2, lb0, start = _l2_lookup(l2_map, acc[j, 2], n_l2, c2, 2 * l2_ways, l2_ways, tg, c, dep_c,
                                              period, st, l2_xfer)
        # The entry frees when the L2 takes the sector (its slot on the L2 server) or, when the sector evicts a
        # dirty one, when that victim has left for the DRAM: stores are posted, so a stream of them is bound by
        # the L2's and the DRAM's bandwidth, not by the round trip.
        t_ack = start + l2_xfer
        if h2 >= 0:
            stats[S_L2_HIT] += 1
            c2[h2] = (clock << 32) | _DIRTY | tg
        else:
            evicted = _l2_fill(c2, v2, (clock << 32) | _DIRTY | tg, lb0, st, dram_xfer, stats)
            if evicted and st[1] > t_ack:
                t_ack = st[1]
            c2f[v2 + l2_ways] = start + l2_lat
        ac = _ceil_cycle(t_ack, period)
        if ac <= dep_c:
            ac = dep_c + 1
        _queue_take(qq, qh, s, qq.shape[1] // 2, ac)
        m1 = l1_map[s * l1_sets + acc[j, 1]]
        b0 = (m1 - 1) * rec1
        for kk in range(b0, b0 + (l1_ways if m1 > 0 else 0)):
            if (c1[kk] & _TAG) == tg:  # write-through: keep the L1 copy current
                l1_clock += 1
                c1[kk] = (l1_clock << 32) | tg
                break
    return (n_l1, n_l2, clock, l1_clock)


@nb.njit(**_STAGE)
def _lsu_occupy(s, i, c, sptr, lsu_spc, lsu_free, stats):
    """Memory instruction ``i`` takes SM ``s``'s load/store unit for its sectors' cycles."""
    nsec = sptr[i + 1] - sptr[i]
    occ = (nsec + lsu_spc - 1) // lsu_spc
    if occ < 1:
        occ = 1
    lsu_free[s] = c + occ
    stats[S_LSU_BUSY] += occ


@nb.njit(**_STAGE)
def _advance_warp(w, i, c, r_i, ready, warp_end, warp_cur, warp_ptr, warp_own, warp_unit, w_dep, w_op, unit_of):
    """Warp ``w`` issued instruction ``i`` at cycle ``c`` (result at ``r_i``): record it and prepare the warp's
    next instruction (its own readiness and unit). Returns whether the warp has finished issuing."""
    ready[i] = r_i
    if r_i > warp_end[w]:
        warp_end[w] = r_i
    if c + 1 > warp_end[w]:
        warp_end[w] = c + 1
    warp_cur[w] = i + 1
    done = warp_cur[w] >= warp_ptr[w + 1]
    if not done:
        warp_own[w] = _own_ready(i + 1, c + 1, w_dep, ready)
        warp_unit[w] = unit_of[w_op[i + 1]]
    return done


@nb.njit(**_STAGE)
def _launch_block(s, b, r0, t0, wpb, block_w0, slot_warp, sl_warp, sl_lb, sl_res, scanm, warp_cur, warp_ptr,
                  warp_start, warp_own, warp_unit, w_dep, w_op, unit_of, ready):
    """Start block ``b`` on SM ``s`` in resident-block place ``r0`` at cycle ``t0``: its warps take the place's
    slots (due for a check, in the scan mask) and their first instructions' own readiness and unit are set.
    Returns the number of warps."""
    n_sched = sl_lb.shape[1]
    nw = block_w0[b + 1] - block_w0[b]
    for kq in range(nw):
        w = block_w0[b] + kq
        q = r0 * wpb + kq
        slot_warp[s, q] = w
        sl_warp[s, q % n_sched, q // n_sched] = w
        sl_lb[s, q % n_sched, q // n_sched] = 0
        if q // n_sched < 63:
            scanm[s, q % n_sched] |= np.int64(1) << (q // n_sched)
        sl_res[s, q % n_sched, q // n_sched] = False
        warp_start[w] = t0
        if warp_cur[w] < warp_ptr[w + 1]:
            warp_own[w] = _own_ready(warp_cur[w], t0, w_dep, ready)
            warp_unit[w] = unit_of[w_op[warp_cur[w]]]
    return nw


@nb.njit(**_STAGE)
def _retire_block(s, b, wpb, block_w0, warp_end, slot_warp, sl_warp, sl_lb):
    """Block ``b`` on SM ``s`` has finished (all its warps' results returned): free its slots.

    Returns ``(end cycle, resident-block place, slots freed)``: the block's last result, the place its slots
    form, the number of its warps that held slots.
    """
    n_sched = sl_lb.shape[1]
    bend = 0
    for ww in range(block_w0[b], block_w0[b + 1]):
        if warp_end[ww] > bend:
            bend = warp_end[ww]
    # the block's slots: find them
    r0 = -1
    for q in range(slot_warp.shape[1]):
        if slot_warp[s, q] == block_w0[b]:
            r0 = q // wpb
            break
    freed = 0
    for kq in range(wpb):
        q = r0 * wpb + kq
        if slot_warp[s, q] >= 0:
            slot_warp[s, q] = -1
            sl_warp[s, q % n_sched, q // n_sched] = -1
            sl_lb[s, q % n_sched, q // n_sched] = _INF
            freed += 1
    return bend, r0, freed


@nb.njit(**_STAGE)
def _warp_done(s, k, idx, w, wpb, stats, warp_block, block_left, block_w0, warp_end, warp_start, slot_warp, sl_warp,
               sl_lb, sl_res, scanm, resident, sm_end, sched_lb, next_blk, warp_cur, warp_ptr, warp_own, warp_unit,
               w_dep, w_op, unit_of, ready):
    """Warp ``w`` (slot ``idx`` of scheduler ``k`` on SM ``s``) has finished issuing: its slot leaves the scan;
    the last warp of its block to finish retires the block and starts the SM's next block in its place."""
    sl_lb[s, k, idx] = _INF
    if idx < 63:
        scanm[s, k] &= ~(np.int64(1) << idx)
    stats[S_WARP_RES] += warp_end[w] - warp_start[w]
    b = warp_block[w]
    block_left[b] -= 1
    if block_left[b] == 0:
        bend, r0, freed = _retire_block(s, b, wpb, block_w0, warp_end, slot_warp, sl_warp, sl_lb)
        if bend > sm_end[s]:
            sm_end[s] = bend
        resident[s] -= freed
        nbk = next_blk[s]
        for kk in range(sched_lb.shape[1]):
            sched_lb[s, kk] = 0
        if nbk < block_w0.shape[0] - 1:
            next_blk[s] = nbk + next_blk.shape[0]
            resident[s] += _launch_block(s, nbk, r0, bend, wpb, block_w0, slot_warp, sl_warp, sl_lb, sl_res, scanm,
                                         warp_cur, warp_ptr, warp_start, warp_own, warp_unit, w_dep, w_op, unit_of,
                                         ready)


@nb.njit(cache=True, inline="always")
def _track_load(trk_li, trk_lr, n_trk, c, r_i):
    """The tracked SM's load that missed the L1: its interval ``[c, r_i)`` appended. Returns the (grown) arrays
    and their new length."""
    trk_li = _grow(trk_li, n_trk)
    trk_lr = _grow(trk_lr, n_trk)
    trk_li[n_trk] = c
    trk_lr[n_trk] = r_i
    return trk_li, trk_lr, n_trk + 1


@nb.njit(**_STAGE)
def _sm_advance(s, c, issued, bound, bound_res, resident, sm_next, stats):
    """After SM ``s``'s cycle ``c``: its next event (the next cycle if it issued, else the least bound of its
    schedulers; none once no block is resident) and the cycles blocked by memory resources. Returns whether the
    SM is blocked by memory resources until ``bound``."""
    blocked = False
    if issued:
        stats[S_ISSUE_CYC] += 1
        sm_next[s] = c + 1
    elif resident[s] == 0:
        sm_next[s] = _INF
    else:
        sm_next[s] = bound
        if bound_res and bound < _INF:
            stats[S_MEM_BLOCKED] += bound - c
            blocked = True
    if resident[s] == 0:
        sm_next[s] = _INF
    return blocked


@nb.njit(cache=True, inline="always")
def _track_marks(c, issued, blocked, bound, trk_issue, trk_block):
    """The tracked SM's marks of cycle ``c``: issue, and the cycles up to ``bound`` blocked by memory resources.
    Returns the (grown) mark arrays."""
    trk_issue = _grow(trk_issue, c)
    trk_block = _grow(trk_block, c)
    if issued:
        trk_issue[c] = 1
    if blocked:
        trk_block = _grow(trk_block, bound)
        for cc in range(c, bound):
            trk_block[cc] = 1
    return trk_issue, trk_block


@nb.njit(**_STAGE)
def _finish(stats, warp_end, sm_first, sm_end):
    """The run's totals into ``stats``: cycles (the last result) and SM busy cycles."""
    end = 0
    for w in range(warp_end.shape[0]):
        if warp_end[w] > end:
            end = warp_end[w]
    for s in range(sm_end.shape[0]):
        if sm_first[s] < _INF:
            stats[S_SM_BUSY] += sm_end[s] - sm_first[s]
    stats[S_CYCLES] = end


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _run(warp_ptr, warp_block, block_w0, w_op, w_dep, sptr, acc, w_active, w_div,
         n_sm, n_sched, res_blocks, wpb, unit_of, lat_of, ivl_of, lsu_spc,
         l1_sets, l1_ways, l1_lat, smem_lat, n_mshr, n_sq, l2_sets, l2_ways,
         period, l2_lat, l2_xfer, dram_lat, dram_xfer, track_sm):
    """The timing kernel: the state arrays, the first blocks, then the event loop. Each event is the least next
    cycle ``c`` of the SMs; on each SM due at ``c`` each scheduler wakes a pipeline-waiting slot
    (:func:`_wake_pipe_slot`), scans its slots (:func:`_scan`) and issues the first eligible warp's instruction
    (:func:`_issue_alu`, :func:`_issue_load`, :func:`_issue_store`; :func:`_advance_warp`, :func:`_warp_done`)
    or records its bound (:func:`_merge_pipe_bounds`); :func:`_sm_advance` then sets the SM's next cycle.
    The stages are inlined into one compiled loop (see ``_STAGE``).

    Returns ``(stats, sm_end, issue marks, memory-blocked marks, load-miss starts, load-miss ends)``; the marks
    and intervals are of SM ``track_sm`` (-1: none).
    """
    n_warps = warp_ptr.shape[0] - 1
    n_blocks = block_w0.shape[0] - 1
    n = w_op.shape[0]
    stats = np.zeros(N_STATS, np.float64)
    ready = np.zeros(n, np.int64)
    warp_cur = warp_ptr[:-1].copy()
    warp_end = np.zeros(n_warps, np.int64)
    warp_start = np.zeros(n_warps, np.int64)
    # per warp, for its next instruction: earliest cycle from its own warp (previous issue, producers) and
    # the unit (0 .. _PIPES - 1 pipelines, _LSU load/store); both fixed until the warp issues it
    warp_own = np.zeros(n_warps, np.int64)
    warp_unit = np.zeros(n_warps, np.int64)
    n_slots = res_blocks * wpb
    slot_warp = np.full((n_sm, n_slots), -1, np.int64)
    # the same slots by scheduler: slot q = k + idx * n_sched is [s, k, idx]; per slot its warp (-1: none),
    # the warp's stored lower bound on its issue cycle (_INF: no warp or finished) and whether that bound
    # came from a memory resource (MSHRs / store queue)
    slots_per_sched = (n_slots + n_sched - 1) // n_sched
    sl_warp = np.full((n_sm, n_sched, slots_per_sched), -1, np.int64)
    sl_lb = np.full((n_sm, n_sched, slots_per_sched), _INF, np.int64)
    sl_res = np.zeros((n_sm, n_sched, slots_per_sched), np.bool_)
    # pipeline-waiting slots: bit idx of pmask[s, k, u] is set while slot idx of scheduler k holds a warp whose
    # next instruction needs pipeline u and whose own readiness is not after that pipeline's free cycle, as
    # found by its last check. Such a slot's check gives unit_free[s, k, u] at every later cycle (its own
    # readiness is fixed until it issues; unit_free only grows) and its stored bound is never above that, so
    # the slot scan treats it without a check: blocked (bound unit_free, not from a memory resource) while the
    # pipeline is busy, eligible once it is free. It is out of the scan mask meanwhile (its sl_lb is _INF) and
    # the masks' slots are accounted for in scan order around the scan (docs/simt.md, round 4). pmask[s, k, _PIPES]
    # is the union of the pipelines' masks. Masks are 64-bit: slots 63 and above are always scanned.
    pmask = np.zeros((n_sm, n_sched, _PIPES + 1), np.int64)
    # slots the scan visits, as a mask per scheduler (bit idx, idx < 63): slots holding a warp that has not
    # finished issuing and is not pipeline-waiting. Others have sl_lb = _INF (nothing to check, no bound), so
    # the scan passes over them without a visit. Slots 63 and above are always visited.
    scanm = np.zeros((n_sm, n_sched), np.int64)
    block_left = np.zeros(n_blocks, np.int64)
    for b in range(n_blocks):
        block_left[b] = block_w0[b + 1] - block_w0[b]
    next_blk = np.arange(n_sm).astype(np.int64)  # next block index for SM s: s, s + n_sm, ...
    resident = np.zeros(n_sm, np.int64)
    unit_free = np.zeros((n_sm, n_sched, _PIPES), np.int64)
    lsu_free = np.zeros(n_sm, np.int64)
    # MSHR / store-queue entries: per SM only the multiset of the entries' free cycles matters (every entry
    # free at the current cycle stays free at every later one: the cycle never goes back), so each is kept as a
    # sorted window mq[s, mh[s] : mh[s] + n_mshr] (qq / qh: store queue) of a wider row. Taking an entry takes
    # the earliest-free one (the head: a free one if any is free, else the one that frees first) and inserts
    # its new free cycle in order; the window moves right and is copied back to the row start when it reaches
    # the end. The need-th free cycle (when a memory instruction can get `need` entries) is mq[s, mh[s] + need - 1].
    # Rows are uninitialised beyond the first window (np.empty: pages are only written where windows go).
    mcap = 2 * n_mshr + 1
    qcap = 2 * n_sq + 1
    mq = np.empty((n_sm, mcap), np.int64)
    mq[:, :n_mshr] = 0
    mh = np.zeros(n_sm, np.int64)
    qq = np.empty((n_sm, qcap), np.int64)
    qq[:, :n_sq] = 0
    qh = np.zeros(n_sm, np.int64)
    # caches: all of a set's state is one record of 2 * ways int64 words in a compact array: the ways' packed
    # words (LRU stamp << 32 | dirty << 31 | tag, tag = the sector's dense number + 1 from acc[:, 0]; an empty
    # way is the word 0), then the ways' ready times (L1: cycles; L2: ns, float64 bits through the view c2f),
    # so a lookup reads one host cache line of words (records start on a 64-byte boundary). Packing keeps the
    # LRU order: stamps are distinct and positive for filled ways, so comparing words compares stamps, and an
    # empty way (0) is below every filled one, as when stamps were separate. A set gets its record the first
    # time a sector maps to it; l1_map[s * l1_sets + set] / l2_map[set] hold its number + 1 (0 = never touched,
    # i.e. all ways empty). A run touches at most one new set per sector access, so the compact arrays hold
    # min(sets, sector accesses) records; they are left uninitialised (np.empty: no pages written) and a
    # record is zeroed when its set is first touched. Memory work thus follows the sets a run touches, not the
    # cache size (a 50 MB L2 has 100k sets). acc[j] = (tag, L1 set, L2 set) of sector access j.
    n_acc = acc.shape[0]
    l1_map = np.zeros(n_sm * l1_sets, np.int32)
    l2_map = np.zeros(l2_sets, np.int32)
    n_l1 = 0
    n_l2 = 0
    rec1 = 2 * l1_ways
    rec2 = 2 * l2_ways
    buf1 = np.empty(min(n_sm * l1_sets, n_acc) * rec1 + 8, np.int64)
    buf2 = np.empty(min(l2_sets, n_acc) * rec2 + 8, np.int64)
    c1 = buf1[((64 - (buf1.ctypes.data & 63)) & 63) >> 3:]
    o2 = ((64 - (buf2.ctypes.data & 63)) & 63) >> 3
    c2 = buf2[o2:]
    c2f = buf2.view(np.float64)[o2:]
    st = np.zeros(2, np.float64)
    # the sum of the words a load's prefetch pass reads (below): stored so that the loads are not optimised away
    pf_sink = np.zeros(1, np.int64)
    clock = np.int64(0)
    l1_clock = np.int64(0)
    sm_next = np.full(n_sm, _INF, np.int64)
    sm_first = np.full(n_sm, _INF, np.int64)
    sm_end = np.zeros(n_sm, np.int64)
    rr = np.zeros((n_sm, n_sched), np.int64)
    sched_lb = np.zeros((n_sm, n_sched), np.int64)
    sched_res = np.zeros((n_sm, n_sched), np.bool_)
    # tracking (one SM): issue marks, resource-blocked marks, load-miss intervals
    trk_issue = np.zeros(16, np.int8)
    trk_block = np.zeros(16, np.int8)
    trk_li = np.zeros(16, np.int64)
    trk_lr = np.zeros(16, np.int64)
    n_trk = 0
    # stage parameters: L1 geometry, times (core cycles / ns), and the counters the memory stages advance (L1 / L2
    # set records started, L2 / L1 LRU clocks); a memory queue row holds 2 * entries + 1 words, so the stages
    # read a queue's size as its row length // 2
    l1_geo = (l1_sets, l1_ways, rec1)
    times = (period, l1_lat, l2_lat, l2_xfer, dram_lat, dram_xfer)
    counts = (np.int64(n_l1), np.int64(n_l2), clock, l1_clock)
    # launch the first blocks
    for s in range(n_sm):
        for r in range(res_blocks):
            b = next_blk[s]
            if b >= n_blocks:
                break
            next_blk[s] = b + n_sm
            resident[s] += _launch_block(s, b, r, np.int64(0), wpb, block_w0, slot_warp, sl_warp, sl_lb, sl_res,
                                         scanm, warp_cur, warp_ptr, warp_start, warp_own, warp_unit, w_dep, w_op,
                                         unit_of, ready)
            sm_next[s] = 0
            sm_first[s] = 0
    warps_left = n_warps
    for w in range(n_warps):
        if warp_ptr[w] == warp_ptr[w + 1]:
            warps_left -= 1  # cannot happen for built streams; kept for safety
    while warps_left > 0:
        c = _INF
        for s in range(n_sm):
            if sm_next[s] < c:
                c = sm_next[s]
        if c >= _INF:
            break
        stats[S_EVENTS] += 1
        for s in range(n_sm):
            if sm_next[s] > c:
                continue
            issued = False
            bound = _INF
            bound_res = False
            for k in range(n_sched):
                if sched_lb[s, k] > c:
                    if sched_lb[s, k] < bound:
                        bound = sched_lb[s, k]
                        bound_res = sched_res[s, k]
                    continue
                greedy = rr[s, k]
                _wake_pipe_slot(s, k, c, greedy, pmask, unit_free, scanm, sl_lb)
                w, idx, kbound, kres = _scan(s, k, c, greedy, sl_warp, sl_lb, sl_res, scanm, pmask, stats, warp_own,
                                             warp_unit, unit_free, lsu_free, warp_cur, w_op, sptr, acc, l1_map, c1,
                                             l1_geo, mq, mh, qq, qh)
                if w < 0:
                    kbound, kres = _merge_pipe_bounds(s, k, greedy, kbound, kres, pmask, unit_free, sl_lb)
                    sched_lb[s, k] = kbound
                    sched_res[s, k] = kres
                    if kbound < bound:
                        bound = kbound
                        bound_res = kres
                    continue
                # ---- issue instruction i of warp w (slot idx) on SM s, scheduler k, cycle c
                rr[s, k] = idx
                sched_lb[s, k] = c + 1
                issued = True
                i = warp_cur[w]
                op = w_op[i]
                u = unit_of[op]
                stats[S_WINSTR] += 1
                r_i = c + 1
                if u < _PIPES:
                    r_i = _issue_alu(s, k, c, i, op, u, unit_free, lat_of, ivl_of, w_active, w_div, stats)
                else:
                    _lsu_occupy(s, i, c, sptr, lsu_spc, lsu_free, stats)
                    if op == 8:
                        r_i, missed, counts = _issue_load(s, i, c, sptr, acc, l1_map, c1, l1_geo, l2_map, c2, c2f,
                                                          l2_ways, mq, mh, st, pf_sink, stats, smem_lat, times, counts)
                        stats[S_LOAD_WAIT] += r_i - c
                        if missed and s == track_sm:
                            trk_li, trk_lr, n_trk = _track_load(trk_li, trk_lr, n_trk, c, r_i)
                    else:
                        counts = _issue_store(s, i, c, sptr, acc, l1_map, c1, l1_geo, l2_map, c2, c2f, l2_ways, qq,
                                              qh, st, stats, times, counts)
                if _advance_warp(w, i, c, r_i, ready, warp_end, warp_cur, warp_ptr, warp_own, warp_unit, w_dep, w_op,
                                 unit_of):
                    warps_left -= 1
                    _warp_done(s, k, idx, w, wpb, stats, warp_block, block_left, block_w0, warp_end, warp_start,
                               slot_warp, sl_warp, sl_lb, sl_res, scanm, resident, sm_end, sched_lb, next_blk,
                               warp_cur, warp_ptr, warp_own, warp_unit, w_dep, w_op, unit_of, ready)
            blocked = _sm_advance(s, c, issued, bound, bound_res, resident, sm_next, stats)
            if s == track_sm:
                trk_issue, trk_block = _track_marks(c, issued, blocked, bound, trk_issue, trk_block)
    _finish(stats, warp_end, sm_first, sm_end)
    return stats, sm_end, trk_issue, trk_block, trk_li[:n_trk].copy(), trk_lr[:n_trk].copy()


def _access_table(streams: WarpStreams, l1_sets: int, l2_sets: int) -> np.ndarray:
    """Per sector access ``j`` of the streams: ``(tag, L1 set, L2 set)`` as int32, cached on the streams.

    The tag is the sector's number among the distinct sectors of the streams plus one (so that it fits the
    31-bit tag field of a packed cache way word; 0 marks an empty way); the sets are ``sector mod sets``. The
    table depends only on the streams and the cache geometry, so a sweep computes it once (16 bytes per
    sector access and geometry, kept with the streams; streams are never modified in place). The fourth
    column is padding: 16-byte rows measured marginally faster than 12-byte ones.

    Parameters
    ----------
    streams : WarpStreams
    l1_sets, l2_sets : int
        Sets of the L1 and of the L2.

    Returns
    -------
    ndarray of int32, shape (sector accesses, 4)
    """
    cache = streams.__dict__.setdefault("_simt_access", {})
    key = (int(l1_sets), int(l2_sets))
    tab = cache.get(key)
    if tab is None:
        sectors = streams.sectors
        if sectors.shape[0] >= 2**31 - 1:
            raise ValueError(f"{sectors.shape[0]} sector accesses: the timing model handles fewer than 2**31 - 1")
        tag = cache.get("tag")
        if tag is None:
            tag = np.unique(sectors, return_inverse=True)[1].reshape(-1).astype(np.int32) + np.int32(1)
            cache["tag"] = tag
        tab = np.empty((sectors.shape[0], 4), np.int32)
        tab[:, 0] = tag
        tab[:, 1] = sectors % key[0]
        tab[:, 2] = sectors % key[1]
        tab[:, 3] = 0
        cache[key] = tab
    return tab


def _kernel_args(streams: WarpStreams, cfg: GPUConfig, sm_count: int, core_mhz: float, mem_mhz: float):
    tables = cfg.__dict__.get("_simt_op_tables")  # cached on the (frozen) configuration: read-only in the kernel
    if tables is None:
        tables = cfg.op_tables()
        cfg.__dict__["_simt_op_tables"] = tables
    unit, lat, ivl = tables
    wpb = streams.warps_per_block
    res_blocks = min(cfg.max_blocks_per_sm, cfg.max_warps_per_sm // wpb)
    if res_blocks < 1:
        raise ValueError(f"a block of {streams.block_size} threads needs {wpb} warps, more than "
                         f"max_warps_per_sm={cfg.max_warps_per_sm} of GPU {cfg.name!r}")
    block_w0 = streams.__dict__.get("_simt_block_w0")  # first warp of each block, cached on the streams
    if block_w0 is None:
        block_w0 = np.searchsorted(streams.warp_block, np.arange(streams.n_blocks + 1)).astype(np.int64)
        streams.__dict__["_simt_block_w0"] = block_w0
    period = 1000.0 / core_mhz
    return (streams.warp_ptr, streams.warp_block, block_w0, streams.op, streams.dep, streams.sector_ptr,
            _access_table(streams, cfg.l1_sets, cfg.l2_sets), streams.active, streams.divergent,
            int(sm_count), cfg.schedulers_per_sm, int(res_blocks), int(wpb), unit, lat, ivl,
            cfg.lsu_sectors_per_cycle, cfg.l1_sets, cfg.l1_ways, cfg.l1_latency_cycles, cfg.shared_latency_cycles,
            cfg.mshr_per_sm,
            cfg.store_queue_per_sm, cfg.l2_sets, cfg.l2_ways, period, cfg.l2_latency_ns,
            SECTOR_BYTES / cfg.l2_bytes_per_ns, cfg.dram_latency_ns, SECTOR_BYTES / cfg.dram_bytes_per_ns(mem_mhz))


@dataclasses.dataclass(frozen=True)
class SimResult:
    """One run of a region on one configuration.

    Attributes
    ----------
    gpu : str
        Preset name.
    sm_count, core_mhz, mem_mhz : configuration of the run
    cycles : int
        Core cycles from the first issue to the last result.
    time_ns : float
        ``cycles * 1000 / core_mhz``.
    stats : dict
        Raw activity counts (warp instructions per unit, cache hits and misses, DRAM sectors, ...).
    counters : dict
        Table II-style counters (papers/000), see :func:`table2_counters`.
    power_w : float
        Activity-based dynamic power estimate in W.
    energy_j : float
        Dynamic energy in J.
    crisp : CounterRecord or None
        Counters of every DVFS model read on the SM that finishes last (``None`` unless asked for).
    """

    gpu: str
    sm_count: int
    core_mhz: float
    mem_mhz: float
    cycles: int
    time_ns: float
    stats: dict
    counters: dict
    power_w: float
    energy_j: float
    crisp: CounterRecord | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict (CRISP record as a dict).

        Returns
        -------
        dict
        """
        d = dataclasses.asdict(self)
        d["crisp"] = self.crisp.to_dict() if self.crisp is not None else None
        return d


STAT_NAMES = ("cycles", "int_instructions", "fp_instructions", "sfu_instructions", "load_instructions",
              "store_instructions", "alu_active_lanes", "l1_hits", "l1_misses", "l2_hits", "l2_misses",
              "dram_read_sectors", "dram_write_sectors", "load_sectors", "store_sectors", "sm_busy_cycles",
              "warp_resident_cycles", "lsu_busy_cycles", "alu_busy_cycles", "issue_cycles", "mem_blocked_cycles",
              "divergent_branches", "branches", "warp_instructions", "load_wait_cycles", "sim_events",
              "sim_warp_checks", "fp64_instructions")


def table2_counters(stats: np.ndarray, cfg: GPUConfig, sm_count: int, core_mhz: float, n_blocks: int) -> dict:
    """Counters in the style of papers/000 Table II from a run's activity counts.

    Parameters
    ----------
    stats : ndarray
        The statistics vector of the timing kernel.
    cfg : GPUConfig
    sm_count : int
    core_mhz : float
    n_blocks : int

    Returns
    -------
    dict
        ``valu_insts, vfetch_insts, vwrite_insts`` (fractions of warp instructions), ``valu_utilization``
        (mean active lanes / 32 of ALU instructions), ``valu_busy`` (ALU pipeline busy fraction of
        scheduler-cycles), ``cache_hit`` (L2 hit rate), ``l1_hit``, ``mem_unit_busy``, ``mem_unit_stalled``,
        ``occupancy`` (mean resident warps / max), ``v_ipc`` (warp instructions per SM-cycle),
        ``read_bandwidth_gbs``, ``write_bandwidth_gbs`` (DRAM), ``fetch_per_load_byte``,
        ``write_per_store_byte``, ``num_work_groups`` (saturating at 320, as in the paper),
        ``branch_divergence`` (fraction of branches that diverge).
    """
    s = stats
    cycles = max(s[S_CYCLES], 1.0)
    busy = max(s[S_SM_BUSY], 1.0)
    wi = max(s[S_WINSTR], 1.0)
    alu = s[S_INT] + s[S_FP] + s[S_SFU] + s[S_FP64]
    t_ns = cycles * 1000.0 / core_mhz
    l2 = s[S_L2_HIT] + s[S_L2_MISS]
    l1 = s[S_L1_HIT] + s[S_L1_MISS]
    return {
        "valu_insts": alu / wi,
        "vfetch_insts": s[S_LOAD] / wi,
        "vwrite_insts": s[S_STORE] / wi,
        "valu_utilization": s[S_ALU_LANES] / (32.0 * alu) if alu else 0.0,
        "valu_busy": min(1.0, s[S_ALU_BUSY] / (busy * cfg.schedulers_per_sm)),
        "cache_hit": s[S_L2_HIT] / l2 if l2 else 0.0,
        "l1_hit": s[S_L1_HIT] / l1 if l1 else 0.0,
        "mem_unit_busy": min(1.0, s[S_LSU_BUSY] / busy),
        "mem_unit_stalled": min(1.0, s[S_MEM_BLOCKED] / busy),
        "occupancy": min(1.0, s[S_WARP_RES] / (busy * cfg.max_warps_per_sm)),
        "v_ipc": s[S_WINSTR] / busy,
        "read_bandwidth_gbs": s[S_DRAM_RD] * SECTOR_BYTES / t_ns,
        "write_bandwidth_gbs": s[S_DRAM_WR] * SECTOR_BYTES / t_ns,
        "fetch_per_load_byte": s[S_LOAD] / (s[S_LOAD_SECT] * SECTOR_BYTES) if s[S_LOAD_SECT] else 0.0,
        "write_per_store_byte": s[S_STORE] / (s[S_STORE_SECT] * SECTOR_BYTES) if s[S_STORE_SECT] else 0.0,
        "num_work_groups": float(min(n_blocks, 320)),
        "branch_divergence": s[S_DIVERGENT] / s[S_BRANCH] if s[S_BRANCH] else 0.0,
    }


def dynamic_energy_pj(stats: np.ndarray, cfg: GPUConfig, core_mhz: float) -> float:
    """Activity-based dynamic energy of a run in pJ.

    Core-side events (pipelines, load/store unit, L1, L2, active SM cycles) cost ``pj[event] * (V/v_max)^2``
    with ``V`` the voltage at ``core_mhz``; DRAM bytes cost ``pj['dram_byte']`` (own voltage domain).

    Parameters
    ----------
    stats : ndarray
    cfg : GPUConfig
    core_mhz : float

    Returns
    -------
    float
    """
    pj = cfg.power["pj"]
    s = stats
    v = cfg.voltage(core_mhz) / cfg.power["v_max"]
    core = (s[S_INT] * pj["int"] + s[S_FP] * pj["fp"] + s[S_SFU] * pj["sfu"] + s[S_FP64] * pj["fp64"]
            + (s[S_LOAD] + s[S_STORE]) * pj["lsu"] + (s[S_L1_HIT] + s[S_L1_MISS]) * pj["l1"]
            + (s[S_L2_HIT] + s[S_L2_MISS]) * pj["l2"] + s[S_SM_BUSY] * pj["sm_cycle"])
    dram = (s[S_DRAM_RD] + s[S_DRAM_WR]) * SECTOR_BYTES * pj["dram_byte"]
    return float(core * v * v + dram)


def _execution(trk_issue, trk_block, li, lr, cycles: int, core_mhz: float) -> Execution:
    state = np.zeros(cycles, np.int8)
    n = min(cycles, trk_issue.shape[0])
    issue = np.zeros(cycles, bool)
    issue[:n] = trk_issue[:n] == 1
    blocked = np.zeros(cycles, bool)
    m = min(cycles, trk_block.shape[0])
    blocked[:m] = trk_block[:m] == 1
    diff = np.zeros(cycles + 1, np.int64)
    np.add.at(diff, li, 1)
    np.add.at(diff, lr, -1)
    outstanding = np.cumsum(diff[:-1]) > 0
    state[~issue & outstanding] = 1
    state[~issue & ~outstanding & blocked] = 2
    return Execution(float(core_mhz), state, li.astype(np.int64), lr.astype(np.int64))


def simulate(streams: WarpStreams, cfg: GPUConfig, sm_count: int | None = None, core_mhz: float | None = None,
             mem_mhz: float | None = None, crisp: bool = True, name: str = "") -> SimResult:
    """Run a region's warp streams on a GPU configuration.

    Parameters
    ----------
    streams : WarpStreams
        From :func:`gpu_models.simt.threads.build_streams`.
    cfg : GPUConfig
        The GPU.
    sm_count, core_mhz, mem_mhz : optional
        Override the configuration's SM count and clocks.
    crisp : bool
        Also derive the DVFS models' counters (a second, recording run on the SM that finishes last).
    name : str
        Kernel name stored in the CRISP record.

    Returns
    -------
    SimResult
    """
    sm = int(cfg.sm_count if sm_count is None else sm_count)
    f = float(cfg.core_mhz if core_mhz is None else core_mhz)
    fm = float(cfg.mem_mhz if mem_mhz is None else mem_mhz)
    for label, v in (("sm_count", sm), ("core_mhz", f), ("mem_mhz", fm)):
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{label} must be positive, got {v}")
        if v > MAX_VALUE[label]:
            raise ValueError(f"{label} = {v:g} is out of range: at most {MAX_VALUE[label]:g}")
    args = _kernel_args(streams, cfg, sm, f, fm)
    stats, sm_end, *_ = _run(*args, -1)
    rec = None
    if crisp:
        track = int(np.argmax(sm_end))
        stats2, _, ti, tb, li, lr = _run(*args, track)
        cycles = int(stats2[S_CYCLES])
        ex = _execution(ti, tb, li, lr, cycles, f)
        rec = derive_counters(ex, name=name)
    return _result(stats, cfg, sm, f, fm, streams.n_blocks, rec)


def _result(stats, cfg, sm, f, fm, n_blocks, rec) -> SimResult:
    cycles = int(stats[S_CYCLES])
    t_ns = cycles * 1000.0 / f
    e_pj = dynamic_energy_pj(stats, cfg, f)
    return SimResult(
        gpu=cfg.name, sm_count=sm, core_mhz=f, mem_mhz=fm, cycles=cycles, time_ns=t_ns,
        stats={k: float(v) for k, v in zip(STAT_NAMES, stats[:N_STATS])},
        counters=table2_counters(stats, cfg, sm, f, n_blocks),
        power_w=(e_pj / t_ns / 1000.0) if t_ns > 0 else 0.0, energy_j=e_pj * 1e-12, crisp=rec,
    )
