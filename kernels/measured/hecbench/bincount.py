"""HeCBench ``bincount``: the kernel ``bincount`` (PyTorch's histogram kernel), global-memory variant, as the
data's first launch ran it (RTX 3080).

The program draws ``N`` floats from a normal distribution (mean 5, standard deviation 2; ``std::
default_random_engine(123)``), takes their minimum and maximum, and for ``nbins = 768, 1536, ..., 24576``
runs the kernel with global atomics (then the shared-memory variant when the bins fit). The data's first
``bincount`` row is the first launch: global atomics, ``nbins = 768``, on a zeroed output. Each thread walks
a grid-stride loop over the input (the grid covers the input: one element per thread); for a value in
``[min, max]`` it computes ``bin = (int)((v - min) * nbins / (max - min))`` in float, clamps ``bin == nbins``
to the last bin and atomically adds 1 to ``output[bin]`` (int).

Launch: ``ceil(N / 256)`` blocks of 256 (``10000000 100``: 39063 blocks, 10,000,128 threads).

Deliberate differences: the inputs are NumPy normal floats (mean 5, sd 2) from ``seed``, not the C++
engine's sequence (same distribution; the histogram's shape is what matters). The atomic add is a plain
read-modify-write in the region (its semantics are a sequential run), ``cuda.atomic.add`` in the GPU port;
integer counts, so the results are identical. ``block`` is a parameter (the original fixes 256). Precision:
float32 input and bin arithmetic, int32 counts, as the original. Measured size: 2.4e8 records;
``feature_point``: N = 2^18.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
NBINS = 768

POINTS = {"10000000 100": {"n": 10_000_000, "repeat": 100, "nbins": NBINS, "block": BLOCK}}
#: 1000 values (4 blocks of 256, the last partly idle), 768 bins
TEST_POINT = {"n": 1000, "repeat": 1, "nbins": NBINS, "block": BLOCK}
FEATURE_POINT = {"n": 1 << 18, "repeat": 1, "nbins": NBINS, "block": BLOCK}


def bincount(output, inp, nbins, minvalue, maxvalue, input_size, block):
    """CPU region: one launch of ``ceil(input_size / block)`` blocks of ``block``; adds each value's bin
    count into ``output`` (int32 ``nbins``) and returns it.

    Parameters
    ----------
    output : int32 ``(nbins,)``, the counts (zero before the launch).
    inp : float32 ``(input_size,)``. nbins : bins. minvalue, maxvalue : float32 bounds (the input's extremes).
    input_size : values. block : threads per block.
    """
    grid = (input_size + block - 1) // block
    n_threads = grid * block
    span = maxvalue - minvalue
    fbins = np.float32(nbins)
    for gid in numba.prange(n_threads):
        i = gid
        while i < input_size:
            v = inp[i]
            if v >= minvalue and v <= maxvalue:
                b = np.int32((v - minvalue) * fbins / span)
                if b == nbins:
                    b -= 1
                output[b] += 1  # atomicAdd in the original
            i += n_threads
    return output


@cuda.jit
def _bincount_gpu(output, inp, nbins, minvalue, maxvalue, input_size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.gridDim.x * cuda.blockDim.x
    while i < input_size:
        v = inp[i]
        if v >= minvalue and v <= maxvalue:
            b = numba.int32((v - minvalue) * numba.float32(nbins) / (maxvalue - minvalue))
            if b == nbins:
                b -= 1
            cuda.atomic.add(output, b, 1)
        i += stride


def _to_device(output, inp, nbins, minvalue, maxvalue, input_size, block):
    return {"out": cuda.to_device(output), "inp": cuda.to_device(inp), "nbins": int(nbins),
            "lo": np.float32(minvalue), "hi": np.float32(maxvalue), "n": int(input_size), "block": int(block)}


def _launch(s):
    bs = s["block"]
    _bincount_gpu[(s["n"] + bs - 1) // bs, bs](s["out"], s["inp"], s["nbins"], s["lo"], s["hi"], s["n"])


def _from_device(s):
    return s["out"].copy_to_host()


def work(params):
    n, bs = int(params["n"]), int(params["block"])
    return (n + bs - 1) // bs * bs, bs


def make_inputs(params, seed):
    """``(output, input, nbins, min, max, n, block)``: normal floats (mean 5, sd 2), zero counts."""
    n = int(params["n"])
    rng = np.random.default_rng(123 + seed)
    inp = rng.normal(5.0, 2.0, n).astype(np.float32)
    nbins = int(params["nbins"])
    return (np.zeros(nbins, dtype=np.int32), inp, nbins, np.float32(inp.min()), np.float32(inp.max()), n,
            int(params["block"]))


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="bincount",
        kernel="bincount",
        description="HeCBench bincount: histogram of 10^7 normal floats into 768 bins with global atomic adds, "
        "one thread per value (grid-stride loop)",
        cpu=bincount,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    ),
]
