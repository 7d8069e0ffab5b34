"""Register traffic's branch-free direct kernel (features/regs.py, ``_regs_direct``) against the reference.

The kernel packs the eight distance buckets into the bytes of one int64 and flushes them every 64 records,
and reads a missing first source through token 0: these tests use traces long enough to cross many flushes,
with distances on both sides of every bucket bound (1, 2, 4, ..., 64, 65) and far beyond, registers read
before any write, and every chunk size from 1 up, and compare the exact counts.
"""

import numpy as np
from featref import records, regs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features import RegisterTrafficAnalyzer
from features.regs import DEP_BOUNDS
from profiler.trace import TraceChunk


def _counts(rt):
    return [int(x) for x in rt.counts], [int(x) for x in rt.hist]


def _ref_counts(recs):
    """(reads, produced, writes) and the bucket histogram, straight from the definition."""
    last, reads, produced, writes, hist = {}, 0, 0, 0, [0] * 8
    for i, r in enumerate(recs):
        for s in (r["src1"], r["src2"], r["src3"]):
            if s:
                reads += 1
                if s in last:
                    produced += 1
                    d = i - last[s]
                    hist[next((k for k, b in enumerate(DEP_BOUNDS) if d <= b), 7)] += 1
        if r["dst"]:
            writes += 1
            last[r["dst"]] = i
    return [reads, produced, writes], hist


def _chunk(src, dst):
    n = len(dst)
    return TraceChunk.from_columns(pc=np.ones(n, np.int32), op=np.full(n, Op.INT_ALU, np.uint8),
                                   src1=src[0], src2=src[1], src3=src[2], dst=dst)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(1, 700), st.sampled_from([2, 5, 40, 300]),
       st.sampled_from([1, 7, 63, 64, 65, 4096]))
def test_direct_kernel_counts_equal_the_definition(seed, n, n_regs, chunk_records):
    rng = np.random.default_rng(seed)
    # sparse second/third sources (as in real code), some registers never written
    src = rng.integers(0, n_regs + 3, size=(3, n)) * (rng.random((3, n)) < [[0.9], [0.5], [0.1]])
    dst = rng.integers(0, n_regs, size=n) * (rng.random(n) < 0.7)
    chunk = _chunk(src, dst)
    rt = RegisterTrafficAnalyzer()
    for c in chunk.split(chunk_records):
        rt.consume(c)
    assert rt.direct
    recs = records(chunk)
    assert _counts(rt) == _ref_counts(recs)
    want = regs(recs)
    got = rt.result()
    assert got == want


def test_distances_at_every_bucket_bound():
    """Register r_k is written once, then read exactly d records later, for d = 1 .. 70 and 1000; a read of a
    register never written counts as a read only."""
    ds = list(range(1, 71)) + [1000]
    n = 1100
    src = np.zeros((3, n), np.int64)
    dst = np.zeros(n, np.int64)
    for k, d in enumerate(ds):
        w = k  # writer position, one register per distance
        dst[w] = k + 1
        src[k % 3, w + d] = k + 1 if src[k % 3, w + d] == 0 else src[k % 3, w + d]
    src[1, n - 1] = 5000  # never written
    chunk = _chunk(src, dst)
    rt = RegisterTrafficAnalyzer()
    rt.consume(chunk)
    recs = records(chunk)
    (reads, produced, writes), hist = _ref_counts(recs)
    assert _counts(rt) == ([reads, produced, writes], hist)
    # by construction every distance is read once: buckets <=1: 1, (1,2]: 1, (2,4]: 2, ..., (32,64]: 32, >64: 7
    assert hist == [1, 1, 2, 4, 8, 16, 32, 7]
