"""All-pairs shortest paths, HeCBench ``floydwarshall``: the kernel ``floydWarshallPass``, its first launch.

Floyd-Warshall on a dense distance matrix of ``numNodes x numNodes`` unsigned ints: the host launches one
pass per intermediate node ``k``; in pass ``k`` the work item ``(x, y)`` reads ``D[y][x]``, ``D[y][k]`` and
``D[k][x]`` and, when ``D[y][k] + D[k][x]`` (as int) is smaller than ``D[y][x]``, writes the sum to ``D[y][x]``
and ``k`` to the path matrix ``P[y][x]``. The timed launch is the first one, pass ``k = 0``.

Launch: 2-D grid ``(numNodes / 16, numNodes / 16)`` of 16 x 16 blocks (the block size argument, 16 here),
one work item per matrix entry. The region flattens the 2-D thread space into one parallel loop over
``y * numNodes + x``.

Inputs: the host fills ``D`` with ``rand() % 201`` after ``srand(2)`` (glibc ``rand``, reproduced exactly
for seed 0; ``srand(2 + seed)`` otherwise), zero diagonal. The device path buffer is never initialised by the
original (``cudaMalloc`` only); here it starts as the host's path matrix (``P[i][j] = i``), which the kernel only
writes. Data type: uint32 buffers; the sums are compared as 64-bit
integers in the region (the original compares ints; every value is at most 400, so the results agree).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

MAXDISTANCE = 200
BLOCK = 16

POINTS = {"1024 100 16": {"nodes": 1024, "block": 16, "pass": 0}}
TEST_POINT = {"nodes": 48, "block": 16, "pass": 0}
#: the measured point traces 2.2e7 records: features from 448 x 448 (4.2e6)
FEATURE_POINT = {"nodes": 448, "block": 16, "pass": 0}


def floyd_warshall_pass(dist, path, num_nodes, k):
    """One pass (intermediate node ``k``) over the flattened ``num_nodes x num_nodes`` matrices, in place.

    Returns ``(dist, path)``.
    """
    for gid in numba.prange(num_nodes * num_nodes):
        y = gid // num_nodes
        x = gid - y * num_nodes
        old = np.int64(dist[y * num_nodes + x])
        temp = np.int64(dist[y * num_nodes + k]) + np.int64(dist[k * num_nodes + x])
        if temp < old:
            dist[y * num_nodes + x] = temp
            path[y * num_nodes + x] = k
    return dist, path


@cuda.jit
def _pass_gpu(dist, path, num_nodes, k):
    x = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    y = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    old = numba.int64(dist[y * num_nodes + x])
    temp = numba.int64(dist[y * num_nodes + k]) + numba.int64(dist[k * num_nodes + x])
    if temp < old:
        dist[y * num_nodes + x] = temp
        path[y * num_nodes + x] = k


def _to_device(dist, path, num_nodes, k):
    return {"dist": cuda.to_device(dist), "path": cuda.to_device(path), "n": int(num_nodes), "k": int(k)}


def _launch(s):
    g = s["n"] // BLOCK
    _pass_gpu[(g, g), (BLOCK, BLOCK)](s["dist"], s["path"], s["n"], s["k"])


def _from_device(s):
    return s["dist"].copy_to_host(), s["path"].copy_to_host()


def host_matrices(n, seed):
    """The host's distance matrix (``rand() % 201``, zero diagonal) and path matrix, flattened uint32."""
    d = (glibc_rand(2 + seed, n * n) % (MAXDISTANCE + 1)).astype(np.uint32)
    d[:: n + 1] = 0
    p = np.repeat(np.arange(n, dtype=np.uint32), n)  # P[i][j] = i for every j
    return d, p


def make_inputs(params, seed):
    n = int(params["nodes"])
    if n % BLOCK:
        n = (n // BLOCK + 1) * BLOCK  # the host rounds the node count up to a multiple of the block size
    d, p = host_matrices(n, seed)
    return d, p, n, int(params["pass"])


def work(params):
    n = int(params["nodes"])
    return n * n, BLOCK * BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="floydwarshall",
        kernel="floydWarshallPass",
        description="HeCBench floydwarshall: one Floyd-Warshall relaxation pass (k = 0) over a 1024 x 1024 "
        "distance matrix, one thread per entry",
        cpu=floyd_warshall_pass,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    ),
]
