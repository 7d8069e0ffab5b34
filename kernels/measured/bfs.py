"""OpenDwarfs bfs (AIWC): the two kernels of one level of a level-synchronous breadth-first search.

The host code (a Rodinia port) keeps, per node, a frontier mask, an "updating" mask, a visited flag and a
cost (the BFS level, -1 while unreached). Each level launches two kernels over one work item per node:

* ``kernel1``: a node on the frontier (``mask``) leaves it and, for every edge to a node not yet visited,
  gives that node the cost ``cost[node] + 1`` and raises its ``updating`` flag (several frontier nodes may
  write the same neighbour: they all write the same value, a benign race);
* ``kernel2``: a node whose ``updating`` flag is raised joins the next frontier, is marked visited, clears
  the flag and sets the "not over" word the host reads back to decide on another level.

The graph (``graphgen`` of the Rodinia/OpenDwarfs test inputs): every node draws 2 to 4 edges (uniformly),
each to a uniformly drawn node with a weight 1..10, and every edge is stored in both directions (so the mean
degree is 6; self-loops and repeated edges are kept). A node's adjacency list holds its edges in the order
they were generated (its own edges and the reverse edges of other nodes' draws, interleaved as ``graphgen``
pushes them). ``graphgen`` seeds C's ``rand`` and an LCG from the clock; here a NumPy PCG64 generator
seeded with the point's seed draws the same distributions (deliberate: reproducible graphs). The search
starts at node 0 (the host code forces it). The weights are generated (as in the file) but BFS ignores
them, so the kernels never see them.

Launch geometry (host code): local size ``min(nodes, 256)``, global size ``nodes`` rounded up to a multiple
of it, so the tiny graph's 650 nodes run on 768 work items (AIWC's ``workitems``); the items past the last
node fail the ``tid < no_of_nodes`` guard. AIWC timed the first invocation of each kernel: ``kernel1`` of
level 1 (only node 0 on the frontier) and ``kernel2`` right after it (the neighbours of node 0 join the
frontier). ``make_inputs`` builds those states with plain NumPy; the regions themselves are level-generic.

Nodes are an array of ``(starting, no_of_edges)`` int32 pairs, the layout of the original ``Node`` struct.

Precision: integer only (no floating-point operation), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

#: the host code's work-group size (smaller graphs use one group of ``nodes`` items)
MAX_LOCAL = 256
#: graphgen: edges drawn per node, uniform in [MIN_EDGES, MAX_INIT_EDGES]; weights uniform in [1, 10]
MIN_EDGES = 2
MAX_INIT_EDGES = 4
MIN_WEIGHT = 1
MAX_WEIGHT = 10

POINTS = {"tiny": {"nodes": 650}, "small": {"nodes": 5376}, "medium": {"nodes": 172032}, "large": {"nodes": 1048576}}


@numba.njit(cache=True)
def launch_geometry(n_nodes):
    """(global, local) work size of both kernels for a graph of ``n_nodes`` nodes, as the host code sets it.

    Parameters
    ----------
    n_nodes : int
        Nodes of the graph.

    Returns
    -------
    tuple of int
        ``local = min(n_nodes, 256)`` and ``global`` = ``n_nodes`` rounded up to a multiple of ``local``.
    """
    local = n_nodes if n_nodes < MAX_LOCAL else MAX_LOCAL
    return ((n_nodes + local - 1) // local) * local, local


def kernel1(nodes, edges, mask, updating, visited, cost, n_nodes):
    """CPU region: one invocation of ``kernel1`` (expand the frontier by one level).

    Parameters
    ----------
    nodes : int32 array (n_nodes, 2)
        ``(starting, no_of_edges)`` of each node: its adjacency list is ``edges[starting:starting + no_of_edges]``.
    edges : int32 array
        Destination node of every stored edge.
    mask, updating, visited, cost : int32 arrays (n_nodes,)
        Frontier flags, next-frontier flags, visited flags, BFS level (-1 unreached).
    n_nodes : int
        Nodes of the graph.

    Returns
    -------
    tuple of numpy.ndarray
        ``(mask, updating, cost)`` after the kernel (updated in place).
    """
    n_items = launch_geometry(n_nodes)[0]
    for tid in numba.prange(n_items):
        if tid < n_nodes and mask[tid] != 0:
            mask[tid] = 0
            last = nodes[tid, 1] + nodes[tid, 0]
            for e in range(nodes[tid, 0], last):
                dest = edges[e]
                if visited[dest] == 0:
                    cost[dest] = cost[tid] + 1
                    updating[dest] = 1
    return mask, updating, cost


def kernel2(mask, updating, visited, over, n_nodes):
    """CPU region: one invocation of ``kernel2`` (the marked nodes become the next frontier).

    Parameters
    ----------
    mask, updating, visited : int32 arrays (n_nodes,)
        Frontier, next-frontier and visited flags.
    over : int32 array (1,)
        Set to 1 when any node joins the frontier (the host's "run another level" word).
    n_nodes : int
        Nodes of the graph.

    Returns
    -------
    tuple of numpy.ndarray
        ``(mask, updating, visited, over)`` after the kernel (updated in place).
    """
    n_items = launch_geometry(n_nodes)[0]
    for tid in numba.prange(n_items):
        if tid < n_nodes and updating[tid] == 1:
            mask[tid] = 1
            visited[tid] = 1
            over[0] = 1  # every writer stores 1
            updating[tid] = 0
    return mask, updating, visited, over


@cuda.jit
def _kernel1_dev(nodes, edges, mask, updating, visited, cost, n_nodes):
    tid = cuda.grid(1)
    if tid < n_nodes and mask[tid] != 0:
        mask[tid] = 0
        last = nodes[tid, 1] + nodes[tid, 0]
        for e in range(nodes[tid, 0], last):
            dest = edges[e]
            if visited[dest] == 0:
                cost[dest] = cost[tid] + 1
                updating[dest] = 1


@cuda.jit
def _kernel2_dev(mask, updating, visited, over, n_nodes):
    tid = cuda.grid(1)
    if tid < n_nodes and updating[tid] == 1:
        mask[tid] = 1
        visited[tid] = 1
        over[0] = 1
        updating[tid] = 0


def _to_device(*inputs):
    *arrays, n_nodes = inputs
    return {"arrays": [cuda.to_device(np.ascontiguousarray(a)) for a in arrays], "n": int(n_nodes)}


def _launch1(s):
    g, loc = launch_geometry(s["n"])
    _kernel1_dev[g // loc, loc](*s["arrays"], s["n"])


def _launch2(s):
    g, loc = launch_geometry(s["n"])
    _kernel2_dev[g // loc, loc](*s["arrays"], s["n"])


def _from_device1(s):
    nodes, edges, mask, updating, visited, cost = s["arrays"]
    return mask.copy_to_host(), updating.copy_to_host(), cost.copy_to_host()


def _from_device2(s):
    return tuple(a.copy_to_host() for a in s["arrays"])


def graphgen(n_nodes, seed):
    """A random graph as Rodinia's ``graphgen`` makes it (see the module docstring).

    Parameters
    ----------
    n_nodes : int
        Nodes.
    seed : int
        Seed of the NumPy generator.

    Returns
    -------
    tuple of numpy.ndarray
        ``(nodes, edges, weights)``: ``(starting, no_of_edges)`` int32 pairs, destination per stored edge
        (int32), weight per stored edge (int32).
    """
    rng = np.random.default_rng(int(seed))
    n_nodes = int(n_nodes)
    drawn = rng.integers(MIN_EDGES, MAX_INIT_EDGES + 1, size=n_nodes)
    src = np.repeat(np.arange(n_nodes), drawn)
    dst = rng.integers(0, n_nodes, size=src.shape[0])
    wgt = rng.integers(MIN_WEIGHT, MAX_WEIGHT + 1, size=src.shape[0])
    # graphgen pushes edge e as src->dst, then dst->src: stored in that order, a stable sort by owner
    # gives every adjacency list its insertion order
    owner = np.empty(2 * src.shape[0], dtype=np.int64)
    target = np.empty_like(owner)
    owner[0::2], owner[1::2] = src, dst
    target[0::2], target[1::2] = dst, src
    order = np.argsort(owner, kind="stable")
    degree = np.bincount(owner, minlength=n_nodes)
    nodes = np.empty((n_nodes, 2), dtype=np.int32)
    nodes[:, 1] = degree
    nodes[:, 0] = np.concatenate(([0], np.cumsum(degree)[:-1]))
    return nodes, target[order].astype(np.int32), np.repeat(wgt, 2)[order].astype(np.int32)


def initial_state(n_nodes, source=0):
    """Host state before the first level: ``(mask, updating, visited, cost)`` with only ``source`` set."""
    mask = np.zeros(n_nodes, dtype=np.int32)
    updating = np.zeros(n_nodes, dtype=np.int32)
    visited = np.zeros(n_nodes, dtype=np.int32)
    cost = np.full(n_nodes, -1, dtype=np.int32)
    mask[source] = visited[source] = 1
    cost[source] = 0
    return mask, updating, visited, cost


def _expand_numpy(nodes, edges, mask, updating, visited, cost):
    """kernel1's effect, vectorised (the unported run that produces the state before kernel2)."""
    frontier = np.flatnonzero(mask)
    mask[frontier] = 0
    for v in frontier:
        nbr = edges[nodes[v, 0]:nodes[v, 0] + nodes[v, 1]]
        nbr = nbr[visited[nbr] == 0]
        cost[nbr] = cost[v] + 1
        updating[nbr] = 1


def make_inputs_kernel1(params, seed):
    """Inputs of the first ``kernel1`` invocation: the graph and the state with only node 0 on the frontier."""
    n = int(params["nodes"])
    nodes, edges, _weights = graphgen(n, seed)
    return (nodes, edges, *initial_state(n), n)


def make_inputs_kernel2(params, seed):
    """Inputs of the first ``kernel2`` invocation: the flags after level 1's ``kernel1`` and a cleared
    ``over`` word (the host writes 0 before each level)."""
    n = int(params["nodes"])
    nodes, edges, _weights = graphgen(n, seed)
    mask, updating, visited, cost = initial_state(n)
    _expand_numpy(nodes, edges, mask, updating, visited, cost)
    return mask, updating, visited, np.zeros(1, dtype=np.int32), n


def work(params):
    """(global work items, local work size) of either kernel at ``params``."""
    return tuple(int(v) for v in launch_geometry(int(params["nodes"])))


KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="bfs",
        kernel="kernel1",
        description="BFS level expansion: frontier nodes give unvisited neighbours the next cost (first level)",
        cpu=kernel1,
        gpu=GpuPort(_to_device, _launch1, _from_device1),
        make_inputs=make_inputs_kernel1,
        points=POINTS,
        work=work,
        test_point=POINTS["tiny"],
        rtol=0.0,
        atol=0.0,
    ),
    MeasuredKernel(
        source="aiwc",
        application="bfs",
        kernel="kernel2",
        description="BFS frontier update: marked nodes join the next frontier and are visited (first level)",
        cpu=kernel2,
        gpu=GpuPort(_to_device, _launch2, _from_device2),
        make_inputs=make_inputs_kernel2,
        points=POINTS,
        work=work,
        test_point=POINTS["tiny"],
        rtol=0.0,
        atol=0.0,
    ),
]
