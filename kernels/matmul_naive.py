"""matmul_naive: dense ``C = A @ B`` (float32), one output element per parallel iteration.

The CPU region is the textbook triple loop (inner product over ``k``, column access of ``B`` with stride
``n`` floats); the GPU port gives each thread one element of ``C`` with a 2-D grid and reads ``A`` and ``B``
straight from global memory (no tiling: compare with matmul_tiled). Compute-bound, highly parallel.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

BX, BY = 16, 16


def matmul_naive_cpu(A, B):
    """CPU region: the product of two float32 matrices, ``(n, m) @ (m, p)``.

    Parameters
    ----------
    A : numpy.ndarray
        float32 matrix of shape ``(n, m)``.
    B : numpy.ndarray
        float32 matrix of shape ``(m, p)``.

    Returns
    -------
    numpy.ndarray
        float32 matrix of shape ``(n, p)``, accumulated in float32 in ``k`` order.
    """
    n, m = A.shape
    p = B.shape[1]
    C = np.empty((n, p), dtype=np.float32)
    for idx in numba.prange(n * p):
        i = idx // p
        j = idx - i * p
        s = np.float32(0.0)
        for k in range(m):
            s += A[i, k] * B[k, j]
        C[i, j] = s
    return C


@cuda.jit
def _matmul_kernel(A, B, C):
    j, i = cuda.grid(2)  # x = column (coalesced over B and C), y = row
    if i < C.shape[0] and j < C.shape[1]:
        s = numba.float32(0.0)
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s


def _to_device(A, B):
    return {"A": cuda.to_device(A), "B": cuda.to_device(B),
            "C": cuda.device_array((A.shape[0], B.shape[1]), dtype=np.float32)}


def _launch(s):
    n, p = s["C"].shape
    grid = (blocks_for(p, BX), blocks_for(n, BY))
    _matmul_kernel[grid, (BX, BY)](s["A"], s["B"], s["C"])


def _from_device(s):
    return s["C"].copy_to_host()


def make_inputs(n, seed):
    """``(A, B)``: two ``n x n`` float32 matrices uniform in [-1, 1)."""
    g = rng(seed)
    A = g.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
    B = g.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
    return A, B


KERNEL = KernelSpec(
    name="matmul_naive",
    category="dense",
    description="float32 dense matrix product, one output element per thread, no tiling",
    cpu=matmul_naive_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 12, "small": 128, "medium": 384, "large": 768},
    rtol=1e-3,
    atol=1e-3,  # float32 sums of up to ~1000 products, FMA on the GPU only
    expect_gpu_faster=True,
)
