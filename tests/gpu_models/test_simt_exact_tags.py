"""The kernel's compact cache state: dense sector tags, packed LRU words, per-streams tables.

The L1 and L2 keep a set's ways as packed words (LRU stamp << 32 | dirty << 31 | tag) whose tag is the
sector's number among the distinct sectors of the streams, plus one (``model._access_table``). These tests pin
what that must preserve: sectors far apart that share their sets stay distinct, the numbers of a run do not
depend on which sector numbers a trace uses (only on which accesses touch the same sector), and the cached
tables are the values they stand for.
"""

from __future__ import annotations

import numpy as np

from core.trace_schema import Op
from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config
from gpu_models.simt.model import STAT_NAMES, _access_table, _kernel_args, _run
from gpu_models.simt.threads import build_streams
from profiler.trace import TraceChunk

GTX = load_config("gtx480")


def _chained_loads(addrs, store_at=None):
    """One thread loading ``addrs`` one after the other (each load's address register is the previous load's
    result), optionally storing to ``store_at`` at the end."""
    rows = [(1 + i, Op.LOAD, 0, 5, 0, 0, 5, a, 4, 0) for i, a in enumerate(addrs)]
    if store_at is not None:
        rows.append((1 + len(addrs), Op.STORE, 0, 5, 0, 0, 0, store_at, 4, 0))
    return build_streams(TraceChunk.from_records(rows), 32)


def _stats(streams, cfg=GTX, sm=1):
    st = _run(*_kernel_args(streams, cfg, sm, cfg.core_mhz, cfg.mem_mhz), -1)[0]
    return dict(zip(STAT_NAMES[:25], st[:25].tolist()))


def test_far_apart_sectors_in_the_same_sets_stay_distinct():
    # sector B = A + 2**31 * (L1 sets) * (L2 sets): the same L1 and L2 set as A, and equal to A in the low 31
    # bits of any per-set tag; A B A B must miss twice (cold) and hit twice in the 4-way L1
    a = 1 << 12
    far = 32 * (1 << 31) * GTX.l1_sets * GTX.l2_sets
    s = _stats(_chained_loads([a, a + far, a, a + far]))
    assert (s["load_instructions"], s["l1_misses"], s["l1_hits"], s["l2_misses"], s["dram_read_sectors"]) == \
        (4, 2, 2, 2, 2)


def test_numbers_depend_only_on_which_accesses_share_a_sector():
    # the same access pattern with sector numbers 2**31 * sets apart or 1 * sets apart: identical numbers
    a = 1 << 12
    step = 32 * GTX.l1_sets * GTX.l2_sets
    pattern = [0, 1, 2, 3, 4, 0, 1, 5, 2, 0, 6, 3]  # more distinct sectors than L1 ways in one set
    near = _stats(_chained_loads([a + k * step for k in pattern], store_at=a + 2 * step))
    far = _stats(_chained_loads([a + k * step * (1 << 31) for k in pattern], store_at=a + 2 * step * (1 << 31)))
    assert near == far
    # hand-checked LRU: L1 (4 ways) hits only the third 0; the L1 misses 0 1 2 3 4 0 1 5 2 6 3 hit the 8-way L2
    # at the second 0, 1, 2 and 3, and the closing store to 2 hits it too
    assert (near["l1_hits"], near["l1_misses"], near["l2_hits"], near["l2_misses"], near["store_sectors"]) == \
        (1, 11, 5, 7, 1)


def test_dirty_write_backs_with_packed_words():
    # a 1-set, 2-way L2: store S (write-allocate, dirty), load X, load Y evicts S (dirty: one DRAM write),
    # load S again misses; the L1 (2 sets) never holds S, stores do not allocate there
    cfg = GTX.replace(l1_bytes=32 * 2 * 1, l1_ways=1, l2_bytes=32 * 2, l2_ways=2)
    rows = [(1, Op.STORE, 0, 0, 0, 0, 0, 0, 4, 0), (2, Op.LOAD, 0, 0, 0, 0, 5, 32, 4, 0),
            (3, Op.LOAD, 0, 5, 0, 0, 6, 64, 4, 0), (4, Op.LOAD, 0, 6, 0, 0, 7, 0, 4, 0)]
    s = _stats(build_streams(TraceChunk.from_records(rows), 32), cfg)
    assert (s["l2_misses"], s["l2_hits"], s["dram_write_sectors"], s["dram_read_sectors"]) == (4, 0, 1, 3)


def test_access_table_values_and_caching():
    streams = build_streams(sy.gather_kernel(256, loads=2, flops=1), 64)
    tab = _access_table(streams, GTX.l1_sets, GTX.l2_sets)
    sec = streams.sectors
    distinct = np.unique(sec)
    assert tab.dtype == np.int32 and tab.shape == (sec.shape[0], 4)
    np.testing.assert_array_equal(tab[:, 0], np.searchsorted(distinct, sec) + 1)
    np.testing.assert_array_equal(tab[:, 1], sec % GTX.l1_sets)
    np.testing.assert_array_equal(tab[:, 2], sec % GTX.l2_sets)
    assert _access_table(streams, GTX.l1_sets, GTX.l2_sets) is tab  # computed once per streams and geometry
    other = _access_table(streams, 7, 5)
    np.testing.assert_array_equal(other[:, 0], tab[:, 0])
    np.testing.assert_array_equal(other[:, 1:3], np.stack([sec % 7, sec % 5], axis=1))


def test_cached_tables_do_not_change_a_run():
    # first run (tables built) and later runs (tables reused) of a sweep-like sequence give the same numbers,
    # also when a configuration of another geometry comes in between
    streams = build_streams(sy.reuse_kernel(16, 64, 1024, 3), 64)
    h100 = load_config("h100")
    first = _run(*_kernel_args(streams, GTX, 4, 500.0, 924.0), -1)[0]
    _run(*_kernel_args(streams, h100, 8, 1000.0, 1600.0), -1)
    again = _run(*_kernel_args(streams, GTX, 4, 500.0, 924.0), -1)[0]
    np.testing.assert_array_equal(first, again)
