"""OpenDwarfs dwt2d (AIWC application ``dwt``): the RGB split and the first forward 5/3 wavelet kernel.

The application (``-l 3``: three levels of the reversible 5/3 transform of JPEG 2000) reads an RGB PPM photo,
splits it into three integer components centred on 0, then transforms each component level by level. AIWC
timed the first invocation of two kernels:

``c_CopySrcToComponents``: one work item per pixel, ``r[i] = src[3 i] - 128`` (and g, b); the global size
is the pixel count rounded up to the 256-item work group (72x54 = 3888 pixels -> 4096 items), the extra
items fail the ``i < pixels`` guard.

``cl_fdwt53Kernel``: one level of the forward 5/3 DWT of one component (the first: the red component at
full size), lifting with C's truncating integer division (predict ``odd -= (left + right) / 2``, then
update ``even += (left + right + 2) / 4``), vertical then horizontal, mirrored (whole-sample symmetric)
at the image borders; the result is stored band by band (LL, HL, LH, HH, each row-major). The host picks a
window width ``WIN_X`` from the image width (192 from 960 pixels, 128 from 480, 64 from 240, else 8),
``WIN_Y = 8``, a number of sliding-window ``steps = ceil(sy / (15 WIN_Y))``, and launches a 2-D NDRange of
``ceil(sx / WIN_X) * WIN_X`` by ``ceil(sy / (WIN_Y steps))`` items in work groups of ``WIN_X`` by 1 (72x54:
9*8 x 7 = 504 items). A work group covers a ``WIN_X``-column strip of ``WIN_Y * steps`` rows; work item
``lid`` owns column ``lid`` and items 0..2 also the group's three boundary columns (``WIN_X``, -2, -1).
The group's local buffer holds an even-column half and an odd-column half (each ``WIN_X / 2 + 2`` columns
by ``WIN_Y + 3`` rows, the odd half after a bank padding). Per window step each item:

1. stores its column's three rows carried over from the previous window and loads ``WIN_Y`` new rows
   (mirroring at the top and, in groups at the bottom, the bottom edge), keeps the last three raw rows for
   the next window, and lifts its column vertically (predict odd rows, update even rows);
2. (barrier) predicts the odd columns of the window's ``WIN_Y`` output rows, the elements strided over
   the group's items;
3. (barrier) updates the even columns likewise;
4. (barrier) writes one output column (items ``< WIN_X / 2`` an even one, the rest an odd one) into its
   two bands, low and high rows alternately, stopping at the image bottom in boundary groups; (barrier).

Before the loop item 0 of the group zeroes the even half of the buffer and sets up the buffer's constants
(a barrier), and every item starts its column loaders and its band writer.

CPU region: the work-group barriers split each window step into four ``prange`` loops over all global work
items (plus one before the window loop), inside a host loop over the window steps; the local buffer is a
``(groups, WIN_X * WIN_Y * 3)`` array indexed by the item's group. Deliberate differences, both forced by
that split: an item's private state that lives across a barrier (loader positions and strides, the three
carried rows of its columns, its writer position) is kept in a per-item array (on the GPU: registers);
the buffer constants item 0 writes into the group's local struct are computed by every item (uniform
values) instead of being read from local memory. The first prange holds both item 0's zeroing and every
item's loader and writer setup: the barrier between them in the original orders nothing the setup touches
(it reads only global memory and private state). The GPU port keeps them as the original: one kernel,
dynamic shared memory of ``WIN_X * WIN_Y * 3`` ints, ``syncthreads`` at the barriers.

Inputs: the original reads a photo (``*-gum.ppm``); the work does not depend on the pixel values (no branch
on data), so ``image`` synthesises a deterministic one: smooth gradients plus PCG64 noise from the seed.

Precision: integer only (the 5/3 wavelet on integer components), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

#: work-group size of c_CopySrcToComponents (the host's THREADS)
THREADS = 256
#: columns on each side of a window that the horizontal lifting needs
BOUNDARY_X = 2
#: local-memory banks the buffer's odd half is padded for
SHM_BANKS = 32
WIN_Y = 8
#: per-item state kept across barriers in the CPU region: two columns of 7 values, then the writer
COL, BND, W_NEXT, W_END, W_L2H, W_H2L, W_OUT_OFFSET = 0, 7, 14, 15, 16, 17, 18
N_STATE = 19

POINTS = {
    "tiny": {"width": 72, "height": 54},
    "small": {"width": 200, "height": 150},
    "medium": {"width": 1152, "height": 864},
    "large": {"width": 3648, "height": 2736},
}


# ---------------------------------------------------------------------------------------------------------
# c_CopySrcToComponents


def copy_src_to_components(src, pixels):
    """CPU region: split interleaved RGB bytes into three int32 components centred on 0.

    Parameters
    ----------
    src : uint8 array (3 * pixels,)
        The image's RGB bytes.
    pixels : int
        Pixels of the image.

    Returns
    -------
    tuple of numpy.ndarray
        ``(r, g, b)``, int32 arrays of ``pixels`` values in -128..127.
    """
    n_items = ((pixels + THREADS - 1) // THREADS) * THREADS
    r = np.empty(pixels, dtype=np.int32)
    g = np.empty(pixels, dtype=np.int32)
    b = np.empty(pixels, dtype=np.int32)
    for i in numba.prange(n_items):
        if i < pixels:
            r[i] = np.int32(src[i * 3]) - 128
            g[i] = np.int32(src[i * 3 + 1]) - 128
            b[i] = np.int32(src[i * 3 + 2]) - 128
    return r, g, b


@cuda.jit
def _copy_dev(r, g, b, src, pixels):
    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    if i < pixels:
        r[i] = numba.int32(src[i * 3]) - 128
        g[i] = numba.int32(src[i * 3 + 1]) - 128
        b[i] = numba.int32(src[i * 3 + 2]) - 128


def _copy_to_device(src, pixels):
    return {"src": cuda.to_device(src), "pixels": int(pixels),
            "out": [cuda.device_array(int(pixels), dtype=np.int32) for _ in range(3)]}


def _copy_launch(s):
    blocks = (s["pixels"] + THREADS - 1) // THREADS
    _copy_dev[blocks, THREADS](*s["out"], s["src"], s["pixels"])


def _copy_from_device(s):
    return tuple(a.copy_to_host() for a in s["out"])


# ---------------------------------------------------------------------------------------------------------
# cl_fdwt53Kernel: helpers shared by the CPU region's phases


def window_width(sx):
    """The host's choice of the window (work-group) width for an image ``sx`` pixels wide."""
    if sx >= 960:
        return 192
    if sx >= 480:
        return 128
    if sx >= 240:
        return 64
    return 8


def fdwt_launch(sx, sy):
    """``(steps, win_x, win_y, groups_x, groups_y)`` of the host's launch for an ``sx`` x ``sy`` component."""
    win_x = window_width(sx)
    steps = -(-sy // (15 * WIN_Y))
    return steps, win_x, WIN_Y, -(-sx // win_x), -(-sy // (WIN_Y * steps))


@numba.njit(cache=True)
def _layout(win_x, win_y):
    """Local buffer layout: (row stride of a half, rows, even-half size, offset of the odd half)."""
    vstride = BOUNDARY_X + win_x // 2
    size_y = win_y + 3
    half = vstride * size_y
    padding = SHM_BANKS - ((half + SHM_BANKS // 2) % SHM_BANKS)
    return vstride, size_y, half, half + padding


@numba.njit(cache=True)
def _tdiv(a, d):
    """C's integer division for ``d > 0``: the quotient truncated toward zero."""
    if a < 0:
        return -((-a) // d)
    return a // d


@numba.njit(cache=True)
def _mirror(d, size):
    if d >= size:
        return 2 * size - 2 - d
    if d < 0:
        return -d
    return d


@numba.njit(cache=True)
def _column_offset(col, odd_offset):
    """Where column ``col`` of the window (-2 .. WIN_X + 1) starts in the buffer: even columns in the first
    half, odd ones in the second."""
    c = col + BOUNDARY_X
    return c // 2 + (c & 1) * odd_offset


@numba.njit(cache=True)
def _item_ids(gid, groups_x, win_x):
    """(local id, group x, group y, flat group index) of global item ``gid`` (x fastest)."""
    row = groups_x * win_x
    gy = gid // row
    gx_item = gid - gy * row
    gx = gx_item // win_x
    return gx_item - gx * win_x, gx, gy, gy * groups_x + gx


@numba.njit(cache=True)
def _checks(group_x, group_y, sx, sy, steps, win_x, win_y):
    """(check loads, check writes) of a group: groups at the bottom check both, at the right writes only."""
    at_right = (group_x + 1) * win_x + 1 >= sx
    at_bottom = (group_y + 1) * win_y * steps + 1 >= sy
    return at_bottom, at_bottom or at_right


@numba.njit(cache=True)
def _loader_start(sx, sy, first_x, first_y, check):
    """(last, end, stride) of a column loader whose first load is row ``first_y`` of column ``first_x``."""
    fx = _mirror(first_x, sx)
    end = sy * sx + fx if check else 0
    return fx + sx * first_y - sx, end, sx


@numba.njit(cache=True)
def _load(inp, last, stride, end, check):
    """Next pixel down a column; at the image bottom (checked loaders) the walk turns back (mirroring)."""
    last += stride
    if check and last == end:
        last -= 2 * stride
        stride = -stride
    return inp[last], last, stride


@numba.njit(cache=True)
def _init_column(st, gid, base, inp, sx, sy, col, first_y, group_x, group_y, win_x, odd_offset, check):
    """Start the loader of window column ``col`` and load its first three rows (mirrored at the top)."""
    st[gid, base] = _column_offset(col, odd_offset)
    first_x = group_x * win_x + col
    if group_y == 0:
        last, end, stride = _loader_start(sx, sy, first_x, first_y, check)
        p2, last, stride = _load(inp, last, stride, end, check)
        p1, last, stride = _load(inp, last, stride, end, check)
        p0, last, stride = _load(inp, last, stride, end, check)
        last, end, stride = _loader_start(sx, sy, first_x, first_y + 1, check)
    else:
        last, end, stride = _loader_start(sx, sy, first_x, first_y - 2, check)
        p0, last, stride = _load(inp, last, stride, end, check)
        p1, last, stride = _load(inp, last, stride, end, check)
        p2, last, stride = _load(inp, last, stride, end, check)
    st[gid, base + 1] = last
    st[gid, base + 2] = end
    st[gid, base + 3] = stride
    st[gid, base + 4] = p0
    st[gid, base + 5] = p1
    st[gid, base + 6] = p2


@numba.njit(cache=True)
def _band_writer(sx, sy, first_x, first_y, check):
    """(next, end, low-to-high stride, high-to-low stride) of the writer of output column ``first_x``."""
    if first_x >= sx:
        return 0, 0, 0, 0
    col_off = first_x // 2
    if first_x & 1:
        vstride = sx // 2
        col_off += ((sx + 1) // 2) * ((sy + 1) // 2)
        low_to_high = (sx * sy) // 2
    else:
        vstride = sx // 2 + (sx & 1)
        low_to_high = ((sy + 1) // 2) * sx
    end = col_off + (sy // 2) * vstride + (sy & 1) * low_to_high if check else 0
    nxt = col_off + (first_y // 2) * vstride + (first_y & 1) * low_to_high
    return nxt, end, low_to_high, vstride - low_to_high


@numba.njit(cache=True)
def _load_and_vertical(inp, shared, grp, st, gid, base, check, win_y, vstride):
    """Phase 1 for one column: fill it in the buffer, carry its last three raw rows, lift it vertically."""
    off = st[gid, base]
    shared[grp, off] = st[gid, base + 4]
    shared[grp, off + vstride] = st[gid, base + 5]
    shared[grp, off + 2 * vstride] = st[gid, base + 6]
    last = st[gid, base + 1]
    stride = st[gid, base + 3]
    end = st[gid, base + 2]
    for i in range(3, 3 + win_y):
        v, last, stride = _load(inp, last, stride, end, check)
        shared[grp, off + i * vstride] = v
    st[gid, base + 1] = last
    st[gid, base + 3] = stride
    st[gid, base + 4] = shared[grp, off + win_y * vstride]
    st[gid, base + 5] = shared[grp, off + (win_y + 1) * vstride]
    st[gid, base + 6] = shared[grp, off + (win_y + 2) * vstride]
    size_y = win_y + 3
    for i in range((size_y - 1) // 2):
        row = 2 * i + 1
        prev = shared[grp, off + (row - 1) * vstride]
        nxt = shared[grp, off + (row + 1) * vstride]
        shared[grp, off + row * vstride] -= _tdiv(prev + nxt, 2)
    if size_y > 3:
        for i in range(size_y // 2 - 1):
            row = 2 + 2 * i
            prev = shared[grp, off + (row - 1) * vstride]
            nxt = shared[grp, off + (row + 1) * vstride]
            shared[grp, off + row * vstride] += _tdiv(prev + nxt + 2, 4)


@numba.njit(cache=True)
def _horizontal_predict(shared, grp, lid, win_x, count, prev_off, center_off, next_off):
    """Phase 2: this item's share (strided by ``win_x``) of the odd-column predictions."""
    final = count % win_x
    final_off = count - final
    for i in range(count // win_x):
        idx = i * win_x + lid
        prev = shared[grp, prev_off + idx]
        nxt = shared[grp, next_off + idx]
        shared[grp, center_off + idx] -= _tdiv(prev + nxt, 2)
    if lid < final:
        idx = final_off + lid
        prev = shared[grp, prev_off + idx]
        nxt = shared[grp, next_off + idx]
        shared[grp, center_off + idx] -= _tdiv(prev + nxt, 2)


@numba.njit(cache=True)
def _horizontal_update(shared, grp, lid, win_x, count, prev_off, center_off, next_off):
    """Phase 3: this item's share of the even-column updates."""
    final = count % win_x
    final_off = count - final
    for i in range(count // win_x):
        idx = i * win_x + lid
        prev = shared[grp, prev_off + idx]
        nxt = shared[grp, next_off + idx]
        shared[grp, center_off + idx] += _tdiv(prev + nxt + 2, 4)
    if lid < final:
        idx = final_off + lid
        prev = shared[grp, prev_off + idx]
        nxt = shared[grp, next_off + idx]
        shared[grp, center_off + idx] += _tdiv(prev + nxt + 2, 4)


@numba.njit(cache=True)
def _write_window(out, shared, grp, st, gid, check, win_y, vstride):
    """Phase 4: the item's output column of this window, low and high rows alternately into two bands."""
    col = st[gid, W_OUT_OFFSET]
    nxt = st[gid, W_NEXT]
    end = st[gid, W_END]
    low_to_high = st[gid, W_L2H]
    high_to_low = st[gid, W_H2L]
    for r in range(2, 2 + win_y, 2):
        if (not check) or nxt != end:
            out[nxt] = shared[grp, col + r * vstride]
            nxt += low_to_high
        if (not check) or nxt != end:
            out[nxt] = shared[grp, col + (r + 1) * vstride]
            nxt += high_to_low
    st[gid, W_NEXT] = nxt


def fdwt53(inp, sx, sy, steps, win_x, win_y):
    """CPU region: one invocation of ``cl_fdwt53Kernel`` (one level of the forward 5/3 DWT of a component).

    Parameters
    ----------
    inp : int32 array (sx * sy,)
        The component, row-major.
    sx, sy : int
        Its width and height.
    steps, win_x, win_y : int
        The host's kernel arguments: window steps per group, window width and height.

    Returns
    -------
    int32 array (sx * sy,)
        The four bands LL, HL, LH, HH one after another, each row-major.
    """
    groups_x = (sx + win_x - 1) // win_x
    groups_y = (sy + win_y * steps - 1) // (win_y * steps)
    n_items = groups_x * win_x * groups_y
    vstride, size_y, half, odd_offset = _layout(win_x, win_y)
    count = win_y * vstride - 1
    # uninitialised, as the original's buffers: every output element is written (even sizes), the local
    # buffer's odd half is read only where it was written (and its unloaded last column feeds only
    # columns that are not output), and each item writes its state before reading it
    out = np.empty(sx * sy, dtype=np.int32)
    shared = np.empty((groups_x * groups_y, win_x * win_y * 3), dtype=np.int32)
    st = np.empty((n_items, N_STATE), dtype=np.int32)
    for gid in numba.prange(n_items):
        lid, gx, gy, grp = _item_ids(gid, groups_x, win_x)
        if lid == 0:
            for i in range(half):
                shared[grp, i] = 0
        check_load, check_write = _checks(gx, gy, sx, sy, steps, win_x, win_y)
        first_y = gy * win_y * steps
        _init_column(st, gid, COL, inp, sx, sy, lid, first_y, gx, gy, win_x, odd_offset, check_load)
        if lid < 3:
            bcol = lid + (win_x if lid == 0 else -3)
            _init_column(st, gid, BND, inp, sx, sy, bcol, first_y, gx, gy, win_x, odd_offset, check_load)
        out_col = lid * 2 - (win_x - 1) * (lid // (win_x // 2))
        st[gid, W_OUT_OFFSET] = _column_offset(out_col, odd_offset)
        nxt, end, low_to_high, high_to_low = _band_writer(sx, sy, gx * win_x + out_col, first_y, check_write)
        st[gid, W_NEXT] = nxt
        st[gid, W_END] = end
        st[gid, W_L2H] = low_to_high
        st[gid, W_H2L] = high_to_low
    for w in range(steps):
        for gid in numba.prange(n_items):
            lid, gx, gy, grp = _item_ids(gid, groups_x, win_x)
            check_load, check_write = _checks(gx, gy, sx, sy, steps, win_x, win_y)
            _load_and_vertical(inp, shared, grp, st, gid, COL, check_load, win_y, vstride)
            if lid < 3:
                _load_and_vertical(inp, shared, grp, st, gid, BND, check_load, win_y, vstride)
        for gid in numba.prange(n_items):
            lid, gx, gy, grp = _item_ids(gid, groups_x, win_x)
            first = 2 * vstride
            _horizontal_predict(shared, grp, lid, win_x, count, first, first + odd_offset, first + 1)
        for gid in numba.prange(n_items):
            lid, gx, gy, grp = _item_ids(gid, groups_x, win_x)
            first = 2 * vstride + odd_offset
            _horizontal_update(shared, grp, lid, win_x, count, first, 2 * vstride + 1, first + 1)
        for gid in numba.prange(n_items):
            lid, gx, gy, grp = _item_ids(gid, groups_x, win_x)
            check_load, check_write = _checks(gx, gy, sx, sy, steps, win_x, win_y)
            _write_window(out, shared, grp, st, gid, check_write, win_y, vstride)
    return out


# ---------------------------------------------------------------------------------------------------------
# cl_fdwt53Kernel: GPU port (private state in registers, the buffer in dynamic shared memory)


@cuda.jit(device=True)
def _tdiv_dev(a, d):
    if a < 0:
        return -((-a) // d)
    return a // d


@cuda.jit(device=True)
def _mirror_dev(d, size):
    if d >= size:
        return 2 * size - 2 - d
    if d < 0:
        return -d
    return d


@cuda.jit(device=True)
def _column_offset_dev(col, odd_offset):
    c = col + BOUNDARY_X
    return c // 2 + (c & 1) * odd_offset


@cuda.jit(device=True)
def _loader_start_dev(sx, sy, first_x, first_y, check):
    fx = _mirror_dev(first_x, sx)
    end = sy * sx + fx if check else 0
    return fx + sx * first_y - sx, end, sx


@cuda.jit(device=True)
def _load_dev(inp, last, stride, end, check):
    last += stride
    if check and last == end:
        last -= 2 * stride
        stride = -stride
    return inp[last], last, stride


@cuda.jit(device=True)
def _init_column_dev(inp, sx, sy, col, first_y, group_x, group_y, win_x, odd_offset, check):
    first_x = group_x * win_x + col
    if group_y == 0:
        last, end, stride = _loader_start_dev(sx, sy, first_x, first_y, check)
        p2, last, stride = _load_dev(inp, last, stride, end, check)
        p1, last, stride = _load_dev(inp, last, stride, end, check)
        p0, last, stride = _load_dev(inp, last, stride, end, check)
        last, end, stride = _loader_start_dev(sx, sy, first_x, first_y + 1, check)
    else:
        last, end, stride = _loader_start_dev(sx, sy, first_x, first_y - 2, check)
        p0, last, stride = _load_dev(inp, last, stride, end, check)
        p1, last, stride = _load_dev(inp, last, stride, end, check)
        p2, last, stride = _load_dev(inp, last, stride, end, check)
    return _column_offset_dev(col, odd_offset), last, end, stride, p0, p1, p2


@cuda.jit(device=True)
def _band_writer_dev(sx, sy, first_x, first_y, check):
    if first_x >= sx:
        return 0, 0, 0, 0
    col_off = first_x // 2
    if first_x & 1:
        vstride = sx // 2
        col_off += ((sx + 1) // 2) * ((sy + 1) // 2)
        low_to_high = (sx * sy) // 2
    else:
        vstride = sx // 2 + (sx & 1)
        low_to_high = ((sy + 1) // 2) * sx
    end = col_off + (sy // 2) * vstride + (sy & 1) * low_to_high if check else 0
    nxt = col_off + (first_y // 2) * vstride + (first_y & 1) * low_to_high
    return nxt, end, low_to_high, vstride - low_to_high


@cuda.jit(device=True)
def _load_and_vertical_dev(inp, buf, off, last, end, stride, p0, p1, p2, check, win_y, vstride):
    buf[off] = p0
    buf[off + vstride] = p1
    buf[off + 2 * vstride] = p2
    for i in range(3, 3 + win_y):
        v, last, stride = _load_dev(inp, last, stride, end, check)
        buf[off + i * vstride] = v
    p0 = buf[off + win_y * vstride]
    p1 = buf[off + (win_y + 1) * vstride]
    p2 = buf[off + (win_y + 2) * vstride]
    size_y = win_y + 3
    for i in range((size_y - 1) // 2):
        row = 2 * i + 1
        prev = buf[off + (row - 1) * vstride]
        nxt = buf[off + (row + 1) * vstride]
        buf[off + row * vstride] -= _tdiv_dev(prev + nxt, 2)
    if size_y > 3:
        for i in range(size_y // 2 - 1):
            row = 2 + 2 * i
            prev = buf[off + (row - 1) * vstride]
            nxt = buf[off + (row + 1) * vstride]
            buf[off + row * vstride] += _tdiv_dev(prev + nxt + 2, 4)
    return last, stride, p0, p1, p2


@cuda.jit(device=True)
def _lift_dev(buf, idx, prev_off, center_off, next_off, predict):
    prev = buf[prev_off + idx]
    nxt = buf[next_off + idx]
    if predict:
        buf[center_off + idx] -= _tdiv_dev(prev + nxt, 2)
    else:
        buf[center_off + idx] += _tdiv_dev(prev + nxt + 2, 4)


@cuda.jit(device=True)
def _horizontal_dev(buf, lid, win_x, count, prev_off, center_off, next_off, predict):
    final = count % win_x
    for i in range(count // win_x):
        _lift_dev(buf, i * win_x + lid, prev_off, center_off, next_off, predict)
    if lid < final:
        _lift_dev(buf, count - final + lid, prev_off, center_off, next_off, predict)


@cuda.jit
def _fdwt53_dev(inp, out, sx, sy, steps, win_x, win_y):
    buf = cuda.shared.array(0, dtype=numba.int32)
    lid = cuda.threadIdx.x
    gx = cuda.blockIdx.x
    gy = cuda.blockIdx.y
    vstride = BOUNDARY_X + win_x // 2
    half = vstride * (win_y + 3)
    odd_offset = half + SHM_BANKS - ((half + SHM_BANKS // 2) % SHM_BANKS)
    if lid == 0:
        for i in range(half):
            buf[i] = 0
    cuda.syncthreads()
    at_right = (gx + 1) * win_x + 1 >= sx
    at_bottom = (gy + 1) * win_y * steps + 1 >= sy
    check_load = at_bottom
    check_write = at_bottom or at_right
    first_y = gy * win_y * steps
    c_off, c_last, c_end, c_stride, c0, c1, c2 = _init_column_dev(
        inp, sx, sy, lid, first_y, gx, gy, win_x, odd_offset, check_load)
    b_off, b_last, b_end, b_stride, b0, b1, b2 = 0, 0, 0, 0, 0, 0, 0
    if lid < 3:
        bcol = lid + (win_x if lid == 0 else -3)
        b_off, b_last, b_end, b_stride, b0, b1, b2 = _init_column_dev(
            inp, sx, sy, bcol, first_y, gx, gy, win_x, odd_offset, check_load)
    out_col = lid * 2 - (win_x - 1) * (lid // (win_x // 2))
    o_off = _column_offset_dev(out_col, odd_offset)
    nxt, end, low_to_high, high_to_low = _band_writer_dev(sx, sy, gx * win_x + out_col, first_y, check_write)
    count = win_y * vstride - 1
    for w in range(steps):
        c_last, c_stride, c0, c1, c2 = _load_and_vertical_dev(
            inp, buf, c_off, c_last, c_end, c_stride, c0, c1, c2, check_load, win_y, vstride)
        if lid < 3:
            b_last, b_stride, b0, b1, b2 = _load_and_vertical_dev(
                inp, buf, b_off, b_last, b_end, b_stride, b0, b1, b2, check_load, win_y, vstride)
        cuda.syncthreads()
        first = 2 * vstride
        _horizontal_dev(buf, lid, win_x, count, first, first + odd_offset, first + 1, True)
        cuda.syncthreads()
        _horizontal_dev(buf, lid, win_x, count, first + odd_offset, first + 1, first + odd_offset + 1, False)
        cuda.syncthreads()
        for r in range(2, 2 + win_y, 2):
            if (not check_write) or nxt != end:
                out[nxt] = buf[o_off + r * vstride]
                nxt += low_to_high
            if (not check_write) or nxt != end:
                out[nxt] = buf[o_off + (r + 1) * vstride]
                nxt += high_to_low
        cuda.syncthreads()


def _fdwt_to_device(inp, sx, sy, steps, win_x, win_y):
    return {"inp": cuda.to_device(inp), "out": cuda.device_array(sx * sy, dtype=np.int32),
            "args": (int(sx), int(sy), int(steps), int(win_x), int(win_y))}


def _fdwt_launch(s):
    sx, sy, steps, win_x, win_y = s["args"]
    grid = ((sx + win_x - 1) // win_x, (sy + win_y * steps - 1) // (win_y * steps))
    _fdwt53_dev[grid, (win_x, 1), 0, win_x * win_y * 3 * 4](s["inp"], s["out"], sx, sy, steps, win_x, win_y)


def _fdwt_from_device(s):
    return s["out"].copy_to_host()


# ---------------------------------------------------------------------------------------------------------
# inputs and geometry


def image(width, height, seed):
    """A deterministic stand-in for the photo: (height, width, 3) uint8, gradients plus noise."""
    rng = np.random.default_rng(int(seed))
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([255.0 * x / max(width - 1, 1), 255.0 * y / max(height - 1, 1),
                     127.5 + 100.0 * np.sin((x + y) / 7.0)], axis=-1)
    noisy = base + rng.normal(0.0, 12.0, size=base.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)


def make_inputs_copy(params, seed):
    """``(src, pixels)``: the image's interleaved RGB bytes, as the PPM loader hands them to the kernel."""
    w, h = int(params["width"]), int(params["height"])
    return image(w, h, seed).reshape(-1), w * h


def make_inputs_fdwt(params, seed):
    """``(component, sx, sy, steps, win_x, win_y)``: the red component (the split done with plain NumPy)
    and the host's kernel arguments for the first level."""
    w, h = int(params["width"]), int(params["height"])
    red = image(w, h, seed)[:, :, 0].reshape(-1).astype(np.int32) - 128
    steps, win_x, win_y, _, _ = fdwt_launch(w, h)
    return red, w, h, steps, win_x, win_y


def work_copy(params):
    """(global work items, local size) of c_CopySrcToComponents: pixels rounded up to 256."""
    pixels = int(params["width"]) * int(params["height"])
    return -(-pixels // THREADS) * THREADS, THREADS


def work_fdwt(params):
    """(global work items, local size) of the first cl_fdwt53Kernel launch."""
    steps, win_x, win_y, groups_x, groups_y = fdwt_launch(int(params["width"]), int(params["height"]))
    return groups_x * win_x * groups_y, win_x


KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="dwt",
        kernel="c_CopySrcToComponents",
        description="split interleaved RGB bytes into three int32 components minus 128, one item per pixel",
        cpu=copy_src_to_components,
        gpu=GpuPort(_copy_to_device, _copy_launch, _copy_from_device),
        make_inputs=make_inputs_copy,
        points=POINTS,
        work=work_copy,
        test_point={"width": 18, "height": 12},
        rtol=0.0,
        atol=0.0,
    ),
    MeasuredKernel(
        source="aiwc",
        application="dwt",
        kernel="cl_fdwt53Kernel",
        description="one level of the forward 5/3 integer DWT of a component: sliding windows in local "
        "memory, vertical then horizontal lifting, output band by band",
        cpu=fdwt53,
        gpu=GpuPort(_fdwt_to_device, _fdwt_launch, _fdwt_from_device),
        make_inputs=make_inputs_fdwt,
        points=POINTS,
        work=work_fdwt,
        test_point={"width": 24, "height": 20},
        rtol=0.0,
        atol=0.0,
    ),
]
