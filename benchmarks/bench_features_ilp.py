"""ILP and register-traffic analyzers alone, with pytest-benchmark (CPU time per record).

Run:  .venv/bin/python -m pytest benchmarks/bench_features_ilp.py --benchmark-enable -p no:cacheprovider \\
          --benchmark-timer time.process_time

Each benchmark feeds 4 x 2^20 records in chunks of 2^20 to one analyzer and stores ``ns_per_record`` (best
round, CPU time of this process) and ``cpu_records_per_s`` (M records per CPU-second) in ``extra_info``
(``--benchmark-json=FILE`` keeps them). Traces: the synthetic loop of ``features/synthetic_trace.py`` (the
engine's benchmark trace), a serial chain (every record depends on the previous one: ILP 1, the window
clocks advance on every record, the worst case of the lane pass's event branch), random registers and
blocks (irregular events, many live blocks) and narrow elements (a loop over 4-byte and 1-byte arrays:
every STORE writes part of an 8-byte word, the byte-exact path of ILP's memory dependences).
``test_ilp_refs`` feeds ILP as the engine does next to footprint or reuse: the blocks as the engine's dense
ids (``IlpAnalyzer.consume_refs``), mapped outside the timing. ``PORTCAST_BENCH_BASELINE=DIR`` puts ``DIR``
first on the import path before ``features`` is imported, so an older copy of the package can be measured
with the same file (``DIR/features``).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pytest

if os.environ.get("PORTCAST_BENCH_BASELINE"):
    sys.path.insert(0, os.environ["PORTCAST_BENCH_BASELINE"])

from core.trace_schema import Op  # noqa: E402
from features import IlpAnalyzer, RegisterTrafficAnalyzer  # noqa: E402
from features.synthetic_trace import synthetic_trace  # noqa: E402
from profiler.trace import TraceChunk  # noqa: E402

CHUNK = 1 << 20
N = 4 * CHUNK


def _serial(n: int, start: int) -> TraceChunk:
    ones = np.ones(n, np.int32)
    return TraceChunk.from_columns(pc=ones, op=np.full(n, Op.INT_ALU, np.uint8), src1=ones, dst=ones)


def _random(n: int, start: int) -> TraceChunk:
    rng = np.random.default_rng(start)
    op = rng.choice([Op.LOAD, Op.STORE, Op.INT_ALU, Op.FP_MUL], size=n, p=[0.3, 0.1, 0.4, 0.2])
    mem = (op == Op.LOAD) | (op == Op.STORE)
    return TraceChunk.from_columns(
        pc=np.ones(n, np.int32), op=op, src1=rng.integers(0, 32, n), src2=rng.integers(0, 32, n),
        dst=rng.integers(0, 32, n), addr=np.where(mem, rng.integers(0, 1 << 16, n) * 8, 0),
        size=np.where(mem, 8, 0))


def _narrow(n: int, start: int) -> TraceChunk:
    """``y[i] = x[i] * y[i] + c; f[i] = 1`` over float32 ``x``, ``y`` and a byte array ``f`` (8 records an
    iteration: the 4-byte and 1-byte elements share words with their neighbours)."""
    idx = np.arange(start, start + n, dtype=np.int64)
    it, pos = idx // 8, idx % 8
    body_op = np.array([Op.LOAD, Op.LOAD, Op.FP_MUL, Op.FP_ALU, Op.STORE, Op.STORE, Op.INT_ALU, Op.BRANCH], np.uint8)
    body_dst = np.array([1, 2, 3, 4, 0, 0, 5, 0], np.int32)
    body_s1 = np.array([5, 5, 1, 3, 4, 6, 5, 5], np.int32)
    body_s2 = np.array([0, 0, 2, 0, 5, 5, 0, 0], np.int32)
    base = np.array([0x10000000, 0x20000000, 0, 0, 0x20000000, 0x30000000, 0, 0], np.int64)
    width = np.array([4, 4, 0, 0, 4, 1, 0, 0], np.int64)
    return TraceChunk.from_columns(
        pc=(pos + 1).astype(np.int32), op=body_op[pos], taken=(pos == 7).astype(np.uint8), src1=body_s1[pos],
        src2=body_s2[pos], dst=body_dst[pos], addr=base[pos] + width[pos] * it, size=width[pos], tid=it)


TRACES = {"synthetic": lambda n, s: synthetic_trace(n, seed=7, start=s), "serial": _serial, "random": _random,
          "narrow": _narrow}


@pytest.fixture(scope="module", params=list(TRACES))
def pool(request):
    make = TRACES[request.param]
    return [make(CHUNK, k * CHUNK) for k in range(N // CHUNK)]


def _run(cls, pool):
    a = cls()
    for c in pool:
        a.consume(c)
    return a.result()


def _timed(benchmark, run):
    """Best CPU time of three rounds of ``run()``, as ``ns_per_record`` and ``cpu_records_per_s`` in extra_info."""
    cpu = []

    def timed():
        t0 = time.process_time()
        out = run()
        cpu.append(time.process_time() - t0)
        return out

    benchmark.pedantic(timed, rounds=3, iterations=1)
    best = min(cpu)
    benchmark.extra_info["records"] = N
    benchmark.extra_info["ns_per_record"] = best / N * 1e9
    benchmark.extra_info["cpu_records_per_s"] = N / best / 1e6


def _bench(benchmark, cls, pool):
    a = cls()
    a.consume(pool[0].slice(0, 20_000))  # compile / load the Numba cache outside the timing
    a.result()
    _timed(benchmark, lambda: _run(cls, pool))


def test_ilp(benchmark, pool):
    """Goal (issue 3, round 3): <= 12 ns per record on the synthetic trace, seven windows."""
    _bench(benchmark, IlpAnalyzer, pool)


def test_ilp_refs(benchmark, pool):
    """ILP as the engine feeds it next to footprint or reuse: blocks as the engine's dense ids (the bytes
    within them from the addresses), mapped outside the timing."""
    from features.fast.blocks import BlockMap, BlockRefs

    if not hasattr(IlpAnalyzer, "consume_refs"):
        pytest.skip("this copy of features/ has no ILP on block ids (before round 4)")
    bm = BlockMap()
    maps = []
    for c in pool:
        r = bm.map(c)
        maps.append((r.rec.copy(), r.off.copy(), r.ids.copy(), r.n_before, r.n_after))

    def run():
        a = IlpAnalyzer()
        for c, m in zip(pool, maps):
            a.consume_refs(c, BlockRefs(*m))
        return a.result()

    run()
    _timed(benchmark, run)


def test_regs(benchmark, pool):
    """Goal (issue 3, round 3): <= 3 ns per record on the synthetic trace."""
    _bench(benchmark, RegisterTrafficAnalyzer, pool)
