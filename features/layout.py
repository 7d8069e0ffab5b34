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
iteration after the call as after any body record. A lane (a run of consecutive records with one tid: a
thread's records as the Python tracer writes them, or as the SIMT model gathers them) is walked with one
small state: ``x``, the innermost loop whose body or closing control the lane's latest record was in (-1:
none), and a stack of the callers' ``x`` (CALL pushes it and starts the callee at -1, RET pops it; beyond
:data:`CALL_DEPTH` nested calls the state of the deeper callers is not kept and they resume at -1). One
Numba loop (:func:`_walk`, through :class:`Walker`) does it for both consumers, chunk after chunk.

Layout: for static ids ``0 .. n - 1`` (n = 1 + the largest id of the table), ``pcs[p] = (plain, closing,
next, ctl, last)``: the position of p where it does not close an iteration and where it does; the state after
p when it does not close one (the innermost loop whose body holds p; for a control record, the loop around its
loop); the loop p is control of and the last loop nested in that one (for other ids ``NO_LOOP`` and -1). Loops
are numbered 0.. in pre-order (a loop, then the loops nested in it), so loop c's subtree is ``c .. last`` and
"the latest record was in c's body" is ``c <= x <= last``: one record costs two compares and two selects, no
data-dependent branch. Closing positions are numbered between the plain ones: the slot of a loop whose body
ends at static id a sits after a's plain position; so ``plain[p] = p + (closing slots whose body ends below
p)``, and an id at or beyond n (not in the table) sits at ``p + (all closing slots)`` (the table grows rows
for such ids when it meets them). Positions are dense from 0 and below 2^25 for tables under 2^24 ids.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.trace_schema import Op
from profiler.loops import LoopTable
from profiler.trace import StaticTable

#: calls nested deeper inside one thread than this lose the loop state of the callers beyond it
CALL_DEPTH = 64
#: ``ctl`` of a static id that is no loop's control: above every loop index, so it never closes an iteration
NO_LOOP = 1 << 30

CALL = np.uint8(Op.CALL)
RET = np.uint8(Op.RET)


class Layout:
    """The layout positions of one static table (see the module docstring).

    Attributes
    ----------
    pcs : ndarray of int32, shape (n, 5)
        Per static id: plain position, closing position, state after it when it does not close an iteration,
        loop it is control of (:data:`NO_LOOP`: none) and the last loop of that loop's subtree (-1: none).
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
        pcs = np.full((n, 5), -1, np.int32)
        pcs[:, 3] = NO_LOOP
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
            k = index[lp]
            pcs[pc, 2:] = (loops[k, 1], k, loops[k, 0])
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
        core.trace_schema.TraceError
            When the table's loop fields do not describe a tree of loops (:meth:`LoopTable.of`).
        """
        n = 1 + max((int(e.pc) for e in static), default=0) if static is not None else 1
        return cls(LoopTable.of(static), n)

    def extend(self, n: int) -> None:
        """Rows for static ids up to ``n - 1`` (ids beyond the table: position ``id + shift``, in no loop)."""
        old = self.pcs.shape[0]
        if n <= old:
            return
        n = max(n, 2 * old)
        pcs = np.empty((n, 5), np.int32)
        pcs[:old] = self.pcs
        ids = np.arange(old, n, dtype=np.int64) + self.shift
        pcs[old:, 0] = ids
        pcs[old:, 1] = ids
        pcs[old:, 2] = -1
        pcs[old:, 3] = NO_LOOP
        pcs[old:, 4] = -1
        self.pcs = pcs

    def position(self, pc: int, closes: bool) -> int:
        """The position of static id ``pc``: where it closes an iteration of its loop (``closes``), or not."""
        if pc >= self.pcs.shape[0]:
            return int(pc) + self.shift
        return int(self.pcs[pc, 1 if closes else 0])

    def static_id(self, position: int) -> int:
        """The static id whose record sits at ``position`` (its plain or its closing position)."""
        position = int(position)
        ids = np.flatnonzero((self.pcs[:, 0] == position) | (self.pcs[:, 1] == position))
        if ids.size:
            return int(ids[0])
        return position - self.shift  # an id beyond the table

    def walker(self) -> "Walker":
        """A walker of this layout's records (:class:`Walker`), fresh."""
        return Walker(self)

    def positions(self, pc: np.ndarray, op: np.ndarray, tid: np.ndarray) -> np.ndarray:
        """Positions (int64) of the records of one trace or of threads' streams laid end to end: a lane is a run
        of consecutive records with the same ``tid``, walked from a fresh state."""
        return self.walker().walk(pc, op, tid)


class Walker:
    """Walks records to their layout positions chunk after chunk: the state of the open lane (its tid, the
    innermost loop of its latest record, its call depth and the callers' states) carries from one chunk to the
    next, and a record whose tid differs from the record before it starts a lane."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.state = np.array([-1, 0, NO_LANE], np.int64)  # x, call depth, tid of the latest record
        self.stack = np.zeros(CALL_DEPTH, np.int32)

    def walk(self, pc: np.ndarray, op: np.ndarray, tid: np.ndarray, out: np.ndarray | None = None,
             top: int | None = None) -> np.ndarray:
        """Positions of the next records (``out``: an int64 array of at least their number to fill; ``top``:
        1 + their largest pc when the caller knows it)."""
        lay = self.layout
        n = pc.shape[0]
        out = np.empty(n, np.int64) if out is None or out.shape[0] < n else out[:n]
        if not lay.active:
            out[:] = pc
            return out
        if top is None:
            top = int(pc.max()) + 1 if n else 0
        if top > lay.pcs.shape[0]:
            lay.extend(top)
        _walk(lay.pcs, pc, op, tid, self.state, self.stack, out)
        return out


#: tid of "no record yet": below every tid, so the first record starts a lane
NO_LANE = -(1 << 62)


@njit(cache=True, nogil=True)
def _walk(pcs, pc, op, tid, state, stack, out):
    """The positions of records ``pc``/``op``/``tid`` into ``out`` from ``state`` = (x, call depth, latest tid),
    updated. Per record: a new tid starts a lane (x = -1, depth 0); the record closes an iteration when x lies
    in the subtree of the loop it is control of (``pcs[p, 3] <= x <= pcs[p, 4]``: no data-dependent branch);
    then x becomes that loop (closing) or ``pcs[p, 2]``; a CALL pushes x and starts the callee at -1, a RET
    pops it. Every pc must be below ``pcs.shape[0]`` (:meth:`Layout.extend`)."""
    x = state[0]
    d = state[1]
    lane = state[2]
    for j in range(pc.shape[0]):
        t = tid[j]
        if t != lane:
            lane = t
            x = -1
            d = 0
        p = pc[j]
        plain, close, nxt, ctl, last = pcs[p, 0], pcs[p, 1], pcs[p, 2], pcs[p, 3], pcs[p, 4]
        closing = (x >= ctl) & (x <= last)
        out[j] = close if closing else plain  # (all five loaded first: selects, not branches)
        x = ctl if closing else nxt
        o = op[j]
        if o == CALL:
            if d < stack.shape[0]:
                stack[d] = x
            d += 1
            x = -1
        elif o == RET and d > 0:
            d -= 1
            x = stack[d] if d < stack.shape[0] else -1
    state[0] = x
    state[1] = d
    state[2] = lane
