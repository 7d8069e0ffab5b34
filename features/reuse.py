"""Footprint (memInt, pages, data/instruction footprint) and LRU reuse distance (coldRef, reuseDist4, histogram)."""

from __future__ import annotations

import numpy as np
from numba import njit

from core.trace_schema import Op
from profiler.trace import TraceChunk

from ._base import grow_1d, ratio
from .fast.blocks import BlockAnalyzer, BlockRefs
from .fast.prefetch import prefetch

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
N_REUSE_BUCKETS = 19  # b0 = {0, 1}, bk = [2^k, 2^(k+1)) for k = 1..17, b18 = >= 2^18


# --------------------------------------------------------------------------------------------- footprint


@njit(cache=True, nogil=True, boundscheck=False)
def _footprint_kernel(pc, rec, off, ids, nxt, newblk, pcseen):
    """Marks every record's static instruction; counts first touches (id == ``nxt``, the number of blocks
    touched before) per static instruction. Returns the new ``nxt``."""
    for i in range(pc.shape[0]):
        pcseen[pc[i]] = 1
    for r in range(rec.shape[0]):
        for k in range(off[r], off[r + 1]):
            if ids[k] == nxt:
                nxt += 1
                newblk[pc[rec[r]]] += 1
    return nxt


class FootprintAnalyzer(BlockAnalyzer):
    """Distinct 64-byte blocks and 4 KiB pages touched by loads and stores; distinct static instructions.

    Blocks and pages are counted by the (engine-shared) :class:`features.fast.blocks.BlockMap`; this analyzer
    keeps the first-touch count per static instruction and the set of static instructions seen.
    """

    family = "footprint"

    def __init__(self) -> None:
        super().__init__()
        self.nblocks = 0
        self.newblk = np.zeros(0, np.int64)
        self.pcseen = np.zeros(0, np.uint8)

    def consume_refs(self, chunk: TraceChunk, refs: BlockRefs) -> None:
        n = len(chunk)
        if not n:
            return
        npc = self.pc_capacity(chunk)
        self.newblk = grow_1d(self.newblk, npc)
        self.pcseen = grow_1d(self.pcseen, npc)
        self.nblocks = int(_footprint_kernel(chunk.pc, refs.rec, refs.off, refs.ids, np.int64(self.nblocks),
                                             self.newblk, self.pcseen))
        self.n += n

    def result(self) -> dict[str, float]:
        nb, npg = self.nblocks, self.blockmap.n_pages
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
#
# Positions: the t-th load block reference gets position t; a block's latest reference keeps its position
# live. ``live`` holds one byte per position (1 = live), read 8 at a time as uint64 words; ``grp`` is a
# Fenwick tree over groups of 64 positions (one cache line of ``live``): node j covers groups
# j - lowbit(j) .. j - 1. Only completed groups (those below t's group) are in the tree; the open group is
# read from ``live`` directly. So a distance costs two partial-group counts (a cache line each) and one
# range walk over the group tree, which is 64 times smaller than a tree over positions.

GROUP_SHIFT = 6
PREFETCH_AHEAD = 16
_ONES = np.uint64(0x0101010101010101)


@njit(cache=True, inline="always")
def _bytesum(v):
    """Number of 1 bytes in a word whose bytes are 0 or 1."""
    return np.int64((v * _ONES) >> np.uint64(56))


@njit(cache=True, boundscheck=False, inline="always")
def _live_count(livew, x, y):
    """Live positions in [x, y) (0 when y <= x)."""
    if y <= x:
        return np.int64(0)
    wx = x >> 3
    wy = (y - 1) >> 3
    v = livew[wx] >> np.uint64(8 * (x & 7))
    if wx == wy:
        nb = y - x
        if nb < 8:
            v &= (np.uint64(1) << np.uint64(8 * nb)) - np.uint64(1)
        return _bytesum(v)
    c = _bytesum(v)
    for w in range(wx + 1, wy):
        c += _bytesum(livew[w])
    v = livew[wy]
    rem = y - (wy << 3)
    if rem < 8:
        v &= (np.uint64(1) << np.uint64(8 * rem)) - np.uint64(1)
    return c + _bytesum(v)


@njit(cache=True, nogil=True, boundscheck=False)
def _reuse_kernel(op, rec, off, ids, start, last, live, livew, grp, state, hist):
    """Load block references of memory records from ``start``; returns the first record not processed (the
    positions would run out: compact and resume). ``last[id]`` = position of the block's latest load
    reference, -1 if never loaded."""
    # state = [M (blocks loaded), unused, t (next position), capacity]
    m = state[0]
    t = state[2]
    cap = state[3]
    nrec = rec.shape[0]
    nids = ids.shape[0]
    stop = nrec
    for r in range(start, nrec):
        if op[rec[r]] != LOAD:
            continue
        k0 = off[r]
        k1 = off[r + 1]
        if t + (k1 - k0) > cap:
            stop = r
            break
        for k in range(k0, k1):
            # prefetch: the latest position of the block referenced PREFETCH_AHEAD ids ahead, and the live
            # line of the one half as far ahead (whose position is in the cache by now)
            if k + PREFETCH_AHEAD < nids:
                prefetch(last, ids[k + PREFETCH_AHEAD])
                q = last[ids[k + PREFETCH_AHEAD // 2]]
                prefetch(live, q if q > 0 else 0)
            s = ids[k]
            p = last[s]
            if p == t - 1 and p >= 0:  # the most recent reference: distance 0, nothing moves
                hist[0] += 1
                continue
            gt = t >> GROUP_SHIFT  # t's group is open; the groups below it are in the tree
            if p < 0:
                hist[N_REUSE_BUCKETS] += 1
                m += 1
            else:
                # d = live positions in p+1 .. t-1. All M live positions are < t, so outside t's open group
                # d = M - (live positions <= p): one prefix walk over the completed groups before p's group
                # plus p's group's line, with no data-dependent branch in the walk
                gp = p >> GROUP_SHIFT
                if gp == gt:
                    d = _live_count(livew, p + 1, t)
                else:
                    d = m - _live_count(livew, gp << GROUP_SHIFT, p + 1)
                    j = gp
                    while j > 0:
                        d -= grp[j]
                        j -= j & (-j)
                    # remove p's 1 from the completed groups' nodes
                    j = gp + 1
                    while j <= gt:
                        grp[j] -= 1
                        j += j & (-j)
                live[p] = 0
                if d <= 1:
                    hist[0] += 1
                else:
                    # floor(log2(d)) in six comparisons (d < 2^63)
                    x = d
                    b = 0
                    if x >= (1 << 32):
                        x >>= 32
                        b += 32
                    if x >= (1 << 16):
                        x >>= 16
                        b += 16
                    if x >= (1 << 8):
                        x >>= 8
                        b += 8
                    if x >= (1 << 4):
                        x >>= 4
                        b += 4
                    if x >= 4:
                        x >>= 2
                        b += 2
                    if x >= 2:
                        b += 1
                    hist[b if b < 18 else 18] += 1
            live[t] = 1
            last[s] = t
            t += 1
            if (t & 63) == 0:
                # t's group completes: it enters the tree as node j = t / 64, from its own count and its
                # children j - 1, j - 2, j - 4, ... (recent groups, cached), not by walking up the tree
                j = t >> GROUP_SHIFT
                base = (j - 1) << 3
                v = np.int64(0)
                for w in range(8):
                    v += _bytesum(livew[base + w])
                lb = j & (-j)
                h = 1
                while h < lb:
                    v += grp[j - h]
                    h <<= 1
                grp[j] = v
    state[0] = m
    state[2] = t
    return stop


@njit(cache=True, nogil=True, boundscheck=False)
def _compact(last, nids, live, t, m, cap):
    """Renumber the M live positions (all < ``t``, marked in ``live``) to 0..M-1 keeping their order, in
    O(t + ids) without sorting (a running count over ``live``); returns fresh ``live`` (cap bytes, 1 at
    0..M-1) and group tree over cap / 64 groups."""
    rank = np.empty(t, np.int32)
    r = 0
    for x in range(t):
        rank[x] = r
        r += live[x]
    for s in range(nids):
        if last[s] >= 0:
            last[s] = rank[last[s]]
    live = np.zeros(cap, np.uint8)
    live[:m] = 1
    ng = cap >> GROUP_SHIFT
    grp = np.zeros(ng + 1, np.int32)
    full = m >> GROUP_SHIFT  # completed groups: all 64 positions live
    for g in range(full):
        grp[g + 1] = 64
    for j in range(1, ng + 1):
        up = j + (j & (-j))
        if up <= ng:
            grp[up] += grp[j]
    return live, grp


class ReuseDistanceAnalyzer(BlockAnalyzer):
    """LRU stack distance of load block references (``docs/features.md``, "Footprint and reuse").

    Blocks come as dense ids from the (engine-shared) block map, so the position of a block's latest
    reference is a plain array (``last``). Each live position holds a 1 in ``bit`` (one byte per position)
    and a Fenwick tree ``grp`` counts the live positions of each completed group of 64; the distance of a
    reference is the number of live positions after the block's previous one: O(log M) per reference.
    When the positions run out the live ones are renumbered 0..M-1 in O(positions) (no sort) and the
    structures are rebuilt with room for 4M, so memory stays O(distinct blocks).
    """

    family = "reuse"

    def __init__(self) -> None:
        super().__init__()
        self.last = np.zeros(0, np.int64)
        self.bit = np.zeros(4096, np.uint8)  # live byte per position
        self.grp = np.zeros((4096 >> GROUP_SHIFT) + 1, np.int32)
        self.state = np.array([0, 0, 0, 4096], np.int64)
        self.hist = np.zeros(N_REUSE_BUCKETS + 1, np.int64)  # last = cold

    @property
    def index(self):
        """The block index (the block map's hash table) the ids come from."""
        return self.blockmap.blocks

    def consume_refs(self, chunk: TraceChunk, refs: BlockRefs) -> None:
        n = len(chunk)
        if not n:
            return
        self.last = grow_1d(self.last, refs.n_after, -1)
        nrec = refs.rec.shape[0]
        r = 0
        st = self.state
        while r < nrec:
            r = _reuse_kernel(chunk.op, refs.rec, refs.off, refs.ids, r, self.last, self.bit,
                              self.bit.view(np.uint64), self.grp, st, self.hist)
            if r < nrec:
                need = int(refs.off[r + 1] - refs.off[r])
                m = int(st[0])
                cap = 4096
                while cap < 4 * (m + need):
                    cap <<= 1
                self.bit, self.grp = _compact(self.last, refs.n_after, self.bit, int(st[2]), m, cap)
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
