"""The PRESENT-80 lightweight block cipher, HeCBench ``present``: the kernel ``present``.

``num`` 8-byte plain texts, each with its own 80-bit key. Thread ``gid`` (guard ``gid < num``) encrypts text
``gid`` with 31 rounds: the state is the text XOR the first 8 key bytes; each round applies the S-box and the
bit permutation through four 256-entry byte tables (``sbox_pmt_0 .. 3``: the S-box on both nibbles of a state
byte, followed by that byte's share of the permutation; each cipher byte ORs masked entries for four state
bytes) and, from the second round on, XORs the round key first; the key schedule rotates the 80-bit key
register left by 61 bits (byte shifts by 5 and 3), passes its top nibble through the S-box and XORs the round
counter into bytes 5, 7, 8; after the last round the round key is XORed once more (``rounds == 31``). The
cipher text is written to ``ciphers``.

Launch: blocks of 256, ``ceil(num / 256)`` blocks. Measured point ``100000 100`` (texts, repeat): 391
blocks; the timed launch is the first of the host's ``repeat + 1`` identical launches (the host ignores
its time, but the data's first row is this launch).

Inputs: the host's ``srand(8)``; text ``i`` gets the key ``rand() % 256`` x 10 and the plain text ``PRESENT\0``
shuffled ``i`` times by ``std::shuffle`` with a freshly seeded ``std::default_random_engine(8)`` (so the same
permutation applied ``i`` times; libstdc++'s shuffle reproduced here). glibc ``rand`` seeded with ``8 + seed``
(seed 0 gives the original's keys and texts). The tables are built from PRESENT's S-box and the bit pattern
of the original's tables (output bit ``2m`` of table ``3 - r`` is S-box output bit ``(m + r) % 4``, bit ``2m
+ 1`` is bit ``4 + (m + r) % 4``), which reproduces them exactly.

Deliberate differences: the state and round-key arrays (``state[8]``, ``rounh_key[10]``, constant-indexed,
so registers in the original) are scalars, the key bytes are loaded once, and the cipher bytes (the original
reads and writes them through the output pointer, ``__restrict__``, which the compiler keeps in registers)
are kept in scalars and stored after the last round. Byte arithmetic is done on integers with ``& 0xFF``
where the original truncates to ``uint8_t``.

Precision: integer (bytes), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
ROUNDS = 31
SBOX4 = (0xC, 0x5, 0x6, 0xB, 0x9, 0x0, 0xA, 0xD, 0x3, 0xE, 0xF, 0x8, 0x4, 0x7, 0x1, 0x2)
PLAIN = b"PRESENT\0"
MINSTD_A = 16807
MINSTD_M = 2147483647

POINTS = {"100000 100": {"num": 100_000, "rounds": ROUNDS}}
TEST_POINT = {"num": 300, "rounds": ROUNDS}
#: 1024 texts instead of 100000 (about 4.8e6 records; the same 31 rounds)
FEATURE_POINT = {"num": 1024, "rounds": ROUNDS}


def present(num, rounds, plains, keys, ciphers, sbox, pmt_0, pmt_1, pmt_2, pmt_3, n_threads):
    """Every text's PRESENT-80 encryption (``rounds`` rounds) into ``ciphers``."""
    for gid in numba.prange(n_threads):
        if gid < num:
            k0 = keys[gid * 10 + 0]
            k1 = keys[gid * 10 + 1]
            k2 = keys[gid * 10 + 2]
            k3 = keys[gid * 10 + 3]
            k4 = keys[gid * 10 + 4]
            k5 = keys[gid * 10 + 5]
            k6 = keys[gid * 10 + 6]
            k7 = keys[gid * 10 + 7]
            k8 = keys[gid * 10 + 8]
            k9 = keys[gid * 10 + 9]
            # add key
            s0 = plains[gid * 8 + 0] ^ k0
            s1 = plains[gid * 8 + 1] ^ k1
            s2 = plains[gid * 8 + 2] ^ k2
            s3 = plains[gid * 8 + 3] ^ k3
            s4 = plains[gid * 8 + 4] ^ k4
            s5 = plains[gid * 8 + 5] ^ k5
            s6 = plains[gid * 8 + 6] ^ k6
            s7 = plains[gid * 8 + 7] ^ k7
            # update key (rotate the 80-bit key left by 61 bits, S-box on the top nibble, round counter 1)
            r9 = ((k6 << 5) | (k7 >> 3)) & 0xFF
            r8 = ((k5 << 5) | (k6 >> 3)) & 0xFF
            r7 = ((k4 << 5) | (k5 >> 3)) & 0xFF
            r6 = ((k3 << 5) | (k4 >> 3)) & 0xFF
            r5 = ((k2 << 5) | (k3 >> 3)) & 0xFF
            r4 = ((k1 << 5) | (k2 >> 3)) & 0xFF
            r3 = ((k0 << 5) | (k1 >> 3)) & 0xFF
            r2 = ((k9 << 5) | (k0 >> 3)) & 0xFF
            r1 = ((k8 << 5) | (k9 >> 3)) & 0xFF
            r0 = ((k7 << 5) | (k8 >> 3)) & 0xFF
            r0 = (r0 & 0x0F) | sbox[r0 >> 4]
            r8 ^= 0x80  # the round counter 1 shifted left by 7 (its right shift by 1 into byte 7 is 0)
            # substitution and permutation
            c0 = ((pmt_3[s0] & 0xC0) | (pmt_2[s1] & 0x30) | (pmt_1[s2] & 0x0C)
                  | (pmt_0[s3] & 0x03))
            c1 = ((pmt_3[s4] & 0xC0) | (pmt_2[s5] & 0x30) | (pmt_1[s6] & 0x0C)
                  | (pmt_0[s7] & 0x03))
            c2 = ((pmt_0[s0] & 0xC0) | (pmt_3[s1] & 0x30) | (pmt_2[s2] & 0x0C)
                  | (pmt_1[s3] & 0x03))
            c3 = ((pmt_0[s4] & 0xC0) | (pmt_3[s5] & 0x30) | (pmt_2[s6] & 0x0C)
                  | (pmt_1[s7] & 0x03))
            c4 = ((pmt_1[s0] & 0xC0) | (pmt_0[s1] & 0x30) | (pmt_3[s2] & 0x0C)
                  | (pmt_2[s3] & 0x03))
            c5 = ((pmt_1[s4] & 0xC0) | (pmt_0[s5] & 0x30) | (pmt_3[s6] & 0x0C)
                  | (pmt_2[s7] & 0x03))
            c6 = ((pmt_2[s0] & 0xC0) | (pmt_1[s1] & 0x30) | (pmt_0[s2] & 0x0C)
                  | (pmt_3[s3] & 0x03))
            c7 = ((pmt_2[s4] & 0xC0) | (pmt_1[s5] & 0x30) | (pmt_0[s6] & 0x0C)
                  | (pmt_3[s7] & 0x03))
            for counter in range(2, rounds + 1):
                s0 = c0 ^ r0
                s1 = c1 ^ r1
                s2 = c2 ^ r2
                s3 = c3 ^ r3
                s4 = c4 ^ r4
                s5 = c5 ^ r5
                s6 = c6 ^ r6
                s7 = c7 ^ r7
                c0 = ((pmt_3[s0] & 0xC0) | (pmt_2[s1] & 0x30) | (pmt_1[s2] & 0x0C)
                      | (pmt_0[s3] & 0x03))
                c1 = ((pmt_3[s4] & 0xC0) | (pmt_2[s5] & 0x30) | (pmt_1[s6] & 0x0C)
                      | (pmt_0[s7] & 0x03))
                c2 = ((pmt_0[s0] & 0xC0) | (pmt_3[s1] & 0x30) | (pmt_2[s2] & 0x0C)
                      | (pmt_1[s3] & 0x03))
                c3 = ((pmt_0[s4] & 0xC0) | (pmt_3[s5] & 0x30) | (pmt_2[s6] & 0x0C)
                      | (pmt_1[s7] & 0x03))
                c4 = ((pmt_1[s0] & 0xC0) | (pmt_0[s1] & 0x30) | (pmt_3[s2] & 0x0C)
                      | (pmt_2[s3] & 0x03))
                c5 = ((pmt_1[s4] & 0xC0) | (pmt_0[s5] & 0x30) | (pmt_3[s6] & 0x0C)
                      | (pmt_2[s7] & 0x03))
                c6 = ((pmt_2[s0] & 0xC0) | (pmt_1[s1] & 0x30) | (pmt_0[s2] & 0x0C)
                      | (pmt_3[s3] & 0x03))
                c7 = ((pmt_2[s4] & 0xC0) | (pmt_1[s5] & 0x30) | (pmt_0[s6] & 0x0C)
                      | (pmt_3[s7] & 0x03))
                r5 ^= (counter << 2) & 0xFF
                t2 = r9
                t1 = r8
                t0 = r7
                r9 = ((r6 << 5) | (r7 >> 3)) & 0xFF
                r8 = ((r5 << 5) | (r6 >> 3)) & 0xFF
                r7 = ((r4 << 5) | (r5 >> 3)) & 0xFF
                r6 = ((r3 << 5) | (r4 >> 3)) & 0xFF
                r5 = ((r2 << 5) | (r3 >> 3)) & 0xFF
                r4 = ((r1 << 5) | (r2 >> 3)) & 0xFF
                r3 = ((r0 << 5) | (r1 >> 3)) & 0xFF
                r2 = ((t2 << 5) | (r0 >> 3)) & 0xFF
                r1 = ((t1 << 5) | (t2 >> 3)) & 0xFF
                r0 = ((t0 << 5) | (t1 >> 3)) & 0xFF
                r0 = (r0 & 0x0F) | sbox[r0 >> 4]
            if rounds == 31:
                c0 ^= r0
                c1 ^= r1
                c2 ^= r2
                c3 ^= r3
                c4 ^= r4
                c5 ^= r5
                c6 ^= r6
                c7 ^= r7
            ciphers[gid * 8 + 0] = c0
            ciphers[gid * 8 + 1] = c1
            ciphers[gid * 8 + 2] = c2
            ciphers[gid * 8 + 3] = c3
            ciphers[gid * 8 + 4] = c4
            ciphers[gid * 8 + 5] = c5
            ciphers[gid * 8 + 6] = c6
            ciphers[gid * 8 + 7] = c7
    return ciphers


@cuda.jit
def _present_gpu(num, rounds, plains, keys, ciphers, sbox, pmt_0, pmt_1, pmt_2, pmt_3):
    gid = cuda.grid(1)
    if gid < num:
        k0 = keys[gid * 10 + 0]
        k1 = keys[gid * 10 + 1]
        k2 = keys[gid * 10 + 2]
        k3 = keys[gid * 10 + 3]
        k4 = keys[gid * 10 + 4]
        k5 = keys[gid * 10 + 5]
        k6 = keys[gid * 10 + 6]
        k7 = keys[gid * 10 + 7]
        k8 = keys[gid * 10 + 8]
        k9 = keys[gid * 10 + 9]
        # add key
        s0 = plains[gid * 8 + 0] ^ k0
        s1 = plains[gid * 8 + 1] ^ k1
        s2 = plains[gid * 8 + 2] ^ k2
        s3 = plains[gid * 8 + 3] ^ k3
        s4 = plains[gid * 8 + 4] ^ k4
        s5 = plains[gid * 8 + 5] ^ k5
        s6 = plains[gid * 8 + 6] ^ k6
        s7 = plains[gid * 8 + 7] ^ k7
        # update key (rotate the 80-bit key left by 61 bits, S-box on the top nibble, round counter 1)
        r9 = ((k6 << 5) | (k7 >> 3)) & 0xFF
        r8 = ((k5 << 5) | (k6 >> 3)) & 0xFF
        r7 = ((k4 << 5) | (k5 >> 3)) & 0xFF
        r6 = ((k3 << 5) | (k4 >> 3)) & 0xFF
        r5 = ((k2 << 5) | (k3 >> 3)) & 0xFF
        r4 = ((k1 << 5) | (k2 >> 3)) & 0xFF
        r3 = ((k0 << 5) | (k1 >> 3)) & 0xFF
        r2 = ((k9 << 5) | (k0 >> 3)) & 0xFF
        r1 = ((k8 << 5) | (k9 >> 3)) & 0xFF
        r0 = ((k7 << 5) | (k8 >> 3)) & 0xFF
        r0 = (r0 & 0x0F) | sbox[r0 >> 4]
        r8 ^= 0x80  # the round counter 1 shifted left by 7 (its right shift by 1 into byte 7 is 0)
        # substitution and permutation
        c0 = ((pmt_3[s0] & 0xC0) | (pmt_2[s1] & 0x30) | (pmt_1[s2] & 0x0C)
              | (pmt_0[s3] & 0x03))
        c1 = ((pmt_3[s4] & 0xC0) | (pmt_2[s5] & 0x30) | (pmt_1[s6] & 0x0C)
              | (pmt_0[s7] & 0x03))
        c2 = ((pmt_0[s0] & 0xC0) | (pmt_3[s1] & 0x30) | (pmt_2[s2] & 0x0C)
              | (pmt_1[s3] & 0x03))
        c3 = ((pmt_0[s4] & 0xC0) | (pmt_3[s5] & 0x30) | (pmt_2[s6] & 0x0C)
              | (pmt_1[s7] & 0x03))
        c4 = ((pmt_1[s0] & 0xC0) | (pmt_0[s1] & 0x30) | (pmt_3[s2] & 0x0C)
              | (pmt_2[s3] & 0x03))
        c5 = ((pmt_1[s4] & 0xC0) | (pmt_0[s5] & 0x30) | (pmt_3[s6] & 0x0C)
              | (pmt_2[s7] & 0x03))
        c6 = ((pmt_2[s0] & 0xC0) | (pmt_1[s1] & 0x30) | (pmt_0[s2] & 0x0C)
              | (pmt_3[s3] & 0x03))
        c7 = ((pmt_2[s4] & 0xC0) | (pmt_1[s5] & 0x30) | (pmt_0[s6] & 0x0C)
              | (pmt_3[s7] & 0x03))
        for counter in range(2, rounds + 1):
            s0 = c0 ^ r0
            s1 = c1 ^ r1
            s2 = c2 ^ r2
            s3 = c3 ^ r3
            s4 = c4 ^ r4
            s5 = c5 ^ r5
            s6 = c6 ^ r6
            s7 = c7 ^ r7
            c0 = ((pmt_3[s0] & 0xC0) | (pmt_2[s1] & 0x30) | (pmt_1[s2] & 0x0C)
                  | (pmt_0[s3] & 0x03))
            c1 = ((pmt_3[s4] & 0xC0) | (pmt_2[s5] & 0x30) | (pmt_1[s6] & 0x0C)
                  | (pmt_0[s7] & 0x03))
            c2 = ((pmt_0[s0] & 0xC0) | (pmt_3[s1] & 0x30) | (pmt_2[s2] & 0x0C)
                  | (pmt_1[s3] & 0x03))
            c3 = ((pmt_0[s4] & 0xC0) | (pmt_3[s5] & 0x30) | (pmt_2[s6] & 0x0C)
                  | (pmt_1[s7] & 0x03))
            c4 = ((pmt_1[s0] & 0xC0) | (pmt_0[s1] & 0x30) | (pmt_3[s2] & 0x0C)
                  | (pmt_2[s3] & 0x03))
            c5 = ((pmt_1[s4] & 0xC0) | (pmt_0[s5] & 0x30) | (pmt_3[s6] & 0x0C)
                  | (pmt_2[s7] & 0x03))
            c6 = ((pmt_2[s0] & 0xC0) | (pmt_1[s1] & 0x30) | (pmt_0[s2] & 0x0C)
                  | (pmt_3[s3] & 0x03))
            c7 = ((pmt_2[s4] & 0xC0) | (pmt_1[s5] & 0x30) | (pmt_0[s6] & 0x0C)
                  | (pmt_3[s7] & 0x03))
            r5 ^= (counter << 2) & 0xFF
            t2 = r9
            t1 = r8
            t0 = r7
            r9 = ((r6 << 5) | (r7 >> 3)) & 0xFF
            r8 = ((r5 << 5) | (r6 >> 3)) & 0xFF
            r7 = ((r4 << 5) | (r5 >> 3)) & 0xFF
            r6 = ((r3 << 5) | (r4 >> 3)) & 0xFF
            r5 = ((r2 << 5) | (r3 >> 3)) & 0xFF
            r4 = ((r1 << 5) | (r2 >> 3)) & 0xFF
            r3 = ((r0 << 5) | (r1 >> 3)) & 0xFF
            r2 = ((t2 << 5) | (r0 >> 3)) & 0xFF
            r1 = ((t1 << 5) | (t2 >> 3)) & 0xFF
            r0 = ((t0 << 5) | (t1 >> 3)) & 0xFF
            r0 = (r0 & 0x0F) | sbox[r0 >> 4]
        if rounds == 31:
            c0 ^= r0
            c1 ^= r1
            c2 ^= r2
            c3 ^= r3
            c4 ^= r4
            c5 ^= r5
            c6 ^= r6
            c7 ^= r7
        ciphers[gid * 8 + 0] = c0
        ciphers[gid * 8 + 1] = c1
        ciphers[gid * 8 + 2] = c2
        ciphers[gid * 8 + 3] = c3
        ciphers[gid * 8 + 4] = c4
        ciphers[gid * 8 + 5] = c5
        ciphers[gid * 8 + 6] = c6
        ciphers[gid * 8 + 7] = c7


def _to_device(num, rounds, plains, keys, ciphers, sbox, pmt_0, pmt_1, pmt_2, pmt_3, n_threads):
    s = {k: cuda.to_device(a) for k, a in zip(("plains", "keys", "ciphers", "sbox", "p0", "p1", "p2", "p3"),
                                               (plains, keys, ciphers, sbox, pmt_0, pmt_1, pmt_2, pmt_3))}
    s.update(num=int(num), rounds=int(rounds), n=int(n_threads))
    return s


def _launch(s):
    _present_gpu[s["n"] // BLOCK, BLOCK](s["num"], s["rounds"], s["plains"], s["keys"], s["ciphers"], s["sbox"],
                                         s["p0"], s["p1"], s["p2"], s["p3"])


def _from_device(s):
    return s["ciphers"].copy_to_host()


def tables():
    """The key schedule's S-box (``S(x) << 4``) and the four substitution-permutation tables ``sbox_pmt_0 ..
    3`` of the original."""
    sbox = np.array([v << 4 for v in SBOX4], dtype=np.uint8)
    pmt = []
    for j in range(4):
        r = 3 - j
        t = np.zeros(256, dtype=np.uint8)
        for x in range(256):
            y = (SBOX4[x >> 4] << 4) | SBOX4[x & 15]
            out = 0
            for m in range(4):
                out |= ((y >> ((m + r) % 4)) & 1) << (2 * m)
                out |= ((y >> (4 + (m + r) % 4)) & 1) << (2 * m + 1)
            t[x] = out
        pmt.append(t)
    return sbox, pmt[0], pmt[1], pmt[2], pmt[3]


def _minstd0(state):
    state = state * MINSTD_A % MINSTD_M
    return state, state


def _uniform(lo, hi, state):
    """libstdc++'s ``uniform_int_distribution<unsigned long>(lo, hi)`` drawing from ``minstd_rand0`` (range
    ``1 .. 2^31 - 2``): rejection of the top, then division by the scaling."""
    urngrange = MINSTD_M - 2 - 1
    urange = hi - lo
    uerange = urange + 1
    scaling = urngrange // uerange
    past = uerange * scaling
    while True:
        state, v = _minstd0(state)
        ret = v - 1
        if ret < past:
            return state, ret // scaling + lo


def shuffle_permutation(n=8, seed=8):
    """The index permutation that libstdc++'s ``std::shuffle`` applies to ``n`` elements with a fresh
    ``std::default_random_engine(seed)`` (its two-swaps-per-draw variant: the first swap alone when ``n`` is
    even, then pairs of positions from one draw)."""
    idx = list(range(n))
    state = seed % MINSTD_M or 1
    i = 1
    if n % 2 == 0:
        state, d = _uniform(0, 1, state)
        idx[i], idx[d] = idx[d], idx[i]
        i += 1
    while i != n:
        swap_range = i + 1
        state, x = _uniform(0, swap_range * (swap_range + 1) - 1, state)
        a, b = x // (swap_range + 1), x % (swap_range + 1)
        idx[i], idx[a] = idx[a], idx[i]
        i += 1
        idx[i], idx[b] = idx[b], idx[i]
        i += 1
    return idx


def make_inputs(params, seed):
    """The host's keys (``rand() % 256``) and shuffled plain texts, a zeroed cipher buffer and the tables."""
    num = int(params["num"])
    keys = (glibc_rand(8 + seed, 10 * num) % 256).astype(np.uint8)
    perm = shuffle_permutation()
    plains = np.empty((num, 8), dtype=np.uint8)
    p = list(PLAIN)
    for i in range(num):
        plains[i] = p
        p = [p[k] for k in perm]
    return (num, int(params["rounds"]), plains.reshape(-1), keys, np.zeros(8 * num, dtype=np.uint8), *tables(),
            work(params)[0])


def work(params):
    num = int(params["num"])
    return (num + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="present",
        kernel="present",
        description="HeCBench present: PRESENT-80 block cipher, 31 rounds per 8-byte text, one thread each",
        cpu=present,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=0,
    ),
]
