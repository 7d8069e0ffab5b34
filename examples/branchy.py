"""A branchy loop (data-dependent control flow, a helper call): clip-and-score each element.

    portcast profile examples/branchy.py -- 20000
"""

import sys

import numba
import numpy as np

import portcast


@numba.njit
def score(v, t):
    return v * v if v < t else t * (v - t) + 1.0


def main(n):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n)
    out = np.empty(n)
    hits = 0
    with portcast.region("branchy"):
        for i in numba.prange(n):
            v = x[i]
            if v > 1.5 or v < -1.5:
                out[i] = 0.0
                hits += 1
            elif v >= 0:
                out[i] = score(v, 1.0)
            else:
                out[i] = -score(-v, 1.0)
    print(f"branchy n={n}: {hits} clipped, checksum {out.sum():.6f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
