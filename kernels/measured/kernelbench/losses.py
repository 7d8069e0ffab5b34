"""KernelBench level 1, losses: ``94_MSELoss``, ``96_HuberLoss``, ``100_HingeLoss``, ``98_KLDivLoss``,
``97_CosineSimilarityLoss`` and ``95_CrossEntropyLoss``, as the sequences of kernels PyTorch eager launches
for them (each region holds them in order as successive parallel loops, ``separate_launches=True``).

The launches, as far as I know ATen's CUDA code (the data records times, not kernels):

* ``94_MSELoss``, ``torch.mean((p - t) ** 2)`` on ``128 x 4096``: (1) ``p - t``, element-wise; (2) ``** 2``
  (``pow`` with the exponent 2 runs as ``x * x``), element-wise; (3) the mean, a full reduction. Three launches.
* ``96_HuberLoss``, ``F.smooth_l1_loss(p, t)`` (beta 1, mean) on ``128 x 4096``: (1) the element-wise loss
  ``z = |p - t|; z < beta ? 0.5 z^2 / beta : z - 0.5 beta`` into a temporary; (2) the mean. Two launches.
* ``100_HingeLoss``, ``torch.mean(torch.clamp(1 - p * t, min=0))`` on ``128 x 1``: (1) ``p * t``, (2)
  ``1 - .``, (3) ``clamp_min(., 0)``, each element-wise; (4) the mean. Four launches on 128 values: the time
  is PyTorch's per-launch overhead far more than any work.
* ``98_KLDivLoss``, ``F.kl_div(torch.log(p), t, reduction='batchmean')`` on ``128 x 4096`` (rows of ``p`` and
  ``t`` are softmaxes of standard normals, made before the timed call): (1) ``torch.log(p)``; ``torch.kl_div``
  (``log_target`` False) as ``xlogy(t, t) - t * input`` then reduced with ``sum`` (PyTorch 2.x's composite
  ``kl_div``): (2) ``xlogy``, (3) the product, (4) the difference, element-wise, (5) the sum, a full
  reduction; (6) ``F.kl_div``'s ``/ batch`` for ``batchmean``, a division by a host scalar, which PyTorch runs
  as a multiplication by its reciprocal, an element-wise launch over one element. Six launches. Its region
  traces about 36 M records: feature point ``16 x 4096``.
* ``97_CosineSimilarityLoss``, ``torch.mean(1 - F.cosine_similarity(p, t, dim=1))`` on ``128 x 4096``:
  PyTorch 2.x's ``cosine_similarity`` divides each input by its clamped norm first:
  ``x1_norm = linalg_vector_norm(x1, 2, dim, keepdim=True).clone()`` (a row reduction, a copy), the same for
  ``x2``, ``clamp_min_(eps = 1e-8)`` on both, then ``((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)``: two
  broadcast divisions and a product (element-wise), a row sum; then ``1 - .`` and the mean (of 128 values,
  one block of 128 threads, like the hinge's). Twelve launches, as far as I know that version's code (older
  PyTorch computed ``sum(x1 x2) / sqrt(clamp(sum(x1^2) sum(x2^2)))`` instead, fewer launches). The row
  reductions are one block of 512 threads per row as the L1/L2 norms' (``norms.py``). The three small
  element-wise kinds (copy, clamp, ``1 - x``) share one function with a switch on the kind: one comparison
  per thread the original's separate kernels do not make. Its region traces about 50 M records: feature
  point ``12 x 4096``.
* ``95_CrossEntropyLoss``, ``F.cross_entropy`` on ``4096 x 10`` logits and int64 targets: (1)
  ``log_softmax`` over the 10 classes, PyTorch's warp-per-row ("persistent") softmax for rows of at most 1024:
  rows padded to the next power of two (16) lanes, so a "warp" of 16 lanes, two rows a warp
  (``WARP_BATCH``), blocks of ``16 x 8`` = 128 threads holding 16 rows (256 blocks, 32768 threads); each lane
  loads its element of both rows (``-inf`` past the row), the row maximum and the sum of ``exp(x - max)``
  by butterfly reductions over the 16 lanes (``shfl_xor`` 8, 4, 2, 1), then writes ``x - max - log(sum)``;
  (2) ``nll_loss`` (mean): one block of 32 threads (``NLL_LOSS_THREADS``), each striding over the rows
  summing ``-logp[i, target[i]]`` and the weights (1 each, ignore_index -100 tested), then thread 0 adds the
  32 partial sums from shared memory and divides. Two launches.

Geometry of the common parts:

* element-wise launches: PyTorch's element-wise kernels run 128-thread blocks of 4 elements a thread; here
  thread ``t`` of block ``b`` handles elements ``512 b + t + 128 j``, ``j = 0..3`` (written out, unrolled;
  the vectorised kernel loads 4 consecutive floats with one float4 load instead). ``128 x 4096``: 1024
  blocks, 131072 threads.
* the mean (a full reduction): ``ceil(n / 8192)`` blocks of ``reduce_block`` threads (512; 128 for the
  hinge's 128 values), each thread summing 16 elements ``gid, gid + G 512, ...`` (a grid-stride loop), a
  shared-memory tree reduction per block into one partial per block in global memory; the last phase is
  the block that finishes last (PyTorch's reduction kernel counts finished blocks with an atomic semaphore;
  here block 0 stands for it) adding the partials with the same tree and writing ``sum * (1 / n)``.
  PyTorch's own reduction configuration (vectorised loads, several accumulators a thread, its choice of
  block and grid for the GPU) is not modelled.

Registers that live across the phases of a launch (the cross-entropy lanes' two elements and running
maxima/sums) are arrays with a slot per thread here (stores and loads the original does not make), and a
warp shuffle is a store of the lane's value to such an array then a load of the partner's (double-buffered).
``work``: the largest launch (the element-wise ones: 131072 threads for MSE/Huber/KL/cosine, blocks of 128; the
log-softmax's 32768 for cross-entropy; the hinge's launches are all 128 threads in one block).

Inputs: as the problems': standard normal float32 predictions and targets (MSE, Huber), hinge targets
``2 b - 1`` with ``b`` uniform in {0, 1}, class targets uniform int64 in ``[0, 10)``; NumPy's generator, not
torch's. Precision: single (FP32) throughout.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

LABEL = "before_2025-07"
EW_BLOCK = 128
EW_ITEMS = 4
PER_THREAD = 16  # elements a thread of the mean sums
MAX_BLOCK = 1024
SM_LANES = 16  # cross-entropy: lanes a row (next power of two of the 10 classes)
SM_WARPS = 8  # warps (threadIdx.y) a block
SM_BATCH = 2  # rows a warp
SM_BLOCK = SM_LANES * SM_WARPS
NLL_THREADS = 32
IGNORE_INDEX = -100
NEG_INF = np.float32(-np.inf)  # a float32 constant (negating np.inf in the region would be a double operation)
COS_EPS = 1e-8  # cosine_similarity's eps


@numba.njit
def ew_threads(n):
    """Threads of an element-wise launch over ``n`` elements (128-thread blocks, 4 elements a thread)."""
    per_block = EW_BLOCK * EW_ITEMS
    return ((n + per_block - 1) // per_block) * EW_BLOCK


@numba.njit
def mean_blocks(n, reduce_block):
    """Blocks of the mean: each thread sums ``PER_THREAD`` elements (at least one block)."""
    per_block = reduce_block * PER_THREAD
    return max(1, (n + per_block - 1) // per_block)


@numba.njit
def _levels(block):
    levels = 0
    while (1 << levels) < block:
        levels += 1
    return levels


@numba.njit
def mean_launch(a, n, partial, result, reduce_block):
    """The mean of ``a[:n]`` into ``result[0]``: block partials through a shared tree into ``partial``, then
    block 0 (standing for the last block to finish) reduces the partials with the same tree."""
    blocks = mean_blocks(n, reduce_block)
    n_threads = blocks * reduce_block
    stride = n_threads
    levels = _levels(reduce_block)
    tile = np.empty((blocks, reduce_block), dtype=np.float32)  # shared memory
    for gid in numba.prange(n_threads):
        blk = gid // reduce_block
        acc = np.float32(0.0)
        for e in range(gid, n, stride):
            acc += a[e]
        tile[blk, gid - blk * reduce_block] = acc
    for level in range(levels):
        s = reduce_block >> (level + 1)
        for gid in numba.prange(n_threads):
            blk = gid // reduce_block
            tid = gid - blk * reduce_block
            if tid < s:
                tile[blk, tid] = tile[blk, tid] + tile[blk, tid + s]
            if s == 1 and tid == 0:
                partial[blk] = tile[blk, 0]
    # the last block: the partials, strided over its threads, then the tree
    for gid in numba.prange(n_threads):
        if gid < reduce_block:
            acc = np.float32(0.0)
            for j in range(gid, blocks, reduce_block):
                acc += partial[j]
            tile[0, gid] = acc
    factor = np.float32(1.0 / n)
    for level in range(levels):
        s = reduce_block >> (level + 1)
        for gid in numba.prange(n_threads):
            if gid < s:
                tile[0, gid] = tile[0, gid] + tile[0, gid + s]
            if s == 1 and gid == 0:
                result[0] = tile[0, 0] * factor
    return result


@numba.njit
def sum_launch(a, n, partial, result, reduce_block):
    """The sum of ``a[:n]`` into ``result[0]``: :func:`mean_launch` without the final factor."""
    blocks = mean_blocks(n, reduce_block)
    n_threads = blocks * reduce_block
    stride = n_threads
    levels = _levels(reduce_block)
    tile = np.empty((blocks, reduce_block), dtype=np.float32)  # shared memory
    for gid in numba.prange(n_threads):
        blk = gid // reduce_block
        acc = np.float32(0.0)
        for e in range(gid, n, stride):
            acc += a[e]
        tile[blk, gid - blk * reduce_block] = acc
    for level in range(levels):
        s = reduce_block >> (level + 1)
        for gid in numba.prange(n_threads):
            blk = gid // reduce_block
            tid = gid - blk * reduce_block
            if tid < s:
                tile[blk, tid] = tile[blk, tid] + tile[blk, tid + s]
            if s == 1 and tid == 0:
                partial[blk] = tile[blk, 0]
    for gid in numba.prange(n_threads):
        if gid < reduce_block:
            acc = np.float32(0.0)
            for j in range(gid, blocks, reduce_block):
                acc += partial[j]
            tile[0, gid] = acc
    for level in range(levels):
        s = reduce_block >> (level + 1)
        for gid in numba.prange(n_threads):
            if gid < s:
                tile[0, gid] = tile[0, gid] + tile[0, gid + s]
            if s == 1 and gid == 0:
                result[0] = tile[0, 0]
    return result


@numba.njit
def row_reduce_launch(a, rows, dim, out, reduce_block, norm):
    """A reduction over the last dim of ``a`` (flat ``rows x dim``): one block of ``reduce_block`` threads per
    row, each thread striding over the row, a shared tree; ``norm``: the sum of squares and its square root
    (``linalg_vector_norm``), else the sum. Thread 0 writes ``out[row]``."""
    n_threads = rows * reduce_block
    tile = np.empty((rows, reduce_block), dtype=np.float32)  # shared memory
    if norm:
        for gid in numba.prange(n_threads):
            row = gid // reduce_block
            tid = gid - row * reduce_block
            acc = np.float32(0.0)
            for j in range(tid, dim, reduce_block):
                v = a[row * dim + j]
                acc += v * v
            tile[row, tid] = acc
    else:
        for gid in numba.prange(n_threads):
            row = gid // reduce_block
            tid = gid - row * reduce_block
            acc = np.float32(0.0)
            for j in range(tid, dim, reduce_block):
                acc += a[row * dim + j]
            tile[row, tid] = acc
    for level in range(_levels(reduce_block)):
        s = reduce_block >> (level + 1)
        for gid in numba.prange(n_threads):
            row = gid // reduce_block
            tid = gid - row * reduce_block
            if tid < s:
                tile[row, tid] = tile[row, tid] + tile[row, tid + s]
            if s == 1 and tid == 0:
                out[row] = np.sqrt(tile[row, 0]) if norm else tile[row, 0]
    return out


@numba.njit
def ew_unary_launch(kind, a, dst, n, c):
    """A small element-wise launch: kind 0 copy (``clone``), 1 ``clamp_min(a, c)``, 2 ``c - a``."""
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if kind == 0:
            if base < n:
                dst[base] = a[base]
            if base + EW_BLOCK < n:
                dst[base + EW_BLOCK] = a[base + EW_BLOCK]
            if base + 2 * EW_BLOCK < n:
                dst[base + 2 * EW_BLOCK] = a[base + 2 * EW_BLOCK]
            if base + 3 * EW_BLOCK < n:
                dst[base + 3 * EW_BLOCK] = a[base + 3 * EW_BLOCK]
        elif kind == 1:
            if base < n:
                dst[base] = max(a[base], c)
            if base + EW_BLOCK < n:
                dst[base + EW_BLOCK] = max(a[base + EW_BLOCK], c)
            if base + 2 * EW_BLOCK < n:
                dst[base + 2 * EW_BLOCK] = max(a[base + 2 * EW_BLOCK], c)
            if base + 3 * EW_BLOCK < n:
                dst[base + 3 * EW_BLOCK] = max(a[base + 3 * EW_BLOCK], c)
        else:
            if base < n:
                dst[base] = c - a[base]
            if base + EW_BLOCK < n:
                dst[base + EW_BLOCK] = c - a[base + EW_BLOCK]
            if base + 2 * EW_BLOCK < n:
                dst[base + 2 * EW_BLOCK] = c - a[base + 2 * EW_BLOCK]
            if base + 3 * EW_BLOCK < n:
                dst[base + 3 * EW_BLOCK] = c - a[base + 3 * EW_BLOCK]
    return dst


@numba.njit
def div_rows_launch(a, by, dst, n, dim):
    """Element-wise ``dst = a / by[row]`` (the row's value broadcast)."""
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            dst[e] = a[e] / by[e // dim]
        e = base + EW_BLOCK
        if e < n:
            dst[e] = a[e] / by[e // dim]
        e = base + 2 * EW_BLOCK
        if e < n:
            dst[e] = a[e] / by[e // dim]
        e = base + 3 * EW_BLOCK
        if e < n:
            dst[e] = a[e] / by[e // dim]
    return dst


# ============================================================================================== regions


def mse_loss(p, t, diff, sq, partial, result, n, reduce_block):
    """``mean((p - t) ** 2)``: subtraction, square, mean (three launches). Returns ``result`` (1 value)."""
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            diff[base] = p[base] - t[base]
        if base + EW_BLOCK < n:
            diff[base + EW_BLOCK] = p[base + EW_BLOCK] - t[base + EW_BLOCK]
        if base + 2 * EW_BLOCK < n:
            diff[base + 2 * EW_BLOCK] = p[base + 2 * EW_BLOCK] - t[base + 2 * EW_BLOCK]
        if base + 3 * EW_BLOCK < n:
            diff[base + 3 * EW_BLOCK] = p[base + 3 * EW_BLOCK] - t[base + 3 * EW_BLOCK]
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            v = diff[e]
            sq[e] = v * v
        e = base + EW_BLOCK
        if e < n:
            v = diff[e]
            sq[e] = v * v
        e = base + 2 * EW_BLOCK
        if e < n:
            v = diff[e]
            sq[e] = v * v
        e = base + 3 * EW_BLOCK
        if e < n:
            v = diff[e]
            sq[e] = v * v
    mean_launch(sq, n, partial, result, reduce_block)
    return result


def huber_loss(p, t, loss, partial, result, n, reduce_block):
    """``smooth_l1_loss(p, t)`` (beta 1, mean): the element-wise loss, then the mean (two launches)."""
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            z = abs(p[e] - t[e])
            loss[e] = np.float32(0.5) * z * z / np.float32(1.0) if z < np.float32(1.0) else z - np.float32(0.5)
        e = base + EW_BLOCK
        if e < n:
            z = abs(p[e] - t[e])
            loss[e] = np.float32(0.5) * z * z / np.float32(1.0) if z < np.float32(1.0) else z - np.float32(0.5)
        e = base + 2 * EW_BLOCK
        if e < n:
            z = abs(p[e] - t[e])
            loss[e] = np.float32(0.5) * z * z / np.float32(1.0) if z < np.float32(1.0) else z - np.float32(0.5)
        e = base + 3 * EW_BLOCK
        if e < n:
            z = abs(p[e] - t[e])
            loss[e] = np.float32(0.5) * z * z / np.float32(1.0) if z < np.float32(1.0) else z - np.float32(0.5)
    mean_launch(loss, n, partial, result, reduce_block)
    return result


def hinge_loss(p, t, prod, diff, clamped, partial, result, n, reduce_block):
    """``mean(clamp(1 - p * t, min=0))``: multiply, subtract from 1, clamp, mean (four launches)."""
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            prod[base] = p[base] * t[base]
        if base + EW_BLOCK < n:
            prod[base + EW_BLOCK] = p[base + EW_BLOCK] * t[base + EW_BLOCK]
        if base + 2 * EW_BLOCK < n:
            prod[base + 2 * EW_BLOCK] = p[base + 2 * EW_BLOCK] * t[base + 2 * EW_BLOCK]
        if base + 3 * EW_BLOCK < n:
            prod[base + 3 * EW_BLOCK] = p[base + 3 * EW_BLOCK] * t[base + 3 * EW_BLOCK]
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            diff[base] = np.float32(1.0) - prod[base]
        if base + EW_BLOCK < n:
            diff[base + EW_BLOCK] = np.float32(1.0) - prod[base + EW_BLOCK]
        if base + 2 * EW_BLOCK < n:
            diff[base + 2 * EW_BLOCK] = np.float32(1.0) - prod[base + 2 * EW_BLOCK]
        if base + 3 * EW_BLOCK < n:
            diff[base + 3 * EW_BLOCK] = np.float32(1.0) - prod[base + 3 * EW_BLOCK]
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            clamped[base] = max(diff[base], np.float32(0.0))
        if base + EW_BLOCK < n:
            clamped[base + EW_BLOCK] = max(diff[base + EW_BLOCK], np.float32(0.0))
        if base + 2 * EW_BLOCK < n:
            clamped[base + 2 * EW_BLOCK] = max(diff[base + 2 * EW_BLOCK], np.float32(0.0))
        if base + 3 * EW_BLOCK < n:
            clamped[base + 3 * EW_BLOCK] = max(diff[base + 3 * EW_BLOCK], np.float32(0.0))
    mean_launch(clamped, n, partial, result, reduce_block)
    return result


def kl_div_loss(p, t, logp, xl, prod, diff, partial, total, result, n, batch, reduce_block):
    """``F.kl_div(torch.log(p), t, reduction='batchmean')``: log, xlogy(t, t), t * log p, their difference
    (element-wise), the sum, and the sum times ``1 / batch`` (a one-element launch): six launches."""
    # launch 1: torch.log(p)
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            logp[base] = np.log(p[base])
        if base + EW_BLOCK < n:
            logp[base + EW_BLOCK] = np.log(p[base + EW_BLOCK])
        if base + 2 * EW_BLOCK < n:
            logp[base + 2 * EW_BLOCK] = np.log(p[base + 2 * EW_BLOCK])
        if base + 3 * EW_BLOCK < n:
            logp[base + 3 * EW_BLOCK] = np.log(p[base + 3 * EW_BLOCK])
    # launch 2: xlogy(t, t): NaN for a NaN, 0 for a zero, t log t otherwise
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            v = t[e]
            xl[e] = v if v != v else (np.float32(0.0) if v == np.float32(0.0) else v * np.log(v))
        e = base + EW_BLOCK
        if e < n:
            v = t[e]
            xl[e] = v if v != v else (np.float32(0.0) if v == np.float32(0.0) else v * np.log(v))
        e = base + 2 * EW_BLOCK
        if e < n:
            v = t[e]
            xl[e] = v if v != v else (np.float32(0.0) if v == np.float32(0.0) else v * np.log(v))
        e = base + 3 * EW_BLOCK
        if e < n:
            v = t[e]
            xl[e] = v if v != v else (np.float32(0.0) if v == np.float32(0.0) else v * np.log(v))
    # launch 3: t * input
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            prod[base] = t[base] * logp[base]
        if base + EW_BLOCK < n:
            prod[base + EW_BLOCK] = t[base + EW_BLOCK] * logp[base + EW_BLOCK]
        if base + 2 * EW_BLOCK < n:
            prod[base + 2 * EW_BLOCK] = t[base + 2 * EW_BLOCK] * logp[base + 2 * EW_BLOCK]
        if base + 3 * EW_BLOCK < n:
            prod[base + 3 * EW_BLOCK] = t[base + 3 * EW_BLOCK] * logp[base + 3 * EW_BLOCK]
    # launch 4: the difference
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            diff[base] = xl[base] - prod[base]
        if base + EW_BLOCK < n:
            diff[base + EW_BLOCK] = xl[base + EW_BLOCK] - prod[base + EW_BLOCK]
        if base + 2 * EW_BLOCK < n:
            diff[base + 2 * EW_BLOCK] = xl[base + 2 * EW_BLOCK] - prod[base + 2 * EW_BLOCK]
        if base + 3 * EW_BLOCK < n:
            diff[base + 3 * EW_BLOCK] = xl[base + 3 * EW_BLOCK] - prod[base + 3 * EW_BLOCK]
    # launch 5: the sum
    sum_launch(diff, n, partial, total, reduce_block)
    # launch 6: / batch, a division by a host scalar, which PyTorch runs as a multiplication by its reciprocal
    inv = np.float32(1.0 / batch)
    for gid in numba.prange(ew_threads(1)):
        if gid < 1:
            result[0] = total[0] * inv
    return result


def cosine_loss(p, t, n1, n2, c1, c2, k1, k2, u1, u2, prod, cos, one_minus, partial, result, rows, dim,
                reduce_block, mean_block):
    """``mean(1 - cosine_similarity(p, t, dim=1))``: twelve launches (see the module docstring).
    ``p``, ``t``, ``u1``, ``u2``, ``prod``: float32 flat ``rows x dim``; ``n1`` ... ``one_minus``: ``rows``."""
    n = rows * dim
    row_reduce_launch(p, rows, dim, n1, reduce_block, True)  # linalg_vector_norm(x1, 2, dim=1)
    ew_unary_launch(0, n1, c1, rows, np.float32(0.0))  # .clone()
    row_reduce_launch(t, rows, dim, n2, reduce_block, True)
    ew_unary_launch(0, n2, c2, rows, np.float32(0.0))
    ew_unary_launch(1, c1, k1, rows, np.float32(COS_EPS))  # clamp_min_(eps)
    ew_unary_launch(1, c2, k2, rows, np.float32(COS_EPS))
    div_rows_launch(p, k1, u1, n, dim)  # x1 / x1_norm
    div_rows_launch(t, k2, u2, n, dim)  # x2 / x2_norm
    for gid in numba.prange(ew_threads(n)):  # their product
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            prod[base] = u1[base] * u2[base]
        if base + EW_BLOCK < n:
            prod[base + EW_BLOCK] = u1[base + EW_BLOCK] * u2[base + EW_BLOCK]
        if base + 2 * EW_BLOCK < n:
            prod[base + 2 * EW_BLOCK] = u1[base + 2 * EW_BLOCK] * u2[base + 2 * EW_BLOCK]
        if base + 3 * EW_BLOCK < n:
            prod[base + 3 * EW_BLOCK] = u1[base + 3 * EW_BLOCK] * u2[base + 3 * EW_BLOCK]
    row_reduce_launch(prod, rows, dim, cos, reduce_block, False)  # .sum(dim=1)
    ew_unary_launch(2, cos, one_minus, rows, np.float32(1.0))  # 1 - cosine
    mean_launch(one_minus, rows, partial, result, mean_block)  # torch.mean
    return result


def cross_entropy(x, target, logp, result, batch, classes):
    """``F.cross_entropy(x, target)`` (mean): warp-per-row log-softmax into ``logp``, then ``nll_loss``.
    ``x``, ``logp``: float32 flat ``batch * classes``; ``target``: int64 ``batch``; ``result``: 1 value."""
    rows_per_block = SM_WARPS * SM_BATCH
    n_threads = ((batch + rows_per_block - 1) // rows_per_block) * SM_BLOCK
    # registers of each lane, for the warp's rows 0 and 1 (the two rows are written out: a loop over them
    # would be taken for a second dimension of the thread space)
    e0 = np.empty(n_threads, dtype=np.float32)  # the lane's element of row 0
    e1 = np.empty(n_threads, dtype=np.float32)
    m0 = np.empty(n_threads, dtype=np.float32)  # the row maxima
    m1 = np.empty(n_threads, dtype=np.float32)
    xa0 = np.empty(n_threads, dtype=np.float32)  # lane values exchanged by the shuffles (double-buffered)
    xa1 = np.empty(n_threads, dtype=np.float32)
    xb0 = np.empty(n_threads, dtype=np.float32)
    xb1 = np.empty(n_threads, dtype=np.float32)
    # launch 1, phase: each lane loads its element of the warp's two rows (-inf past the row or the batch)
    for gid in numba.prange(n_threads):
        warp = gid // SM_LANES
        lane = gid - warp * SM_LANES
        first = warp * SM_BATCH
        v = NEG_INF
        if first < batch and lane < classes:
            v = x[first * classes + lane]
        e0[gid] = v
        xa0[gid] = v
        v = NEG_INF
        if first + 1 < batch and lane < classes:
            v = x[(first + 1) * classes + lane]
        e1[gid] = v
        xa1[gid] = v
    # butterfly maximum over the 16 lanes (shfl_xor 8, 4, 2, 1), a to b then b to a
    for step in range(4):
        offset = SM_LANES >> (step + 1)
        for gid in numba.prange(n_threads):
            if step % 2 == 0:
                a = xa0[gid]
                b = xa0[gid ^ offset]
                xb0[gid] = a if a > b else b
                a = xa1[gid]
                b = xa1[gid ^ offset]
                xb1[gid] = a if a > b else b
            else:
                a = xb0[gid]
                b = xb0[gid ^ offset]
                xa0[gid] = a if a > b else b
                a = xb1[gid]
                b = xb1[gid ^ offset]
                xa1[gid] = a if a > b else b
    # each lane's exp(x - max) (0 for the padding lanes), then the butterfly sum (b to a, a to b)
    for gid in numba.prange(n_threads):
        m = xa0[gid]
        m0[gid] = m
        xb0[gid] = np.exp(e0[gid] - m)
        m = xa1[gid]
        m1[gid] = m
        xb1[gid] = np.exp(e1[gid] - m)
    for step in range(4):
        offset = SM_LANES >> (step + 1)
        for gid in numba.prange(n_threads):
            if step % 2 == 0:
                xa0[gid] = xb0[gid] + xb0[gid ^ offset]
                xa1[gid] = xb1[gid] + xb1[gid ^ offset]
            else:
                xb0[gid] = xa0[gid] + xa0[gid ^ offset]
                xb1[gid] = xa1[gid] + xa1[gid ^ offset]
    # store: x - max - log(sum) for the warp's rows, the lanes inside the row
    for gid in numba.prange(n_threads):
        warp = gid // SM_LANES
        lane = gid - warp * SM_LANES
        first = warp * SM_BATCH
        if first < batch:
            logsum = np.log(xb0[gid])
            if lane < classes:
                logp[first * classes + lane] = e0[gid] - m0[gid] - logsum
        if first + 1 < batch:
            logsum = np.log(xb1[gid])
            if lane < classes:
                logp[(first + 1) * classes + lane] = e1[gid] - m1[gid] - logsum
    # launch 2: nll_loss, one block of 32 threads; thread 0 adds the shared partial sums and divides
    sums = np.empty(NLL_THREADS, dtype=np.float32)  # shared memory
    weights = np.empty(NLL_THREADS, dtype=np.float32)
    for gid in numba.prange(NLL_THREADS):
        acc = np.float32(0.0)
        wsum = np.float32(0.0)
        for i in range(gid, batch, NLL_THREADS):
            t = target[i]
            if t != IGNORE_INDEX:
                acc -= logp[i * classes + t]
                wsum += np.float32(1.0)
        sums[gid] = acc
        weights[gid] = wsum
    for gid in numba.prange(NLL_THREADS):
        if gid == 0:
            total = np.float32(0.0)
            wtotal = np.float32(0.0)
            for j in range(NLL_THREADS):
                total += sums[j]
                wtotal += weights[j]
            result[0] = total / wtotal
    return result


# ============================================================================================== GPU port


@cuda.jit
def _ew_gpu(kind, a, b, dst, n):
    """Element-wise launches: kind 0 a - b, 1 a * a, 2 smooth L1 (beta 1), 3 a * b, 4 1 - a, 5 max(a, 0)."""
    base = cuda.blockIdx.x * (EW_BLOCK * EW_ITEMS) + cuda.threadIdx.x
    for j in range(EW_ITEMS):
        e = base + j * EW_BLOCK
        if e < n:
            if kind == 0:
                dst[e] = a[e] - b[e]
            elif kind == 1:
                dst[e] = a[e] * a[e]
            elif kind == 2:
                z = abs(a[e] - b[e])
                dst[e] = numba.float32(0.5) * z * z / numba.float32(1.0) if z < 1.0 else z - numba.float32(0.5)
            elif kind == 3:
                dst[e] = a[e] * b[e]
            elif kind == 4:
                dst[e] = numba.float32(1.0) - a[e]
            else:
                dst[e] = max(a[e], numba.float32(0.0))


@cuda.jit
def _block_sums_gpu(a, n, partial, block):
    tile = cuda.shared.array(MAX_BLOCK, dtype=numba.float32)
    tid = cuda.threadIdx.x
    gid = cuda.blockIdx.x * block + tid
    acc = numba.float32(0.0)
    for e in range(gid, n, cuda.gridDim.x * block):
        acc += a[e]
    tile[tid] = acc
    cuda.syncthreads()
    s = block // 2
    while s > 0:
        if tid < s:
            tile[tid] = tile[tid] + tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = tile[0]


@cuda.jit
def _last_block_gpu(partial, blocks, result, n, block):
    # the last block's part of the same kernel in the original; a second launch here
    tile = cuda.shared.array(MAX_BLOCK, dtype=numba.float32)
    tid = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for j in range(tid, blocks, block):
        acc += partial[j]
    tile[tid] = acc
    cuda.syncthreads()
    s = block // 2
    while s > 0:
        if tid < s:
            tile[tid] = tile[tid] + tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        result[0] = tile[0] * numba.float32(1.0 / n)


@cuda.jit
def _log_softmax_warp_gpu(x, logp, batch, classes):
    red = cuda.shared.array((SM_WARPS, SM_BATCH, SM_LANES), dtype=numba.float32)
    lane = cuda.threadIdx.x
    w = cuda.threadIdx.y
    first = (cuda.blockIdx.x * SM_WARPS + w) * SM_BATCH
    e0 = NEG_INF
    e1 = NEG_INF
    if first < batch and lane < classes:
        e0 = x[first * classes + lane]
    if first + 1 < batch and lane < classes:
        e1 = x[(first + 1) * classes + lane]
    # the butterfly through shared memory (the simulator's shuffles are avoided), same order of operations
    m0 = e0
    m1 = e1
    offset = SM_LANES // 2
    while offset > 0:
        red[w, 0, lane] = m0
        red[w, 1, lane] = m1
        cuda.syncthreads()
        a0 = red[w, 0, lane ^ offset]
        a1 = red[w, 1, lane ^ offset]
        cuda.syncthreads()
        m0 = m0 if m0 > a0 else a0
        m1 = m1 if m1 > a1 else a1
        offset //= 2
    s0 = np.exp(e0 - m0)
    s1 = np.exp(e1 - m1)
    offset = SM_LANES // 2
    while offset > 0:
        red[w, 0, lane] = s0
        red[w, 1, lane] = s1
        cuda.syncthreads()
        a0 = red[w, 0, lane ^ offset]
        a1 = red[w, 1, lane ^ offset]
        cuda.syncthreads()
        s0 = s0 + a0
        s1 = s1 + a1
        offset //= 2
    if first < batch and lane < classes:
        logp[first * classes + lane] = e0 - m0 - np.log(s0)
    if first + 1 < batch and lane < classes:
        logp[(first + 1) * classes + lane] = e1 - m1 - np.log(s1)


@cuda.jit
def _nll_gpu(logp, target, result, batch, classes):
    sums = cuda.shared.array(NLL_THREADS, dtype=numba.float32)
    weights = cuda.shared.array(NLL_THREADS, dtype=numba.float32)
    tid = cuda.threadIdx.x
    acc = numba.float32(0.0)
    wsum = numba.float32(0.0)
    for i in range(tid, batch, NLL_THREADS):
        t = target[i]
        if t != IGNORE_INDEX:
            acc -= logp[i * classes + t]
            wsum += numba.float32(1.0)
    sums[tid] = acc
    weights[tid] = wsum
    cuda.syncthreads()
    if tid == 0:
        total = numba.float32(0.0)
        wtotal = numba.float32(0.0)
        for j in range(NLL_THREADS):
            total += sums[j]
            wtotal += weights[j]
        result[0] = total / wtotal


@cuda.jit
def _kl_ew_gpu(kind, a, b, dst, n, inv):
    """KL's element-wise launches: kind 0 log a, 1 xlogy(a, a), 2 a * b, 3 a - b, 4 a[0] * inv."""
    base = cuda.blockIdx.x * (EW_BLOCK * EW_ITEMS) + cuda.threadIdx.x
    for j in range(EW_ITEMS):
        e = base + j * EW_BLOCK
        if e < n:
            if kind == 0:
                dst[e] = np.log(a[e])
            elif kind == 1:
                v = a[e]
                dst[e] = v if v != v else (numba.float32(0.0) if v == 0 else v * np.log(v))
            elif kind == 2:
                dst[e] = a[e] * b[e]
            elif kind == 3:
                dst[e] = a[e] - b[e]
            else:
                dst[e] = a[e] * inv


@cuda.jit
def _last_block_sum_gpu(partial, blocks, result, block):
    tile = cuda.shared.array(MAX_BLOCK, dtype=numba.float32)
    tid = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for j in range(tid, blocks, block):
        acc += partial[j]
    tile[tid] = acc
    cuda.syncthreads()
    s = block // 2
    while s > 0:
        if tid < s:
            tile[tid] = tile[tid] + tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        result[0] = tile[0]


@cuda.jit
def _row_reduce_gpu(a, dim, out, block, norm):
    tile = cuda.shared.array(MAX_BLOCK, dtype=numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for j in range(tid, dim, block):
        v = a[row * dim + j]
        acc += v * v if norm else v
    tile[tid] = acc
    cuda.syncthreads()
    s = block // 2
    while s > 0:
        if tid < s:
            tile[tid] = tile[tid] + tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[row] = np.sqrt(tile[0]) if norm else tile[0]


@cuda.jit
def _cos_ew_gpu(kind, a, b, dst, n, dim, c):
    """Cosine's element-wise launches: 0 copy, 1 max(a, c), 2 c - a, 3 a / b[row], 4 a * b."""
    base = cuda.blockIdx.x * (EW_BLOCK * EW_ITEMS) + cuda.threadIdx.x
    for j in range(EW_ITEMS):
        e = base + j * EW_BLOCK
        if e < n:
            if kind == 0:
                dst[e] = a[e]
            elif kind == 1:
                dst[e] = max(a[e], c)
            elif kind == 2:
                dst[e] = c - a[e]
            elif kind == 3:
                dst[e] = a[e] / b[e // dim]
            else:
                dst[e] = a[e] * b[e]


def _to_device(*args):
    return [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]


def _ew(kind, a, b, dst, n):
    _ew_gpu[(n + EW_BLOCK * EW_ITEMS - 1) // (EW_BLOCK * EW_ITEMS), EW_BLOCK](kind, a, b, dst, n)


def _mean(a, n, partial, result, block):
    blocks = int(mean_blocks(n, block))
    _block_sums_gpu[blocks, block](a, n, partial, block)
    _last_block_gpu[1, block](partial, blocks, result, n, block)


def _launch_mse(s):
    p, t, diff, sq, partial, result, n, rb = s
    _ew(0, p, t, diff, n)
    _ew(1, diff, diff, sq, n)
    _mean(sq, n, partial, result, rb)


def _launch_huber(s):
    p, t, loss, partial, result, n, rb = s
    _ew(2, p, t, loss, n)
    _mean(loss, n, partial, result, rb)


def _launch_hinge(s):
    p, t, prod, diff, clamped, partial, result, n, rb = s
    _ew(3, p, t, prod, n)
    _ew(4, prod, prod, diff, n)
    _ew(5, diff, diff, clamped, n)
    _mean(clamped, n, partial, result, rb)


def _launch_kl(s):
    p, t, logp, xl, prod, diff, partial, total, result, n, batch, rb = s
    grid = ((n + EW_BLOCK * EW_ITEMS - 1) // (EW_BLOCK * EW_ITEMS), EW_BLOCK)
    inv = np.float32(1.0 / batch)
    _kl_ew_gpu[grid](0, p, p, logp, n, inv)
    _kl_ew_gpu[grid](1, t, t, xl, n, inv)
    _kl_ew_gpu[grid](2, t, logp, prod, n, inv)
    _kl_ew_gpu[grid](3, xl, prod, diff, n, inv)
    blocks = int(mean_blocks(n, rb))
    _block_sums_gpu[blocks, rb](diff, n, partial, rb)
    _last_block_sum_gpu[1, rb](partial, blocks, total, rb)
    _kl_ew_gpu[1, EW_BLOCK](4, total, total, result, 1, inv)


def _launch_cos(s):
    p, t, n1, n2, c1, c2, k1, k2, u1, u2, prod, cos, one_minus, partial, result, rows, dim, rb, mb = s
    n = rows * dim

    def ew(kind, a, b, dst, count, c=0.0):
        grid = (count + EW_BLOCK * EW_ITEMS - 1) // (EW_BLOCK * EW_ITEMS)
        _cos_ew_gpu[grid, EW_BLOCK](kind, a, b, dst, count, dim, np.float32(c))

    _row_reduce_gpu[rows, rb](p, dim, n1, rb, True)
    ew(0, n1, n1, c1, rows)
    _row_reduce_gpu[rows, rb](t, dim, n2, rb, True)
    ew(0, n2, n2, c2, rows)
    ew(1, c1, c1, k1, rows, COS_EPS)
    ew(1, c2, c2, k2, rows, COS_EPS)
    ew(3, p, k1, u1, n)
    ew(3, t, k2, u2, n)
    ew(4, u1, u2, prod, n)
    _row_reduce_gpu[rows, rb](prod, dim, cos, rb, False)
    ew(2, cos, cos, one_minus, rows, 1.0)
    _mean(one_minus, rows, partial, result, mb)


def _launch_ce(s):
    x, target, logp, result, batch, classes = s
    rows_per_block = SM_WARPS * SM_BATCH
    _log_softmax_warp_gpu[(batch + rows_per_block - 1) // rows_per_block, (SM_LANES, SM_WARPS)](
        x, logp, batch, classes)
    _nll_gpu[1, NLL_THREADS](logp, target, result, batch, classes)


def _port(launch, out_index):
    return GpuPort(_to_device, launch, lambda s: s[out_index].copy_to_host())


# ============================================================================================== inputs


def _n(params):
    return int(params["batch_size"]) * int(params["features"])


def _randn(n, seed, stream):
    return np.random.default_rng([seed, stream]).standard_normal(n).astype(np.float32)


def _partial(params):
    return np.zeros(int(mean_blocks(_n(params), int(params["reduce_block"]))), dtype=np.float32)


def mse_inputs(params, seed):
    n = _n(params)
    return (_randn(n, seed, 0), _randn(n, seed, 1), np.zeros(n, np.float32), np.zeros(n, np.float32),
            _partial(params), np.zeros(1, np.float32), n, int(params["reduce_block"]))


def huber_inputs(params, seed):
    n = _n(params)
    return (_randn(n, seed, 0), _randn(n, seed, 1), np.zeros(n, np.float32), _partial(params),
            np.zeros(1, np.float32), n, int(params["reduce_block"]))


def hinge_inputs(params, seed):
    n = _n(params)
    t = (np.random.default_rng([seed, 1]).integers(0, 2, n) * 2 - 1).astype(np.float32)
    return (_randn(n, seed, 0), t, np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32),
            _partial(params), np.zeros(1, np.float32), n, int(params["reduce_block"]))


def _softmax_rows(x, rows):
    """``torch.randn(...).softmax(dim=-1)`` in float32."""
    x = x.reshape(rows, -1)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True, dtype=np.float32)).astype(np.float32).reshape(-1)


def kl_inputs(params, seed):
    rows, n = int(params["batch_size"]), _n(params)
    p = _softmax_rows(_randn(n, seed, 0), rows)
    t = _softmax_rows(_randn(n, seed, 1), rows)
    z = lambda: np.zeros(n, np.float32)  # noqa: E731
    return (p, t, z(), z(), z(), z(), _partial(params), np.zeros(1, np.float32), np.zeros(1, np.float32), n, rows,
            int(params["reduce_block"]))


def cos_inputs(params, seed):
    rows, dim = int(params["batch_size"]), int(params["features"])
    n = rows * dim
    big = lambda: np.zeros(n, np.float32)  # noqa: E731
    small = lambda: np.zeros(rows, np.float32)  # noqa: E731
    mb = int(params["mean_block"])
    return (_randn(n, seed, 0), _randn(n, seed, 1), small(), small(), small(), small(), small(), small(), big(),
            big(), big(), small(), small(), np.zeros(int(mean_blocks(rows, mb)), np.float32),
            np.zeros(1, np.float32), rows, dim, int(params["reduce_block"]), mb)


def work_cos(params):
    """The largest launch: the element-wise ones over ``rows x dim``, or the row reductions'."""
    rows, dim = int(params["batch_size"]), int(params["features"])
    ew = int(ew_threads(rows * dim))
    red = rows * int(params["reduce_block"])
    return (ew, EW_BLOCK) if ew >= red else (red, int(params["reduce_block"]))


def ce_inputs(params, seed):
    batch, classes = int(params["batch_size"]), int(params["num_classes"])
    x = _randn(batch * classes, seed, 0)
    target = np.random.default_rng([seed, 1]).integers(0, classes, batch).astype(np.int64)
    return x, target, np.zeros(batch * classes, np.float32), np.zeros(1, np.float32), batch, classes


def work_mean(params):
    """The largest launch: the element-wise ones (or the mean's, when it has more threads)."""
    n, rb = _n(params), int(params["reduce_block"])
    ew = int(ew_threads(n))
    red = int(mean_blocks(n, rb)) * rb
    return (ew, EW_BLOCK) if ew >= red else (red, rb)


def work_ce(params):
    rows_per_block = SM_WARPS * SM_BATCH
    return -(-int(params["batch_size"]) // rows_per_block) * SM_BLOCK, SM_BLOCK


REGRESSION_POINT = {"batch_size": 128, "features": 4096, "reduce_block": 512}
REGRESSION_TEST = {"batch_size": 4, "features": 300, "reduce_block": 64}
HINGE_POINT = {"batch_size": 128, "features": 1, "reduce_block": 128}
HINGE_TEST = {"batch_size": 128, "features": 1, "reduce_block": 128}
#: KL's region at 128 x 4096 traces about 30 M records: its features at 16 x 4096
KL_FEATURE_POINT = {"batch_size": 16, "features": 4096, "reduce_block": 512}
COS_POINT = {"batch_size": 128, "features": 4096, "reduce_block": 512, "mean_block": 128}
COS_TEST = {"batch_size": 4, "features": 300, "reduce_block": 64, "mean_block": 32}
COS_FEATURE_POINT = {"batch_size": 12, "features": 4096, "reduce_block": 512, "mean_block": 128}
CE_POINT = {"batch_size": 4096, "num_classes": 10}
CE_TEST = {"batch_size": 100, "num_classes": 10}


#: PyTorch's kernel launches of each problem (the module docstring)
LAUNCHES = {"94_MSELoss": 3, "96_HuberLoss": 2, "100_HingeLoss": 4, "98_KLDivLoss": 6, "97_CosineSimilarityLoss": 12,
            "95_CrossEntropyLoss": 2}


def _kernel(application, description, cpu, launch, out_index, make_inputs, point, work, test, feature_point=None):
    return MeasuredKernel(source="kernelbench", application=application, kernel="forward", description=description,
                          cpu=cpu, gpu=_port(launch, out_index), make_inputs=make_inputs, points={LABEL: point},
                          work=work, test_point=test, rtol=1e-5, atol=1e-6, separate_launches=True,
                          feature_point=feature_point, launches=LAUNCHES[application])


KERNELS = [
    _kernel("94_MSELoss", "mean((p - t) ** 2) on 128 x 4096: subtraction, square (element-wise), mean (block "
            "partials, last block combines): three launches", mse_loss, _launch_mse, 5, mse_inputs,
            REGRESSION_POINT, work_mean, REGRESSION_TEST),
    _kernel("96_HuberLoss", "smooth_l1_loss (beta 1, mean) on 128 x 4096: element-wise loss, mean: two launches",
            huber_loss, _launch_huber, 4, huber_inputs, REGRESSION_POINT, work_mean, REGRESSION_TEST),
    _kernel("100_HingeLoss", "mean(clamp(1 - p * t, min=0)) on 128 values: multiply, subtract, clamp, mean: "
            "four launches of one block", hinge_loss, _launch_hinge, 6, hinge_inputs, HINGE_POINT, work_mean,
            HINGE_TEST),
    _kernel("98_KLDivLoss", "kl_div(log(p), t, batchmean) on 128 x 4096 softmax rows: log, xlogy, multiply, "
            "subtract (element-wise), sum, scale by 1 / batch: six launches", kl_div_loss, _launch_kl, 8, kl_inputs,
            REGRESSION_POINT, work_mean, REGRESSION_TEST, feature_point=KL_FEATURE_POINT),
    _kernel("97_CosineSimilarityLoss", "mean(1 - cosine_similarity(p, t, dim=1)) on 128 x 4096: two row "
            "norms, clones, clamps, two broadcast divisions, product, row sums, 1 - x, mean: twelve launches",
            cosine_loss, _launch_cos, 14, cos_inputs, COS_POINT, work_cos, COS_TEST,
            feature_point=COS_FEATURE_POINT),
    _kernel("95_CrossEntropyLoss", "cross_entropy on 4096 x 10: warp-per-row log_softmax (16 lanes, two rows a "
            "warp), nll_loss in one 32-thread block: two launches", cross_entropy, _launch_ce, 3, ce_inputs,
            CE_POINT, work_ce, CE_TEST),
]
