"""matmul_tiled: dense ``C = A @ B`` (float32) with loop blocking on the CPU and shared-memory tiles on the GPU.

The CPU region walks ``C`` tile by tile (the parallel loop runs over output tiles); inside a tile it uses the
cache-friendly i-k-j order. The GPU port is the classic shared-memory algorithm: a block of ``TILE x TILE``
threads computes one output tile, staging one tile of ``A`` and one of ``B`` in shared memory per step.
Blocking is a data-layout change, not an algorithmic one (XAPP Sec. 4.2), so both are the same kernel.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for
from .matmul_naive import _from_device, _to_device, make_inputs  # same data and transfers; only the kernel differs
from .spec import GpuPort, KernelSpec

TILE = 16


def matmul_tiled_cpu(A, B):
    """CPU region: blocked product of two float32 matrices, ``(n, m) @ (m, p)``.

    Parameters
    ----------
    A : numpy.ndarray
        float32 matrix of shape ``(n, m)``.
    B : numpy.ndarray
        float32 matrix of shape ``(m, p)``.

    Returns
    -------
    numpy.ndarray
        float32 matrix of shape ``(n, p)``.
    """
    n, m = A.shape
    p = B.shape[1]
    T = 32
    C = np.zeros((n, p), dtype=np.float32)
    nbi = (n + T - 1) // T
    nbj = (p + T - 1) // T
    for b in numba.prange(nbi * nbj):
        i0 = (b // nbj) * T
        j0 = (b % nbj) * T
        i1 = min(i0 + T, n)
        j1 = min(j0 + T, p)
        for k0 in range(0, m, T):
            k1 = min(k0 + T, m)
            for i in range(i0, i1):
                for k in range(k0, k1):
                    a = A[i, k]
                    for j in range(j0, j1):
                        C[i, j] += a * B[k, j]
    return C


@cuda.jit
def _matmul_tiled_kernel(A, B, C):
    sA = cuda.shared.array(shape=(TILE, TILE), dtype=numba.float32)
    sB = cuda.shared.array(shape=(TILE, TILE), dtype=numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    j = cuda.blockIdx.x * TILE + tx
    i = cuda.blockIdx.y * TILE + ty
    n = C.shape[0]
    p = C.shape[1]
    m = A.shape[1]
    s = numba.float32(0.0)
    for t in range((m + TILE - 1) // TILE):
        ka = t * TILE + tx
        kb = t * TILE + ty
        if i < n and ka < m:
            sA[ty, tx] = A[i, ka]
        else:
            sA[ty, tx] = 0.0
        if kb < m and j < p:
            sB[ty, tx] = B[kb, j]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for k in range(TILE):
            s += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if i < n and j < p:
        C[i, j] = s


def _launch(s):
    n, p = s["C"].shape
    grid = (blocks_for(p, TILE), blocks_for(n, TILE))
    _matmul_tiled_kernel[grid, (TILE, TILE)](s["A"], s["B"], s["C"])


KERNEL = KernelSpec(
    name="matmul_tiled",
    category="dense",
    description="float32 dense matrix product, blocked loops on the CPU, shared-memory tiles on the GPU",
    cpu=matmul_tiled_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 20, "small": 256, "medium": 512, "large": 1024},
    rtol=1e-3,
    atol=1e-3,  # float32 sums of up to ~1000 products, FMA on the GPU only
    expect_gpu_faster=True,
)
