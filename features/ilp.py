"""ILP on MICA's idealised machine, for several window sizes in one pass (``docs/features.md``, "ILP")."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import TraceChunk

from ._base import grow_1d, ratio
from ._blocks import BlockAnalyzer, BlockRefs
from ._hash import HashIndex, find, insert
from ._ilp_unrolled import DEFAULT_WINDOWS as UNROLLED_DEFAULT
from ._i32x8 import LANES, block_insert
from ._ilp_unrolled import ilp_lanes, ilp_lanes_refs, ilp_windows_default, ilp_windows_default_refs

ILP_WINDOWS = (32, 64, 128, 256, 2048, 16384, 65536)
XAPP_ILP_WINDOWS = (32, 256, 2048, 16384, 65536)
#: register tokens below this index the ready table directly (no hashing); a larger token switches the
#: analyzer to a hash index (with pruning of dead entries) for the rest of the trace.
DIRECT_TOKENS = 1 << 20
#: largest window size accepted (times are kept in int32 lanes, rebased; see ``IlpAnalyzer``)
MAX_WINDOW = 1 << 28
#: records per kernel call at most (times grow by at most one per record, so the int32 lanes are rebased
#: before they could pass 2^31 - 1)
SEGMENT = 1 << 16
#: a lane whose times reach this is rebased before the next segment
REBASE_AT = 1 << 30
#: the window size of an unused lane (it never fills: its events are masked out anyway)
_PAD_WINDOW = 1 << 30


@njit(cache=True, nogil=True, boundscheck=False)
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


@njit(cache=True, nogil=True, boundscheck=False)
def _reg_map(src1, src2, src3, dst, lo, hi, rkeys, rslots, rstate, m1, m2, m3, md):
    """Hash mode: rows of the registers of records ``lo..hi-1`` into ``m1..md[i - lo]`` (slot s is row s + 1,
    row 0 = register 0 or never written). Stops before a record whose destination could take the table past
    its limit (``rstate = [n, limit]``); returns the first record not mapped."""
    rmask = rkeys.shape[0] - 1
    rn = rstate[0]
    rlim = rstate[1]
    stop = hi
    for i in range(lo, hi):
        d = dst[i]
        if d != 0 and rn + 1 > rlim:
            stop = i
            break
        j = i - lo
        r = src1[i]
        m1[j] = find(rkeys, rslots, rmask, r) + 1 if r != 0 else 0
        r = src2[i]
        m2[j] = find(rkeys, rslots, rmask, r) + 1 if r != 0 else 0
        r = src3[i]
        m3[j] = find(rkeys, rslots, rmask, r) + 1 if r != 0 else 0
        if d != 0:
            sl, new = insert(rkeys, rslots, rmask, d, rn)
            if new:
                rn += 1
            md[j] = sl + 1
        else:
            md[j] = 0
    rstate[0] = rn
    return stop


@njit(cache=True, nogil=True, boundscheck=False)
def _prune(ready, n, c, nl):
    """Slot map dropping entries whose ready time can no longer delay anything (<= the clock in every lane).

    ``ready`` is [row, lane] with slot s in row s + 1; lanes ``0..nl-1`` are in use; live rows move down in
    place.
    """
    slot_map = np.full(n, -1, np.int64)
    j = 0
    for s in range(n):
        live = False
        for k in range(nl):
            if ready[s + 1, k] > c[k]:
                live = True
                break
        if live:
            for k in range(ready.shape[1]):
                ready[j + 1, k] = ready[s + 1, k]
            slot_map[s] = j
            j += 1
    return slot_map, j


@njit(cache=True, nogil=True, boundscheck=False)
def _block_rehash(old_keys, old_slots, keys, slots, shift, slot_map):
    """Re-insert the block table's entries with their new slots (``slot_map``; -1 drops the entry)."""
    mask = keys.shape[0] - 1
    for i in range(old_keys.shape[0]):
        s = old_slots[i]
        if s < 0:
            continue
        ns = slot_map[s]
        if ns >= 0:
            block_insert(keys, slots, mask, shift, old_keys[i], ns)


def _rows(n: int) -> np.ndarray:
    return np.zeros((n, LANES), np.int32)


class _RegTable:
    """Hash index + ready rows for register tokens (hash mode): slot s in row s + 1, row 0 always 0, the last
    row the sink of records without a destination."""

    def __init__(self) -> None:
        self.index = HashIndex(1024)
        self.ready = _rows(self.index.limit + 2)
        self.state = np.array([0, self.index.limit], np.int64)

    @property
    def sink(self) -> int:
        return self.ready.shape[0] - 1

    def make_room(self, c: np.ndarray, nl: int, need: int) -> None:
        n = int(self.state[0])
        slot_map, n_live = _prune(self.ready, n, c, nl)
        self.index.n = n
        self.index.rebuild(slot_map, n_live, min_free=n_live + need + 64)
        ready = _rows(self.index.limit + 2)
        ready[: n_live + 1] = self.ready[: n_live + 1]
        self.ready = ready
        self.state[:] = (n_live, self.index.limit)


class _BlockTable:
    """64-byte blocks stored to -> ready rows (slot s in row s + 1, row 0 always 0): an open-addressing table
    with Fibonacci hashing (``_i32x8.block_slot``); entries whose ready time is at or below every
    lane's clock are dropped when it fills."""

    def __init__(self, capacity: int = 4096) -> None:
        self._alloc(capacity)
        self.ready = _rows(self.limit + 1)
        self.state = np.array([0, self.limit], np.int64)

    def _alloc(self, cap: int) -> None:
        self.keys = np.zeros(cap, np.int64)
        self.slots = np.full(cap, -1, np.int64)
        self.limit = cap // 2
        self.shift = 64 - (cap.bit_length() - 1)

    def make_room(self, c: np.ndarray, nl: int, need: int) -> None:
        n = int(self.state[0])
        slot_map, n_live = _prune(self.ready, n, c, nl)
        want = n_live + need + 64
        cap = self.keys.shape[0]
        while cap // 2 < 2 * want:
            cap <<= 1
        while cap > 4096 and cap // 8 > want:
            cap >>= 1
        old_keys, old_slots = self.keys, self.slots
        self._alloc(cap)
        _block_rehash(old_keys, old_slots, self.keys, self.slots, self.shift, slot_map)
        ready = _rows(self.limit + 1)
        ready[: n_live + 1] = self.ready[: n_live + 1]
        self.ready = ready
        self.state[:] = (n_live, self.limit)


class _LaneGroup:
    """Up to eight windows advanced together as the lanes of one vector (state of ``IlpAnalyzer``)."""

    def __init__(self, windows: np.ndarray) -> None:
        nl = windows.size
        self.nl = nl
        self.windows = windows
        self.lanes = (1 << nl) - 1
        caps = np.array([2 << int(w - 1).bit_length() if w > 1 else 2 for w in windows], np.int64)
        self.caps = caps
        self.offs = np.concatenate([[0], np.cumsum(caps)[:-1]]).astype(np.int64)
        self.rmask = caps - 1
        total = int(caps.sum())
        pad = LANES - nl
        self.offs8 = np.concatenate([self.offs, np.full(pad, total, np.int64)])
        self.rmask8 = np.concatenate([self.rmask, np.zeros(pad, np.int64)])
        self.win8 = np.concatenate([windows, np.full(pad, _PAD_WINDOW, np.int64)])
        #: per lane, at slot t & mask: the position of the first record issued at time t (valid for the times
        #: from the clock up to x - 1)
        self.G = np.zeros(total + 1, np.int64)
        self.st = np.zeros((3, LANES), np.int32)  # clock c, x = max(t + 1), records until the window is full
        self.st[2] = self.win8
        self.tbase = np.zeros(LANES, np.int64)  # times of lane k are kept minus tbase[k]
        self.default = tuple(int(w) for w in windows) == UNROLLED_DEFAULT
        self.kernel = ilp_windows_default if self.default else ilp_lanes
        self.kernel_refs = ilp_windows_default_refs if self.default else ilp_lanes_refs
        self.rdirect = _rows(65)  # ready rows by register token (direct mode); the last row is the sink
        self.regs = _RegTable()
        self.blocks = _BlockTable()
        # refs mode (fed the engine's dense block ids): row of each block id in ``bref`` (0 = never stored),
        # rows given in order of first store; ``bref_state`` = [rows used, last usable row]
        self.brow = np.zeros(0, np.int32)
        self.bref = _rows(1024)
        self.bref_state = np.array([0, self.bref.shape[0] - 1], np.int64)
        self.cur = np.zeros(1, np.int64)

    def c(self) -> np.ndarray:
        return self.st[0, : self.nl].astype(np.int64) + self.tbase[: self.nl]

    def x(self) -> np.ndarray:
        return self.st[1, : self.nl].astype(np.int64) + self.tbase[: self.nl]

    def grow_direct(self, top: int) -> None:
        rows = self.rdirect.shape[0] - 1
        if top >= rows:
            grown = _rows(max(top + 1, 2 * rows) + 1)
            grown[:rows] = self.rdirect[:rows]
            self.rdirect = grown

    def to_hash(self) -> None:
        """Move the registers with a live ready time from the direct table into the hash index."""
        nl = self.nl
        rows = self.rdirect[:-1]
        live = np.flatnonzero((rows[:, :nl] > self.st[0, :nl][None, :]).any(axis=1))
        r = self.regs
        r.index.n = 0
        r.index.rebuild(np.zeros(0, np.int64), 0, min_free=2 * len(live) + 64)
        r.ready = _rows(r.index.limit + 2)
        keys, slots, mask = r.index.keys, r.index.slots, r.index.mask
        for s, tok in enumerate(live):
            insert(keys, slots, mask, int(tok), s)
            r.ready[s + 1] = rows[tok]
        r.index.n = len(live)
        r.state[:] = (len(live), r.index.limit)
        self.rdirect = _rows(2)

    def rebase(self) -> None:
        """Subtract from every time of each lane a multiple of its ring size (at most its clock): ready times
        at or below the clock (which can no longer delay anything) clamp to 0, the others keep their order
        and their ring slots, so the results do not change."""
        nl = self.nl
        base = np.zeros(LANES, np.int64)
        base[:nl] = self.st[0, :nl] & ~self.rmask
        b32 = base.astype(np.int32)
        for arr in (self.rdirect, self.regs.ready, self.blocks.ready, self.bref):
            np.maximum(arr - b32[None, :], 0, out=arr)
        self.st[0] -= b32
        self.st[1] -= b32
        self.tbase += base

    def consume(self, chunk: TraceChunk, direct: bool, pos0: int, bufs, refs: BlockRefs | None = None) -> None:
        if refs is not None:
            self._consume_refs(chunk, direct, pos0, bufs, refs)
            return
        n = len(chunk)
        r, b = self.regs, self.blocks
        nl = self.nl
        i = 0
        while i < n:
            if int(self.st[1, :nl].max()) >= REBASE_AT:
                self.rebase()
            hi = min(n, i + SEGMENT)
            if direct:
                j = self.kernel(chunk.op, chunk.addr, chunk.size, i, hi, pos0, chunk.src1, chunk.src2, chunk.src3,
                                chunk.dst, self.rdirect.shape[0] - 1, self.rdirect, b.keys, b.slots, b.state, b.shift,
                                b.ready, self.G, self.st, self.offs8, self.rmask8, self.win8, self.lanes)
                mapped = hi
            else:
                m1, m2, m3, md = bufs
                mapped = _reg_map(chunk.src1, chunk.src2, chunk.src3, chunk.dst, i, hi, r.index.keys, r.index.slots,
                                  r.state, m1, m2, m3, md)
                j = i
                if mapped > i:
                    j = i + self.kernel(chunk.op[i:mapped], chunk.addr[i:mapped], chunk.size[i:mapped], 0, mapped - i,
                                        pos0 + i, m1, m2, m3, md, r.sink, r.ready, b.keys, b.slots, b.state, b.shift,
                                        b.ready, self.G, self.st, self.offs8, self.rmask8, self.win8, self.lanes)
            if j < mapped:  # stopped at a STORE whose new blocks could pass the block table's limit
                a, sz = int(chunk.addr[j]), int(chunk.size[j])
                b.make_room(self.st[0], nl, ((a + sz - 1) >> 6) - (a >> 6) + 1)
            elif j < hi:  # the register table is full (records mapped and not run are mapped again)
                r.make_room(self.st[0], nl, 1)
            i = j


    def _grow_bref(self, need: int) -> None:
        """Room in ``bref`` for ``need`` more stored blocks (geometric growth)."""
        used = int(self.bref_state[0])
        rows = self.bref.shape[0]
        if used + need + 1 > rows:
            grown = _rows(max(2 * rows, used + need + 1))
            grown[: used + 1] = self.bref[: used + 1]
            self.bref = grown
            self.bref_state[1] = grown.shape[0] - 1

    def _consume_refs(self, chunk: TraceChunk, direct: bool, pos0: int, bufs, refs: BlockRefs) -> None:
        """As :meth:`consume`, the blocks read from the engine's dense ids (``refs``) instead of hashed."""
        n = len(chunk)
        if self.brow.shape[0] < refs.n_after:
            self.brow = grow_1d(self.brow, refs.n_after)
        r = self.regs
        nl = self.nl
        self.cur[0] = 0
        roff, rids = refs.off, refs.ids
        i = 0
        while i < n:
            if int(self.st[1, :nl].max()) >= REBASE_AT:
                self.rebase()
            hi = min(n, i + SEGMENT)
            if direct:
                j = self.kernel_refs(chunk.op, i, hi, pos0, chunk.src1, chunk.src2, chunk.src3, chunk.dst,
                                     self.rdirect.shape[0] - 1, self.rdirect, roff, rids, self.cur, self.brow,
                                     self.bref_state, self.bref, self.G, self.st, self.offs8, self.rmask8, self.win8,
                                     self.lanes)
                mapped = hi
            else:
                m1, m2, m3, md = bufs
                mapped = _reg_map(chunk.src1, chunk.src2, chunk.src3, chunk.dst, i, hi, r.index.keys, r.index.slots,
                                  r.state, m1, m2, m3, md)
                j = i
                if mapped > i:
                    j = i + self.kernel_refs(chunk.op[i:mapped], 0, mapped - i, pos0 + i, m1, m2, m3, md, r.sink,
                                             r.ready, roff, rids, self.cur, self.brow, self.bref_state, self.bref,
                                             self.G, self.st, self.offs8, self.rmask8, self.win8, self.lanes)
            if j < mapped:  # stopped at a STORE whose blocks could pass the rows of bref
                k = int(self.cur[0])
                self._grow_bref(int(roff[k + 1] - roff[k]))
            elif j < hi:  # the register table is full (records mapped and not run are mapped again)
                r.make_room(self.st[0], nl, 1)
            i = j


class IlpAnalyzer(BlockAnalyzer):
    """ILP for every window size at once; drained (``ilpW = N / max(t + 1)``).

    Parameters
    ----------
    windows : window sizes W, 1 <= W <= :data:`MAX_WINDOW` (default 32, 64, 128, 256, 2048, 16384, 65536)

    How it runs (results identical to the step-by-step FIFO of docs/features.md; the tests compare them):
    the windows are the lanes of an 8 x int32 vector (groups of eight when there are more): each register's
    and block's ready times for all windows are one row, so an instruction's issue times are three vector
    loads and maxima. The FIFO is not stored. With in-order retirement every issue time is at most one more
    than the largest issued so far (M): an entry is at most the clock, or one more than an earlier entry
    still in the window, and the clock is at most M + 1 (it advances by one only when the window is full,
    and every entry was issued at or after the clock). So M passes through every value, and the first
    record issued at time v is the record at which M reached v; it is kept in a ring of 2W positions per
    window at slot v mod 2W, written only when M rises (t == x, x = M + 1). When the window is full the
    clock advances to c and entries leave from the head while below c: every record before the first one
    issued at c has a time <= M < c, so retirement stops exactly at that record (the new head), or empties
    the window when none was issued at c yet (c == x). Per record a window needs only the vector compares
    ``t + 1 > x`` and "window full" (a count of the records until the window is next full); a lane's ring is
    touched only on those events, in a short unrolled branch. The live times of a window span less than 2W
    values, so the ring slots never collide.

    Times are int32: when a lane's times reach 2^30, a multiple of its ring size at most its clock is
    subtracted from all of them (dead ready times clamp to 0), which changes no comparison and no ring slot;
    the offset is added back in :meth:`cycles`.

    State: per window a ring of 2W positions, ready rows for registers (indexed by token while all tokens are
    below :data:`DIRECT_TOKENS`, else hashed) and for 64-byte blocks written by stores. Fed alone
    (:meth:`consume`), the blocks are hashed in ILP's own table of blocks that can still delay an instruction
    (entries whose ready time is at or below every window's clock are dropped when it fills), so memory is
    bounded by windows and live values, never by the trace length. Fed by a
    :class:`features.engine.FeatureEngine` (:meth:`consume_refs`), the blocks come as the engine's dense ids
    (features/_blocks.py): a block's row is ``brow[id]`` (an int32 per distinct block, 0 = never stored: a
    row of zeros), rows given in order of first store, so that state grows with the distinct blocks (as the
    engine's block map does) and no block is hashed twice.
    """

    family = "ilp"
    #: the engine maps blocks for ILP only together with an analyzer that needs the map (see FeatureEngine)
    blocks_optional = True

    def __init__(self, windows=ILP_WINDOWS) -> None:
        super().__init__()
        self.windows = np.asarray(sorted(set(int(w) for w in windows)), np.int64)
        if self.windows.size == 0 or self.windows[0] < 1:
            raise ValueError(f"ILP windows must be >= 1, got {list(windows)}")
        if self.windows[-1] > MAX_WINDOW:
            raise ValueError(f"ILP windows must be <= {MAX_WINDOW}, got {int(self.windows[-1])}")
        self.groups = [_LaneGroup(self.windows[k: k + LANES]) for k in range(0, self.windows.size, LANES)]
        # ring layout per window (offsets within its group's ring array)
        self.caps = np.concatenate([g.caps for g in self.groups])
        self.offs = np.concatenate([g.offs for g in self.groups])
        self.rmask = np.concatenate([g.rmask for g in self.groups])
        self.default = len(self.groups) == 1 and self.groups[0].default
        self.direct = True
        self._bufs = tuple(np.zeros(0, np.int32) for _ in range(4))
        #: how the blocks are read, fixed by the first non-empty chunk: "own" (hashed here) or "refs" (ids)
        self.mode: str | None = None
        #: (chunk, its largest register token) when the engine computed it for the next chunk (used once, by
        #: that very chunk object only, then cleared)
        self.next_max_token: tuple | None = None

    @property
    def regs(self) -> _RegTable:
        """The register hash table of the first lane group (used in hash mode)."""
        return self.groups[0].regs

    @property
    def blocks(self) -> _BlockTable:
        """The block table of the first lane group."""
        return self.groups[0].blocks

    @property
    def c(self) -> np.ndarray:
        return np.concatenate([g.c() for g in self.groups])

    @property
    def maxt(self) -> np.ndarray:
        return np.concatenate([g.x() for g in self.groups])

    def consume(self, chunk: TraceChunk) -> None:
        """Feed the next chunk; blocks hashed in ILP's own table (or, once fed by the engine, mapped by its
        block map).

        Parameters
        ----------
        chunk : TraceChunk
        """
        if self.mode == "refs":
            self.consume_refs(chunk, self.blockmap.map(chunk))
        else:
            self._consume(chunk, None)

    def consume_refs(self, chunk: TraceChunk, refs: BlockRefs) -> None:
        """Feed the next chunk with its memory references as dense block ids (``self.blockmap.map(chunk)``).

        Parameters
        ----------
        chunk : TraceChunk
        refs : BlockRefs
        """
        self._consume(chunk, None if self.mode == "own" else refs)

    def _consume(self, chunk: TraceChunk, refs: BlockRefs | None) -> None:
        hint, self.next_max_token = self.next_max_token, None
        top = hint[1] if hint is not None and hint[0] is chunk else None
        n = len(chunk)
        if not n:
            return
        if self.mode is None:
            self.mode = "own" if refs is None else "refs"
        if self.direct:
            if top is None:
                top = int(_max_token(chunk.src1, chunk.src2, chunk.src3, chunk.dst))
            if top >= DIRECT_TOKENS:
                for g in self.groups:
                    g.to_hash()
                self.direct = False
            else:
                for g in self.groups:
                    g.grow_direct(top)
        if not self.direct and self._bufs[0].shape[0] < min(n, SEGMENT):
            self._bufs = tuple(np.zeros(min(n, SEGMENT), np.int32) for _ in range(4))
        for g in self.groups:
            g.consume(chunk, self.direct, self.n, self._bufs, refs)
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
        vals = self.maxt if drained else self.c
        return {int(w): int(m) for w, m in zip(self.windows, vals)}

    def result(self) -> dict[str, float]:
        out = {}
        for w, m in zip(self.windows, self.maxt):
            out[ilp_name(int(w))] = ratio(self.n, int(m))
        if 32 in self.windows and 16384 in self.windows:
            out["ilpRate"] = ratio(out["ilp16384"], out["ilp32"])
        return out


def ilp_name(w: int) -> str:
    """Feature name of the ILP at window ``w``: XAPP's ``ilpW`` or MICA's ``mica_ilpW``."""
    return f"ilp{w}" if w in XAPP_ILP_WINDOWS else f"mica_ilp{w}"
