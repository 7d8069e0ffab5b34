"""0/1 knapsack by dynamic programming (loop-carried dependence between items).

Row ``i`` of the table depends on row ``i - 1`` at two places (``c`` and ``c - w_i``), so the items are
processed one after another; within one item every capacity is independent (the parallel loop). GPU
port: one launch per item over all capacities, double-buffered rows swapped on the host: many short
launches with two loads and a max per thread.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256
N_ITEMS = 24


def dp_loop_carried(weights, values, capacity):
    """Best total value for every knapsack capacity ``0..capacity`` using each item at most once.

    Parameters
    ----------
    weights, values : int64 item weights (positive) and values.
    capacity : largest capacity.

    Returns
    -------
    int64 array of length ``capacity + 1``.
    """
    prev = np.zeros(capacity + 1, dtype=np.int64)
    cur = np.empty(capacity + 1, dtype=np.int64)
    for i in range(weights.shape[0]):
        w = weights[i]
        v = values[i]
        for c in numba.prange(capacity + 1):
            best = prev[c]
            if c >= w:
                cand = prev[c - w] + v
                if cand > best:
                    best = cand
            cur[c] = best
        prev, cur = cur, prev
    return prev


@cuda.jit
def _item(prev, cur, w, v):
    c = cuda.grid(1)
    if c < prev.shape[0]:
        best = prev[c]
        if c >= w:
            cand = prev[c - w] + v
            if cand > best:
                best = cand
        cur[c] = best


def _to_device(weights, values, capacity):
    return {"w": [int(x) for x in weights], "v": [int(x) for x in values],
            "a": cuda.to_device(np.zeros(capacity + 1, dtype=np.int64)),
            "b": cuda.device_array(capacity + 1, dtype=np.int64)}


def _launch(s):
    n = s["a"].shape[0]
    tpb = min(TPB, 32 * ((n + 31) // 32))
    blocks = (n + tpb - 1) // tpb
    prev, cur = s["a"], s["b"]
    for w, v in zip(s["w"], s["v"]):
        _item[blocks, tpb](prev, cur, w, v)
        prev, cur = cur, prev
    s["result"] = prev


def _from_device(s):
    return s["result"].copy_to_host()


def make_inputs(n, seed):
    """24 items with weights in [1, n/4] and values in [1, 1000]; capacity ``n``."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, max(2, n // 4) + 1, size=N_ITEMS).astype(np.int64)
    values = rng.integers(1, 1001, size=N_ITEMS).astype(np.int64)
    return weights, values, int(n)


KERNEL = KernelSpec(
    name="dp_loop_carried",
    category="serial",
    description="0/1 knapsack DP over 24 items; GPU: one launch per item over all capacities",
    cpu=dp_loop_carried,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 60, "small": 10_000, "medium": 300_000, "large": 3_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=False,
)
