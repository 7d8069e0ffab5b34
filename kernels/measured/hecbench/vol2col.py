"""HeCBench ``vol2col``: the kernels ``vol2col_kernel`` and ``col2vol_kernel``, the unfold and fold of a 3-D
volume for convolution as a matrix product (PyTorch's ``vol2col``/``col2vol``; RTX 3080).

``vol2col_kernel``: one work item per (channel, t, h, w) of the column grid (``range = channels * depth_col *
height_col * width_col`` items, a grid-stride loop); item ``n`` finds its input corner ``(t, h, w) * stride -
pad`` and copies, for every kernel offset ``(i, j, k)``, the dilated input element (or 0 when it falls outside
the volume) into row ``channel * kt kh kw + (i, j, k)`` of the column matrix. Like the original, the item
advances the two base pointers by its own offsets (``data_vol += ...; data_col += ...``), so an item that
goes round the grid-stride loop a second time starts from where the first pass left them.
``col2vol_kernel``: one work item per volume element (``n`` again), summing every column entry that the unfold
copied from it (the kernel offsets whose dilated position lands on it) and storing the sum into the volume.

Launch: blocks of 512, ``(n - 512) / 512 + 1`` blocks (1524, i.e. 780288 threads for n = 780300: the last 12
items are a second pass of threads 0-11). The program runs kernel sizes 1, 3, 5, 7, 9 on a fixed volume: 4
channels of 3 x 255 x 255, padding 1, stride 2, dilation 2, column grid fixed at 3 x 255 x 255 (the program's
constants, not derived from the rest); its argument (``1000``: the repeat count) is the label. The timed
launches are the first of each kernel, at kernel size 1: ``vol2col`` on a volume of ones and a zeroed column
buffer, ``col2vol`` on that buffer after the unfold (computed here by the region itself) with the volume of
ones. No random input (``seed`` is unused). Buffers: the volume ``channels * (depth + 2 pad) * (height + 2 pad)
* (width + 2 pad)`` and the columns ``(channels kt kh kw + 1) * (depth_col + pad) * (height_col + pad) *
(width_col + pad)`` elements, as allocated by the program.

Integers: the unfold's index arithmetic is ``int``/``int64``, the fold's ``unsigned``/``uint64``; here all
int64 (every value is non-negative where the original is unsigned, so the results are the same).
Precision: float32 data (``T = accT = float``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

THREADS = 512

GEOMETRY = {"channels": 4, "depth": 3, "height": 255, "width": 255, "pad": 1, "stride": 2, "dilation": 2}
POINTS = {"1000": {**GEOMETRY, "ksize": 1, "repeat": 1000}}
#: 2 channels of 3 x 15 x 15: 1350 items on 2 blocks (the last 326 items are a second pass)
TEST_POINT = {"channels": 2, "depth": 3, "height": 15, "width": 15, "pad": 1, "stride": 2, "dilation": 2,
              "ksize": 1, "repeat": 1}
#: the measured regions have 3e7-4e7 records: 4 channels of 3 x 63 x 63 (47616 threads)
FEATURE_POINT = {**GEOMETRY, "height": 63, "width": 63, "ksize": 1, "repeat": 1}


def vol2col_kernel(rng, data_vol, depth, height, width, ksize_t, ksize_h, ksize_w, pad_t, pad_h, pad_w,
                   stride_t, stride_h, stride_w, dilation_t, dilation_h, dilation_w, depth_col, height_col,
                   width_col, data_col, n_threads):
    """CPU region: one launch of ``vol2col_kernel`` over ``n_threads`` threads (grid-stride over ``rng``
    items); writes ``data_col`` and returns it."""
    for gid in numba.prange(n_threads):
        vol = 0  # the thread's data_vol and data_col pointers, as offsets
        col = 0
        n = gid
        while n < rng:
            w_out = n % width_col
            index = n // width_col
            h_out = index % height_col
            index = index // height_col
            t_out = index % depth_col
            channel_in = index // depth_col
            channel_out = channel_in * ksize_t * ksize_h * ksize_w
            t_in = t_out * stride_t - pad_t
            h_in = h_out * stride_h - pad_h
            w_in = w_out * stride_w - pad_w
            vol += ((channel_in * depth + t_in) * height + h_in) * width + w_in
            col += ((channel_out * depth_col + t_out) * height_col + h_out) * width_col + w_out
            for i in range(ksize_t):
                for j in range(ksize_h):
                    for k in range(ksize_w):
                        t = t_in + i * dilation_t
                        h = h_in + j * dilation_h
                        w = w_in + k * dilation_w
                        if t >= 0 and h >= 0 and w >= 0 and t < depth and h < height and w < width:
                            data_col[col] = data_vol[vol + i * dilation_t * height * width
                                                     + j * dilation_h * width + k * dilation_w]
                        else:
                            data_col[col] = np.float32(0.0)
                        col += depth_col * height_col * width_col
            n += n_threads
    return data_col


def col2vol_kernel(n, data_col, depth, height, width, kernel_t, kernel_h, kernel_w, pad_t, pad_h, pad_w,
                   stride_t, stride_h, stride_w, dilation_t, dilation_h, dilation_w, depth_col, height_col,
                   width_col, data_vol, n_threads):
    """CPU region: one launch of ``col2vol_kernel`` over ``n_threads`` threads (grid-stride over ``n``
    volume elements); writes ``data_vol`` and returns it."""
    for gid in numba.prange(n_threads):
        index = gid
        while index < n:
            val = np.float32(0.0)
            w_im = index % width + pad_w
            h_im = (index // width) % height + pad_h
            t_im = (index // width // height) % depth + pad_t
            c_im = index // (width * height * depth)
            extent_w = (kernel_w - 1) * dilation_w + 1
            extent_h = (kernel_h - 1) * dilation_h + 1
            extent_t = (kernel_t - 1) * dilation_t + 1
            w_col_start = 0 if w_im < extent_w else (w_im - extent_w) // stride_w + 1
            w_col_end = min(w_im // stride_w + 1, width_col)
            h_col_start = 0 if h_im < extent_h else (h_im - extent_h) // stride_h + 1
            h_col_end = min(h_im // stride_h + 1, height_col)
            t_col_start = 0 if t_im < extent_t else (t_im - extent_t) // stride_t + 1
            t_col_end = min(t_im // stride_t + 1, depth_col)
            for t_col in range(t_col_start, t_col_end):
                for h_col in range(h_col_start, h_col_end):
                    for w_col in range(w_col_start, w_col_end):
                        t_k = t_im - t_col * stride_t
                        h_k = h_im - h_col * stride_h
                        w_k = w_im - w_col * stride_w
                        if t_k % dilation_t == 0 and h_k % dilation_h == 0 and w_k % dilation_w == 0:
                            t_k //= dilation_t
                            h_k //= dilation_h
                            w_k //= dilation_w
                            idx_k = ((c_im * kernel_t + t_k) * kernel_h + h_k) * kernel_w + w_k
                            val += data_col[((idx_k * depth_col + t_col) * height_col + h_col) * width_col + w_col]
            data_vol[index] = val
            index += n_threads
    return data_vol


@cuda.jit
def _vol2col_gpu(rng, data_vol, depth, height, width, ksize_t, ksize_h, ksize_w, pad_t, pad_h, pad_w,
                 stride_t, stride_h, stride_w, dilation_t, dilation_h, dilation_w, depth_col, height_col,
                 width_col, data_col):
    vol = 0
    col = 0
    n = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    while n < rng:
        w_out = n % width_col
        index = n // width_col
        h_out = index % height_col
        index = index // height_col
        t_out = index % depth_col
        channel_in = index // depth_col
        channel_out = channel_in * ksize_t * ksize_h * ksize_w
        t_in = t_out * stride_t - pad_t
        h_in = h_out * stride_h - pad_h
        w_in = w_out * stride_w - pad_w
        vol += ((channel_in * depth + t_in) * height + h_in) * width + w_in
        col += ((channel_out * depth_col + t_out) * height_col + h_out) * width_col + w_out
        for i in range(ksize_t):
            for j in range(ksize_h):
                for k in range(ksize_w):
                    t = t_in + i * dilation_t
                    h = h_in + j * dilation_h
                    w = w_in + k * dilation_w
                    if t >= 0 and h >= 0 and w >= 0 and t < depth and h < height and w < width:
                        data_col[col] = data_vol[vol + i * dilation_t * height * width
                                                 + j * dilation_h * width + k * dilation_w]
                    else:
                        data_col[col] = numba.float32(0.0)
                    col += depth_col * height_col * width_col
        n += cuda.blockDim.x * cuda.gridDim.x


@cuda.jit
def _col2vol_gpu(n, data_col, depth, height, width, kernel_t, kernel_h, kernel_w, pad_t, pad_h, pad_w,
                 stride_t, stride_h, stride_w, dilation_t, dilation_h, dilation_w, depth_col, height_col,
                 width_col, data_vol):
    index = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    while index < n:
        val = numba.float32(0.0)
        w_im = index % width + pad_w
        h_im = (index // width) % height + pad_h
        t_im = (index // width // height) % depth + pad_t
        c_im = index // (width * height * depth)
        extent_w = (kernel_w - 1) * dilation_w + 1
        extent_h = (kernel_h - 1) * dilation_h + 1
        extent_t = (kernel_t - 1) * dilation_t + 1
        w_col_start = 0 if w_im < extent_w else (w_im - extent_w) // stride_w + 1
        w_col_end = min(w_im // stride_w + 1, width_col)
        h_col_start = 0 if h_im < extent_h else (h_im - extent_h) // stride_h + 1
        h_col_end = min(h_im // stride_h + 1, height_col)
        t_col_start = 0 if t_im < extent_t else (t_im - extent_t) // stride_t + 1
        t_col_end = min(t_im // stride_t + 1, depth_col)
        for t_col in range(t_col_start, t_col_end):
            for h_col in range(h_col_start, h_col_end):
                for w_col in range(w_col_start, w_col_end):
                    t_k = t_im - t_col * stride_t
                    h_k = h_im - h_col * stride_h
                    w_k = w_im - w_col * stride_w
                    if t_k % dilation_t == 0 and h_k % dilation_h == 0 and w_k % dilation_w == 0:
                        t_k //= dilation_t
                        h_k //= dilation_h
                        w_k //= dilation_w
                        idx_k = ((c_im * kernel_t + t_k) * kernel_h + h_k) * kernel_w + w_k
                        val += data_col[((idx_k * depth_col + t_col) * height_col + h_col) * width_col + w_col]
        data_vol[index] = val
        index += cuda.blockDim.x * cuda.gridDim.x


def _port(kernel, src, dst):
    def to_device(*args):
        args = list(args)
        n_threads = args.pop()
        args[src] = cuda.to_device(args[src])
        args[dst] = cuda.to_device(args[dst])
        return {"args": args, "blocks": n_threads // THREADS, "dst": dst}

    def launch(s):
        kernel[s["blocks"], THREADS](*s["args"])

    def from_device(s):
        return s["args"][s["dst"]].copy_to_host()

    return GpuPort(to_device, launch, from_device)


def blocks(n):
    """The program's ``get_blocks``: ``(n - 512) / 512 + 1`` (the device's grid limit is far above)."""
    return (n - THREADS) // THREADS + 1


def _geometry(params):
    c, d, h, w = (int(params[k]) for k in ("channels", "depth", "height", "width"))
    k, pad, stride, dil = (int(params[x]) for x in ("ksize", "pad", "stride", "dilation"))
    n = c * d * h * w  # the column grid is the volume's size (the program's constants)
    vol_size = c * (2 * pad + d) * (2 * pad + h) * (2 * pad + w)
    col_size = (c * k * k * k + 1) * (d + pad) * (h + pad) * (w + pad)
    shape = (d, h, w, k, k, k, pad, pad, pad, stride, stride, stride, dil, dil, dil, d, h, w)
    return n, vol_size, col_size, shape


def make_vol2col_inputs(params, seed):
    """The first unfold: ``(range, volume of ones, geometry..., zeroed columns, threads)``."""
    n, vol_size, col_size, shape = _geometry(params)
    vol = np.ones(vol_size, dtype=np.float32)
    col = np.zeros(col_size, dtype=np.float32)
    return (n, vol, *shape, col, blocks(n) * THREADS)


def make_col2vol_inputs(params, seed):
    """The first fold: the columns after the unfold, the volume of ones."""
    n, vol, *shape, col, n_threads = make_vol2col_inputs(params, seed)
    col = vol2col_kernel(n, vol, *shape, col, n_threads)
    return (n, col, *shape, np.ones_like(vol), n_threads)


def work(params):
    n = _geometry(params)[0]
    return blocks(n) * THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="vol2col",
        kernel=name,
        description=f"HeCBench vol2col: {name}, the {what} of a 4 x 3 x 255 x 255 volume for convolution as a "
        "matrix product (kernel size 1, stride 2, dilation 2), grid-stride loop",
        cpu=region,
        gpu=_port(gpu, 1, 20),
        make_inputs=inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-6,
        atol=0.0,
    )
    for name, region, gpu, inputs, what in (
        ("vol2col_kernel", vol2col_kernel, _vol2col_gpu, make_vol2col_inputs, "unfold"),
        ("col2vol_kernel", col2vol_kernel, _col2vol_gpu, make_col2vol_inputs, "fold"))
]
