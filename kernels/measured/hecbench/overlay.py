"""Detection box overlay, HeCBench ``overlay`` (from NVIDIA jetson-inference): the kernel
``DetectionOverlayBox<float3>``, its first launch.

The host blends ``numDetections`` boxes into a ``width x height`` float3 image, one launch per box; the first
launch draws box 0. One thread per box pixel ``(box_x, box_y)`` on an ``(ceil(w / 8), ceil(h / 8))`` grid of 8 x
8 blocks: threads outside the box return, so do those whose image pixel ``(x0 + box_x, y0 + box_y)`` falls off
the image; the others read the pixel and write ``alpha * color + (1 - alpha) * pixel`` for x, y, z (alpha =
``color.w / 255``, color (255, 204, 203, 1)) into the output image (single precision).

Launch geometry and inputs: ``srand(123)``, then ``rand() % 256`` for x, y, z of every pixel, then each box's
width ``64 + rand() % 128``, height ``64 + rand() % 128``, left ``rand() % (width - 64)``, top ``rand() % (height -
64)``. With glibc's ``rand`` (reproduced exactly for seed 0; ``srand(123 + seed)`` otherwise) box 0 of the 640 x
480 image is 83 x 124 at (155, 136): grid (11, 16), the data's. The output buffer starts as a copy of the input
(the host's device-to-device copy). A point may give its box explicitly (``box``: width, height, left, top; the
test point does, to keep the simulated launch small). The region flattens the 2-D thread space into one loop
over ``box_y * (grid.x * 8) + box_x``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCK = 8
COLOR = (255.0, 204.0, 203.0, 1.0)

POINTS = {"640 480": {"width": 640, "height": 480}}
#: a 20 x 12 box hanging over the right and bottom edges of a 96 x 80 image
TEST_POINT = {"width": 96, "height": 80, "box": (20, 12, 86, 72)}


def detection_overlay_box(inp, out, img_width, img_height, x0, y0, box_width, box_height, cx, cy, cz, cw,
                          threads_x, n_threads):
    """Blend one box into ``out`` (float32 ``(height * width, 3)``). ``threads_x``: grid.x * 8. Returns
    ``out``."""
    for gid in numba.prange(n_threads):
        box_y = gid // threads_x
        box_x = gid - box_y * threads_x
        if box_x < box_width and box_y < box_height:
            x = box_x + x0
            y = box_y + y0
            if x < img_width and y < img_height:
                alpha = cw / np.float32(255.0)
                ialph = np.float32(1.0) - alpha
                p = y * img_width + x
                px = inp[p, 0]
                py = inp[p, 1]
                pz = inp[p, 2]
                out[p, 0] = alpha * cx + ialph * px
                out[p, 1] = alpha * cy + ialph * py
                out[p, 2] = alpha * cz + ialph * pz
    return out


@cuda.jit
def _overlay_gpu(inp, out, img_width, img_height, x0, y0, box_width, box_height, cx, cy, cz, cw):
    box_x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    box_y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if box_x >= box_width or box_y >= box_height:
        return
    x = box_x + x0
    y = box_y + y0
    if x >= img_width or y >= img_height:
        return
    alpha = cw / numba.float32(255.0)
    ialph = numba.float32(1.0) - alpha
    p = y * img_width + x
    px = inp[p, 0]
    py = inp[p, 1]
    pz = inp[p, 2]
    out[p, 0] = alpha * cx + ialph * px
    out[p, 1] = alpha * cy + ialph * py
    out[p, 2] = alpha * cz + ialph * pz


def _to_device(inp, out, *scalars):
    return {"inp": cuda.to_device(inp), "out": cuda.to_device(out), "scalars": scalars}


def _launch(s):
    sc = s["scalars"]
    bw, bh = sc[4], sc[5]
    grid = ((bw + BLOCK - 1) // BLOCK, (bh + BLOCK - 1) // BLOCK)
    _overlay_gpu[grid, (BLOCK, BLOCK)](s["inp"], s["out"], *sc[:10])


def _from_device(s):
    return s["out"].copy_to_host()


def _draws(params, seed):
    w, h = int(params["width"]), int(params["height"])
    r = glibc_rand(123 + seed, 3 * w * h + 4)
    img = (r[: 3 * w * h] % 256).astype(np.float32).reshape(w * h, 3)
    box = params.get("box")
    if box is None:
        t = r[3 * w * h :]
        box = (64 + int(t[0]) % 128, 64 + int(t[1]) % 128, int(t[2]) % (w - 64), int(t[3]) % (h - 64))
    return img, tuple(int(v) for v in box)


def box_of(params, seed=0):
    """Box 0: ``(width, height, left, top)``."""
    if params.get("box") is not None:
        return tuple(int(v) for v in params["box"])
    return _draws(params, seed)[1]


def make_inputs(params, seed):
    img, (bw, bh, left, top) = _draws(params, seed)
    f = np.float32
    gx = (bw + BLOCK - 1) // BLOCK
    gy = (bh + BLOCK - 1) // BLOCK
    return (img, img.copy(), int(params["width"]), int(params["height"]), left, top, bw, bh, f(COLOR[0]),
            f(COLOR[1]), f(COLOR[2]), f(COLOR[3]), gx * BLOCK, gx * gy * BLOCK * BLOCK)


def work(params):
    bw, bh, _, _ = box_of(params)
    return ((bw + BLOCK - 1) // BLOCK) * ((bh + BLOCK - 1) // BLOCK) * BLOCK * BLOCK, BLOCK * BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="overlay",
        kernel="DetectionOverlayBox",
        description="HeCBench overlay: alpha-blend one 83 x 124 detection box into a 640 x 480 float3 image, "
        "one thread per box pixel, 8 x 8 blocks",
        cpu=detection_overlay_box,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-6,
        atol=1e-5,
    ),
]
