"""Per-thread instruction streams from a trace, grouped into warps of 32 and thread blocks.

A trace record with ``tid >= 0`` belongs to a logical GPU thread (one iteration of the region's parallel
loop); records with ``tid == -1`` (outside the parallel loop: host-side set-up) are not part of the kernel
and are dropped. Threads are numbered densely in increasing ``tid`` order; thread ``t`` belongs to block
``t // block_size`` and, inside it, to warp ``(t % block_size) // 32`` (a block whose size is not a multiple
of 32 ends with a partial warp; the last block may be partial).

**Warp instructions.** The threads of a warp run in lockstep under one program counter. A trace gives each
thread's own instruction sequence, not the control-flow graph, so the warp's sequence is rebuilt with the
*minimum-PC* rule: at each step the warp issues the record with the smallest *layout position* among its
unfinished threads' next records, for every thread whose next record has that position (the *active mask*);
the others wait. A record's position is its static id, except a loop's increment and test where they close an
iteration, which sit after the loop's body (features/layout.py, the same positions the feature engine's warp
views use; only a static table with a loop table has them). Static ids are allocated in source order, so the
threads of an if/else run the ``then`` side, then the ``else`` side, and re-converge at the first instruction
after both (the smallest position they share); threads that skip an ``if`` inside a loop wait at the end of
the iteration for the others; threads that leave a loop early wait for those still looping. Divergent paths
are thus serialised and re-converged.

**Coalescing.** A warp memory instruction touches the distinct 32-byte sectors covered by its active threads'
accesses ``[addr, addr + size)``.

**Dependencies.** A register is a dependency token (docs/trace-format.md). Each record's sources are
matched to the latest earlier record *of the same thread* that wrote the token; a warp instruction depends,
per source slot, on the latest-issued warp instruction that produced that source for any of its active
threads.

Everything here is independent of the GPU configuration and is computed once per trace.
"""

from __future__ import annotations

import dataclasses

import numba as nb
import numpy as np

from core.trace_schema import Op, TraceError
from features.layout import Layout
from profiler.trace import StaticTable, TraceChunk

WARP_SIZE = 32
SECTOR_BYTES = 32


@dataclasses.dataclass(frozen=True)
class WarpStreams:
    """The warp instruction streams of a trace.

    Attributes
    ----------
    block_size : int
        Threads per block.
    n_threads, n_warps, n_blocks : int
    thread_tid : ndarray of int64, shape (n_threads,)
        The trace ``tid`` of each dense thread index.
    warp_block : ndarray of int64, shape (n_warps,)
        Block of each warp (warps of a block are consecutive).
    warp_threads : ndarray of int64, shape (n_warps,)
        Threads in each warp.
    warp_ptr : ndarray of int64, shape (n_warps + 1,)
        Warp ``w``'s instructions are ``warp_ptr[w]:warp_ptr[w+1]``.
    op, pc : ndarray (uint8, int32), shape (n,)
        Operation class and static id of each warp instruction.
    active : ndarray of int32, shape (n,)
        Threads in the active mask.
    divergent : ndarray of uint8, shape (n,)
        1 for a branch whose active threads disagree on the outcome.
    dep : ndarray of int64, shape (n, 3)
        Producer warp instruction per source slot (-1: none); always an earlier instruction of the same warp.
    sector_ptr, sectors : ndarray of int64
        Sectors (address // 32) of warp instruction ``i`` are ``sectors[sector_ptr[i]:sector_ptr[i+1]]``
        (sorted, distinct; empty for non-memory instructions).
    n_records : int
        Thread instructions (trace records with ``tid >= 0``).
    """

    block_size: int
    n_threads: int
    n_warps: int
    n_blocks: int
    thread_tid: np.ndarray
    warp_block: np.ndarray
    warp_threads: np.ndarray
    warp_ptr: np.ndarray
    op: np.ndarray
    pc: np.ndarray
    active: np.ndarray
    divergent: np.ndarray
    dep: np.ndarray
    sector_ptr: np.ndarray
    sectors: np.ndarray
    n_records: int

    @property
    def n(self) -> int:
        """Number of warp instructions."""
        return int(self.op.shape[0])

    @property
    def warps_per_block(self) -> int:
        """Warp slots per block (``ceil(block_size / 32)``)."""
        return -(-self.block_size // WARP_SIZE)

    def n_sectors(self) -> np.ndarray:
        """Sectors per warp instruction.

        Returns
        -------
        ndarray of int64
        """
        return np.diff(self.sector_ptr)


@nb.njit(cache=True)
def _producers(th_start, th_end, src, dst, n_tokens):
    """Producer record (index) of each source slot; -1 when the token was not written earlier in the thread."""
    n = dst.shape[0]
    prod = np.full((n, 3), -1, np.int64)
    last = np.full(n_tokens, -1, np.int64)
    for t in range(th_start.shape[0]):
        a = th_start[t]
        for j in range(a, th_end[t]):
            for k in range(3):
                s = src[j, k]
                if s > 0:
                    p = last[s]
                    if p >= a:
                        prod[j, k] = p
            d = dst[j]
            if d > 0:
                last[d] = j
    return prod


@nb.njit(cache=True)
def _build(th_start, th_end, warp_t0, warp_t1, key, pc, op, taken, addr, size, prod, max_sectors):
    n_rec = pc.shape[0]
    n_warps = warp_t0.shape[0]
    w_op = np.empty(n_rec, np.uint8)
    w_pc = np.empty(n_rec, np.int32)
    w_act = np.empty(n_rec, np.int32)
    w_div = np.zeros(n_rec, np.uint8)
    w_dep = np.full((n_rec, 3), -1, np.int64)
    sptr = np.zeros(n_rec + 1, np.int64)
    sect = np.empty(max_sectors, np.int64)
    rec2w = np.empty(n_rec, np.int64)
    warp_ptr = np.zeros(n_warps + 1, np.int64)
    cur = np.empty(WARP_SIZE, np.int64)
    buf = np.empty(64 * WARP_SIZE, np.int64)
    ns = 0
    wi = 0
    for w in range(n_warps):
        t0 = warp_t0[w]
        nt = warp_t1[w] - t0
        for k in range(nt):
            cur[k] = th_start[t0 + k]
        while True:
            best = -1
            for k in range(nt):
                if cur[k] < th_end[t0 + k]:
                    p = key[cur[k]]
                    if best < 0 or p < best:
                        best = p
            if best < 0:
                break
            nact = 0
            ntaken = 0
            nb_ = 0
            first = -1
            for k in range(nt):
                j = cur[k]
                if j < th_end[t0 + k] and key[j] == best:
                    if first < 0:
                        first = j
                    nact += 1
                    ntaken += taken[j]
                    rec2w[j] = wi
                    for q in range(3):
                        pj = prod[j, q]
                        if pj >= 0:
                            pw = rec2w[pj]
                            if pw > w_dep[wi, q]:
                                w_dep[wi, q] = pw
                    if size[j] > 0 and (op[j] == 8 or op[j] == 9):
                        s0 = addr[j] // SECTOR_BYTES
                        s1 = (addr[j] + size[j] - 1) // SECTOR_BYTES
                        for s in range(s0, s1 + 1):
                            if nb_ == buf.shape[0]:
                                nbuf = np.empty(buf.shape[0] * 2, np.int64)
                                nbuf[:nb_] = buf[:nb_]
                                buf = nbuf
                            buf[nb_] = s
                            nb_ += 1
                    cur[k] = j + 1
            w_op[wi] = op[first]
            w_pc[wi] = pc[first]
            w_act[wi] = nact
            if op[first] == 10 and ntaken > 0 and ntaken < nact:
                w_div[wi] = 1
            if nb_ > 0:
                srt = np.sort(buf[:nb_])
                sect[ns] = srt[0]
                ns += 1
                for q in range(1, nb_):
                    if srt[q] != srt[q - 1]:
                        sect[ns] = srt[q]
                        ns += 1
            sptr[wi + 1] = ns
            wi += 1
        warp_ptr[w + 1] = wi
    return (w_op[:wi].copy(), w_pc[:wi].copy(), w_act[:wi].copy(), w_div[:wi].copy(), w_dep[:wi].copy(),
            sptr[:wi + 1].copy(), sect[:ns].copy(), warp_ptr)


def _elide(through: np.ndarray, prod: np.ndarray, th_start: np.ndarray, th_end: np.ndarray):
    """Drop the pass-through records (``through``: a copy, call or return, which pass their first source on):
    a source produced by one is produced by what that one copied (followed through chains of them; -1 when
    it copied a constant). Returns the kept records' mask, their producers renumbered, and the threads'
    record ranges in the kept numbering."""
    n = through.shape[0]
    idx = np.arange(n, dtype=np.int64)
    eff = np.where(through, prod[:, 0], idx)
    while True:  # pointer jumping: producers always come earlier, so every chain ends
        hop = (eff >= 0) & through[np.maximum(eff, 0)]
        if not hop.any():
            break
        eff = np.where(hop, eff[np.maximum(eff, 0)], eff)
    keep = ~through
    src = prod[keep]
    src = np.where(src >= 0, eff[np.maximum(src, 0)], -1)
    new = np.cumsum(keep) - 1
    src = np.where(src >= 0, new[np.maximum(src, 0)], -1)
    before = np.r_[0, np.cumsum(keep)].astype(np.int64)
    return keep, np.ascontiguousarray(src), before[th_start], before[th_end]


def build_streams(chunk: TraceChunk, block_size: int = 256, shared: np.ndarray | None = None,
                  compiled: bool = True, static: StaticTable | None = None) -> WarpStreams:
    """Build the warp instruction streams of a region's trace.

    Parameters
    ----------
    chunk : TraceChunk
        The region's records in program order (all chunks concatenated).
    block_size : int
        Threads per block (>= 1).
    shared : ndarray of bool, shape (len(chunk),), optional
        Records that access shared memory (on-chip, per block; e.g. :func:`block_scratch`): their loads and
        stores touch no sector, and the timing model serves such a load after the GPU's
        ``shared_latency_cycles``.
    compiled : bool
        Model the code a GPU compiler makes of the records: an integer division or remainder by a constant
        (no producing register: ``src2 == 0``) becomes a multiply (``INT_MUL``: multiply-high and shift),
        and copies, calls and returns (``MOVE``, ``CALL``, ``RET``: argument passing and results of inlined
        functions) cost nothing: they are dropped and their consumers depend on what they copied.
    static : StaticTable, optional
        The trace's static table. With a loop table (profiler/loops.py, written by the Python tracer) the warps
        issue by layout position (features/layout.py): a loop's increment and test, where they close an
        iteration, sit after its body, so the threads of a warp re-converge at the end of every iteration.
        Without (None, or a table without loops: native and imported traces) every record sits at its static id.

    Returns
    -------
    WarpStreams

    Raises
    ------
    TraceError
        When the trace breaks the record contract, has no record inside a parallel loop, or ``static`` has
        inconsistent loop fields.
    ValueError
        On a bad ``block_size``.
    """
    if int(block_size) != block_size or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    block_size = int(block_size)
    layout = Layout.of(static)
    chunk.validate()
    sel = np.flatnonzero(chunk.tid >= 0)
    if sel.size == 0:
        raise TraceError("the trace has no record inside a parallel loop (every tid is -1); mark the loop whose "
                         "iterations are the GPU threads with portcast.parallel")
    tid = chunk.tid[sel]
    order = sel[np.argsort(tid, kind="stable")]
    stid = chunk.tid[order]
    thread_tid, th_start, counts = np.unique(stid, return_index=True, return_counts=True)
    th_start = th_start.astype(np.int64)
    th_end = th_start + counts.astype(np.int64)
    n_threads = int(thread_tid.shape[0])
    pc = np.ascontiguousarray(chunk.pc[order])
    op = np.ascontiguousarray(chunk.op[order])
    taken = np.ascontiguousarray(chunk.taken[order]).astype(np.int64)
    addr = np.ascontiguousarray(chunk.addr[order])
    size = np.ascontiguousarray(chunk.size[order]).astype(np.int64)
    # each thread's records by layout position, from the records as traced (its calls and returns included)
    key = layout.positions(pc, op, stid)
    if shared is not None:
        shared = np.asarray(shared, dtype=bool)
        if shared.shape != chunk.op.shape:
            raise ValueError(f"shared has shape {shared.shape}, the trace has {chunk.op.shape[0]} records")
        size[shared[order]] = 0
    src = np.stack([chunk.src1[order], chunk.src2[order], chunk.src3[order]], axis=1).astype(np.int64)
    dst = chunk.dst[order].astype(np.int64)
    tokens = np.unique(np.concatenate([src.ravel(), dst]))
    src_d = np.searchsorted(tokens, src)
    dst_d = np.searchsorted(tokens, dst)
    if tokens.size and tokens[0] == 0:  # token 0 = none stays 0; others are 1..
        pass
    else:
        src_d = np.where(src > 0, src_d + 1, 0)
        dst_d = np.where(dst > 0, dst_d + 1, 0)
    prod = _producers(th_start, th_end, np.ascontiguousarray(src_d), np.ascontiguousarray(dst_d), int(tokens.size) + 1)
    if compiled:
        op = op.copy()
        op[((op == Op.INT_DIV) | (op == Op.INT_REM)) & (src[:, 1] == 0)] = Op.INT_MUL
        through = (op == Op.MOVE) | (op == Op.CALL) | (op == Op.RET)
        if through.any():
            keep, prod, th_start, th_end = _elide(through, prod, th_start, th_end)
            pc, key, op, taken, addr, size = (np.ascontiguousarray(a[keep]) for a in (pc, key, op, taken, addr, size))
            order = order[keep]  # (for the error message below)
    # warps: consecutive threads of a block, 32 at a time
    t = np.arange(n_threads, dtype=np.int64)
    wpb = -(-block_size // WARP_SIZE)
    wkey = (t // block_size) * wpb + (t % block_size) // WARP_SIZE
    starts = np.flatnonzero(np.r_[True, wkey[1:] != wkey[:-1]]).astype(np.int64)
    warp_t0 = starts
    warp_t1 = np.r_[starts[1:], n_threads].astype(np.int64)
    warp_block = (wkey[starts] // wpb).astype(np.int64)
    mem = (op == Op.LOAD) | (op == Op.STORE)
    bad = np.flatnonzero(mem & (addr < 0))
    if bad.size:
        i = int(order[bad[0]])
        raise TraceError(f"record {i}: {Op(int(chunk.op[i])).name} at negative address {int(chunk.addr[i])}")
    spans = np.where(mem, (addr + size - 1) // SECTOR_BYTES - addr // SECTOR_BYTES + 1, 0)
    max_sectors = int(spans.sum()) + 1
    w_op, w_pc, w_act, w_div, w_dep, sptr, sect, warp_ptr = _build(
        th_start, th_end, warp_t0, warp_t1, key, pc, op, taken, addr, size, prod, max_sectors)
    return WarpStreams(
        block_size=block_size, n_threads=n_threads, n_warps=int(warp_t0.shape[0]),
        n_blocks=int(warp_block[-1]) + 1, thread_tid=thread_tid.astype(np.int64), warp_block=warp_block,
        warp_threads=(warp_t1 - warp_t0), warp_ptr=warp_ptr, op=w_op, pc=w_pc, active=w_act, divergent=w_div,
        dep=w_dep, sector_ptr=sptr, sectors=sect, n_records=int(sel.size),
    )


def block_scratch(chunk: TraceChunk, block_size: int) -> np.ndarray:
    """Records that a GPU port keeps in shared memory: accesses to the 32-byte sectors that only one block
    touches, that it stores to before it loads them, and that it loads at least once (a tile a block stages
    and reads back). Data a block only writes stays in global memory (it is the kernel's output), and so does
    data it reads before writing (its input).

    Parameters
    ----------
    chunk : TraceChunk
        Records in program order (the order decides "stores before it loads").
    block_size : int
        Threads per block; thread ``tid`` is in block ``tid // block_size``.

    Returns
    -------
    ndarray of bool, shape (len(chunk),)
    """
    op, tid = chunk.op, chunk.tid
    mem = np.flatnonzero(((op == Op.LOAD) | (op == Op.STORE)) & (tid >= 0) & (chunk.size > 0))
    out = np.zeros(op.shape[0], dtype=bool)
    if mem.size == 0:
        return out
    sector = chunk.addr[mem] // SECTOR_BYTES
    block = tid[mem] // int(block_size)
    is_load = op[mem] == Op.LOAD
    sec, first, inv = np.unique(sector, return_index=True, return_inverse=True)
    lo = np.full(sec.shape[0], np.iinfo(np.int64).max)
    hi = np.full(sec.shape[0], -1)
    np.minimum.at(lo, inv, block)
    np.maximum.at(hi, inv, block)
    loaded = np.zeros(sec.shape[0], dtype=bool)
    loaded[inv[is_load]] = True
    scratch = (lo == hi) & ~is_load[first] & loaded
    out[mem[scratch[inv]]] = True
    return out

