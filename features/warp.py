"""Warp-level views: coalescing, warp branch divergence, available parallelism, arithmetic intensity."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import Op, TraceChunk, TraceError

from ._base import Analyzer, claim_slot, grow_1d, ratio

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
BRANCH = np.uint8(Op.BRANCH)
FP_ALU = np.uint8(Op.FP_ALU)
FP_SPECIAL = np.uint8(Op.FP_SPECIAL)
WARP = 32
SECTOR_SHIFT = 5  # 32-byte sectors
MAX_TID = 1 << 36


_HMUL = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, multiplicative hashing


@njit(cache=True, nogil=True, boundscheck=False)
def _union_size(lo, hi, m, a, b):
    """Number of integers covered by the union of intervals [lo[k], hi[k]], k < m (m >= 1); ``a``, ``b`` are
    scratch arrays of at least 2 * m entries (no allocation).

    When every interval is one integer (an access within one sector, the usual case) the union is the number
    of distinct values: counted in one branch-free pass when they are sorted (a streaming group), else with
    a 2m-cell open-addressing set (a gather: no data-dependent sort). Otherwise the intervals are merged
    after an insertion sort by lower end."""
    single = True
    ordered = True
    for r in range(m):
        single &= lo[r] == hi[r]
    for r in range(1, m):
        ordered &= lo[r] >= lo[r - 1]
    if single:
        if ordered:
            c = 1
            for r in range(1, m):
                c += lo[r] != lo[r - 1]
            return c
        # set of cells a[h] (keys) and b[h] (1 = used), 2^bits >= 2m cells
        bits = 1
        while (1 << bits) < 2 * m:
            bits += 1
        size = 1 << bits
        for h in range(size):
            b[h] = 0
        c = 0
        for r in range(m):
            x = lo[r]
            h = ((x * _HMUL) >> (64 - bits)) & (size - 1)
            while b[h] != 0 and a[h] != x:
                h = (h + 1) & (size - 1)
            if b[h] == 0:
                b[h] = 1
                a[h] = x
                c += 1
        return c
    for r in range(m):
        x = lo[r]
        y = hi[r]
        j = r
        while j > 0 and a[j - 1] > x:
            a[j] = a[j - 1]
            b[j] = b[j - 1]
            j -= 1
        a[j] = x
        b[j] = y
    total = 0
    cur_lo = a[0]
    cur_hi = b[0]
    for r in range(1, m):
        x = a[r]
        y = b[r]
        if x > cur_hi + 1:
            total += cur_hi - cur_lo + 1
            cur_lo = x
            cur_hi = y
        elif y > cur_hi:
            cur_hi = y
    total += cur_hi - cur_lo + 1
    return total


@njit(cache=True, nogil=True, boundscheck=False)
def _warp_kernel(op, pc, taken, addr, size, tid, start, pcslot, state, gn, lo, hi, gbytes, wcur, wflags, tidbits,
                 totals):
    """Records from ``start``; returns the first one not processed (a new static instruction needs a slot
    and none is left, or a tid is past the bitmap). The counters live in locals, written back on every exit;
    consecutive records of one thread (a loop iteration's records) set its tid bit once."""
    # state = [n slots, slot capacity]
    # totals = [groups, sectors, ideal sectors, branch groups closed, divergent closed, parallel records,
    #           fp ops, bytes]
    n = op.shape[0]
    sa = np.empty(2 * WARP, np.int64)
    sb = np.empty(2 * WARP, np.int64)
    ngroups = totals[0]
    nsec = totals[1]
    nideal = totals[2]
    nbg = totals[3]
    nbd = totals[4]
    npar = totals[5]
    nfp = totals[6]
    nbytes = totals[7]
    ntid = tidbits.shape[0]
    last_tt = np.int64(-1)
    stop = n
    for i in range(start, n):
        o = op[i]
        tt = tid[i]
        if tt >= 0 and tt != last_tt:
            if (tt >> 3) >= ntid:
                stop = i
                break
            tidbits[tt >> 3] |= np.uint8(1 << (tt & 7))
            last_tt = tt
        is_mem = o == LOAD or o == STORE
        is_br = o == BRANCH
        if is_mem or is_br:
            p = pc[i]
            s = pcslot[p]
            if s < 0:
                s = claim_slot(pcslot, state, p)
                if s < 0:
                    stop = i
                    break
            if is_mem:
                a = addr[i]
                sz = size[i]
                nbytes += sz
                k = gn[s]
                lo[s, k] = a >> SECTOR_SHIFT
                hi[s, k] = (a + sz - 1) >> SECTOR_SHIFT
                gbytes[s] += sz
                k += 1
                if k == WARP:
                    ngroups += 1
                    nsec += _union_size(lo[s], hi[s], WARP, sa, sb)
                    nideal += (gbytes[s] + 31) >> SECTOR_SHIFT
                    gbytes[s] = 0
                    k = 0
                gn[s] = k
            elif tt >= 0:
                w = tt >> 5  # tt // WARP, tt >= 0
                if wcur[s] != w:
                    if wcur[s] >= 0:
                        nbg += 1
                        if wflags[s] == 3:
                            nbd += 1
                    wcur[s] = w
                    wflags[s] = 0
                wflags[s] |= np.uint8(1 if taken[i] else 2)
        npar += tt >= 0
        nfp += (o >= FP_ALU) & (o <= FP_SPECIAL)
    totals[0] = ngroups
    totals[1] = nsec
    totals[2] = nideal
    totals[3] = nbg
    totals[4] = nbd
    totals[5] = npar
    totals[6] = nfp
    totals[7] = nbytes
    return stop


@njit(cache=True, nogil=True)
def _open_groups(nslots, gn, lo, hi, gbytes, wcur, wflags):
    """Totals of the groups still open at the end: (groups, sectors, ideal, branch groups, divergent)."""
    sa = np.empty(2 * WARP, np.int64)
    sb = np.empty(2 * WARP, np.int64)
    g = 0
    sec = 0
    ideal = 0
    bg = 0
    bd = 0
    for s in range(nslots):
        if gn[s] > 0:
            g += 1
            sec += _union_size(lo[s], hi[s], gn[s], sa, sb)
            ideal += (gbytes[s] + 31) >> SECTOR_SHIFT
        if wcur[s] >= 0:
            bg += 1
            if wflags[s] == 3:
                bd += 1
    return g, sec, ideal, bg, bd


class WarpAnalyzer(Analyzer):
    """What a GPU port would see, with the parallel loop's iterations (``tid``) as threads.

    * coalescing: for each static LOAD/STORE, consecutive groups of 32 instances (the last group may be
      partial) count the distinct 32-byte sectors they touch; the ideal is ceil(bytes / 32);
    * warp branch divergence: for each static BRANCH, its executions by threads tid // 32 == w (a warp),
      taken in maximal runs of the same warp, are divergent when both outcomes occur;
    * available parallelism: distinct tids >= 0; arithmetic intensity: FP ops per byte loaded and stored.
    """

    family = "warp"

    def __init__(self) -> None:
        super().__init__()
        self.pcslot = np.zeros(0, np.int64)
        self.state = np.zeros(2, np.int64)
        self.gn = np.zeros(0, np.int64)
        self.lo = np.zeros((0, WARP), np.int64)
        self.hi = np.zeros((0, WARP), np.int64)
        self.gbytes = np.zeros(0, np.int64)
        self.wcur = np.zeros(0, np.int64)
        self.wflags = np.zeros(0, np.uint8)
        self.tidbits = np.zeros(1024, np.uint8)
        self.totals = np.zeros(8, np.int64)

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        self.pcslot = grow_1d(self.pcslot, self.pc_capacity(chunk), -1)
        i = 0
        while i < n:
            i = _warp_kernel(chunk.op, chunk.pc, chunk.taken, chunk.addr, chunk.size, chunk.tid, i, self.pcslot,
                             self.state, self.gn, self.lo, self.hi, self.gbytes, self.wcur, self.wflags,
                             self.tidbits, self.totals)
            if i < n:
                tt = int(chunk.tid[i])
                if tt >= 0 and (tt >> 3) >= self.tidbits.shape[0]:
                    if tt >= MAX_TID:
                        raise TraceError(f"record {i} of the chunk: tid={tt} exceeds the supported maximum "
                                         f"{MAX_TID - 1}")
                    self.tidbits = grow_1d(self.tidbits, (tt >> 3) + 1)
                    continue
                cap = max(16, 2 * int(self.state[1]))
                self.gn = grow_1d(self.gn, cap)
                self.lo = grow_1d(self.lo, cap)
                self.hi = grow_1d(self.hi, cap)
                self.gbytes = grow_1d(self.gbytes, cap)
                self.wcur = grow_1d(self.wcur, cap, -1)
                self.wflags = grow_1d(self.wflags, cap)
                self.state[1] = cap
        self.n += n

    def result(self) -> dict[str, float]:
        t = self.totals
        g, sec, ideal, bg, bd = _open_groups(int(self.state[0]), self.gn, self.lo, self.hi, self.gbytes, self.wcur,
                                             self.wflags)
        groups, sectors, ideal_s = t[0] + g, t[1] + sec, t[2] + ideal
        threads = int(np.unpackbits(self.tidbits).sum())
        return {
            "warp_coalescing": ratio(ideal_s, sectors),
            "warp_sectorsPerGroup": ratio(sectors, groups),
            "warp_idealSectorsPerGroup": ratio(ideal_s, groups),
            "warp_bdiv": ratio(t[4] + bd, t[3] + bg),
            "warp_threads": float(threads),
            "warp_parallelFraction": ratio(t[5], self.n),
            "warp_arithIntensity": ratio(t[6], t[7]),
        }
