"""Level-synchronous breadth-first search over a directed graph in CSR form (irregular memory).

CPU region: repeat sweeps over all vertices; a vertex on the current level marks its unvisited
neighbours with the next level; stop when a sweep marks nothing. GPU port: the same, one kernel launch
per level (thread per vertex) and a one-word "changed" flag read back after each level, as in
Rodinia's bfs — so ``launch`` synchronises once per level.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def bfs(indptr, indices, source):
    """Return the BFS level of every vertex from ``source`` (-1 where unreachable).

    Parameters
    ----------
    indptr, indices : CSR adjacency (out-edges), int64.
    source : start vertex.

    Returns
    -------
    int32 array of levels.
    """
    n = indptr.shape[0] - 1
    level = np.full(n, -1, dtype=np.int32)
    level[source] = 0
    cur = 0
    changed = True
    while changed:
        changed = False
        for v in numba.prange(n):
            if level[v] == cur:
                for k in range(indptr[v], indptr[v + 1]):
                    u = indices[k]
                    if level[u] == -1:
                        level[u] = cur + 1
                        changed = True
        cur += 1
    return level


@cuda.jit
def _bfs_level(indptr, indices, level, cur, changed):
    v = cuda.grid(1)
    if v < level.shape[0] and level[v] == cur:
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if level[u] == -1:
                level[u] = cur + 1  # benign race: every writer stores the same value
                changed[0] = 1


def _to_device(indptr, indices, source):
    n = indptr.shape[0] - 1
    level = np.full(n, -1, dtype=np.int32)
    level[source] = 0
    return {"indptr": cuda.to_device(indptr), "indices": cuda.to_device(indices),
            "level": cuda.to_device(level), "changed": cuda.device_array(1, dtype=np.int32)}


def _launch(s):
    n = s["level"].shape[0]
    tpb = min(TPB, 32 * ((n + 31) // 32))
    blocks = (n + tpb - 1) // tpb
    zero = np.zeros(1, dtype=np.int32)
    flag = np.ones(1, dtype=np.int32)
    cur = 0
    while flag[0]:
        s["changed"].copy_to_device(zero)
        _bfs_level[blocks, tpb](s["indptr"], s["indices"], s["level"], cur, s["changed"])
        s["changed"].copy_to_host(flag)
        cur += 1


def _from_device(s):
    return s["level"].copy_to_host()


def make_inputs(n, seed):
    """A random directed graph: every vertex has 0..15 out-edges to uniform targets; source 0."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 16, size=n)
    counts[0] = max(int(counts[0]), 4)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = rng.integers(0, n, size=int(indptr[-1])).astype(np.int64)
    return indptr, indices, 0


KERNEL = KernelSpec(
    name="bfs",
    category="irregular",
    description="level-synchronous BFS on a random directed graph; GPU: one launch per level + flag",
    cpu=bfs,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 48, "small": 20_000, "medium": 500_000, "large": 4_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
