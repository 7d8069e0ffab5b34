"""Many independent searches in a binary search tree stored in index arrays (pointer chasing).

The tree is built by inserting random keys in random order, so it is unbalanced (depth about
``2 ln n``) and every search follows a data-dependent path of dependent loads. CPU region: one
iteration of the parallel loop per query. GPU port: one thread per query; the top levels of the tree
stay in the GPU caches, lower levels are scattered reads, and threads of a warp diverge on path length.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def tree_traversal(key, left, right, queries):
    """Search every query in the BST rooted at node 0.

    Parameters
    ----------
    key : int64 node keys; left, right : int64 child node indices (-1 for none).
    queries : int64 keys to look up.

    Returns
    -------
    (found, depth): int64 node index holding the query (-1 if absent) and the number of edges followed.
    """
    m = queries.shape[0]
    found = np.empty(m, dtype=np.int64)
    depth = np.empty(m, dtype=np.int64)
    for q in numba.prange(m):
        target = queries[q]
        node = 0
        steps = 0
        res = -1
        while node != -1:
            k = key[node]
            if target == k:
                res = node
                break
            if target < k:
                node = left[node]
            else:
                node = right[node]
            steps += 1
        found[q] = res
        depth[q] = steps
    return found, depth


@cuda.jit
def _search(key, left, right, queries, found, depth):
    q = cuda.grid(1)
    if q < queries.shape[0]:
        target = queries[q]
        node = 0
        steps = 0
        res = -1
        while node != -1:
            k = key[node]
            if target == k:
                res = node
                break
            if target < k:
                node = left[node]
            else:
                node = right[node]
            steps += 1
        found[q] = res
        depth[q] = steps


def _to_device(key, left, right, queries):
    m = queries.shape[0]
    return {"key": cuda.to_device(key), "left": cuda.to_device(left), "right": cuda.to_device(right),
            "queries": cuda.to_device(queries), "found": cuda.device_array(m, dtype=np.int64),
            "depth": cuda.device_array(m, dtype=np.int64)}


def _launch(s):
    m = s["queries"].shape[0]
    _search[(m + TPB - 1) // TPB, TPB](s["key"], s["left"], s["right"], s["queries"], s["found"], s["depth"])


def _from_device(s):
    return s["found"].copy_to_host(), s["depth"].copy_to_host()


@numba.njit(cache=True)
def _build_bst(keys):
    n = keys.shape[0]
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    for i in range(1, n):
        node = 0
        while True:
            if keys[i] < keys[node]:
                if left[node] == -1:
                    left[node] = i
                    break
                node = left[node]
            else:
                if right[node] == -1:
                    right[node] = i
                    break
                node = right[node]
    return left, right


def make_inputs(n, seed):
    """A BST of ``n`` distinct random keys (insertion order random) and ``n`` queries, half present."""
    rng = np.random.default_rng(seed)
    keys = rng.permutation(4 * n)[:n].astype(np.int64)
    left, right = _build_bst(keys)
    present = keys[rng.integers(0, n, size=n // 2)]
    absent = rng.integers(0, 4 * n, size=n - n // 2).astype(np.int64)
    queries = rng.permutation(np.concatenate([present, absent])).astype(np.int64)
    return keys, left, right, queries


KERNEL = KernelSpec(
    name="tree_traversal",
    category="irregular",
    description="independent searches in an unbalanced BST in index arrays; GPU: thread per query",
    cpu=tree_traversal,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 64, "small": 5_000, "medium": 50_000, "large": 300_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
