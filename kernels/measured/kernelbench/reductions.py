"""KernelBench level 1, reductions: softmax and log-softmax over a row, the reductions over a middle dimension
(sum, mean, max, min, product, argmax, argmin) and the 1-D pooling windows, as PyTorch eager runs them.

The measured times (``kernels/measured/data/kernelbench/sizes_before_2025-07/*.json``: milliseconds per
forward call of the PyTorch reference, T4 to B200) are of PyTorch's own CUDA kernels, whose code and launch
geometry the data does not record. Each port is a straightforward CUDA kernel for the operation, with the
geometry written below; every port here is one kernel launch, as PyTorch runs each of these operations
(to the best of my knowledge of ATen's CUDA code; where unsure, said so). Inputs are ``torch.randn``-like:
standard normal float32 from NumPy's generator seeded with ``seed`` (not torch's generator). Everything is
float32 as the problems are (indices int64, as PyTorch returns them); accumulation in float32 (PyTorch's
accumulation type for float on CUDA is float).

**Softmax / LogSoftmax** (``23_Softmax``, ``24_LogSoftmax``; ``x`` of ``16 x 16384``, over the last dim):
one block per row, each thread striding over the row (elements ``tid, tid + block, ...``). Phases: a
thread's maximum into shared memory, a shared-memory tree reduction to the row maximum; each thread's sum of
``exp(x - max)``, a tree reduction to the row sum; each thread writes ``exp(x - max) / sum`` (LogSoftmax:
``x - max - log(sum)``). Block 1024: PyTorch's ``cunn_SoftMaxForward`` (used for rows longer than 1024;
shorter rows take the warp-per-row "persistent" softmax) takes, as far as I know, the smallest multiple of 32
at least ``min(dim, 1024)`` threads, so 1024 here, one block per row (16 blocks, 16384 threads; older
PyTorch took half of ``min(dim / 4, 1024)`` rounded up to a power of two, 512). A row of 64 KB is too long for
the variant that keeps the row in shared memory, so the row is read from global memory three times, as here. Its block
reductions use warp shuffles and one shared slot per warp, here a shared-memory tree over all ``block``
slots (the same sums in a different order); it also reads the row with vector loads (4 floats), here one
float per load.

**Reduction over dim 1 of** ``16 x 256 x 256`` (``47_Sum_...`` keepdim, ``48_Mean_...``, ``49_Max_...``,
``53_Min_...``, ``50_Product_...``, ``51_Argmax_...``, ``52_Argmin_...``): one thread per output element
``(b, i)`` looping over the reduced dimension ``r = 0 .. 255`` (consecutive threads read consecutive ``i``:
coalesced), blocks of 256: 4096 threads, 16 blocks. PyTorch's reduction kernel (``Reduce.cuh``) for a
reduction over a non-innermost dim also gives each thread whole outputs of the contiguous inner dim, but may
split the reduced dim over a block's y threads (and blocks) with a final combine; that split is not modelled.
Mean: the sum times ``1 / 256`` (PyTorch's ``MeanOps`` multiplies by the factor). Max and Min: PyTorch's
``torch.max(x, dim)`` computes the values AND the int64 indices in one kernel (``values[0]`` is taken after),
so the port writes both; ties keep the first index; NaN propagation (PyTorch's ``isnan`` test) is not
modelled (randn has none). Argmax/Argmin: the index only (int64), the running value in a register. Product
of 256 standard normals underflows to 0 for almost every output, in PyTorch as here.

**Max pooling 1D** (``41_Max_Pooling_1D``: ``16 x 64 x 128``, kernel 4, stride 2, padding 2, dilation 3: 62
outputs per row): PyTorch's CUDA ``max_pool1d`` goes through ``max_pool1d_with_indices`` -> the 2-D kernel
(``max_pool_forward_nchw``, input ``N x C x 1 x L``) with one thread per output, 256 per block, writing the
values and the int64 indices (the indices are computed even though the problem drops them). The window start
is moved past the padding (``while start < 0: start += dilation``), the end clipped to the row; the
maximum starts from ``-inf``. The height dimension (1, one iteration) is left out. 63488 threads, 248 blocks.

**Average pooling 1D** (``44_Average_Pooling_1D``: ``16 x 32 x 128``, kernel 4, stride 2, padding 1: 64
outputs per row): ``avg_pool1d`` -> ``avg_pool2d``'s ``avg_pool2d_out_cuda_frame``, one thread per output,
1024 threads per block (as far as I know, ``min(maxThreadsPerBlock, 1024)``), ``count_include_pad`` True:
the sum over the window clipped to the row, divided by the window's size clipped to the padded row
(``min(start + k, L + pad) - start``: 4 everywhere here). 32768 threads, 32 blocks. The height dimension is
left out as above.

Precision: single (FP32) throughout; the trace has no FP64 record.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

LABEL = "before_2025-07"
MAX_BLOCK = 1024  # shared-memory slots of the row kernels' GPU ports
NEG_INF = np.float32(-np.inf)  # a float32 constant (negating np.inf in the region would be a double operation)


def _randn(shape, seed, stream=0):
    return np.random.default_rng([seed, stream]).standard_normal(shape).astype(np.float32)


@numba.njit
def _threads(n, block):
    """Threads of a 1-D launch covering ``n`` items with blocks of ``block``."""
    return ((n + block - 1) // block) * block


@numba.njit
def _levels(block):
    """log2(block): the tree reduction's steps (block a power of two)."""
    levels = 0
    while (1 << levels) < block:
        levels += 1
    return levels


def _port(kernel, grid, outs):
    """A GpuPort: arrays to the device, ``kernel[grid(state)]`` over the region's arguments in order, the
    arrays at positions ``outs`` back (a tuple when several)."""

    def to_device(*args):
        return [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]

    def launch(state):
        g, b = grid(state)
        kernel[g, b](*state)

    def from_device(state):
        got = tuple(state[i].copy_to_host() for i in outs)
        return got[0] if len(got) == 1 else got

    return GpuPort(to_device, launch, from_device)


# ================================================================================= softmax / log-softmax


def softmax_rows(x, out, block):
    """Softmax over the last dim of ``x`` (rows x dim, float32) into ``out``: one block of ``block`` threads
    per row. Returns ``out``."""
    rows, dim = x.shape
    n_threads = rows * block
    levels = _levels(block)
    red = np.empty((rows, block), dtype=np.float32)  # shared: one slot per thread of the block
    # phase 1: each thread's maximum over its strided elements
    for gid in numba.prange(n_threads):
        row = gid // block
        tid = gid - row * block
        m = NEG_INF
        for j in range(tid, dim, block):
            v = x[row, j]
            if v > m:
                m = v
        red[row, tid] = m
    # tree reduction to the row maximum in red[row, 0]
    for level in range(levels):
        s = block >> (level + 1)
        for gid in numba.prange(n_threads):
            row = gid // block
            tid = gid - row * block
            if tid < s:
                a = red[row, tid]
                b = red[row, tid + s]
                red[row, tid] = a if a > b else b
    rmax = np.empty((rows, block), dtype=np.float32)  # shared: the sums' slots
    # phase: each thread reads the maximum and sums exp(x - max) over its elements
    for gid in numba.prange(n_threads):
        row = gid // block
        tid = gid - row * block
        m = red[row, 0]
        acc = np.float32(0.0)
        for j in range(tid, dim, block):
            acc += np.exp(x[row, j] - m)
        rmax[row, tid] = acc
    for level in range(levels):
        s = block >> (level + 1)
        for gid in numba.prange(n_threads):
            row = gid // block
            tid = gid - row * block
            if tid < s:
                rmax[row, tid] = rmax[row, tid] + rmax[row, tid + s]
    # epilogue: every element exp(x - max) / sum
    for gid in numba.prange(n_threads):
        row = gid // block
        tid = gid - row * block
        m = red[row, 0]
        total = rmax[row, 0]
        for j in range(tid, dim, block):
            out[row, j] = np.exp(x[row, j] - m) / total
    return out


def log_softmax_rows(x, out, block):
    """Log-softmax over the last dim of ``x`` into ``out``; the geometry of :func:`softmax_rows`."""
    rows, dim = x.shape
    n_threads = rows * block
    levels = _levels(block)
    red = np.empty((rows, block), dtype=np.float32)
    for gid in numba.prange(n_threads):
        row = gid // block
        tid = gid - row * block
        m = NEG_INF
        for j in range(tid, dim, block):
            v = x[row, j]
            if v > m:
                m = v
        red[row, tid] = m
    for level in range(levels):
        s = block >> (level + 1)
        for gid in numba.prange(n_threads):
            row = gid // block
            tid = gid - row * block
            if tid < s:
                a = red[row, tid]
                b = red[row, tid + s]
                red[row, tid] = a if a > b else b
    sums = np.empty((rows, block), dtype=np.float32)
    for gid in numba.prange(n_threads):
        row = gid // block
        tid = gid - row * block
        m = red[row, 0]
        acc = np.float32(0.0)
        for j in range(tid, dim, block):
            acc += np.exp(x[row, j] - m)
        sums[row, tid] = acc
    for level in range(levels):
        s = block >> (level + 1)
        for gid in numba.prange(n_threads):
            row = gid // block
            tid = gid - row * block
            if tid < s:
                sums[row, tid] = sums[row, tid] + sums[row, tid + s]
    for gid in numba.prange(n_threads):
        row = gid // block
        tid = gid - row * block
        m = red[row, 0]
        logsum = np.log(sums[row, 0])
        for j in range(tid, dim, block):
            out[row, j] = x[row, j] - m - logsum
    return out


@cuda.jit(device=True)
def _row_max_and_exp_sum(x, red, row, tid, block):
    """The row's maximum and the sum of exp(x - max), each a strided pass then a shared-memory tree (the two
    reductions softmax and log-softmax share)."""
    dim = x.shape[1]
    m = NEG_INF
    for j in range(tid, dim, block):
        v = x[row, j]
        if v > m:
            m = v
    red[tid] = m
    cuda.syncthreads()
    s = block // 2
    while s > 0:
        if tid < s:
            a = red[tid]
            b = red[tid + s]
            red[tid] = a if a > b else b
        cuda.syncthreads()
        s //= 2
    m = red[0]
    cuda.syncthreads()
    acc = numba.float32(0.0)
    for j in range(tid, dim, block):
        acc += np.exp(x[row, j] - m)
    red[tid] = acc
    cuda.syncthreads()
    s = block // 2
    while s > 0:
        if tid < s:
            red[tid] = red[tid] + red[tid + s]
        cuda.syncthreads()
        s //= 2
    return m, red[0]


@cuda.jit
def _softmax_gpu(x, out, block):
    red = cuda.shared.array(MAX_BLOCK, dtype=numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    m, total = _row_max_and_exp_sum(x, red, row, tid, block)
    for j in range(tid, x.shape[1], block):
        out[row, j] = np.exp(x[row, j] - m) / total


@cuda.jit
def _log_softmax_gpu(x, out, block):
    red = cuda.shared.array(MAX_BLOCK, dtype=numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    m, total = _row_max_and_exp_sum(x, red, row, tid, block)
    logsum = np.log(total)
    for j in range(tid, x.shape[1], block):
        out[row, j] = x[row, j] - m - logsum


def _rows_inputs(params, seed):
    x = _randn((int(params["batch_size"]), int(params["dim"])), seed)
    return x, np.zeros_like(x), int(params["block"])


def _rows_work(params):
    return int(params["batch_size"]) * int(params["block"]), int(params["block"])


def _rows_grid(state):
    return state[0].shape[0], state[2]


SOFTMAX_POINT = {"batch_size": 16, "dim": 16384, "block": 1024}
SOFTMAX_TEST = {"batch_size": 3, "dim": 200, "block": 64}


# ====================================================================== reductions over dim 1 of (B, R, I)


def sum_dim1(x, out, block):
    """``out[b, 0, i] = sum_r x[b, r, i]`` (keepdim): one thread per output, blocks of ``block``."""
    nb, nr, ni = x.shape
    n_out = nb * ni
    for gid in numba.prange(_threads(n_out, block)):
        if gid < n_out:
            b = gid // ni
            i = gid - b * ni
            acc = np.float32(0.0)
            for r in range(nr):
                acc += x[b, r, i]
            out[b, 0, i] = acc
    return out


def mean_dim1(x, out, block):
    """``out[b, i] = (sum_r x[b, r, i]) * (1 / R)``: one thread per output."""
    nb, nr, ni = x.shape
    n_out = nb * ni
    factor = np.float32(1.0 / nr)
    for gid in numba.prange(_threads(n_out, block)):
        if gid < n_out:
            b = gid // ni
            i = gid - b * ni
            acc = np.float32(0.0)
            for r in range(nr):
                acc += x[b, r, i]
            out[b, i] = acc * factor
    return out


def max_dim1(x, values, indices, block):
    """``torch.max(x, 1)``: the maximum over ``r`` and its first index, one thread per output."""
    nb, nr, ni = x.shape
    n_out = nb * ni
    for gid in numba.prange(_threads(n_out, block)):
        if gid < n_out:
            b = gid // ni
            i = gid - b * ni
            best = NEG_INF
            at = 0
            for r in range(nr):
                v = x[b, r, i]
                if v > best:
                    best = v
                    at = r
            values[b, i] = best
            indices[b, i] = at
    return values, indices


def min_dim1(x, values, indices, block):
    """``torch.min(x, 1)``: the minimum over ``r`` and its first index, one thread per output."""
    nb, nr, ni = x.shape
    n_out = nb * ni
    for gid in numba.prange(_threads(n_out, block)):
        if gid < n_out:
            b = gid // ni
            i = gid - b * ni
            best = np.float32(np.inf)
            at = 0
            for r in range(nr):
                v = x[b, r, i]
                if v < best:
                    best = v
                    at = r
            values[b, i] = best
            indices[b, i] = at
    return values, indices


def prod_dim1(x, out, block):
    """``out[b, i] = prod_r x[b, r, i]``: one thread per output."""
    nb, nr, ni = x.shape
    n_out = nb * ni
    for gid in numba.prange(_threads(n_out, block)):
        if gid < n_out:
            b = gid // ni
            i = gid - b * ni
            acc = np.float32(1.0)
            for r in range(nr):
                acc *= x[b, r, i]
            out[b, i] = acc
    return out


def argmax_dim1(x, indices, block):
    """``argmax`` over ``r`` (first index of the maximum), int64: one thread per output."""
    nb, nr, ni = x.shape
    n_out = nb * ni
    for gid in numba.prange(_threads(n_out, block)):
        if gid < n_out:
            b = gid // ni
            i = gid - b * ni
            best = NEG_INF
            at = 0
            for r in range(nr):
                v = x[b, r, i]
                if v > best:
                    best = v
                    at = r
            indices[b, i] = at
    return indices


def argmin_dim1(x, indices, block):
    """``argmin`` over ``r`` (first index of the minimum), int64: one thread per output."""
    nb, nr, ni = x.shape
    n_out = nb * ni
    for gid in numba.prange(_threads(n_out, block)):
        if gid < n_out:
            b = gid // ni
            i = gid - b * ni
            best = np.float32(np.inf)
            at = 0
            for r in range(nr):
                v = x[b, r, i]
                if v < best:
                    best = v
                    at = r
            indices[b, i] = at
    return indices


@cuda.jit
def _sum_dim1_gpu(x, out, block):
    nb, nr, ni = x.shape
    gid = cuda.grid(1)
    if gid < nb * ni:
        b = gid // ni
        i = gid - b * ni
        acc = numba.float32(0.0)
        for r in range(nr):
            acc += x[b, r, i]
        out[b, 0, i] = acc


@cuda.jit
def _mean_dim1_gpu(x, out, block):
    nb, nr, ni = x.shape
    factor = numba.float32(1.0 / nr)
    gid = cuda.grid(1)
    if gid < nb * ni:
        b = gid // ni
        i = gid - b * ni
        acc = numba.float32(0.0)
        for r in range(nr):
            acc += x[b, r, i]
        out[b, i] = acc * factor


@cuda.jit
def _max_dim1_gpu(x, values, indices, block):
    nb, nr, ni = x.shape
    gid = cuda.grid(1)
    if gid < nb * ni:
        b = gid // ni
        i = gid - b * ni
        best = NEG_INF
        at = 0
        for r in range(nr):
            v = x[b, r, i]
            if v > best:
                best = v
                at = r
        values[b, i] = best
        indices[b, i] = at


@cuda.jit
def _min_dim1_gpu(x, values, indices, block):
    nb, nr, ni = x.shape
    gid = cuda.grid(1)
    if gid < nb * ni:
        b = gid // ni
        i = gid - b * ni
        best = numba.float32(np.inf)
        at = 0
        for r in range(nr):
            v = x[b, r, i]
            if v < best:
                best = v
                at = r
        values[b, i] = best
        indices[b, i] = at


@cuda.jit
def _prod_dim1_gpu(x, out, block):
    nb, nr, ni = x.shape
    gid = cuda.grid(1)
    if gid < nb * ni:
        b = gid // ni
        i = gid - b * ni
        acc = numba.float32(1.0)
        for r in range(nr):
            acc *= x[b, r, i]
        out[b, i] = acc


@cuda.jit
def _argmax_dim1_gpu(x, indices, block):
    nb, nr, ni = x.shape
    gid = cuda.grid(1)
    if gid < nb * ni:
        b = gid // ni
        i = gid - b * ni
        best = NEG_INF
        at = 0
        for r in range(nr):
            v = x[b, r, i]
            if v > best:
                best = v
                at = r
        indices[b, i] = at


@cuda.jit
def _argmin_dim1_gpu(x, indices, block):
    nb, nr, ni = x.shape
    gid = cuda.grid(1)
    if gid < nb * ni:
        b = gid // ni
        i = gid - b * ni
        best = numba.float32(np.inf)
        at = 0
        for r in range(nr):
            v = x[b, r, i]
            if v < best:
                best = v
                at = r
        indices[b, i] = at


DIM1_POINT = {"batch_size": 16, "dim1": 256, "dim2": 256, "block": 256}
DIM1_TEST = {"batch_size": 2, "dim1": 9, "dim2": 100, "block": 64}


def _dim1_x(params, seed):
    return _randn((int(params["batch_size"]), int(params["dim1"]), int(params["dim2"])), seed)


def _dim1_work(params):
    block = int(params["block"])
    return _threads(int(params["batch_size"]) * int(params["dim2"]), block), block


def _dim1_grid(state):
    x, block = state[0], state[-1]
    n = x.shape[0] * x.shape[2]
    return (n + block - 1) // block, block


def _inputs_keepdim(params, seed):
    x = _dim1_x(params, seed)
    return x, np.zeros((x.shape[0], 1, x.shape[2]), dtype=np.float32), int(params["block"])


def _inputs_values(params, seed):
    x = _dim1_x(params, seed)
    return x, np.zeros((x.shape[0], x.shape[2]), dtype=np.float32), int(params["block"])


def _inputs_values_indices(params, seed):
    x = _dim1_x(params, seed)
    shape = (x.shape[0], x.shape[2])
    return x, np.zeros(shape, dtype=np.float32), np.zeros(shape, dtype=np.int64), int(params["block"])


def _inputs_indices(params, seed):
    x = _dim1_x(params, seed)
    return x, np.zeros((x.shape[0], x.shape[2]), dtype=np.int64), int(params["block"])


# ========================================================================================== 1-D pooling


def pool_out_length(length, kernel_size, stride, padding, dilation=1):
    """Output length of a 1-D pooling window (floor mode)."""
    return (length + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1


def max_pool1d(x, values, indices, kernel_size, stride, padding, dilation, block):
    """Max pooling over the last dim of ``x`` (N x C x L): one thread per output, values and int64 indices."""
    n, c, length = x.shape
    lout = values.shape[2]
    total = n * c * lout
    for gid in numba.prange(_threads(total, block)):
        if gid < total:
            pw = gid % lout
            plane = gid // lout
            nn = plane // c
            cc = plane - nn * c
            start = pw * stride - padding
            end = min(start + (kernel_size - 1) * dilation + 1, length)
            while start < 0:
                start += dilation
            best = NEG_INF
            at = start
            for w in range(start, end, dilation):
                v = x[nn, cc, w]
                if v > best:
                    best = v
                    at = w
            values[nn, cc, pw] = best
            indices[nn, cc, pw] = at
    return values, indices


def avg_pool1d(x, out, kernel_size, stride, padding, block):
    """Average pooling (count_include_pad) over the last dim of ``x``: one thread per output."""
    n, c, length = x.shape
    lout = out.shape[2]
    total = n * c * lout
    for gid in numba.prange(_threads(total, block)):
        if gid < total:
            pw = gid % lout
            plane = gid // lout
            nn = plane // c
            cc = plane - nn * c
            start = pw * stride - padding
            end = min(start + kernel_size, length + padding)
            pool_size = end - start
            start = max(start, 0)
            end = min(end, length)
            acc = np.float32(0.0)
            for w in range(start, end):
                acc += x[nn, cc, w]
            out[nn, cc, pw] = acc / np.float32(pool_size)
    return out


@cuda.jit
def _max_pool1d_gpu(x, values, indices, kernel_size, stride, padding, dilation, block):
    n, c, length = x.shape
    lout = values.shape[2]
    gid = cuda.grid(1)
    if gid < n * c * lout:
        pw = gid % lout
        plane = gid // lout
        nn = plane // c
        cc = plane - nn * c
        start = pw * stride - padding
        end = min(start + (kernel_size - 1) * dilation + 1, length)
        while start < 0:
            start += dilation
        best = NEG_INF
        at = start
        for w in range(start, end, dilation):
            v = x[nn, cc, w]
            if v > best:
                best = v
                at = w
        values[nn, cc, pw] = best
        indices[nn, cc, pw] = at


@cuda.jit
def _avg_pool1d_gpu(x, out, kernel_size, stride, padding, block):
    n, c, length = x.shape
    lout = out.shape[2]
    gid = cuda.grid(1)
    if gid < n * c * lout:
        pw = gid % lout
        plane = gid // lout
        nn = plane // c
        cc = plane - nn * c
        start = pw * stride - padding
        end = min(start + kernel_size, length + padding)
        pool_size = end - start
        start = max(start, 0)
        end = min(end, length)
        acc = numba.float32(0.0)
        for w in range(start, end):
            acc += x[nn, cc, w]
        out[nn, cc, pw] = acc / numba.float32(pool_size)


MAXPOOL_POINT = {"batch_size": 16, "features": 64, "sequence_length": 128, "kernel_size": 4, "stride": 2,
                 "padding": 2, "dilation": 3, "block": 256}
MAXPOOL_TEST = {"batch_size": 2, "features": 3, "sequence_length": 40, "kernel_size": 4, "stride": 2,
                "padding": 2, "dilation": 3, "block": 64}
AVGPOOL_POINT = {"batch_size": 16, "in_channels": 32, "input_length": 128, "kernel_size": 4, "stride": 2,
                 "padding": 1, "block": 1024}
AVGPOOL_TEST = {"batch_size": 2, "in_channels": 3, "input_length": 40, "kernel_size": 4, "stride": 2,
                "padding": 1, "block": 64}


def _maxpool_lout(p):
    return pool_out_length(int(p["sequence_length"]), int(p["kernel_size"]), int(p["stride"]),
                           int(p["padding"]), int(p["dilation"]))


def _avgpool_lout(p):
    return pool_out_length(int(p["input_length"]), int(p["kernel_size"]), int(p["stride"]), int(p["padding"]))


def _maxpool_inputs(p, seed):
    x = _randn((int(p["batch_size"]), int(p["features"]), int(p["sequence_length"])), seed)
    shape = (x.shape[0], x.shape[1], _maxpool_lout(p))
    return (x, np.zeros(shape, dtype=np.float32), np.zeros(shape, dtype=np.int64), int(p["kernel_size"]),
            int(p["stride"]), int(p["padding"]), int(p["dilation"]), int(p["block"]))


def _avgpool_inputs(p, seed):
    x = _randn((int(p["batch_size"]), int(p["in_channels"]), int(p["input_length"])), seed)
    shape = (x.shape[0], x.shape[1], _avgpool_lout(p))
    return (x, np.zeros(shape, dtype=np.float32), int(p["kernel_size"]), int(p["stride"]), int(p["padding"]),
            int(p["block"]))


def _maxpool_work(p):
    block = int(p["block"])
    return _threads(int(p["batch_size"]) * int(p["features"]) * _maxpool_lout(p), block), block


def _avgpool_work(p):
    block = int(p["block"])
    return _threads(int(p["batch_size"]) * int(p["in_channels"]) * _avgpool_lout(p), block), block


def _pool_grid(state):
    out, block = state[1], state[-1]
    return (out.size + block - 1) // block, block


# ============================================================================================ the ports


def _kernel(application, description, cpu, gpu, make_inputs, point, work, test, rtol=1e-5, atol=1e-6):
    return MeasuredKernel(source="kernelbench", application=application, kernel="forward", description=description,
                          cpu=cpu, gpu=gpu, make_inputs=make_inputs, points={LABEL: point}, work=work,
                          test_point=test, rtol=rtol, atol=atol)


KERNELS = [
    _kernel("23_Softmax", "torch.softmax over the last dim of 16 x 16384: one 1024-thread block per row, "
            "max and sum by shared-memory tree reductions", softmax_rows,
            _port(_softmax_gpu, _rows_grid, (1,)), _rows_inputs, SOFTMAX_POINT, _rows_work, SOFTMAX_TEST),
    _kernel("24_LogSoftmax", "torch.log_softmax over the last dim of 16 x 16384: one 1024-thread block per row, "
            "max and sum of exp by shared-memory tree reductions", log_softmax_rows,
            _port(_log_softmax_gpu, _rows_grid, (1,)), _rows_inputs, SOFTMAX_POINT, _rows_work, SOFTMAX_TEST),
    _kernel("47_Sum_reduction_over_a_dimension", "torch.sum over dim 1 of 16 x 256 x 256 (keepdim): one "
            "thread per output looping over the reduced dim", sum_dim1, _port(_sum_dim1_gpu, _dim1_grid, (1,)),
            _inputs_keepdim, DIM1_POINT, _dim1_work, DIM1_TEST),
    _kernel("48_Mean_reduction_over_a_dimension", "torch.mean over dim 1 of 16 x 256 x 256: one thread per "
            "output looping over the reduced dim", mean_dim1, _port(_mean_dim1_gpu, _dim1_grid, (1,)),
            _inputs_values, DIM1_POINT, _dim1_work, DIM1_TEST),
    _kernel("49_Max_reduction_over_a_dimension", "torch.max over dim 1 of 16 x 256 x 256 (values and indices): "
            "one thread per output looping over the reduced dim", max_dim1,
            _port(_max_dim1_gpu, _dim1_grid, (1, 2)), _inputs_values_indices, DIM1_POINT, _dim1_work, DIM1_TEST,
            rtol=0.0, atol=0.0),
    _kernel("53_Min_reduction_over_a_dimension", "torch.min over dim 1 of 16 x 256 x 256 (values and indices): "
            "one thread per output looping over the reduced dim", min_dim1,
            _port(_min_dim1_gpu, _dim1_grid, (1, 2)), _inputs_values_indices, DIM1_POINT, _dim1_work, DIM1_TEST,
            rtol=0.0, atol=0.0),
    _kernel("50_Product_reduction_over_a_dimension", "torch.prod over dim 1 of 16 x 256 x 256: one thread per "
            "output looping over the reduced dim", prod_dim1, _port(_prod_dim1_gpu, _dim1_grid, (1,)),
            _inputs_values, DIM1_POINT, _dim1_work, DIM1_TEST),
    _kernel("51_Argmax_over_a_dimension", "torch.argmax over dim 1 of 16 x 256 x 256: one thread per output "
            "looping over the reduced dim", argmax_dim1, _port(_argmax_dim1_gpu, _dim1_grid, (1,)),
            _inputs_indices, DIM1_POINT, _dim1_work, DIM1_TEST, rtol=0.0, atol=0.0),
    _kernel("52_Argmin_over_a_dimension", "torch.argmin over dim 1 of 16 x 256 x 256: one thread per output "
            "looping over the reduced dim", argmin_dim1, _port(_argmin_dim1_gpu, _dim1_grid, (1,)),
            _inputs_indices, DIM1_POINT, _dim1_work, DIM1_TEST, rtol=0.0, atol=0.0),
    _kernel("41_Max_Pooling_1D", "nn.MaxPool1d(4, stride 2, padding 2, dilation 3) on 16 x 64 x 128: one "
            "thread per output, values and indices", max_pool1d, _port(_max_pool1d_gpu, _pool_grid, (1, 2)),
            _maxpool_inputs, MAXPOOL_POINT, _maxpool_work, MAXPOOL_TEST, rtol=0.0, atol=0.0),
    _kernel("44_Average_Pooling_1D", "nn.AvgPool1d(4, stride 2, padding 1) on 16 x 32 x 128: one thread per "
            "output", avg_pool1d, _port(_avg_pool1d_gpu, _pool_grid, (1,)), _avgpool_inputs, AVGPOOL_POINT,
            _avgpool_work, AVGPOOL_TEST),
]
