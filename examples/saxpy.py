"""SAXPY, the hello-world of GPU ports: y = a*x + y over n elements.

    portcast profile examples/saxpy.py            # n = 100000
    portcast profile examples/saxpy.py -- 1000000
    portcast profile --function examples/saxpy.py:saxpy   # uses portcast_inputs()
"""

import sys

import numpy as np

import portcast


@portcast.region("saxpy")
def saxpy(a, x, y):
    for i in portcast.parallel(range(x.shape[0])):
        y[i] = a * x[i] + y[i]
    return y


def portcast_inputs(n=1000):
    rng = np.random.default_rng(0)
    return (2.0, rng.random(n), rng.random(n))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    a, x, y = portcast_inputs(n)
    expected = a * x + y
    saxpy(a, x, y)
    assert np.allclose(y, expected)
    print(f"saxpy n={n}: checksum {y.sum():.6f}")
