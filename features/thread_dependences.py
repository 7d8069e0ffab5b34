"""The thread space checked on the trace: dependences between the threads of a launch.

The profiler chooses a region's thread space from the source (profiler/threadspace.py) and records it in the
region metadata (``info.extra["thread_space"]``). This analyzer reads the trace and finds what the threads of
each launch actually share. A **launch** is one execution of a kernel loop (the record column ``tid``
numbers its threads from 0; a launch starts at a record with ``tid >= 0`` after one with ``tid = -1``, when
``tid`` goes down, or after the not-taken BRANCH that ends a NumPy operation's element loop, so that an
operation of one element followed at once by another is two launches), so dependences between threads of
different launches (a kernel reading what the previous launch wrote) are never counted: launches are
ordered. Inside one launch, with ``t`` and ``u`` different threads:

* **carried register dependence**: a record of thread ``t`` reads a register last written by thread ``u``
  (the loop variables' own updates, "loop:next" records, do not count: a GPU thread computes them from its
  index; nor do the statements sunk into an imperfect nest, recorded once in the row's first thread: the
  metadata's ``induction_pcs`` names both); when the register is a reduction variable named by the source
  analysis it is a **reduction**;
* **memory**: per byte, a LOAD of ``t`` reads a byte last stored by ``u`` (read after write), a STORE of ``t``
  writes a byte last stored by ``u`` (write after write) or read by another thread (write after read); when
  the record is the load or store of an update ``a[k] op= v`` it is an **atomic** update (a histogram), else
  a carried dependence, except a **same-value race**: the store (each store, for write after write) writes a
  value every thread of the launch computes alike (a constant, or computed from values of the host only,
  not from loads or the loop variable), like a BFS marking a vertex ``level[u] = cur + 1``. GPU ports accept
  such races (every writer stores the same value); they are counted apart and do not make a loop
  sequential;
* **privatised** stores: a store to an array the source analysis privatises (every iteration writes the
  elements it reads before reading them: a per-thread buffer on a GPU, the metadata's ``private_pcs``) has
  no write after write or write after read with another thread: each thread writes its own copy. Such
  stores that meet another thread's access are counted per loop (``privatised`` in the report), not as
  dependences. A load still counts a read after write: a thread that reads what another thread wrote into
  the buffer shows that the privatisation was wrong;
* **lifetimes**: a record at one of the metadata's ``alloc_pcs`` (an allocation record: ``np.empty``'s
  OTHER, whose address and size are the new array's, or a STORE of a NumPy operation's new result) first
  clears the shadow of its bytes ``[addr, addr + size)``: memory allocated inside an iteration is private to
  it whatever address the allocator gives it, so what another thread did with the same bytes before they
  were allocated again is no dependence.

A kernel loop with a carried dependence is **sequential** (its iterations are not independent threads),
else **atomic** or **reduction** when it has those, else **parallel**. Memory is checked with a shadow of 8
bytes per byte touched in a launch, kept per 4 KiB page; pages of earlier launches are reused. Above
:data:`SHADOW_BUDGET_BYTES` of shadow the rest of that launch's memory is not checked, and the report says so.
Register state is one int64 per register token.

Without thread-space metadata (imported and native traces: the loop variables are not known) nothing is
checked: ``ts_checked`` is 0 and ``ts_parallelFraction`` is the share of records with ``tid >= 0``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.trace_schema import Op
from profiler.trace import TraceChunk

from ._base import Analyzer, env_int, grow_1d, ratio

PAGE_SHIFT = 12
PAGE = 1 << PAGE_SHIFT
#: most bytes of memory shadow (two int32 per byte) one region may hold (PORTCAST_SHADOW_MB overrides)
SHADOW_BUDGET_BYTES = 512 << 20

#: dependence kinds (columns of the count tables)
KINDS = ("carried_register", "reduction", "read_after_write", "write_after_read", "write_after_write", "atomic",
         "same_value_race")
CARRIED_KINDS = (0, 2, 3, 4)
N_KINDS = len(KINDS)
#: loop statistics columns after the kind counts
LS_LAUNCHES, LS_THREADS, LS_RECORDS, LS_PRIVATE = N_KINDS, N_KINDS + 1, N_KINDS + 2, N_KINDS + 3
LS_COLS = N_KINDS + 4

# state columns
ST_LAUNCH, ST_LAST_TID, ST_PREV_HOST, ST_LOOP, ST_LREC, ST_LMAX, ST_MEM_OFF, ST_LAST_PAGE, ST_LAST_SLOT, \
    ST_KEYS_USED, ST_SLOTS_USED, ST_TRUNCATED = range(12)
N_STATE = 12

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
_HMUL = np.int64(-7046029254386353131)


def shadow_budget() -> int:
    """Bytes of memory shadow allowed: ``PORTCAST_SHADOW_MB`` MiB when set, else :data:`SHADOW_BUDGET_BYTES`."""
    mb = env_int("PORTCAST_SHADOW_MB")
    return SHADOW_BUDGET_BYTES if mb is None else mb << 20


@njit(cache=True, nogil=True, inline="always")
def _page_find(pkeys, pslot, page):
    """Slot of ``page`` (-1: absent) and the table cell where it is or would go."""
    mask = pkeys.shape[0] - 1
    h = ((page * _HMUL) >> 40) & mask
    while True:
        k = pkeys[h]
        if k == page:
            return pslot[h], h
        if k < 0:
            return -1, h
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def _forget(a0, a1, launch, last_page, last_slot, pkeys, pslot, pepoch, wsh, rsh):
    """Clear the shadow of bytes ``[a0, a1)`` in the pages of the current launch: fresh memory, whatever
    earlier threads did with those bytes was done to another object."""
    pg = a0 >> PAGE_SHIFT
    pg_end = (a1 - 1) >> PAGE_SHIFT
    while pg <= pg_end:
        if pg == last_page:
            slot = last_slot
        else:
            slot, cell = _page_find(pkeys, pslot, pg)
        if slot >= 0 and pepoch[slot] == launch:
            base = pg << PAGE_SHIFT
            lo = max(a0, base) - base
            hi = min(a1, base + PAGE) - base
            wsh[slot, lo:hi] = 0
            rsh[slot, lo:hi] = 0
        pg += 1


@njit(cache=True, nogil=True, inline="always")
def _note(kind, p, loop, t, other, counts, pc_loop, pc_ex, loop_stats):
    if counts[p, kind] == 0:
        pc_ex[p, 2 * kind] = t
        pc_ex[p, 2 * kind + 1] = other
    counts[p, kind] += 1
    if pc_loop[p] < 0:
        pc_loop[p] = loop
    loop_stats[loop + 1, kind] += 1


@njit(cache=True, nogil=True)
def _end_launch(state, loop_stats):
    if state[ST_LAUNCH] > 0:
        row = state[ST_LOOP] + 1
        loop_stats[row, LS_LAUNCHES] += 1
        loop_stats[row, LS_RECORDS] += state[ST_LREC]
        if state[ST_LMAX] + 1 > loop_stats[row, LS_THREADS]:
            loop_stats[row, LS_THREADS] = state[ST_LMAX] + 1


@njit(cache=True, nogil=True, inline="always")
def _open_launch(state, loop_stats, launch, loop, lrec, lmax):
    """Close the launch in progress (its loop, records and largest thread go to ``loop_stats``); returns the
    number of the next."""
    state[ST_LOOP] = loop
    state[ST_LREC] = lrec
    state[ST_LMAX] = lmax
    _end_launch(state, loop_stats)
    launch += 1
    state[ST_LAUNCH] = launch
    return launch


@njit(cache=True, nogil=True, inline="always")
def _no_room(a0, a1, last_page, state, pkeys, pslot, nslots):
    """True when the pages of ``[a0, a1)`` without a shadow slot do not fit the free slots or the page table
    (checked before the record changes any state)."""
    need = 0
    pg = a0 >> PAGE_SHIFT
    pg_end = (a1 - 1) >> PAGE_SHIFT
    while pg <= pg_end:
        if pg != last_page:
            sl, cell = _page_find(pkeys, pslot, pg)
            if sl < 0:
                need += 1
        pg += 1
    return need > 0 and (state[ST_SLOTS_USED] + need > nslots or 2 * (state[ST_KEYS_USED] + need) > pkeys.shape[0])


@njit(cache=True, nogil=True, inline="always")
def _registers(i, p, t, o, src1, src2, src3, dst, is_ind, red_tok, wtag, uni, launch, tag, loop, counts, pc_loop,
               pc_ex, loop_stats):
    """The register stage of record ``i``: a source last written by another thread of the launch is a carried
    dependence (a reduction on a reduction token); the destination takes this thread's tag and whether every
    thread computes the same value."""
    same = o != LOAD and is_ind[p] == 0  # the record computes the same value in every thread
    for q in range(3):
        s = src1[i] if q == 0 else (src2[i] if q == 1 else src3[i])
        if s > 0:
            same = same and uni[s] != 0
            w = wtag[s]
            if w != 0 and (w >> 32) == launch and w != tag:
                kind = 1 if red_tok[s] != 0 else 0
                _note(kind, p, loop, t, (w & 0xFFFFFFFF) - 1, counts, pc_loop, pc_ex, loop_stats)
    d = dst[i]
    if d > 0:
        wtag[d] = 0 if is_ind[p] != 0 else tag
        uni[d] = 1 if same else 0


@njit(cache=True, nogil=True, inline="always")
def _shadow_slot(page, launch, state, pkeys, pslot, pepoch, wsh, rsh):
    """The shadow slot of ``page``: a new one when it has none, cleared when an earlier launch used it."""
    slot, cell = _page_find(pkeys, pslot, page)
    if slot < 0:
        slot = state[ST_SLOTS_USED]
        state[ST_SLOTS_USED] = slot + 1
        state[ST_KEYS_USED] += 1
        pkeys[cell] = page
        pslot[cell] = slot
        pepoch[slot] = -1
    if pepoch[slot] != launch:
        wsh[slot, :] = 0
        rsh[slot, :] = 0
        pepoch[slot] = launch
    return slot


@njit(cache=True, nogil=True, inline="always")
def _load_bytes(wsh, rsh, slot, lo, hi, me, raw, race, other):
    """A LOAD of thread ``me`` over bytes ``lo:hi`` of shadow ``slot``: read after write (a same-value race
    when the writer stored a value every thread stores alike); the bytes are marked read."""
    for x in range(lo, hi):
        w = wsh[slot, x]
        if w != 0 and w != me and w != -me:
            if w < 0:
                race = 1
                other = -w - 1
            else:
                raw = 1
                other = w - 1
        r = rsh[slot, x]
        if r == 0:
            rsh[slot, x] = me
        elif r != me:
            rsh[slot, x] = -1
    return raw, race, other


@njit(cache=True, nogil=True, inline="always")
def _store_bytes(wsh, rsh, slot, lo, hi, me, mine, war, waw, race, other):
    """A STORE of thread ``me`` over bytes ``lo:hi`` of shadow ``slot`` (``mine < 0``: a value every thread
    stores alike): write after write and write after read, or same-value races; the bytes are marked written."""
    for x in range(lo, hi):
        w = wsh[slot, x]
        if w != 0 and w != me and w != -me:
            if w < 0 and mine < 0:
                race = 1
                other = -w - 1
            else:
                waw = 1
                other = (w if w > 0 else -w) - 1
        r = rsh[slot, x]
        if r != 0 and r != me:
            if mine < 0:
                race = 1
            else:
                war = 1
            if r > 0:
                other = r - 1
        wsh[slot, x] = mine
    return war, waw, race, other


@njit(cache=True, nogil=True, inline="always")
def _memory(a0, a1, is_load, me, mine, launch, last_page, last_slot, state, pkeys, pslot, pepoch, wsh, rsh):
    """The memory stage of one access to ``[a0, a1)``, page by page; returns the dependences found (raw, war,
    waw, race flags, the other thread of the last) and the last page used with its slot."""
    raw = 0
    war = 0
    waw = 0
    race = 0
    other = np.int64(-1)
    b = a0
    while b < a1:
        page = b >> PAGE_SHIFT
        if page == last_page:
            slot = last_slot
        else:
            slot = _shadow_slot(page, launch, state, pkeys, pslot, pepoch, wsh, rsh)
            last_page = page
            last_slot = slot
        base = page << PAGE_SHIFT
        end = min(a1, base + PAGE)
        if is_load:
            raw, race, other = _load_bytes(wsh, rsh, slot, b - base, end - base, me, raw, race, other)
        else:
            war, waw, race, other = _store_bytes(wsh, rsh, slot, b - base, end - base, me, mine, war, waw, race,
                                                 other)
        b = end
    return raw, war, waw, race, other, last_page, last_slot


@njit(cache=True, nogil=True, inline="always")
def _note_memory(p, loop, t, private_store, upd, raw, war, waw, race, other, counts, pc_loop, pc_ex, loop_stats):
    """Count what one access met: a store to a private buffer only as ``privatised``, an update's as atomic,
    else each kind found (a same-value race only without another kind)."""
    if private_store:
        if war + waw + race > 0:  # the thread's own copy of a private buffer
            loop_stats[loop + 1, LS_PRIVATE] += 1
        return
    if raw + war + waw + race > 0:
        if upd:
            _note(5, p, loop, t, other, counts, pc_loop, pc_ex, loop_stats)
        else:
            if raw:
                _note(2, p, loop, t, other, counts, pc_loop, pc_ex, loop_stats)
            if war:
                _note(3, p, loop, t, other, counts, pc_loop, pc_ex, loop_stats)
            if waw:
                _note(4, p, loop, t, other, counts, pc_loop, pc_ex, loop_stats)
            if race and raw + war + waw == 0:
                _note(6, p, loop, t, other, counts, pc_loop, pc_ex, loop_stats)


# _nrt=False: the check allocates nothing, and without Numba's reference counting the stages inlined into it do
# not count references to every array they take at every record (that doubled the time of the check)
@njit(cache=True, nogil=True, boundscheck=False, _nrt=False)
def _check(pc, op, src1, src2, src3, dst, addr, size, tid, start, is_ind, is_upd, is_priv, latch_loop, red_tok, wtag,
           uni, sval, is_alloc, state, pkeys, pslot, pepoch, wsh, rsh, counts, pc_loop, pc_ex, loop_stats, taken, ends):
    """Records from ``start``; returns the first one not processed (-1 - i: record i needs a new shadow
    page and every page slot is in use by the current launch). ``ends[pc]``: the BRANCH is the last latch of
    a NumPy operation's launch, which ends when it is not taken.

    Per record, in stages: a host record (``tid < 0``) marks its register a host value; a new launch closes
    the previous one (:func:`_open_launch`); room for the shadow pages (:func:`_no_room`), the registers
    (:func:`_registers`), an allocation's fresh bytes (:func:`_forget`), the memory access (:func:`_memory`,
    counted by :func:`_note_memory`)."""
    n = pc.shape[0]
    launch = state[ST_LAUNCH]
    last_tid = state[ST_LAST_TID]
    prev_host = state[ST_PREV_HOST]
    loop = state[ST_LOOP]
    lrec = state[ST_LREC]
    lmax = state[ST_LMAX]
    mem_off = state[ST_MEM_OFF]
    last_page = state[ST_LAST_PAGE]
    last_slot = state[ST_LAST_SLOT]
    nslots = wsh.shape[0]
    stop = n
    for i in range(start, n):
        t = tid[i]
        p = pc[i]
        if t < 0:
            prev_host = 1
            d = dst[i]
            if d > 0:
                wtag[d] = 0
                uni[d] = 1  # a host value: the same for every thread of the next launch
            continue
        if prev_host != 0 or t < last_tid:
            launch = _open_launch(state, loop_stats, launch, loop, lrec, lmax)
            loop = -1
            lrec = 0
            lmax = -1
            mem_off = 0
            last_page = -1
        prev_host = 0
        last_tid = t
        lmax = max(lmax, t)
        if loop < 0 and latch_loop[p] >= 0:
            loop = latch_loop[p]
        o = op[i]
        a0 = addr[i]
        a1 = a0 + size[i]
        is_mem = (o == LOAD or o == STORE) and mem_off == 0
        # room for the pages this access touches (the record is processed again once the caller made room)
        if is_mem and _no_room(a0, a1, last_page, state, pkeys, pslot, nslots):
            stop = -1 - i
            break
        me = np.int64(t + 1)
        _registers(i, p, t, o, src1, src2, src3, dst, is_ind, red_tok, wtag, uni, launch, (launch << 32) | me, loop,
                   counts, pc_loop, pc_ex, loop_stats)
        if is_alloc[p] != 0 and mem_off == 0 and size[i] > 0:
            # an allocation record: its bytes start a new life (before this record's own access, if any)
            _forget(a0, a1, launch, last_page, last_slot, pkeys, pslot, pepoch, wsh, rsh)
        if is_mem:
            v = sval[p]
            private_store = o == STORE and is_priv[p] != 0
            mine = me
            if o == STORE and not private_store and (v == 0 or (v > 0 and uni[v] != 0)):
                mine = -me  # every thread stores the same value here
            raw, war, waw, race, other, last_page, last_slot = _memory(
                a0, a1, o == LOAD, me, mine, launch, last_page, last_slot, state, pkeys, pslot, pepoch, wsh, rsh)
            _note_memory(p, loop, t, private_store, is_upd[p] != 0, raw, war, waw, race, other, counts, pc_loop,
                         pc_ex, loop_stats)
        lrec += 1
        if ends[p] != 0 and taken[i] == 0:
            prev_host = 1  # the operation's last element: what follows is another launch
    state[ST_LAST_TID] = last_tid
    state[ST_PREV_HOST] = prev_host
    state[ST_LOOP] = loop
    state[ST_LREC] = lrec
    state[ST_LMAX] = lmax
    state[ST_MEM_OFF] = mem_off
    state[ST_LAST_PAGE] = last_page
    state[ST_LAST_SLOT] = last_slot
    return stop


@njit(cache=True, nogil=True)
def _rehash(pkeys, pslot, pepoch, launch, new_keys, new_slot, slot_map):
    """Re-insert the pages of the current launch into ``new_keys``; stale pages (earlier launches) are
    dropped and their slots freed. Returns (keys, slots) used; ``slot_map[old] = new slot`` (-1 dropped)."""
    mask = new_keys.shape[0] - 1
    used = 0
    for h in range(pkeys.shape[0]):
        k = pkeys[h]
        if k < 0:
            continue
        s = pslot[h]
        if pepoch[s] != launch:
            continue
        slot_map[s] = used
        g = ((k * _HMUL) >> 40) & mask
        while new_keys[g] >= 0:
            g = (g + 1) & mask
        new_keys[g] = k
        new_slot[g] = used
        used += 1
    return used


class ThreadSpaceChecker(Analyzer):
    """Dependences between the threads of each launch (see the module docstring)."""

    family = "threadspace"

    def __init__(self) -> None:
        super().__init__()
        self.meta: dict | None = None
        self.is_ind = np.zeros(0, np.uint8)
        self.is_upd = np.zeros(0, np.uint8)
        self.is_priv = np.zeros(0, np.uint8)
        self.latch_loop = np.zeros(0, np.int32)
        self.ends = np.zeros(0, np.uint8)
        self.red_tok = np.zeros(0, np.uint8)
        self.wtag = np.zeros(0, np.int64)
        self.uni = np.zeros(0, np.uint8)
        self.sval = np.zeros(0, np.int32)
        self.is_alloc = np.zeros(0, np.uint8)
        self.state = np.zeros(N_STATE, np.int64)
        self.state[ST_PREV_HOST] = 1
        self.state[ST_LOOP] = -1
        self.state[ST_LMAX] = -1
        self.state[ST_LAST_PAGE] = -1
        self.pkeys = np.full(64, -1, np.int64)
        self.pslot = np.zeros(64, np.int64)
        self.pepoch = np.zeros(0, np.int64)
        self.wsh = np.zeros((0, PAGE), np.int32)
        self.rsh = np.zeros((0, PAGE), np.int32)
        self.counts = np.zeros((0, N_KINDS), np.int64)
        self.pc_loop = np.zeros(0, np.int32)
        self.pc_ex = np.zeros((0, 2 * N_KINDS), np.int64)
        self.n_loops = 0
        self.loop_stats = np.zeros((1, LS_COLS), np.int64)
        self.n_par = 0
        self.budget = shadow_budget()
        self.truncated_launches = 0
        self._finished = None

    def configure(self, meta: dict | None) -> None:
        """Take the region's ``thread_space`` metadata (before the first chunk)."""
        if meta is None or not isinstance(meta, dict):
            self.meta = None
            return
        self.meta = meta
        loops = list(meta.get("loops") or []) + list(meta.get("library") or [])
        self.n_loops = len(loops)
        self.loop_stats = np.zeros((self.n_loops + 1, LS_COLS), np.int64)
        top = 0
        for k in ("induction_pcs", "update_pcs", "private_pcs", "alloc_pcs"):
            top = max([top] + [int(p) for p in meta.get(k) or []])
        latch = {int(p): int(loop["id"]) for loop in loops
                 for p in (loop.get("latch_pcs") or [loop.get("latch_pc") or 0]) if int(p) > 0}
        top = max([top] + list(latch))
        self._grow_pcs(top + 1)
        for p in meta.get("induction_pcs") or []:
            self.is_ind[int(p)] = 1
        for p in meta.get("update_pcs") or []:
            self.is_upd[int(p)] = 1
        for p in meta.get("private_pcs") or []:
            self.is_priv[int(p)] = 1
        for p in meta.get("alloc_pcs") or []:
            self.is_alloc[int(p)] = 1
        vals = {int(p): int(v) for p, v in (meta.get("store_values") or {}).items()}
        self._grow_pcs(max(vals, default=0) + 1)
        for p, v in vals.items():
            self.sval[p] = v
        for p, k in latch.items():
            self.latch_loop[p] = k
        for loop in meta.get("library") or []:
            if loop.get("latch_pcs"):
                self.ends[int(loop["latch_pcs"][-1])] = 1
        toks = [int(t) for t in (meta.get("reduction_tokens") or {})]
        self._grow_tokens(max(toks + list(vals.values()), default=0) + 1)
        for t in toks:
            self.red_tok[t] = 1

    def _grow_pcs(self, n: int) -> None:
        self.is_ind = grow_1d(self.is_ind, n)
        self.is_upd = grow_1d(self.is_upd, n)
        self.is_priv = grow_1d(self.is_priv, n)
        self.latch_loop = grow_1d(self.latch_loop, n, -1)
        self.ends = grow_1d(self.ends, n)
        self.counts = grow_1d(self.counts, n)
        self.pc_loop = grow_1d(self.pc_loop, n, -1)
        self.pc_ex = grow_1d(self.pc_ex, n)
        self.sval = grow_1d(self.sval, n, -1)
        self.is_alloc = grow_1d(self.is_alloc, n)

    def _grow_tokens(self, n: int) -> None:
        self.red_tok = grow_1d(self.red_tok, n)
        self.wtag = grow_1d(self.wtag, n)
        self.uni = grow_1d(self.uni, n)

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        self.n += n
        tid = chunk.tid
        if self.meta is None:
            self.n_par += int(np.count_nonzero(tid >= 0))
            return
        self._grow_pcs(self.pc_capacity(chunk))
        top = max(int(chunk.src1.max()), int(chunk.src2.max()), int(chunk.src3.max()), int(chunk.dst.max()))
        self._grow_tokens(top + 1)
        i = 0
        while True:
            r = _check(chunk.pc, chunk.op, chunk.src1, chunk.src2, chunk.src3, chunk.dst, chunk.addr, chunk.size,
                       tid, i, self.is_ind, self.is_upd, self.is_priv, self.latch_loop, self.red_tok, self.wtag,
                       self.uni, self.sval, self.is_alloc, self.state,
                       self.pkeys, self.pslot, self.pepoch, self.wsh, self.rsh, self.counts, self.pc_loop,
                       self.pc_ex, self.loop_stats, chunk.taken, self.ends)
            if r >= 0:
                break
            i = -1 - r
            self._make_room()

    def _make_room(self) -> None:
        """Room for one more shadow page: drop pages of earlier launches, grow the tables within the budget,
        or stop checking memory for the rest of this launch."""
        st = self.state
        launch = int(st[ST_LAUNCH])
        used_slots = int(st[ST_SLOTS_USED])
        live = int(np.count_nonzero(self.pepoch[:used_slots] == launch)) if used_slots else 0
        slots = self.wsh.shape[0]
        page_bytes = 2 * 4 * PAGE
        if live + 1 > slots:  # every slot belongs to this launch: grow the shadow
            want = max(16, 2 * slots)
            want = min(want, self.budget // page_bytes)
            if want <= slots:
                st[ST_MEM_OFF] = 1
                self.truncated_launches += 1
                return
            self.wsh = grow_1d(self.wsh, want)
            self.rsh = grow_1d(self.rsh, want)
            self.pepoch = grow_1d(self.pepoch, want, -1)
        cap = self.pkeys.shape[0]
        while 2 * (live + 1) > cap:
            cap *= 2
        new_keys = np.full(cap, -1, np.int64)
        new_slot = np.zeros(cap, np.int64)
        slot_map = np.full(max(used_slots, 1), -1, np.int64)
        used = _rehash(self.pkeys, self.pslot, self.pepoch, launch, new_keys, new_slot, slot_map)
        keep = np.flatnonzero(slot_map[:used_slots] >= 0)
        if keep.size:
            order = np.argsort(slot_map[keep])
            src = keep[order]
            self.wsh[:used] = self.wsh[src]
            self.rsh[:used] = self.rsh[src]
            self.pepoch[:used] = self.pepoch[src]
        self.pepoch[used:] = -1
        self.pkeys, self.pslot = new_keys, new_slot
        st[ST_KEYS_USED] = used
        st[ST_SLOTS_USED] = used
        st[ST_LAST_PAGE] = -1

    def _final_stats(self) -> np.ndarray:
        """Loop statistics with the launch still open counted (the state is not changed)."""
        stats = self.loop_stats.copy()
        st = self.state.copy()
        _end_launch(st, stats)
        return stats

    def loop_verdicts(self) -> list[str]:
        """Verdict per kernel loop of the metadata: parallel, reduction, atomic, sequential, or not run."""
        stats = self._final_stats()
        out = []
        for k in range(self.n_loops):
            out.append(_verdict(stats[k + 1]))
        return out

    def result(self) -> dict[str, float]:
        if self.meta is None:
            return {"ts_checked": 0.0, "ts_kernels": 0.0, "ts_carriedDeps": 0.0, "ts_reductionDeps": 0.0,
                    "ts_atomicDeps": 0.0, "ts_sameValueRaces": 0.0, "ts_parallelFraction": ratio(self.n_par, self.n)}
        stats = self._final_stats()
        kinds = stats[:, :N_KINDS].sum(axis=0)
        par_records = 0
        for row in stats:
            if row[LS_LAUNCHES] and _verdict(row) != "sequential":
                par_records += int(row[LS_RECORDS])
        return {
            "ts_checked": 1.0,
            "ts_kernels": float(np.count_nonzero(stats[1:, LS_LAUNCHES])),
            "ts_carriedDeps": float(sum(int(kinds[k]) for k in CARRIED_KINDS)),
            "ts_reductionDeps": float(kinds[1]),
            "ts_atomicDeps": float(kinds[5]),
            "ts_sameValueRaces": float(kinds[6]),
            "ts_parallelFraction": ratio(par_records, self.n),
        }

    def report(self, static=None, examples: int = 3) -> dict:
        """What was found, per kernel loop: launches, threads (largest launch), records, dependence counts by
        kind, ``privatised`` (stores to private buffers that met another thread's access), verdict, and the
        source lines of the first ``examples`` dependences (file:line, text, kind, count, one pair of threads).
        Loop ``-1`` collects launches no kernel loop's metadata names."""
        if self.meta is None:
            return {"checked": False, "loops": []}
        stats = self._final_stats()
        loops = []
        ids = list(range(self.n_loops)) + ([-1] if stats[0, LS_LAUNCHES] or stats[0, :N_KINDS].any() else [])
        for k in ids:
            row = stats[k + 1]
            ex = []
            pcs = np.flatnonzero((self.pc_loop == k) & (self.counts.sum(axis=1) > 0))
            items = []
            for p in pcs:
                for kind in range(N_KINDS):
                    c = int(self.counts[p, kind])
                    if c:
                        items.append((-c, int(p), kind))
            for negc, p, kind in sorted(items)[:examples]:
                entry = static.get(p) if static is not None else None
                ex.append({"kind": KINDS[kind], "pc": p, "count": -negc,
                           "location": f"{entry.file}:{entry.line}" if entry else f"pc {p}",
                           "text": entry.text if entry else "",
                           "threads": [int(self.pc_ex[p, 2 * kind]), int(self.pc_ex[p, 2 * kind + 1])]})
            loops.append({"id": k, "launches": int(row[LS_LAUNCHES]), "threads": int(row[LS_THREADS]),
                          "records": int(row[LS_RECORDS]), "privatised": int(row[LS_PRIVATE]),
                          "counts": {KINDS[j]: int(row[j]) for j in range(N_KINDS)},
                          "verdict": _verdict(row) if row[LS_LAUNCHES] else "not run", "examples": ex})
        return {"checked": True, "loops": loops, "memory_unchecked_launches": self.truncated_launches}


def _verdict(row) -> str:
    if any(row[k] for k in CARRIED_KINDS):
        return "sequential"
    if row[5]:
        return "atomic"
    if row[1]:
        return "reduction"
    return "parallel"


def join_report(meta: dict | None, found: dict | None) -> dict | None:
    """One description of a region's thread space: each kernel loop of the source analysis (``meta``, the
    region's ``thread_space`` metadata; of its ``library`` sites, those that launched) with what the check on
    the trace found for it (``found``,
    :meth:`ThreadSpaceChecker.report`): launches, threads, records, dependence counts, examples, and the
    ``verdict`` (from the trace when it was checked, else the source analysis's). None without metadata."""
    if meta is None:
        return None
    by_id = {loop["id"]: loop for loop in (found or {}).get("loops", [])}
    loops = []
    launched_library = [lp for lp in meta.get("library", []) if (by_id.get(lp["id"]) or {}).get("launches")]
    for loop in list(meta.get("loops", [])) + launched_library:
        row = dict(loop)
        dyn = by_id.get(loop["id"])
        if dyn is not None:
            row.update({k: dyn[k] for k in ("launches", "threads", "records", "privatised", "counts", "examples")})
            row["verdict"] = dyn["verdict"]
            if row["verdict"] == "reduction" and loop.get("static") == "atomic":
                row["verdict"] = "atomic"  # an append counter's register updates, or atomics that never collided
        else:
            row.update({"launches": None, "threads": None, "records": None, "privatised": None, "counts": {},
                        "examples": []})
            row["verdict"] = {"independent": "parallel"}.get(loop.get("static"), loop.get("static"))
        loops.append(row)
    if -1 in by_id:
        dyn = by_id[-1]
        loops.append({"id": -1, "how": "unknown", "function": "", "location": "", "header": "(launches no kernel "
                      "loop of the metadata names)", "dims": 1, "static": "", "reductions": [], "atomics": [],
                      "reasons": [], "private": [],
                      **{k: dyn[k] for k in ("launches", "threads", "records", "privatised", "counts", "examples")},
                      "verdict": dyn["verdict"]})
    how = meta.get("how", "none")
    if how == "none" and launched_library:
        how = "library"
    return {"how": how, "loops": loops, "rejected": meta.get("rejected", []),
            "notes": meta.get("notes", []), "checked": bool(found and found.get("checked")),
            "memory_unchecked_launches": int((found or {}).get("memory_unchecked_launches", 0))}
