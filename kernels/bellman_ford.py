"""Single-source shortest paths by Bellman-Ford relaxation rounds (irregular memory, iterative).

CPU region: Jacobi-style rounds; in each round every vertex takes the minimum over its in-edges of
``dist[u] + w`` (pull form, double-buffered) until no distance changes or ``n - 1`` rounds. GPU port:
the same pull form, thread per vertex, one launch per round and a "changed" flag read back after each
(no atomics needed because each thread owns its vertex).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def bellman_ford(indptr, src, weight, source):
    """Shortest-path distances from ``source`` (inf where unreachable).

    Parameters
    ----------
    indptr, src, weight : in-edge CSR: the edges into vertex ``v`` are ``src[k] -> v`` with weight
        ``weight[k]`` for ``k in range(indptr[v], indptr[v + 1])``; weights positive.
    source : start vertex.

    Returns
    -------
    float64 array of distances.
    """
    n = indptr.shape[0] - 1
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    new = dist.copy()
    for _ in range(n - 1):
        changed = False
        for v in numba.prange(n):
            best = dist[v]
            for k in range(indptr[v], indptr[v + 1]):
                cand = dist[src[k]] + weight[k]
                if cand < best:
                    best = cand
            new[v] = best
            if best < dist[v]:
                changed = True
        dist, new = new, dist
        if not changed:
            break
    return dist


@cuda.jit
def _relax(indptr, src, weight, dist, new, changed):
    v = cuda.grid(1)
    if v < dist.shape[0]:
        best = dist[v]
        for k in range(indptr[v], indptr[v + 1]):
            cand = dist[src[k]] + weight[k]
            if cand < best:
                best = cand
        new[v] = best
        if best < dist[v]:
            changed[0] = 1


def _to_device(indptr, src, weight, source):
    n = indptr.shape[0] - 1
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    return {"indptr": cuda.to_device(indptr), "src": cuda.to_device(src),
            "weight": cuda.to_device(weight), "a": cuda.to_device(dist), "b": cuda.to_device(dist),
            "changed": cuda.device_array(1, dtype=np.int32), "result": "a"}


def _launch(s):
    n = s["a"].shape[0]
    tpb = min(TPB, 32 * ((n + 31) // 32))
    blocks = (n + tpb - 1) // tpb
    zero = np.zeros(1, dtype=np.int32)
    flag = np.ones(1, dtype=np.int32)
    cur, nxt = s["a"], s["b"]
    s["result"] = "a"
    for _ in range(n - 1):
        s["changed"].copy_to_device(zero)
        _relax[blocks, tpb](s["indptr"], s["src"], s["weight"], cur, nxt, s["changed"])
        s["changed"].copy_to_host(flag)
        cur, nxt = nxt, cur
        s["result"] = "b" if s["result"] == "a" else "a"
        if not flag[0]:
            break


def _from_device(s):
    return s[s["result"]].copy_to_host()


def make_inputs(n, seed):
    """A random directed graph with 0..11 in-edges per vertex, weights in [1, 10), source 0."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 12, size=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    m = int(indptr[-1])
    src = rng.integers(0, n, size=m).astype(np.int64)
    weight = rng.uniform(1.0, 10.0, size=m)
    return indptr, src, weight, 0


KERNEL = KernelSpec(
    name="bellman_ford",
    category="irregular",
    description="Bellman-Ford SSSP, pull-form rounds until stable; GPU: one launch per round + flag",
    cpu=bellman_ford,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 40, "small": 5_000, "medium": 50_000, "large": 300_000},
    rtol=1e-12,
    atol=1e-12,
    expect_gpu_faster=True,
)
