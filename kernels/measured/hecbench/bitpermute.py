"""Bit-reversal permutation (an NTT's reordering), HeCBench ``bitpermute``: kernels ``bit_rev_permutation`` and
``bit_rev_permutation_z``.

The array of ``2^lg`` 64-bit elements (``fr_t`` is ``long``) is permuted in place so that element ``i`` moves
to ``bit_reverse(i)`` (of ``lg`` bits; ``__brev(i) >> (32 - lg)`` on the GPU).

* ``bit_rev_permutation``, small domains (``2^lg <= 1024``, one block of ``2^lg`` threads): thread ``i``
  loads ``in[i]``, waits at a barrier (the permutation is in place) and stores it at ``out[rev(i)]``.
* ``bit_rev_permutation_z``, larger domains: the array is seen as ``Z x (2^lg / Z)`` with ``Z = 256 / 8 = 32``;
  a warp takes a group ``g`` of 32 consecutive elements in each of the 32 rows (``step = 2^(lg - 5)`` apart)
  together with its partner group ``rev(g)`` (of ``lg - 10`` bits), transposes the 32 x 32 tile through shared
  memory (``xchg[i][rev(lane)] = in[i step + g 32 + lane]``, ``__syncwarp``, ``out[i step + rev(g) 32 +
  lane] = xchg[rev(lane)][i]``) and, when the partner is another group, swaps the partner's tile back the
  same way; a group above its partner is skipped (its partner's warp handles both). Threads stride over the
  groups (``tid += blockDim * gridDim`` while below ``step``).

Launches (the program's warm-up calls, the first launch of each kernel): ``bit_permute(10)``: one block of
1024 threads; ``bit_permute(11)``: ``2048 / 32 / 32 = 2`` blocks of 32 threads (``2048 < 32 * 32`` is false,
so the ``_z`` kernel). Measured point ``100`` (repeat). At ``lg = 11`` the grid's 64 threads are exactly the
``step`` groups' lanes, so each thread runs the loop body once, and ``rev`` of a 1-bit group index is the
index itself: every group is its own partner, and the swap-back half is skipped.

Inputs: ``inout[i] = i``. The permutation is in place (``d_out == d_in``), as the program calls it: one
array. Deliberate differences: ``__brev`` (one instruction) is written as five mask-and-shift swaps. The
barriers (``__syncthreads``, ``__syncwarp``) split each kernel into parallel loops over all threads; the
shared tile is an array holding one 32 x 32 tile per block (one warp per block here). The ``_z`` region
runs the loop body once per thread (the only trip at the measured size; ``make_inputs`` checks it).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

Z = 32
LG_Z = 5

POINTS = {"100": {"repeat": 100}}
TEST_POINT = {"repeat": 1}


def _brev(x, nbits):
    """``__brev(x) >> (32 - nbits)`` for a 32-bit ``x``."""
    x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
    x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
    x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
    x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
    x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
    return x >> (32 - nbits)


def bit_rev_permutation(d, lg, n_threads):
    """Permute ``d`` (``2^lg`` elements, one block of ``2^lg`` threads) in place."""
    t = np.empty(n_threads, dtype=np.int64)
    for idx in numba.prange(n_threads):
        t[idx] = d[idx]
    # __syncthreads (d_out == d_in)
    for idx in numba.prange(n_threads):
        x = idx
        x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
        x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
        x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
        x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
        x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
        rev = x >> (32 - lg)
        d[rev] = t[idx]
    return d


def bit_rev_permutation_z(d, lg, block, n_threads):
    """Permute ``d`` in place, 32 x 32 tiles transposed through shared memory (one loop trip per thread)."""
    n_blocks = n_threads // block
    step = 1 << (lg - LG_Z)
    xchg = np.zeros((n_blocks * (block // Z), Z, Z), dtype=np.int64)  # one tile per warp
    regs = np.zeros((n_threads, Z), dtype=np.int64)
    for tid in numba.prange(n_threads):
        w = tid // Z  # the warp's tile (block b, warp threadIdx.x / 32)
        lane = tid % Z
        x = lane
        x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
        x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
        x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
        x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
        x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
        rev = x >> (32 - LG_Z)
        group_idx = tid >> LG_Z
        x = group_idx
        x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
        x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
        x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
        x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
        x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
        group_rev = x >> (32 - (lg - 2 * LG_Z))
        if group_idx <= group_rev:
            base_idx = group_idx * Z + lane
            base_rev = group_rev * Z + lane
            for i in range(Z):
                v = d[i * step + base_idx]
                regs[tid, i] = v
                xchg[w, i, rev] = v
                if group_idx != group_rev:
                    regs[tid, i] = d[i * step + base_rev]
    # __syncwarp
    for tid in numba.prange(n_threads):
        w = tid // Z
        lane = tid % Z
        x = lane
        x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
        x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
        x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
        x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
        x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
        rev = x >> (32 - LG_Z)
        group_idx = tid >> LG_Z
        x = group_idx
        x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
        x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
        x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
        x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
        x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
        group_rev = x >> (32 - (lg - 2 * LG_Z))
        if group_idx <= group_rev:
            base_rev = group_rev * Z + lane
            for i in range(Z):
                d[i * step + base_rev] = xchg[w, rev, i]
    # the partner's tile (never at lg = 11: every group is its own partner)
    for tid in numba.prange(n_threads):
        w = tid // Z
        lane = tid % Z
        group_idx = tid >> LG_Z
        x = group_idx
        x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
        x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
        x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
        x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
        x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
        group_rev = x >> (32 - (lg - 2 * LG_Z))
        if group_idx < group_rev:
            x = lane
            x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
            x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
            x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
            x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
            x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
            rev = x >> (32 - LG_Z)
            for i in range(Z):
                xchg[w, i, rev] = regs[tid, i]
    for tid in numba.prange(n_threads):
        w = tid // Z
        lane = tid % Z
        group_idx = tid >> LG_Z
        x = group_idx
        x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
        x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
        x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
        x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
        x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
        group_rev = x >> (32 - (lg - 2 * LG_Z))
        if group_idx < group_rev:
            x = lane
            x = ((x >> 1) & 0x55555555) | ((x & 0x55555555) << 1)
            x = ((x >> 2) & 0x33333333) | ((x & 0x33333333) << 2)
            x = ((x >> 4) & 0x0F0F0F0F) | ((x & 0x0F0F0F0F) << 4)
            x = ((x >> 8) & 0x00FF00FF) | ((x & 0x00FF00FF) << 8)
            x = ((x >> 16) & 0xFFFF) | ((x & 0xFFFF) << 16)
            rev = x >> (32 - LG_Z)
            base_idx = group_idx * Z + lane
            for i in range(Z):
                d[i * step + base_idx] = xchg[w, rev, i]
    return d


_brev_dev = cuda.jit(device=True)(_brev)


@cuda.jit
def _perm_gpu(d, lg):
    idx = cuda.threadIdx.x
    rev = _brev_dev(idx, lg)
    t = d[idx]
    cuda.syncthreads()
    d[rev] = t


@cuda.jit
def _perm_z_gpu(d, lg):
    xchg = cuda.shared.array((Z, Z), dtype=numba.int64)  # one warp per block here
    regs = cuda.local.array(Z, dtype=numba.int64)
    lane = cuda.threadIdx.x % Z
    rev = _brev_dev(lane, LG_Z)
    step = 1 << (lg - LG_Z)
    tid = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
    while True:
        group_idx = tid >> LG_Z
        group_rev = _brev_dev(group_idx, lg - 2 * LG_Z)
        if group_idx <= group_rev:
            base_idx = group_idx * Z + lane
            base_rev = group_rev * Z + lane
            for i in range(Z):
                regs[i] = d[i * step + base_idx]
                xchg[i, rev] = regs[i]
                if group_idx != group_rev:
                    regs[i] = d[i * step + base_rev]
            cuda.syncthreads()  # __syncwarp: one warp per block (the simulator has no syncwarp)
            for i in range(Z):
                d[i * step + base_rev] = xchg[rev, i]
            if group_idx != group_rev:
                cuda.syncthreads()  # __syncwarp: one warp per block (the simulator has no syncwarp)
                for i in range(Z):
                    xchg[i, rev] = regs[i]
                cuda.syncthreads()  # __syncwarp: one warp per block (the simulator has no syncwarp)
                for i in range(Z):
                    d[i * step + base_idx] = xchg[rev, i]
        tid += cuda.blockDim.x * cuda.gridDim.x
        if tid >= step:
            break


def _to_device_1(d, lg, n_threads):
    return {"d": cuda.to_device(d), "lg": int(lg), "n": int(n_threads)}


def _launch_1(s):
    _perm_gpu[1, s["n"]](s["d"], s["lg"])


def _to_device_z(d, lg, block, n_threads):
    return {"d": cuda.to_device(d), "lg": int(lg), "block": int(block), "n": int(n_threads)}


def _launch_z(s):
    _perm_z_gpu[s["n"] // s["block"], s["block"]](s["d"], s["lg"])


def _from_device(s):
    return s["d"].copy_to_host()


def make_inputs_1(params, seed):
    """``bit_permute(10)``'s warm-up: ``inout[i] = i`` over 1024 elements (no random input)."""
    return np.arange(1024, dtype=np.int64), 10, work_1(params)[0]


def make_inputs_z(params, seed):
    """``bit_permute(11)``'s warm-up: ``inout[i] = i`` over 2048 elements (no random input)."""
    lg = 11
    n, block = work_z(params)
    assert n == 1 << (lg - LG_Z), "one loop trip per thread"
    return np.arange(1 << lg, dtype=np.int64), lg, block, n


def work_1(params):
    return 1024, 1024


def work_z(params):
    return (1 << 11) // Z // Z * Z, Z


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="bitpermute",
        kernel="bit_rev_permutation",
        description="HeCBench bitpermute: in-place bit-reversal permutation of 1024 64-bit elements, one "
        "block, one thread per element",
        cpu=bit_rev_permutation,
        gpu=GpuPort(_to_device_1, _launch_1, _from_device),
        make_inputs=make_inputs_1,
        points=POINTS,
        work=work_1,
        test_point=TEST_POINT,
        rtol=0,
        atol=0,
    ),
    MeasuredKernel(
        source="hecbench",
        application="bitpermute",
        kernel="bit_rev_permutation_z",
        description="HeCBench bitpermute: in-place bit-reversal permutation of 2048 64-bit elements, 32 x 32 "
        "tiles transposed through shared memory by one warp each",
        cpu=bit_rev_permutation_z,
        gpu=GpuPort(_to_device_z, _launch_z, _from_device),
        make_inputs=make_inputs_z,
        points=POINTS,
        work=work_z,
        test_point=TEST_POINT,
        rtol=0,
        atol=0,
    ),
]
