"""ILP on MICA's idealised machine, for several window sizes in one pass (``docs/features.md``, "ILP")."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import TraceChunk

from ._base import grow_1d, ratio
from .fast.blocks import BlockAnalyzer, BlockRefs
from .fast.hash_index import HashIndex, find, insert
from .fast.i32x8 import LANES
from .fast.ilp_mem import BLOCK_SHIFT, EMPTY, GROUP_ROWS, GROUPS_PER_STORE, WPB, compact, rehash
from .fast.ilp_unrolled import DEFAULT_WINDOWS as UNROLLED_DEFAULT
from .fast.ilp_unrolled import ilp_lanes, ilp_lanes_refs, ilp_windows_default, ilp_windows_default_refs

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


class _MemTable:
    """Ready rows of the stored bytes (``features/fast/ilp_mem.py``): slots of stored 64-byte blocks, each with
    eight word rows (``W``), its byte-row group and key (``M``, ``K``), the byte rows ``Y`` of the words
    written in part, and the hash table ``cells`` (block -> slot) used when ILP looks blocks up itself. When
    the slots or the groups run out, the blocks whose every ready time is at or below every lane's clock
    (they can no longer delay anything) are dropped and the others renumbered, and the arrays are sized for
    them."""

    def __init__(self, slots: int = 2048, groups: int = 256) -> None:
        self.W = _rows((slots + 1) * WPB)
        self.M = np.zeros(slots + 1, np.int64)
        self.K = np.zeros(slots + 1, np.int64)
        self.Y = _rows((groups + 1) * GROUP_ROWS)
        self._spare_y: np.ndarray | None = None  # byte rows of the same size, to compact into
        self.cells, self.shift = self._cells(slots)
        self.state = np.array([0, slots, 0, groups], np.int64)
        #: how often dead blocks were dropped
        self.compactions = 0

    @staticmethod
    def _cells(slots: int) -> tuple[np.ndarray, int]:
        """An empty hash table for ``slots`` blocks (at most half full) and its Fibonacci shift."""
        cap = 2 * slots
        cells = np.zeros(2 * cap, np.int64)
        cells[0::2] = EMPTY
        return cells, 64 - (cap.bit_length() - 1)

    @property
    def n(self) -> int:
        """Blocks held (slots 1..n)."""
        return int(self.state[0])

    def make_room(self, st: np.ndarray, lanes: int, need: int, brow: np.ndarray | None = None) -> None:
        """Drop the dead blocks and renumber the others; size the slots for them plus ``need`` more and the
        byte rows for their groups plus room to go on.

        Parameters
        ----------
        st : the lane group's state rows (row 0: the clock of each lane)
        lanes : bit mask of the lanes in use
        need : blocks that must fit after the live ones
        brow : when the blocks are the engine's ids, their slot numbers (kept in step); else the hash table is
            rebuilt
        """
        n, slots, glim = int(self.state[0]), int(self.state[1]), int(self.state[3])
        nY = self._spare_y if self._spare_y is not None else _rows((glim + 1) * GROUP_ROWS)
        refs = brow is not None
        live, groups = (int(v) for v in compact(self.W, self.M, self.K, self.Y, n, st, lanes, nY,
                                                 brow if refs else np.zeros(1, np.int32), refs))
        want = live + need + 64
        new_slots = slots
        while new_slots < 2 * want:
            new_slots <<= 1
        while new_slots > 2048 and new_slots // 8 > want:
            new_slots >>= 1
        gwant = 2 * (groups + GROUPS_PER_STORE + 16)
        new_g = glim if gwant <= glim <= 8 * gwant else max(256, gwant)
        if new_slots != slots:
            keep = (live + 1) * WPB
            W = _rows((new_slots + 1) * WPB)
            W[:keep] = self.W[:keep]
            M = np.zeros(new_slots + 1, np.int64)
            M[: live + 1] = self.M[: live + 1]
            K = np.zeros(new_slots + 1, np.int64)
            K[: live + 1] = self.K[: live + 1]
            self.W, self.M, self.K = W, M, K
        if new_g != glim:
            Y = _rows((new_g + 1) * GROUP_ROWS)
            Y[: (groups + 1) * GROUP_ROWS] = nY[: (groups + 1) * GROUP_ROWS]
            self._spare_y, self.Y = None, Y
        else:  # the two sets of byte rows take turns
            self._spare_y, self.Y = self.Y, nY
        if not refs:
            if new_slots != slots:
                self.cells, self.shift = self._cells(new_slots)
            else:
                self.cells[0::2] = EMPTY
            rehash(self.cells, self.shift, self.K, live)
        self.state[:] = (live, new_slots, groups, new_g)
        self.compactions += 1

    def rebase(self, base: np.ndarray) -> None:
        """Subtract ``base`` (int32 per lane) from every stored time, clamping at 0."""
        for arr in (self.W[WPB: (self.n + 1) * WPB], self.Y[GROUP_ROWS: (int(self.state[2]) + 1) * GROUP_ROWS]):
            np.maximum(arr - base[None, :], 0, out=arr)


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
        self.mem = _MemTable()
        # refs mode (fed the engine's dense block ids): the slot of each block id (0 = none)
        self.brow = np.zeros(0, np.int32)
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
        for arr in (self.rdirect, self.regs.ready):
            np.maximum(arr - b32[None, :], 0, out=arr)
        self.mem.rebase(b32)
        self.st[0] -= b32
        self.st[1] -= b32
        self.tbase += base

    def consume(self, chunk: TraceChunk, direct: bool, pos0: int, bufs, refs: BlockRefs | None = None) -> None:
        if refs is not None:
            self._consume_refs(chunk, direct, pos0, bufs, refs)
            return
        n = len(chunk)
        r, b = self.regs, self.mem
        nl = self.nl
        i = 0
        while i < n:
            if int(self.st[1, :nl].max()) >= REBASE_AT:
                self.rebase()
            hi = min(n, i + SEGMENT)
            if direct:
                j = self.kernel(chunk.op, chunk.addr, chunk.size, i, hi, pos0, chunk.src1, chunk.src2, chunk.src3,
                                chunk.dst, self.rdirect.shape[0] - 1, self.rdirect, b.cells, b.shift, b.state, b.W,
                                b.M, b.K, b.Y, self.G, self.st, self.offs8, self.rmask8, self.win8, self.lanes)
                mapped = hi
            else:
                m1, m2, m3, md = bufs
                mapped = _reg_map(chunk.src1, chunk.src2, chunk.src3, chunk.dst, i, hi, r.index.keys, r.index.slots,
                                  r.state, m1, m2, m3, md)
                j = i
                if mapped > i:
                    j = i + self.kernel(chunk.op[i:mapped], chunk.addr[i:mapped], chunk.size[i:mapped], 0, mapped - i,
                                        pos0 + i, m1, m2, m3, md, r.sink, r.ready, b.cells, b.shift, b.state, b.W,
                                        b.M, b.K, b.Y, self.G, self.st, self.offs8, self.rmask8, self.win8, self.lanes)
            if j < mapped:  # stopped at a STORE that could pass the slots' or the byte-row groups' limit
                a, sz = int(chunk.addr[j]), int(chunk.size[j])
                b.make_room(self.st, self.lanes, ((a + sz - 1) >> BLOCK_SHIFT) - (a >> BLOCK_SHIFT) + 1)
            elif j < hi:  # the register table is full (records mapped and not run are mapped again)
                r.make_room(self.st[0], nl, 1)
            i = j

    def _consume_refs(self, chunk: TraceChunk, direct: bool, pos0: int, bufs, refs: BlockRefs) -> None:
        """As :meth:`consume`, the blocks read from the engine's dense ids (``refs``) instead of hashed."""
        n = len(chunk)
        if self.brow.shape[0] < refs.n_after:
            self.brow = grow_1d(self.brow, refs.n_after)
        r, b = self.regs, self.mem
        nl = self.nl
        self.cur[0] = 0
        rec, roff, rids = refs.rec, refs.off, refs.ids
        i = 0
        while i < n:
            if int(self.st[1, :nl].max()) >= REBASE_AT:
                self.rebase()
            hi = min(n, i + SEGMENT)
            if direct:
                j = self.kernel_refs(chunk.op, chunk.addr, chunk.size, i, hi, pos0, chunk.src1, chunk.src2,
                                     chunk.src3, chunk.dst, self.rdirect.shape[0] - 1, self.rdirect, rec, 0, roff, rids,
                                     self.cur, self.brow, b.state, b.W, b.M, b.K, b.Y, self.G, self.st, self.offs8,
                                     self.rmask8, self.win8, self.lanes)
                mapped = hi
            else:
                m1, m2, m3, md = bufs
                mapped = _reg_map(chunk.src1, chunk.src2, chunk.src3, chunk.dst, i, hi, r.index.keys, r.index.slots,
                                  r.state, m1, m2, m3, md)
                j = i
                if mapped > i:
                    j = i + self.kernel_refs(chunk.op[i:mapped], chunk.addr[i:mapped], chunk.size[i:mapped], 0,
                                             mapped - i, pos0 + i, m1, m2, m3, md, r.sink, r.ready, rec, i, roff, rids,
                                             self.cur, self.brow, b.state, b.W, b.M, b.K, b.Y, self.G, self.st,
                                             self.offs8, self.rmask8, self.win8, self.lanes)
            if j < mapped:  # stopped at a STORE that could pass the slots' or the byte-row groups' limit
                k = int(self.cur[0])
                b.make_room(self.st, self.lanes, int(roff[k + 1] - roff[k]), self.brow)
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
    and stored word's ready times for all windows are one row, so an instruction's issue times are three
    vector loads and maxima. The FIFO is not stored. With in-order retirement every issue time is at most one
    more than the largest issued so far (M): an entry is at most the clock, or one more than an earlier entry
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

    Memory dependences are on exact bytes: a LOAD waits for the last STORE to each byte it reads, so
    neighbouring elements of an array do not depend on each other, wherever the allocator put the array.

    State: per window a ring of 2W positions, ready rows for registers (indexed by token while all tokens are
    below :data:`DIRECT_TOKENS`, else hashed) and for the bytes written by stores (``features/fast/ilp_mem.py``:
    a slot per stored 64-byte block with a row per 8-byte word, eight byte rows besides for a word written in
    part), holding only the blocks that can still delay an instruction: when the slots run out, blocks whose
    ready times are all at or below every window's clock are dropped, so this memory is bounded by the
    windows and the values in flight, never by the trace length or the size of the arrays. Fed alone
    (:meth:`consume`), ILP finds a block's slot in its own hash table. Fed by a
    :class:`features.engine.FeatureEngine` together with footprint or reuse (:meth:`consume_refs`), it reads
    the engine's dense block ids (features/fast/blocks.py) and the bytes within them from the addresses: a
    block's slot is ``brow[id]`` (an int32 per distinct block, 0 = none), so no block is hashed twice.
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
    def mem(self) -> _MemTable:
        """The stored bytes' table of the first lane group."""
        return self.groups[0].mem

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
