"""MICA's register traffic: operands per instruction, degree of use, dependency distances."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import TraceChunk

from ._base import Analyzer, ratio
from .fast.hash_index import HashIndex, find, insert
from .fast.i32x8 import uget, uset
from .ilp import _max_token

DEP_BOUNDS = (1, 2, 4, 8, 16, 32, 64)
#: register tokens below this index the last-write table directly; a larger one switches to the hash index.
DIRECT_TOKENS = 1 << 22


def _dep_lut() -> np.ndarray:
    """Bucket of each dependency distance 0..64: 0 for <= 1, k for (2^(k-1), 2^k] (k = 1..6); > 64 is 7."""
    lut = np.zeros(65, np.int64)
    for dd in range(2, 65):
        b, x = 1, dd - 1
        while x > 1:
            x >>= 1
            b += 1
        lut[dd] = b
    return lut


DEP_LUT = _dep_lut()


#: last write time of a register never written (direct mode); far below any real time, so its distance
#: is recognisable: ``now - NEVER >= 2^61``
NEVER = -(1 << 62)
_FAR = 1 << 61


def _inc_lut() -> np.ndarray:
    """Increment of the packed byte counters per clamped distance: index 1..64 the distance's bucket
    (``1 << 8 * bucket``), 65 = beyond 64 (bucket 7), 66 = no producer (0)."""
    inc = np.zeros(67, np.int64)
    for dd in range(1, 65):
        inc[dd] = 1 << (8 * int(DEP_LUT[dd]))
    inc[65] = 1 << 56
    return inc


INC_LUT = _inc_lut()


@njit(cache=True, nogil=True, boundscheck=False)
def _regs_direct(src1, src2, src3, dst, base, wtime, inc, hist, counts):
    """Direct mode: ``wtime[token]`` is the last write time (:data:`NEVER` = never written; token 0 is never
    written, a record without destination writes the last entry, a sink). Counts as :func:`_regs_kernel`.

    The first source is read without a branch (a missing one reads token 0, never written); each read adds
    ``inc[clamped distance]`` to eight byte counters packed in one int64 (one per bucket; a read with no
    producer adds 0), flushed into ``hist`` every 64 records (at most 3 x 64 < 256 per byte), so the
    histogram costs no memory traffic per read."""
    n = src1.shape[0]
    sink = wtime.shape[0] - 1
    reads = 0
    writes = 0
    produced = 0
    # the previous record's write is held in registers and stored one record late: a read of the register
    # just written (the most common distance, 1) then takes its time from a register, not from a store
    # still in flight
    ld = sink
    lt = wtime[sink]
    lo = 0
    while lo < n:
        hi = min(lo + 64, n)
        acc = 0
        for i in range(lo, hi):
            now = base + i
            r = uget(src1, i)
            reads += r != 0
            dd = now - (lt if r == ld else uget(wtime, r))
            acc += uget(inc, dd if dd <= 64 else (65 if dd < _FAR else 66))
            r = uget(src2, i)
            if r != 0:  # second and third sources: often absent, the branch is cheaper than the lookup
                reads += 1
                dd = now - (lt if r == ld else uget(wtime, r))
                acc += uget(inc, dd if dd <= 64 else (65 if dd < _FAR else 66))
            r = uget(src3, i)
            if r != 0:
                reads += 1
                dd = now - (lt if r == ld else uget(wtime, r))
                acc += uget(inc, dd if dd <= 64 else (65 if dd < _FAR else 66))
            uset(wtime, ld, lt)
            d = uget(dst, i)
            writes += d != 0
            ld = d if d != 0 else sink
            lt = now
        for b in range(8):
            v = (acc >> (8 * b)) & 255
            hist[b] += v
            produced += v
        lo = hi
    uset(wtime, ld, lt)
    counts[0] += reads
    counts[1] += produced
    counts[2] += writes


@njit(cache=True, nogil=True, boundscheck=False)
def _regs_kernel(src1, src2, src3, dst, start, base, keys, slots, state, wtime, hist, counts):
    """Records from ``start``; returns the first one not processed (a register table that would pass its
    limit stops the kernel before the record). counts = [register reads, reads of a value produced in the
    trace, writes]; state = [n, limit]; hist = dependency distances in buckets 1, 2, <=4, ..., <=64, >64."""
    mask = keys.shape[0] - 1
    n = src1.shape[0]
    reads = 0
    produced = 0
    writes = 0
    rn = state[0]
    lim = state[1]
    stop = n
    for i in range(start, n):
        d = dst[i]
        if d != 0 and rn + 1 > lim:
            stop = i
            break
        now = base + i
        for q in range(3):
            r = src1[i] if q == 0 else (src2[i] if q == 1 else src3[i])
            if r == 0:
                continue
            reads += 1
            s = find(keys, slots, mask, r)
            if s < 0:
                continue
            produced += 1
            dd = now - wtime[s]
            if dd <= 1:
                b = 0
            elif dd <= 64:
                b = 1
                x = dd - 1
                while x > 1:
                    x >>= 1
                    b += 1
            else:
                b = 7
            hist[b] += 1
        if d != 0:
            writes += 1
            s, new = insert(keys, slots, mask, d, rn)
            if new:
                rn += 1
            wtime[s] = now
    state[0] = rn
    counts[0] += reads
    counts[1] += produced
    counts[2] += writes
    return stop


class RegisterTrafficAnalyzer(Analyzer):
    """Register operands, degree of use and producer-consumer distances (in dynamic instructions).

    State: the last write time of each distinct register token (indexed by token while every token is
    below :data:`DIRECT_TOKENS`, then through a hash index).
    """

    family = "regs"

    def __init__(self) -> None:
        super().__init__()
        self.index = HashIndex(1024)
        self.wtime = np.zeros(self.index.limit, np.int64)
        self.state = np.array([0, self.index.limit], np.int64)
        self.hist = np.zeros(len(DEP_BOUNDS) + 1, np.int64)
        self.counts = np.zeros(3, np.int64)
        self.direct = True
        self.wdirect = np.full(65, NEVER, np.int64)  # by token; the last entry is the sink
        #: (chunk, its largest register token) when the engine computed it for the next chunk (used once, by
        #: that very chunk object only, then cleared)
        self.next_max_token: tuple | None = None

    def _to_hash(self) -> None:
        """Move the written registers' last write times from the direct table into the hash index."""
        toks = np.flatnonzero(self.wdirect[:-1] >= 0)
        self.index.n = 0
        self.index.rebuild(np.zeros(0, np.int64), 0, min_free=2 * len(toks) + 64)
        keys, slots, mask = self.index.keys, self.index.slots, self.index.mask
        self.wtime = np.zeros(self.index.limit, np.int64)
        for s, tok in enumerate(toks):
            insert(keys, slots, mask, int(tok), s)
            self.wtime[s] = self.wdirect[tok]
        self.index.n = len(toks)
        self.state[:] = (len(toks), self.index.limit)
        self.wdirect = np.full(2, NEVER, np.int64)
        self.direct = False

    def consume(self, chunk: TraceChunk) -> None:
        hint, self.next_max_token = self.next_max_token, None
        top = hint[1] if hint is not None and hint[0] is chunk else None
        n = len(chunk)
        if not n:
            return
        if self.direct:
            if top is None:
                top = int(_max_token(chunk.src1, chunk.src2, chunk.src3, chunk.dst))
            if top >= DIRECT_TOKENS:
                self._to_hash()
            else:
                rows = self.wdirect.shape[0] - 1
                if top >= rows:
                    grown = np.full(max(top + 1, 2 * rows) + 1, NEVER, np.int64)
                    grown[:rows] = self.wdirect[:rows]
                    self.wdirect = grown
                _regs_direct(chunk.src1, chunk.src2, chunk.src3, chunk.dst, self.n, self.wdirect, INC_LUT, self.hist,
                             self.counts)
                self.n += n
                return
        i = 0
        while i < n:
            i = _regs_kernel(chunk.src1, chunk.src2, chunk.src3, chunk.dst, i, self.n, self.index.keys,
                             self.index.slots, self.state, self.wtime, self.hist, self.counts)
            if i < n:
                self.index.n = int(self.state[0])
                self.index.grow(1)
                self.state[1] = self.index.limit
                w = np.zeros(self.index.limit, np.int64)
                w[: self.index.n] = self.wtime[: self.index.n]
                self.wtime = w
        self.n += n

    def result(self) -> dict[str, float]:
        reads, produced, writes = (int(x) for x in self.counts)
        out = {
            "mica_regSrcPerInstr": ratio(reads, self.n),
            "mica_regDstPerInstr": ratio(writes, self.n),
            "mica_regDegreeUse": ratio(produced, writes),
        }
        cum = np.cumsum(self.hist)
        for k, b in enumerate(DEP_BOUNDS):
            out[f"mica_regDepDist_le{b}"] = ratio(cum[k], produced)
        return out
