"""HeCBench ``merge`` (GPU Merge Path, Green, McColl and Bader): the kernels ``workloadDiagonals`` and
``mergeSinglePath``, as gpuFLOPBench timed them on an RTX 3080.

Merges two sorted arrays ``A`` and ``B`` of ``size`` keys into ``C``. Merge Path views the merge as a path
through the ``|A| x |B|`` grid; the cross diagonal ``d`` meets it at ``(x, d - x)`` where the first ``x``
keys of A and the first ``d - x`` of B are the first ``d`` of C (A first on ties).

``workloadDiagonals`` (``blocks`` blocks of 32): block ``b`` takes diagonal ``d = b (|A| + |B|) / blocks``
and searches it 32 points at a time: each thread evaluates ``A[x - 1] <= B[y]`` at its point of the window
(outside the grid: 0 beyond A or before B, 1 beyond B or before A) into shared memory; the thread whose
flag differs from its left neighbour's has found the crossing and writes ``x`` and ``y`` to
``diagonal_path_intersections`` (``dpi[b]``, ``dpi[b + blocks + 1]``); thread 16 moves the window's top or
bottom to its own point, halving the window (three barriers per round; the loop runs until ``found``, a
shared flag). Thread 0 of block 0 writes the end points (0, 0) and (|A|, |B|).

``mergeSinglePath`` (``blocks`` blocks of 128): block ``b`` merges from its diagonal's crossing to the next
one in windows of ``K = 512`` outputs: the 128 threads stage 512 keys of A and of B from the window's start
(sentinels 0 and the type's maximum at both ends of the shared arrays), then each thread binary-searches
its own diagonal ``4 t + 2`` of the window for the path and merges four keys into ``C``; thread 127 moves the
window's start along the path. The last window of a block can write past the block's stop (the values are
those the next block writes).

Launch: 112 blocks of 32, then 112 of 128 (``blocks`` is the program's constant 112). The program runs, for
uint32, float, uint64 and double, a warm-up merge and a timed one; the data's rows are the first launches:
the uint32 warm-up's first run, size = 100,000 (the program's first argument). Inputs: ``rand64<uint32_t>``
draws each key as one glibc ``rand()`` (never seeded: seed 1; here ``srand(1 + seed)``), redrawing 0 and
``0xFFFFFFFF``, alternately for A and B, then pads each with 1024 keys ``0xFFFFFFFF`` and sorts it: the
original's keys at seed 0. ``mergeSinglePath`` reads the intersections ``workloadDiagonals`` wrote; here
``make_inputs`` computes them with a stable NumPy sort (A first on ties). ``C`` is uninitialised device
memory in the original: zeros here.

Regions: each barrier phase is a ``prange`` over all the launch's threads; the shared variables are arrays
with one entry (or tile) per block, a thread's registers that live across a barrier are arrays with one
entry per thread. The data-dependent loops (``while (!found)``, the window loop) are host loops around the
phases: every thread evaluates its loop condition in the first phase of a round, a thread whose block has
left the loop does nothing more, and the host stops when every block has left it.

Precision: integer only (uint32 keys).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCKS = 112
WD_THREADS = 32
MP_THREADS = 128
K = 512
PADDING = 1024
POS_INF = 0xFFFFFFFF
NEG_INF = 0

POINTS = {"100000 100": {"size": 100_000, "runs": 100, "blocks": BLOCKS}}
TEST_POINT = {"size": 800, "runs": 1, "blocks": 4}


# ------------------------------------------------------------------------------------- workloadDiagonals


def workload_diagonals(A, a_length, B, b_length, dpi, blocks):
    """Merge-path crossings of ``blocks`` equally spaced diagonals, 32 work items per block.

    Parameters
    ----------
    A, B : uint32 sorted keys (``a_length``, ``b_length`` of them, then padding).
    dpi : uint32 ``(2 (blocks + 1),)``: x coordinates, then y coordinates; overwritten.
    blocks : the grid.

    Returns
    -------
    ``dpi``.
    """
    n_threads = blocks * WD_THREADS
    x_top = np.empty(blocks, dtype=np.int64)  # shared, one per block
    y_top = np.empty(blocks, dtype=np.int64)
    x_bottom = np.empty(blocks, dtype=np.int64)
    y_bottom = np.empty(blocks, dtype=np.int64)
    found = np.empty(blocks, dtype=np.int64)
    oneorzero = np.empty((blocks, WD_THREADS), dtype=np.int64)
    current_x = np.empty(n_threads, dtype=np.int64)  # registers across barriers
    current_y = np.empty(n_threads, dtype=np.int64)
    done = np.empty(n_threads, dtype=np.bool_)
    # before the loop: every thread writes the block's window and clears found
    for gid in numba.prange(n_threads):
        b = gid // WD_THREADS
        combined = b * (a_length + b_length) // blocks
        x_top[b] = min(combined, a_length)
        y_top[b] = combined - a_length if combined > a_length else 0
        x_bottom[b] = y_top[b]
        y_bottom[b] = x_top[b]
        found[b] = 0
        done[gid] = False
    active = True
    while active:
        # loop head and the window's points
        for gid in numba.prange(n_threads):
            if not done[gid]:
                b = gid // WD_THREADS
                t = gid - b * WD_THREADS
                if found[b] != 0:
                    done[gid] = True
                else:
                    cx = x_top[b] - ((x_top[b] - x_bottom[b]) >> 1) - (t - 16)
                    cy = y_top[b] + ((y_bottom[b] - y_top[b]) >> 1) + (t - 16)
                    current_x[gid] = cx
                    current_y[gid] = cy
                    if cx >= a_length or cy < 0:
                        oneorzero[b, t] = 0
                    elif cy >= b_length or cx < 1:
                        oneorzero[b, t] = 1
                    else:
                        oneorzero[b, t] = 1 if A[cx - 1] <= B[cy] else 0
        active = False
        for b in range(blocks):
            if not done[b * WD_THREADS]:
                active = True
        if not active:
            break
        # the crossing
        for gid in numba.prange(n_threads):
            if not done[gid]:
                b = gid // WD_THREADS
                t = gid - b * WD_THREADS
                if t > 0 and oneorzero[b, t] != oneorzero[b, t - 1]:
                    found[b] = 1
                    dpi[b] = current_x[gid]
                    dpi[b + blocks + 1] = current_y[gid]
        # thread 16 halves the window
        for gid in numba.prange(n_threads):
            if not done[gid]:
                b = gid // WD_THREADS
                t = gid - b * WD_THREADS
                if t == 16:
                    if oneorzero[b, 31] != 0:
                        x_bottom[b] = current_x[gid]
                        y_bottom[b] = current_y[gid]
                    else:
                        x_top[b] = current_x[gid]
                        y_top[b] = current_y[gid]
    # the boundary diagonals
    for gid in numba.prange(n_threads):
        if gid == 0:
            dpi[0] = 0
            dpi[blocks + 1] = 0
            dpi[blocks] = a_length
            dpi[blocks + blocks + 1] = b_length
    return dpi


@cuda.jit
def _workload_diagonals_gpu(A, a_length, B, b_length, dpi):
    x_top = cuda.shared.array(1, dtype=numba.int64)
    y_top = cuda.shared.array(1, dtype=numba.int64)
    x_bottom = cuda.shared.array(1, dtype=numba.int64)
    y_bottom = cuda.shared.array(1, dtype=numba.int64)
    found = cuda.shared.array(1, dtype=numba.int64)
    oneorzero = cuda.shared.array(WD_THREADS, dtype=numba.int64)
    blocks = cuda.gridDim.x
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    combined = b * (a_length + b_length) // blocks
    x_top[0] = min(combined, a_length)
    y_top[0] = combined - a_length if combined > a_length else 0
    x_bottom[0] = y_top[0]
    y_bottom[0] = x_top[0]
    found[0] = 0
    cuda.syncthreads()
    while found[0] == 0:
        cx = x_top[0] - ((x_top[0] - x_bottom[0]) >> 1) - (t - 16)
        cy = y_top[0] + ((y_bottom[0] - y_top[0]) >> 1) + (t - 16)
        if cx >= a_length or cy < 0:
            oneorzero[t] = 0
        elif cy >= b_length or cx < 1:
            oneorzero[t] = 1
        else:
            oneorzero[t] = 1 if A[cx - 1] <= B[cy] else 0
        cuda.syncthreads()
        if t > 0 and oneorzero[t] != oneorzero[t - 1]:
            found[0] = 1
            dpi[b] = cx
            dpi[b + blocks + 1] = cy
        cuda.syncthreads()
        if t == 16:
            if oneorzero[31] != 0:
                x_bottom[0] = cx
                y_bottom[0] = cy
            else:
                x_top[0] = cx
                y_top[0] = cy
        cuda.syncthreads()
    if t == 0 and b == 0:
        dpi[0] = 0
        dpi[blocks + 1] = 0
        dpi[blocks] = a_length
        dpi[blocks + blocks + 1] = b_length


def _to_device_wd(A, a_length, B, b_length, dpi, blocks):
    return {"A": cuda.to_device(A), "B": cuda.to_device(B), "dpi": cuda.to_device(dpi),
            "la": int(a_length), "lb": int(b_length), "blocks": int(blocks)}


def _launch_wd(s):
    _workload_diagonals_gpu[s["blocks"], WD_THREADS](s["A"], s["la"], s["B"], s["lb"], s["dpi"])


def _from_device_wd(s):
    return s["dpi"].copy_to_host()


# ---------------------------------------------------------------------------------------- mergeSinglePath


def merge_single_path(A, a_length, B, b_length, dpi, C, blocks):
    """Merge ``A`` and ``B`` into ``C`` between consecutive crossings, 128 work items per block.

    Parameters
    ----------
    A, B : uint32 sorted keys with padding. dpi : the crossings (``workloadDiagonals``' output).
    C : uint32 ``(a_length + b_length + padding,)``, written. blocks : the grid.

    Returns
    -------
    ``C``.
    """
    n_threads = blocks * MP_THREADS
    sh = np.empty((blocks, 2 * (K + 2)), dtype=np.uint32)  # A_shared then B_shared, per block
    x_block_top = np.empty(blocks, dtype=np.int64)
    y_block_top = np.empty(blocks, dtype=np.int64)
    x_block_stop = np.empty(blocks, dtype=np.int64)
    y_block_stop = np.empty(blocks, dtype=np.int64)
    c_base = np.empty(n_threads, dtype=np.int64)  # register across the barrier
    done = np.empty(n_threads, dtype=np.bool_)
    # the block's window and the sentinels
    for gid in numba.prange(n_threads):
        b = gid // MP_THREADS
        t = gid - b * MP_THREADS
        done[gid] = False
        if t == 0:
            x_block_top[b] = dpi[b]
            sh[b, 0] = NEG_INF
        elif t == 64:
            y_block_top[b] = dpi[b + blocks + 1]
            sh[b, K + 1] = POS_INF
        elif t == 32:
            x_block_stop[b] = dpi[b + 1]
            sh[b, K + 2] = NEG_INF
        elif t == 96:
            y_block_stop[b] = dpi[b + blocks + 2]
            sh[b, K + 2 + K + 1] = POS_INF
    while True:
        # loop head; stage the window (A and B are read one before the window, as the original's A--, B--)
        for gid in numba.prange(n_threads):
            if not done[gid]:
                b = gid // MP_THREADS
                t = gid - b * MP_THREADS
                if x_block_top[b] < x_block_stop[b] or y_block_top[b] < y_block_stop[b]:
                    a0 = x_block_top[b] - 1
                    b0 = y_block_top[b] - 1
                    s = t + 1
                    for _ in range(4):
                        sh[b, s] = A[a0 + s]
                        sh[b, K + 2 + s] = B[b0 + s]
                        s += MP_THREADS
                    c_base[gid] = x_block_top[b] + y_block_top[b]
                else:
                    done[gid] = True
        active = False
        for b in range(blocks):
            if not done[b * MP_THREADS]:
                active = True
        if not active:
            break
        # search the thread's diagonal of the window and merge four keys
        for gid in numba.prange(n_threads):
            if not done[gid]:
                b = gid // MP_THREADS
                t = gid - b * MP_THREADS
                t4 = 4 * t
                offset = t4 >> 1
                ax = offset + 1
                bsm1 = K + 2 + t4 + 2  # B_shared + threadIdX4p2
                while True:
                    offset = (offset + 1) >> 1
                    if sh[b, ax] > sh[b, bsm1 - ax - 1]:
                        if sh[b, ax - 1] <= sh[b, bsm1 - ax]:
                            break
                        ax -= offset
                    else:
                        ax += offset
                bx = t4 + 2 - ax
                ai = sh[b, ax]
                bi = sh[b, K + 2 + bx]
                base = c_base[gid] + t4
                for j in range(3):
                    if ai > bi:
                        ci = bi
                        bx += 1
                        bi = sh[b, K + 2 + bx]
                    else:
                        ci = ai
                        ax += 1
                        ai = sh[b, ax]
                    C[base + j] = ci
                C[base + 3] = bi if ai > bi else ai
                if t == MP_THREADS - 1:
                    x_block_top[b] += ax - 1
                    y_block_top[b] += bx - 1
    return C


@cuda.jit
def _merge_single_path_gpu(A, a_length, B, b_length, dpi, C):
    sh = cuda.shared.array(2 * (K + 2), dtype=numba.uint32)
    x_block_top = cuda.shared.array(1, dtype=numba.int64)
    y_block_top = cuda.shared.array(1, dtype=numba.int64)
    x_block_stop = cuda.shared.array(1, dtype=numba.int64)
    y_block_stop = cuda.shared.array(1, dtype=numba.int64)
    blocks = cuda.gridDim.x
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t == 0:
        x_block_top[0] = dpi[b]
        sh[0] = NEG_INF
    elif t == 64:
        y_block_top[0] = dpi[b + blocks + 1]
        sh[K + 1] = POS_INF
    elif t == 32:
        x_block_stop[0] = dpi[b + 1]
        sh[K + 2] = NEG_INF
    elif t == 96:
        y_block_stop[0] = dpi[b + blocks + 2]
        sh[K + 2 + K + 1] = POS_INF
    cuda.syncthreads()
    while x_block_top[0] < x_block_stop[0] or y_block_top[0] < y_block_stop[0]:
        a0 = x_block_top[0] - 1
        b0 = y_block_top[0] - 1
        s = t + 1
        for _ in range(4):
            sh[s] = A[a0 + s]
            sh[K + 2 + s] = B[b0 + s]
            s += MP_THREADS
        base = x_block_top[0] + y_block_top[0] + 4 * t
        cuda.syncthreads()
        t4 = 4 * t
        offset = t4 >> 1
        ax = offset + 1
        bsm1 = K + 2 + t4 + 2
        while True:
            offset = (offset + 1) >> 1
            if sh[ax] > sh[bsm1 - ax - 1]:
                if sh[ax - 1] <= sh[bsm1 - ax]:
                    break
                ax -= offset
            else:
                ax += offset
        bx = t4 + 2 - ax
        ai = sh[ax]
        bi = sh[K + 2 + bx]
        for j in range(3):
            if ai > bi:
                ci = bi
                bx += 1
                bi = sh[K + 2 + bx]
            else:
                ci = ai
                ax += 1
                ai = sh[ax]
            C[base + j] = ci
        C[base + 3] = bi if ai > bi else ai
        if t == MP_THREADS - 1:
            x_block_top[0] += ax - 1
            y_block_top[0] += bx - 1
        cuda.syncthreads()


def _to_device_mp(A, a_length, B, b_length, dpi, C, blocks):
    return {"A": cuda.to_device(A), "B": cuda.to_device(B), "dpi": cuda.to_device(dpi), "C": cuda.to_device(C),
            "la": int(a_length), "lb": int(b_length), "blocks": int(blocks)}


def _launch_mp(s):
    _merge_single_path_gpu[s["blocks"], MP_THREADS](s["A"], s["la"], s["B"], s["lb"], s["dpi"], s["C"])


def _from_device_mp(s):
    return s["C"].copy_to_host()


# ----------------------------------------------------------------------------------------------- inputs


def sorted_keys(size, seed):
    """A and B as the host makes them: ``rand()`` keys (0 and ``0xFFFFFFFF`` redrawn), drawn alternately,
    padded with 1024 ``0xFFFFFFFF`` each and sorted."""
    draws = glibc_rand(1 + seed, 2 * size + 64)
    while True:
        keys = draws[(draws > NEG_INF) & (draws < POS_INF)]
        if keys.size >= 2 * size:
            break
        draws = glibc_rand(1 + seed, 2 * draws.size)
    keys = keys[: 2 * size].astype(np.uint32)
    pad = np.full(PADDING, POS_INF, dtype=np.uint32)
    A = np.sort(np.concatenate([keys[0::2], pad]))
    B = np.sort(np.concatenate([keys[1::2], pad]))
    return A, B


def crossings(A, a_length, B, b_length, blocks):
    """``diagonal_path_intersections`` from a stable NumPy merge (A first on ties)."""
    keys = np.concatenate([A[:a_length], B[:b_length]])
    order = np.argsort(keys, kind="stable")
    from_a = np.concatenate([[0], np.cumsum(order < a_length)])  # A keys among the first d of C
    dpi = np.zeros(2 * (blocks + 1), dtype=np.uint32)
    for b in range(blocks + 1):
        d = b * (a_length + b_length) // blocks
        dpi[b] = from_a[d]
        dpi[b + blocks + 1] = d - from_a[d]
    return dpi


def make_inputs_wd(params, seed):
    """``(A, |A|, B, |B|, dpi, blocks)``; ``dpi`` zeros."""
    size, blocks = int(params["size"]), int(params["blocks"])
    A, B = sorted_keys(size, seed)
    return A, size, B, size, np.zeros(2 * (blocks + 1), dtype=np.uint32), blocks


def make_inputs_mp(params, seed):
    """``(A, |A|, B, |B|, dpi, C, blocks)``: ``dpi`` the crossings, ``C`` zeros."""
    A, la, B, lb, _, blocks = make_inputs_wd(params, seed)
    return A, la, B, lb, crossings(A, la, B, lb, blocks), np.zeros(la + lb + PADDING, dtype=np.uint32), blocks


def work_wd(params):
    return int(params["blocks"]) * WD_THREADS, WD_THREADS


def work_mp(params):
    return int(params["blocks"]) * MP_THREADS, MP_THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="merge",
        kernel="workloadDiagonals",
        description="HeCBench merge (GPU Merge Path): 32-wide binary search of 112 cross diagonals for the "
        "merge path of two sorted arrays of 100,000 uint32 keys",
        cpu=workload_diagonals,
        gpu=GpuPort(_to_device_wd, _launch_wd, _from_device_wd),
        make_inputs=make_inputs_wd,
        points=POINTS,
        work=work_wd,
        test_point=TEST_POINT,
        rtol=0.0,
        atol=0.0,
    ),
    MeasuredKernel(
        source="hecbench",
        application="merge",
        kernel="mergeSinglePath",
        description="HeCBench merge (GPU Merge Path): each block merges its part in 512-key shared-memory "
        "windows, four keys per thread after a binary search of its diagonal",
        cpu=merge_single_path,
        gpu=GpuPort(_to_device_mp, _launch_mp, _from_device_mp),
        make_inputs=make_inputs_mp,
        points=POINTS,
        work=work_mp,
        test_point=TEST_POINT,
        rtol=0.0,
        atol=0.0,
    ),
]
