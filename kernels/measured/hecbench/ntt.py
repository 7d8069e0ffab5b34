"""Inverse number-theoretic transform step, HeCBench ``ntt`` (from cuHE): the kernel ``intt_3_64k_modcrt``, its
first launch.

Arithmetic modulo the prime ``P = 2^64 - 2^32 + 1`` on uint64 words: ``_add_modP`` / ``_sub_modP`` (the wrapped
sum or difference, corrected by ``2^32 - 1 = 2^64 mod P``), ``_ls_modP(x, l)`` (``x * 2^l mod P``: the shifted
word split into 32-bit pieces, 96-, 128- or 160-bit pieces folded with borrow and carry chains as the original's
``_uint96/128/160_modP``) and ``_mul_modP`` (bit-serial interleaved modular multiplication, 64 steps of
double-and-add, each ending in ``% P``, once the operands do not both fit in 32 bits).

The kernel: 128 blocks of 64 threads, each block one 512-point slice of the 64 K transform. A thread loads
eight words ``src[fmem | 2i]`` (``fmem = block << 9 | (tid & 0x3E) << 3 | tid & 1``), runs an 8-point NTT
(butterflies, twiddles ``2^24, 2^48, 2^72`` as ``_ls_modP``), multiplies its results by ``2^(12 i)`` for odd
threads (``2^0`` for even ones) into the shared buffer (512 words) at ``tid << 3 | i``; after the barrier it
reads ``buffer[fbuf | i << 3]`` (``fbuf = (tid & 0x38) << 3 | tid & 7``), does four radix-2 butterflies, scales
each by ``18446462594437939201`` (``_mul_modP``, the loop), and stores the low 32 bits to ``dst`` at the
transposed position ``((t & 0xF) << 12) | (t >> 4)``, ``t = tmem | i << 3``.

Regions: two barrier phases (each a parallel loop over all threads), the shared buffer as one 512-word tile per
block. The helpers are ``numba.njit`` functions (the region calls them; the GPU port calls device versions of
the same code). The 8-point NTT is written out in both kernels. The region wraps every helper's result in
``np.uint64`` (called from plain Python, a compiled helper returns a Python int, which Numba would type as
int64). The 32-bit pieces of ``_ls_modP`` are held in uint64 variables masked to 32 bits (the original's uint32
array ``buff``); only the switch cases of the shifts the kernel uses (0, 12, 24, 36, 48, 60, 72, 84: the 96-,
128- and 160-bit folds) are written, the others (105 ... 147) are not reached. The wrapped uint64 arithmetic of
the original is kept (plain Python and the simulator run it on NumPy uint64 scalars, which wrap as the
hardware does, with a RuntimeWarning). Kept as the original has it: in the folds a borrow out of the low word
reaches the next word only when that word is zero, so ``_ls_modP`` is not always congruent to ``x * 2^l``
(for about 60% of random words at the shifts used); the port reproduces the original's values, not the
mathematical transform.

Size: the program's transform is 64 K points (128 blocks), fixed; ``blocks`` gives fewer blocks for the test
and feature points (the source holds ``blocks * 512`` words; ``dst`` always holds 64 K, its layout being that of
the full transform). Inputs: ``src[i] = rand() << 32 | rand()`` after ``srand(123)`` (glibc, exact for seed 0;
``srand(123 + seed)`` otherwise).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

THREADS = 64
NTT_LEN = 64 * 1024

U0 = np.uint64(0)
U1 = np.uint64(1)
U32 = np.uint64(32)
MASK32 = np.uint64(0xFFFFFFFF)
TWO32 = np.uint64(0x100000000)
VALP = np.uint64(0xFFFFFFFF00000001)
MAXU64 = np.uint64(0xFFFFFFFFFFFFFFFF)
HALF = np.uint64(0x7FFFFFFFFFFFFFFF)
SCALE = np.uint64(18446462594437939201)

POINTS = {"100000": {"blocks": 128}}
TEST_POINT = {"blocks": 1}
#: the measured point traces about 7e7 records: features from 8 blocks (about 4.5e6)
FEATURE_POINT = {"blocks": 8}


def _add_modp(x, y):
    ret = x + y
    if ret < x:
        ret += MASK32
    if ret >= VALP:
        ret -= VALP
    return ret


def _sub_modp(x, y):
    ret = x - y
    if ret > x:
        ret -= MASK32
    return ret


def _ls_modp(x, shift):
    """``x * 2^shift mod P`` (not always fully reduced), for the shifts the kernel uses."""
    x0 = U0
    x1 = U0
    if shift == 0:
        x0 = x & MASK32
        x1 = x >> U32
    else:
        x2 = U0
        x3 = U0
        x4 = U0
        fold = 96
        if shift <= 30:
            x2 = (x >> np.uint64(64 - shift)) & MASK32
            x1 = (x >> np.uint64(32 - shift)) & MASK32
            x0 = (x << np.uint64(shift)) & MASK32
        elif shift <= 63:
            x3 = (x >> np.uint64(96 - shift)) & MASK32
            x2 = (x >> np.uint64(64 - shift)) & MASK32
            x1 = (x << np.uint64(shift - 32)) & MASK32
            fold = 128
        else:
            x4 = (x >> np.uint64(128 - shift)) & MASK32
            x3 = (x >> np.uint64(96 - shift)) & MASK32
            x2 = (x << np.uint64(shift - 64)) & MASK32
            fold = 160
        # _uint96_modP
        s = x1 + x2
        b = 1 if s > MASK32 else 0
        x1 = s & MASK32
        if x0 < x2:
            if x1 < U1:
                x1 = MASK32
                b -= 1
        x0 = (x0 + TWO32 - x2) & MASK32
        if b == 1:
            s = x0 + MASK32
            if s > MASK32:
                x1 = (x1 + U1) & MASK32
            x0 = s & MASK32
        if fold >= 128:  # _uint128_modP
            b = 0
            if x0 < x3:
                if x1 < U1:
                    x1 = MASK32
                    b = -1
            x0 = (x0 + TWO32 - x3) & MASK32
            if b == -1:
                if x0 < MASK32:
                    x1 = (x1 + MASK32) & MASK32
                x0 = (x0 + U1) & MASK32
        if fold >= 160:  # _uint160_modP
            b = -1 if x1 < x4 else 0
            x1 = (x1 + TWO32 - x4) & MASK32
            if b == -1:
                if x0 < MASK32:
                    x1 = (x1 + MASK32) & MASK32
                x0 = (x0 + U1) & MASK32
    r = x0 | (x1 << U32)
    if r > VALP:
        r -= VALP
    return r


def _mul_modp(x, y, m):
    if x >= m:
        x %= m
    if y >= m:
        y %= m
    if x == U0 or y == U0 or m == U1:
        return U0
    if (x | y) < MASK32:
        return (x * y) % m
    if x < y:
        t = x
        x = y
        y = t
    r = U0
    for i in range(63, -1, -1):
        if r > HALF:
            r = m - ((m - r) << U1)
        else:
            r <<= U1
        if (y >> np.uint64(i)) & U1:
            if r > MAXU64 - x:
                r -= m - x
            else:
                r += x
        r %= m
    return r


add_modp = numba.njit(_add_modp)
sub_modp = numba.njit(_sub_modp)
ls_modp = numba.njit(_ls_modp)
mul_modp = numba.njit(_mul_modp)
_add_dev = cuda.jit(device=True)(_add_modp)
_sub_dev = cuda.jit(device=True)(_sub_modp)
_ls_dev = cuda.jit(device=True)(_ls_modp)
_mul_dev = cuda.jit(device=True)(_mul_modp)


def intt_3_64k_modcrt(dst, src, buffer, n_threads):
    """``buffer``: uint64 ``(blocks, 512)`` shared tiles. Returns ``dst`` (uint32, 64 K)."""
    for gid in numba.prange(n_threads):
        bidx = gid // THREADS
        tidx = gid - bidx * THREADS
        fmem = (bidx << 9) | ((tidx & 0x3E) << 3) | (tidx & 0x1)
        tbuf = tidx << 3
        a0 = src[fmem]
        a1 = src[fmem | 2]
        a2 = src[fmem | 4]
        a3 = src[fmem | 6]
        a4 = src[fmem | 8]
        a5 = src[fmem | 10]
        a6 = src[fmem | 12]
        a7 = src[fmem | 14]
        # ntt8
        s0 = np.uint64(add_modp(a0, a4))
        s1 = np.uint64(sub_modp(a0, a4))
        s2 = np.uint64(add_modp(a2, a6))
        s3 = np.uint64(sub_modp(a2, a6))
        s4 = np.uint64(add_modp(a1, a5))
        s5 = np.uint64(sub_modp(a1, a5))
        s6 = np.uint64(add_modp(a3, a7))
        s7 = np.uint64(sub_modp(a3, a7))
        a0 = np.uint64(add_modp(s0, s2))
        a2 = np.uint64(sub_modp(s0, s2))
        t = np.uint64(ls_modp(s3, 48))
        a1 = np.uint64(add_modp(s1, t))
        a3 = np.uint64(sub_modp(s1, t))
        a4 = np.uint64(add_modp(s4, s6))
        a6 = np.uint64(sub_modp(s4, s6))
        t = np.uint64(ls_modp(s7, 48))
        a5 = np.uint64(add_modp(s5, t))
        a7 = np.uint64(sub_modp(s5, t))
        s0 = np.uint64(add_modp(a0, a4))
        s4 = np.uint64(sub_modp(a0, a4))
        t = np.uint64(ls_modp(a5, 24))
        s1 = np.uint64(add_modp(a1, t))
        s5 = np.uint64(sub_modp(a1, t))
        t = np.uint64(ls_modp(a6, 48))
        s2 = np.uint64(add_modp(a2, t))
        s6 = np.uint64(sub_modp(a2, t))
        t = np.uint64(ls_modp(a7, 72))
        s3 = np.uint64(add_modp(a3, t))
        s7 = np.uint64(sub_modp(a3, t))
        odd = (tidx & 0x1) << 2
        buffer[bidx, tbuf | 0] = np.uint64(ls_modp(s0, 0))
        buffer[bidx, tbuf | 1] = np.uint64(ls_modp(s1, odd * 3))
        buffer[bidx, tbuf | 2] = np.uint64(ls_modp(s2, odd * 6))
        buffer[bidx, tbuf | 3] = np.uint64(ls_modp(s3, odd * 9))
        buffer[bidx, tbuf | 4] = np.uint64(ls_modp(s4, odd * 12))
        buffer[bidx, tbuf | 5] = np.uint64(ls_modp(s5, odd * 15))
        buffer[bidx, tbuf | 6] = np.uint64(ls_modp(s6, odd * 18))
        buffer[bidx, tbuf | 7] = np.uint64(ls_modp(s7, odd * 21))
    for gid in numba.prange(n_threads):
        bidx = gid // THREADS
        tidx = gid - bidx * THREADS
        fbuf = ((tidx & 0x38) << 3) | (tidx & 0x7)
        tmem = (bidx << 9) | ((tidx & 0x38) << 3) | (tidx & 0x7)
        for i in range(4):
            u = buffer[bidx, fbuf | ((2 * i) << 3)]
            v = buffer[bidx, fbuf | ((2 * i + 1) << 3)]
            e = np.uint64(add_modp(u, v))
            o = np.uint64(sub_modp(u, v))
            t = tmem | ((2 * i) << 3)
            dst[((t & 0xF) << 12) | (t >> 4)] = np.uint64(mul_modp(e, SCALE, VALP)) & MASK32
            t = tmem | ((2 * i + 1) << 3)
            dst[((t & 0xF) << 12) | (t >> 4)] = np.uint64(mul_modp(o, SCALE, VALP)) & MASK32
    return dst


@cuda.jit
def _intt_gpu(dst, src):
    buffer = cuda.shared.array(512, numba.uint64)
    bidx = cuda.blockIdx.x
    tidx = cuda.threadIdx.x
    fmem = (bidx << 9) | ((tidx & 0x3E) << 3) | (tidx & 0x1)
    tbuf = tidx << 3
    fbuf = ((tidx & 0x38) << 3) | (tidx & 0x7)
    tmem = (bidx << 9) | ((tidx & 0x38) << 3) | (tidx & 0x7)
    a0 = src[fmem]
    a1 = src[fmem | 2]
    a2 = src[fmem | 4]
    a3 = src[fmem | 6]
    a4 = src[fmem | 8]
    a5 = src[fmem | 10]
    a6 = src[fmem | 12]
    a7 = src[fmem | 14]
    s0 = _add_dev(a0, a4)
    s1 = _sub_dev(a0, a4)
    s2 = _add_dev(a2, a6)
    s3 = _sub_dev(a2, a6)
    s4 = _add_dev(a1, a5)
    s5 = _sub_dev(a1, a5)
    s6 = _add_dev(a3, a7)
    s7 = _sub_dev(a3, a7)
    a0 = _add_dev(s0, s2)
    a2 = _sub_dev(s0, s2)
    t = _ls_dev(s3, 48)
    a1 = _add_dev(s1, t)
    a3 = _sub_dev(s1, t)
    a4 = _add_dev(s4, s6)
    a6 = _sub_dev(s4, s6)
    t = _ls_dev(s7, 48)
    a5 = _add_dev(s5, t)
    a7 = _sub_dev(s5, t)
    s0 = _add_dev(a0, a4)
    s4 = _sub_dev(a0, a4)
    t = _ls_dev(a5, 24)
    s1 = _add_dev(a1, t)
    s5 = _sub_dev(a1, t)
    t = _ls_dev(a6, 48)
    s2 = _add_dev(a2, t)
    s6 = _sub_dev(a2, t)
    t = _ls_dev(a7, 72)
    s3 = _add_dev(a3, t)
    s7 = _sub_dev(a3, t)
    odd = (tidx & 0x1) << 2
    buffer[tbuf | 0] = _ls_dev(s0, 0)
    buffer[tbuf | 1] = _ls_dev(s1, odd * 3)
    buffer[tbuf | 2] = _ls_dev(s2, odd * 6)
    buffer[tbuf | 3] = _ls_dev(s3, odd * 9)
    buffer[tbuf | 4] = _ls_dev(s4, odd * 12)
    buffer[tbuf | 5] = _ls_dev(s5, odd * 15)
    buffer[tbuf | 6] = _ls_dev(s6, odd * 18)
    buffer[tbuf | 7] = _ls_dev(s7, odd * 21)
    cuda.syncthreads()
    for i in range(4):
        u = buffer[fbuf | ((2 * i) << 3)]
        v = buffer[fbuf | ((2 * i + 1) << 3)]
        e = _add_dev(u, v)
        o = _sub_dev(u, v)
        t = tmem | ((2 * i) << 3)
        dst[((t & 0xF) << 12) | (t >> 4)] = _mul_dev(e, SCALE, VALP) & MASK32
        t = tmem | ((2 * i + 1) << 3)
        dst[((t & 0xF) << 12) | (t >> 4)] = _mul_dev(o, SCALE, VALP) & MASK32


def _to_device(dst, src, buffer, n_threads):
    return {"dst": cuda.to_device(dst), "src": cuda.to_device(src), "blocks": int(n_threads) // THREADS}


def _launch(s):
    _intt_gpu[s["blocks"], THREADS](s["dst"], s["src"])


def _from_device(s):
    return s["dst"].copy_to_host()


def host_source(blocks, seed):
    """``src``: ``rand() << 32 | rand()`` per word (uint64, ``blocks * 512``)."""
    r = glibc_rand(123 + seed, 2 * NTT_LEN)[: 2 * blocks * 512].astype(np.uint64)
    return (r[0::2] << np.uint64(32)) | r[1::2]


def make_inputs(params, seed):
    blocks = int(params["blocks"])
    return (np.zeros(NTT_LEN, np.uint32), host_source(blocks, seed), np.zeros((blocks, 512), np.uint64),
            blocks * THREADS)


def work(params):
    return int(params["blocks"]) * THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="ntt",
        kernel="intt_3_64k_modcrt",
        description="HeCBench ntt: one 64 K-point inverse NTT step modulo 2^64 - 2^32 + 1 (8-point NTTs, shared "
        "exchange, bit-serial modular products), 128 blocks of 64 threads",
        cpu=intt_3_64k_modcrt,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    ),
]
