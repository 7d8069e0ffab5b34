"""ILP's memory dependences on exact bytes: the ready times of stored bytes, for the generated passes of
``features/_ilp_unrolled.py`` (``features/ilp.py``, ``_MemTable``, owns the arrays and their life cycle).

A LOAD of bytes [a, e) waits for the largest ready time of those bytes; a STORE makes each byte it writes
ready at t + 1 (docs/features.md, "ILP"). The bytes are kept in three levels, so that the common access,
an aligned 8-byte element, costs one hash probe and one row, as a 64-byte block did before:

- blocks (64 bytes, ``addr >> 6``): an open-addressing table of ``cap`` cells (Fibonacci hashing, linear
  probing) of the blocks that hold a stored byte that may still delay an instruction. Cell h is
  ``cells[2h]`` = the block (:data:`EMPTY`: none) and ``cells[2h + 1]`` = ``meta``: the block's byte-row
  group g (``meta >> 8``) and a bit k (``meta & 255``) for each of its words that has byte rows in that
  group. Cell ``cap`` is a sentinel that stays empty: a block not in the table is found there, and reads
  as never stored;
- words (8 bytes, ``addr >> 3``): word k of the block in cell h has the row ``W[8 h + k]`` with, for every
  window (lane), the largest ready time of its 8 bytes;
- bytes: a word whose bytes may differ (written in part: a 4- or 1-byte element, a misaligned access)
  also has, in its block's group g >= 1, the rows ``Y[64 g + 8 k + j]`` with the times of its byte j.
  Groups are handed out in order (``state[2]`` used of ``state[3]``) and reclaimed when the table is
  compacted.

The rows of a block live in its cell, so the cell and the row an access will need can be prefetched from
its address alone, a few records ahead (``prefetch_access``), without probing the table. A STORE of a
whole word writes its row (and drops its byte rows); a STORE of part of a word first spreads the word's
time over its byte rows (when it has none yet), writes its bytes and sets the word row to the maximum of
the eight. A LOAD reads the row of every word it covers whole or that has no byte rows, else the byte rows
it covers. The Python side sizes the arrays and drops dead blocks (``compact``).
"""

import numpy as np
from numba import njit

from ._i32x8 import HASH_MUL, lane_events, uget, uset, vload, vmax, vprefetch, vsplat, vstore
from ._prefetch import prefetch

#: log2 of the bytes of a word
WORD_SHIFT = 3
WORD = 1 << WORD_SHIFT
#: log2 of the bytes of a block (the key of the table)
BLOCK_SHIFT = 6
#: log2 of the words of a block
WPB_SHIFT = BLOCK_SHIFT - WORD_SHIFT
WPB = 1 << WPB_SHIFT
#: byte rows of a group (every byte of a block)
GROUP_ROWS = WPB * WORD
#: byte-row groups a STORE may need at most (only its first and last words may be written in part)
GROUPS_PER_STORE = 2
#: the key of an empty cell (no block number: blocks are addresses >> 6)
EMPTY = np.int64(-(1 << 63))
#: records ahead whose cell and row the passes prefetch
PREFETCH_AHEAD = 8


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def home_cell(key, mask, shift):
    """The first cell probed for block ``key`` (Fibonacci hashing)."""
    return ((key * HASH_MUL) >> shift) & mask


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def find_cell(cells, mask, shift, key):
    """Cell of block ``key``, or the sentinel cell ``mask + 1`` when absent."""
    h = home_cell(key, mask, shift)
    while True:
        k = uget(cells, 2 * h)
        if k == key:
            return h
        if k == EMPTY:
            return mask + 1
        h = (h + 1) & mask


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def insert_cell(cells, mask, shift, key):
    """Cell of block ``key``, claimed (with no byte rows) when absent. Returns (cell, claimed)."""
    h = home_cell(key, mask, shift)
    while True:
        k = uget(cells, 2 * h)
        if k == key:
            return h, False
        if k == EMPTY:
            uset(cells, 2 * h, key)
            uset(cells, 2 * h + 1, 0)
            return h, True
        h = (h + 1) & mask


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def prefetch_access(a, cells, mask, shift, W):
    """Prefetch the home cell of the block of byte ``a`` and the row its word would have there."""
    h = home_cell(a >> BLOCK_SHIFT, mask, shift)
    prefetch(cells, 2 * h)
    vprefetch(W, (h << WPB_SHIFT) + ((a >> WORD_SHIFT) & (WPB - 1)))


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def mem_ready(t, a, e, cells, mask, shift, W, Y):
    """``t`` raised to the ready times of the bytes [a, e) (``e > a``), lane by lane."""
    w = a >> WORD_SHIFT
    last = (e - 1) >> WORD_SHIFT
    if w == last:  # within one word (the common case)
        h = find_cell(cells, mask, shift, w >> WPB_SHIFT)
        k = w & (WPB - 1)
        meta = uget(cells, 2 * h + 1)
        if (meta >> k) & 1 == 0 or e - a == WORD:
            return vmax(t, vload(W, (h << WPB_SHIFT) + k))
        y = (meta >> 8) * GROUP_ROWS + (k << WORD_SHIFT) - (w << WORD_SHIFT)
        for j in range(a, e):
            t = vmax(t, vload(Y, y + j))
        return t
    blk = -1
    base = 0
    meta = 0
    while True:
        if (w >> WPB_SHIFT) != blk:
            blk = w >> WPB_SHIFT
            h = find_cell(cells, mask, shift, blk)
            base = h << WPB_SHIFT
            meta = uget(cells, 2 * h + 1)
        k = w & (WPB - 1)
        if (meta >> k) & 1 == 0:
            t = vmax(t, vload(W, base + k))
        else:
            wa = w << WORD_SHIFT
            lo = a - wa if a > wa else 0
            hi = e - wa if e - wa < WORD else WORD
            if hi - lo == WORD:
                t = vmax(t, vload(W, base + k))
            else:
                y = (meta >> 8) * GROUP_ROWS + (k << WORD_SHIFT)
                for j in range(lo, hi):
                    t = vmax(t, vload(Y, y + j))
        if w >= last:
            return t
        w += 1


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def mem_store(t1, a, e, cells, mask, shift, n, W, Y, g_used):
    """Bytes [a, e) (``e > a``) become ready at ``t1`` (lane by lane). ``n``: blocks in the table, ``g_used``:
    byte-row groups handed out; returns both, updated. The caller makes sure there is room for every block
    of the range and for :data:`GROUPS_PER_STORE` more groups."""
    w = a >> WORD_SHIFT
    last = (e - 1) >> WORD_SHIFT
    blk = -1
    h = 0
    base = 0
    while True:
        if (w >> WPB_SHIFT) != blk:
            blk = w >> WPB_SHIFT
            h, new = insert_cell(cells, mask, shift, blk)
            base = h << WPB_SHIFT
            if new:
                n += 1
                zero = vsplat(0)
                for k in range(WPB):
                    vstore(W, base + k, zero)
        k = w & (WPB - 1)
        wa = w << WORD_SHIFT
        lo = a - wa if a > wa else 0
        hi = e - wa if e - wa < WORD else WORD
        meta = uget(cells, 2 * h + 1)
        if hi - lo == WORD:
            vstore(W, base + k, t1)
            if (meta >> k) & 1:
                uset(cells, 2 * h + 1, meta & ~(1 << k))
        else:
            if (meta >> k) & 1 == 0:  # the word's bytes get rows of their own, all at the word's time so far
                if meta >> 8 == 0:
                    g_used += 1
                    meta = g_used << 8
                meta |= 1 << k
                uset(cells, 2 * h + 1, meta)
                old = vload(W, base + k)
                y = (meta >> 8) * GROUP_ROWS + (k << WORD_SHIFT)
                for j in range(WORD):
                    vstore(Y, y + j, old)
            y = (meta >> 8) * GROUP_ROWS + (k << WORD_SHIFT)
            for j in range(lo, hi):
                vstore(Y, y + j, t1)
            m = vload(Y, y)
            for j in range(1, WORD):
                m = vmax(m, vload(Y, y + j))
            vstore(W, base + k, m)
        if w >= last:
            return n, g_used
        w += 1


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _live(W, base, c, lanes):
    """True when a row of the block at ``base`` has a time above the clock ``c`` in a lane of ``lanes``."""
    m = vload(W, base)
    for r in range(base + 1, base + WPB):
        m = vmax(m, vload(W, r))
    return (lane_events(m, c, c, m) & lanes) != 0


@njit(cache=True, nogil=True, boundscheck=False)
def compact(cells, W, Y, st, lanes, ncells, nshift, nW, nY, gcap):
    """Move the blocks that hold a time that can still delay something (above the clock, row 0 of ``st``, in
    a lane of the bit mask ``lanes``) into the new, empty table ``ncells`` (shift ``nshift``) with rows
    ``nW`` and byte rows ``nY`` (``gcap`` groups), groups renumbered in order; a block whose words all lost
    their byte rows drops its group. Stops moving when the new table would pass half full or the groups
    their limit, but counts on. Returns (live blocks, their groups, all moved)."""
    c = vload(st, 0)
    nmask = ncells.shape[0] // 2 - 2
    limit = (nmask + 1) // 2
    n = 0
    gn = 0
    ok = True
    for h in range(cells.shape[0] // 2 - 1):
        key = cells[2 * h]
        if key == EMPTY or not _live(W, h << WPB_SHIFT, c, lanes):
            continue
        meta = cells[2 * h + 1]
        n += 1
        if meta & 255:
            gn += 1
        if n > limit or gn > gcap:
            ok = False
        if not ok:
            continue
        nh, _ = insert_cell(ncells, nmask, nshift, key)
        for q in range(WPB):
            vstore(nW, (nh << WPB_SHIFT) + q, vload(W, (h << WPB_SHIFT) + q))
        if meta & 255:
            src = (meta >> 8) * GROUP_ROWS
            dst = gn * GROUP_ROWS
            for r in range(GROUP_ROWS):
                vstore(nY, dst + r, vload(Y, src + r))
            ncells[2 * nh + 1] = (gn << 8) | (meta & 255)
    return n, gn, ok


@njit(cache=True, nogil=True, boundscheck=False)
def rebase(cells, W, Y, base):
    """``max(time - base[k], 0)`` for every row of the blocks in the table and of their byte rows."""
    for h in range(cells.shape[0] // 2 - 1):
        if cells[2 * h] == EMPTY:
            continue
        for r in range(h << WPB_SHIFT, (h + 1) << WPB_SHIFT):
            for k in range(W.shape[1]):
                W[r, k] = max(W[r, k] - base[k], 0)
        meta = cells[2 * h + 1]
        if meta & 255:
            y = (meta >> 8) * GROUP_ROWS
            for r in range(y, y + GROUP_ROWS):
                for k in range(Y.shape[1]):
                    Y[r, k] = max(Y[r, k] - base[k], 0)
