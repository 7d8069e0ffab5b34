"""OpenDwarfs bfs ports (kernels/measured/bfs.py): the two kernels, alternated level by level as the host
does, give every node its BFS level as a plain Python queue-based BFS does; the first invocations touch
exactly node 0 and its neighbours; the generated graph has graphgen's shape."""

from __future__ import annotations

import collections

import numba
import numpy as np
import pytest

from kernels.measured import bfs

K1 = numba.njit(bfs.kernel1)
K2 = numba.njit(bfs.kernel2)


def _queue_bfs(nodes, edges, source=0):
    level = [-1] * nodes.shape[0]
    level[source] = 0
    queue = collections.deque([source])
    while queue:
        v = queue.popleft()
        for e in range(nodes[v, 0], nodes[v, 0] + nodes[v, 1]):
            u = int(edges[e])
            if level[u] == -1:
                level[u] = level[v] + 1
                queue.append(u)
    return np.array(level, dtype=np.int32)


def _run_levels(nodes, edges, k1=K1, k2=K2):
    """The host loop: kernel1 then kernel2 until kernel2 raises no ``over`` flag; returns (cost, levels)."""
    n = nodes.shape[0]
    mask, updating, visited, cost = bfs.initial_state(n)
    levels = 0
    while True:
        over = np.zeros(1, dtype=np.int32)
        k1(nodes, edges, mask, updating, visited, cost, n)
        k2(mask, updating, visited, over, n)
        levels += 1
        if over[0] == 0:
            return cost, levels


@pytest.mark.parametrize("n_nodes,seed", [(650, 0), (300, 5)])
def test_levels_equal_a_queue_bfs(n_nodes, seed):
    nodes, edges, _ = bfs.graphgen(n_nodes, seed)
    cost, levels = _run_levels(nodes, edges)
    want = _queue_bfs(nodes, edges)
    assert np.array_equal(cost, want)
    assert levels == want.max() + 1  # the last level finds nothing new
    assert (cost >= 0).mean() > 0.95  # mean degree 6: nearly every node is reached


def test_worked_example_by_hand():
    # 0-1, 0-2, 1-3, 3-4, node 5 isolated; both directions stored
    adj = [[1, 2], [0, 3], [0], [1, 4], [3], []]
    nodes = np.array([[sum(len(a) for a in adj[:v]), len(adj[v])] for v in range(6)], dtype=np.int32)
    edges = np.array([u for a in adj for u in a], dtype=np.int32)
    cost, levels = _run_levels(nodes, edges, bfs.kernel1, bfs.kernel2)  # plain Python regions
    assert cost.tolist() == [0, 1, 1, 2, 3, -1]
    assert levels == 4


def test_first_invocations_touch_node_0_and_its_neighbours():
    nodes, edges, mask, updating, visited, cost, n = bfs.make_inputs_kernel1({"nodes": 650}, 1)
    nbr = set(edges[nodes[0, 0]:nodes[0, 0] + nodes[0, 1]].tolist()) - {0}
    mask, updating, cost = K1(nodes, edges, mask, updating, visited, cost, n)
    assert mask.sum() == 0
    assert set(np.flatnonzero(updating).tolist()) == nbr
    assert set(np.flatnonzero(cost == 1).tolist()) == nbr and cost[0] == 0
    assert (cost == -1).sum() == n - 1 - len(nbr)
    # kernel2's inputs are that state: its first invocation puts exactly those neighbours on the frontier
    m2, u2, v2, over, n2 = bfs.make_inputs_kernel2({"nodes": 650}, 1)
    assert np.array_equal(u2, updating)
    m2, u2, v2, over = K2(m2, u2, v2, over, n2)
    assert set(np.flatnonzero(m2).tolist()) == nbr and u2.sum() == 0
    assert set(np.flatnonzero(v2).tolist()) == nbr | {0} and over[0] == 1


def test_graph_has_graphgen_shape():
    n = 2000
    nodes, edges, weights = bfs.graphgen(n, 7)
    assert nodes[0, 0] == 0 and np.array_equal(nodes[1:, 0], np.cumsum(nodes[:-1, 1]))
    assert edges.shape[0] == nodes[:, 1].sum() == weights.shape[0]
    assert 5.8 < edges.shape[0] / n < 6.2  # 2..4 drawn edges per node, each stored twice
    assert weights.min() == 1 and weights.max() == 10
    # every edge is stored in both directions with the same weight
    src = np.repeat(np.arange(n), nodes[:, 1])
    fwd = sorted(zip(src.tolist(), edges.tolist(), weights.tolist()))
    rev = sorted(zip(edges.tolist(), src.tolist(), weights.tolist()))
    assert fwd == rev
    # the guard: 650 nodes run on 768 items in groups of 256; small graphs use one group of all nodes
    assert bfs.work({"nodes": 650}) == (768, 256)
    assert bfs.work({"nodes": 100}) == (100, 100)
