"""Warp-level views: the warps a GPU port would run, rebuilt from the threads' own record streams.

Definitions: docs/features.md, "Warp-level views". In short: records with ``tid >= 0`` are GPU threads; the
region's thread space may run several times (*launches*: a launch starts at the first record with
``tid >= 0``, after a record with ``tid < 0``, and wherever the tid falls below the latest earlier one);
inside a launch, warp w holds the threads with ``tid // 32 == w``, and a *warp instance* is a maximal run of
consecutive records of one launch whose tids lie in one warp. Each instance runs in lockstep by the
minimum-PC rule (the same rule as the SIMT model, gpu_models/simt/threads.py): at each step the warp issues
the smallest layout position among the next records of its unfinished lanes, and every lane whose next record
has that position is active and consumes it. A record's layout position is its static id, except a loop's
control records where they close an iteration, which sit at the end of the loop's body (features/layout.py;
only traces whose static table has a loop table have such records). From those warp instructions:

* coalescing: per warp memory instruction, the distinct 32-byte sectors its active lanes' bytes touch
  (actual) against ceil(distinct bytes / 32) (ideal); ``warp_coalescing`` = sum ideal / sum actual, in (0, 1];
* ``warp_bdiv``: warp branches whose active lanes disagree on the outcome / warp branches;
* ``warp_simdEfficiency``: mean over warp instructions of active lanes / threads of the instance;
* ``warp_threads`` (distinct tids >= 0), ``warp_launches``, ``warp_parallelFraction``, and
  ``warp_arithIntensity`` (FP operations / bytes loaded and stored, both inside the thread space).

Per static id it also counts the divergent warp branches and the sectors beyond the ideal
(:meth:`WarpAnalyzer.contributions`: the explanation table's ``warp_bdiv`` and ``warp_coalescing`` rows, the
lines ``portcast profile`` names as weak spots).

**Streaming.** Inside one launch the tids never decrease (a decrease starts a new launch), so the records of
a warp instance arrive lane after lane, each lane's records contiguous. The analyzer buffers the open
instance only: per record its layout position with three flag bits (``position << 3 | memory << 2 |
branch << 1 | taken``, an int32: positions are below 2^25), and per memory record its address and size, plus
where each lane starts. A record's position depends on its lane's earlier records only:
:class:`features.layout.Walker` walks each chunk before it is scanned, its state carried to the next chunk.
When the instance ends (in this chunk or a later one) it is replayed in lockstep and dropped.
The buffers grow geometrically; past :data:`SPILL_BYTES` they move to unlinked temporary files mapped with
``np.memmap`` (a region of a few very long threads makes one instance as long as the trace), and back to
memory once the instance they held has ended and closed files are deleted by the system.
"""

from __future__ import annotations

import tempfile

import numpy as np
from numba import njit

from core.trace_schema import Op, TraceError
from profiler.trace import StaticTable, TraceChunk

from ._base import Analyzer, grow_1d, ratio
from .layout import Layout

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)
BRANCH = np.uint8(Op.BRANCH)
FP_ALU = np.uint8(Op.FP_ALU)
FP_SPECIAL = np.uint8(Op.FP_SPECIAL)
FP64_ALU = np.uint8(Op.FP64_ALU)  # FP64_ALU..FP64_SPECIAL are the last classes
WARP = 32
SECTOR_SHIFT = 5  # 32-byte sectors
MAX_TID = 1 << 36

#: Bytes of instance buffer kept in memory; a longer warp instance is buffered in temporary files instead.
SPILL_BYTES = 256 << 20
#: Initial capacity (records) of the instance buffers.
INITIAL_RECORDS = 1024

_DONE = np.int32(0x7FFFFFFF)  # head of a finished lane: above every buffered record (positions < 2^25)
# flag bits of a buffered record, below the layout position
F_TAKEN = 1
F_BRANCH = 2
F_MEM = 4
FLAG_BITS = 3

# state: open instance and launch bookkeeping
S_NREC, S_NMEM, S_LANES, S_WARP, S_LATEST, S_OUTSIDE = range(6)
N_STATE = 6
# totals
(T_INSTR, T_MEM, T_SECTORS, T_IDEAL, T_BRANCHES, T_DIVERGENT, T_ACTIVE, T_INSTANCES, T_LAUNCHES, T_PAR, T_FP,
 T_BYTES) = range(12)
N_TOTALS = 12
#: columns of the per-static-id counts (``WarpAnalyzer.contributions``)
PC_DIVERGENT, PC_EXCESS = 0, 1
TOTAL_NAMES = ("warp_instructions", "memory_instructions", "sectors", "ideal_sectors", "branches",
               "divergent_branches", "active_lanes", "instances", "launches", "parallel_records", "fp_ops", "bytes")


@njit(cache=True, nogil=True, boundscheck=False)
def _ascending(x, m):
    ok = True
    for r in range(1, m):
        ok &= x[r] >= x[r - 1]
    return ok


@njit(cache=True, nogil=True, boundscheck=False)
def _rank_sort(x, m, out):
    """``out[:m]`` = ``x[:m]`` sorted, by rank: each value goes to the number of values before it (ties in
    index order). m^2 comparisons without a data-dependent branch (m <= 32): a gather's random addresses cost
    no branch mispredictions, which an insertion sort pays for every element."""
    for i in range(m):
        xi = x[i]
        r = 0
        for j in range(i):
            r += x[j] <= xi
        for j in range(i + 1, m):
            r += x[j] < xi
        out[r] = xi


@njit(cache=True, nogil=True, boundscheck=False)
def _union_bytes_sectors(lo, hi, m, sa, sb):
    """(distinct bytes, distinct 32-byte sectors) covered by the byte intervals [lo[k], hi[k]], k < m (m >= 1);
    ``sa``, ``sb``: scratch arrays of m entries.

    With the starts S and the ends sorted apart (each is usually ascending already: a streaming access), the
    union of half-open intervals [S, E) is E[m-1] - S[0] less the gaps max(0, S[i+1] - E[i]): the covered
    set has a hole after the i-th smallest end exactly when the next start lies beyond it. The sectors an
    interval touches are [lo >> 5, (hi >> 5) + 1), and shifting keeps the order, so the same sorted arrays
    give the distinct sectors."""
    d = hi[0] - lo[0]
    same = True  # one access size (the usual case): the sorted ends are the sorted starts + size - 1
    for r in range(1, m):
        same &= hi[r] - lo[r] == d
    s = lo
    h = hi
    sorted_h = False
    if not _ascending(lo, m):
        _rank_sort(lo, m, sa)
        s = sa
        if same:
            for r in range(m):
                sb[r] = sa[r] + d
            h = sb
            sorted_h = True
    if not sorted_h and not _ascending(hi, m):
        _rank_sort(hi, m, sb)
        h = sb
    nbytes = h[m - 1] + 1 - s[0]
    nsec = (h[m - 1] >> SECTOR_SHIFT) + 1 - (s[0] >> SECTOR_SHIFT)
    for i in range(m - 1):
        nbytes -= max(0, s[i + 1] - (h[i] + 1))
        nsec -= max(0, (s[i + 1] >> SECTOR_SHIFT) - ((h[i] >> SECTOR_SHIFT) + 1))
    return nbytes, nsec


@njit(cache=True, nogil=True, boundscheck=False)
def _uniform(rec, lane_rec, nlanes):
    """Whether every lane of the instance has the same records but for the taken bit (then every warp
    instruction has all lanes active): all lanes as long as lane 0, and then, the lanes being contiguous,
    each record after lane 0 equal to the record one lane length before it."""
    a0 = lane_rec[0]
    ln = lane_rec[1] - a0
    for k in range(1, nlanes):
        if lane_rec[k + 1] - lane_rec[k] != ln:
            return False
    e = lane_rec[nlanes]
    later = rec[a0 + ln:e]
    earlier = rec[a0:e - ln]
    diff = np.int32(0)
    for x in range(e - a0 - ln):  # no early exit: an OR reduction over two views, which the compiler vectorises
        diff |= later[x] ^ earlier[x]
    return (diff & ~np.int32(F_TAKEN)) == 0


@njit(cache=True, nogil=True, boundscheck=False)
def _add_memory(lo, hi, m, tot, sa, sb, pc, perpc):
    """Count one warp memory instruction of static id ``pc`` whose active lanes touch the byte intervals
    [lo, hi] (m >= 1); its sectors beyond the ideal go to ``perpc[pc, PC_EXCESS]``."""
    nbytes, nsec = _union_bytes_sectors(lo, hi, m, sa, sb)
    ideal = (nbytes + 31) >> SECTOR_SHIFT
    tot[T_MEM] += 1
    tot[T_SECTORS] += nsec
    tot[T_IDEAL] += ideal
    if nsec > ideal and pc < perpc.shape[0]:
        perpc[pc, PC_EXCESS] += nsec - ideal


@njit(cache=True, nogil=True, boundscheck=False)
def _lockstep(rec, maddr, msize, lane_rec, lane_mem, nlanes, tot, act, scr, scr32, perpc):
    """Replay one warp instance (lane k's records are ``rec[lane_rec[k]:lane_rec[k+1]]``, its memory records
    ``maddr/msize[lane_mem[k]:...]``) by the minimum-PC rule and add its warp instructions to the totals.
    ``scr`` (7 x 32 int64) and ``scr32`` (2 x 32 int32) are scratch space. ``perpc[p]`` counts, per layout
    position ``p`` (the static id where the static table has no loops), its divergent warp branches
    (:data:`PC_DIVERGENT`) and its sectors beyond the ideal (:data:`PC_EXCESS`); positions beyond its length
    are not counted there.

    When all lanes run the same records (:func:`_uniform`) every step is lane 0's next record with all lanes
    active, and only branches and memory accesses need the other lanes."""
    pos, end, mc, lo, hi, sa, sb = scr[0], scr[1], scr[2], scr[3], scr[4], scr[5], scr[6]
    head, alist = scr32[0], scr32[1]
    ninstr = 0
    nactive = 0
    nbr = 0
    ndiv = 0
    if _uniform(rec, lane_rec, nlanes):
        a0 = lane_rec[0]
        ln = lane_rec[1] - a0
        mi = 0
        for s in range(ln):
            v = rec[a0 + s]
            if v & F_BRANCH:
                ntk = 0
                for k in range(nlanes):
                    ntk += rec[lane_rec[k] + s] & F_TAKEN
                nbr += 1
                if (ntk != 0) & (ntk != nlanes):
                    ndiv += 1
                    bpc = v >> FLAG_BITS
                    if bpc < perpc.shape[0]:
                        perpc[bpc, PC_DIVERGENT] += 1
            if v & F_MEM:
                for k in range(nlanes):
                    q = lane_mem[k] + mi
                    a = maddr[q]
                    lo[k] = a
                    hi[k] = a + msize[q] - 1
                _add_memory(lo, hi, nlanes, tot, sa, sb, v >> FLAG_BITS, perpc)
                mi += 1
        ninstr = ln
        nactive = ln * nlanes
    else:
        # Lane k: next record pos[k] of rec[.. end[k]], head[k] = that record (_DONE when finished or absent),
        # next memory record mc[k]. A full step finds the smallest head and the lanes that have its position
        # (the active set, ``alist[:na]``) and the smallest head among the others (``idle``). The idle lanes do
        # not move while the active set stays the same, which it does as long as the active lanes' next records
        # all have one position below idle's: those steps look at the active lanes only (a loop that some
        # lanes still run while the others wait for them at its exit costs per active lane).
        for k in range(WARP):
            if k < nlanes:
                pos[k] = lane_rec[k]
                end[k] = lane_rec[k + 1]
                mc[k] = lane_mem[k]
            else:
                pos[k] = 0
                end[k] = 0
                mc[k] = 0
            head[k] = rec[pos[k]] if pos[k] < end[k] else _DONE
        while True:
            best = _DONE
            for k in range(WARP):
                best = min(best, head[k])
            if best == _DONE:
                break
            bp = best >> FLAG_BITS  # the smallest record has the smallest layout position
            na = 0
            idle = _DONE
            for k in range(WARP):
                h = head[k]
                if (h >> FLAG_BITS) == bp:
                    alist[na] = k
                    na += 1
                else:
                    idle = min(idle, h)
            idle_pc = idle >> FLAG_BITS
            cur_pc = bp
            while True:  # steps with the active set alist[:na]
                nb = 0
                ntk = 0
                m = 0
                same = True
                nxt_pc = np.int32(0)
                for i in range(na):
                    k = alist[i]
                    h = head[k]
                    br = (h >> 1) & 1
                    nb += br
                    ntk += br & h
                    if h & F_MEM:
                        q = mc[k]
                        x = maddr[q]
                        lo[m] = x
                        hi[m] = x + msize[q] - 1
                        m += 1
                        mc[k] = q + 1
                    p = pos[k] + 1
                    pos[k] = p
                    nh = rec[p] if p < end[k] else _DONE
                    head[k] = nh
                    if i == 0:
                        nxt_pc = nh >> FLAG_BITS
                    else:
                        same &= (nh >> FLAG_BITS) == nxt_pc
                ninstr += 1
                nactive += na
                if m > 0:
                    _add_memory(lo, hi, m, tot, sa, sb, cur_pc, perpc)
                if nb > 0:
                    nbr += 1
                    if (ntk != 0) & (ntk != nb):
                        ndiv += 1
                        if cur_pc < perpc.shape[0]:
                            perpc[cur_pc, PC_DIVERGENT] += 1
                if not same or nxt_pc >= idle_pc:  # (a finished lane's head is _DONE: not below idle)
                    break
                cur_pc = nxt_pc
    tot[T_INSTR] += ninstr
    tot[T_ACTIVE] += nactive
    tot[T_BRANCHES] += nbr
    tot[T_DIVERGENT] += ndiv
    tot[T_INSTANCES] += 1
    act[nlanes] += nactive


@njit(cache=True, nogil=True, boundscheck=False)
def _scan(op, pc, taken, addr, size, tid, start, st, rec, maddr, msize, lane_rec, lane_mem, tidbits, tot, act,
          skip, lay_on, key, perpc):
    """Records from ``start``: close warp instances as they end, buffer the open one. Returns the index of the
    first record not processed: ``op.shape[0]``, or a record that needs a larger buffer (the instance buffer,
    which must have room for one more record and one more memory record, or the tid bitmap). Its lane may
    already be opened; called again from there, the kernel goes on as if it had not stopped.

    A record of the same lane as the previous one is appended to the buffer (and its address and size when it
    is a LOAD or STORE); a change of tid is the rare path. With a layout (``lay_on``: the static table has
    loops) a record is buffered at its layout position ``key`` (features/layout.py, walked for the chunk before
    the scan: a lane is a run of one tid), else at its static id."""
    n = op.shape[0]
    scr = np.empty((7, WARP), np.int64)  # the lockstep's scratch rows
    scr32 = np.empty((2, WARP), np.int32)
    nrec = st[S_NREC]
    nmem = st[S_NMEM]
    nlanes = st[S_LANES]
    cw = st[S_WARP]
    latest = st[S_LATEST]
    outside = st[S_OUTSIDE]
    rcap = rec.shape[0]
    mcap = maddr.shape[0]
    ntid = tidbits.shape[0]
    npar = tot[T_PAR]
    nfp = tot[T_FP]
    nbytes = tot[T_BYTES]
    nlaunch = tot[T_LAUNCHES]
    stop = n
    for i in range(start, n):
        t = tid[i]
        if t != latest or outside != 0:  # outside the thread space, or a new lane, instance or launch
            if t < 0:
                if cw >= 0:
                    lane_rec[nlanes] = nrec
                    lane_mem[nlanes] = nmem
                    _lockstep(rec, maddr, msize, lane_rec, lane_mem, nlanes, tot, act, scr, scr32, perpc)
                    cw = -1
                    nrec = 0
                    nmem = 0
                    nlanes = 0
                outside = 1
                continue
            if (t >> 3) >= ntid:
                stop = i
                break
            starts = (latest < 0) | (outside != 0) | (t < latest)
            w = t >> 5
            if starts | (w != cw):
                if cw >= 0:
                    lane_rec[nlanes] = nrec
                    lane_mem[nlanes] = nmem
                    _lockstep(rec, maddr, msize, lane_rec, lane_mem, nlanes, tot, act, scr, scr32, perpc)
                cw = w
                nrec = 0
                nmem = 0
                nlanes = 0
                if starts:
                    nlaunch += 1
            # a new lane (inside an instance the tids only grow)
            lane_rec[nlanes] = nrec
            lane_mem[nlanes] = nmem
            nlanes += 1
            tidbits[t >> 3] |= np.uint8(1 << (t & 7))
            latest = t
            outside = 0
        p = pc[i]
        if p < skip.shape[0] and skip[p] != 0:  # a kernel loop's own latch: no instruction of a GPU thread
            npar += 1
            if skip[p] == 2 and taken[i] == 0:
                outside = 1  # a NumPy operation's last element: what follows is another launch
            continue
        if nrec >= rcap or nmem >= mcap:
            stop = i
            break
        o = op[i]
        k = key[i] if lay_on else np.int64(p)
        br = o == BRANCH
        mem = (o == LOAD) | (o == STORE)
        rec[nrec] = ((k << FLAG_BITS) | (np.int64(mem) << 2) | (np.int64(br) << 1)
                     | (np.int64(taken[i]) & np.int64(br)))
        nrec += 1
        if mem:
            sz = size[i]
            maddr[nmem] = addr[i]
            msize[nmem] = sz
            nmem += 1
            nbytes += sz
        nfp += ((o >= FP_ALU) & (o <= FP_SPECIAL)) | (o >= FP64_ALU)
        npar += 1
    st[S_NREC] = nrec
    st[S_NMEM] = nmem
    st[S_LANES] = nlanes
    st[S_WARP] = cw
    st[S_LATEST] = latest
    st[S_OUTSIDE] = outside
    tot[T_PAR] = npar
    tot[T_FP] = nfp
    tot[T_BYTES] = nbytes
    tot[T_LAUNCHES] = nlaunch
    return stop


@njit(cache=True, nogil=True)
def _close_copy(st, rec, maddr, msize, lane_rec, lane_mem, tot, act, perpc):
    """Totals with the open instance (if any) replayed, without changing the state: (totals, act, perpc)."""
    tot2 = tot.copy()
    act2 = act.copy()
    perpc2 = perpc.copy()
    nlanes = st[S_LANES]
    if st[S_WARP] >= 0 and nlanes > 0:
        lr = lane_rec.copy()
        lm = lane_mem.copy()
        lr[nlanes] = st[S_NREC]
        lm[nlanes] = st[S_NMEM]
        _lockstep(rec, maddr, msize, lr, lm, nlanes, tot2, act2, np.empty((7, WARP), np.int64),
                  np.empty((2, WARP), np.int32), perpc2)
    return tot2, act2, perpc2


class _Buffer:
    """One growable 1-D buffer: a NumPy array, or an unlinked temporary file mapped with ``np.memmap``.

    ``arr`` is a plain ndarray view of the storage (what Numba kernels receive)."""

    def __init__(self, dtype, capacity: int) -> None:
        self.dtype = np.dtype(dtype)
        self.file = None
        self._map = None
        self.arr = np.empty(capacity, self.dtype)

    @property
    def nbytes(self) -> int:
        return int(self.arr.nbytes)

    @property
    def on_file(self) -> bool:
        return self.file is not None

    def resize(self, capacity: int, keep: int, on_file: bool) -> None:
        """Storage for ``capacity`` entries, the first ``keep`` kept, in memory or in a temporary file."""
        if on_file == self.on_file and capacity == self.arr.shape[0]:
            return
        if on_file and self.file is not None:
            self.file.truncate(capacity * self.dtype.itemsize)  # the file keeps its contents: no copy
            self._map = np.memmap(self.file, dtype=self.dtype, mode="r+", shape=(capacity,))
            self.arr = np.asarray(self._map)
            return
        if on_file:
            f = tempfile.TemporaryFile(prefix="portcast-warp-")
            f.truncate(capacity * self.dtype.itemsize)
            mm = np.memmap(f, dtype=self.dtype, mode="r+", shape=(capacity,))
            new = np.asarray(mm)
        else:
            f = mm = None
            new = np.empty(capacity, self.dtype)
        new[:keep] = self.arr[:keep]
        self.close()
        self.file, self._map, self.arr = f, mm, new

    def close(self) -> None:
        """Drop the file storage, if any (the file was unlinked when made: closing it deletes it)."""
        if self.file is not None:
            self.arr = np.empty(0, self.dtype)
            self._map = None
            self.file.close()
            self.file = None


class WarpAnalyzer(Analyzer):
    """The warp-level views of docs/features.md: lockstep warps rebuilt by the minimum-PC rule, chunk by chunk.

    Memory: one warp instance's records (about 5 bytes per record, 12 more per memory record), in memory up
    to :data:`SPILL_BYTES`, in temporary files beyond; a bitmap of the tids seen.
    """

    family = "warp"

    def __init__(self) -> None:
        super().__init__()
        self.st = np.zeros(N_STATE, np.int64)
        self.st[S_WARP] = -1
        self.st[S_LATEST] = -1
        self.st[S_OUTSIDE] = 1  # so a record takes the kernel's slow path unless it continues the latest lane
        self.rec = _Buffer(np.int32, INITIAL_RECORDS)
        self.maddr = _Buffer(np.int64, INITIAL_RECORDS)
        self.msize = _Buffer(np.int32, INITIAL_RECORDS)
        self.lane_rec = np.zeros(WARP + 1, np.int64)
        self.lane_mem = np.zeros(WARP + 1, np.int64)
        self.tidbits = np.zeros(1024, np.uint8)
        self.tot = np.zeros(N_TOTALS, np.int64)
        self.act = np.zeros(WARP + 1, np.int64)  # act[L]: active lanes summed over instructions of L-thread instances
        self.spills = 0  # times the instance buffer moved to temporary files
        self.skip = np.zeros(1, np.uint8)  # per pc: 1 = left out of the warps (see configure)
        # per layout position (the static id without a loop table): divergent warp branches, sectors beyond the ideal
        self.perpc = np.zeros((0, 2), np.int64)
        self.walker = Layout.of(None).walker()  # layout positions (see configure_static)
        self.keys = np.zeros(0, np.int64)  # the chunk's positions

    def configure(self, meta: dict | None) -> None:
        """Take the region's ``thread_space`` metadata: the latch records of its kernel loops
        (``control_pcs``: the loop variable's update and the loop's BRANCH) are left out of the warps. A GPU
        thread computes its index and runs no loop around its body; in a collapsed nest the latches of row
        ends would otherwise show as divergent branches in every warp that holds one. The last latch of a
        NumPy operation's launch (2) ends the launch when not taken, as in features/thread_dependences.py."""
        pcs = [int(p) for p in ((meta or {}).get("control_pcs") or [])]
        self.skip = np.zeros(max(pcs, default=0) + 1, np.uint8)
        self.skip[pcs] = 1
        for loop in (meta or {}).get("library") or []:
            last = int((loop.get("latch_pcs") or [0])[-1])
            if 0 < last < self.skip.shape[0] and self.skip[last]:
                self.skip[last] = 2

    def configure_static(self, static: StaticTable | None) -> None:
        """Take the region's static table: with a loop table (profiler/loops.py) the lanes run by layout position
        (features/layout.py), so a warp re-converges at the end of every loop iteration. Raises
        :class:`TraceError` when its loop fields are inconsistent."""
        self.walker = Layout.of(static).walker()

    # ---- buffers
    def buffer_bytes(self) -> tuple[int, int]:
        """(bytes of instance buffer in memory, bytes in temporary files)."""
        bufs = (self.rec, self.maddr, self.msize)
        return (sum(b.nbytes for b in bufs if not b.on_file), sum(b.nbytes for b in bufs if b.on_file))

    @property
    def spilled(self) -> bool:
        """Whether the instance buffer is in temporary files now."""
        return self.rec.on_file

    def _grow(self) -> None:
        """Double whichever buffer is full; move all three to files when the total would pass SPILL_BYTES."""
        nrec, nmem = int(self.st[S_NREC]), int(self.st[S_NMEM])
        rcap = self.rec.arr.shape[0] * (2 if nrec >= self.rec.arr.shape[0] else 1)
        mcap = self.maddr.arr.shape[0] * (2 if nmem >= self.maddr.arr.shape[0] else 1)
        on_file = self.spilled or rcap * 4 + mcap * 12 > SPILL_BYTES
        if on_file and not self.spilled:
            self.spills += 1
        self.rec.resize(rcap, nrec, on_file)
        self.maddr.resize(mcap, nmem, on_file)
        self.msize.resize(mcap, nmem, on_file)

    def _unspill(self) -> None:
        """Back to memory once the buffered records (of a later, shorter instance) fit in half the limit."""
        nrec, nmem = int(self.st[S_NREC]), int(self.st[S_NMEM])
        if not self.spilled or nrec * 4 + nmem * 12 > SPILL_BYTES // 2:
            return
        rcap = max(INITIAL_RECORDS, 2 * nrec)
        mcap = max(INITIAL_RECORDS, 2 * nmem)
        if rcap * 4 + mcap * 12 > SPILL_BYTES:
            rcap, mcap = nrec + 1, nmem + 1
        self.rec.resize(rcap, nrec, False)
        self.maddr.resize(mcap, nmem, False)
        self.msize.resize(mcap, nmem, False)

    # ---- Analyzer
    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
        if not n:
            return
        top = self.pc_capacity(chunk)  # rejects static ids above MAX_PC (the flag bits sit below the id)
        lay_on = self.walker.layout.active
        if lay_on:  # every record's position (records left out of the warps move their lane's state too)
            if self.keys.shape[0] < n:
                self.keys = np.empty(n, np.int64)
            self.walker.walk(chunk.pc, chunk.op, chunk.tid, self.keys, top)
        cap = int(self.keys[:n].max()) + 1 if lay_on else top
        if cap > self.perpc.shape[0]:
            grown = np.zeros((max(cap, 2 * self.perpc.shape[0], 64), 2), np.int64)
            grown[:self.perpc.shape[0]] = self.perpc
            self.perpc = grown
        i = 0
        while True:
            i = _scan(chunk.op, chunk.pc, chunk.taken, chunk.addr, chunk.size, chunk.tid, i, self.st, self.rec.arr,
                      self.maddr.arr, self.msize.arr, self.lane_rec, self.lane_mem, self.tidbits, self.tot, self.act,
                      self.skip, lay_on, self.keys, self.perpc)
            if i >= n:
                break
            tt = int(chunk.tid[i])
            if (tt >> 3) >= self.tidbits.shape[0]:
                if tt >= MAX_TID:
                    raise TraceError(f"record {i} of the chunk: tid={tt} exceeds the supported maximum "
                                     f"{MAX_TID - 1}")
                self.tidbits = grow_1d(self.tidbits, (tt >> 3) + 1)
            else:
                self._grow()
        self._unspill()
        self.n += n

    def counts(self) -> dict[str, int]:
        """Integer totals behind the features, the open instance included (for tests and reports):
        ``warp_instructions``, ``memory_instructions``, ``sectors``, ``ideal_sectors``, ``branches``,
        ``divergent_branches``, ``active_lanes``, ``instances``, ``launches``, ``parallel_records``,
        ``fp_ops``, ``bytes``."""
        tot, _, _ = self._totals()
        return {name: int(tot[k]) for k, name in enumerate(TOTAL_NAMES)}

    def _totals(self):
        return _close_copy(self.st, self.rec.arr, self.maddr.arr, self.msize.arr, self.lane_rec, self.lane_mem,
                           self.tot, self.act, self.perpc)

    def contributions(self) -> dict[str, dict[int, float]]:
        """Per static id, the open instance included: ``warp_bdiv``: its divergent warp branches (a loop exit
        that every lane of a warp takes at the same step is none); ``warp_coalescing``: the sectors its warp
        memory instructions touch beyond the ideal (what makes the coalescing less than 1)."""
        _, _, perpc = self._totals()
        layout = self.walker.layout
        pc_of = layout.static_id if layout.active else int  # the counts are per layout position
        out = {}
        for name, k in (("warp_bdiv", PC_DIVERGENT), ("warp_coalescing", PC_EXCESS)):
            per = {}
            for p in np.flatnonzero(perpc[:, k]):
                pc = pc_of(p)
                per[pc] = per.get(pc, 0.0) + float(perpc[p, k])
            out[name] = per
        return out

    def result(self) -> dict[str, float]:
        t, act, _ = self._totals()
        simd = sum(float(act[k]) / k for k in range(1, WARP + 1))
        threads = int(np.unpackbits(self.tidbits).sum())
        return {
            "warp_coalescing": ratio(t[T_IDEAL], t[T_SECTORS]),
            "warp_sectorsPerGroup": ratio(t[T_SECTORS], t[T_MEM]),
            "warp_idealSectorsPerGroup": ratio(t[T_IDEAL], t[T_MEM]),
            "warp_bdiv": ratio(t[T_DIVERGENT], t[T_BRANCHES]),
            "warp_simdEfficiency": ratio(simd, t[T_INSTR]),
            "warp_threads": float(threads),
            "warp_log2Threads": float(np.log2(1.0 + threads)),
            "warp_launches": float(t[T_LAUNCHES]),
            "warp_parallelFraction": ratio(t[T_PAR], self.n),
            "warp_arithIntensity": ratio(t[T_FP], t[T_BYTES]),
        }
