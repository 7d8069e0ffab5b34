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


@njit(cache=True, boundscheck=False)
def _footprint_kernel(op, pc, addr, size, start, bkeys, bslots, bstate, pkeys, pslots, pstate, newblk, pcseen,
                      lastblk, lastok):
    """Records from ``start``; returns the first one not processed (stops before a record whose blocks or
    pages could take a table past its limit). A page is looked up only when one of its blocks is new; an
    access within the block its static instruction touched last (``lastblk[pc]``, valid where ``lastok``)
    is known to be in the set and skips the lookup."""
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
        if b0 == b1 and lastok[p] and lastblk[p] == b0:
            continue
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
        lastblk[p] = b1
        lastok[p] = 1
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
        self.lastblk = np.zeros(0, np.int64)  # per static instruction: the last block it touched
        self.lastok = np.zeros(0, np.uint8)

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        npc = pc_capacity(chunk)
        self.newblk = grow_1d(self.newblk, npc)
        self.pcseen = grow_1d(self.pcseen, npc)
        self.lastblk = grow_1d(self.lastblk, npc)
        self.lastok = grow_1d(self.lastok, npc)
        i = 0
        while i < n:
            i = _footprint_kernel(chunk.op, chunk.pc, chunk.addr, chunk.size, i, self.blocks.keys, self.blocks.slots,
                                  self.bstate, self.pages.keys, self.pages.slots, self.pstate, self.newblk,
                                  self.pcseen, self.lastblk, self.lastok)
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
def _bit_append(bit, t):
    """Put a 1 at position ``t``, the next one after every position used so far.

    Tree nodes are only kept for positions already used (node j, covering positions j - lowbit(j) ..
    j - 1, exists once position j - 1 is): node t + 1 is set from its children t, t - 1, t - 3, ... (the
    nodes t + 1 - 2^k, 2^k < lowbit(t + 1): recent, hence cached), instead of walking up to the tree's end."""
    j = t + 1
    lb = j & (-j)
    v = 1
    k = 1
    while k < lb:
        v += bit[j - k]
        k <<= 1
    bit[j] = v


@njit(cache=True, inline="always")
def _bit_remove(bit, pos, t):
    """Take the 1 at position ``pos`` away, updating the nodes that exist (positions < ``t`` used)."""
    j = pos + 1
    while j <= t:
        bit[j] -= 1
        j += j & (-j)


@njit(cache=True, boundscheck=False)
def _reuse_kernel(op, pc, addr, size, start, keys, slots, state, pos, bit, hist, lastblk, lastslot):
    """Load block references from record ``start``; returns the first record not processed (a table or the
    tree would overflow). ``lastblk[pc]``/``lastslot[pc]`` remember the block a static load referenced last
    and its slot (slots never change), so a load that stays in its block skips the hash lookup."""
    # state = [n blocks (M), hash limit, T (next time position), tree capacity]
    mask = keys.shape[0] - 1
    lim = state[1]
    cap = state[3]
    m = state[0]
    t = state[2]
    n = op.shape[0]
    stop = n
    for i in range(start, n):
        if op[i] != LOAD:
            continue
        a = addr[i]
        b0 = a >> 6
        b1 = (a + size[i] - 1) >> 6
        nb = b1 - b0 + 1
        if m + nb > lim or t + nb > cap:
            stop = i
            break
        pi = pc[i]
        for b in range(b0, b1 + 1):
            if b == lastblk[pi] and lastslot[pi] >= 0:
                s = lastslot[pi]
                new = False
            else:
                s, new = insert(keys, slots, mask, b, m)
                lastblk[pi] = b
                lastslot[pi] = s
            if new:
                hist[N_REUSE_BUCKETS] += 1
                pos[s] = t
                _bit_append(bit, t)
                m += 1
                t += 1
                continue
            p = pos[s]
            if p == t - 1:  # the most recent reference: distance 0, stack unchanged
                hist[0] += 1
                continue
            # d = live positions in p+1 .. t-1 = prefix(t-1) - prefix(p) (all M live positions are < t);
            # the two walks stop where they meet, so a recent reuse reads a few nodes near t
            j = t
            k = p + 1
            d = 0
            while j != k:
                if j > k:
                    d += bit[j]
                    j -= j & (-j)
                else:
                    d -= bit[k]
                    k -= k & (-k)
            if d <= 1:
                hist[0] += 1
            else:
                k = 0
                x = d
                while x > 1:
                    x >>= 1
                    k += 1
                hist[k if k < 18 else 18] += 1
            _bit_remove(bit, p, t)
            _bit_append(bit, t)
            pos[s] = t
            t += 1
    state[0] = m
    state[2] = t
    return stop


@njit(cache=True, boundscheck=False)
def _compact(pos, m, t, cap):
    """Renumber the M live positions (all < ``t``) to 0..M-1 keeping their order, in O(t) without sorting;
    returns a fresh tree of ``cap`` positions holding a 1 at 0..M-1 (built in O(cap))."""
    rank = np.zeros(t, np.int64)
    for s in range(m):
        rank[pos[s]] = 1
    r = 0
    for x in range(t):
        if rank[x]:
            rank[x] = r
            r += 1
    for s in range(m):
        pos[s] = rank[pos[s]]
    bit = np.zeros(cap + 1, np.int32)
    for r in range(m):
        bit[r + 1] = 1
    for j in range(1, cap + 1):
        up = j + (j & (-j))
        if up <= cap:
            bit[up] += bit[j]
    return bit


class ReuseDistanceAnalyzer(Analyzer):
    """LRU stack distance of load block references (``docs/features.md``, "Footprint and reuse").

    A Fenwick tree over reference positions holds a 1 at each block's latest reference; the distance of
    a reference is the number of ones after the block's previous position, O(log M) per reference.
    When the positions run out the live ones are renumbered 0..M-1 in O(positions) (no sort) and the tree
    is rebuilt with room for 4M, so memory stays O(distinct blocks).
    """

    family = "reuse"

    def __init__(self) -> None:
        super().__init__()
        self.index = HashIndex(1024)
        self.pos = np.zeros(self.index.limit, np.int64)
        self.bit = np.zeros(4096 + 1, np.int32)
        self.state = np.array([0, self.index.limit, 0, 4096], np.int64)
        self.hist = np.zeros(N_REUSE_BUCKETS + 1, np.int64)  # last = cold
        self.lastblk = np.zeros(0, np.int64)  # per static instruction: last block referenced, and its slot
        self.lastslot = np.zeros(0, np.int64)

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        npc = pc_capacity(chunk)
        self.lastblk = grow_1d(self.lastblk, npc)
        self.lastslot = grow_1d(self.lastslot, npc, -1)
        i = 0
        st = self.state
        while i < n:
            i = _reuse_kernel(chunk.op, chunk.pc, chunk.addr, chunk.size, i, self.index.keys, self.index.slots, st,
                              self.pos, self.bit, self.hist, self.lastblk, self.lastslot)
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
                    while cap < 4 * (m + need):
                        cap <<= 1
                    self.bit = _compact(self.pos, m, int(st[2]), cap)
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
