"""The ntt port against Python integers: addition, subtraction and the modular product are congruent to their
mathematical operations modulo P = 2^64 - 2^32 + 1; ``_ls_modP`` equals a literal transcription of the
original's word arithmetic on a list of 32-bit words (whose borrow handling is not exact modulo P: the borrow of
the low word reaches the next word only when that word is zero, so the shift is not always ``x * 2^l mod P``;
the port keeps that); and the region's output equals the step computed with these on Python integers."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import ntt

P = 2**64 - 2**32 + 1
REGION = numba.njit(ntt.intt_3_64k_modcrt)


M32 = 2**32 - 1


def _ls_reference(x, shift):
    """The original's _ls_modP on a list of 32-bit words, as written there."""
    b = [0] * 7
    if shift == 0:
        b[0], b[1] = x & M32, x >> 32
    elif shift <= 30:
        b[2], b[1], b[0] = (x >> (64 - shift)) & M32, (x >> (32 - shift)) & M32, (x << shift) & M32
    elif shift <= 63:
        b[3], b[2], b[1], b[0] = (x >> (96 - shift)) & M32, (x >> (64 - shift)) & M32, (x << (shift - 32)) & M32, 0
    else:
        b[4], b[3], b[2] = (x >> (128 - shift)) & M32, (x >> (96 - shift)) & M32, (x << (shift - 64)) & M32
    if shift:
        s = b[1] + b[2]
        c = 1 if s > M32 else 0
        b[1] = s & M32
        if b[0] < b[2] and b[1] < 1:
            b[1] = (b[1] - 1) & M32
            c -= 1
        b[0] = (b[0] - b[2]) & M32
        if c == 1:
            s = b[0] + M32
            if s > M32:
                b[1] = (b[1] + 1) & M32
            b[0] = s & M32
    if shift > 30:
        c = 0
        if b[0] < b[3] and b[1] < 1:
            b[1] = (b[1] - 1) & M32
            c = -1
        b[0] = (b[0] - b[3]) & M32
        if c == -1:
            if b[0] < M32:
                b[1] = (b[1] - 1) & M32
            b[0] = (b[0] - M32) & M32
    if shift > 63:
        c = -1 if b[1] < b[4] else 0
        b[1] = (b[1] - b[4]) & M32
        if c == -1:
            if b[0] < M32:
                b[1] = (b[1] - 1) & M32
            b[0] = (b[0] - M32) & M32
    r = b[0] | (b[1] << 32)
    return r - P if r > P else r


def _add(x, y):
    r = (x + y) % 2**64
    if r < x:
        r = (r + M32) % 2**64
    return r - P if r >= P else r


def _sub(x, y):
    r = (x - y) % 2**64
    return (r - M32) % 2**64 if r > x else r


def test_helpers():
    rng = np.random.default_rng(5)
    xs = [int(v) for v in rng.integers(0, 2**63, 300, dtype=np.uint64)] + [0, 1, P - 1, 2**32 - 1, 2**32]
    xs += [int(v) * 2 + 1 for v in rng.integers(0, 2**63, 100, dtype=np.uint64)]
    exact = 0
    for x in xs:
        y = (x * 7919 + 12345) % 2**64
        u, v = np.uint64(x), np.uint64(y)
        assert int(ntt.add_modp(u, v)) == _add(x, y) and _add(x, y) % P == (x + y) % P
        assert int(ntt.sub_modp(u, v)) == _sub(x, y) and _sub(x, y) % P == (x - y) % P
        for shift in (0, 12, 24, 36, 48, 60, 72, 84):
            got = int(ntt.ls_modp(u, shift))
            assert got == _ls_reference(x, shift), (x, shift)
            exact += got % P == (x << shift) % P
        assert int(ntt.mul_modp(u, ntt.SCALE, ntt.VALP)) == x * int(ntt.SCALE) % P
    assert int(ntt.ls_modp(np.uint64(5), 0)) == 5 and 0.2 * 8 * len(xs) < exact < 8 * len(xs)


def _reference(src, blocks):
    def ntt8(a):
        s = [_add(a[0], a[4]), _sub(a[0], a[4]), _add(a[2], a[6]), _sub(a[2], a[6]), _add(a[1], a[5]),
             _sub(a[1], a[5]), _add(a[3], a[7]), _sub(a[3], a[7])]
        x = [0] * 8
        x[0], x[2] = _add(s[0], s[2]), _sub(s[0], s[2])
        t = _ls_reference(s[3], 48)
        x[1], x[3] = _add(s[1], t), _sub(s[1], t)
        x[4], x[6] = _add(s[4], s[6]), _sub(s[4], s[6])
        t = _ls_reference(s[7], 48)
        x[5], x[7] = _add(s[5], t), _sub(s[5], t)
        t5, t6, t7 = _ls_reference(x[5], 24), _ls_reference(x[6], 48), _ls_reference(x[7], 72)
        return [_add(x[0], x[4]), _add(x[1], t5), _add(x[2], t6), _add(x[3], t7),
                _sub(x[0], x[4]), _sub(x[1], t5), _sub(x[2], t6), _sub(x[3], t7)]

    dst = {}
    for b in range(blocks):
        buf = [0] * 512
        for t in range(64):
            fmem = (b << 9) | ((t & 0x3E) << 3) | (t & 1)
            s = ntt8([int(src[fmem | (i << 1)]) for i in range(8)])
            for i in range(8):
                buf[(t << 3) | i] = _ls_reference(s[i], ((t & 1) << 2) * i * 3)
        for t in range(64):
            fbuf = ((t & 0x38) << 3) | (t & 7)
            tmem = (b << 9) | ((t & 0x38) << 3) | (t & 7)
            v = [buf[fbuf | (i << 3)] for i in range(8)]
            for i in range(4):
                for k, val in ((2 * i, _add(v[2 * i], v[2 * i + 1])), (2 * i + 1, _sub(v[2 * i], v[2 * i + 1]))):
                    m = tmem | (k << 3)
                    dst[((m & 0xF) << 12) | (m >> 4)] = (val * int(ntt.SCALE) % P) & 0xFFFFFFFF
    return dst


@pytest.mark.parametrize("blocks,seed", [(1, 0), (3, 1)])
def test_region_equals_exact_modular_reference(blocks, seed):
    dst, src, buf, n = ntt.make_inputs({"blocks": blocks}, seed)
    got = REGION(dst, src, buf, n)
    want = _reference(src, blocks)
    assert len(want) == blocks * 512
    idx = np.array(sorted(want))
    assert np.array_equal(got[idx], np.array([want[i] for i in idx], dtype=np.uint32))
    mask = np.ones(ntt.NTT_LEN, bool)
    mask[idx] = False
    assert not got[mask].any()


def test_source_is_glibc_rand_pairs():
    from kernels.measured._glibc import glibc_rand
    r = glibc_rand(123, 4)
    src = ntt.host_source(1, 0)
    assert int(src[0]) == (int(r[0]) << 32) | int(r[1]) and int(src[1]) == (int(r[2]) << 32) | int(r[3])
