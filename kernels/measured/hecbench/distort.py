"""Barrel distortion of an RGB image, HeCBench ``distort``: the kernel ``barrel_distort``.

Each thread takes one output pixel ``(h, w)``: it maps the pixel through the radial model (after scaling
and shifting, ``x' = x + (x - cx) K r^2`` and ``y' = y + (y - cy) K r^2`` with ``r^2 = (x - cx)^2 + (y - cy)^2``)
and samples the source image at ``(row y', column x')`` bilinearly from the four neighbouring pixels
(``floorf``/``ceilf`` of both coordinates), each channel ``s1 (1 - x)(1 - y) + s2 (1 - x) y + s3 x y +
s4 x (1 - y)`` converted to an unsigned char; a sample outside the image gives black.

Launch: blocks of 16 x 16, ``(width / 16 + 1) x (height / 16 + 1)`` blocks, guard ``w < width && h <
height``. Measured point ``1024 1024 0.001 1000`` (width, height, K, repeat): 65 x 65 blocks. The timed launch
is the first of ``repeat`` identical launches.

Inputs: the host's ``srand(123)``: per pixel ``rand() % 256`` for x, y, z (glibc ``rand`` seeded with
``123 + seed``). The properties: centre ``(width / 2, height / 2)``, threshold 1, the shifts found by the
host's bisection ``calc_shift`` (float, as the host) and the scales ``(size - shift - shift_2) / size``.

Layout: ``uchar3`` images are ``(height * width, 3)`` uint8 arrays. The ``Properties`` struct the kernel
reads through a pointer is two arrays: its floats ``[K, centerX, centerY, thresh, xscale, yscale, xshift,
yshift]`` (float32) and its ints ``[width, height]`` (int32); every field the kernel reads is a load, as in
the original. The 2-D grid is flattened: thread ``gid`` is thread ``gid % 256`` (``tx = t % 16``, ``ty = t
/ 16``) of block ``gid / 256`` (``bx = b % gridX``, ``by = b / gridX``). Precision: single, as the original.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BX = BY = 16
BLOCK = BX * BY
ONE = np.float32(1.0)
HALF = np.float32(0.5)

POINTS = {"1024 1024 0.001 1000": {"width": 1024, "height": 1024, "K": 0.001, "repeat": 1000}}
#: 3 x 2 blocks
TEST_POINT = {"width": 40, "height": 30, "K": 0.001, "repeat": 1}
#: 10 x 10 blocks (about 4e6 records; the measured point has 65 x 65)
FEATURE_POINT = {"width": 150, "height": 150, "K": 0.001, "repeat": 1000}

K_, CX, CY, THRESH, XSCALE, YSCALE, XSHIFT, YSHIFT = range(8)


def barrel_distort(src, dst, propf, propi, grid_x, n_threads):
    """Distort ``src`` into ``dst`` (one thread per output pixel)."""
    for gid in numba.prange(n_threads):
        b = gid // 256
        t = gid % 256
        w = (b % grid_x) * 16 + t % 16
        h = (b // grid_x) * 16 + t // 16
        width = propi[0]
        height = propi[1]
        if w < width and h < height:
            # getRadialX
            x = np.float32(w) * propf[XSCALE] + propf[XSHIFT]
            y = np.float32(h) * propf[YSCALE] + propf[YSHIFT]
            rx = x + ((x - propf[CX]) * propf[K_] * ((x - propf[CX]) * (x - propf[CX])
                                                      + (y - propf[CY]) * (y - propf[CY])))
            # getRadialY
            x = np.float32(w) * propf[XSCALE] + propf[XSHIFT]
            y = np.float32(h) * propf[YSCALE] + propf[YSHIFT]
            ry = y + ((y - propf[CY]) * propf[K_] * ((x - propf[CX]) * (x - propf[CX])
                                                      + (y - propf[CY]) * (y - propf[CY])))
            # sampleImageTest(src, ry, rx)
            idx0 = ry
            idx1 = rx
            o = h * width + w
            if idx0 < 0 or idx1 < 0 or idx0 > np.float32(height - 1) or idx1 > np.float32(width - 1):
                dst[o, 0] = 0
                dst[o, 1] = 0
                dst[o, 2] = 0
            else:
                f0 = int(np.floor(idx0))
                c0 = int(np.ceil(idx0))
                f1 = int(np.floor(idx1))
                c1 = int(np.ceil(idx1))
                p1 = f0 * width + f1
                p2 = f0 * width + c1
                p3 = c0 * width + c1
                p4 = c0 * width + f1
                fx = idx0 - np.float32(f0)
                fy = idx1 - np.float32(f1)
                dst[o, 0] = np.uint8(np.float32(src[p1, 0]) * (ONE - fx) * (ONE - fy)
                                     + np.float32(src[p2, 0]) * (ONE - fx) * fy
                                     + np.float32(src[p3, 0]) * fx * fy + np.float32(src[p4, 0]) * fx * (ONE - fy))
                dst[o, 1] = np.uint8(np.float32(src[p1, 1]) * (ONE - fx) * (ONE - fy)
                                     + np.float32(src[p2, 1]) * (ONE - fx) * fy
                                     + np.float32(src[p3, 1]) * fx * fy + np.float32(src[p4, 1]) * fx * (ONE - fy))
                dst[o, 2] = np.uint8(np.float32(src[p1, 2]) * (ONE - fx) * (ONE - fy)
                                     + np.float32(src[p2, 2]) * (ONE - fx) * fy
                                     + np.float32(src[p3, 2]) * fx * fy + np.float32(src[p4, 2]) * fx * (ONE - fy))
    return dst


@cuda.jit
def _distort_gpu(src, dst, propf, propi):
    h = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    w = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    width = propi[0]
    height = propi[1]
    if w < width and h < height:
        x = numba.float32(w) * propf[XSCALE] + propf[XSHIFT]
        y = numba.float32(h) * propf[YSCALE] + propf[YSHIFT]
        r2 = (x - propf[CX]) * (x - propf[CX]) + (y - propf[CY]) * (y - propf[CY])
        rx = x + ((x - propf[CX]) * propf[K_] * r2)
        ry = y + ((y - propf[CY]) * propf[K_] * r2)
        o = h * width + w
        if ry < 0 or rx < 0 or ry > numba.float32(height - 1) or rx > numba.float32(width - 1):
            for ch in range(3):
                dst[o, ch] = 0
        else:
            f0 = int(math.floor(ry))
            c0 = int(math.ceil(ry))
            f1 = int(math.floor(rx))
            c1 = int(math.ceil(rx))
            fx = ry - numba.float32(f0)
            fy = rx - numba.float32(f1)
            for ch in range(3):
                v = (numba.float32(src[f0 * width + f1, ch]) * (ONE - fx) * (ONE - fy)
                     + numba.float32(src[f0 * width + c1, ch]) * (ONE - fx) * fy
                     + numba.float32(src[c0 * width + c1, ch]) * fx * fy
                     + numba.float32(src[c0 * width + f1, ch]) * fx * (ONE - fy))
                dst[o, ch] = numba.uint8(v)


def _to_device(src, dst, propf, propi, grid_x, n_threads):
    blocks = n_threads // BLOCK
    return {"src": cuda.to_device(src), "dst": cuda.to_device(dst), "propf": cuda.to_device(propf),
            "propi": cuda.to_device(propi), "grid": (int(grid_x), blocks // int(grid_x))}


def _launch(s):
    _distort_gpu[s["grid"], (BX, BY)](s["src"], s["dst"], s["propf"], s["propi"])


def _from_device(s):
    return s["dst"].copy_to_host()


def calc_shift(x1, x2, cx, k, thresh):
    """The host's bisection for the shift (float arithmetic, as the host's recursion)."""
    x1, x2, cx, k, thresh = (np.float32(v) for v in (x1, x2, cx, k, thresh))
    while True:
        x3 = x1 + (x2 - x1) * HALF
        result1 = x1 + ((x1 - cx) * k * ((x1 - cx) * (x1 - cx)))
        result3 = x3 + ((x3 - cx) * k * ((x3 - cx) * (x3 - cx)))
        if -thresh < result1 < thresh:
            return x1
        if result3 < 0:
            x1 = x3
        else:
            x2 = x3


def properties(width, height, k):
    """The host's ``Properties``: ``(floats, ints)`` as the region reads them."""
    k = np.float32(k)
    cx, cy = np.float32(width // 2), np.float32(height // 2)
    thresh = ONE
    xshift = calc_shift(0, cx - ONE, cx, k, thresh)
    ncx = np.float32(width) - cx
    xshift2 = calc_shift(0, ncx - ONE, ncx, k, thresh)
    yshift = calc_shift(0, cy - ONE, cy, k, thresh)
    ncy = np.float32(height) - cy
    yshift2 = calc_shift(0, ncy - ONE, ncy, k, thresh)
    xscale = (np.float32(width) - xshift - xshift2) / np.float32(width)
    yscale = (np.float32(height) - yshift - yshift2) / np.float32(height)
    propf = np.array([k, cx, cy, thresh, xscale, yscale, xshift, yshift], dtype=np.float32)
    return propf, np.array([width, height], dtype=np.int32)


def make_inputs(params, seed):
    """The region's arguments at the first launch: the random image, an empty output, the properties."""
    width, height = int(params["width"]), int(params["height"])
    src = (glibc_rand(123 + seed, 3 * width * height) % 256).astype(np.uint8).reshape(width * height, 3)
    dst = np.zeros_like(src)
    propf, propi = properties(width, height, params["K"])
    return src, dst, propf, propi, width // BX + 1, work(params)[0]


def work(params):
    gx, gy = int(params["width"]) // BX + 1, int(params["height"]) // BY + 1
    return gx * gy * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="distort",
        kernel="barrel_distort",
        description="HeCBench distort: barrel distortion of an RGB image with bilinear sampling, one thread "
        "per pixel, 16 x 16 blocks",
        cpu=barrel_distort,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=1,
    ),
]
