"""Determinant of the Hessian by box filters on an integral image, HeCBench ``doh``: the kernel
``hessian_matrix_det`` (scikit-image's ``_hessian_matrix_det``, SURF's approximation).

Each thread takes one pixel ``(r, c)`` of an ``img_rows x img_cols`` integral image. With ``size = (int)(3
sigma)``, ``b = (size - 1) / 2 + 1``, ``l = size / 3``, ``w = size``, ``w_i = 1 / size^2``, it integrates eight
boxes, each by ``_integ``: the four corners of the box (top-left and far corner clipped into the image) read
from the integral image, ``max(0, A + D - B - C)``; the four ``l x l`` quadrant boxes give ``dxy = -(bl + tr -
tl - br) w_i``, a middle and a side box give ``dxx = -(mid - 3 side) w_i`` and two more ``dyy``; the output is
``dxx dyy - 0.81 dxy^2``.

Launch: blocks of 256, ``ceil(rows cols / 256)`` blocks, guard ``tid < rows cols``. Measured point ``480 640
100`` (height, width, repeat): 1200 blocks, ``sigma = 4`` (size 12, b 6, l 4). The timed launch is the first
of ``repeat`` identical launches.

Inputs: the host draws a standard normal image (``std::default_random_engine(123)``, float normal
distribution) and integrates it on the host (``s`` summed over the whole rectangle in float); here NumPy's
``default_rng(seed)`` draws the normals (not the same values) and the integral image is a double-precision
cumulative sum rounded to float (the host's float sums differ in the last bits).

``_integ`` and ``_clip`` are device functions of the original, helper functions here (``@numba.njit``; the GPU
port calls the same code as device functions). Precision: single (float32), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
ZERO = np.float32(0.0)
ONE = np.float32(1.0)
THREE = np.float32(3.0)
C081 = np.float32(0.81)
SIGMA = np.float32(4.0)

POINTS = {"480 640 100": {"height": 480, "width": 640, "repeat": 100}}
TEST_POINT = {"height": 24, "width": 32, "repeat": 1}
#: 60 x 80 pixels (about 3e6 records; the measured point has 480 x 640)
FEATURE_POINT = {"height": 60, "width": 80, "repeat": 100}


def _clip_py(x, low, high):
    if x > high:
        return high
    elif x < low:
        return low
    return x


_clip = numba.njit(cache=True)(_clip_py)


def _integ_py(img, img_rows, img_cols, r, c, rl, cl):
    """The box integral: corners clipped into the image, negative sums clamped to 0."""
    r = _clip(r, 0, img_rows - 1)
    c = _clip(c, 0, img_cols - 1)
    r2 = _clip(r + rl, 0, img_rows - 1)
    c2 = _clip(c + cl, 0, img_cols - 1)
    ans = img[r * img_cols + c] + img[r2 * img_cols + c2] - img[r * img_cols + c2] - img[r2 * img_cols + c]
    return max(ZERO, ans)


_integ = numba.njit(cache=True)(_integ_py)


def hessian_matrix_det(img, img_rows, img_cols, sigma, out, n_threads):
    """The approximate Hessian determinant of every pixel into ``out``."""
    for tid in numba.prange(n_threads):
        if tid < img_rows * img_cols:
            r = tid // img_cols
            c = tid % img_cols
            size = int(THREE * sigma)
            b = (size - 1) // 2 + 1
            l = size // 3  # noqa: E741 (the original's name)
            w = size
            w_i = ONE / np.float32(size * size)
            tl = _integ(img, img_rows, img_cols, r - l, c - l, l, l)
            br = _integ(img, img_rows, img_cols, r + 1, c + 1, l, l)
            bl = _integ(img, img_rows, img_cols, r - l, c + 1, l, l)
            tr = _integ(img, img_rows, img_cols, r + 1, c - l, l, l)
            dxy = bl + tr - tl - br
            dxy = -dxy * w_i
            mid = _integ(img, img_rows, img_cols, r - l + 1, c - l, 2 * l - 1, w)
            side = _integ(img, img_rows, img_cols, r - l + 1, c - l // 2, 2 * l - 1, l)
            dxx = mid - THREE * side
            dxx = -dxx * w_i
            mid = _integ(img, img_rows, img_cols, r - l, c - b + 1, w, 2 * b - 1)
            side = _integ(img, img_rows, img_cols, r - b // 2, c - b + 1, b, 2 * b - 1)
            dyy = mid - THREE * side
            dyy = -dyy * w_i
            out[tid] = dxx * dyy - C081 * (dxy * dxy)
    return out


_clip_dev = cuda.jit(device=True)(_clip_py)


@cuda.jit(device=True)
def _integ_dev(img, img_rows, img_cols, r, c, rl, cl):
    r = _clip_dev(r, 0, img_rows - 1)
    c = _clip_dev(c, 0, img_cols - 1)
    r2 = _clip_dev(r + rl, 0, img_rows - 1)
    c2 = _clip_dev(c + cl, 0, img_cols - 1)
    ans = img[r * img_cols + c] + img[r2 * img_cols + c2] - img[r * img_cols + c2] - img[r2 * img_cols + c]
    return max(ZERO, ans)


@cuda.jit
def _doh_gpu(img, img_rows, img_cols, sigma, out):
    tid = cuda.grid(1)
    if tid < img_rows * img_cols:
        r = tid // img_cols
        c = tid % img_cols
        size = int(THREE * sigma)
        b = (size - 1) // 2 + 1
        l = size // 3  # noqa: E741
        w = size
        w_i = ONE / numba.float32(size * size)
        tl = _integ_dev(img, img_rows, img_cols, r - l, c - l, l, l)
        br = _integ_dev(img, img_rows, img_cols, r + 1, c + 1, l, l)
        bl = _integ_dev(img, img_rows, img_cols, r - l, c + 1, l, l)
        tr = _integ_dev(img, img_rows, img_cols, r + 1, c - l, l, l)
        dxy = -(bl + tr - tl - br) * w_i
        mid = _integ_dev(img, img_rows, img_cols, r - l + 1, c - l, 2 * l - 1, w)
        side = _integ_dev(img, img_rows, img_cols, r - l + 1, c - l // 2, 2 * l - 1, l)
        dxx = -(mid - THREE * side) * w_i
        mid = _integ_dev(img, img_rows, img_cols, r - l, c - b + 1, w, 2 * b - 1)
        side = _integ_dev(img, img_rows, img_cols, r - b // 2, c - b + 1, b, 2 * b - 1)
        dyy = -(mid - THREE * side) * w_i
        out[tid] = dxx * dyy - C081 * (dxy * dxy)


def _to_device(img, rows, cols, sigma, out, n_threads):
    return {"img": cuda.to_device(img), "rows": int(rows), "cols": int(cols), "sigma": np.float32(sigma),
            "out": cuda.to_device(out), "n": int(n_threads)}


def _launch(s):
    _doh_gpu[s["n"] // BLOCK, BLOCK](s["img"], s["rows"], s["cols"], s["sigma"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def integral_image(height, width, seed):
    """The host's integral image of a standard normal image (flattened, float32)."""
    img = np.random.default_rng(seed).standard_normal((height, width)).astype(np.float32)
    return img.astype(np.float64).cumsum(axis=0).cumsum(axis=1).astype(np.float32).ravel()


def make_inputs(params, seed):
    """The region's arguments at the first launch: the integral image, ``sigma = 4``, an empty output."""
    h, w = int(params["height"]), int(params["width"])
    return integral_image(h, w, seed), h, w, SIGMA, np.zeros(h * w, dtype=np.float32), work(params)[0]


def work(params):
    n = int(params["height"]) * int(params["width"])
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="doh",
        kernel="hessian_matrix_det",
        description="HeCBench doh: determinant of the Hessian from eight box integrals of an integral image, "
        "one thread per pixel",
        cpu=hessian_matrix_det,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-4,
        atol=1e-4,
    ),
]
