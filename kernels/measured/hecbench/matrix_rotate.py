"""HeCBench ``matrix-rotate``: the kernel ``rotate_matrix_parallel``, an in-place quarter turn (clockwise) of
an ``n x n`` float matrix, one thread per concentric layer (RTX 3080).

The program fills the matrix with ``i * n + j`` (row-major, as float) and launches ``rotate_matrix_parallel``
``repeat`` times on the device copy. Thread ``layer < n / 2`` walks its ring: for ``i`` from ``first = layer``
to ``last = n - 1 - layer`` (exclusive) it saves the top element ``(first, i)``, moves left -> top, bottom ->
left, right -> bottom and the saved top -> right (four loads, four stores per step), so the layers do
``n - 1 - 2 layer`` steps each: a triangle of work, the outer rings the longest. Threads from ``n / 2`` up to
the launched count do nothing.

Launch: ``(n / 2 + 255) / 256`` blocks of 256 (the data: ``5000 100``, 10 blocks, 2560 threads of which 2500
rotate). The timed launch is the first, on the freshly filled matrix; the inputs are the program's own (no
random numbers: ``seed`` is unused).

CPU region: one ``prange`` over the launched threads. ``block`` is a parameter (the original fixes 256) so the
test point may be small. Precision: float32, as the original. Measured size: 1.9e8 records (the 6.25 M ring
steps), so a ``feature_point`` (n = 1000, same blocks) stands in for the features.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256

POINTS = {"5000 100": {"n": 5000, "repeat": 100, "block": BLOCK}}
#: 37 x 37 (odd: the centre stays), one block of 32 threads, 18 of them layers
TEST_POINT = {"n": 37, "repeat": 1, "block": 32}
#: 1000 x 1000, the original's blocks: 250 k ring steps
FEATURE_POINT = {"n": 1000, "repeat": 1, "block": BLOCK}


def rotate_matrix_parallel(matrix, n, block):
    """CPU region: one launch of ``(n / 2 + block - 1) / block`` blocks of ``block``; rotates ``matrix``
    (float32 ``n * n``, row-major) a quarter turn clockwise in place, one work item per layer, and returns it."""
    n_threads = (n // 2 + block - 1) // block * block
    for layer in numba.prange(n_threads):
        if layer < n // 2:
            first = layer
            last = n - 1 - layer
            for i in range(first, last):
                offset = i - first
                top = matrix[first * n + i]
                matrix[first * n + i] = matrix[(last - offset) * n + first]
                matrix[(last - offset) * n + first] = matrix[last * n + (last - offset)]
                matrix[last * n + (last - offset)] = matrix[i * n + last]
                matrix[i * n + last] = top
    return matrix


@cuda.jit
def _rotate_gpu(matrix, n):
    layer = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if layer < n // 2:
        first = layer
        last = n - 1 - layer
        for i in range(first, last):
            offset = i - first
            top = matrix[first * n + i]
            matrix[first * n + i] = matrix[(last - offset) * n + first]
            matrix[(last - offset) * n + first] = matrix[last * n + (last - offset)]
            matrix[last * n + (last - offset)] = matrix[i * n + last]
            matrix[i * n + last] = top


def _to_device(matrix, n, block):
    return {"m": cuda.to_device(matrix), "n": int(n), "block": int(block)}


def _launch(s):
    _rotate_gpu[(s["n"] // 2 + s["block"] - 1) // s["block"], s["block"]](s["m"], s["n"])


def _from_device(s):
    return s["m"].copy_to_host()


def work(params):
    n, bs = int(params["n"]), int(params["block"])
    return (n // 2 + bs - 1) // bs * bs, bs


def make_inputs(params, seed):
    """``(matrix, n, block)``: the program's fill ``i * n + j`` (float32)."""
    n = int(params["n"])
    matrix = np.arange(n * n, dtype=np.int64).astype(np.float32)
    return matrix, n, int(params["block"])


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="matrix-rotate",
        kernel="rotate_matrix_parallel",
        description="HeCBench matrix-rotate: in-place quarter turn of a 5000 x 5000 float matrix, one thread "
        "per concentric ring (a triangle of work: 4 loads and 4 stores per ring step)",
        cpu=rotate_matrix_parallel,
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
