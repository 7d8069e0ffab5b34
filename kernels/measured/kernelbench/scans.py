"""KernelBench level 1, scans along the last dim of ``128 x 4000`` (``89_cumsum``, ``90_cumprod``,
``91_cumsum_reverse``, ``92_cumsum_exclusive``, ``93_masked_cumsum``), as PyTorch eager runs them.

**The scan kernel.** ``torch.cumsum``/``torch.cumprod`` over the innermost dim of a 2-D CUDA tensor run, as
far as I know ATen's ``ScanUtils.cuh``, ``tensor_kernel_scan_innermost_dim``: blocks of ``16 x 32`` threads
(512), each ``threadIdx.y`` owning one row (32 rows a block, ``ceil(rows / 32)`` blocks: 4 blocks, 2048
threads for 128 rows), its 16 ``threadIdx.x`` threads scanning the row in chunks of 32 elements with a
shared-memory buffer of 32 values per row. Per chunk: every thread loads two elements (columns
``chunk + tx`` and ``chunk + 16 + tx``; the scan's identity past the row's end) into the buffer, thread
``tx == 0`` adds the running total of the earlier chunks to the first; 5 steps of a Sklansky scan (step
``s``: ``a = (tx / 2^s) 2^(s+1) + 2^s - 1``, ``buf[a + tx % 2^s + 1] op= buf[a]``), each followed by a
barrier; every thread writes its two elements back and reads the chunk's last value as the new running
total. This is what the port does: one phase (a parallel loop over all 2048 threads) per load, per
Sklansky step and per write-back, 125 chunks a row. The running total lives in a register in the original,
here in an array with one slot per thread (a store and, for ``tx == 0``, a load per chunk that the original
does not make). Rows beyond the last (``row < rows`` false) do nothing but read the running total.

**The launches of each problem** (``separate_launches=True`` where more than one; the region holds them in
order as successive parallel loops):

* ``89_cumsum``: the scan (sum, identity 0). One launch.
* ``90_cumprod``: the scan (product, identity 1). One launch. Products of thousands of standard normals
  underflow to 0 within a few hundred elements, in PyTorch as here.
* ``91_cumsum_reverse``: ``cumsum(x.flip(1), 1).flip(1)``: a flip (copy kernel), the scan, a flip: three
  launches.
* ``92_cumsum_exclusive``: ``cumsum(cat((zeros_like(x[:, :1]), x), dim=1)[:-1], dim=1)``: a fill of the 128
  zeros, the concatenation into ``128 x 4001``, and the scan. The problem's ``[:-1]`` slices dim 0, not the
  last column, so the scan runs on the first 127 rows of ``128 x 4001`` (a view; the output is
  ``127 x 4001``): kept, since that is what was timed. Three launches.
* ``93_masked_cumsum``: ``cumsum(x * mask, 1)``: the multiplication (a bool mask promoted to float in the
  kernel, one byte a mask element), then the scan. Two launches.

Element-wise launches (flip, fill, cat, mul): PyTorch's element-wise kernels run 128-thread blocks of 4
elements a thread; here thread ``t`` of block ``b`` handles elements ``512 b + t + 128 j``, ``j = 0..3``
(written out, unrolled), each element's source index computed from its own (the flip's reversed column, the
cat's shifted column). PyTorch's ``cat`` has a kernel of its own (``CatArrayBatchedCopy``, a grid-stride copy
per input) whose geometry is not modelled: here one element-wise launch over the output. The fill is a
launch of one block. ``work``: the largest launch: the scan's 2048 threads (blocks of 512) for
``89``/``90``, the element-wise launch's 128000 threads (blocks of 128) for the others.

Inputs: standard normal float32 from NumPy's generator (not torch's); the mask of ``93`` uniform bits.
Precision: single (FP32) throughout.

Size: a scan region traces about 50-70 M records at the measured point, so each port has a feature point
(``128 x 256``, same blocks, 8 chunks a row: 3-5 M records).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

LABEL = "before_2025-07"
TX = 16  # threads along a row (num_threads_x: rows longer than 64)
TY = 32  # rows a block (num_threads_y = 512 / 16)
LOG_TX = 4
SCAN_BLOCK = TX * TY
CHUNK = 2 * TX  # elements of a row scanned per step
EW_BLOCK = 128
EW_ITEMS = 4


@numba.njit
def scan_threads(rows):
    """Threads of the scan launch: ``ceil(rows / 32)`` blocks of 512."""
    return ((rows + TY - 1) // TY) * SCAN_BLOCK


@numba.njit
def ew_threads(n):
    """Threads of an element-wise launch over ``n`` elements (128-thread blocks, 4 elements a thread)."""
    per_block = EW_BLOCK * EW_ITEMS
    return ((n + per_block - 1) // per_block) * EW_BLOCK


@numba.njit
def scan_sum_launch(src, tgt, rows, row_size):
    """The scan kernel with ``+`` (identity 0) over the first ``rows`` rows of ``src`` (flat, ``row_size`` a
    row) into ``tgt``: one parallel loop per phase (load, 5 Sklansky steps, write-back) and chunk."""
    n_blocks = (rows + TY - 1) // TY
    n_threads = n_blocks * SCAN_BLOCK
    buf = np.empty((n_blocks, TY, CHUNK), dtype=np.float32)  # shared memory: 32 values per row of a block
    total = np.zeros(n_threads, dtype=np.float32)  # each thread's running-total register
    for block_col in range(0, row_size, CHUNK):
        for gid in numba.prange(n_threads):
            b = gid // SCAN_BLOCK
            t = gid - b * SCAN_BLOCK
            ty = t // TX
            tx = t - ty * TX
            row = b * TY + ty
            if row < rows:
                col1 = block_col + tx
                col2 = block_col + TX + tx
                if col1 < row_size:
                    buf[b, ty, tx] = src[row * row_size + col1]
                else:
                    buf[b, ty, tx] = np.float32(0.0)
                if col2 < row_size:
                    buf[b, ty, TX + tx] = src[row * row_size + col2]
                else:
                    buf[b, ty, TX + tx] = np.float32(0.0)
                if tx == 0:
                    buf[b, ty, 0] = buf[b, ty, 0] + total[gid]
        for s in range(LOG_TX + 1):
            for gid in numba.prange(n_threads):
                b = gid // SCAN_BLOCK
                t = gid - b * SCAN_BLOCK
                ty = t // TX
                tx = t - ty * TX
                if b * TY + ty < rows:
                    a = (tx // (1 << s)) * (2 << s) + (1 << s) - 1
                    ti = a + (tx % (1 << s)) + 1
                    buf[b, ty, ti] = buf[b, ty, ti] + buf[b, ty, a]
        for gid in numba.prange(n_threads):
            b = gid // SCAN_BLOCK
            t = gid - b * SCAN_BLOCK
            ty = t // TX
            tx = t - ty * TX
            row = b * TY + ty
            if row < rows:
                col1 = block_col + tx
                col2 = block_col + TX + tx
                if col1 < row_size:
                    tgt[row * row_size + col1] = buf[b, ty, tx]
                if col2 < row_size:
                    tgt[row * row_size + col2] = buf[b, ty, TX + tx]
            total[gid] = buf[b, ty, CHUNK - 1]
    return tgt


@numba.njit
def scan_prod_launch(src, tgt, rows, row_size):
    """The scan kernel with ``*`` (identity 1); otherwise :func:`scan_sum_launch`."""
    n_blocks = (rows + TY - 1) // TY
    n_threads = n_blocks * SCAN_BLOCK
    buf = np.empty((n_blocks, TY, CHUNK), dtype=np.float32)
    total = np.ones(n_threads, dtype=np.float32)
    for block_col in range(0, row_size, CHUNK):
        for gid in numba.prange(n_threads):
            b = gid // SCAN_BLOCK
            t = gid - b * SCAN_BLOCK
            ty = t // TX
            tx = t - ty * TX
            row = b * TY + ty
            if row < rows:
                col1 = block_col + tx
                col2 = block_col + TX + tx
                if col1 < row_size:
                    buf[b, ty, tx] = src[row * row_size + col1]
                else:
                    buf[b, ty, tx] = np.float32(1.0)
                if col2 < row_size:
                    buf[b, ty, TX + tx] = src[row * row_size + col2]
                else:
                    buf[b, ty, TX + tx] = np.float32(1.0)
                if tx == 0:
                    buf[b, ty, 0] = buf[b, ty, 0] * total[gid]
        for s in range(LOG_TX + 1):
            for gid in numba.prange(n_threads):
                b = gid // SCAN_BLOCK
                t = gid - b * SCAN_BLOCK
                ty = t // TX
                tx = t - ty * TX
                if b * TY + ty < rows:
                    a = (tx // (1 << s)) * (2 << s) + (1 << s) - 1
                    ti = a + (tx % (1 << s)) + 1
                    buf[b, ty, ti] = buf[b, ty, ti] * buf[b, ty, a]
        for gid in numba.prange(n_threads):
            b = gid // SCAN_BLOCK
            t = gid - b * SCAN_BLOCK
            ty = t // TX
            tx = t - ty * TX
            row = b * TY + ty
            if row < rows:
                col1 = block_col + tx
                col2 = block_col + TX + tx
                if col1 < row_size:
                    tgt[row * row_size + col1] = buf[b, ty, tx]
                if col2 < row_size:
                    tgt[row * row_size + col2] = buf[b, ty, TX + tx]
            total[gid] = buf[b, ty, CHUNK - 1]
    return tgt


@numba.njit
def flip_launch(src, dst, rows, row_size):
    """Element-wise launch: ``dst[r, c] = src[r, row_size - 1 - c]``."""
    n = rows * row_size
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            r = e // row_size
            dst[e] = src[r * row_size + (row_size - 1 - (e - r * row_size))]
        e = base + EW_BLOCK
        if e < n:
            r = e // row_size
            dst[e] = src[r * row_size + (row_size - 1 - (e - r * row_size))]
        e = base + 2 * EW_BLOCK
        if e < n:
            r = e // row_size
            dst[e] = src[r * row_size + (row_size - 1 - (e - r * row_size))]
        e = base + 3 * EW_BLOCK
        if e < n:
            r = e // row_size
            dst[e] = src[r * row_size + (row_size - 1 - (e - r * row_size))]
    return dst


# ============================================================================================== regions


def cumsum(x, out, rows, row_size):
    """``torch.cumsum(x, 1)``: the scan launch. ``x``, ``out``: float32 flat ``rows * row_size``."""
    scan_sum_launch(x, out, rows, row_size)
    return out


def cumprod(x, out, rows, row_size):
    """``torch.cumprod(x, 1)``: the scan launch with products."""
    scan_prod_launch(x, out, rows, row_size)
    return out


def cumsum_reverse(x, flipped, scanned, out, rows, row_size):
    """``cumsum(x.flip(1), 1).flip(1)``: flip, scan, flip (``flipped``, ``scanned``: temporaries)."""
    flip_launch(x, flipped, rows, row_size)
    scan_sum_launch(flipped, scanned, rows, row_size)
    flip_launch(scanned, out, rows, row_size)
    return out


def cumsum_exclusive(x, zeros, cat, out, rows, row_size):
    """``cumsum(cat((zeros_like(x[:, :1]), x), 1)[:-1], 1)``: fill ``zeros`` (``rows``), concatenate into
    ``cat`` (``rows x (row_size + 1)``, flat), scan its first ``rows - 1`` rows into ``out``."""
    width = row_size + 1
    # launch 1: zeros_like(...) -> fill
    for gid in numba.prange(ew_threads(rows)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < rows:
            zeros[base] = np.float32(0.0)
        if base + EW_BLOCK < rows:
            zeros[base + EW_BLOCK] = np.float32(0.0)
        if base + 2 * EW_BLOCK < rows:
            zeros[base + 2 * EW_BLOCK] = np.float32(0.0)
        if base + 3 * EW_BLOCK < rows:
            zeros[base + 3 * EW_BLOCK] = np.float32(0.0)
    # launch 2: cat along dim 1, one element-wise launch over the output
    n = rows * width
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        e = base
        if e < n:
            r = e // width
            c = e - r * width
            cat[e] = zeros[r] if c == 0 else x[r * row_size + c - 1]
        e = base + EW_BLOCK
        if e < n:
            r = e // width
            c = e - r * width
            cat[e] = zeros[r] if c == 0 else x[r * row_size + c - 1]
        e = base + 2 * EW_BLOCK
        if e < n:
            r = e // width
            c = e - r * width
            cat[e] = zeros[r] if c == 0 else x[r * row_size + c - 1]
        e = base + 3 * EW_BLOCK
        if e < n:
            r = e // width
            c = e - r * width
            cat[e] = zeros[r] if c == 0 else x[r * row_size + c - 1]
    # launch 3: the scan of the first rows - 1 rows ([:-1] on dim 0)
    scan_sum_launch(cat, out, rows - 1, width)
    return out


def masked_cumsum(x, mask, masked, out, rows, row_size):
    """``cumsum(x * mask, 1)``: the multiplication (bool mask as float), then the scan."""
    n = rows * row_size
    for gid in numba.prange(ew_threads(n)):
        blk = gid // EW_BLOCK
        base = blk * (EW_BLOCK * EW_ITEMS) + (gid - blk * EW_BLOCK)
        if base < n:
            masked[base] = x[base] * np.float32(mask[base])
        if base + EW_BLOCK < n:
            masked[base + EW_BLOCK] = x[base + EW_BLOCK] * np.float32(mask[base + EW_BLOCK])
        if base + 2 * EW_BLOCK < n:
            masked[base + 2 * EW_BLOCK] = x[base + 2 * EW_BLOCK] * np.float32(mask[base + 2 * EW_BLOCK])
        if base + 3 * EW_BLOCK < n:
            masked[base + 3 * EW_BLOCK] = x[base + 3 * EW_BLOCK] * np.float32(mask[base + 3 * EW_BLOCK])
    scan_sum_launch(masked, out, rows, row_size)
    return out


# ============================================================================================== GPU port


@cuda.jit
def _scan_gpu(src, tgt, rows, row_size, product):
    buf = cuda.shared.array((TY, CHUNK), dtype=numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.x * TY + ty
    init = numba.float32(1.0) if product else numba.float32(0.0)
    total = init
    for block_col in range(0, row_size, CHUNK):
        col1 = block_col + tx
        col2 = block_col + TX + tx
        if row < rows:
            buf[ty, tx] = src[row * row_size + col1] if col1 < row_size else init
            buf[ty, TX + tx] = src[row * row_size + col2] if col2 < row_size else init
            if tx == 0:
                buf[ty, 0] = buf[ty, 0] * total if product else buf[ty, 0] + total
        cuda.syncthreads()
        for s in range(LOG_TX + 1):
            if row < rows:
                a = (tx // (1 << s)) * (2 << s) + (1 << s) - 1
                ti = a + (tx % (1 << s)) + 1
                buf[ty, ti] = buf[ty, ti] * buf[ty, a] if product else buf[ty, ti] + buf[ty, a]
            cuda.syncthreads()
        if row < rows:
            if col1 < row_size:
                tgt[row * row_size + col1] = buf[ty, tx]
            if col2 < row_size:
                tgt[row * row_size + col2] = buf[ty, TX + tx]
        total = buf[ty, CHUNK - 1]
        cuda.syncthreads()


@cuda.jit
def _ew_gpu(kind, a, m, dst, rows, row_size):
    """Element-wise launches: kind 0 flip, 1 fill zeros (``rows`` elements), 2 cat, 3 mask multiply."""
    base = cuda.blockIdx.x * (EW_BLOCK * EW_ITEMS) + cuda.threadIdx.x
    width = row_size + 1
    for j in range(EW_ITEMS):
        e = base + j * EW_BLOCK
        if kind == 0 and e < rows * row_size:
            r = e // row_size
            dst[e] = a[r * row_size + (row_size - 1 - (e - r * row_size))]
        elif kind == 1 and e < rows:
            dst[e] = 0.0
        elif kind == 2 and e < rows * width:
            r = e // width
            c = e - r * width
            dst[e] = m[r] if c == 0 else a[r * row_size + c - 1]
        elif kind == 3 and e < rows * row_size:
            dst[e] = a[e] * numba.float32(m[e])


def _to_device(*args):
    return [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]


def _scan(src, tgt, rows, row_size, product=False):
    _scan_gpu[(rows + TY - 1) // TY, (TX, TY)](src, tgt, rows, row_size, product)


def _ew(kind, a, m, dst, rows, row_size, n):
    _ew_gpu[(n + EW_BLOCK * EW_ITEMS - 1) // (EW_BLOCK * EW_ITEMS), EW_BLOCK](kind, a, m, dst, rows, row_size)


def _launch_cumsum(s):
    _scan(s[0], s[1], s[2], s[3])


def _launch_cumprod(s):
    _scan(s[0], s[1], s[2], s[3], product=True)


def _launch_reverse(s):
    x, flipped, scanned, out, rows, row_size = s
    _ew(0, x, x, flipped, rows, row_size, rows * row_size)
    _scan(flipped, scanned, rows, row_size)
    _ew(0, scanned, scanned, out, rows, row_size, rows * row_size)


def _launch_exclusive(s):
    x, zeros, cat, out, rows, row_size = s
    _ew(1, x, x, zeros, rows, row_size, rows)
    _ew(2, x, zeros, cat, rows, row_size, rows * (row_size + 1))
    _scan(cat, out, rows - 1, row_size + 1)


def _launch_masked(s):
    x, mask, masked, out, rows, row_size = s
    _ew(3, x, mask, masked, rows, row_size, rows * row_size)
    _scan(masked, out, rows, row_size)


def _port(launch, out_index):
    return GpuPort(_to_device, launch, lambda s: s[out_index].copy_to_host())


# ============================================================================================== inputs


def _x(params, seed):
    rows, length = int(params["batch_size"]), int(params["length"])
    return np.random.default_rng([seed, 0]).standard_normal(rows * length).astype(np.float32), rows, length


def inputs_scan(params, seed):
    x, rows, length = _x(params, seed)
    return x, np.zeros_like(x), rows, length


def inputs_reverse(params, seed):
    x, rows, length = _x(params, seed)
    return x, np.zeros_like(x), np.zeros_like(x), np.zeros_like(x), rows, length


def inputs_exclusive(params, seed):
    x, rows, length = _x(params, seed)
    return (x, np.ones(rows, dtype=np.float32), np.zeros(rows * (length + 1), dtype=np.float32),
            np.zeros((rows - 1) * (length + 1), dtype=np.float32), rows, length)


def inputs_masked(params, seed):
    x, rows, length = _x(params, seed)
    mask = np.random.default_rng([seed, 1]).integers(0, 2, rows * length).astype(np.bool_)
    return x, mask, np.zeros_like(x), np.zeros_like(x), rows, length


def work_scan(params):
    return int(scan_threads(int(params["batch_size"]))), SCAN_BLOCK


def _work_ew(n_ew, rows):
    return max(int(ew_threads(n_ew)), int(scan_threads(rows))), EW_BLOCK


def work_reverse(params):
    rows, length = int(params["batch_size"]), int(params["length"])
    return _work_ew(rows * length, rows)


def work_exclusive(params):
    rows, length = int(params["batch_size"]), int(params["length"])
    return _work_ew(rows * (length + 1), rows - 1)


POINT = {"batch_size": 128, "length": 4000}
FEATURE_POINT = {"batch_size": 128, "length": 256}
TEST_POINT = {"batch_size": 20, "length": 70}


#: PyTorch's kernel launches of the problems of several (the module docstring)
LAUNCHES = {"91_cumsum_reverse": 3, "92_cumsum_exclusive": 3, "93_masked_cumsum": 2}


def _kernel(application, description, cpu, launch, out_index, make_inputs, work, separate, rtol=1e-5, atol=1e-5):
    return MeasuredKernel(source="kernelbench", application=application, kernel="forward", description=description,
                          cpu=cpu, gpu=_port(launch, out_index), make_inputs=make_inputs, points={LABEL: POINT},
                          work=work, test_point=TEST_POINT, rtol=rtol, atol=atol, separate_launches=separate,
                          feature_point=FEATURE_POINT, launches=LAUNCHES.get(application))


KERNELS = [
    _kernel("89_cumsum", "torch.cumsum over the last dim of 128 x 4000: PyTorch's innermost-dim scan, 16 x 32 "
            "blocks, a 32-element Sklansky scan per row and chunk", cumsum, _launch_cumsum, 1, inputs_scan,
            work_scan, False),
    _kernel("90_cumprod", "torch.cumprod over the last dim of 128 x 4000: the innermost-dim scan with products",
            cumprod, _launch_cumprod, 1, inputs_scan, work_scan, False),
    _kernel("91_cumsum_reverse", "cumsum of the flipped rows of 128 x 4000, flipped back: flip, scan, flip "
            "(three launches)", cumsum_reverse, _launch_reverse, 3, inputs_reverse, work_reverse, True),
    _kernel("92_cumsum_exclusive", "cumsum of cat(zeros, x)[:-1] (128 x 4000; the slice drops a row): fill, "
            "cat, scan (three launches)", cumsum_exclusive, _launch_exclusive, 3, inputs_exclusive,
            work_exclusive, True),
    _kernel("93_masked_cumsum", "cumsum of x * mask over the last dim of 128 x 4000: multiply, scan (two "
            "launches)", masked_cumsum, _launch_masked, 3, inputs_masked, work_reverse, True),
]
