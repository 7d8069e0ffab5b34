"""Miller-Rabin primality tests of 32-bit integers, HeCBench ``mr``: kernels ``mr32_sf`` (straightforward modular
arithmetic) and ``mr32_eff`` (Montgomery arithmetic).

Each thread tests one integer ``n`` three times, with the first 1, 2 and 3 of the bases ``{2, 7, 61}`` (``cnt
= 1, 2, 3``; the three bases decide primality for every 32-bit integer), and adds each verdict (1 prime, 0
composite) to a global counter with ``atomicAdd``. A test writes ``n - 1 = u 2^t`` with ``u`` odd and, per
base ``a``, computes ``x = a^u mod n`` by binary exponentiation; ``x = 1`` or ``n - 1`` passes, otherwise up to
``t - 1`` squarings must reach ``n - 1`` (reaching 1, or never reaching ``n - 1``, is composite).

* ``straightforward_mr32``: ``a`` reduced modulo ``n`` (a zero base is skipped), products in 64 bits modulo
  ``n``.
* ``efficient_mr32``: Montgomery form with ``R = 2^32``: ``npi = -n^-1 mod 2^32`` by Hensel lifting from a
  128-entry table, ``r = 2^32 mod n``, ``A = (a 2^32) mod n``; ``mont_prod(a, b) = (ab + ((ab npi) mod 2^32) n)
  / 2^32`` with the final subtraction and the original's carry fix; the tests compare with ``r`` and ``n - r``
  (one and minus one in Montgomery form).

Launch: ``ceil(100000 / 256) = 391`` blocks of 256, guard ``j < 100000``. Measured point ``default`` (no
arguments). The timed launches are the first of each kernel: the first size of the first benchmark run, the
8-bit random primes.

Inputs (exact): the host's xorshift generator (Marsaglia's, its fixed seed) draws ``n = (rand & 0xFF) | 1``,
moves it to the next number coprime to 105 by the wheel table, at least 5, and then along the wheel until it
is prime (the host tests with ``efficient_mr32``, exact for 32 bits; here a trial division). Only the
first size's 100000 integers are used by the timed launches.

Deliberate differences: the integers are int64 and the 32-bit unsigned arithmetic is int64 arithmetic with
explicit masks (a product past 2^63 wraps, which keeps its low 32 bits exact); the 64-bit Montgomery sums
and the squarings modulo ``n`` are exact for moduli below 2^30 (the measured ones are below 2^9). The
Hensel table is an argument (the original's ``static const`` array in global memory). The atomic adds
are read-modify-writes (integer sums: the same total in any order).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
ITERATIONS = 100000
BASES = np.array([2, 7, 61], dtype=np.int64)
M32 = 0xFFFFFFFF
MASK = np.array([255, 85, 51, 73, 199, 93, 59, 17, 15, 229, 195, 89, 215, 237, 203, 33, 31, 117, 83, 105, 231,
                 125, 91, 49, 47, 5, 227, 121, 247, 13, 235, 65, 63, 149, 115, 137, 7, 157, 123, 81, 79, 37, 3,
                 153, 23, 45, 11, 97, 95, 181, 147, 169, 39, 189, 155, 113, 111, 69, 35, 185, 55, 77, 43, 129,
                 127, 213, 179, 201, 71, 221, 187, 145, 143, 101, 67, 217, 87, 109, 75, 161, 159, 245, 211, 233,
                 103, 253, 219, 177, 175, 133, 99, 249, 119, 141, 107, 193, 191, 21, 243, 9, 135, 29, 251, 209,
                 207, 165, 131, 25, 151, 173, 139, 225, 223, 53, 19, 41, 167, 61, 27, 241, 239, 197, 163, 57,
                 183, 205, 171, 1], dtype=np.int64)
DISTANCE = np.array([0, 8, 6, 4, 2, 0, 0, 2, 0, 0, 2, 0, 4, 2, 0, 0, 4, 2, 0, 2, 0, 0, 2, 0, 4, 2, 0, 4, 2, 0, 0, 4,
                     2, 0, 2, 0, 0, 4, 2, 0, 2, 0, 4, 2, 0, 6, 4, 2, 0, 2, 0, 0, 2, 0, 0, 2, 0, 6, 4, 2, 0, 4, 2,
                     0, 2, 0, 4, 2, 0, 0, 2, 0, 4, 2, 0, 0, 4, 2, 0, 4, 2, 0, 2, 0, 0, 2, 0, 4, 2, 0, 0, 4, 2, 0,
                     2, 0, 0, 2, 0, 0, 8, 6, 4, 2, 0], dtype=np.int64)
ADVANCE = np.array([10, 0, 0, 0, 0, 2, 4, 0, 2, 4, 0, 6, 0, 0, 2, 6, 0, 0, 4, 0, 2, 4, 0, 6, 0, 0, 6, 0, 0, 2, 6, 0,
                    0, 4, 0, 2, 6, 0, 0, 4, 0, 6, 0, 0, 8, 0, 0, 0, 4, 0, 2, 4, 0, 2, 4, 0, 8, 0, 0, 0, 6, 0, 0,
                    4, 0, 6, 0, 0, 2, 4, 0, 6, 0, 0, 2, 6, 0, 0, 6, 0, 0, 4, 0, 2, 4, 0, 6, 0, 0, 2, 6, 0, 0, 4,
                    0, 2, 4, 0, 2, 10, 0, 0, 0, 0, 2], dtype=np.int64)

POINTS = {"default": {"iterations": ITERATIONS, "bits": 8}}
#: 1000 integers (4 blocks)
TEST_POINT = {"iterations": 1000, "bits": 8}
#: 5000 integers (about 3e6 records; the measured point has 10^5)
FEATURE_POINT = {"iterations": 5000, "bits": 8}


def mr32_sf(bases, n32, val, iters, n_threads):
    """Straightforward Miller-Rabin with 1, 2, 3 bases per integer; verdicts summed into ``val[0]``."""
    for j in numba.prange(n_threads):
        if j < iters:
            n = n32[j]
            for cnt in range(1, 4):
                # straightforward_mr32(bases, cnt, n)
                u = n - 1
                t = 0
                while u % 2 == 0:
                    t += 1
                    u >>= 1
                res = 1
                for jb in range(cnt):
                    a = bases[jb]
                    if a >= n:
                        a %= n
                    if a == 0:
                        continue
                    # modular_exponentiation32(a, u, n)
                    d = 1
                    aa = a
                    b = u
                    while True:
                        if b & 1:
                            d = (d * aa) % n
                        aa = (aa * aa) % n
                        b >>= 1
                        if b == 0:
                            break
                    x = d
                    if x == 1 or x == n - 1:
                        continue
                    i = 1
                    while i < t:
                        x = (x * x) % n
                        if x == 1:
                            break
                        if x == n - 1:
                            break
                        i += 1
                    if i < t and x == 1:
                        res = 0
                        break
                    if i == t:
                        res = 0
                        break
                val[0] += res  # atomicAdd
    return val


def mr32_eff(bases, n32, val, mask, iters, n_threads):
    """Montgomery Miller-Rabin with 1, 2, 3 bases per integer; verdicts summed into ``val[0]``."""
    for j in numba.prange(n_threads):
        if j < iters:
            n = n32[j]
            for cnt in range(1, 4):
                # modular_inverse32(n): -n^-1 mod 2^32
                npi = mask[(n >> 1) & 127]
                npi = (npi * ((2 + n * npi) & 0xFFFFFFFF)) & 0xFFFFFFFF
                npi = (npi * ((2 + n * npi) & 0xFFFFFFFF)) & 0xFFFFFFFF
                # compute_modn32(n): 2^32 mod n
                if n <= 2147483648:
                    r = (2147483648 % n) << 1
                    r = r if r < n else r - n
                else:
                    r = (-n) & 0xFFFFFFFF
                u = n - 1
                nr = n - r
                t = 0
                while not (u & 1):
                    t += 1
                    u >>= 1
                res = 1
                for jb in range(cnt):
                    a = bases[jb]
                    d = r
                    u_copy = u
                    aa = (a << 32) % n
                    if aa == 0:
                        continue
                    while True:
                        if u_copy & 1:
                            # d = mont_prod32(d, aa)
                            p = d * aa
                            m = ((p & 0xFFFFFFFF) * npi) & 0xFFFFFFFF
                            w = (p + m * n) >> 32
                            if w < (p >> 32):
                                d = (w - n) & 0xFFFFFFFF
                            else:
                                d = w - n if w >= n else w
                        # aa = mont_square32(aa)
                        p = aa * aa
                        m = ((p & 0xFFFFFFFF) * npi) & 0xFFFFFFFF
                        w = (p + m * n) >> 32
                        if w < (p >> 32):
                            aa = (w - n) & 0xFFFFFFFF
                        else:
                            aa = w - n if w >= n else w
                        u_copy >>= 1
                        if u_copy == 0:
                            break
                    if d == r or d == nr:
                        continue
                    i = 1
                    composite = False
                    while i < t:
                        p = d * d
                        m = ((p & 0xFFFFFFFF) * npi) & 0xFFFFFFFF
                        w = (p + m * n) >> 32
                        if w < (p >> 32):
                            d = (w - n) & 0xFFFFFFFF
                        else:
                            d = w - n if w >= n else w
                        if d == r:
                            composite = True
                            break
                        if d == nr:
                            break
                        i += 1
                    if composite or i == t:
                        res = 0
                        break
                val[0] += res  # atomicAdd
    return val



@cuda.jit
def _sf_gpu(bases, n32, val, iters):
    j = cuda.grid(1)
    if j < iters:
        n = n32[j]
        for cnt in range(1, 4):
            u = n - 1
            t = 0
            while u % 2 == 0:
                t += 1
                u >>= 1
            res = 1
            for jb in range(cnt):
                a = bases[jb]
                if a >= n:
                    a %= n
                if a == 0:
                    continue
                d = 1
                aa = a
                b = u
                while True:
                    if b & 1:
                        d = (d * aa) % n
                    aa = (aa * aa) % n
                    b >>= 1
                    if b == 0:
                        break
                x = d
                if x == 1 or x == n - 1:
                    continue
                verdict = 0
                for _ in range(1, t):
                    x = (x * x) % n
                    if x == 1:
                        break
                    if x == n - 1:
                        verdict = 1
                        break
                if verdict == 0:
                    res = 0
                    break
            cuda.atomic.add(val, 0, res)


@cuda.jit(device=True)
def _mont(a, b, n, npi):
    p = a * b
    m = ((p & 0xFFFFFFFF) * npi) & 0xFFFFFFFF
    w = (p + m * n) >> 32
    if w < (p >> 32):
        return (w - n) & 0xFFFFFFFF
    return w - n if w >= n else w


@cuda.jit
def _eff_gpu(bases, n32, val, mask, iters):
    j = cuda.grid(1)
    if j < iters:
        n = n32[j]
        for cnt in range(1, 4):
            npi = mask[(n >> 1) & 127]
            npi = (npi * ((2 + n * npi) & 0xFFFFFFFF)) & 0xFFFFFFFF
            npi = (npi * ((2 + n * npi) & 0xFFFFFFFF)) & 0xFFFFFFFF
            r = (2147483648 % n) << 1
            r = r if r < n else r - n
            u = n - 1
            nr = n - r
            t = 0
            while not (u & 1):
                t += 1
                u >>= 1
            res = 1
            for jb in range(cnt):
                d = r
                u_copy = u
                aa = (bases[jb] << 32) % n
                if aa == 0:
                    continue
                while True:
                    if u_copy & 1:
                        d = _mont(d, aa, n, npi)
                    aa = _mont(aa, aa, n, npi)
                    u_copy >>= 1
                    if u_copy == 0:
                        break
                if d == r or d == nr:
                    continue
                verdict = 0
                for _ in range(1, t):
                    d = _mont(d, d, n, npi)
                    if d == r:
                        break
                    if d == nr:
                        verdict = 1
                        break
                if verdict == 0:
                    res = 0
                    break
            cuda.atomic.add(val, 0, res)


def _to_device_sf(bases, n32, val, iters, n_threads):
    return {"args": [cuda.to_device(a) for a in (bases, n32, val)], "iters": int(iters), "n": int(n_threads)}


def _launch_sf(s):
    _sf_gpu[s["n"] // BLOCK, BLOCK](*s["args"], s["iters"])


def _to_device_eff(bases, n32, val, mask, iters, n_threads):
    return {"args": [cuda.to_device(a) for a in (bases, n32, val, mask)], "iters": int(iters),
            "n": int(n_threads)}


def _launch_eff(s):
    _eff_gpu[s["n"] // BLOCK, BLOCK](*s["args"], s["iters"])


def _from_device(s):
    return s["args"][2].copy_to_host()


@numba.njit(cache=True)
def _xorshift(count):
    x, y, z, w = 123456789, 362436069, 521288629, 88675123
    out = np.empty(count, dtype=np.int64)
    for k in range(count):
        t = (x ^ (x << 11)) & 0xFFFFFFFF
        x, y, z = y, z, w
        w = (w ^ (w >> 19) ^ (t ^ (t >> 8))) & 0xFFFFFFFF
        out[k] = w
    return out


def _is_prime(n):
    if n < 2:
        return False
    f = 2
    while f * f <= n:
        if n % f == 0:
            return False
        f += 1
    return True


def random_primes(count, bits):
    """The host's ``set_nprimes`` for its first size: ``count`` random primes of about ``bits`` bits."""
    out = np.empty(count, dtype=np.int64)
    mask = (1 << bits) - 1
    for j, v in enumerate(_xorshift(count).tolist()):
        n = (v & mask) | 1
        n += int(DISTANCE[(n >> 1) % 105])
        n = max(n, 5)
        while not _is_prime(n):
            n += int(ADVANCE[(n >> 1) % 105])
        out[j] = n
    return out


def make_inputs_sf(params, seed):
    """``mr32_sf``'s first launch: the 8-bit primes, a zeroed counter (no random input beyond the host's)."""
    it = int(params["iterations"])
    return BASES.copy(), random_primes(it, int(params["bits"])), np.zeros(1, np.int64), it, work(params)[0]


def make_inputs_eff(params, seed):
    """``mr32_eff``'s first launch: the same primes, the counter zeroed again, the Hensel table."""
    it = int(params["iterations"])
    return (BASES.copy(), random_primes(it, int(params["bits"])), np.zeros(1, np.int64), MASK.copy(), it,
            work(params)[0])


def work(params):
    it = int(params["iterations"])
    return (it + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="mr",
        kernel="mr32_sf",
        description="HeCBench mr: straightforward Miller-Rabin tests of random 8-bit primes with 1-3 bases, one "
        "thread per integer, atomic verdict count",
        cpu=mr32_sf,
        gpu=GpuPort(_to_device_sf, _launch_sf, _from_device),
        make_inputs=make_inputs_sf,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=0,
    ),
    MeasuredKernel(
        source="hecbench",
        application="mr",
        kernel="mr32_eff",
        description="HeCBench mr: Montgomery Miller-Rabin tests of random 8-bit primes with 1-3 bases, one "
        "thread per integer, atomic verdict count",
        cpu=mr32_eff,
        gpu=GpuPort(_to_device_eff, _launch_eff, _from_device),
        make_inputs=make_inputs_eff,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=0,
    ),
]
