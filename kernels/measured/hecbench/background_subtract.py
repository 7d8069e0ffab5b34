"""Background subtraction by a running average, HeCBench ``background-subtract``: kernels ``findMovingPixels``,
``updateBackground`` and ``updateThreshold`` (the unmerged path, ``merge = 0``).

Per pixel (one thread each, unsigned char images): ``findMovingPixels`` marks the pixel as moving (``Mp =
255``, else 0) when ``|Img - Img1| > Tn`` or ``|Img - Img2| > Tn`` (the current frame against the two before,
integer differences); ``updateBackground`` blends a still pixel into the background, ``Bn = 0.92 Bn + 0.08
Img`` (float, truncated to unsigned char); ``updateThreshold`` moves a still pixel's threshold, ``Tn =
max(0.92 Tn + 0.24 (Img - Bn), 20)`` with the updated ``Bn``.

Launch: blocks of 256, ``ceil(width height / 256)`` blocks, guard ``i < imgSize``. Measured point ``4096 2048
0 102`` (width, height, merge, repeat): 8388608 pixels, 32768 blocks. The host draws a new frame per
iteration and rotates three frame buffers; the kernels run from iteration 2 on, and the timed launches are
the first of each (iteration 2, in the order above, each seeing the previous kernel's output). Tracing the
buffer rotation, at iteration 2 ``Img`` holds frame 0, ``Img1`` frame 2 and ``Img2`` frame 1.

Inputs: the host's ``std::mt19937(123)`` with ``uniform_int_distribution(0, 255)``: the background ``Bn``
(drawn first), then one frame per iteration; here NumPy's ``default_rng(seed)`` draws the same uniform bytes
in the same order (not the same values). ``Tn`` starts at 128. The state before ``updateBackground``
(``Mp``) and before ``updateThreshold`` (``Mp``, the blended ``Bn``) is produced by NumPy.

Types as the original: unsigned char images (uint8), the differences as ints, the blends in float32.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
A92 = np.float32(0.92)
A08 = np.float32(0.08)
A24 = np.float32(0.24)
FLOOR = np.float32(20.0)

POINTS = {"4096 2048 0 102": {"width": 4096, "height": 2048, "merge": 0, "repeat": 102}}
TEST_POINT = {"width": 64, "height": 30, "merge": 0, "repeat": 3}
#: 512 x 512 pixels (about 4e6 records; the measured point has 4096 x 2048)
FEATURE_POINT = {"width": 512, "height": 512, "merge": 0, "repeat": 102}


def findMovingPixels(img_size, img, img1, img2, tn, mp, n_threads):
    """The moving-pixel map ``mp`` (255 moving, 0 still)."""
    for i in numba.prange(n_threads):
        if i < img_size:
            if (abs(np.int32(img[i]) - np.int32(img1[i])) > np.int32(tn[i])
                    or abs(np.int32(img[i]) - np.int32(img2[i])) > np.int32(tn[i])):
                mp[i] = 255
            else:
                mp[i] = 0
    return mp


def updateBackground(img_size, img, mp, bn, n_threads):
    """Blend the still pixels of ``img`` into the background ``bn`` (in place)."""
    for i in numba.prange(n_threads):
        if i < img_size:
            if mp[i] == 0:
                bn[i] = np.uint8(A92 * np.float32(bn[i]) + A08 * np.float32(img[i]))
    return bn


def updateThreshold(img_size, img, mp, bn, tn, n_threads):
    """Move the still pixels' thresholds ``tn`` (in place)."""
    for i in numba.prange(n_threads):
        if i < img_size:
            if mp[i] == 0:
                th = A92 * np.float32(tn[i]) + A24 * np.float32(np.int32(img[i]) - np.int32(bn[i]))
                tn[i] = np.uint8(max(th, FLOOR))
    return tn


@cuda.jit
def _find_gpu(img_size, img, img1, img2, tn, mp):
    i = cuda.grid(1)
    if i < img_size:
        if (abs(np.int32(img[i]) - np.int32(img1[i])) > np.int32(tn[i])
                or abs(np.int32(img[i]) - np.int32(img2[i])) > np.int32(tn[i])):
            mp[i] = 255
        else:
            mp[i] = 0


@cuda.jit
def _background_gpu(img_size, img, mp, bn):
    i = cuda.grid(1)
    if i < img_size:
        if mp[i] == 0:
            bn[i] = numba.uint8(A92 * numba.float32(bn[i]) + A08 * numba.float32(img[i]))


@cuda.jit
def _threshold_gpu(img_size, img, mp, bn, tn):
    i = cuda.grid(1)
    if i < img_size:
        if mp[i] == 0:
            th = A92 * numba.float32(tn[i]) + A24 * numba.float32(np.int32(img[i]) - np.int32(bn[i]))
            tn[i] = numba.uint8(max(th, FLOOR))


def _port(kernel, out):
    def to_device(img_size, *rest):
        *arrays, n_threads = rest
        return {"size": int(img_size), "arrays": [cuda.to_device(a) for a in arrays], "n": int(n_threads)}

    def launch(s):
        kernel[s["n"] // BLOCK, BLOCK](s["size"], *s["arrays"])

    def from_device(s):
        return s["arrays"][out].copy_to_host()

    return GpuPort(to_device, launch, from_device)


def state(params, seed):
    """The host's buffers at iteration 2: ``img, img1, img2`` (frames 0, 2, 1), ``bn``, ``tn``."""
    n = int(params["width"]) * int(params["height"])
    rng = np.random.default_rng(seed)
    bn = rng.integers(0, 256, n).astype(np.uint8)
    frames = [rng.integers(0, 256, n).astype(np.uint8) for _ in range(3)]
    return frames[0], frames[2], frames[1], bn, np.full(n, 128, dtype=np.uint8)


def moving(img, img1, img2, tn):
    """``findMovingPixels`` in NumPy (255 moving, 0 still)."""
    d1 = np.abs(img.astype(np.int32) - img1.astype(np.int32))
    d2 = np.abs(img.astype(np.int32) - img2.astype(np.int32))
    return np.where((d1 > tn) | (d2 > tn), 255, 0).astype(np.uint8)


def blended(img, mp, bn):
    """``updateBackground`` in NumPy."""
    new = (A92 * bn.astype(np.float32) + A08 * img.astype(np.float32)).astype(np.uint8)
    return np.where(mp == 0, new, bn)


def make_inputs_find(params, seed):
    img, img1, img2, _, tn = state(params, seed)
    n = img.size
    return n, img, img1, img2, tn, np.zeros(n, dtype=np.uint8), work(params)[0]


def make_inputs_background(params, seed):
    img, img1, img2, bn, tn = state(params, seed)
    return img.size, img, moving(img, img1, img2, tn), bn, work(params)[0]


def make_inputs_threshold(params, seed):
    img, img1, img2, bn, tn = state(params, seed)
    mp = moving(img, img1, img2, tn)
    return img.size, img, mp, blended(img, mp, bn), tn, work(params)[0]


def work(params):
    n = int(params["width"]) * int(params["height"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


def _kernel(name, region, gpu, make_inputs, what):
    return MeasuredKernel(
        source="hecbench",
        application="background-subtract",
        kernel=name,
        description=f"HeCBench background-subtract: {what}, one thread per pixel",
        cpu=region,
        gpu=gpu,
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=0,
    )


KERNELS = [
    _kernel("findMovingPixels", findMovingPixels, _port(_find_gpu, 4), make_inputs_find,
            "moving-pixel map from the frame differences"),
    _kernel("updateBackground", updateBackground, _port(_background_gpu, 2), make_inputs_background,
            "running-average background update of the still pixels"),
    _kernel("updateThreshold", updateThreshold, _port(_threshold_gpu, 3), make_inputs_threshold,
            "threshold update of the still pixels"),
]
