"""Branch divergence: XAPP's Lbdiv_W (per static branch) and Gbdiv_W (global outcome sequence)."""

from __future__ import annotations

import numpy as np
from numba import njit

from core.trace_schema import Op
from profiler.trace import TraceChunk

from ._base import Analyzer, grow_1d, ratio

BRANCH = np.uint8(Op.BRANCH)
BDIV_WINDOWS = (16, 32, 64, 128, 256, 512, 1024)


@njit(cache=True, nogil=True)
def _bdiv(op, pc, taken, windows, masks, pow2, cnt, run, last, div, gstate, gdiv):
    """A group of W outcomes ends when count % W == 0; it is uniform iff the run of equal outcomes ending
    there is at least W long. gstate = [count, run, last outcome] of the global sequence."""
    nw = windows.shape[0]
    m0 = masks[0]
    gc = gstate[0]
    gr = gstate[1]
    gl = gstate[2]
    for i in range(op.shape[0]):
        if op[i] != BRANCH:
            continue
        t = taken[i]
        p = pc[i]
        c = cnt[p] + 1
        cnt[p] = c
        r = run[p] + 1 if (c > 1 and last[p] == t) else 1
        run[p] = r
        last[p] = t
        # with power-of-two windows no group ends unless a group of the smallest window does
        if not pow2 or (c & m0) == 0:
            for k in range(nw):
                w = windows[k]
                end = (c & masks[k]) == 0 if pow2 else (c % w) == 0
                if end and r < w:
                    div[p, k] += 1
        gc += 1
        gr = gr + 1 if (gc > 1 and gl == t) else 1
        gl = t
        if not pow2 or (gc & m0) == 0:
            for k in range(nw):
                w = windows[k]
                end = (gc & masks[k]) == 0 if pow2 else (gc % w) == 0
                if end and gr < w:
                    gdiv[k] += 1
    gstate[0] = gc
    gstate[1] = gr
    gstate[2] = gl


class BranchDivergenceAnalyzer(Analyzer):
    """XAPP's Lbdiv_W / Gbdiv_W (``docs/features.md``, "Branch divergence").

    Parameters
    ----------
    windows : group sizes W (default 16, 32, ..., 1024)
    """

    family = "bdiv"

    def __init__(self, windows=BDIV_WINDOWS) -> None:
        super().__init__()
        self.windows = np.asarray(sorted(set(int(w) for w in windows)), np.int64)
        if self.windows.size == 0 or self.windows[0] < 1:
            raise ValueError(f"branch divergence windows must be >= 1, got {list(windows)}")
        self.pow2 = bool(np.all((self.windows & (self.windows - 1)) == 0))
        self.masks = self.windows - 1
        self.cnt = np.zeros(0, np.int64)
        self.run = np.zeros(0, np.int64)
        self.last = np.zeros(0, np.uint8)
        self.div = np.zeros((0, self.windows.size), np.int64)
        self.gstate = np.zeros(3, np.int64)
        self.gdiv = np.zeros(self.windows.size, np.int64)

    def consume(self, chunk: TraceChunk) -> None:
        if not len(chunk):
            return
        npc = self.pc_capacity(chunk)
        self.cnt = grow_1d(self.cnt, npc)
        self.run = grow_1d(self.run, npc)
        self.last = grow_1d(self.last, npc)
        self.div = grow_1d(self.div, npc)
        _bdiv(chunk.op, chunk.pc, chunk.taken, self.windows, self.masks, self.pow2, self.cnt, self.run,
              self.last, self.div, self.gstate, self.gdiv)
        self.n += len(chunk)

    def result(self) -> dict[str, float]:
        out = {}
        for k, w in enumerate(self.windows):
            groups = int((self.cnt // w).sum())
            out[f"Lbdiv_{w}"] = ratio(self.div[:, k].sum(), groups)
        for k, w in enumerate(self.windows):
            out[f"Gbdiv_{w}"] = ratio(self.gdiv[k], self.gstate[0] // w)
        return out

    def contributions(self) -> dict[str, dict[int, float]]:
        out = {}
        for k, w in enumerate(self.windows):
            col = self.div[:, k]
            out[f"Lbdiv_{w}"] = {int(p): float(col[p]) for p in np.flatnonzero(col)}
        return out
