"""SAXPY compiled with Numba, its region traced at machine level: y = a*x + y over n elements.

    python examples/numba_saxpy.py                          # plain run (fills Numba's cache)
    portcast profile --native examples/numba_saxpy.py        # n = 100000, traced under Valgrind
    portcast profile --native examples/numba_saxpy.py -- 1000

The markers (profiler.native.numba_markers) are Valgrind client requests compiled into the @njit code:
under `portcast profile --native` (or `portcast record -- python examples/numba_saxpy.py`) the machine
instructions between region_start and region_end are traced; in a plain run they cost a few register
rotations. region_thread(i) tells Portcast that iteration i is one GPU thread of the port.
Python and Numba start slowly under Valgrind (about a minute here), so run the script once normally
first: with cache=True the compiled code is then loaded from Numba's cache instead of compiled again
under the tool.
"""

import sys

import numba
import numpy as np

from profiler.native.numba_markers import region_end, region_start, region_thread


@numba.njit(cache=True)
def saxpy(a, x, y):
    region_start("saxpy")
    for i in range(x.size):
        region_thread(i)
        y[i] = a * x[i] + y[i]
    region_end("saxpy")
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
    print(f"numba saxpy n={n}: checksum {y.sum():.6f}")
