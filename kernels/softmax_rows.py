"""softmax_rows: numerically stable softmax of every row of a float32 matrix (1000 columns).

Per row: a max reduction, ``exp`` of every element with a sum reduction, a scaling pass. The CPU region's
parallel loop runs over rows; the GPU port gives each row a block of 128 threads that stride over the
columns and combine their maxima and sums through shared-memory tree reductions.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ._launch import rng
from .spec import GpuPort, KernelSpec

TPB = 128
COLS = 1000


def softmax_rows_cpu(X):
    """CPU region: ``exp(X - rowmax) / rowsum`` per row.

    Parameters
    ----------
    X : numpy.ndarray
        float32 matrix of shape ``(rows, cols)``.

    Returns
    -------
    numpy.ndarray
        float32 matrix of the same shape whose rows sum to 1.
    """
    rows, cols = X.shape
    Y = np.empty((rows, cols), dtype=np.float32)
    for r in numba.prange(rows):
        mx = X[r, 0]
        for c in range(1, cols):
            if X[r, c] > mx:
                mx = X[r, c]
        s = 0.0
        for c in range(cols):
            e = math.exp(X[r, c] - mx)
            Y[r, c] = e
            s += e
        inv = 1.0 / s
        for c in range(cols):
            Y[r, c] = Y[r, c] * inv
    return Y


@cuda.jit
def _softmax_kernel(X, Y):
    red = cuda.shared.array(shape=TPB, dtype=numba.float32)
    sums = cuda.shared.array(shape=TPB, dtype=numba.float64)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = X.shape[1]
    mx = -np.inf
    c = t
    while c < cols:
        if X[r, c] > mx:
            mx = X[r, c]
        c += TPB
    red[t] = mx
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if t < half and red[t + half] > red[t]:
            red[t] = red[t + half]
        cuda.syncthreads()
        half //= 2
    rowmax = red[0]
    s = 0.0
    c = t
    while c < cols:
        e = math.exp(X[r, c] - rowmax)
        Y[r, c] = e
        s += e
        c += TPB
    sums[t] = s
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if t < half:
            sums[t] += sums[t + half]
        cuda.syncthreads()
        half //= 2
    inv = 1.0 / sums[0]
    c = t
    while c < cols:
        Y[r, c] = Y[r, c] * inv
        c += TPB


def _to_device(X):
    return {"X": cuda.to_device(X), "Y": cuda.device_array(X.shape, dtype=np.float32)}


def _launch(s):
    _softmax_kernel[s["X"].shape[0], TPB](s["X"], s["Y"])


def _from_device(s):
    return s["Y"].copy_to_host()


def make_inputs(n, seed):
    """``(X,)``: ``n`` rows of 1000 float32 logits, normal with standard deviation 3."""
    return ((rng(seed).standard_normal((n, COLS)) * 3.0).astype(np.float32),)


KERNEL = KernelSpec(
    name="softmax_rows",
    category="reduction",
    description="row-wise stable softmax of a float32 matrix; GPU block per row with shared-memory reductions",
    cpu=softmax_rows_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 3, "small": 512, "medium": 4096, "large": 32768},
    rtol=1e-5,
    atol=1e-8,
    expect_gpu_faster=True,
)
