"""Bitonic sorting network over a power-of-two array (regular compare-exchange stages, many passes).

CPU region: for every stage ``(k, j)`` of the network, the parallel loop runs over all elements; element
``i`` is compared with partner ``i ^ j`` and the pair is ordered ascending or descending by bit ``k`` of
``i``. GPU port: stages with ``j >= 256`` are one global-memory launch each; all the stages of one ``k``
with ``j < 256`` run in a single launch on a 256-element tile held in shared memory.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def bitonic_sort(x):
    """Return ``x`` sorted ascending by a bitonic network.

    Parameters
    ----------
    x : float64 array whose length is a power of two.

    Returns
    -------
    sorted float64 copy.
    """
    n = x.shape[0]
    a = x.copy()
    k = 2
    while k <= n:
        j = k // 2
        while j > 0:
            for i in numba.prange(n):
                partner = i ^ j
                if partner > i:
                    up = (i & k) == 0
                    if (a[i] > a[partner]) == up:
                        tmp = a[i]
                        a[i] = a[partner]
                        a[partner] = tmp
            j //= 2
        k *= 2
    return a


@cuda.jit
def _global_stage(a, j, k):
    i = cuda.grid(1)
    partner = i ^ j
    if i < a.shape[0] and partner > i:
        up = (i & k) == 0
        if (a[i] > a[partner]) == up:
            tmp = a[i]
            a[i] = a[partner]
            a[partner] = tmp


@cuda.jit
def _shared_stages(a, j_start, k):
    tile = cuda.shared.array(TPB, dtype=numba.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i]
    cuda.syncthreads()
    j = j_start
    while j > 0:
        pt = t ^ j
        if pt > t:
            up = (i & k) == 0
            if (tile[t] > tile[pt]) == up:
                tmp = tile[t]
                tile[t] = tile[pt]
                tile[pt] = tmp
        cuda.syncthreads()
        j //= 2
    a[i] = tile[t]


def _to_device(x):
    n = x.shape[0]
    if n & (n - 1):
        raise ValueError(f"bitonic_sort needs a power-of-two length, got {n}")
    return {"a": cuda.to_device(x)}


def _launch(s):
    a = s["a"]
    n = a.shape[0]
    tpb = min(TPB, n)
    blocks = n // tpb
    k = 2
    while k <= n:
        j = k // 2
        while j >= tpb:
            _global_stage[blocks, tpb](a, j, k)
            j //= 2
        _shared_stages[blocks, tpb](a, j, k)
        k *= 2


def _from_device(s):
    return s["a"].copy_to_host()


def make_inputs(n, seed):
    """``n`` rounded up to a power of two uniformly random values (with some duplicates)."""
    rng = np.random.default_rng(seed)
    size = 1
    while size < n:
        size *= 2
    return (np.round(rng.uniform(0.0, 1000.0, size=size), 1),)


KERNEL = KernelSpec(
    name="bitonic_sort",
    category="dense",
    description="bitonic sorting network; GPU: global launches for long strides, shared-memory tile for j < 256",
    cpu=bitonic_sort,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 64, "small": 1 << 13, "medium": 1 << 17, "large": 1 << 20},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
