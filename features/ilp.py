"""ILP on MICA's idealised machine, for several window sizes in one pass (``docs/features.md``, "ILP")."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import Op, TraceChunk

from ._base import Analyzer, ratio
from ._hash import HashIndex, find, insert
from ._ilp_unrolled import DEFAULT_WINDOWS as UNROLLED_DEFAULT
from ._ilp_unrolled import NW as UNROLLED_NW
from ._ilp_unrolled import ilp_windows_default, ilp_windows_unrolled

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
ILP_WINDOWS = (32, 64, 128, 256, 2048, 16384, 65536)
XAPP_ILP_WINDOWS = (32, 256, 2048, 16384, 65536)
#: register tokens below this index the ready table directly (no hashing); a larger token switches the
#: analyzer to a hash index (with pruning of dead entries) for the rest of the trace.
DIRECT_TOKENS = 1 << 16
#: records mapped, then run through every window, at a time (the mapped rows stay in L1/L2).
BATCH = 2048


@njit(cache=True, boundscheck=False)
def _max_token(src1, src2, src3, dst):
    """Largest register token of the columns (0 for an empty chunk)."""
    m = 0
    for i in range(src1.shape[0]):
        a = src1[i]
        b = src2[i]
        c = src3[i]
        d = dst[i]
        if b > a:
            a = b
        if d > c:
            c = d
        if c > a:
            a = c
        if a > m:
            m = a
    return m


@njit(cache=True, boundscheck=False)
def _ilp_map(op, src1, src2, src3, dst, addr, size, lo, hi, direct, rkeys, rslots, rstate, bkeys, bslots, bstate,
             r1, r2, r3, rd, bfirst, nblk, xslots):
    """Map the registers (hash mode) and blocks of records ``lo..hi-1`` to ready-table rows.

    Row 0 of a ready table is always 0 (no ready time: absent key, or register 0 = none); key slot s is
    row s + 1. Stops before a record whose insertions could take a table past its limit
    (``*state = [n, limit]``) or whose extra blocks (beyond the first) do not fit in ``xslots``; returns
    the first record not mapped.
    """
    rmask = rkeys.shape[0] - 1
    bmask = bkeys.shape[0] - 1
    rn = rstate[0]
    rlim = rstate[1]
    bn = bstate[0]
    blim = bstate[1]
    xp = 0
    xcap = xslots.shape[0]
    stop = hi
    for i in range(lo, hi):
        o = op[i]
        nb = 0
        b0 = 0
        if o == LOAD or o == STORE:
            a = addr[i]
            b0 = a >> 6
            nb = ((a + size[i] - 1) >> 6) - b0 + 1
            if (o == STORE and bn + nb > blim) or xp + nb - 1 > xcap:
                stop = i
                break
        if not direct:
            d = dst[i]
            if d != 0 and rn + 1 > rlim:
                stop = i
                break
            r = src1[i]
            r1[i] = find(rkeys, rslots, rmask, r) + 1 if r != 0 else 0
            r = src2[i]
            r2[i] = find(rkeys, rslots, rmask, r) + 1 if r != 0 else 0
            r = src3[i]
            r3[i] = find(rkeys, rslots, rmask, r) + 1 if r != 0 else 0
            if d != 0:
                sl, new = insert(rkeys, rslots, rmask, d, rn)
                if new:
                    rn += 1
                rd[i] = sl + 1
            else:
                rd[i] = 0
        nblk[i] = nb
        if nb > 0:
            for b in range(b0, b0 + nb):
                if o == LOAD:
                    sl = find(bkeys, bslots, bmask, b)
                else:
                    sl, new = insert(bkeys, bslots, bmask, b, bn)
                    if new:
                        bn += 1
                if b == b0:
                    bfirst[i] = sl + 1
                else:
                    xslots[xp] = sl + 1
                    xp += 1
    rstate[0] = rn
    bstate[0] = bn
    return stop


@njit(cache=True, boundscheck=False)
def _ilp_window(op, lo, hi, r1, r2, r3, rd, bfirst, nblk, xslots, rready, bready, k, first, base, rmask, w, wstate):
    """Run window ``k`` (size ``w``, table ``first[base : base + rmask + 1]``) over mapped records ``lo..hi-1``.

    Ready tables are [row, window]; ``wstate[k]`` = (clock c, max(t + 1), head, tail), where head and tail
    are absolute instruction positions (the window holds instructions head..tail-1).

    The FIFO of issue times is not stored. With entries e_0 (head) .. e_(n-1) every entry satisfies
    e_j <= max(c, max(e_0 .. e_(j-1)) + 1) (a producer still in the window gives e + 1, a retired one at
    most c), and this survives retirement. Hence (a) when the window is full its head is <= c, so
    ``c += 1`` always retires it and the window never exceeds W; (b) the first entry that stops the
    retirement (``>= c``) equals the new c exactly; (c) the window's values lie in c - W + 1 .. c + W - 1
    (at most W - 1 clock steps happen while an entry waits, each retiring an older one), so slot t & mask
    (mask + 1 >= 2W) is never shared by two live values; and (d) a value t, once retired, never issues
    again (t < c <= every later issue time). So keeping, per value t, the position of the first
    instruction issued at t (``first[t & mask]``, stale when below head) gives the retirement in O(1):
    new head = first position of the new c if it is live, else the tail (window empty). Results are
    identical to the step-by-step FIFO (the tests compare with it).
    """
    c = wstate[k, 0]
    maxt = wstate[k, 1]
    head = wstate[k, 2]
    tail = wstate[k, 3]
    xp = 0
    for i in range(lo, hi):
        t = c
        v = rready[r1[i], k]
        if v > t:
            t = v
        v = rready[r2[i], k]
        if v > t:
            t = v
        v = rready[r3[i], k]
        if v > t:
            t = v
        nb = nblk[i]
        t1 = t + 1
        if nb > 0:
            if op[i] == LOAD:
                v = bready[bfirst[i], k]
                if v > t:
                    t = v
                for q in range(nb - 1):
                    v = bready[xslots[xp + q], k]
                    if v > t:
                        t = v
                t1 = t + 1
            else:
                bready[bfirst[i], k] = t1
                for q in range(nb - 1):
                    bready[xslots[xp + q], k] = t1
            xp += nb - 1
        a = rd[i]
        if a != 0:
            rready[a, k] = t1
        if t1 > maxt:
            maxt = t1
        s = base + (t & rmask)
        f = first[s]
        first[s] = f if f >= head else tail
        tail += 1
        if tail - head == w:
            c += 1
            f = first[base + (c & rmask)]
            head = f if f >= head else tail
    wstate[k, 0] = c
    wstate[k, 1] = maxt
    wstate[k, 2] = head
    wstate[k, 3] = tail


@njit(cache=True, boundscheck=False)
def _ilp_run(op, src1, src2, src3, dst, addr, size, start, direct, rkeys, rslots, rstate, bkeys, bslots, bstate,
             m1, m2, m3, md, r1, r2, r3, rd, bfirst, nblk, xslots, rready, bready, first, offs, rmasks, windows, wstate,
             batch, default):
    """Map a batch of records, run every window over it, repeat; returns the first record not processed
    (a table must grow or be pruned first). The map writes register rows to ``m1, m2, m3, md`` (hash mode);
    the windows read them from ``r1, r2, r3, rd`` (the same arrays, or the token columns in direct mode).
    ``default``: the windows are :data:`ILP_WINDOWS` (the pass specialised for them, sizes as constants)."""
    n = op.shape[0]
    nw = windows.shape[0]
    lo = start
    while lo < n:
        hi = min(lo + batch, n)
        j = _ilp_map(op, src1, src2, src3, dst, addr, size, lo, hi, direct, rkeys, rslots, rstate, bkeys, bslots,
                     bstate, m1, m2, m3, md, bfirst, nblk, xslots)
        if j > lo and default:
            ilp_windows_default(op, lo, j, r1, r2, r3, rd, bfirst, nblk, xslots, rready, bready, first, offs, rmasks,
                                windows, wstate)
        elif j > lo and nw == UNROLLED_NW:
            ilp_windows_unrolled(op, lo, j, r1, r2, r3, rd, bfirst, nblk, xslots, rready, bready, first, offs, rmasks,
                                 windows, wstate)
        elif j > lo:
            for k in range(nw):
                _ilp_window(op, lo, j, r1, r2, r3, rd, bfirst, nblk, xslots, rready, bready, k, first, offs[k],
                            rmasks[k], windows[k], wstate)
        if j < hi:
            return j
        lo = hi
    return n


@njit(cache=True, boundscheck=False)
def _prune(ready, n, c):
    """Slot map dropping entries whose ready time can no longer delay anything (ready <= clock, all windows).

    ``ready`` is [row, window] with slot s in row s + 1; live entries are moved down in place.
    """
    nw = c.shape[0]
    slot_map = np.full(n, -1, np.int64)
    j = 0
    for s in range(n):
        live = False
        for k in range(nw):
            if ready[s + 1, k] > c[k]:
                live = True
                break
        if live:
            for k in range(nw):
                ready[j + 1, k] = ready[s + 1, k]
            slot_map[s] = j
            j += 1
    return slot_map, j


class _ReadyTable:
    """Hash index + ready times ([row, window], slot s in row s + 1, row 0 always 0) for registers or blocks."""

    def __init__(self, nw: int) -> None:
        self.index = HashIndex(1024)
        self.ready = np.zeros((self.index.limit + 1, nw), np.int64)
        self.state = np.array([0, self.index.limit], np.int64)

    def make_room(self, c: np.ndarray, need: int) -> None:
        n = int(self.state[0])
        slot_map, n_live = _prune(self.ready, n, c)
        self.index.n = n
        self.index.rebuild(slot_map, n_live, min_free=n_live + need + 64)
        limit = self.index.limit
        ready = np.zeros((limit + 1, self.ready.shape[1]), np.int64)
        ready[: n_live + 1] = self.ready[: n_live + 1]
        self.ready = ready
        self.state[0] = n_live
        self.state[1] = limit


class IlpAnalyzer(Analyzer):
    """ILP for every window size at once; drained (``ilpW = N / max(t + 1)``).

    Parameters
    ----------
    windows : window sizes W (default 32, 64, 128, 256, 2048, 16384, 65536)

    State: per window a table of 2W positions (the first instruction in the window issued at each time,
    so the in-order retirement costs O(1) per instruction; see ``_ilp_window``), and ready times for
    registers and 64-byte blocks that can still delay an instruction. Register tokens below :data:`DIRECT_TOKENS` index their ready
    times directly; once a larger token appears the registers move to a hash index whose dead entries
    (ready time at or below every window's clock) are dropped when it fills, as the blocks' are, so memory
    is bounded by windows and live values.
    """

    family = "ilp"

    def __init__(self, windows=ILP_WINDOWS) -> None:
        super().__init__()
        self.windows = np.asarray(sorted(set(int(w) for w in windows)), np.int64)
        if self.windows.size == 0 or self.windows[0] < 1:
            raise ValueError(f"ILP windows must be >= 1, got {list(windows)}")
        nw = self.windows.size
        # table size: a power of two >= 2W (the window's live issue times span at most 2W - 1 values)
        caps = np.array([2 << int(np.ceil(np.log2(w))) if w > 1 else 2 for w in self.windows], np.int64)
        self.rmask = caps - 1
        self.offs = np.concatenate([[0], np.cumsum(caps)[:-1]]).astype(np.int64)
        # per window, at slot t & mask: position of the first instruction in the window issued at time t
        # (-1 or below the head: none); see _ilp_window
        self.first = np.full(int(caps.sum()), -1, np.int64)
        self.caps = caps
        self.default = tuple(int(w) for w in self.windows) == UNROLLED_DEFAULT
        self.wstate = np.zeros((nw, 4), np.int64)  # per window: clock, max(t + 1), head, tail (positions)
        self.direct = True
        self.rdirect = np.zeros((64, nw), np.int64)  # ready times by register token (direct mode)
        self.regs = _ReadyTable(nw)
        self.blocks = _ReadyTable(nw)
        self._buf = np.zeros((6, 0), np.int32)  # r1, r2, r3, rd, bfirst, nblk of the chunk being analysed
        self._xslots = np.zeros(256, np.int64)

    @property
    def c(self) -> np.ndarray:
        return self.wstate[:, 0].copy()

    @property
    def maxt(self) -> np.ndarray:
        return self.wstate[:, 1].copy()

    def _to_hash(self) -> None:
        """Move the registers with a live ready time from the direct table into the hash index."""
        c = self.c
        live = np.flatnonzero((self.rdirect > c[None, :]).any(axis=1))
        r = self.regs
        r.index.n = 0
        r.index.rebuild(np.zeros(0, np.int64), 0, min_free=2 * len(live) + 64)
        r.ready = np.zeros((r.index.limit + 1, self.windows.size), np.int64)
        keys, slots, mask = r.index.keys, r.index.slots, r.index.mask
        for s, tok in enumerate(live):
            insert(keys, slots, mask, int(tok), s)
            r.ready[s + 1] = self.rdirect[tok]
        r.index.n = len(live)
        r.state[:] = (len(live), r.index.limit)
        self.rdirect = np.zeros((1, self.windows.size), np.int64)
        self.direct = False

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        if self._buf.shape[1] < n:
            self._buf = np.zeros((6, n), np.int32)
        b1, b2, b3, bd, bfirst, nblk = self._buf
        if self.direct:
            top = int(_max_token(chunk.src1, chunk.src2, chunk.src3, chunk.dst))
            if top >= DIRECT_TOKENS:
                self._to_hash()
            elif top >= self.rdirect.shape[0]:
                grown = np.zeros((max(top + 1, 2 * self.rdirect.shape[0]), self.windows.size), np.int64)
                grown[: self.rdirect.shape[0]] = self.rdirect
                self.rdirect = grown
        r, b = self.regs, self.blocks
        i = 0
        while i < n:
            if self.direct:
                r1, r2, r3, rd, rready = chunk.src1, chunk.src2, chunk.src3, chunk.dst, self.rdirect
            else:
                r1, r2, r3, rd, rready = b1, b2, b3, bd, r.ready
            j = _ilp_run(chunk.op, chunk.src1, chunk.src2, chunk.src3, chunk.dst, chunk.addr, chunk.size, i,
                         self.direct, r.index.keys, r.index.slots, r.state, b.index.keys, b.index.slots, b.state,
                         b1, b2, b3, bd, r1, r2, r3, rd, bfirst, nblk, self._xslots, rready, b.ready, self.first,
                         self.offs, self.rmask, self.windows, self.wstate, BATCH, self.default)
            if j < n:
                c = self.c
                if not self.direct and chunk.dst[j] != 0 and r.state[0] + 1 > r.state[1]:
                    r.make_room(c, 1)
                if chunk.op[j] in (Op.LOAD, Op.STORE):
                    a, sz = int(chunk.addr[j]), int(chunk.size[j])
                    need = ((a + sz - 1) >> 6) - (a >> 6) + 1
                    if chunk.op[j] == Op.STORE and b.state[0] + need > b.state[1]:
                        b.make_room(c, need)
                    if need - 1 > self._xslots.shape[0]:
                        self._xslots = np.zeros(2 * need, np.int64)
            i = j
        self.n += n

    def cycles(self, drained: bool = True) -> dict[int, int]:
        """Cycle count per window (0 for an empty trace).

        Parameters
        ----------
        drained : True (the features): max(t + 1) over all instructions; False: MICA's count, the window
            clock without draining the last, partly filled window.

        Returns
        -------
        dict[int, int]
            Window size -> cycles.
        """
        vals = self.wstate[:, 1] if drained else self.wstate[:, 0]
        return {int(w): int(m) for w, m in zip(self.windows, vals)}

    def result(self) -> dict[str, float]:
        out = {}
        for w, m in zip(self.windows, self.wstate[:, 1]):
            out[ilp_name(int(w))] = ratio(self.n, m)
        if 32 in self.windows and 16384 in self.windows:
            out["ilpRate"] = ratio(out["ilp16384"], out["ilp32"])
        return out


def ilp_name(w: int) -> str:
    """Feature name of the ILP at window ``w``: XAPP's ``ilpW`` or MICA's ``mica_ilpW``."""
    return f"ilp{w}" if w in XAPP_ILP_WINDOWS else f"mica_ilp{w}"
