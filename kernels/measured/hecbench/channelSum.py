"""Per-channel sum and sum of squares, HeCBench ``channelSum``: the kernels ``ChannelSumNHWC`` and
``ChannelSumNCHW``, their first launches.

The host loops over batch sizes ``N`` and channel counts ``C``; the first launch of each kernel is ``N = 1,
C = 32`` on a ``W x H`` image (224 x 224). One block per channel ``c``; every thread accumulates, over a
block-stride loop, the channel's elements and their squares (int32, ``scalar_t = int``), then the block sums
its threads' two partials (``cub::BlockReduce``) and thread 0 writes ``sum[c]`` and ``sumsq[c]``.

* ``ChannelSumNHWC``: blocks of 256 threads; thread ``t`` reads ``X[i * C + c]`` for ``i = t, t + 256, ...
  < N * H * W``.
* ``ChannelSumNCHW``: blocks of ``(1, 128)`` threads (the dispatch for ``H * W >= 128``); thread ``y`` reads
  ``X[(n * C + c) * HW + hw]`` for every ``n < N`` and ``hw = y, y + 128, ... < HW``.

Deliberate difference: cub's block reduction (warp shuffles, then across warps) is written as a shared-memory
tree reduction (the partials staged in one tile per block, then ``log2(block)`` halving steps, each a barrier
phase: a parallel loop over all threads). The integer sums are exact either way.

Inputs: ``X[i] = rand() % 256`` after ``srand(N * C * W * H)`` (glibc ``rand``: the original's numbers for seed
0; seed ``s`` adds ``s`` to the seed). Both kernels read the same ``X``. The sums stay below 2^31 here (the mean
square of ``rand() % 256`` is about 21800 per element, 50176 elements a channel).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

NHWC_BLOCK = 256
NCHW_BLOCK = 128  # blockDim (1, 128)

POINTS = {"224 224 100": {"W": 224, "H": 224, "N": 1, "C": 32}}
TEST_POINT = {"W": 12, "H": 10, "N": 2, "C": 4}


def channel_sum_nhwc(N, C, HxW, X, total, totalsq, tile_m, tile_v):
    """``ChannelSumNHWC``: one block of 256 threads per channel. ``tile_m, tile_v``: int64 ``(C, 256)``
    shared tiles. Returns ``(total, totalsq)``."""
    inner = N * HxW
    for gid in numba.prange(C * NHWC_BLOCK):
        c = gid // NHWC_BLOCK
        t = gid - c * NHWC_BLOCK
        m_val = 0
        v_val = 0
        i = t
        while i < inner:
            x = X[i * C + c]
            m_val += x
            v_val += x * x
            i += NHWC_BLOCK
        tile_m[c, t] = m_val
        tile_v[c, t] = v_val
    s = NHWC_BLOCK // 2
    while s > 0:
        for gid in numba.prange(C * NHWC_BLOCK):
            c = gid // NHWC_BLOCK
            t = gid - c * NHWC_BLOCK
            if t < s:
                tile_m[c, t] += tile_m[c, t + s]
                tile_v[c, t] += tile_v[c, t + s]
        s //= 2
    for gid in numba.prange(C * NHWC_BLOCK):
        c = gid // NHWC_BLOCK
        if gid - c * NHWC_BLOCK == 0:
            total[c] = tile_m[c, 0]
            totalsq[c] = tile_v[c, 0]
    return total, totalsq


def channel_sum_nchw(N, C, HxW, X, total, totalsq, tile_m, tile_v):
    """``ChannelSumNCHW``: one block of (1, 128) threads per channel. ``tile_m, tile_v``: int64 ``(C, 128)``
    shared tiles. Returns ``(total, totalsq)``."""
    for gid in numba.prange(C * NCHW_BLOCK):
        c = gid // NCHW_BLOCK
        ty = gid - c * NCHW_BLOCK
        m_val = 0
        v_val = 0
        for n in range(N):  # threadIdx.x = 0, blockDim.x = 1
            hw = ty
            while hw < HxW:
                x = X[(n * C + c) * HxW + hw]
                m_val += x
                v_val += x * x
                hw += NCHW_BLOCK
        tile_m[c, ty] = m_val
        tile_v[c, ty] = v_val
    s = NCHW_BLOCK // 2
    while s > 0:
        for gid in numba.prange(C * NCHW_BLOCK):
            c = gid // NCHW_BLOCK
            ty = gid - c * NCHW_BLOCK
            if ty < s:
                tile_m[c, ty] += tile_m[c, ty + s]
                tile_v[c, ty] += tile_v[c, ty + s]
        s //= 2
    for gid in numba.prange(C * NCHW_BLOCK):
        c = gid // NCHW_BLOCK
        if gid - c * NCHW_BLOCK == 0:
            total[c] = tile_m[c, 0]
            totalsq[c] = tile_v[c, 0]
    return total, totalsq


@cuda.jit
def _nhwc_gpu(N, C, HxW, X, total, totalsq):
    sm = cuda.shared.array(NHWC_BLOCK, numba.int64)
    sv = cuda.shared.array(NHWC_BLOCK, numba.int64)
    c = cuda.blockIdx.x
    t = cuda.threadIdx.x
    m_val = 0
    v_val = 0
    i = t
    while i < N * HxW:
        x = X[i * C + c]
        m_val += x
        v_val += x * x
        i += NHWC_BLOCK
    sm[t] = m_val
    sv[t] = v_val
    cuda.syncthreads()
    s = NHWC_BLOCK // 2
    while s > 0:
        if t < s:
            sm[t] += sm[t + s]
            sv[t] += sv[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        total[c] = sm[0]
        totalsq[c] = sv[0]


@cuda.jit
def _nchw_gpu(N, C, HxW, X, total, totalsq):
    sm = cuda.shared.array(NCHW_BLOCK, numba.int64)
    sv = cuda.shared.array(NCHW_BLOCK, numba.int64)
    c = cuda.blockIdx.x
    ty = cuda.threadIdx.y
    m_val = 0
    v_val = 0
    for n in range(N):
        hw = ty
        while hw < HxW:
            x = X[(n * C + c) * HxW + hw]
            m_val += x
            v_val += x * x
            hw += NCHW_BLOCK
    sm[ty] = m_val
    sv[ty] = v_val
    cuda.syncthreads()
    s = NCHW_BLOCK // 2
    while s > 0:
        if ty < s:
            sm[ty] += sm[ty + s]
            sv[ty] += sv[ty + s]
        cuda.syncthreads()
        s //= 2
    if ty == 0:
        total[c] = sm[0]
        totalsq[c] = sv[0]


def _to_device(N, C, HxW, X, total, totalsq, tile_m, tile_v):
    return {"N": int(N), "C": int(C), "HxW": int(HxW), "X": cuda.to_device(X), "total": cuda.to_device(total),
            "totalsq": cuda.to_device(totalsq)}


def _launch_nhwc(s):
    _nhwc_gpu[s["C"], NHWC_BLOCK](s["N"], s["C"], s["HxW"], s["X"], s["total"], s["totalsq"])


def _launch_nchw(s):
    _nchw_gpu[s["C"], (1, NCHW_BLOCK)](s["N"], s["C"], s["HxW"], s["X"], s["total"], s["totalsq"])


def _from_device(s):
    return s["total"].copy_to_host(), s["totalsq"].copy_to_host()


def host_input(params, seed):
    """``X``: ``rand() % 256`` after ``srand(N * C * W * H + seed)``, int32."""
    numel = int(params["N"]) * int(params["C"]) * int(params["W"]) * int(params["H"])
    return (glibc_rand(numel + seed, numel) % 256).astype(np.int32)


def _inputs(block):
    def make_inputs(params, seed):
        N, C = int(params["N"]), int(params["C"])
        zeros = np.zeros(C, dtype=np.int32)
        return (N, C, int(params["W"]) * int(params["H"]), host_input(params, seed), zeros, zeros.copy(),
                np.zeros((C, block), dtype=np.int64), np.zeros((C, block), dtype=np.int64))
    return make_inputs


def _work(block):
    def work(params):
        return int(params["C"]) * block, block
    return work


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="channelSum",
        kernel=kernel,
        description=f"HeCBench channelSum: {layout} per-channel sum and sum of squares of 32 x 224 x 224 ints, "
        f"one block of {block} threads per channel, block-stride loop then a block reduction",
        cpu=cpu,
        gpu=GpuPort(_to_device, launch, _from_device),
        make_inputs=_inputs(block),
        points=POINTS,
        work=_work(block),
        test_point=TEST_POINT,
        rtol=0.0,
        atol=0.0,
    )
    for kernel, layout, block, cpu, launch in (
        ("ChannelSumNHWC", "NHWC", NHWC_BLOCK, channel_sum_nhwc, _launch_nhwc),
        ("ChannelSumNCHW", "NCHW", NCHW_BLOCK, channel_sum_nchw, _launch_nchw),
    )
]
