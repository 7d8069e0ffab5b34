"""The engine's shared block index: dense ids of the 64-byte blocks (and 4 KiB pages) of loads and stores.

Several families look blocks up (footprint, reuse distance and, next to them, ILP). Instead of each hashing every
block number, the engine maps each chunk's memory references ONCE (:meth:`BlockMap.map`) and hands the
result, a :class:`BlockRefs`, to every analyzer that takes one (``consume_refs(chunk, refs)``):

* ``rec[r]``: index in the chunk of the r-th LOAD/STORE record (program order);
* ``ids[off[r]:off[r + 1]]``: the dense ids of the blocks that record touches, in address order (a record
  touches blocks ``addr >> 6 .. (addr + size - 1) >> 6``);
* ``n_before``: blocks known before the chunk. Ids are given in order of first touch, starting at 0 and
  never changing, so a reference is the first touch of its block exactly when its id equals the number of
  distinct blocks touched before it: a consumer walking the references in order with a counter started
  at ``n_before`` learns "first time seen" without another lookup.

Per-id state of a consumer is a plain array indexed by id (grow it to ``BlockMap.n_blocks``). Pages are
counted too (a page can only be new when one of its blocks is). A static instruction that stays in the
block it touched last skips the hash lookup. Memory: the hash tables grow with distinct blocks and pages,
the reference buffers with the chunk size, never with the trace length.
"""

from __future__ import annotations

import abc

import numpy as np
from numba import njit

from core.trace_schema import Op
from profiler.trace import TraceChunk

from .._base import Analyzer, grow_1d, pc_capacity
from .hash_index import slot_hash
from .prefetch import prefetch

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
BLOCK_SHIFT = 6
PAGE_SHIFT = 12
#: how many memory references (or entries, when rehashing) ahead the hash cell of a block is prefetched
PREFETCH_AHEAD = 16
#: a full table grows 4-fold below this many cells (rehashing a large table costs one cache miss or page
#: fault per entry, and 4-fold growth rehashes a third as many entries as doubling), 2-fold above (bounds the
#: unused cells: the load stays >= 1/8 below it and >= 1/4 above)
GROW4_BELOW = 1 << 22


@njit(cache=True, inline="always")
def _cell_insert(cells, mask, key, new_slot):
    """Slot of ``key`` in an interleaved table (cells[2h] = key, cells[2h + 1] = slot, -1 = empty cell);
    inserts it with ``new_slot`` when absent. Returns (slot, inserted)."""
    h = slot_hash(key, mask)
    while True:
        s = cells[2 * h + 1]
        if s < 0:
            cells[2 * h] = key
            cells[2 * h + 1] = new_slot
            return new_slot, True
        if cells[2 * h] == key:
            return s, False
        h = (h + 1) & mask


@njit(cache=True, nogil=True, boundscheck=False)
def _cell_rehash(old, new, nkeys):
    """Insert every entry of ``old`` into ``new`` (``nkeys`` entries), prefetching the new cell of the
    entry PREFETCH_AHEAD ahead: the new table is larger than the cache and the cells are random."""
    mask = (new.shape[0] >> 1) - 1
    keys = np.empty(nkeys, np.int64)
    slots = np.empty(nkeys, np.int64)
    m = 0
    for h in range(old.shape[0] >> 1):
        s = old[2 * h + 1]
        if s >= 0:
            keys[m] = old[2 * h]
            slots[m] = s
            m += 1
    for e in range(m):
        if e + PREFETCH_AHEAD < m:
            prefetch(new, 2 * slot_hash(keys[e + PREFETCH_AHEAD], mask))
        _cell_insert(new, mask, keys[e], slots[e])


class CellIndex:
    """Keys -> dense slots 0, 1, 2, ... in order of first insertion, like :class:`features.fast.hash_index.HashIndex`,
    with each cell's key and slot side by side (one cache line per probe instead of two).

    Attributes
    ----------
    cells : int64 array of 2 x capacity (key, slot) pairs; slot -1 marks an empty cell
    n : keys stored (kernels keep the live count in their state arrays and write it back before growth)
    """

    def __init__(self, capacity: int = 1024) -> None:
        cap = 16
        while cap < capacity:
            cap <<= 1
        self.cells = np.full(2 * cap, -1, np.int64)
        self.n = 0

    @property
    def capacity(self) -> int:
        return self.cells.shape[0] >> 1

    @property
    def mask(self) -> int:
        return self.capacity - 1

    @property
    def limit(self) -> int:
        """Kernels stop inserting once ``n`` reaches it (half the cells)."""
        return self.capacity // 2

    @property
    def keys(self) -> np.ndarray:
        """The key of every cell (a view; meaningful where the slot is >= 0)."""
        return self.cells[0::2]

    def grow(self, min_free: int = 1) -> None:
        """Grow the table 4-fold (2-fold from :data:`GROW4_BELOW` cells; more when needed) so ``n + min_free``
        keys fit under the limit; slots are kept.

        Parameters
        ----------
        min_free : keys that must fit after the ``n`` stored ones
        """
        cap = self.capacity
        while cap // 2 < self.n + min_free:
            cap <<= 1
        cap = max(cap, (4 if self.capacity < GROW4_BELOW else 2) * self.capacity)
        cells = np.full(2 * cap, -1, np.int64)
        _cell_rehash(self.cells, cells, self.n)
        self.cells = cells


@njit(cache=True, nogil=True, boundscheck=False)
def _mem_records(op, rec):
    """Indices of the LOAD/STORE records into ``rec``; returns their number."""
    r = 0
    for i in range(op.shape[0]):
        o = op[i]
        rec[r] = i
        r += (o == LOAD) | (o == STORE)
    return r


@njit(cache=True, nogil=True, boundscheck=False)
def _map_kernel(pc, addr, size, nrec, pos, rec, off, ids, bcells, bstate, pcells, pstate, lastblk, lastid):
    """Map memory records ``rec[pos[0]:nrec]`` (writing id ``pos[1]`` next); stops before a record that could
    take a hash table past its limit or the id buffer past its end, leaving ``pos`` at it. The hash cell of
    the block of the record PREFETCH_AHEAD references ahead is prefetched, so a random block's lookup finds
    its cell in the cache (a lookup's probe loop branches on the loaded cell, which would otherwise keep
    the processor from overlapping the misses)."""
    bmask = (bcells.shape[0] >> 1) - 1
    pmask = (pcells.shape[0] >> 1) - 1
    bn = bstate[0]
    blim = bstate[1]
    pn = pstate[0]
    plim = pstate[1]
    kcap = ids.shape[0]
    k = pos[1]
    r = pos[0]
    while r < nrec:
        if r + PREFETCH_AHEAD < nrec:
            h = slot_hash(addr[rec[r + PREFETCH_AHEAD]] >> BLOCK_SHIFT, bmask)
            prefetch(bcells, 2 * h)
        i = rec[r]
        a = addr[i]
        e = a + size[i] - 1
        b0 = a >> BLOCK_SHIFT
        b1 = e >> BLOCK_SHIFT
        p = pc[i]
        if b0 == b1 and lastid[p] >= 0 and lastblk[p] == b0:
            if k >= kcap:
                break
            ids[k] = lastid[p]
            k += 1
            r += 1
            off[r] = k
            continue
        nb = b1 - b0 + 1
        if bn + nb > blim or pn + ((e >> PAGE_SHIFT) - (a >> PAGE_SHIFT) + 1) > plim or k + nb > kcap:
            break
        s = np.int64(0)
        for b in range(b0, b1 + 1):
            s, new = _cell_insert(bcells, bmask, b, bn)
            if new:
                bn += 1
                q, pnew = _cell_insert(pcells, pmask, b >> (PAGE_SHIFT - BLOCK_SHIFT), pn)
                if pnew:
                    pn += 1
            ids[k] = s
            k += 1
        r += 1
        off[r] = k
        lastblk[p] = b1
        lastid[p] = s
    bstate[0] = bn
    pstate[0] = pn
    pos[0] = r
    pos[1] = k


class BlockRefs:
    """The memory references of one chunk as dense block ids (see the module docstring).

    Attributes
    ----------
    rec : int64 array, chunk index of each LOAD/STORE record
    off : int64 array of ``len(rec) + 1`` offsets into ``ids``
    ids : int64 array, dense block id of each block reference
    n_before, n_after : distinct blocks touched before and after the chunk
    """

    __slots__ = ("rec", "off", "ids", "n_before", "n_after")

    def __init__(self, rec, off, ids, n_before, n_after) -> None:
        self.rec, self.off, self.ids, self.n_before, self.n_after = rec, off, ids, n_before, n_after


class BlockMap:
    """Dense ids for the 64-byte blocks and counts of the 4 KiB pages touched by LOAD/STORE records.

    The engine owns one and maps each chunk once; analyzers used on their own own a private one. The
    arrays of the returned :class:`BlockRefs` are reused by the next :meth:`map` call.
    """

    def __init__(self) -> None:
        self.blocks = CellIndex(1024)
        self.pages = CellIndex(1024)
        self.bstate = np.array([0, self.blocks.limit], np.int64)
        self.pstate = np.array([0, self.pages.limit], np.int64)
        self.lastblk = np.zeros(0, np.int64)  # per static instruction: last block touched and its id
        self.lastid = np.zeros(0, np.int64)
        self._rec = np.zeros(0, np.int64)
        self._off = np.zeros(1, np.int64)
        self._ids = np.zeros(0, np.int64)
        #: (chunk, 1 + its largest pc) when the engine computed it for the next chunk (used once)
        self.pc_hint: tuple | None = None

    @property
    def n_blocks(self) -> int:
        """Distinct blocks touched so far (ids are 0 .. n_blocks - 1)."""
        return int(self.bstate[0])

    @property
    def n_pages(self) -> int:
        """Distinct pages touched so far."""
        return int(self.pstate[0])

    def map(self, chunk: TraceChunk) -> BlockRefs:
        """Dense block ids of the chunk's memory references; advances the index.

        Parameters
        ----------
        chunk : TraceChunk
            The next chunk of the trace.

        Returns
        -------
        BlockRefs
            Valid until the next call.
        """
        hint, self.pc_hint = self.pc_hint, None
        n = len(chunk)
        n_before = self.n_blocks
        if not n:
            return BlockRefs(self._rec[:0], self._off[:1], self._ids[:0], n_before, n_before)
        npc = hint[1] if hint is not None and hint[0] is chunk else pc_capacity(chunk)
        self.lastblk = grow_1d(self.lastblk, npc)
        self.lastid = grow_1d(self.lastid, npc, -1)
        if self._rec.shape[0] < n:
            self._rec = np.zeros(n, np.int64)
            self._off = np.zeros(n + 1, np.int64)
        if self._ids.shape[0] < n:
            self._ids = np.zeros(n, np.int64)
        nrec = int(_mem_records(chunk.op, self._rec))
        rec = self._rec
        pos = np.zeros(2, np.int64)
        while True:
            _map_kernel(chunk.pc, chunk.addr, chunk.size, nrec, pos, rec, self._off, self._ids, self.blocks.cells,
                        self.bstate, self.pages.cells, self.pstate, self.lastblk, self.lastid)
            r = int(pos[0])
            if r >= nrec:
                break
            i = int(rec[r])
            a, s = int(chunk.addr[i]), int(chunk.size[i])
            nb = ((a + s - 1) >> BLOCK_SHIFT) - (a >> BLOCK_SHIFT) + 1
            if pos[1] + nb > self._ids.shape[0]:
                self._ids = grow_1d(self._ids, int(pos[1]) + nb)
            for idx, st, shift in ((self.blocks, self.bstate, BLOCK_SHIFT), (self.pages, self.pstate, PAGE_SHIFT)):
                need = ((a + s - 1) >> shift) - (a >> shift) + 1
                if st[0] + need > st[1]:
                    idx.n = int(st[0])
                    idx.grow(need)
                    st[1] = idx.limit
        k = int(pos[1])
        return BlockRefs(rec[:nrec], self._off[: nrec + 1], self._ids[:k], n_before, self.n_blocks)


class BlockAnalyzer(Analyzer):
    """An analyzer that reads dense block ids (:class:`BlockRefs`) instead of hashing blocks itself.

    On its own it maps chunks with a private :class:`BlockMap`; a :class:`features.engine.FeatureEngine`
    replaces that by the engine's shared map (before anything is consumed) and calls :meth:`consume_refs`
    with the chunk's references, mapped once for all such analyzers.
    """

    uses_blocks = True
    #: True: the analyzer also runs on its own blocks, faster than on a map made for it alone, so the engine
    #: gives it the shared map only when an analyzer that needs the map is fed by it too
    blocks_optional = False

    def __init__(self) -> None:
        super().__init__()
        self.blockmap = BlockMap()

    def consume(self, chunk: TraceChunk) -> None:
        self.consume_refs(chunk, self.blockmap.map(chunk))

    @abc.abstractmethod
    def consume_refs(self, chunk: TraceChunk, refs: BlockRefs) -> None:  # pragma: no cover - interface
        """Feed the next chunk with its memory references already mapped by ``self.blockmap``.

        Parameters
        ----------
        chunk : TraceChunk
        refs : BlockRefs
            ``self.blockmap.map(chunk)``.
        """
