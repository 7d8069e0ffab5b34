"""Small, exact synthetic region traces for validating and benchmarking the SIMT timing model.

Each generator returns a :class:`profiler.trace.TraceChunk` in the trace contract: one logical thread per
``tid``, records in program order (thread after thread, as a sequential run of the parallel loop emits them),
static ids in source order, registers as dependency tokens. Addresses are 4-byte elements of arrays placed
1 GiB apart.
"""

from __future__ import annotations

import numpy as np

from core.trace_schema import Op
from profiler.trace import TraceChunk

ARRAY_SPACING = 1 << 30
ELEM = 4


def _assemble(rows_per_thread: list[np.ndarray]) -> TraceChunk:
    """rows: per thread an (n, 10) int64 array in column order pc, op, taken, src1..3, dst, addr, size, tid."""
    a = np.concatenate(rows_per_thread) if rows_per_thread else np.zeros((0, 10), np.int64)
    return TraceChunk.from_columns(pc=a[:, 0], op=a[:, 1], taken=a[:, 2], src1=a[:, 3], src2=a[:, 4], src3=a[:, 5],
                                   dst=a[:, 6], addr=a[:, 7], size=a[:, 8], tid=a[:, 9])


def _tile(template: np.ndarray, n_threads: int, addr_of) -> TraceChunk:
    """Repeat a per-thread template for threads ``0..n_threads-1`` (thread after thread).

    ``addr_of(tids, template)`` returns the address column for all threads, shape (n_threads, len(template)).
    """
    tids = np.arange(n_threads, dtype=np.int64)
    a = np.tile(template, (n_threads, 1, 1))
    a[:, :, 7] = addr_of(tids, template)
    a[:, :, 9] = tids[:, None]
    return _assemble([a.reshape(-1, template.shape[1])])


def _row(pc, op, s1=0, s2=0, s3=0, dst=0, addr=0, size=0, taken=0):
    return [pc, int(op), taken, s1, s2, s3, dst, addr, size, 0]


def compute_kernel(n_threads: int = 2048, n_ops: int = 64, chains: int = 4, fp64: bool = False) -> TraceChunk:
    """A compute-bound region: ``n_ops`` FP multiply-adds per thread in ``chains`` independent chains.

    Parameters
    ----------
    n_threads, n_ops, chains : int
    fp64 : bool
        Double-precision multiplies (FP64_MUL) instead of single-precision ones (FP_MUL).

    Returns
    -------
    TraceChunk
    """
    op = Op.FP64_MUL if fp64 else Op.FP_MUL
    t = []
    for k in range(n_ops):
        r = 10 + (k % chains)
        t.append(_row(1 + k, op, r, r, 0, r))
    tpl = np.array(t, np.int64)
    return _tile(tpl, n_threads, lambda tids, tp: np.zeros((len(tids), len(tp)), np.int64))


def stream_kernel(n_threads: int = 8192, flops: int = 1, loads: int = 2) -> TraceChunk:
    """A streaming region ``c[i] = f(a[i], b[i], ...)``: ``loads`` coalesced loads, ``flops`` dependent FP
    operations, one store, per thread (arithmetic intensity ``flops / (4 * (loads + 1))`` flop/byte).

    Parameters
    ----------
    n_threads, flops, loads : int

    Returns
    -------
    TraceChunk
    """
    t = []
    pc = 1
    for j in range(loads):
        t.append(_row(pc, Op.LOAD, 1, 0, 0, 20 + j, (j + 1) * ARRAY_SPACING, ELEM))
        pc += 1
    acc = 20
    for k in range(flops):
        other = 20 + (k + 1) % max(loads, 1)
        t.append(_row(pc, Op.FP_MUL, acc, other, 0, 40))
        acc = 40
        pc += 1
    t.append(_row(pc, Op.STORE, acc, 1, 0, 0, (loads + 1) * ARRAY_SPACING, ELEM))
    tpl = np.array(t, np.int64)
    mem = tpl[:, 8] > 0

    def addr(tids, tp):
        return tp[None, :, 7] + np.where(mem[None, :], ELEM * tids[:, None], 0)

    return _tile(tpl, n_threads, addr)


def reuse_kernel(n_blocks: int = 64, block_size: int = 32, chunk_bytes: int = 2048, passes: int = 4,
                 flops: int = 0) -> TraceChunk:
    """Each block re-reads its own ``chunk_bytes`` of data ``passes`` times (thread ``l`` of a block reads
    elements ``l, l + block_size, ...``): a working set of ``chunk_bytes`` per resident block.

    Parameters
    ----------
    n_blocks, block_size, chunk_bytes, passes, flops : int

    Returns
    -------
    TraceChunk
    """
    per_thread = chunk_bytes // (ELEM * block_size)
    rows = []
    for b in range(n_blocks):
        for lane in range(block_size):
            tid = b * block_size + lane
            t = []
            for p in range(passes):
                for e in range(per_thread):
                    a = ARRAY_SPACING + b * chunk_bytes + (e * block_size + lane) * ELEM
                    t.append(_row(1, Op.LOAD, 1, 0, 0, 20, a, ELEM))
                    for k in range(flops):
                        t.append(_row(2 + k, Op.FP_ALU, 20, 30, 0, 30))
            r = np.array(t, np.int64)
            r[:, 9] = tid
            rows.append(r)
    return _assemble(rows)


def divergent_kernel(n_threads: int = 1024, n_ops: int = 32, divergent: bool = True) -> TraceChunk:
    """An if/else with ``n_ops`` FP operations on each side. ``divergent``: even threads take the ``then``
    side, odd threads the ``else`` side (every warp splits); otherwise warps alternate sides as a whole.

    Parameters
    ----------
    n_threads, n_ops : int
    divergent : bool

    Returns
    -------
    TraceChunk
    """
    rows = []
    for tid in range(n_threads):
        then = (tid % 2 == 0) if divergent else ((tid // 32) % 2 == 0)
        t = [_row(1, Op.INT_ALU, 1, 0, 0, 2), _row(2, Op.BRANCH, 2, taken=0 if then else 1)]
        base = 3 if then else 3 + n_ops
        for k in range(n_ops):
            t.append(_row(base + k, Op.FP_MUL, 10 + k % 4, 10 + k % 4, 0, 10 + k % 4))
        t.append(_row(3 + 2 * n_ops, Op.FP_ALU, 10, 11, 0, 12))
        r = np.array(t, np.int64)
        r[:, 9] = tid
        rows.append(r)
    return _assemble(rows)


def gather_kernel(n_threads: int = 4096, loads: int = 4, flops: int = 4, seed: int = 0) -> TraceChunk:
    """Uncoalesced random loads (one 32-byte sector per thread per load) over a 64 MiB table.

    Parameters
    ----------
    n_threads, loads, flops, seed : int

    Returns
    -------
    TraceChunk
    """
    rng = np.random.default_rng(seed)
    t = []
    pc = 1
    for j in range(loads):
        t.append(_row(pc, Op.LOAD, 1, 0, 0, 20 + j, ARRAY_SPACING, ELEM))
        pc += 1
        for k in range(flops):
            t.append(_row(pc, Op.FP_ALU, 20 + j, 30, 0, 30))
            pc += 1
    t.append(_row(pc, Op.STORE, 30, 1, 0, 0, 2 * ARRAY_SPACING, ELEM))
    tpl = np.array(t, np.int64)
    is_load = tpl[:, 1] == Op.LOAD
    is_store = tpl[:, 1] == Op.STORE
    offs = rng.integers(0, (64 << 20) // ELEM, size=(n_threads, int(is_load.sum()))) * ELEM

    def addr(tids, tp):
        a = np.repeat(tp[None, :, 7], len(tids), axis=0)
        a[:, is_load] += offs[tids]
        a[:, is_store] += ELEM * tids[:, None]
        return a

    return _tile(tpl, n_threads, addr)


def scatter_store_kernel(n_threads: int = 4096, stores: int = 4, flops: int = 8, stride: int = 256) -> TraceChunk:
    """Uncoalesced stores ``A[tid * stride] = ...`` (each thread its own sector): a store-queue-bound region.

    Parameters
    ----------
    n_threads, stores, flops, stride : int

    Returns
    -------
    TraceChunk
    """
    t = []
    pc = 1
    for j in range(stores):
        for k in range(flops):
            t.append(_row(pc, Op.FP_MUL, 30, 30, 0, 30))
            pc += 1
        t.append(_row(pc, Op.STORE, 30, 1, 0, 0, (j + 1) * ARRAY_SPACING, ELEM))
        pc += 1
    tpl = np.array(t, np.int64)
    st = tpl[:, 1] == Op.STORE

    def addr(tids, tp):
        return tp[None, :, 7] + np.where(st[None, :], stride * tids[:, None], 0)

    return _tile(tpl, n_threads, addr)


def chase_kernel(n_threads: int = 1024, hops: int = 8, flops: int = 2, seed: int = 0) -> TraceChunk:
    """Dependent random loads (pointer chasing): each load's address comes from the previous load.

    Parameters
    ----------
    n_threads, hops, flops, seed : int

    Returns
    -------
    TraceChunk
    """
    rng = np.random.default_rng(seed)
    t = []
    pc = 1
    for h in range(hops):
        t.append(_row(pc, Op.LOAD, 20, 0, 0, 20, ARRAY_SPACING, ELEM))
        pc += 1
        for k in range(flops):
            t.append(_row(pc, Op.INT_ALU, 20, 0, 0, 31))
            pc += 1
    tpl = np.array(t, np.int64)
    is_load = tpl[:, 1] == Op.LOAD
    offs = rng.integers(0, (64 << 20) // ELEM, size=(n_threads, hops)) * ELEM

    def addr(tids, tp):
        a = np.repeat(tp[None, :, 7], len(tids), axis=0)
        a[:, is_load] += offs[tids]
        return a

    return _tile(tpl, n_threads, addr)


def validation_suite() -> dict[str, TraceChunk]:
    """The synthetic regions used for the CRISP-versus-baselines evaluation (docs/simt.md).

    Returns
    -------
    dict of name -> TraceChunk
    """
    return {
        "compute": compute_kernel(4096, 64),
        "stream": stream_kernel(16384, flops=1),
        "stream-ai4": stream_kernel(16384, flops=48),
        "stream-ai16": stream_kernel(8192, flops=192),
        "gather": gather_kernel(4096, loads=4, flops=8),
        "scatter": scatter_store_kernel(4096, stores=4, flops=16),
        "chase": chase_kernel(2048, hops=6, flops=4),
        "reuse": reuse_kernel(60, 64, 4096, passes=3, flops=2),
        "divergent": divergent_kernel(4096, 48),
    }
