"""prefix_sum: inclusive prefix sum (scan) of an int64 vector.

The CPU region is the serial running sum (a loop-carried dependence through the accumulator); its element
loop is the parallel loop because on the GPU each element is a thread. The GPU port is the hierarchical
scan: a Hillis-Steele scan of each 128-element block in shared memory that also writes the block totals,
a recursive scan of the totals, then a pass adding each block's offset.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 128


def prefix_sum_cpu(x):
    """CPU region: ``out[i] = x[0] + ... + x[i]``.

    Parameters
    ----------
    x : numpy.ndarray
        int64 vector.

    Returns
    -------
    numpy.ndarray
        int64 vector of inclusive prefix sums.
    """
    n = x.shape[0]
    out = np.empty(n, dtype=np.int64)
    acc = 0
    for i in numba.prange(n):
        acc += x[i]
        out[i] = acc
    return out


@cuda.jit
def _block_scan(x, out, totals):
    sh = cuda.shared.array(shape=TPB, dtype=numba.int64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.shape[0]
    if i < n:
        sh[t] = x[i]
    else:
        sh[t] = 0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        v = sh[t]
        if t >= offset:
            v += sh[t - offset]
        cuda.syncthreads()
        sh[t] = v
        cuda.syncthreads()
        offset *= 2
    if i < n:
        out[i] = sh[t]
    if t == TPB - 1:
        totals[cuda.blockIdx.x] = sh[t]


@cuda.jit
def _add_offsets(out, scanned_totals):
    b = cuda.blockIdx.x
    i = cuda.grid(1)
    if b > 0 and i < out.shape[0]:
        out[i] += scanned_totals[b - 1]


def _to_device(x):
    # one level per scan of block totals, until a level fits in one block
    levels = []
    n = x.shape[0]
    src = cuda.to_device(x)
    dst = cuda.device_array(n, dtype=np.int64)
    while True:
        nb = blocks_for(n, TPB)
        totals = cuda.device_array(nb, dtype=np.int64)
        levels.append((src, dst, totals))
        if nb == 1:
            break
        src = totals
        dst = cuda.device_array(nb, dtype=np.int64)
        n = nb
    return {"levels": levels}


def _launch(s):
    levels = s["levels"]
    for src, dst, totals in levels:
        _block_scan[totals.shape[0], TPB](src, dst, totals)
    # levels[k + 1] scanned levels[k]'s totals into levels[k + 1][1]; propagate offsets top-down
    for k in range(len(levels) - 2, -1, -1):
        dst = levels[k][1]
        _add_offsets[levels[k][2].shape[0], TPB](dst, levels[k + 1][1])


def _from_device(s):
    return s["levels"][0][1].copy_to_host()


def make_inputs(n, seed):
    """``(x,)``: an int64 vector of length ``n`` with values in [-1000, 1000]."""
    return (rng(seed).integers(-1000, 1001, n).astype(np.int64),)


KERNEL = KernelSpec(
    name="prefix_sum",
    category="reduction",
    description="inclusive int64 scan; GPU block scans in shared memory plus a recursive scan of block totals",
    cpu=prefix_sum_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 300, "small": 1 << 16, "medium": 1 << 21, "large": 1 << 25},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
