"""Memory strides: XAPP's local/global stride buckets and MICA's read/write stride histograms."""

from __future__ import annotations

import numpy as np
from numba import njit

from core.trace_schema import Op
from profiler.trace import TraceChunk

from ._base import Analyzer, grow_1d, ratio

LOAD = np.uint8(Op.LOAD)
STORE = np.uint8(Op.STORE)

#: XAPP's buckets: 0, 1-8, 9-128, >128 bytes.
XAPP_STRIDE_BUCKETS = ("0", "8", "128", "Other")
#: MICA's cumulative bounds (bytes).
MICA_STRIDE_BOUNDS = (0, 8, 64, 512, 4096, 32768, 262144)


@njit(cache=True, nogil=True)
def _xapp_strides(op, pc, addr, last, seen, local, glob, gstate):
    # gstate[0] = global seen flag, gstate[1] = global last address
    for i in range(op.shape[0]):
        o = op[i]
        if o != LOAD and o != STORE:
            continue
        a = addr[i]
        p = pc[i]
        if seen[p]:
            d = a - last[p]
            if d < 0:
                d = -d
            b = 0 if d == 0 else (1 if d <= 8 else (2 if d <= 128 else 3))
            local[p, b] += 1
        else:
            seen[p] = 1
        last[p] = a
        if gstate[0]:
            d = a - gstate[1]
            if d < 0:
                d = -d
            b = 0 if d == 0 else (1 if d <= 8 else (2 if d <= 128 else 3))
            glob[b] += 1
        else:
            gstate[0] = 1
        gstate[1] = a


class StrideAnalyzer(Analyzer):
    """XAPP's locStride*/gStride* (``docs/features.md``, "Memory strides")."""

    family = "stride"

    def __init__(self) -> None:
        super().__init__()
        self.last = np.zeros(0, np.int64)
        self.seen = np.zeros(0, np.uint8)
        self.local = np.zeros((0, 4), np.int64)
        self.glob = np.zeros(4, np.int64)
        self.gstate = np.zeros(2, np.int64)

    def consume(self, chunk: TraceChunk) -> None:
        if not len(chunk):
            return
        npc = self.pc_capacity(chunk)
        self.last = grow_1d(self.last, npc)
        self.seen = grow_1d(self.seen, npc)
        self.local = grow_1d(self.local, npc)
        _xapp_strides(chunk.op, chunk.pc, chunk.addr, self.last, self.seen, self.local, self.glob, self.gstate)
        self.n += len(chunk)

    def result(self) -> dict[str, float]:
        loc = self.local.sum(axis=0) if self.local.shape[0] else np.zeros(4, np.int64)
        lt, gt = int(loc.sum()), int(self.glob.sum())
        out = {}
        for k, b in enumerate(XAPP_STRIDE_BUCKETS):
            out[f"locStride{b}"] = ratio(loc[k], lt)
        for k, b in enumerate(XAPP_STRIDE_BUCKETS):
            out[f"gStride{b}"] = ratio(self.glob[k], gt)
        return out

    def contributions(self) -> dict[str, dict[int, float]]:
        col = self.local[:, 3] if self.local.shape[0] else np.zeros(0, np.int64)
        nz = np.flatnonzero(col)
        return {"locStrideOther": {int(p): float(col[p]) for p in nz}}


@njit(cache=True, inline="always")
def _mica_bucket(d):
    if d == 0:
        return 0
    if d <= 8:
        return 1
    if d <= 64:
        return 2
    if d <= 512:
        return 3
    if d <= 4096:
        return 4
    if d <= 32768:
        return 5
    if d <= 262144:
        return 6
    return 7


@njit(cache=True, nogil=True)
def _mica_strides(op, pc, addr, size, last_end, seen, hist, gstate):
    # hist rows: 0 local load, 1 local store, 2 global load, 3 global store
    # gstate: [load seen, load last end, store seen, store last end]
    for i in range(op.shape[0]):
        o = op[i]
        if o != LOAD and o != STORE:
            continue
        a = addr[i]
        e = a + size[i]
        p = pc[i]
        k = 0 if o == LOAD else 1
        if seen[p]:
            d = a - last_end[p]
            if d < 0:
                d = -d
            hist[k, _mica_bucket(d)] += 1
        else:
            seen[p] = 1
        last_end[p] = e
        if gstate[2 * k]:
            d = a - gstate[2 * k + 1]
            if d < 0:
                d = -d
            hist[2 + k, _mica_bucket(d)] += 1
        else:
            gstate[2 * k] = 1
        gstate[2 * k + 1] = e


class MicaStrideAnalyzer(Analyzer):
    """MICA's stride histograms: distance from the end of the previous access, reads and writes apart."""

    family = "mica_stride"
    ROWS = ("mica_locLoadStride", "mica_locStoreStride", "mica_gLoadStride", "mica_gStoreStride")

    def __init__(self) -> None:
        super().__init__()
        self.last_end = np.zeros(0, np.int64)
        self.seen = np.zeros(0, np.uint8)
        self.hist = np.zeros((4, len(MICA_STRIDE_BOUNDS) + 1), np.int64)
        self.gstate = np.zeros(4, np.int64)

    def consume(self, chunk: TraceChunk) -> None:
        if not len(chunk):
            return
        npc = self.pc_capacity(chunk)
        self.last_end = grow_1d(self.last_end, npc)
        self.seen = grow_1d(self.seen, npc)
        _mica_strides(chunk.op, chunk.pc, chunk.addr, chunk.size, self.last_end, self.seen, self.hist, self.gstate)
        self.n += len(chunk)

    def result(self) -> dict[str, float]:
        out = {}
        for r, name in enumerate(self.ROWS):
            row = self.hist[r]
            total = int(row.sum())
            cum = np.cumsum(row)
            for k, bound in enumerate(MICA_STRIDE_BOUNDS):
                out[f"{name}_le{bound}"] = ratio(cum[k], total)
        return out
