"""Footprint (memInt, pages, data/instruction footprint) and LRU reuse distance (coldRef, reuseDist4, histogram)."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import Op, TraceChunk

from ._base import Analyzer, grow_1d, pc_capacity, ratio
from ._hash import HashIndex, insert

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
N_REUSE_BUCKETS = 19  # b0 = {0, 1}, bk = [2^k, 2^(k+1)) for k = 1..17, b18 = >= 2^18


# --------------------------------------------------------------------------------------------- footprint


@njit(cache=True)
def _footprint_kernel(op, pc, addr, size, start, bkeys, bslots, bstate, pkeys, pslots, pstate, newblk, pcseen):
    """Records from ``start``; returns the first one not processed (stops before a record whose blocks or
    pages could take a table past its limit). A page is looked up only when one of its blocks is new."""
    bmask = bkeys.shape[0] - 1
    pmask = pkeys.shape[0] - 1
    bn = bstate[0]
    blim = bstate[1]
    pn = pstate[0]
    plim = pstate[1]
    n = op.shape[0]
    stop = n
    for i in range(start, n):
        p = pc[i]
        pcseen[p] = 1
        o = op[i]
        if o != LOAD and o != STORE:
            continue
        a = addr[i]
        e = a + size[i] - 1
        b0 = a >> 6
        b1 = e >> 6
        if bn + (b1 - b0 + 1) > blim or pn + ((e >> 12) - (a >> 12) + 1) > plim:
            stop = i
            break
        for b in range(b0, b1 + 1):
            s, new = insert(bkeys, bslots, bmask, b, bn)
            if new:
                bn += 1
                newblk[p] += 1
                s, new = insert(pkeys, pslots, pmask, b >> 6, pn)
                if new:
                    pn += 1
    bstate[0] = bn
    pstate[0] = pn
    return stop


class FootprintAnalyzer(Analyzer):
    """Distinct 64-byte blocks and 4 KiB pages touched by loads and stores; distinct static instructions."""

    family = "footprint"

    def __init__(self) -> None:
        super().__init__()
        self.blocks = HashIndex(1024)
        self.pages = HashIndex(1024)
        self.bstate = np.array([0, self.blocks.limit], np.int64)
        self.pstate = np.array([0, self.pages.limit], np.int64)
        self.newblk = np.zeros(0, np.int64)
        self.pcseen = np.zeros(0, np.uint8)

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        npc = pc_capacity(chunk)
        self.newblk = grow_1d(self.newblk, npc)
        self.pcseen = grow_1d(self.pcseen, npc)
        i = 0
        while i < n:
            i = _footprint_kernel(chunk.op, chunk.pc, chunk.addr, chunk.size, i, self.blocks.keys, self.blocks.slots,
                                  self.bstate, self.pages.keys, self.pages.slots, self.pstate, self.newblk,
                                  self.pcseen)
            if i < n:
                a, s = int(chunk.addr[i]), int(chunk.size[i])
                for idx, st, shift in ((self.blocks, self.bstate, 6), (self.pages, self.pstate, 12)):
                    need = ((a + s - 1) >> shift) - (a >> shift) + 1
                    if st[0] + need > st[1]:
                        idx.n = int(st[0])
                        idx.grow(need)
                        st[1] = idx.limit
        self.n += n

    def result(self) -> dict[str, float]:
        nb, npg = int(self.bstate[0]), int(self.pstate[0])
        return {
            "memInt": ratio(nb, self.n),
            "pages": ratio(npg, self.n),
            "mica_dataBlocks": float(nb),
            "mica_dataPages": float(npg),
            "mica_instrFootprint": float(np.count_nonzero(self.pcseen)),
        }

    def contributions(self) -> dict[str, dict[int, float]]:
        return {"footprint": {int(p): float(self.newblk[p]) for p in np.flatnonzero(self.newblk)}}


# --------------------------------------------------------------------------------------------- reuse distance


@njit(cache=True, inline="always")
def _bit_add(bit, pos, v):
    j = pos + 1
    m = bit.shape[0]
    while j < m:
        bit[j] += v
        j += j & (-j)


@njit(cache=True, inline="always")
def _bit_prefix(bit, pos):
    """Sum of positions 0..pos inclusive."""
    j = pos + 1
    s = 0
    while j > 0:
        s += bit[j]
        j -= j & (-j)
    return s


@njit(cache=True)
def _reuse_kernel(op, addr, size, start, keys, slots, state, pos, bit, hist):
    # state = [n blocks (M), hash limit, T (next time position), tree capacity]
    mask = keys.shape[0] - 1
    cap = state[3]
    n = op.shape[0]
    for i in range(start, n):
        if op[i] != LOAD:
            continue
        a = addr[i]
        b0 = a >> 6
        b1 = (a + size[i] - 1) >> 6
        nb = b1 - b0 + 1
        if state[0] + nb > state[1] or state[2] + nb > cap:
            return i
        for b in range(b0, b1 + 1):
            m = state[0]
            t = state[2]
            s, new = insert(keys, slots, mask, b, m)
            if new:
                hist[N_REUSE_BUCKETS] += 1
                pos[s] = t
                _bit_add(bit, t, 1)
                state[0] = m + 1
                state[2] = t + 1
                continue
            p = pos[s]
            if p == t - 1:  # the most recent reference: distance 0, stack unchanged
                hist[0] += 1
                continue
            d = m - _bit_prefix(bit, p)
            if d <= 1:
                hist[0] += 1
            else:
                k = 0
                x = d
                while x > 1:
                    x >>= 1
                    k += 1
                hist[k if k < 18 else 18] += 1
            _bit_add(bit, p, -1)
            _bit_add(bit, t, 1)
            pos[s] = t
            state[2] = t + 1
    return n


@njit(cache=True)
def _compact(pos, m, cap):
    """Renumber the M live positions to 0..M-1 (keeping their order); a fresh tree of ``cap`` positions."""
    order = np.argsort(pos[:m])
    for r in range(m):
        pos[order[r]] = r
    bit = np.zeros(cap + 1, np.int32)
    for r in range(m):
        _bit_add(bit, r, 1)
    return bit


class ReuseDistanceAnalyzer(Analyzer):
    """LRU stack distance of load block references (``docs/features.md``, "Footprint and reuse").

    A Fenwick tree over reference positions holds a 1 at each block's latest reference; the distance of
    a reference is the number of ones after the block's previous position, O(log M) per reference.
    When the positions run out the live ones are renumbered 0..M-1, so memory stays O(distinct blocks).
    """

    family = "reuse"

    def __init__(self) -> None:
        super().__init__()
        self.index = HashIndex(1024)
        self.pos = np.zeros(self.index.limit, np.int64)
        self.bit = np.zeros(4096 + 1, np.int32)
        self.state = np.array([0, self.index.limit, 0, 4096], np.int64)
        self.hist = np.zeros(N_REUSE_BUCKETS + 1, np.int64)  # last = cold

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        i = 0
        st = self.state
        while i < n:
            i = _reuse_kernel(chunk.op, chunk.addr, chunk.size, i, self.index.keys, self.index.slots, st, self.pos,
                              self.bit, self.hist)
            if i < n:
                a, s = int(chunk.addr[i]), int(chunk.size[i])
                need = ((a + s - 1) >> 6) - (a >> 6) + 1
                m = int(st[0])
                if m + need > st[1]:
                    self.index.n = m
                    self.index.grow(need)
                    st[1] = self.index.limit
                    pos = np.zeros(self.index.limit, np.int64)
                    pos[:m] = self.pos[:m]
                    self.pos = pos
                if st[2] + need > st[3]:
                    cap = 4096
                    while cap < 2 * (m + need):
                        cap <<= 1
                    self.bit = _compact(self.pos, m, cap)
                    st[2] = m
                    st[3] = cap
        self.n += n

    def result(self) -> dict[str, float]:
        h = self.hist
        refs = int(h.sum())
        cold = int(h[N_REUSE_BUCKETS])
        out = {"coldRef": ratio(cold, refs), "reuseDist4": ratio(h[0] + h[1], refs)}
        for k in range(N_REUSE_BUCKETS):
            out[f"mica_reuse_b{k}"] = ratio(h[k], refs)
        out["mica_reuse_cold"] = ratio(cold, refs)
        out["mica_loadBlockRefs"] = float(refs)
        return out
