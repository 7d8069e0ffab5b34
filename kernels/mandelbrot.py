"""Mandelbrot escape-time counts on an ``n x n`` grid of the complex plane (divergent control).

CPU region: one iteration of the parallel loop per pixel; the inner ``while`` runs a data-dependent
number of times (1 to ``max_iter``), so neighbouring pixels do very different amounts of work. GPU
port: one thread per pixel on a 2-D grid of 16x16 blocks; warps straddling the set's boundary diverge.

Note for real GPUs: the CUDA compiler may fuse ``a*b + c`` into one FMA; a pixel whose orbit is
chaotic near the escape radius can then escape one iteration earlier or later than on the CPU. The
calibration harness reports such a point as a failed check rather than hiding it.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

BLOCK = (16, 16)
MAX_ITER = 200


def mandelbrot(xs, ys, max_iter):
    """Escape iteration count of every grid point ``xs[j] + i*ys[i]`` (``max_iter`` if it never escapes).

    Parameters
    ----------
    xs, ys : float64 real and imaginary grid coordinates.
    max_iter : iteration cap.

    Returns
    -------
    int32 array of shape ``(len(ys), len(xs))``.
    """
    h = ys.shape[0]
    w = xs.shape[0]
    out = np.empty((h, w), dtype=np.int32)
    for p in numba.prange(h * w):
        i = p // w
        j = p - i * w
        cr = xs[j]
        ci = ys[i]
        zr = 0.0
        zi = 0.0
        it = 0
        while it < max_iter and zr * zr + zi * zi <= 4.0:
            t = zr * zr - zi * zi + cr
            zi = 2.0 * zr * zi + ci
            zr = t
            it += 1
        out[i, j] = it
    return out


@cuda.jit
def _mandel(xs, ys, max_iter, out):
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        cr = xs[j]
        ci = ys[i]
        zr = 0.0
        zi = 0.0
        it = 0
        while it < max_iter and zr * zr + zi * zi <= 4.0:
            t = zr * zr - zi * zi + cr
            zi = 2.0 * zr * zi + ci
            zr = t
            it += 1
        out[i, j] = it


def _to_device(xs, ys, max_iter):
    return {"xs": cuda.to_device(xs), "ys": cuda.to_device(ys), "max_iter": int(max_iter),
            "out": cuda.device_array((ys.shape[0], xs.shape[0]), dtype=np.int32)}


def _launch(s):
    h, w = s["out"].shape
    bx = min(BLOCK[0], w)
    by = min(BLOCK[1], h)
    grid = ((w + bx - 1) // bx, (h + by - 1) // by)
    _mandel[grid, (bx, by)](s["xs"], s["ys"], s["max_iter"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """An ``n x n`` grid over [-2.1, 0.9] x [-1.5, 1.5], shifted by a seed-dependent sub-pixel offset."""
    rng = np.random.default_rng(seed)
    dx, dy = rng.uniform(0.0, 3.0 / n, size=2)
    xs = np.linspace(-2.1, 0.9, n) + dx
    ys = np.linspace(-1.5, 1.5, n) + dy
    return xs, ys, MAX_ITER


KERNEL = KernelSpec(
    name="mandelbrot",
    category="divergent",
    description="Mandelbrot escape counts, up to 200 iterations; GPU: thread per pixel, 16x16 blocks",
    cpu=mandelbrot,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 12, "small": 256, "medium": 1024, "large": 2048},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
