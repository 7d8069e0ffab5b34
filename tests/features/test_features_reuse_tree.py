"""Reuse distance's Fenwick tree (features/reuse.py): the range walk that stops where the two prefix
walks meet, and the append-only insertion of the newest position, across tree compactions and hash
growth, against the literal LRU stack of the reference."""

import numpy as np
import pytest
from featref import records, reuse, reuse_distances

from core.trace_schema import Op
from features import FeatureEngine
from profiler.trace import TraceChunk


def _loads(n, seed):
    """Loads mixing a hot set (recent reuse: short walks), a sweep over 900 blocks (long distances, hash
    growth past the first 512 blocks) and accesses straddling two blocks."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 3, size=n)
    hot = rng.integers(0, 6, size=n) * 64
    sweep = (np.arange(n) % 900) * 64 + 4096
    rand = rng.integers(0, 1200, size=n) * 64 + 60  # 60 + size 8 crosses into the next block
    addr = np.where(kind == 0, hot, np.where(kind == 1, sweep, rand)).astype(np.int64)
    size = np.where(kind == 2, 8, 4).astype(np.int32)
    return TraceChunk.from_columns(pc=1 + kind, op=np.full(n, Op.LOAD), addr=addr, size=size)


@pytest.mark.parametrize("chunk_records", [None, 777])
def test_reuse_histogram_across_compactions(chunk_records):
    chunk = _loads(12000, seed=3)  # > 4096 references: the tree is compacted several times
    e = FeatureEngine(["reuse"])
    for c in (chunk.split(chunk_records) if chunk_records else [chunk]):
        e.consume(c)
    got = e.result()
    want = reuse(records(chunk))
    for name, v in want.items():
        if name in got.index:
            assert float(got[name]) == v, name


def test_reuse_worked_example():
    """Blocks A B C A B B D A: distances cold, cold, cold, 2, 2, 0, cold, 2 -> coldRef 4/8; reuseDist4 4/8
    (all four reuses have distance < 4); histogram: b0 (0 or 1) 1/8, b1 ([2, 4)) 3/8."""
    blocks = [0, 1, 2, 0, 1, 1, 3, 0]
    chunk = TraceChunk.from_columns(pc=np.ones(8, np.int64), op=np.full(8, Op.LOAD),
                                    addr=np.array(blocks, np.int64) * 64, size=np.full(8, 8, np.int32))
    assert reuse_distances(records(chunk)) == [None, None, None, 2, 2, 0, None, 2]
    for cr in (None, 1, 3):
        e = FeatureEngine(["reuse"])
        for c in (chunk.split(cr) if cr else [chunk]):
            e.consume(c)
        got = e.result()
        assert (got["coldRef"], got["reuseDist4"], got["mica_reuse_b0"], got["mica_reuse_b1"]) == \
            (0.5, 0.5, 1 / 8, 3 / 8)
