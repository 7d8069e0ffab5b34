"""Sobel edge filter, HeCBench ``sobel`` (the AMD APP SDK sample): the kernel ``sobel_filter``, its first launch.

One thread per pixel of a ``width x height`` RGBA image (``uchar4``): threads off the one-pixel border read
their eight neighbours, convert them to float and, per channel, form ``Gx = i00 + 2 i10 + i20 - i02 - 2 i12 -
i22`` and ``Gy = i00 - i20 + 2 i01 - 2 i21 + i02 - i22``; the output channel is ``sqrtf(Gx^2 + Gy^2) / 2``
clamped to [0, 255] and truncated to a byte. Border threads write nothing (the output buffer is zeroed).

Launch: ``(width / 16, height / 16)`` blocks of 16 x 16; the measured point's grid (32, 32) is a 512 x 512
image. The region flattens the 2-D thread space into one loop over ``y * width + x``; the four channels of a
pixel are a loop of four (the original's ``float4`` arithmetic written out per component).

Input: the program reads ``SobelFilter_Input.bmp`` (a 512 x 512 photograph of the AMD sample, not in the
reference tree). The image is synthesised with the same size and format: a smooth two-tone pattern with
edges (a disc and stripes) plus uniform noise of +-8 levels, alpha 255. Its values decide only the output bytes,
not which threads work or how much (no data-dependent branch besides the clamp).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 16

POINTS = {"../sobel-sycl/SobelFilter_Input.bmp 100000": {"width": 512, "height": 512}}
TEST_POINT = {"width": 48, "height": 32}
#: the measured point traces about 4e7 records: features from 128 x 128
FEATURE_POINT = {"width": 128, "height": 128}


def sobel_filter(inp, out, width, height):
    """``inp``, ``out``: uint8 ``(height * width, 4)`` RGBA pixels. Returns ``out``."""
    two = np.float32(2.0)
    for gid in numba.prange(width * height):
        y = gid // width
        x = gid - y * width
        if x >= 1 and x < width - 1 and y >= 1 and y < height - 1:
            c = x + y * width
            for k in range(4):
                i00 = np.float32(inp[c - 1 - width, k])
                i01 = np.float32(inp[c - width, k])
                i02 = np.float32(inp[c + 1 - width, k])
                i10 = np.float32(inp[c - 1, k])
                i12 = np.float32(inp[c + 1, k])
                i20 = np.float32(inp[c - 1 + width, k])
                i21 = np.float32(inp[c + width, k])
                i22 = np.float32(inp[c + 1 + width, k])
                gx = i00 + two * i10 + i20 - i02 - two * i12 - i22
                gy = i00 - i20 + two * i01 - two * i21 + i02 - i22
                v = np.float32(math.sqrt(gx * gx + gy * gy)) / two
                if v > np.float32(255.0):
                    v = np.float32(255.0)
                elif v < np.float32(0.0):
                    v = np.float32(0.0)
                out[c, k] = np.int64(v)
    return out


@cuda.jit
def _sobel_gpu(inp, out, width, height):
    two = numba.float32(2.0)
    x = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    y = cuda.blockDim.y * cuda.blockIdx.y + cuda.threadIdx.y
    if x >= 1 and x < width - 1 and y >= 1 and y < height - 1:
        c = x + y * width
        for k in range(4):
            i00 = numba.float32(inp[c - 1 - width, k])
            i01 = numba.float32(inp[c - width, k])
            i02 = numba.float32(inp[c + 1 - width, k])
            i10 = numba.float32(inp[c - 1, k])
            i12 = numba.float32(inp[c + 1, k])
            i20 = numba.float32(inp[c - 1 + width, k])
            i21 = numba.float32(inp[c + width, k])
            i22 = numba.float32(inp[c + 1 + width, k])
            gx = i00 + two * i10 + i20 - i02 - two * i12 - i22
            gy = i00 - i20 + two * i01 - two * i21 + i02 - i22
            v = numba.float32(math.sqrt(gx * gx + gy * gy)) / two
            if v > numba.float32(255.0):
                v = numba.float32(255.0)
            elif v < numba.float32(0.0):
                v = numba.float32(0.0)
            out[c, k] = numba.int64(v)


def _to_device(inp, out, width, height):
    return {"inp": cuda.to_device(inp), "out": cuda.to_device(out), "w": int(width), "h": int(height)}


def _launch(s):
    _sobel_gpu[(s["w"] // BLOCK, s["h"] // BLOCK), (BLOCK, BLOCK)](s["inp"], s["out"], s["w"], s["h"])


def _from_device(s):
    return s["out"].copy_to_host()


def synthetic_image(width, height, seed):
    """A ``height x width`` RGBA test image (uint8 ``(height * width, 4)``): a disc and stripes over a
    gradient, plus noise."""
    rng = np.random.default_rng(seed)
    y, x = np.indices((height, width), dtype=np.float64)
    disc = ((x - width / 2) ** 2 + (y - height / 2) ** 2 < (min(width, height) / 3) ** 2) * 120.0
    stripes = ((x // max(1, width // 8)) % 2) * 60.0
    base = 40.0 + 60.0 * y / height
    img = np.empty((height * width, 4), dtype=np.uint8)
    for k, w in enumerate((1.0, 0.8, 0.6)):
        v = w * (base + disc + stripes) + rng.integers(-8, 9, size=(height, width))
        img[:, k] = np.clip(v, 0, 255).astype(np.uint8).ravel()
    img[:, 3] = 255
    return img


def make_inputs(params, seed):
    w, h = int(params["width"]), int(params["height"])
    return synthetic_image(w, h, seed), np.zeros((w * h, 4), np.uint8), w, h


def work(params):
    return int(params["width"]) // BLOCK * BLOCK * (int(params["height"]) // BLOCK * BLOCK), BLOCK * BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="sobel",
        kernel="sobel_filter",
        description="HeCBench sobel: 3 x 3 Sobel gradient magnitude of a 512 x 512 RGBA image, one thread per "
        "pixel, 16 x 16 blocks",
        cpu=sobel_filter,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=1.0,
    ),
]
