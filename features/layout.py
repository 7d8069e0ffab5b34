"""Layout positions: where each record sits in the order the minimum-PC rule issues, shared by the warp views
(features/warp.py) and the SIMT model's warps (gpu_models/simt/threads.py), so both form the same warps.

Definition (docs/features.md, "Warp-level views"): a record's position is its static id, except a record of a
loop's control (its increment and test: ``closes`` in the static table, profiler/loops.py) that closes an
iteration, which takes the position "end of that loop's body": after every static id of the body, before the
first one after it. Nested loops nest these positions (an inner loop's end comes before the end of the loop
around it), and a loop's control records keep their order there.

A control record of loop L *closes an iteration* when the latest record of its thread, in the same function
invocation, that is not one of L's control records is a record of L's body (nested loops' included). Records of
a function called from the body are the body's too: between a CALL and its RET the caller's state waits (the
called function's records do not change it, its own loops have their own), so the caller's loop closes its
iteration after the call as after any body record. A thread is walked with one small state: ``x``, the
innermost loop whose body or closing control the thread's latest record was in (-1: none), and a stack of the
callers' ``x`` (CALL pushes it and starts the callee at -1, RET pops it; beyond :data:`CALL_DEPTH` nested calls
the state of the deeper callers is not kept and they resume at -1).

Layout: for static ids ``0 .. n - 1`` (n = 1 + the largest id of the table), ``pcs[p] = (plain, closing,
inner, ctl)``: the position of p where it does not close an iteration, where it does, the innermost loop whose
body holds p and the loop whose control p is (-1: none). Loops are numbered 0.. in pre-order (a loop, then the
loops nested in it), so loop c's subtree is ``c .. loops[c, 0]``; ``loops[c, 1]`` is its parent (-1). Closing
positions are numbered between the plain ones: the slot of a loop whose body ends at static id a sits after
a's plain position; so ``plain[p] = p + (closing slots whose body ends below p)``, and an id at or beyond n
(not in the table) sits at ``p + (all closing slots)``. Positions are dense from 0 and below 2^25 for tables
under 2^24 ids.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.loops import LoopTable
from profiler.trace import Op, StaticTable

#: calls nested deeper inside one thread than this lose the loop state of the callers beyond it
CALL_DEPTH = 64

CALL = np.uint8(Op.CALL)
RET = np.uint8(Op.RET)


class Layout:
    """The layout positions of one static table (see the module docstring).

    Attributes
    ----------
    pcs : ndarray of int32, shape (n, 4)
        Per static id: plain position, closing position, innermost loop, loop it is control of (-1: none).
    loops : ndarray of int32, shape (m, 2)
        Per loop (pre-order): last loop of its subtree, parent (-1).
    shift : int
        Positions of ids >= n are ``id + shift``.
    active : bool
        Whether the table has loops (else every position is the static id itself).
    """

    def __init__(self, table: LoopTable, n: int) -> None:
        m = len(table.loops)
        index = {lp.id: k for k, lp in enumerate(table.loops)}
        n = max([n, 1] + [p + 1 for p in table.inner] + [p + 1 for p in table.closes])
        pcs = np.full((n, 4), -1, np.int32)
        loops = np.full((max(m, 1), 2), -1, np.int32)
        # closing slots, in layout order: by the end of the body, inner loops first, then by control id
        slots = []
        for k, lp in enumerate(table.loops):
            end = lp.body_end if lp.body_end >= 0 else max(lp.control)
            slots.extend((end, -lp.depth, rank, pc) for rank, pc in enumerate(lp.control))
            loops[k, 1] = index[lp.parent] if lp.parent else -1
        for k in range(m - 1, -1, -1):  # the subtree of k ends where that of its last descendant does
            last = k
            while last + 1 < m and table.loops[last + 1].depth > table.loops[k].depth:
                last += 1
            loops[k, 0] = last
        slots.sort()
        ends = np.array([s[0] for s in slots], np.int64)
        ids = np.arange(n, dtype=np.int64)
        pcs[:, 0] = ids + np.searchsorted(ends, ids, side="left")
        pcs[:, 1] = pcs[:, 0]
        for j, (end, _, _, pc) in enumerate(slots):
            pcs[pc, 1] = end + 1 + j
        for pc, lp in table.inner.items():
            pcs[pc, 2] = index[lp]
        for pc, lp in table.closes.items():
            pcs[pc, 3] = index[lp]
        self.pcs = pcs
        self.loops = loops
        self.shift = len(slots)
        self.active = m > 0
        self.table = table

    @classmethod
    def of(cls, static: StaticTable | None) -> "Layout":
        """The layout of a static table (None: no table, every position the static id).

        Raises
        ------
        profiler.trace.TraceError
            When the table's loop fields do not describe a tree of loops (:meth:`LoopTable.of`).
        """
        n = 1 + max((int(e.pc) for e in static), default=0) if static is not None else 1
        return cls(LoopTable.of(static), n)

    def position(self, pc: int, closes: bool) -> int:
        """The position of static id ``pc``: where it closes an iteration of its loop (``closes``), or not."""
        if pc >= self.pcs.shape[0]:
            return int(pc) + self.shift
        return int(self.pcs[pc, 1 if closes else 0])

    def thread_positions(self, pc: np.ndarray, op: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Positions of the records of threads whose records are ``pc[start[t]:end[t]]`` (each thread walked from
        a fresh state), as int64; records outside every range get their static id."""
        if not self.active:
            return pc.astype(np.int64)
        return _thread_positions(self.pcs, self.loops, np.int64(self.shift), pc, op, start, end,
                                 np.empty(CALL_DEPTH, np.int32))


@njit(cache=True, nogil=True, inline="always")
def advance(pcs, loops, shift, stack, x, d, p, op):
    """One record of a thread: its static id ``p`` and operation class ``op`` given the state ``(x, d)`` (the
    innermost loop of the latest record, call depth; ``stack`` the callers' x). Returns (position, x, d)."""
    if p >= pcs.shape[0]:
        pos = np.int64(p) + shift
        x = -1
    else:
        c = pcs[p, 3]
        if c >= 0:
            if x >= c and x <= loops[c, 0]:  # the latest other record was in c's body: it closes an iteration
                pos = np.int64(pcs[p, 1])
                x = c
            else:
                pos = np.int64(pcs[p, 0])
                x = loops[c, 1]
        else:
            pos = np.int64(pcs[p, 0])
            x = pcs[p, 2]
    if op == CALL:
        if d < stack.shape[0]:
            stack[d] = x
        d += 1
        x = -1
    elif op == RET and d > 0:
        d -= 1
        x = stack[d] if d < stack.shape[0] else -1
    return pos, x, d


@njit(cache=True, nogil=True)
def _thread_positions(pcs, loops, shift, pc, op, start, end, stack):
    out = pc.astype(np.int64)
    for t in range(start.shape[0]):
        x = np.int32(-1)
        d = 0
        for j in range(start[t], end[t]):
            pos, x, d = advance(pcs, loops, shift, stack, x, d, pc[j], op[j])
            out[j] = pos
    return out
