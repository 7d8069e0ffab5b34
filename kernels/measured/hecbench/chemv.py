"""Complex Hermitian matrix-vector product, HeCBench ``chemv`` (PPCG-generated CUDA from a VOBLA BLAS): the
kernels ``kernel0`` and ``kernel1``, their first launches.

``Y = beta Y + alpha A X`` for a Hermitian ``N x N`` single-precision complex matrix (``N = 370``, compiled in)
stored in ``AT`` (row-major, ``AT[r * N + c]``, the upper triangle read directly, the lower through the
transpose). One thread per row ``i = 32 b0 + t0`` (12 blocks of 32). The host launches ``kernel0`` then
``kernel1``, 1000 times; the first launch of each is ported.

* ``kernel0``: for ``c1 = 0, 32, ... <= min(N - 2, 32 b0 + 30)`` (the loop bound depends on the block only; a
  barrier ends every step): at ``c1 = 0`` rows ``i < N`` scale ``Y[i]`` by ``beta`` and add ``alpha Re(AT[i][i])
  X[i]``; then they add ``alpha AT[j][i] X[j]`` for ``j = c1 + c3 < i`` (``c3 < 32``).
* ``kernel1``: the polyhedral schedule skews the column by the row (``q = j - 1 + 183 i``) and tiles ``q`` by 32:
  ``c1`` runs over multiples of 32 from ``32 * 184 b0`` to ``min(184 (N - 2), 32 * 183 b0 + 32 floor((183 * 31 +
  N - 2) / 32))``, and ``c3`` over ``[max(0, 184 i - c1), min(31, 183 i + N - 2 - c1)]``: every row adds
  ``alpha conj(AT[i][j]) X[j]`` for ``j = c1 + c3 + 1 - 183 i`` from ``i + 1`` to ``N - 1``, many ``c1`` steps
  doing nothing for a given thread. The original writes these bounds as numbers for ``N = 370`` (``5888 b0``,
  ``67712``, ``5856 b0 + 6016``, ``AT[5984 b0 + 187 t0 + c1 + c3 + 1]``); here they are written in ``N`` with the
  schedule's skew 183 kept, which gives exactly the original's numbers at ``N = 370`` and the same product at
  the smaller test size.

The complex values are float32 arrays of shape ``(n, 2)`` (``.Re``, ``.Im``), so the layout is the original's
array of structs. Every read of ``Y`` in the original is a separate load (no ``__restrict__``); the region reads
it as often. The barrier in the ``c1`` loops orders nothing (no shared memory; each thread updates its own
row), so the region has one parallel loop per kernel.

Inputs: the host's, exactly: ``X[i] = (i + 5, 2 i)``, ``Y[i] = (3 i, i + 7)``, ``AT[i][j] = (i + j, i + 3)``,
``alpha = 3.14 + 1.59i``, ``beta = 2.71 + 8.28i``. ``kernel1``'s first launch follows ``kernel0``'s, so its ``Y``
is ``kernel0``'s output (computed here by the ``kernel0`` region, under Numba). ``seed`` is unused.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

THREADS = 32
SKEW = 183  # the column skew of kernel1's schedule

POINTS = {"default": {"N": 370}}
TEST_POINT = {"N": 70}
ALPHA = (3.14, 1.59)
BETA = (2.71, 8.28)


def kernel0(at, x, y, alpha_im, alpha_re, beta_im, beta_re, N, n_threads):
    """``Y = beta Y + alpha (diag + lower part) X``. Returns ``y``."""
    for gid in numba.prange(n_threads):
        b0 = gid // THREADS
        i = gid  # 32 * b0 + t0
        c1 = 0
        while c1 <= min(N - 2, THREADS * b0 + 30):
            if i <= N - 1 and c1 == 0:
                p5r = y[i, 0] * beta_re - y[i, 1] * beta_im
                p5i = y[i, 1] * beta_re + y[i, 0] * beta_im
                y[i, 0] = p5r
                y[i, 1] = p5i
                p2r = alpha_re * at[(N + 1) * i, 0]
                p2i = alpha_im * at[(N + 1) * i, 0]
                p3r = p2r * x[i, 0] - p2i * x[i, 1]
                p3i = p2i * x[i, 0] + p2r * x[i, 1]
                p4r = y[i, 0] + p3r
                p4i = y[i, 1] + p3i
                y[i, 0] = p4r
                y[i, 1] = p4i
            if i <= N - 1:
                for c3 in range(0, min(31, i - c1 - 1) + 1):
                    k = i + N * c1 + N * c3
                    p97r = alpha_re * at[k, 0] - alpha_im * at[k, 1]
                    p97i = alpha_im * at[k, 0] + alpha_re * at[k, 1]
                    p98r = p97r * x[c1 + c3, 0] - p97i * x[c1 + c3, 1]
                    p98i = p97i * x[c1 + c3, 0] + p97r * x[c1 + c3, 1]
                    p99r = y[i, 0] + p98r
                    p99i = y[i, 1] + p98i
                    y[i, 0] = p99r
                    y[i, 1] = p99i
            c1 += 32
    return y


def kernel1(at, x, y, alpha_im, alpha_re, N, n_threads):
    """``Y += alpha (upper part, conjugated) X``. Returns ``y``."""
    for gid in numba.prange(n_threads):
        b0 = gid // THREADS
        i = gid
        c1 = THREADS * (SKEW + 1) * b0
        top = min((SKEW + 1) * (N - 2), THREADS * SKEW * b0 + (SKEW * 31 + N - 2) // THREADS * THREADS)
        while c1 <= top:
            for c3 in range(max(0, (SKEW + 1) * i - c1), min(31, SKEW * i + N - 2 - c1) + 1):
                k = (N - SKEW) * i + c1 + c3 + 1
                j = c1 + c3 + 1 - SKEW * i
                p94r = alpha_re * at[k, 0] - alpha_im * (-at[k, 1])
                p94i = alpha_im * at[k, 0] + alpha_re * (-at[k, 1])
                p95r = p94r * x[j, 0] - p94i * x[j, 1]
                p95i = p94i * x[j, 0] + p94r * x[j, 1]
                p96r = y[i, 0] + p95r
                p96i = y[i, 1] + p95i
                y[i, 0] = p96r
                y[i, 1] = p96i
            c1 += 32
    return y


@cuda.jit
def _kernel0_gpu(at, x, y, alpha_im, alpha_re, beta_im, beta_re, N):
    b0 = cuda.blockIdx.x
    i = THREADS * b0 + cuda.threadIdx.x
    c1 = 0
    while c1 <= min(N - 2, THREADS * b0 + 30):
        if i <= N - 1 and c1 == 0:
            p5r = y[i, 0] * beta_re - y[i, 1] * beta_im
            p5i = y[i, 1] * beta_re + y[i, 0] * beta_im
            y[i, 0] = p5r
            y[i, 1] = p5i
            p2r = alpha_re * at[(N + 1) * i, 0]
            p2i = alpha_im * at[(N + 1) * i, 0]
            p3r = p2r * x[i, 0] - p2i * x[i, 1]
            p3i = p2i * x[i, 0] + p2r * x[i, 1]
            p4r = y[i, 0] + p3r
            p4i = y[i, 1] + p3i
            y[i, 0] = p4r
            y[i, 1] = p4i
        if i <= N - 1:
            for c3 in range(0, min(31, i - c1 - 1) + 1):
                k = i + N * c1 + N * c3
                p97r = alpha_re * at[k, 0] - alpha_im * at[k, 1]
                p97i = alpha_im * at[k, 0] + alpha_re * at[k, 1]
                p98r = p97r * x[c1 + c3, 0] - p97i * x[c1 + c3, 1]
                p98i = p97i * x[c1 + c3, 0] + p97r * x[c1 + c3, 1]
                p99r = y[i, 0] + p98r
                p99i = y[i, 1] + p98i
                y[i, 0] = p99r
                y[i, 1] = p99i
        cuda.syncthreads()
        c1 += 32


@cuda.jit
def _kernel1_gpu(at, x, y, alpha_im, alpha_re, N):
    b0 = cuda.blockIdx.x
    i = THREADS * b0 + cuda.threadIdx.x
    c1 = THREADS * (SKEW + 1) * b0
    top = min((SKEW + 1) * (N - 2), THREADS * SKEW * b0 + (SKEW * 31 + N - 2) // THREADS * THREADS)
    while c1 <= top:
        for c3 in range(max(0, (SKEW + 1) * i - c1), min(31, SKEW * i + N - 2 - c1) + 1):
            k = (N - SKEW) * i + c1 + c3 + 1
            j = c1 + c3 + 1 - SKEW * i
            p94r = alpha_re * at[k, 0] - alpha_im * (-at[k, 1])
            p94i = alpha_im * at[k, 0] + alpha_re * (-at[k, 1])
            p95r = p94r * x[j, 0] - p94i * x[j, 1]
            p95i = p94i * x[j, 0] + p94r * x[j, 1]
            p96r = y[i, 0] + p95r
            p96i = y[i, 1] + p95i
            y[i, 0] = p96r
            y[i, 1] = p96i
        cuda.syncthreads()
        c1 += 32


def _to_device(at, x, y, *scalars):
    return {"at": cuda.to_device(at), "x": cuda.to_device(x), "y": cuda.to_device(y), "scalars": scalars}


def _launch0(s):
    sc = s["scalars"]
    _kernel0_gpu[sc[-1] // THREADS, THREADS](s["at"], s["x"], s["y"], *sc[:-1])


def _launch1(s):
    sc = s["scalars"]
    _kernel1_gpu[sc[-1] // THREADS, THREADS](s["at"], s["x"], s["y"], *sc[:-1])


def _from_device(s):
    return s["y"].copy_to_host()


def host_data(N):
    """``(AT, X, Y)`` as the host fills them, float32 ``(n, 2)``."""
    i = np.arange(N, dtype=np.float32)
    x = np.stack([i + 5, 2 * i], axis=1).astype(np.float32)
    y = np.stack([3 * i, i + 7], axis=1).astype(np.float32)
    r, c = np.indices((N, N), dtype=np.float32)
    at = np.stack([(r + c).ravel(), (r + 3).ravel()], axis=1).astype(np.float32)
    return at, x, y


_KERNEL0_NJIT = numba.njit(kernel0)


def make_inputs0(params, seed):
    N = int(params["N"])
    at, x, y = host_data(N)
    f = np.float32
    return at, x, y, f(ALPHA[1]), f(ALPHA[0]), f(BETA[1]), f(BETA[0]), N, work(params)[0]


def make_inputs1(params, seed):
    at, x, y, ai, ar, bi, br, N, n = make_inputs0(params, seed)
    y = _KERNEL0_NJIT(at, x, y, ai, ar, bi, br, N, n)
    return at, x, y, ai, ar, N, n


def work(params):
    return (int(params["N"]) + THREADS - 1) // THREADS * THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="chemv",
        kernel=kernel,
        description=f"HeCBench chemv: {what} of a 370 x 370 Hermitian complex float mat-vec (PPCG code), one "
        "thread per row, 32-thread blocks",
        cpu=cpu,
        gpu=GpuPort(_to_device, launch, _from_device),
        make_inputs=make,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-3,
    )
    for kernel, what, cpu, launch, make in (
        ("kernel0", "beta scaling, diagonal and lower triangle", kernel0, _launch0, make_inputs0),
        ("kernel1", "upper triangle (skewed, tiled schedule)", kernel1, _launch1, make_inputs1),
    )
]
