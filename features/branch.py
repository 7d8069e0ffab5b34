"""MICA's branch behaviour: PPM predictability (GAg, PAg, GAs, PAs), taken and transition rates."""

from __future__ import annotations

import numpy as np
from numba import njit

from core.trace_schema import Op
from profiler.trace import TraceChunk

from ._base import Analyzer, claim_slot, grow_1d, ratio

BRANCH = np.uint8(Op.BRANCH)
PPM_HISTORIES = (4, 8, 12)
PPM_KINDS = ("GAg", "PAg", "GAs", "PAs")
_SAT = 1 << 29
_VLO = np.int32(-2 * _SAT + 1)  # stored value 2 * counter + 1 at counter -_SAT
_VHI = np.int32(2 * _SAT + 1)  # ... at +_SAT


@njit(cache=True, nogil=True)
def _branch_kernel(op, pc, taken, start, hs, maxh, pcslot, state, lhist, lcnt, tables, miss, counts):
    """Records from ``start``; returns the first one not processed (stops when a new static branch needs a
    slot and none is left).

    ``tables`` rows: 0 = GAg, 1 = PAg, 2 + 2s = GAs of slot s, 3 + 2s = PAs of slot s; a context of order j
    and history bits x is column (1 << j) | x, holding 0 (never seen) or 2 * (taken - not taken) + 1.
    For each organisation the longest seen context of order <= h predicts (taken when taken >= not taken;
    taken when no context has been seen), then every order 0..maxh is updated.
    state = [n slots, slot capacity, global history]; counts = [branches, taken, transitions, transition base].
    """
    hmask = (1 << max(maxh, 1)) - 1  # at least the last outcome: the transition rate reads it
    nq = hs.shape[0]
    n = op.shape[0]
    nbr = 0
    ntaken = 0
    ntrans = 0
    nbase = 0
    gh = state[2]
    stop = n
    for i in range(start, n):
        if op[i] != BRANCH:
            continue
        p = pc[i]
        s = pcslot[p]
        if s < 0:
            s = claim_slot(pcslot, state, p)
            if s < 0:
                stop = i
                break
        t = np.int64(taken[i])
        lh = lhist[s]
        gs = 2 + 2 * s
        # The four organisations in one pass over the orders: GAg and GAs share the global history's
        # context index, PAg and PAs the local one. A context of order j is seen iff some earlier update
        # had its j history bits, and every update touches all orders, so the seen orders are a prefix
        # 0 .. L-1 and the longest seen context of order <= h is min(h, L - 1); l0 .. l3 track it.
        # Counter update, branch-free: v = 2 * counter + 1 (0 = never seen, which starts at counter 0),
        # counter += 1 (taken) or -= 1, saturating at +-_SAT.
        delta = np.int32(2) if t else np.int32(-2)
        l0 = np.int32(0)
        l1 = np.int32(0)
        l2 = np.int32(0)
        l3 = np.int32(0)
        q = 0
        for j in range(maxh + 1):
            low = (1 << j) - 1
            gi = (1 << j) | (gh & low)
            li = (1 << j) | (lh & low)
            v0 = tables[0, gi]
            v1 = tables[1, li]
            v2 = tables[gs, gi]
            v3 = tables[gs + 1, li]
            if v0 != 0:
                l0 = v0
            if v1 != 0:
                l1 = v1
            if v2 != 0:
                l2 = v2
            if v3 != 0:
                l3 = v3
            tables[0, gi] = min(max((v0 | np.int32(v0 == 0)) + delta, _VLO), _VHI)
            tables[1, li] = min(max((v1 | np.int32(v1 == 0)) + delta, _VLO), _VHI)
            tables[gs, gi] = min(max((v2 | np.int32(v2 == 0)) + delta, _VLO), _VHI)
            tables[gs + 1, li] = min(max((v3 | np.int32(v3 == 0)) + delta, _VLO), _VHI)
            while q < nq and hs[q] == j:
                # predicted taken when the counter is >= 0 (v >= 1) or no context was seen (v = 0)
                miss[0, q] += np.int64((l0 >= 0) != (t != 0))
                miss[1, q] += np.int64((l1 >= 0) != (t != 0))
                miss[2, q] += np.int64((l2 >= 0) != (t != 0))
                miss[3, q] += np.int64((l3 >= 0) != (t != 0))
                q += 1
        nbr += 1
        ntaken += t
        if lcnt[s] > 0:
            nbase += 1
            if (lh & 1) != t:
                ntrans += 1
        lcnt[s] += 1
        lhist[s] = ((lh << 1) | t) & hmask
        gh = ((gh << 1) | t) & hmask
    state[2] = gh
    counts[0] += nbr
    counts[1] += ntaken
    counts[2] += ntrans
    counts[3] += nbase
    return stop


@njit(cache=True, nogil=True, boundscheck=False)
def _seen_sum(tables, row, j, x, hp):
    """Counter of the order-``j`` context ``x`` (j history bits) of table ``row``, from the stored order
    ``hp`` >= j: (seen, taken - not taken) summed over its 2^(hp - j) descendants there."""
    seen = False
    c = np.int64(0)
    base = (1 << hp) | x
    for y in range(1 << (hp - j)):
        v = np.int64(tables[row, base | (y << j)])
        if v != 0:
            seen = True
            c += (v - 1) >> 1
    return seen, c


@njit(cache=True, nogil=True, boundscheck=False)
def _predict_unseen(tables, row, hist, q, stored):
    """Prediction (1 = taken) of the longest seen context of order < stored[q], the stored order stored[q]
    itself being unseen: orders stored[q] - 1, stored[q] - 2, ... are read from the next stored order up
    (seen orders form a prefix, so the first seen one is the longest). Runs at most once per context."""
    k = q
    for j in range(stored[q] - 1, -1, -1):
        while k > 0 and stored[k - 1] >= j:
            k -= 1
        hp = stored[k]
        x = hist & ((1 << j) - 1)
        if hp == j:
            v = tables[row, (1 << j) | x]
            if v != 0:
                return 1 if v > 0 else 0
        else:
            seen, c = _seen_sum(tables, row, j, x, hp)
            if seen:
                return 1 if c >= 0 else 0
    return 1


@njit(cache=True, nogil=True, boundscheck=False)
def _branch_kernel_stored(op, pc, taken, start, stored, pred_of, maxh, pcslot, state, lhist, lcnt, tables, miss,
                          counts):
    """As :func:`_branch_kernel`, keeping only the contexts of the ``stored`` orders (the history lengths,
    plus fillers so that no order is more than 4 below a stored one), valid while no counter can saturate.

    Every update of a context of order j is an update of exactly one of its descendants of any higher
    order hp (the histories always have maxh bits), so the counter of an order-j context is the sum of its
    descendants' at hp, and it is seen iff one of them is. The shorter orders need no update: a predictor
    of history h reads its order-h context, and only when that one is unseen (at most once per context
    over the whole trace) the shorter ones are summed from the next stored order (:func:`_predict_unseen`).
    Per branch this is 4 x len(stored) counter updates instead of 4 x (maxh + 1). Orders are handled from
    the longest down, so a lookup below reads counters this branch has not updated yet.
    ``pred_of[k]`` = the column of ``miss`` of stored order k, or -1 when it is a filler.
    """
    hmask = (1 << max(maxh, 1)) - 1
    ns = stored.shape[0]
    n = op.shape[0]
    nbr = 0
    ntaken = 0
    ntrans = 0
    nbase = 0
    gh = state[2]
    stop = n
    for i in range(start, n):
        if op[i] != BRANCH:
            continue
        p = pc[i]
        s = pcslot[p]
        if s < 0:
            s = claim_slot(pcslot, state, p)
            if s < 0:
                stop = i
                break
        t = np.int64(taken[i])
        lh = lhist[s]
        gs = 2 + 2 * s
        delta = np.int32(2) if t else np.int32(-2)
        for k in range(ns - 1, -1, -1):
            h = stored[k]
            gi = (1 << h) | (gh & ((1 << h) - 1))
            li = (1 << h) | (lh & ((1 << h) - 1))
            v0 = tables[0, gi]
            v1 = tables[1, li]
            v2 = tables[gs, gi]
            v3 = tables[gs + 1, li]
            col = pred_of[k]
            if col >= 0:
                # v = 2 * counter + 1 when seen (predicts taken iff counter >= 0, i.e. v > 0), 0 when unseen
                p0 = (1 if v0 > 0 else 0) if v0 != 0 else _predict_unseen(tables, 0, gh, k, stored)
                p1 = (1 if v1 > 0 else 0) if v1 != 0 else _predict_unseen(tables, 1, lh, k, stored)
                p2 = (1 if v2 > 0 else 0) if v2 != 0 else _predict_unseen(tables, gs, gh, k, stored)
                p3 = (1 if v3 > 0 else 0) if v3 != 0 else _predict_unseen(tables, gs + 1, lh, k, stored)
                miss[0, col] += p0 != t
                miss[1, col] += p1 != t
                miss[2, col] += p2 != t
                miss[3, col] += p3 != t
            # seen values are odd, so v | 1 turns "unseen" into counter 0 and leaves the others alone
            tables[0, gi] = (v0 | 1) + delta
            tables[1, li] = (v1 | 1) + delta
            tables[gs, gi] = (v2 | 1) + delta
            tables[gs + 1, li] = (v3 | 1) + delta
        nbr += 1
        ntaken += t
        if lcnt[s] > 0:
            nbase += 1
            if (lh & 1) != t:
                ntrans += 1
        lcnt[s] += 1
        lhist[s] = ((lh << 1) | t) & hmask
        gh = ((gh << 1) | t) & hmask
    state[2] = gh
    counts[0] += nbr
    counts[1] += ntaken
    counts[2] += ntrans
    counts[3] += nbase
    return stop


@njit(cache=True, nogil=True)
def _fill_orders(tables, rows, stored, maxh):
    """Give every context of the orders that are not stored its counter (summed from the next stored order
    up), so the full kernel can take over."""
    k = 0
    for j in range(maxh + 1):
        while stored[k] < j:
            k += 1
        hp = stored[k]
        if hp == j:
            continue
        for row in range(rows):
            for x in range(1 << j):
                seen, c = _seen_sum(tables, row, j, x, hp)
                tables[row, (1 << j) | x] = np.int32(2 * c + 1) if seen else np.int32(0)


def stored_orders(hs) -> np.ndarray:
    """The context orders the stored-order PPM kernel keeps current.

    Parameters
    ----------
    hs : the history lengths (at least one, >= 0)

    Returns
    -------
    numpy.ndarray
        Sorted int64 orders: the history lengths plus filler orders, so that every order 0..max(hs) is at
        most 4 below a stored one (an unseen context is then summed from at most 16 descendants).
    """
    out = set(int(h) for h in hs)
    cur = max(out)
    while cur >= 0:
        below = max((h for h in out if h < cur), default=-1)
        if cur - below > 5:
            cur -= 5
            out.add(cur)
        else:
            cur = below
    return np.asarray(sorted(out), np.int64)


class BranchAnalyzer(Analyzer):
    """PPM branch predictability of four predictor organisations at several history lengths.

    Parameters
    ----------
    histories : history lengths (default 4, 8, 12)

    State: one table of 2^(h+1) contexts shared by all branches (GAg, PAg) and one per static branch
    (GAs, PAs), 4 bytes per context: bounded by distinct branches and the history length.
    """

    family = "branch"

    def __init__(self, histories=PPM_HISTORIES) -> None:
        super().__init__()
        self.hs = np.asarray(sorted(set(int(h) for h in histories)), np.int64)
        if self.hs.size == 0 or self.hs[0] < 0 or self.hs[-1] > 20:
            raise ValueError(f"PPM history lengths must be in 0..20, got {list(histories)}")
        self.maxh = int(self.hs[-1])
        width = 1 << (self.maxh + 1)
        self.pcslot = np.zeros(0, np.int64)
        self.state = np.zeros(3, np.int64)
        self.lhist = np.zeros(0, np.int64)
        self.lcnt = np.zeros(0, np.int64)
        self.tables = np.zeros((2, width), np.int32)
        self.miss = np.zeros((4, self.hs.size), np.int64)
        self.counts = np.zeros(4, np.int64)
        # Only the contexts of the stored orders are kept up to date while no counter can saturate (fewer
        # than full_after branches in all): see _branch_kernel_stored. Past that, _fill_orders completes the
        # tables once and the full kernel runs.
        self.stored = stored_orders(self.hs)
        self.pred_of = np.array([int(np.searchsorted(self.hs, h)) if h in self.hs else -1 for h in self.stored],
                                np.int64)
        self.stored_only = True
        self.full_after = _SAT

    def _grow_slots(self) -> None:
        cap = max(16, 2 * int(self.state[1]))
        self.lhist = grow_1d(self.lhist, cap)
        self.lcnt = grow_1d(self.lcnt, cap)
        self.tables = grow_1d(self.tables, 2 + 2 * cap)
        self.state[1] = min(self.lhist.shape[0], self.lcnt.shape[0], (self.tables.shape[0] - 2) // 2)

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        self.pcslot = grow_1d(self.pcslot, self.pc_capacity(chunk), -1)
        if self.stored_only and int(self.counts[0]) + n > self.full_after:
            # a counter could saturate in this chunk: give the other orders their counters, from here on
            # every order is updated (and saturated) by the full kernel
            _fill_orders(self.tables, 2 + 2 * int(self.state[0]), self.stored, self.maxh)
            self.stored_only = False
        i = 0
        while i < n:
            if self.stored_only:
                i = _branch_kernel_stored(chunk.op, chunk.pc, chunk.taken, i, self.stored, self.pred_of, self.maxh,
                                          self.pcslot, self.state, self.lhist, self.lcnt, self.tables, self.miss,
                                          self.counts)
            else:
                i = _branch_kernel(chunk.op, chunk.pc, chunk.taken, i, self.hs, self.maxh, self.pcslot, self.state,
                                   self.lhist, self.lcnt, self.tables, self.miss, self.counts)
            if i < n:
                self._grow_slots()
        self.n += n

    def result(self) -> dict[str, float]:
        nbr = int(self.counts[0])
        out = {}
        for k, kind in enumerate(PPM_KINDS):
            for q, h in enumerate(self.hs):
                out[f"mica_ppm_{kind}_h{int(h)}"] = ratio(self.miss[k, q], nbr)
        out["mica_takenRate"] = ratio(self.counts[1], nbr)
        out["mica_transitionRate"] = ratio(self.counts[2], self.counts[3])
        out["mica_branches"] = float(nbr)
        out["mica_staticBranches"] = float(self.state[0])
        return out
