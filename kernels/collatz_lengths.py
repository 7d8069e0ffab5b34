"""Collatz stopping times of consecutive integers (divergent control, integer arithmetic).

CPU region: one iteration of the parallel loop per start value; the ``while`` loop's trip count and
its ``if`` outcome depend on the data in an irregular way. GPU port: one thread per start value; warps
wait for their longest member.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def collatz_lengths(starts):
    """Number of Collatz steps (``n -> n/2`` or ``3n+1``) each start value takes to reach 1.

    Parameters
    ----------
    starts : int64 array of positive integers.

    Returns
    -------
    int64 array of step counts.
    """
    m = starts.shape[0]
    out = np.empty(m, dtype=np.int64)
    for i in numba.prange(m):
        v = starts[i]
        steps = 0
        while v != 1:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            steps += 1
        out[i] = steps
    return out


@cuda.jit
def _collatz(starts, out):
    i = cuda.grid(1)
    if i < starts.shape[0]:
        v = starts[i]
        steps = 0
        while v != 1:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            steps += 1
        out[i] = steps


def _to_device(starts):
    return {"starts": cuda.to_device(starts), "out": cuda.device_array(starts.shape[0], dtype=np.int64)}


def _launch(s):
    m = s["starts"].shape[0]
    tpb = min(TPB, 32 * ((m + 31) // 32))
    _collatz[(m + tpb - 1) // tpb, tpb](s["starts"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``n`` consecutive integers starting at a seed-dependent offset in [1, 1000]."""
    rng = np.random.default_rng(seed)
    first = int(rng.integers(1, 1001))
    return (np.arange(first, first + n, dtype=np.int64),)


KERNEL = KernelSpec(
    name="collatz_lengths",
    category="divergent",
    description="Collatz stopping times of consecutive integers; GPU: thread per start value",
    cpu=collatz_lengths,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 64, "small": 50_000, "medium": 500_000, "large": 3_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
