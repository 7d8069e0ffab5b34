"""Complex-number kernels traced by the profiler tests: the parts of a complex scalar, conjugation, magnitude,
complex construction and exponentials, views of complex arrays, and an iterative radix-2 FFT."""

import cmath

import numpy as np


def parts(z, w, out):
    r = z.real
    i = z.imag
    c = z.conjugate()
    m = abs(z)
    u = complex(r, -i)
    out[0] = cmath.exp(u) + np.exp(c)
    out[1] = np.conj(w) * np.conjugate(w) + c
    return m + np.real(w) + np.imag(w)


def array_parts(a, re, mag):
    ar = a.real
    for k in range(a.shape[0]):
        re[k] = ar[k] + a.imag[k]
        mag[k] = np.abs(a[k])
    return np.conjugate(a[0])


def bit_reverse(x):
    """In-place bit-reversal permutation of ``x`` (length a power of two)."""
    n = x.shape[0]
    j = 0
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j ^= bit
        if i < j:
            t = x[i]
            x[i] = x[j]
            x[j] = t


def butterfly(x, a, b, wk):
    u = x[a]
    v = x[b] * wk
    x[a] = u + v
    x[b] = u - v


def fft(x, power):
    """Iterative radix-2 FFT of the complex128 array ``x`` in place (length a power of two); ``power[k]`` gets
    ``|X_k|^2``. Twiddles: the stage's root from ``cmath.exp``, every eighth one refreshed with ``np.exp``."""
    n = x.shape[0]
    bit_reverse(x)
    length = 2
    while length <= n:
        half = length // 2
        w = cmath.exp(-2j * cmath.pi / length)
        for start in range(0, n, length):
            wk = complex(1.0, 0.0)
            for k in range(half):
                if k % 8 == 0:
                    wk = np.exp(complex(0.0, -2.0 * np.pi * k / length))
                butterfly(x, start + k, start + k + half, wk)
                wk = wk * w
        length *= 2
    for k in range(n):
        power[k] = (x[k] * x[k].conjugate()).real
    return abs(x[1]) + x[0].imag


def real_of(obj, n):
    return obj.real + n.real
