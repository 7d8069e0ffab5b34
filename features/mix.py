"""Instruction mix: XAPP's mem, ctrl, arith, fp, mul, div, rem, spf, Portcast's fp64 (the double-precision
share of the floating-point records) and MICA's per-class fractions."""

from __future__ import annotations

import numpy as np
from numba import njit

from core.trace_schema import FP32_OPS, FP64_OPS, N_OPS, Op
from profiler.trace import TraceChunk

from ._base import Analyzer, ratio


@njit(cache=True, nogil=True)
def _count_ops(op, counts):
    for i in range(op.shape[0]):
        counts[op[i]] += 1


def count_ops(chunk: TraceChunk, counts: np.ndarray) -> None:
    """Add ``chunk``'s records per operation class to ``counts`` (int64, :data:`core.trace_schema.N_OPS` long):
    the one op-class histogram every consumer uses (the mix features, a profile's summary, the counter-like
    vector of :mod:`features.counters`)."""
    if len(chunk):
        _count_ops(chunk.op, counts)


def op_counts(chunks) -> np.ndarray:
    """Records per operation class over a stream of chunks (int64, :data:`core.trace_schema.N_OPS` long)."""
    counts = np.zeros(N_OPS, np.int64)
    for chunk in chunks:
        count_ops(chunk, counts)
    return counts


#: op-class groups of the instruction mix a region summary shows (mem, ctrl, int, fp, other): the terminal's
#: table, the JSON and HTML report and ``portcast trace-info``
MIX_GROUPS = (
    ("mem", ("LOAD", "STORE")),
    ("ctrl", ("BRANCH", "JUMP", "CALL", "RET")),
    ("int", ("INT_ALU", "INT_MUL", "INT_DIV", "INT_REM")),
    ("fp", ("FP_ALU", "FP_MUL", "FP_DIV", "FP_SPECIAL", "FP64_ALU", "FP64_MUL", "FP64_DIV", "FP64_SPECIAL")),
    ("other", ("MOVE", "OTHER")),
)


def mix_fractions(counts: np.ndarray) -> dict[str, float]:
    """Instruction-mix fractions (:data:`MIX_GROUPS`) of per-op-class counts (:func:`op_counts`)."""
    total = int(counts.sum())
    return {name: (sum(int(counts[Op[o]]) for o in ops) / total if total else 0.0) for name, ops in MIX_GROUPS}


class MixAnalyzer(Analyzer):
    """Counts records per operation class (``docs/features.md``, "Instruction mix")."""

    family = "mix"

    def __init__(self) -> None:
        super().__init__()
        self.counts = np.zeros(N_OPS, np.int64)

    def consume(self, chunk: TraceChunk) -> None:
        count_ops(chunk, self.counts)
        self.n += len(chunk)

    def result(self) -> dict[str, float]:
        c = self.counts
        n = self.n
        fp32 = int(c[list(FP32_OPS)].sum())
        fp64 = int(c[list(FP64_OPS)].sum())
        out = {
            "mem": ratio(c[Op.LOAD] + c[Op.STORE], n),
            "ctrl": ratio(c[Op.BRANCH] + c[Op.JUMP] + c[Op.CALL] + c[Op.RET], n),
            "arith": ratio(c[Op.INT_ALU] + c[Op.INT_MUL] + c[Op.INT_DIV] + c[Op.INT_REM], n),
            "fp": ratio(fp32 + fp64, n),
            "mul": ratio(c[Op.INT_MUL] + c[Op.FP_MUL] + c[Op.FP64_MUL], n),
            "div": ratio(c[Op.INT_DIV] + c[Op.FP_DIV] + c[Op.FP64_DIV], n),
            "rem": ratio(c[Op.INT_REM], n),
            "spf": ratio(c[Op.FP_SPECIAL] + c[Op.FP64_SPECIAL], n),
            "fp64": ratio(fp64, fp32 + fp64),
        }
        for o in Op:
            out[f"mica_mix_{o.name}"] = ratio(c[o], n)
        out["mica_instructions"] = float(n)
        return out
