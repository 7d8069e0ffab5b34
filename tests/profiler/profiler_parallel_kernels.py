"""numba.njit(parallel=True) regions: their uninstrumented baseline is timed serially."""

import numba
import numpy as np


@numba.njit(parallel=True, fastmath=True)
def scale(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = 2.0 * x[i]
    return out


@numba.njit(parallel=True)
def thread_ids(out):
    for i in numba.prange(out.shape[0]):
        out[i] = numba.get_thread_id()
    return out


def portcast_inputs():
    return (np.arange(100.0), np.zeros(100))
