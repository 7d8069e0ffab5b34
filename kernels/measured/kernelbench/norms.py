"""KernelBench level 1, norms that fit the tracer: ``38_L1Norm_`` and ``39_L2Norm_`` (``x`` of ``16 x 16384``,
normalised over dim 1, the last), as the sequence of kernels PyTorch eager launches for them.

The measured times (``kernels/measured/data/kernelbench/sizes_before_2025-07/*.json``) are of PyTorch's own
kernels: each problem's forward is several launches, so each region holds them as successive parallel loops
(``separate_launches=True``):

* ``38_L1Norm_``: ``x / torch.sum(torch.abs(x), dim=1, keepdim=True)``: (1) ``abs``, an element-wise kernel
  into a temporary; (2) the sum over the last dim (PyTorch's reduction kernel); (3) the division, an
  element-wise kernel broadcasting the row sums. Three launches.
* ``39_L2Norm_``: ``x / torch.norm(x, p=2, dim=1, keepdim=True)``: (1) the 2-norm as one reduction kernel
  (``torch.norm`` -> ``linalg_vector_norm``: the sum of squares and the square root in the reduction's
  projection, as far as I know one kernel); (2) the division. Two launches.

Geometry (PyTorch's is not in the data; chosen as follows and written in ``work``):

* element-wise launches: PyTorch's element-wise kernels run 128-thread blocks, each thread 4 elements; here
  thread ``t`` of block ``b`` handles elements ``512 b + t + 128 j``, ``j = 0..3`` (the unrolled kernel's
  pattern: each of the four loads coalesced over the warp; the vectorised kernel instead loads 4 consecutive
  floats with one float4 load); the four elements are written out one after the other (unrolled, as the
  original's ``#pragma unroll`` loop). ``16 x 16384`` elements: 512 blocks, 65536 threads.
* the row reduction: one block per row (16 blocks) of ``reduce_block`` = 512 threads (PyTorch's reduction
  kernel uses at most 512 threads a block; how it splits a 16384-long row over threads and blocks is not
  modelled: here each thread strides over the row, then a shared-memory tree reduction, and thread 0 writes
  the row's value).

``work``: the largest launch, the element-wise one (65536 threads, blocks of 128); the trace's logical
threads are the largest parallel loop's.

Inputs: standard normal float32 (NumPy's generator, not torch's), stored flat (row-major ``16 x 16384``).
Precision: single (FP32) throughout (the reduction accumulates in float, PyTorch's accumulation type for
float on CUDA).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

LABEL = "before_2025-07"
EW_BLOCK = 128  # element-wise launches: threads per block
EW_ITEMS = 4  # element-wise launches: elements per thread
MAX_BLOCK = 1024


@numba.njit
def _levels(block):
    levels = 0
    while (1 << levels) < block:
        levels += 1
    return levels


@numba.njit
def ew_threads(n):
    """Threads of an element-wise launch over ``n`` elements (128-thread blocks, 4 elements a thread)."""
    per_block = EW_BLOCK * EW_ITEMS
    return ((n + per_block - 1) // per_block) * EW_BLOCK


def l1_norm(x, absx, sums, out, rows, dim, reduce_block):
    """``out = x / sum(|x|, over each row)``: three launches. ``x``, ``absx`` (temporary), ``out``: float32 flat
    ``rows * dim``; ``sums``: float32 ``rows``. Returns ``out``."""
    n = rows * dim
    # launch 1: abs, element-wise
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        # the four elements, unrolled as the original's loop is (a loop here would be taken for a second
        # dimension of the thread space)
        if base < n:
            absx[base] = abs(x[base])
        if base + EW_BLOCK < n:
            absx[base + EW_BLOCK] = abs(x[base + EW_BLOCK])
        if base + 2 * EW_BLOCK < n:
            absx[base + 2 * EW_BLOCK] = abs(x[base + 2 * EW_BLOCK])
        if base + 3 * EW_BLOCK < n:
            absx[base + 3 * EW_BLOCK] = abs(x[base + 3 * EW_BLOCK])
    # launch 2: the row sums, one block per row, a shared-memory tree reduction
    n_red = rows * reduce_block
    part = np.empty((rows, reduce_block), dtype=np.float32)  # shared memory, one tile per block
    for gid in numba.prange(n_red):
        row = gid // reduce_block
        tid = gid - row * reduce_block
        acc = np.float32(0.0)
        for j in range(tid, dim, reduce_block):
            acc += absx[row * dim + j]
        part[row, tid] = acc
    for level in range(_levels(reduce_block)):
        s = reduce_block >> (level + 1)
        for gid in numba.prange(n_red):
            row = gid // reduce_block
            tid = gid - row * reduce_block
            if tid < s:
                part[row, tid] = part[row, tid] + part[row, tid + s]
            if s == 1 and tid == 0:
                sums[row] = part[row, 0]
    # launch 3: the division, element-wise with the row's sum broadcast
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            out[e] = x[e] / sums[e // dim]
        e = base + EW_BLOCK
        if e < n:
            out[e] = x[e] / sums[e // dim]
        e = base + 2 * EW_BLOCK
        if e < n:
            out[e] = x[e] / sums[e // dim]
        e = base + 3 * EW_BLOCK
        if e < n:
            out[e] = x[e] / sums[e // dim]
    return out


def l2_norm(x, norms, out, rows, dim, reduce_block):
    """``out = x / sqrt(sum(x^2, over each row))``: two launches. ``x``, ``out``: float32 flat ``rows * dim``;
    ``norms``: float32 ``rows``. Returns ``out``."""
    n = rows * dim
    # launch 1: the row norms, one block per row; the square root in the last step (the projection)
    n_red = rows * reduce_block
    part = np.empty((rows, reduce_block), dtype=np.float32)
    for gid in numba.prange(n_red):
        row = gid // reduce_block
        tid = gid - row * reduce_block
        acc = np.float32(0.0)
        for j in range(tid, dim, reduce_block):
            v = x[row * dim + j]
            acc += v * v
        part[row, tid] = acc
    for level in range(_levels(reduce_block)):
        s = reduce_block >> (level + 1)
        for gid in numba.prange(n_red):
            row = gid // reduce_block
            tid = gid - row * reduce_block
            if tid < s:
                part[row, tid] = part[row, tid] + part[row, tid + s]
            if s == 1 and tid == 0:
                norms[row] = np.sqrt(part[row, 0])
    # launch 2: the division
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            out[e] = x[e] / norms[e // dim]
        e = base + EW_BLOCK
        if e < n:
            out[e] = x[e] / norms[e // dim]
        e = base + 2 * EW_BLOCK
        if e < n:
            out[e] = x[e] / norms[e // dim]
        e = base + 3 * EW_BLOCK
        if e < n:
            out[e] = x[e] / norms[e // dim]
    return out


# ----------------------------------------------------------------------------------------------- GPU port


@cuda.jit
def _abs_gpu(x, absx, n):
    blk = cuda.blockIdx.x
    base = blk * (EW_BLOCK * EW_ITEMS) + cuda.threadIdx.x
    for j in range(EW_ITEMS):
        e = base + j * EW_BLOCK
        if e < n:
            absx[e] = abs(x[e])


@cuda.jit
def _div_rows_gpu(x, by, out, n, dim):
    blk = cuda.blockIdx.x
    base = blk * (EW_BLOCK * EW_ITEMS) + cuda.threadIdx.x
    for j in range(EW_ITEMS):
        e = base + j * EW_BLOCK
        if e < n:
            out[e] = x[e] / by[e // dim]


@cuda.jit
def _row_sum_gpu(a, sums, dim, block, square_root):
    part = cuda.shared.array(MAX_BLOCK, dtype=numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for j in range(tid, dim, block):
        v = a[row * dim + j]
        if square_root:
            acc += v * v
        else:
            acc += v
    part[tid] = acc
    cuda.syncthreads()
    s = block // 2
    while s > 0:
        if tid < s:
            part[tid] = part[tid] + part[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        sums[row] = np.sqrt(part[0]) if square_root else part[0]


def _to_device(*args):
    return [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]


def _ew_grid(n):
    return (n + EW_BLOCK * EW_ITEMS - 1) // (EW_BLOCK * EW_ITEMS), EW_BLOCK


def _l1_launch(s):
    x, absx, sums, out, rows, dim, rb = s
    n = rows * dim
    g, b = _ew_grid(n)
    _abs_gpu[g, b](x, absx, n)
    _row_sum_gpu[rows, rb](absx, sums, dim, rb, False)
    _div_rows_gpu[g, b](x, sums, out, n, dim)


def _l2_launch(s):
    x, norms, out, rows, dim, rb = s
    n = rows * dim
    _row_sum_gpu[rows, rb](x, norms, dim, rb, True)
    g, b = _ew_grid(n)
    _div_rows_gpu[g, b](x, norms, out, n, dim)


# ----------------------------------------------------------------------------------------------- inputs


def _x(params, seed):
    rows, dim = int(params["batch_size"]), int(params["dim"])
    return np.random.default_rng(seed).standard_normal(rows * dim).astype(np.float32), rows, dim


def l1_inputs(params, seed):
    x, rows, dim = _x(params, seed)
    return (x, np.zeros_like(x), np.zeros(rows, dtype=np.float32), np.zeros_like(x), rows, dim,
            int(params["reduce_block"]))


def l2_inputs(params, seed):
    x, rows, dim = _x(params, seed)
    return x, np.zeros(rows, dtype=np.float32), np.zeros_like(x), rows, dim, int(params["reduce_block"])


def work(params):
    """The largest launch: the element-wise one (128-thread blocks)."""
    rows, dim = int(params["batch_size"]), int(params["dim"])
    return max(int(ew_threads(rows * dim)), rows * int(params["reduce_block"])), EW_BLOCK


POINT = {"batch_size": 16, "dim": 16384, "reduce_block": 512}
TEST_POINT = {"batch_size": 3, "dim": 300, "reduce_block": 64}

KERNELS = [
    MeasuredKernel(
        source="kernelbench", application="38_L1Norm_", kernel="forward",
        description="x / sum(|x|, dim=1) on 16 x 16384: abs (element-wise), row sums (block per row), "
        "division (element-wise): three launches",
        cpu=l1_norm, gpu=GpuPort(_to_device, _l1_launch, lambda s: s[3].copy_to_host()), make_inputs=l1_inputs,
        points={LABEL: POINT}, work=work, test_point=TEST_POINT, rtol=1e-5, atol=1e-7, separate_launches=True,
        launches=3,
    ),
    MeasuredKernel(
        source="kernelbench", application="39_L2Norm_", kernel="forward",
        description="x / norm(x, 2, dim=1) on 16 x 16384: row 2-norms (block per row), division "
        "(element-wise): two launches",
        cpu=l2_norm, gpu=GpuPort(_to_device, _l2_launch, lambda s: s[2].copy_to_host()), make_inputs=l2_inputs,
        points={LABEL: POINT}, work=work, test_point=TEST_POINT, rtol=1e-5, atol=1e-7, separate_launches=True,
        launches=2,
    ),
]
