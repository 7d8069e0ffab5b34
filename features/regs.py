"""MICA's register traffic: operands per instruction, degree of use, dependency distances."""

from __future__ import annotations

import numpy as np
from numba import njit

from profiler.trace import TraceChunk

from ._base import Analyzer, ratio
from ._hash import HashIndex, find, insert

DEP_BOUNDS = (1, 2, 4, 8, 16, 32, 64)


@njit(cache=True)
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

    State: the last write time of each distinct register token.
    """

    family = "regs"

    def __init__(self) -> None:
        super().__init__()
        self.index = HashIndex(1024)
        self.wtime = np.zeros(self.index.limit, np.int64)
        self.state = np.array([0, self.index.limit], np.int64)
        self.hist = np.zeros(len(DEP_BOUNDS) + 1, np.int64)
        self.counts = np.zeros(3, np.int64)

    def consume(self, chunk: TraceChunk) -> None:
        n = len(chunk)
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
