"""HeCBench ``reverse``: the kernel ``reverse``, as gpuFLOPBench timed it on an RTX 3080.

One block of ``len = 256`` threads reverses an array of 256 ints in place through shared memory: thread
``t`` stages ``d[t]`` in the shared array, the block synchronises, and thread ``t`` writes the staged element
``len - t - 1`` back to ``d[t]``.

Launch: ``reverse<<<1, 256>>>``, launched ``count`` times per test case (``count`` drawn from 100 ... 9999);
the timed (first) launch reverses the host's ``gold_even`` array ``0, 1, ..., 255`` copied to the device
just before. Program argument: the number of test cases (100 in the data), which does not change the launch.

Region: two phases, each a ``prange`` over the 256 threads (the block's one tile of shared memory, then the
writes back after the barrier). Inputs are the original's (no random numbers reach the first launch; the
``seed`` is ignored). Precision: integer only (int32, as the original's ``int``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

LEN = 256  # the program's fixed array length = the block size

POINTS = {"100": {"iterations": 100, "len": LEN}}
TEST_POINT = {"iterations": 1, "len": LEN}


def reverse(d, length):
    """Reverse ``d[:length]`` in place, one work item per element (one block).

    Parameters
    ----------
    d : int32, the array (``length`` elements), overwritten.
    length : the number of elements and threads (256).

    Returns
    -------
    ``d``.
    """
    s = np.empty(length, dtype=np.int32)  # shared memory of the one block
    for t in numba.prange(length):
        s[t] = d[t]
    for t in numba.prange(length):
        d[t] = s[length - t - 1]
    return d


@cuda.jit
def _reverse_gpu(d, length):
    s = cuda.shared.array(LEN, dtype=numba.int32)
    t = cuda.threadIdx.x
    s[t] = d[t]
    cuda.syncthreads()
    d[t] = s[length - t - 1]


def _to_device(d, length):
    return {"d": cuda.to_device(d), "len": int(length)}


def _launch(s):
    _reverse_gpu[1, s["len"]](s["d"], s["len"])


def _from_device(s):
    return s["d"].copy_to_host()


def make_inputs(params, seed):
    """``(d, len)``: ``d = 0, 1, ..., len - 1`` (the host's ``gold_even``)."""
    n = int(params["len"])
    return np.arange(n, dtype=np.int32), n


def work(params):
    return int(params["len"]), int(params["len"])


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="reverse",
        kernel="reverse",
        description="HeCBench reverse: one block reverses 256 ints in place through shared memory",
        cpu=reverse,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=0.0,
        atol=0.0,
    ),
]
