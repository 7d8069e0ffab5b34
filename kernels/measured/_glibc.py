"""The C library's ``rand()`` as glibc implements it, so that ports can draw the inputs their host code drew.

The OpenDwarfs host programs seed ``srand`` with a fixed value (srad and nw: 7; the csr host's vectors are
drawn unseeded, which is seed 1) and build their inputs from ``rand()``; reproducing glibc's generator gives
exactly the same images, sequences and vectors. glibc's ``rand`` is its additive feedback generator
(``random`` with the default 128-byte state): 31 words filled from the seed by the Park-Miller minimal
standard generator (multiplier 16807 modulo 2**31 - 1, Schrage's factorisation), the first 3 copied after
them, then ``r[k] = r[k - 31] + r[k - 3]`` modulo 2**32; the first 310 results are discarded and each
result is ``r[k] >> 1`` (31 bits).
"""

from __future__ import annotations

import numba
import numpy as np

RAND_MAX = 2147483647


@numba.njit(cache=False)
def _fill(seed, count):
    warm = 31 + 3 + 310
    r = np.empty(warm + count, dtype=np.uint32)
    word = np.int64(seed & 0xFFFFFFFF)
    if word >= 2**31:  # the state holds the seed as a signed 32-bit word
        word -= 2**32
    if word == 0:
        word = 1
    r[0] = word & 0xFFFFFFFF
    for i in range(1, 31):
        # Schrage: 16807 * word mod (2**31 - 1) without overflow; C division truncates toward zero
        hi = abs(word) // 127773
        lo = abs(word) % 127773
        if word < 0:
            hi = -hi
            lo = -lo
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        r[i] = word & 0xFFFFFFFF
    for i in range(31, 34):
        r[i] = r[i - 31]
    for i in range(34, warm + count):
        r[i] = (np.int64(r[i - 31]) + np.int64(r[i - 3])) & 0xFFFFFFFF
    out = np.empty(count, dtype=np.int64)
    for k in range(count):
        out[k] = r[warm + k] >> 1
    return out


def glibc_rand(seed: int, count: int) -> np.ndarray:
    """The first ``count`` values ``rand()`` returns after ``srand(seed)`` (int64, each in [0, RAND_MAX])."""
    return _fill(np.int64(seed), np.int64(count))
