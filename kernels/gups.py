"""Random-access table updates, ``table[idx[u]] ^= val[u]`` (HPCC RandomAccess / GUPS; irregular, atomics).

CPU region: one iteration of the parallel loop per update; each is a read-modify-write of a random
table word. Several updates may hit the same word, so the GPU port uses ``atomic.xor`` (one thread per
update, grid-stride loop); XOR is commutative, so the result does not depend on the order.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def gups(table, idx, val):
    """Copy of ``table`` with every update ``table[idx[u]] ^= val[u]`` applied.

    Parameters
    ----------
    table : int64 array (the initial table, not modified).
    idx : int64 indices into the table; val : int64 values.

    Returns
    -------
    int64 updated table.
    """
    out = table.copy()
    for u in numba.prange(idx.shape[0]):
        out[idx[u]] ^= val[u]
    return out


@cuda.jit
def _update(out, idx, val):
    start = cuda.grid(1)
    for u in range(start, idx.shape[0], cuda.gridsize(1)):
        cuda.atomic.xor(out, idx[u], val[u])


def _to_device(table, idx, val):
    return {"out": cuda.to_device(table), "idx": cuda.to_device(idx), "val": cuda.to_device(val)}


def _launch(s):
    m = s["idx"].shape[0]
    tpb = min(TPB, 32 * ((m + 31) // 32))
    _update[min((m + tpb - 1) // tpb, 65_536), tpb](s["out"], s["idx"], s["val"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """A table of ``n`` random words and ``2 n`` updates at uniformly random positions."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(np.int64)
    table = rng.integers(info.min, info.max, size=n, dtype=np.int64)
    idx = rng.integers(0, n, size=2 * n).astype(np.int64)
    val = rng.integers(info.min, info.max, size=2 * n, dtype=np.int64)
    return table, idx, val


KERNEL = KernelSpec(
    name="gups",
    category="irregular",
    description="random read-modify-write XOR updates of a table; GPU: atomic.xor, grid-stride loop",
    cpu=gups,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 128, "small": 50_000, "medium": 1_000_000, "large": 16_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
