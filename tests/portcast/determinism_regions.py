"""Two marked regions whose inputs sit at a CPU address the caller chooses (for tests/portcast/test_determinism.py).

    PORTCAST_TEST_SHIFT=8 python -m portcast profile tests/portcast/determinism_regions.py --json -- 20000 64

Each input array is made inside a bytearray of its own, starting ``PORTCAST_TEST_SHIFT`` bytes past a 4 KiB
boundary of the CPU's memory (default 0): the same values, the same shapes, a different placement.
"""

import os
import sys

import numpy as np

import portcast

SHIFT = int(os.environ.get("PORTCAST_TEST_SHIFT", "0"))


def placed(values):
    """A copy of ``values`` in memory of its own whose first byte is SHIFT bytes past a 4 KiB boundary."""
    raw = bytearray(values.nbytes + 8192)
    start = np.frombuffer(raw, np.uint8).__array_interface__["data"][0]
    off = (SHIFT - start) % 4096
    out = np.frombuffer(memoryview(raw)[off:off + values.nbytes], values.dtype).reshape(values.shape)
    out[...] = values
    return out


@portcast.region("saxpy")
def saxpy(a, x, y):
    for i in portcast.parallel(range(x.shape[0])):
        y[i] = a * x[i] + y[i]
    return y


@portcast.region("jacobi")
def jacobi(a, b):
    n = a.shape[0]
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
    return b


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    rng = np.random.default_rng(0)
    x, y = placed(rng.random(n)), placed(rng.random(n))
    assert x.__array_interface__["data"][0] % 4096 == SHIFT
    saxpy(2.0, x, y)
    a = placed(rng.random((m, m)))
    b = placed(np.zeros((m, m)))
    jacobi(a, b)
    print(f"n={n} m={m} shift={SHIFT}: {y.sum():.6f} {b.sum():.6f}")
