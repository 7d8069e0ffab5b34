"""The SIMT kernel under MSHR / store-queue pressure, pinned.

The MSHRs and the store queue of an SM are kept as a sorted window of free cycles (docs/simt.md "Speed");
before that they were arrays searched round-robin for a free entry, else the earliest-free one. The numbers
below were recorded with that earlier kernel on configurations with very few entries (8 MSHRs for 32-sector
gathers, so a load needs more entries than exist; 3-5 store-queue entries), where almost every memory
instruction waits for entries and the blocked-cycle accounting (``mem_blocked_cycles``, CRISP's store stalls)
depends on every entry's free cycle. The faster kernel must reproduce them exactly.

The scatter case was recorded again on 2026-11-28, when stores became posted (an entry frees when the L2
takes the sector, no longer after the L2 round trip; docs/simt.md); three entries still block it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config
from gpu_models.simt.model import STAT_NAMES, _kernel_args, _run
from gpu_models.simt.threads import build_streams

_CHUNKS = {
    "gather": lambda: sy.gather_kernel(1024, 3, 4),
    "scatter": lambda: sy.scatter_store_kernel(1024, 3, 4),
    "chase": lambda: sy.chase_kernel(512, 4, 2),
}

# (kernel, gpu, MSHRs, store-queue entries, SMs, core MHz, memory MHz, block size): the first 25 statistics,
# the SM that finishes last, and for the run recording it: issue cycles, resource-blocked cycles, sums of the
# load-miss issue and return cycles, number of load misses
_CASES = [
    (("gather", "gtx480", 8, 4, 3, 500.0, 616.0, 128),
     [29001, 0, 384, 0, 96, 32, 12288, 0, 3072, 1, 3199, 3071, 0, 3072, 128, 77343, 490096, 800, 768, 419, 35588,
      0, 0, 512, 77292], 1, [157, 13444, 507290, 536274, 36]),
    (("scatter", "gtx480", 8, 3, 2, 800.0, 1386.0, 64),
     [542, 0, 384, 0, 0, 96, 12288, 0, 0, 0, 3072, 0, 0, 0, 3072, 1076, 9789, 768, 768, 440, 135, 0, 0, 480, 0],
     1, [221, 68, 0, 0, 0]),
    (("chase", "h100", 24, 5, 2, 1200.0, 1000.0, 64),
     [36935, 128, 0, 0, 64, 0, 4096, 1, 2047, 0, 2047, 2047, 0, 2048, 0, 73869, 360152, 512, 256, 130, 32088, 0, 0,
      192, 73857], 1, [65, 16044, 572415, 609344, 32]),
]


@pytest.mark.parametrize("case,expected,track,tracked", _CASES, ids=[c[0][0] for c in _CASES])
def test_few_entries_reproduce_recorded_numbers(case, expected, track, tracked):
    kernel, gpu, mshr, sq, sm, core, mem, block = case
    cfg = dataclasses.replace(load_config(gpu), mshr_per_sm=mshr, store_queue_per_sm=sq)
    streams = build_streams(_CHUNKS[kernel](), block)
    args = _kernel_args(streams, cfg, sm, core, mem)
    stats, sm_end, *_ = _run(*args, -1)
    assert STAT_NAMES[20] == "mem_blocked_cycles" and stats[20] > 0  # the entries do limit these runs
    np.testing.assert_array_equal(stats[:25], np.array(expected, np.float64))
    assert int(np.argmax(sm_end)) == track
    stats2, _, ti, tb, li, lr = _run(*args, track)
    np.testing.assert_array_equal(stats2[:25], stats[:25])
    assert [int(ti.sum()), int(tb.sum()), int(li.sum()), int(lr.sum()), len(li)] == tracked
