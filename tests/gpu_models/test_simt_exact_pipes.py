"""The SIMT kernel's pipeline-waiting slots and scan masks, pinned.

Since round 4 of the speed work (docs/simt.md), a scheduler slot whose warp waits only for its busy pipeline
is kept in a per-pipeline bit mask instead of being checked every cycle, and the slot scan visits only the
slots of a per-scheduler mask (slots 63 and above always). The numbers below were recorded with the kernel
before that change (commit 4e5bf1e) on cases that exercise its edges:

* slow floating-point pipelines (4 and 1 lanes: a warp instruction holds the pipeline 8 or 32 cycles) next
  to loads waiting for very few MSHRs / store-queue entries, so that a pipeline's free cycle often equals a
  memory-blocked slot's bound and the scan order decides whether the scheduler's bound "came from a memory
  resource" (``mem_blocked_cycles``, the CRISP timeline's blocked cycles);
* one scheduler with 64 slots (H100, 2-warp blocks), so slot 63 lies beyond the 63-bit masks, with block
  turnover on one SM;
* the GTX 480 preset on a streaming kernel with much computation (the pipeline-bound case the change is for).

All three were recorded again on 2026-11-28, when stores became posted (a store-queue entry frees when the L2
takes the sector, no longer after the L2 round trip; docs/simt.md). The first case got an L2 that takes a
sector every 64 ns, so that its two store-queue entries still fill and block.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config
from gpu_models.simt.model import _kernel_args, _run
from gpu_models.simt.threads import build_streams

_CHUNKS = {
    "stream-f4-l1": lambda: sy.stream_kernel(512, flops=4, loads=1),
    "stream-f2-l2": lambda: sy.stream_kernel(4096, flops=2, loads=2),
    "stream-f16-l2": lambda: sy.stream_kernel(1024, flops=16),
}

# (kernel, block size, gpu, changes to the preset, SMs, core MHz, memory MHz): the first 25 statistics, the SM
# that finishes last, and for the run recording it: issue cycles, resource-blocked cycles, sums of the
# load-miss issue and return cycles, number of load misses
_CASES = [
    (("stream-f4-l1", 64, "gtx480",
      {"lanes": {"int": 16, "fp": 4, "sfu": 4, "fp64": 2}, "mshr_per_sm": 8, "store_queue_per_sm": 2,
       "schedulers_per_sm": 1, "l2_bytes_per_ns": 0.5},
      1, 100.0, 924.0),
     [806, 0, 64, 0, 16, 16, 2048, 0, 64, 0, 128, 64, 0, 64, 64, 806, 7478, 32, 512, 96, 192, 0, 0, 96, 1459],
     0, [96, 192, 4704, 6163, 16]),
    (("stream-f2-l2", 64, "h100",
      {"lanes": {"int": 16, "fp": 1, "sfu": 4, "fp64": 16}, "mshr_per_sm": 8, "store_queue_per_sm": 1,
       "schedulers_per_sm": 1},
      1, 100.0, 924.0),
     [8218, 0, 256, 0, 256, 128, 8192, 0, 1024, 0, 1536, 1024, 0, 1024, 512, 8218, 391741, 384, 8192, 640, 1637,
      0, 0, 640, 12544],
     0, [640, 1637, 797826, 810370, 256]),
    (("stream-f16-l2", 256, "gtx480", {}, 2, 700.0, 924.0),
     [561, 0, 512, 0, 64, 32, 16384, 0, 256, 0, 384, 256, 0, 256, 128, 1121, 14528, 96, 1024, 400, 0, 0, 0, 608,
      18016],
     1, [200, 0, 496, 9520, 32]),
]


@pytest.mark.parametrize("case,expected,track,tracked", _CASES, ids=[c[0][0] + "-" + c[0][2] for c in _CASES])
def test_pipeline_waiting_slots_reproduce_recorded_numbers(case, expected, track, tracked):
    kernel, block, gpu, changes, sm, core, mem = case
    cfg = load_config(gpu)
    if changes:
        cfg = cfg.replace(**changes)
    args = _kernel_args(build_streams(_CHUNKS[kernel](), block), cfg, sm, core, mem)
    stats, sm_end, *_ = _run(*args, -1)
    np.testing.assert_array_equal(stats[:25], np.array(expected, np.float64))
    assert int(np.argmax(sm_end)) == track
    stats2, _, ti, tb, li, lr = _run(*args, track)
    np.testing.assert_array_equal(stats2[:25], stats[:25])
    assert [int(ti.sum()), int(tb.sum()), int(li.sum()), int(lr.sum()), len(li)] == tracked


def test_pipeline_waiting_slots_are_not_checked_each_cycle():
    # the GTX 480 streaming case: 16-lane pipelines are busy for 2 cycles per warp instruction, and the warps
    # that wait only for them are no longer re-checked on the cycle after each issue (2958 checks before)
    args = _kernel_args(build_streams(_CHUNKS["stream-f16-l2"](), 256), load_config("gtx480"), 2, 700.0, 924.0)
    stats = _run(*args, -1)[0]
    assert stats[26] < 2958
