"""HeCBench ``winograd``: the kernel ``winograd_conv2d``, a 3 x 3 convolution by Winograd's F(2x2, 3x3)
minimal filtering (after the HeteroMark/Polybench-style co-execution benchmark; RTX 3080).

A ``MAP_SIZE x MAP_SIZE`` float image (1024, compile-time; the program takes no arguments, label
``default``) is convolved ("valid", output ``(MAP_SIZE - 2)^2``) with one 3 x 3 filter whose Winograd transform
``G g G^T`` (4 x 4) the host computes once. One thread per 2 x 2 output tile: it loads its 4 x 4 input tile
(zero past the image), transforms it (``B^T d B``, additions only), multiplies elementwise by the transformed
filter, transforms back (``A^T m A``, additions only) and stores the 2 x 2 outputs that fall inside the
output map. Thread ``(tile_i, tile_j)`` covers rows ``2 tile_i ..`` (``x``, the slow index) and columns
``2 tile_j ..``; ``offset_i`` shifts ``tile_i`` by the rows the host computes itself.

Launch: blocks of 32 x 8, grid ``ceil(511 / 32) x ceil(511 / 8)`` = 16 x 64 (262144 threads; ``tile_n = 511``
tiles each way). The program sweeps a CPU share from 0% to 100%; the timed launch is the first, at 0%: the
GPU does the whole map (offset 0) into an uninitialised output (zeros here).

Inputs: the image is ``rand() / (float) RAND_MAX`` (glibc ``rand``, never seeded: seed 1; here ``1 + seed``,
so seed 0 is the program's image), the filter the program's nine constants. Deliberate difference: the source
declares six per-thread 4 x 4 (and smaller) arrays, all indexed by unrolled loops, which the CUDA compiler
keeps in registers; here the input tile is a local array (it is filled by the bounds-checked load loop), and
the transforms, the products and the output tile are scalars, the output's bounds checked per row and column
(the same stores as the source's loop with ``continue``). The test point is a 34 x 34 image (16 x 16 tiles,
a 1 x 2 grid of 32 x 8 blocks).

Precision: float32 (``DATA_TYPE = float``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import RAND_MAX, glibc_rand
from ..spec import MeasuredKernel

BLOCK_X, BLOCK_Y = 32, 8
MAP_SIZE = 1024

POINTS = {"default": {"map_size": MAP_SIZE}}
TEST_POINT = {"map_size": 34}
#: the measured region has about 1.3e8 records: a 130 x 130 image (grid 3 x 8, 6144 threads)
FEATURE_POINT = {"map_size": 130}


def launch_grid(map_size):
    """The host's grid: ``(ceil(tile_n / 32), ceil(tile_n / 8))`` with ``tile_n = (map_size - 1) // 2``."""
    tile_n = (map_size - 2 + 1) // 2
    return -(-tile_n // BLOCK_X), -(-tile_n // BLOCK_Y)


def winograd_conv2d(inp, transformed_filter, output, offset_i, offset_j, map_size, grid_x, grid_y):
    """CPU region: one launch of ``winograd_conv2d``.

    Parameters
    ----------
    inp : float32 ``map_size * map_size``. transformed_filter : float32 ``16`` (``G g G^T``, row-major).
    output : float32 ``(map_size - 2)^2``, written. offset_i, offset_j : tile offsets (0, 0 here).
    map_size : image side. grid_x, grid_y : the launch grid (blocks of 32 x 8).

    Returns
    -------
    ``output``.
    """
    threads = BLOCK_X * BLOCK_Y
    for gid in numba.prange(grid_x * grid_y * threads):
        blk = gid // threads
        loc = gid - blk * threads
        by = blk // grid_x
        bx = blk - by * grid_x
        ty = loc // BLOCK_X
        tx = loc - ty * BLOCK_X
        tile_i = bx * BLOCK_X + tx + offset_i
        tile_j = by * BLOCK_Y + ty + offset_j
        input_tile = np.empty((4, 4), dtype=np.float32)
        for i in range(4):
            for j in range(4):
                x = 2 * tile_i + i
                y = 2 * tile_j + j
                if x >= map_size or y >= map_size:
                    input_tile[i, j] = np.float32(0.0)
                    continue
                input_tile[i, j] = inp[x * map_size + y]
        # B^T d (column j of the 4 x 4 tile: tmp_0j ... tmp_3j)
        d0, d1, d2, d3 = input_tile[0, 0], input_tile[1, 0], input_tile[2, 0], input_tile[3, 0]
        t00 = d0 - d2
        t10 = d1 + d2
        t20 = -d1 + d2
        t30 = d1 - d3
        d0, d1, d2, d3 = input_tile[0, 1], input_tile[1, 1], input_tile[2, 1], input_tile[3, 1]
        t01 = d0 - d2
        t11 = d1 + d2
        t21 = -d1 + d2
        t31 = d1 - d3
        d0, d1, d2, d3 = input_tile[0, 2], input_tile[1, 2], input_tile[2, 2], input_tile[3, 2]
        t02 = d0 - d2
        t12 = d1 + d2
        t22 = -d1 + d2
        t32 = d1 - d3
        d0, d1, d2, d3 = input_tile[0, 3], input_tile[1, 3], input_tile[2, 3], input_tile[3, 3]
        t03 = d0 - d2
        t13 = d1 + d2
        t23 = -d1 + d2
        t33 = d1 - d3
        # (B^T d) B, times the transformed filter elementwise
        m00 = (t00 - t02) * transformed_filter[0]
        m01 = (t01 + t02) * transformed_filter[1]
        m02 = (-t01 + t02) * transformed_filter[2]
        m03 = (t01 - t03) * transformed_filter[3]
        m10 = (t10 - t12) * transformed_filter[4]
        m11 = (t11 + t12) * transformed_filter[5]
        m12 = (-t11 + t12) * transformed_filter[6]
        m13 = (t11 - t13) * transformed_filter[7]
        m20 = (t20 - t22) * transformed_filter[8]
        m21 = (t21 + t22) * transformed_filter[9]
        m22 = (-t21 + t22) * transformed_filter[10]
        m23 = (t21 - t23) * transformed_filter[11]
        m30 = (t30 - t32) * transformed_filter[12]
        m31 = (t31 + t32) * transformed_filter[13]
        m32 = (-t31 + t32) * transformed_filter[14]
        m33 = (t31 - t33) * transformed_filter[15]
        # A^T m
        a00 = m00 + m10 + m20
        a10 = m10 - m20 - m30
        a01 = m01 + m11 + m21
        a11 = m11 - m21 - m31
        a02 = m02 + m12 + m22
        a12 = m12 - m22 - m32
        a03 = m03 + m13 + m23
        a13 = m13 - m23 - m33
        # (A^T m) A and the stores that fall inside the output map
        x = 2 * tile_i
        y = 2 * tile_j
        out_size = map_size - 2
        if x < out_size:
            if y < out_size:
                output[x * out_size + y] = a00 + a01 + a02
            if y + 1 < out_size:
                output[x * out_size + y + 1] = a01 - a02 - a03
        if x + 1 < out_size:
            if y < out_size:
                output[(x + 1) * out_size + y] = a10 + a11 + a12
            if y + 1 < out_size:
                output[(x + 1) * out_size + y + 1] = a11 - a12 - a13
    return output


@cuda.jit
def _winograd_gpu(inp, transformed_filter, output, offset_i, offset_j, map_size):
    tile_i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x + offset_i
    tile_j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y + offset_j
    input_tile = cuda.local.array((4, 4), dtype=numba.float32)
    for i in range(4):
        for j in range(4):
            x = 2 * tile_i + i
            y = 2 * tile_j + j
            if x >= map_size or y >= map_size:
                input_tile[i, j] = numba.float32(0.0)
                continue
            input_tile[i, j] = inp[x * map_size + y]
    # B^T d (column j of the 4 x 4 tile: tmp_0j ... tmp_3j)
    d0, d1, d2, d3 = input_tile[0, 0], input_tile[1, 0], input_tile[2, 0], input_tile[3, 0]
    t00 = d0 - d2
    t10 = d1 + d2
    t20 = -d1 + d2
    t30 = d1 - d3
    d0, d1, d2, d3 = input_tile[0, 1], input_tile[1, 1], input_tile[2, 1], input_tile[3, 1]
    t01 = d0 - d2
    t11 = d1 + d2
    t21 = -d1 + d2
    t31 = d1 - d3
    d0, d1, d2, d3 = input_tile[0, 2], input_tile[1, 2], input_tile[2, 2], input_tile[3, 2]
    t02 = d0 - d2
    t12 = d1 + d2
    t22 = -d1 + d2
    t32 = d1 - d3
    d0, d1, d2, d3 = input_tile[0, 3], input_tile[1, 3], input_tile[2, 3], input_tile[3, 3]
    t03 = d0 - d2
    t13 = d1 + d2
    t23 = -d1 + d2
    t33 = d1 - d3
    # (B^T d) B, times the transformed filter elementwise
    m00 = (t00 - t02) * transformed_filter[0]
    m01 = (t01 + t02) * transformed_filter[1]
    m02 = (-t01 + t02) * transformed_filter[2]
    m03 = (t01 - t03) * transformed_filter[3]
    m10 = (t10 - t12) * transformed_filter[4]
    m11 = (t11 + t12) * transformed_filter[5]
    m12 = (-t11 + t12) * transformed_filter[6]
    m13 = (t11 - t13) * transformed_filter[7]
    m20 = (t20 - t22) * transformed_filter[8]
    m21 = (t21 + t22) * transformed_filter[9]
    m22 = (-t21 + t22) * transformed_filter[10]
    m23 = (t21 - t23) * transformed_filter[11]
    m30 = (t30 - t32) * transformed_filter[12]
    m31 = (t31 + t32) * transformed_filter[13]
    m32 = (-t31 + t32) * transformed_filter[14]
    m33 = (t31 - t33) * transformed_filter[15]
    # A^T m
    a00 = m00 + m10 + m20
    a10 = m10 - m20 - m30
    a01 = m01 + m11 + m21
    a11 = m11 - m21 - m31
    a02 = m02 + m12 + m22
    a12 = m12 - m22 - m32
    a03 = m03 + m13 + m23
    a13 = m13 - m23 - m33
    # (A^T m) A and the stores that fall inside the output map
    x = 2 * tile_i
    y = 2 * tile_j
    out_size = map_size - 2
    if x < out_size:
        if y < out_size:
            output[x * out_size + y] = a00 + a01 + a02
        if y + 1 < out_size:
            output[x * out_size + y + 1] = a01 - a02 - a03
    if x + 1 < out_size:
        if y < out_size:
            output[(x + 1) * out_size + y] = a10 + a11 + a12
        if y + 1 < out_size:
            output[(x + 1) * out_size + y + 1] = a11 - a12 - a13

def _to_device(inp, transformed_filter, output, offset_i, offset_j, map_size, grid_x, grid_y):
    return {"arrays": (cuda.to_device(inp), cuda.to_device(transformed_filter), cuda.to_device(output)),
            "scalars": (int(offset_i), int(offset_j), int(map_size)), "grid": (int(grid_x), int(grid_y))}


def _launch(s):
    _winograd_gpu[s["grid"], (BLOCK_X, BLOCK_Y)](*s["arrays"], *s["scalars"])


def _from_device(s):
    return s["arrays"][2].copy_to_host()


FILTER = np.array([[0.2, -0.3, 0.4], [0.5, 0.6, 0.7], [-0.8, -0.9, 0.10]], dtype=np.float32)


def filter_transformation(g=FILTER):
    """The host's ``G g G^T`` of the 3 x 3 filter (float32 arithmetic as written): 16 floats, row-major."""
    h = np.float32(0.5)
    tmp = np.empty((4, 3), dtype=np.float32)
    for j in range(3):
        tmp[0, j] = g[0, j]
        tmp[1, j] = h * g[0, j] + h * g[1, j] + h * g[2, j]
        tmp[2, j] = h * g[0, j] - h * g[1, j] + h * g[2, j]
        tmp[3, j] = g[2, j]
    out = np.empty(16, dtype=np.float32)
    for i in range(4):
        out[i * 4 + 0] = tmp[i, 0]
        out[i * 4 + 1] = h * tmp[i, 0] + h * tmp[i, 1] + h * tmp[i, 2]
        out[i * 4 + 2] = h * tmp[i, 0] - h * tmp[i, 1] + h * tmp[i, 2]
        out[i * 4 + 3] = tmp[i, 2]
    return out


def make_inputs(params, seed):
    """``(image, transformed filter, output, 0, 0, map_size, grid_x, grid_y)`` of the first launch."""
    m = int(params["map_size"])
    image = (glibc_rand(1 + seed, m * m).astype(np.float32) / np.float32(RAND_MAX)).astype(np.float32)
    gx, gy = launch_grid(m)
    return image, filter_transformation(), np.zeros((m - 2) * (m - 2), dtype=np.float32), 0, 0, m, gx, gy


def work(params):
    gx, gy = launch_grid(int(params["map_size"]))
    return gx * gy * BLOCK_X * BLOCK_Y, BLOCK_X * BLOCK_Y


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="winograd",
        kernel="winograd_conv2d",
        description="HeCBench winograd: 3x3 convolution of a 1024x1024 image by Winograd F(2x2,3x3), one "
        "thread per 2x2 output tile (4x4 input tile transformed, multiplied, transformed back)",
        cpu=winograd_conv2d,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-5,
        atol=1e-6,
    ),
]
