"""ILP's memory dependences on exact bytes: the ready times of stored bytes, for the generated passes of
``features/fast/ilp_unrolled.py`` (``features/ilp.py``, ``_MemTable``, owns the arrays and their life cycle).

A LOAD of bytes [a, e) waits for the largest ready time of those bytes; a STORE makes each byte it writes
ready at t + 1 (docs/features.md, "ILP"). The bytes are kept in three levels, so that the common access,
an aligned 8-byte element, costs one lookup and one row, as a 64-byte block did before:

- blocks (64 bytes, ``addr >> 6``) that hold a stored byte that may still delay an instruction get a slot
  s >= 1, handed out in order (``state[0]`` used of ``state[1]``); slot 0 stands for a block never stored
  (or dropped), whose rows stay 0. ``K[s]`` is the block's key (its number, or the engine's block id),
  ``M[s]`` its ``meta``: its byte-row group g (``meta >> 8``) and a bit k (``meta & 255``) for each of its
  words that has byte rows in that group. A block is found through ILP's own hash table (``cells``: key
  and slot side by side, Fibonacci hashing, linear probing) or, when the engine feeds ILP its block ids,
  through ``brow[id]``;
- words (8 bytes, ``addr >> 3``): word k of the block in slot s has the row ``W[8 s + k]`` with, for every
  window (lane), the largest ready time of its 8 bytes;
- bytes: a word whose bytes may differ (written in part: a 4- or 1-byte element, a misaligned access)
  also has, in its block's group g >= 1, the rows ``Y[64 g + 8 k + j]`` with the times of its byte j.
  Groups are handed out in order (``state[2]`` used of ``state[3]``).

A STORE of a whole word writes its row (and drops its byte rows); a STORE of part of a word first spreads
the word's time over its byte rows (when it has none yet), writes its bytes and sets the word row to the
maximum of the eight. A LOAD reads the row of every word it covers whole or that has no byte rows, else
the byte rows it covers. New blocks take the next slots, so a stream of stores writes rows in order. When
the slots or groups run out, the Python side drops the blocks whose times can no longer delay anything
and renumbers the others (``compact``).

The passes write these steps out in their loop (``features/fast/gen_ilp.py``) and call only the small helpers
below (which LLVM inlines): Numba's ``inline="always"`` of a function with a loop over arrays left
reference-counting calls in the pass's loop, and an ordinary call of the store steps, with its dozens of
array arguments, cost more than the work itself (both measured, both several times slower).
"""

import numpy as np
from numba import njit

from .i32x8 import HASH_MUL, lane_events, uget, uset, vload, vmax, vprefetch, vsplat, vstore
from .prefetch import prefetch

#: log2 of the bytes of a word
WORD_SHIFT = 3
WORD = 1 << WORD_SHIFT
#: log2 of the bytes of a block
BLOCK_SHIFT = 6
#: log2 of the words of a block
WPB_SHIFT = BLOCK_SHIFT - WORD_SHIFT
WPB = 1 << WPB_SHIFT
#: byte rows of a group (every byte of a block)
GROUP_ROWS = WPB * WORD
#: byte-row groups a STORE may need at most (only its first and last words may be written in part)
GROUPS_PER_STORE = 2
#: the key of an empty cell of the hash table (no block number: blocks are addresses >> 6)
EMPTY = np.int64(-(1 << 63))
#: how far ahead the passes prefetch: the hash cell of the LOAD/STORE this many records ahead (the slot
#: number of the block of the memory reference this many references ahead, when fed block ids), and the
#: word row of the one HALF_AHEAD ahead
PREFETCH_AHEAD = 16
HALF_AHEAD = PREFETCH_AHEAD // 2


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def home_cell(key, mask, shift):
    """The first cell probed for block ``key`` (Fibonacci hashing)."""
    return ((key * HASH_MUL) >> shift) & mask


@njit(cache=True, nogil=True, boundscheck=False)
def find_slot(cells, mask, shift, key):
    """Slot of block ``key`` in the hash table, 0 when absent."""
    h = home_cell(key, mask, shift)
    while True:
        k = uget(cells, 2 * h)
        if k == key:
            return uget(cells, 2 * h + 1)
        if k == EMPTY:
            return 0
        h = (h + 1) & mask


@njit(cache=True, nogil=True, boundscheck=False)
def insert_slot(cells, mask, shift, key, new_slot):
    """Slot of block ``key``, inserted with ``new_slot`` when absent. Returns (slot, inserted)."""
    h = home_cell(key, mask, shift)
    while True:
        k = uget(cells, 2 * h)
        if k == key:
            return uget(cells, 2 * h + 1), False
        if k == EMPTY:
            uset(cells, 2 * h, key)
            uset(cells, 2 * h + 1, new_slot)
            return new_slot, True
        h = (h + 1) & mask


@njit(cache=True, nogil=True, boundscheck=False)
def bytes_ready(t, lo, hi, w, y, Y):
    """``t`` raised to the ready times of the bytes of word ``w`` in [lo, hi), whose byte rows start at
    ``Y[y]`` (the rare path of a LOAD: part of a word whose bytes differ)."""
    wa = w << WORD_SHIFT
    for j in range(lo - wa if lo > wa else 0, hi - wa if hi - wa < WORD else WORD):
        t = vmax(t, vload(Y, y + j))
    return t


@njit(cache=True, nogil=True, boundscheck=False)
def new_block(s, key, W, M, K):
    """Slot ``s`` starts holding block ``key``: no byte stored yet. The rows of slot s + 1, the next new
    block's, are prefetched: slots are reused after a compaction, and their rows have left the cache since."""
    zero = vsplat(0)
    for k in range(WPB):
        vstore(W, (s << WPB_SHIFT) + k, zero)
    uset(M, s, 0)
    uset(K, s, key)
    for k in range(0, WPB, 2):  # two rows per cache line
        vprefetch(W, ((s + 1) << WPB_SHIFT) + k)


# ---------------------------------------------------------------- blocks through ILP's own hash table


@njit(cache=True, nogil=True, boundscheck=False)
def prefetch_cell(a, cells, mask, shift):
    """Prefetch the home cell of the block of byte ``a`` (an access some records ahead)."""
    prefetch(cells, 2 * home_cell(a >> BLOCK_SHIFT, mask, shift))


@njit(cache=True, nogil=True, boundscheck=False)
def prefetch_word(a, cells, mask, shift, W):
    """Prefetch the word row of byte ``a`` (an access whose cell was prefetched before)."""
    s = find_slot(cells, mask, shift, a >> BLOCK_SHIFT)
    vprefetch(W, (s << WPB_SHIFT) + ((a >> WORD_SHIFT) & (WPB - 1)))


# ---------------------------------------------------------------- blocks as the engine's dense ids


@njit(cache=True, nogil=True, boundscheck=False)
def prefetch_word_refs(bid, a, brow, W):
    """Prefetch the word row of byte ``a`` in block id ``bid`` (whose ``brow`` entry was prefetched before)."""
    vprefetch(W, (uget(brow, bid) << WPB_SHIFT) + ((a >> WORD_SHIFT) & (WPB - 1)))


# ---------------------------------------------------------------- compaction (Python side)


@njit(cache=True, nogil=True, boundscheck=False)
def compact(W, M, K, Y, n, st, lanes, nY, brow, refs):
    """Keep the blocks of slots 1..``n`` that hold a time that can still delay something (above the clock,
    row 0 of ``st``, in a lane of the bit mask ``lanes``), renumbered 1, 2, ... in slot order in place; their
    byte rows move to ``nY`` (groups renumbered in order; a block whose words all lost their byte rows drops
    its group). When ``refs``, ``brow`` follows (0 for a dropped block). Returns (blocks kept, groups kept)."""
    c = vload(st, 0)
    j = 0
    gn = 0
    for s in range(1, n + 1):
        m = vload(W, s << WPB_SHIFT)
        for q in range(1, WPB):
            m = vmax(m, vload(W, (s << WPB_SHIFT) + q))
        if (lane_events(m, c, c, m) & lanes) == 0:
            if refs:
                brow[K[s]] = 0
            continue
        j += 1
        if j != s:
            for q in range(WPB):
                vstore(W, (j << WPB_SHIFT) + q, vload(W, (s << WPB_SHIFT) + q))
            K[j] = K[s]
        meta = M[s]
        if meta & 255:
            gn += 1
            src = (meta >> 8) * GROUP_ROWS
            dst = gn * GROUP_ROWS
            for r in range(GROUP_ROWS):
                vstore(nY, dst + r, vload(Y, src + r))
            M[j] = (gn << 8) | (meta & 255)
        else:
            M[j] = 0
        if refs:
            brow[K[j]] = j
    return j, gn


@njit(cache=True, nogil=True, boundscheck=False)
def rehash(cells, shift, K, n):
    """Fill the empty table ``cells`` with the blocks of slots 1..``n`` (keys ``K``)."""
    mask = cells.shape[0] // 2 - 1
    for s in range(1, n + 1):
        insert_slot(cells, mask, shift, K[s], s)
