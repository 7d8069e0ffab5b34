"""Frequent-pattern compression size, HeCBench ``fpc``: kernels ``fpc_kernel`` and ``fpc2_kernel``.

Each thread classifies one 64-bit word ``value`` (only its low 32 bits are ever nonzero here) by the
frequent-pattern-compression rules and counts its compressed size in bytes ``inc``: zero (1), a sign-extended
byte (``|int(value)| <= 0xFF``: 1), a sign-extended half word (``<= 0xFFFF``: 2), a half word padded with
zeros (``value & 0xFFFF == 0``: 2), two sign-extended bytes in the two half words (2), four repeated bytes
(1), else uncompressed (4); ``|x|`` is the original's ``my_abs``, ``(x ^ (x >> 31)) - (x >> 31)`` on the
word's low 32 bits as a signed int. The block sums its ``inc`` in a shared counter (thread 0 zeroes it,
barrier, ``atomicAdd`` of every thread, barrier) and its last thread adds the block's sum to ``cmp_size``
with a global ``atomicAdd``. ``fpc_kernel`` tests the rules in an ``if``/``else if`` chain (stopping at the
first that holds); ``fpc2_kernel`` evaluates all seven (``f1`` ... ``f7``, each setting a mask) and then
takes the size of the first mask that is set.

Launch: ``wgs`` threads per block, ``wgs^3 / 4 / wgs`` blocks, one thread per word, no guard. Measured point
``256 100`` (work-group size, repeat): 4194304 words, 16384 blocks of 256. The timed launch is the first
(the warm-up call of ``fpc``, resp. ``fpc2``) with ``cmp_size`` zeroed.

Inputs: the host's ``srand(2)``: ``cbuffer[i] = 0xFF << (rand() % 256)`` as a char, over ``wgs^3`` bytes
(the host allocates four times that, but ``convertBuffer2Array`` is given ``wgs^3`` as the size, so only
the first ``wgs^3`` bytes become the ``wgs^3 / 4`` words, four bytes each, little endian). A shift by 32 or
more is undefined in C; x86's shift uses the count modulo 32, so a byte is ``(0xFF << (k % 32)) & 0xFF``
(a quarter of the bytes are nonzero), which is what is drawn here (glibc ``rand`` seeded with ``2 + seed``).

Phases: the barriers split each kernel into three parallel loops over all threads: classification (and the
block's counter zeroed by thread 0), the shared-counter adds, the last thread's global add. The per-thread
``inc`` crossing a barrier is kept in an array. The atomic adds are plain read-modify-writes in the region
(its semantics are a sequential run), ``cuda.atomic.add`` in the GPU port (integer sums: the same result).
The words are a uint64 array as the original's ``unsigned long``; the region reads each as an int64 (exact:
below 2^32) so that NumPy and Numba agree on the integer arithmetic. In ``fpc2_kernel`` the expressions
that ``f2``/``f3`` and ``f4``/``f5`` share (the signed conversion and its absolute value, the low half word)
are evaluated once, as the compiler does after inlining.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

POINTS = {"256 100": {"wgs": 256, "repeat": 100}}
#: 16-thread blocks, 64 blocks
TEST_POINT = {"wgs": 16, "repeat": 1}
#: 2^16 words in blocks of 256 (about 3e6 and 4e6 records; the measured point has 2^22 words)
FEATURE_POINT = {"wgs": 256, "repeat": 100, "size": 256 * 256 * 4}


def fpc_kernel(values, cmp_size, wgs, n_threads):
    """Add the compressed size of every word to ``cmp_size[0]`` (rules tested in turn)."""
    n_blocks = n_threads // wgs
    inc = np.zeros(n_threads, dtype=np.uint32)
    comp = np.zeros(n_blocks, dtype=np.uint32)  # the shared counter of every block
    for gid in numba.prange(n_threads):
        lid = gid % wgs
        value = np.int64(values[gid])
        lo = value & 0xFFFFFFFF
        s = lo - 4294967296 if lo >= 2147483648 else lo  # (int)(value)
        a = -s if s < 0 else s  # my_abs
        if value == 0:
            i = 1
        elif a <= 0xFF:
            i = 1
        elif a <= 0xFFFF:
            i = 2
        elif (value & 0xFFFF) == 0:
            i = 2
        elif (value & 0xFFFF) <= 0xFF and ((value >> 16) & 0xFFFF) <= 0xFF:
            i = 2
        elif ((value & 0xFF) == ((value >> 8) & 0xFF) and (value & 0xFF) == ((value >> 16) & 0xFF)
              and (value & 0xFF) == ((value >> 24) & 0xFF)):
            i = 1
        else:
            i = 4
        inc[gid] = i
        if lid == 0:
            comp[gid // wgs] = 0
    for gid in numba.prange(n_threads):
        comp[gid // wgs] += inc[gid]  # atomicAdd on the shared counter
    for gid in numba.prange(n_threads):
        if gid % wgs == wgs - 1:
            cmp_size[0] += comp[gid // wgs]  # atomicAdd on the global size
    return cmp_size


def fpc2_kernel(values, cmp_size, wgs, n_threads):
    """Add the compressed size of every word to ``cmp_size[0]`` (all seven rules evaluated, first match)."""
    n_blocks = n_threads // wgs
    inc = np.zeros(n_threads, dtype=np.uint32)
    comp = np.zeros(n_blocks, dtype=np.uint32)
    for gid in numba.prange(n_threads):
        lid = gid % wgs
        value = np.int64(values[gid])
        m1 = value == 0  # f1
        lo = value & 0xFFFFFFFF  # f2 and f3: my_abs((int)value), evaluated once as the compiler does
        s = lo - 4294967296 if lo >= 2147483648 else lo
        a = -s if s < 0 else s
        m2 = a <= 0xFF
        m3 = a <= 0xFFFF
        low = value & 0xFFFF  # f4 and f5
        m4 = low == 0
        m5 = low <= 0xFF and ((value >> 16) & 0xFFFF) <= 0xFF
        byte0 = value & 0xFF  # f6
        byte1 = (value >> 8) & 0xFF
        byte2 = (value >> 16) & 0xFF
        byte3 = (value >> 24) & 0xFF
        m6 = byte0 == byte1 and byte0 == byte2 and byte0 == byte3
        if m1:
            i = 1
        elif m2:
            i = 1
        elif m3:
            i = 2
        elif m4:
            i = 2
        elif m5:
            i = 2
        elif m6:
            i = 1
        else:
            i = 4  # f7 always sets its mask
        inc[gid] = i
        if lid == 0:
            comp[gid // wgs] = 0
    for gid in numba.prange(n_threads):
        comp[gid // wgs] += inc[gid]
    for gid in numba.prange(n_threads):
        if gid % wgs == wgs - 1:
            cmp_size[0] += comp[gid // wgs]
    return cmp_size


@cuda.jit(device=True)
def _fpc_size(value):
    lo = value & 0xFFFFFFFF
    s = lo - 4294967296 if lo >= 2147483648 else lo
    a = -s if s < 0 else s
    if value == 0:
        return 1
    if a <= 0xFF:
        return 1
    if a <= 0xFFFF:
        return 2
    if (value & 0xFFFF) == 0:
        return 2
    if (value & 0xFFFF) <= 0xFF and ((value >> 16) & 0xFFFF) <= 0xFF:
        return 2
    if ((value & 0xFF) == ((value >> 8) & 0xFF) and (value & 0xFF) == ((value >> 16) & 0xFF)
            and (value & 0xFF) == ((value >> 24) & 0xFF)):
        return 1
    return 4


@cuda.jit
def _fpc_gpu(values, cmp_size):
    comp = cuda.shared.array(1, dtype=numba.uint32)
    lid = cuda.threadIdx.x
    wgs = cuda.blockDim.x
    gid = cuda.blockIdx.x * wgs + lid
    inc = numba.uint32(_fpc_size(numba.int64(values[gid])))
    if lid == 0:
        comp[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(comp, 0, inc)
    cuda.syncthreads()
    if lid == wgs - 1:
        cuda.atomic.add(cmp_size, 0, comp[0])


def _to_device(values, cmp_size, wgs, n_threads):
    return {"values": cuda.to_device(values), "cmp": cuda.to_device(cmp_size), "wgs": int(wgs),
            "n": int(n_threads)}


def _launch(s):
    _fpc_gpu[s["n"] // s["wgs"], s["wgs"]](s["values"], s["cmp"])


def _from_device(s):
    return s["cmp"].copy_to_host()


@numba.njit(cache=False)
def _bytes_to_words(r, n_words):
    out = np.zeros(n_words, dtype=np.uint64)
    for i in range(n_words):
        w = np.uint64(0)
        for j in range(4):
            byte = (0xFF << ((r[4 * i + j] % 256) % 32)) & 0xFF
            w |= np.uint64(byte) << np.uint64(8 * j)
        out[i] = w
    return out


def make_words(size, seed):
    """The host's ``wgs^3 / 4`` words from the first ``size = wgs^3`` bytes of its ``rand()`` buffer."""
    return _bytes_to_words(glibc_rand(2 + seed, size), size // 4)


def make_inputs(params, seed):
    """The region's arguments at the first (warm-up) launch: the words and a zeroed ``cmp_size``."""
    wgs = int(params["wgs"])
    size = int(params.get("size", wgs ** 3))
    return make_words(size, seed), np.zeros(1, dtype=np.uint32), wgs, work(params)[0]


def work(params):
    wgs = int(params["wgs"])
    n_words = int(params.get("size", wgs ** 3)) // 4
    return n_words // wgs * wgs, wgs


def _kernel(name, region, how):
    return MeasuredKernel(
        source="hecbench",
        application="fpc",
        kernel=name,
        description=f"HeCBench fpc: frequent-pattern compressed size of 32-bit words ({how}), one thread per "
        "word, block sums in shared memory, atomic total",
        cpu=region,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=0,
    )


KERNELS = [_kernel("fpc_kernel", fpc_kernel, "rules in turn"), _kernel("fpc2_kernel", fpc2_kernel, "all rules")]
