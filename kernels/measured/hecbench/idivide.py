"""Integer division by run-time constants, HeCBench ``idivide``: kernels ``throughput_test``, ``latency_test``
and ``check`` (the ``int_fastdiv`` library's benchmark: division by a magic multiply-and-shift).

* ``throughput_test(d1, d2, d3, dummy, buf)``: thread ``x`` computes three independent quotients ``x / d1 +
  x / d2 + x / d3`` and stores the sum only if ``aggregate & dummy == 1`` (C precedence: ``aggregate & (dummy
  == 1)``, which is 0 for ``dummy = 0``: nothing is stored).
* ``latency_test(d1 ... d10, dummy, buf)``: ten dependent divisions ``x /= d1`` ... ``x /= d10``, same store.
* ``check(divisor, results)``: thread ``x`` divides ``x`` and then ``-x`` both by plain ``int`` division and by
  ``int_fastdiv``'s ``q = (M n) >> 32; q += n n_add_sign; if s >= 0: q >>= s; q += (unsigned) q >> 31`` and
  counts mismatches with an ``atomicAdd`` (recording the first).

Launches: ``throughput_test`` and ``latency_test``: 32768 blocks of 256 threads, the first launch of each is
the ``int`` instantiation of the warm-up loop (``(3, 5, 7, 0, 0)``, resp. ``(1, 2, ..., 10, 0, 0)``).
``check``: ``ceil(10^6 / 256) = 3907`` blocks of 256, first launch the functional test's first divisor, 1
(``int_fastdiv(1)``: ``M = 0``, ``s = -1``, ``n_add_sign = 1``). Measured point ``100`` (repeat). No random
input.

Deliberate differences: the divisor object (built on the host, passed by value) is its four fields
``d, M, s, n_add_sign`` as scalars; C's truncating division is written for the nonnegative dividends and
positive divisors these launches have (``x / d`` with ``x >= 0``; ``check``'s negative dividend through its
magnitude); ``(unsigned long long)(M n) >> 32`` truncated to ``int`` equals the arithmetic shift of the
64-bit product, which is what the region computes. The atomic add is a read-modify-write (a sequential
run's semantics). ``int`` stays int (Numba's int64; no value here leaves the 32-bit range).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
GRID = 32 * 1024

POINTS = {"100": {"repeat": 100}}
#: test point: the same kernels on fewer blocks (``blocks`` overrides the launch's grid)
TEST_POINT = {"repeat": 1, "blocks": 4}
#: 512 blocks (about 2e6 records; the measured launches have 32768, resp. 3907)
FEATURE_POINT = {"repeat": 100, "blocks": 512}


def throughput_test(d1, d2, d3, dummy, buf, n_threads):
    """Three independent divisions per thread (the store is dead for ``dummy = 0``)."""
    for x in numba.prange(n_threads):
        x1 = x // d1
        x2 = x // d2
        x3 = x // d3
        aggregate = x1 + x2 + x3
        if aggregate & (1 if dummy == 1 else 0):
            buf[0] = aggregate
    return buf


def latency_test(d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, dummy, buf, n_threads):
    """Ten dependent divisions per thread (the store is dead for ``dummy = 0``)."""
    for gid in numba.prange(n_threads):
        x = gid
        x //= d1
        x //= d2
        x //= d3
        x //= d4
        x //= d5
        x //= d6
        x //= d7
        x //= d8
        x //= d9
        x //= d10
        if x & (1 if dummy == 1 else 0):
            buf[0] = x
    return buf


def check(d, m, s, n_add_sign, results, n_threads):
    """Compare plain and magic-number division of ``x`` and ``-x`` by ``d`` (``d > 0``)."""
    for divident in numba.prange(n_threads):
        quotient = divident // d
        q = (m * divident) >> 32
        q += divident * n_add_sign
        if s >= 0:
            q >>= s
            q += 1 if q < 0 else 0  # (unsigned) q >> 31
        if quotient != q:
            error_id = results[0]  # atomicAdd
            results[0] = error_id + 1
            if error_id == 0:
                results[1] = divident
                results[2] = quotient
                results[3] = q
        divident = -divident
        quotient = -((-divident) // d)  # C truncates toward zero
        q = (m * divident) >> 32
        q += divident * n_add_sign
        if s >= 0:
            q >>= s
            q += 1 if q < 0 else 0
        if quotient != q:
            error_id = results[0]
            results[0] = error_id + 1
            if error_id == 0:
                results[1] = divident
                results[2] = quotient
                results[3] = q
    return results


@cuda.jit
def _throughput_gpu(d1, d2, d3, dummy, buf):
    x = cuda.grid(1)
    aggregate = x // d1 + x // d2 + x // d3
    if aggregate & (1 if dummy == 1 else 0):
        buf[0] = aggregate


@cuda.jit
def _latency_gpu(d, dummy, buf):
    x = cuda.grid(1)
    for k in range(10):
        x //= d[k]
    if x & (1 if dummy == 1 else 0):
        buf[0] = x


@cuda.jit
def _check_gpu(d, m, s, n_add_sign, results):
    divident = cuda.grid(1)
    for sign in range(2):
        if sign == 1:
            divident = -divident
        quotient = divident // d if divident >= 0 else -((-divident) // d)
        q = (m * divident) >> 32
        q += divident * n_add_sign
        if s >= 0:
            q >>= s
            q += 1 if q < 0 else 0
        if quotient != q:
            error_id = cuda.atomic.add(results, 0, 1)
            if error_id == 0:
                results[1] = divident
                results[2] = quotient
                results[3] = q


def _from_device(s):
    return s["buf"].copy_to_host()


def _to_device_t(d1, d2, d3, dummy, buf, n_threads):
    return {"args": (int(d1), int(d2), int(d3), int(dummy)), "buf": cuda.to_device(buf), "n": int(n_threads)}


def _launch_t(s):
    _throughput_gpu[s["n"] // BLOCK, BLOCK](*s["args"], s["buf"])


def _to_device_l(*args):
    *ds, dummy, buf, n_threads = args
    return {"d": cuda.to_device(np.array(ds, dtype=np.int64)), "dummy": int(dummy), "buf": cuda.to_device(buf),
            "n": int(n_threads)}


def _launch_l(s):
    _latency_gpu[s["n"] // BLOCK, BLOCK](s["d"], s["dummy"], s["buf"])


def _to_device_c(d, m, s, n_add_sign, results, n_threads):
    return {"args": (int(d), int(m), int(s), int(n_add_sign)), "buf": cuda.to_device(results),
            "n": int(n_threads)}


def _launch_c(st):
    _check_gpu[st["n"] // BLOCK, BLOCK](*st["args"], st["buf"])


def magic(d):
    """``int_fastdiv(d)``'s ``(M, s, n_add_sign)``, the host constructor's algorithm (Hacker's Delight)."""
    if d == 1:
        return 0, -1, 1
    if d == -1:
        return 0, -1, -1
    two31 = 0x80000000
    u32 = 0xFFFFFFFF
    ad = (-d if d < 0 else (1 if d == 0 else d)) & u32
    t = (two31 + ((d & u32) >> 31)) & u32
    anc = (t - 1 - t % ad) & u32
    p = 31
    q1, q2 = two31 // anc, two31 // ad
    r1, r2 = (two31 - q1 * anc) & u32, (two31 - q2 * ad) & u32
    while True:
        p += 1
        q1, r1 = (2 * q1) & u32, (2 * r1) & u32
        if r1 >= anc:
            q1, r1 = (q1 + 1) & u32, (r1 - anc) & u32
        q2, r2 = (2 * q2) & u32, (2 * r2) & u32
        if r2 >= ad:
            q2, r2 = (q2 + 1) & u32, (r2 - ad) & u32
        delta = (ad - r2) & u32
        if not (q1 < delta or (q1 == delta and r1 == 0)):
            break
    m = (q2 + 1) & u32
    m = m - 2**32 if m >= 2**31 else m  # stored in an int
    if d < 0:
        m = -m
    n_add_sign = 1 if (d > 0 and m < 0) else (-1 if (d < 0 and m > 0) else 0)
    return m, p - 32, n_add_sign


def make_inputs_t(params, seed):
    return 3, 5, 7, 0, np.zeros(1, dtype=np.int64), work_perf(params)[0]


def make_inputs_l(params, seed):
    return (*range(1, 11), 0, np.zeros(1, dtype=np.int64), work_perf(params)[0])


def make_inputs_c(params, seed):
    d = 1
    return (d, *magic(d), np.zeros(4, dtype=np.int64), work_check(params)[0])


def work_perf(params):
    return int(params.get("blocks", GRID)) * BLOCK, BLOCK


def work_check(params):
    blocks = int(params.get("blocks", (1000000 + BLOCK - 1) // BLOCK))
    return blocks * BLOCK, BLOCK


def _kernel(name, region, port, make_inputs, work, what):
    return MeasuredKernel(
        source="hecbench",
        application="idivide",
        kernel=name,
        description=f"HeCBench idivide: {what}",
        cpu=region,
        gpu=port,
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=0,
    )


KERNELS = [
    _kernel("throughput_test", throughput_test, GpuPort(_to_device_t, _launch_t, _from_device), make_inputs_t,
            work_perf, "three independent integer divisions by constants per thread"),
    _kernel("latency_test", latency_test, GpuPort(_to_device_l, _launch_l, _from_device), make_inputs_l,
            work_perf, "ten dependent integer divisions by constants per thread"),
    _kernel("check", check, GpuPort(_to_device_c, _launch_c, _from_device), make_inputs_c, work_check,
            "plain against magic-number division of x and -x, mismatches counted atomically"),
]
