"""Synthetic traces with a realistic instruction mix, for benchmarks and tests.

The trace is a loop whose body (15 micro-ops) streams through two arrays, gathers from a third at random
indices, reads a small table, accumulates in floating point, has a data-dependent branch that is taken
10% of the time and a back edge; each iteration is one thread (``tid``). Mix: 4/15 memory, 2/15 control,
5/15 integer, 3/15 floating point, 1/15 MOVE.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from core.trace_schema import Op
from profiler.trace import StaticInstruction, StaticTable, TraceChunk

_A, _B, _C, _D = 0x10000000, 0x20000000, 0x30000000, 0x40000000
_GATHER = 1 << 20  # elements of the gathered array (8 MiB)

#: (op, dst, src1, src2, source text) of the loop body, in order; pc = position + 1
BODY = (
    (Op.LOAD, 1, 10, 0, "x = a[i]"),
    (Op.LOAD, 2, 11, 0, "y = b[idx[i]]"),
    (Op.FP_MUL, 3, 1, 2, "p = x * y"),
    (Op.FP_ALU, 4, 4, 3, "acc += p"),
    (Op.INT_ALU, 10, 10, 0, "i += 1 (address of a)"),
    (Op.INT_ALU, 11, 11, 0, "next idx"),
    (Op.LOAD, 5, 12, 0, "w = table[i % 256]"),
    (Op.BRANCH, 0, 5, 0, "if w > limit:"),
    (Op.INT_MUL, 6, 5, 1, "q = w * x"),
    (Op.STORE, 0, 6, 10, "out[i] = q"),
    (Op.FP_DIV, 7, 3, 4, "r = p / acc"),
    (Op.MOVE, 8, 7, 0, "s = r"),
    (Op.INT_ALU, 9, 9, 6, "h ^= q"),
    (Op.INT_ALU, 12, 12, 0, "k += 1"),
    (Op.BRANCH, 0, 12, 0, "for i in range(n):"),
)
BODY_LEN = len(BODY)


def static_table(file: str = "synthetic.py") -> StaticTable:
    """The static table of the synthetic loop (pc 1..15, lines 10..24)."""
    return StaticTable(
        StaticInstruction(pc=k + 1, file=file, line=10 + k, col=4, text=text, function="kernel")
        for k, (_, _, _, _, text) in enumerate(BODY)
    )


def synthetic_trace(n: int, seed: int = 0, start: int = 0) -> TraceChunk:
    """Records ``start .. start + n - 1`` of the synthetic trace (deterministic for a seed).

    Parameters
    ----------
    n : number of records
    seed : random seed of the gather indices and branch outcomes
    start : index of the first record (so a long trace can be generated chunk by chunk)

    Returns
    -------
    TraceChunk
    """
    idx = np.arange(start, start + n, dtype=np.int64)
    it = idx // BODY_LEN
    pos = idx % BODY_LEN
    body_op = np.array([b[0] for b in BODY], np.uint8)
    body_dst = np.array([b[1] for b in BODY], np.int32)
    body_s1 = np.array([b[2] for b in BODY], np.int32)
    body_s2 = np.array([b[3] for b in BODY], np.int32)
    # per-iteration random numbers, a pure function of (seed, iteration): same trace however it is cut
    with np.errstate(over="ignore"):  # multiplication modulo 2^64 is the point
        mix = it.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64((seed * 0xBF58476D1CE4E5B9) % 2**64)
        mix ^= mix >> np.uint64(31)
        mix *= np.uint64(0x94D049BB133111EB)
        mix ^= mix >> np.uint64(29)
    rnd = (mix >> np.uint64(11)).astype(np.int64)
    addr = np.zeros(n, np.int64)
    size = np.zeros(n, np.int32)
    taken = np.zeros(n, np.uint8)
    op = body_op[pos]
    m = pos == 0
    addr[m], size[m] = _A + 8 * it[m], 8
    m = pos == 1
    addr[m], size[m] = _B + 8 * (rnd[m] % _GATHER), 8
    m = pos == 6
    addr[m], size[m] = _C + 4 * (it[m] % 256), 4
    m = pos == 9
    addr[m], size[m] = _D + 8 * it[m], 8
    m = pos == 7
    taken[m] = ((rnd[m] >> 20) % 10 == 0).astype(np.uint8)
    m = pos == 14
    taken[m] = ((it[m] + 1) % 1000 != 0).astype(np.uint8)
    return TraceChunk(
        pc=(pos + 1).astype(np.int32), op=op, taken=taken, src1=body_s1[pos], src2=body_s2[pos],
        src3=np.zeros(n, np.int32), dst=body_dst[pos], addr=addr, size=size, tid=it,
    )


def synthetic_chunks(n: int, chunk_records: int = 1 << 20, seed: int = 0) -> Iterator[TraceChunk]:
    """The synthetic trace of ``n`` records as consecutive chunks (generated lazily, bounded memory)."""
    for start in range(0, n, chunk_records):
        yield synthetic_trace(min(chunk_records, n - start), seed=seed, start=start)
