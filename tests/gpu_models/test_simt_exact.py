"""Every simulated number of the SIMT timing kernel, pinned.

The expected vectors were recorded from the kernel before its speed work (scheduler slot arrays, per-warp
cached operand readiness, compact lazily-zeroed cache sets, cached sorted MSHR / store-queue free times,
written-out L2 access). A faster kernel must reproduce them exactly: the cases cover L2 hits and misses with
write-backs on the 50 MB H100 L2, L1 reuse, store-queue blocking, divergent branches and block turnover on a
single SM. Only ``sim_events`` / ``sim_warp_checks`` (the simulator's own work) are left out.

The scatter case was recorded again on 2026-11-28, when stores became posted (a store-queue entry frees when
the L2 takes the sector, or its dirty victim has left for the DRAM, instead of after the L2 round trip;
docs/simt.md): the same kernel now finishes in 208 cycles instead of 5,201.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config
from gpu_models.simt.model import STAT_NAMES, _kernel_args, _run
from gpu_models.simt.threads import build_streams

_CHUNKS = {
    "gather": lambda: sy.gather_kernel(1024, 3, 4),
    "reuse": lambda: sy.reuse_kernel(16, 64, 1024, 3),
    "scatter": lambda: sy.scatter_store_kernel(1024, 3, 4),
    "divergent": lambda: sy.divergent_kernel(512, 8),
}

# (kernel, gpu, sm_count, core MHz, mem MHz, block size): first 25 statistics (STAT_NAMES[:25]), the SM that
# finishes last, and for the run recording it: issue cycles, resource-blocked cycles, sum of load-miss issue
# cycles, sum of their return cycles, number of load misses
_CASES = [
    (("gather", "h100", 7, 1500.0, 800.0, 64),
     [2260, 0, 384, 0, 96, 32, 12288, 0, 3072, 1, 3199, 3071, 0, 3072, 128, 15750, 71434, 800, 384, 501, 0, 0, 0,
      512, 69568], 1, [90, 0, 13674, 26707, 18]),
    (("reuse", "gtx480", 2, 300.0, 462.0, 64),
     [304, 0, 0, 0, 384, 0, 0, 1024, 512, 0, 512, 512, 0, 1536, 0, 608, 6848, 384, 0, 384, 0, 0, 0, 384, 44928],
     0, [192, 0, 5856, 13600, 64]),
    (("scatter", "gtx480", 15, 700.0, 924.0, 256),
     [208, 0, 384, 0, 0, 96, 12288, 0, 0, 0, 3072, 0, 0, 0, 3072, 818, 4334, 768, 768, 416, 3, 0, 0, 480, 0], 3,
     [105, 3, 0, 0, 0]),
    (("divergent", "h100", 1, 600.0, 1000.0, 32),
     [83, 32, 272, 0, 0, 0, 5632, 0, 0, 0, 0, 0, 0, 0, 0, 83, 1000, 0, 336, 76, 0, 16, 16, 304, 0], 0,
     [76, 0, 0, 0, 0]),
]


@pytest.mark.parametrize("case,expected,track,tracked", _CASES, ids=[c[0][0] for c in _CASES])
def test_kernel_reproduces_recorded_numbers(case, expected, track, tracked):
    kernel, gpu, sm, core, mem, block = case
    streams = build_streams(_CHUNKS[kernel](), block)
    args = _kernel_args(streams, load_config(gpu), sm, core, mem)
    stats, sm_end, *_ = _run(*args, -1)
    assert STAT_NAMES[24] == "load_wait_cycles"
    assert STAT_NAMES[25:] == ("sim_events", "sim_warp_checks", "fp64_instructions")
    np.testing.assert_array_equal(stats[:25], np.array(expected, np.float64))
    assert stats[27] == 0  # these kernels have no double-precision records
    assert int(np.argmax(sm_end)) == track
    stats2, _, ti, tb, li, lr = _run(*args, track)
    np.testing.assert_array_equal(stats2[:25], stats[:25])  # recording does not change the run
    assert [int(ti.sum()), int(tb.sum()), int(li.sum()), int(lr.sum()), len(li)] == tracked


def test_repeated_runs_start_from_empty_caches():
    # the compact cache arrays are allocated uninitialised and zeroed per set on first touch: a second run
    # on the same arguments must see cold caches again
    streams = build_streams(sy.reuse_kernel(16, 64, 1024, 3), 64)
    args = _kernel_args(streams, load_config("h100"), 4, 1000.0, 1600.0)
    a = _run(*args, -1)[0]
    b = _run(*args, -1)[0]
    np.testing.assert_array_equal(a, b)
    assert a[STAT_NAMES.index("l1_misses")] > 0 and a[STAT_NAMES.index("l2_misses")] > 0
