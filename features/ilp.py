"""ILP on MICA's idealised machine, for several window sizes in one pass (``docs/features.md``, "ILP")."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import Op, TraceChunk

from ._base import Analyzer, ratio
from ._hash import HashIndex, find, insert
from ._ilp_unrolled import NW as UNROLLED_NW
from ._ilp_unrolled import ilp_windows_unrolled

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
ILP_WINDOWS = (32, 64, 128, 256, 2048, 16384, 65536)
XAPP_ILP_WINDOWS = (32, 256, 2048, 16384, 65536)


@njit(cache=True)
def _ilp_map(op, src1, src2, src3, dst, addr, size, start, rkeys, rslots, rstate, bkeys, bslots, bstate,
             s1, s2, s3, sd, bfirst, nblk, xslots):
    """Map registers and blocks of records ``start..`` to table slots (-1 = no ready time yet).

    Stops before a record whose insertions could take a table past its limit (``*state = [n, limit]``) or
    whose extra blocks (beyond the first) do not fit in ``xslots``; returns the first record not mapped.
    """
    rmask = rkeys.shape[0] - 1
    bmask = bkeys.shape[0] - 1
    rn = rstate[0]
    rlim = rstate[1]
    bn = bstate[0]
    blim = bstate[1]
    xp = 0
    xcap = xslots.shape[0]
    n = op.shape[0]
    stop = n
    for i in range(start, n):
        o = op[i]
        d = dst[i]
        nb = 0
        b0 = 0
        if o == LOAD or o == STORE:
            a = addr[i]
            b0 = a >> 6
            nb = ((a + size[i] - 1) >> 6) - b0 + 1
            if (o == STORE and bn + nb > blim) or xp + nb - 1 > xcap:
                stop = i
                break
        if d != 0 and rn + 1 > rlim:
            stop = i
            break
        r = src1[i]
        s1[i] = find(rkeys, rslots, rmask, r) if r != 0 else -1
        r = src2[i]
        s2[i] = find(rkeys, rslots, rmask, r) if r != 0 else -1
        r = src3[i]
        s3[i] = find(rkeys, rslots, rmask, r) if r != 0 else -1
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
                    bfirst[i] = sl
                else:
                    xslots[xp] = sl
                    xp += 1
        if d != 0:
            sl, new = insert(rkeys, rslots, rmask, d, rn)
            if new:
                rn += 1
            sd[i] = sl
        else:
            sd[i] = -1
    rstate[0] = rn
    bstate[0] = bn
    return stop


@njit(cache=True)
def _ilp_window(op, lo, hi, s1, s2, s3, sd, bfirst, nblk, xslots, rready, bready, k, ring, w, rmask, st):
    """Run window ``k`` (size ``w``) over mapped records ``lo..hi-1``; ready tables are [slot, window];
    ``st`` = [clock, max(t + 1), ring head, count]."""
    c = st[0]
    maxt = st[1]
    head = st[2]
    cnt = st[3]
    xp = 0
    for i in range(lo, hi):
        t = c
        a = s1[i]
        if a >= 0:
            v = rready[a, k]
            if v > t:
                t = v
        a = s2[i]
        if a >= 0:
            v = rready[a, k]
            if v > t:
                t = v
        a = s3[i]
        if a >= 0:
            v = rready[a, k]
            if v > t:
                t = v
        o = op[i]
        nb = nblk[i]
        if o == LOAD:
            a = bfirst[i]
            if a >= 0:
                v = bready[a, k]
                if v > t:
                    t = v
            for q in range(nb - 1):
                a = xslots[xp + q]
                if a >= 0:
                    v = bready[a, k]
                    if v > t:
                        t = v
        t1 = t + 1
        a = sd[i]
        if a >= 0:
            rready[a, k] = t1
        if o == STORE:
            bready[bfirst[i], k] = t1
            for q in range(nb - 1):
                bready[xslots[xp + q], k] = t1
        if nb > 1:
            xp += nb - 1
        if t1 > maxt:
            maxt = t1
        ring[(head + cnt) & rmask] = t
        cnt += 1
        if cnt == w:
            c += 1
            while cnt > 0 and ring[head] < c:
                head = (head + 1) & rmask
                cnt -= 1
    st[0] = c
    st[1] = maxt
    st[2] = head
    st[3] = cnt


@njit(cache=True)
def _prune(ready, n, c):
    """Slot map dropping entries whose ready time can no longer delay anything (ready <= clock, all windows).

    ``ready`` is [slot, window]; live entries are moved down in place.
    """
    nw = c.shape[0]
    slot_map = np.full(n, -1, np.int64)
    j = 0
    for s in range(n):
        live = False
        for k in range(nw):
            if ready[s, k] > c[k]:
                live = True
                break
        if live:
            for k in range(nw):
                ready[j, k] = ready[s, k]
            slot_map[s] = j
            j += 1
    return slot_map, j


class _ReadyTable:
    """Hash index + ready times ([slot, window]) for registers or blocks."""

    def __init__(self, nw: int) -> None:
        self.index = HashIndex(1024)
        self.ready = np.zeros((self.index.limit, nw), np.int64)
        self.state = np.array([0, self.index.limit], np.int64)

    def make_room(self, c: np.ndarray, need: int) -> None:
        n = int(self.state[0])
        slot_map, n_live = _prune(self.ready, n, c)
        self.index.n = n
        self.index.rebuild(slot_map, n_live, min_free=n_live + need + 64)
        limit = self.index.limit
        ready = np.zeros((limit, self.ready.shape[1]), np.int64)
        ready[:n_live] = self.ready[:n_live]
        self.ready = ready
        self.state[0] = n_live
        self.state[1] = limit


class IlpAnalyzer(Analyzer):
    """ILP for every window size at once; drained (``ilpW = N / max(t + 1)``).

    Parameters
    ----------
    windows : window sizes W (default 32, 64, 128, 256, 2048, 16384, 65536)

    State: one ring buffer of W entries per window, and ready times for registers and 64-byte blocks
    that can still delay an instruction (entries whose ready time is at or below every window's clock are
    dropped when a table fills), so memory is bounded by windows and live values.
    """

    family = "ilp"

    def __init__(self, windows=ILP_WINDOWS) -> None:
        super().__init__()
        self.windows = np.asarray(sorted(set(int(w) for w in windows)), np.int64)
        if self.windows.size == 0 or self.windows[0] < 1:
            raise ValueError(f"ILP windows must be >= 1, got {list(windows)}")
        nw = self.windows.size
        caps = np.array([1 << int(np.ceil(np.log2(w))) if w > 1 else 1 for w in self.windows], np.int64)
        self.rmask = caps - 1
        self.offs = np.concatenate([[0], np.cumsum(caps)[:-1]]).astype(np.int64)
        self.ring = np.zeros(int(caps.sum()), np.int64)
        self.caps = caps
        self.wstate = np.zeros((nw, 4), np.int64)  # per window: clock, max(t + 1), ring head, ring count
        self.regs = _ReadyTable(nw)
        self.blocks = _ReadyTable(nw)
        self._buf = np.zeros((6, 0), np.int32)  # s1, s2, s3, sd, bfirst, nblk of the chunk being analysed
        self._xslots = np.zeros(256, np.int64)

    @property
    def c(self) -> np.ndarray:
        return self.wstate[:, 0].copy()

    @property
    def maxt(self) -> np.ndarray:
        return self.wstate[:, 1].copy()

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        if self._buf.shape[1] < n:
            self._buf = np.zeros((6, n), np.int32)
        s1, s2, s3, sd, bfirst, nblk = self._buf
        r, b = self.regs, self.blocks
        i = 0
        while i < n:
            j = _ilp_map(chunk.op, chunk.src1, chunk.src2, chunk.src3, chunk.dst, chunk.addr, chunk.size, i,
                         r.index.keys, r.index.slots, r.state, b.index.keys, b.index.slots, b.state,
                         s1, s2, s3, sd, bfirst, nblk, self._xslots)
            if j > i and self.windows.size == UNROLLED_NW:
                ilp_windows_unrolled(chunk.op, i, j, s1, s2, s3, sd, bfirst, nblk, self._xslots, r.ready, b.ready,
                                     self.ring, self.offs, self.rmask, self.windows, self.wstate)
            elif j > i:
                for k in range(self.windows.size):
                    base = int(self.offs[k])
                    _ilp_window(chunk.op, i, j, s1, s2, s3, sd, bfirst, nblk, self._xslots, r.ready, b.ready, k,
                                self.ring[base: base + int(self.caps[k])], int(self.windows[k]), int(self.rmask[k]),
                                self.wstate[k])
            if j < n:
                c = self.c
                if chunk.dst[j] != 0 and r.state[0] + 1 > r.state[1]:
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
