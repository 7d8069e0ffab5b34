"""HeCBench ``convolution3D``: the kernels ``conv3d_s1``, ``conv3d_s2`` and ``conv3d_s3``, a direct
multi-channel 2-D convolution (a convolution layer's forward pass, "valid", stride 1; RTX 3080).

``Y[n, m, h, w] = sum_{c, p, q} X[n, c, h + p, w + q] * W[m, c, p, q]`` for a batch of ``N`` images of ``C``
channels ``Hin x Win`` and ``M`` filters ``C x K x K`` (Kirk and Hwu, chapter 16): one thread per output
pixel of one (image, filter) pair, in ``16 x 16`` tiles; the thread sums its ``C K K`` products in the order
``c, p, q`` into a float and stores it. The three kernels differ only in how the 3-D grid is mapped to
``(n, m, tile)``: ``s1`` grid ``(N, M, Z)``, ``s2`` ``(M, Z, N)``, ``s3`` ``(Z, N, M)``, with ``Z`` the
tiles of an output map (``ceil(Hout / 16) * ceil(Wout / 16)``, tile ``z`` at row ``z / W_grid`` and column
``z % W_grid``); threads past the output's edge do nothing.

Point: ``32 1 6 32 32 5 100`` (``N C M Win Hin K repeat``): 32 images of 1 x 32 x 32, 6 filters of 5 x 5
(LeNet's first layer), output 28 x 28, 2 x 2 tiles; 32 x 6 x 4 blocks of 256 = 196608 threads, 150528 of them
active, 25 products each. The timed launches are each kernel's first, in the warm-up call of the program:
``s1`` first (output buffer filled with -1 by the host), then ``s2`` and ``s3`` after the earlier kernels
(the output then already holds the convolution; ``make_inputs`` computes it with NumPy).

Inputs: the program's: ``srand(123)``, filters ``rand() % 31``, then images ``rand() % 13`` (glibc ``rand``
reproduced; ``seed`` is added to 123, so seed 0 is the program's data), stored as float. The test point is
2 images of 1 x 12 x 12, 2 filters of 3 x 3 (one tile; 1024 threads, 200 active).

Precision: float32 (``T = float``), sums of whole numbers below 2^24, so exact in any order.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

TILE = 16

POINTS = {"32 1 6 32 32 5 100": {"n": 32, "c": 1, "m": 6, "win": 32, "hin": 32, "k": 5, "repeat": 100}}
TEST_POINT = {"n": 2, "c": 1, "m": 2, "win": 12, "hin": 12, "k": 3, "repeat": 1}
#: the measured regions have 1.1e8 records: one image instead of 32 (6144 threads)
FEATURE_POINT = {"n": 1, "c": 1, "m": 6, "win": 32, "hin": 32, "k": 5, "repeat": 1}


@numba.njit
def _output_point(X, W, Y, n, m, z, ty, tx, C, M, K, Hin, Win, Hout, Wout, W_grid):
    """One thread's work: output pixel ``(ty, tx)`` of tile ``z`` of map ``(n, m)``, if inside the output."""
    h = z // W_grid * TILE + ty
    w = z % W_grid * TILE + tx
    if h < Hout and w < Wout:
        s = np.float32(0.0)
        for c in range(C):
            for p in range(K):
                for q in range(K):
                    s += (X[n * C * Hin * Win + c * Hin * Win + (h + p) * Win + w + q]
                          * W[m * C * K * K + c * K * K + p * K + q])
        Y[n * M * Hout * Wout + m * Hout * Wout + h * Wout + w] = s


def conv3d_s1(X, W, Y, N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z):
    """CPU region: one launch of ``conv3d_s1`` (grid ``(N, M, Z)`` of 16 x 16 blocks); writes ``Y``.

    Parameters
    ----------
    X : float32 ``N * C * Hin * Win``. W : float32 ``M * C * K * K``. Y : float32 ``N * M * Hout * Wout``.
    N, C, M, K, Hin, Win, Hout, Wout : sizes. W_grid : tiles per output row. Z : tiles per output map.

    Returns
    -------
    ``Y``.
    """
    threads = TILE * TILE
    for gid in numba.prange(N * M * Z * threads):
        blk = gid // threads
        loc = gid - blk * threads
        n = blk % N
        m = (blk // N) % M
        z = blk // (N * M)
        ty = loc // TILE
        _output_point(X, W, Y, n, m, z, ty, loc - ty * TILE, C, M, K, Hin, Win, Hout, Wout, W_grid)
    return Y


def conv3d_s2(X, W, Y, N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z):
    """CPU region: one launch of ``conv3d_s2`` (grid ``(M, Z, N)``); arguments as :func:`conv3d_s1`."""
    threads = TILE * TILE
    for gid in numba.prange(M * Z * N * threads):
        blk = gid // threads
        loc = gid - blk * threads
        m = blk % M
        z = (blk // M) % Z
        n = blk // (M * Z)
        ty = loc // TILE
        _output_point(X, W, Y, n, m, z, ty, loc - ty * TILE, C, M, K, Hin, Win, Hout, Wout, W_grid)
    return Y


def conv3d_s3(X, W, Y, N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z):
    """CPU region: one launch of ``conv3d_s3`` (grid ``(Z, N, M)``); arguments as :func:`conv3d_s1`."""
    threads = TILE * TILE
    for gid in numba.prange(Z * N * M * threads):
        blk = gid // threads
        loc = gid - blk * threads
        z = blk % Z
        n = (blk // Z) % N
        m = blk // (Z * N)
        ty = loc // TILE
        _output_point(X, W, Y, n, m, z, ty, loc - ty * TILE, C, M, K, Hin, Win, Hout, Wout, W_grid)
    return Y


@cuda.jit(device=True)
def _conv_point(X, W, Y, n, m, z, C, M, K, Hin, Win, Hout, Wout, W_grid):
    h = z // W_grid * TILE + cuda.threadIdx.y
    w = z % W_grid * TILE + cuda.threadIdx.x
    if h < Hout and w < Wout:
        s = numba.float32(0.0)
        for c in range(C):
            for p in range(K):
                for q in range(K):
                    s += (X[n * C * Hin * Win + c * Hin * Win + (h + p) * Win + w + q]
                          * W[m * C * K * K + c * K * K + p * K + q])
        Y[n * M * Hout * Wout + m * Hout * Wout + h * Wout + w] = s


@cuda.jit
def _s1_gpu(X, W, Y, C, M, K, Hin, Win, Hout, Wout, W_grid):
    _conv_point(X, W, Y, cuda.blockIdx.x, cuda.blockIdx.y, cuda.blockIdx.z, C, M, K, Hin, Win, Hout, Wout, W_grid)


@cuda.jit
def _s2_gpu(X, W, Y, C, M, K, Hin, Win, Hout, Wout, W_grid):
    _conv_point(X, W, Y, cuda.blockIdx.z, cuda.blockIdx.x, cuda.blockIdx.y, C, M, K, Hin, Win, Hout, Wout, W_grid)


@cuda.jit
def _s3_gpu(X, W, Y, C, M, K, Hin, Win, Hout, Wout, W_grid):
    _conv_point(X, W, Y, cuda.blockIdx.y, cuda.blockIdx.z, cuda.blockIdx.x, C, M, K, Hin, Win, Hout, Wout, W_grid)


def _port(kernel, order):
    def to_device(X, W, Y, N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z):
        grid = {"nmz": (N, M, Z), "mzn": (M, Z, N), "znm": (Z, N, M)}[order]
        return {"arrays": (cuda.to_device(X), cuda.to_device(W), cuda.to_device(Y)), "grid": grid,
                "sizes": (C, M, K, Hin, Win, Hout, Wout, W_grid)}

    def launch(s):
        kernel[s["grid"], (TILE, TILE)](*s["arrays"], *s["sizes"])

    def from_device(s):
        return s["arrays"][2].copy_to_host()

    return GpuPort(to_device, launch, from_device)


def sizes(params):
    """``(N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z)`` as the host computes them."""
    N, C, M, K = (int(params[k]) for k in ("n", "c", "m", "k"))
    Hin, Win = int(params["hin"]), int(params["win"])
    Hout, Wout = Hin - K + 1, Win - K + 1
    W_grid = (Wout + TILE - 1) // TILE
    H_grid = (Hout + TILE - 1) // TILE
    return N, C, M, K, Hin, Win, Hout, Wout, W_grid, H_grid * W_grid


def program_data(params, seed):
    """The program's filters and images (float32): ``srand(123 + seed)``, ``rand() % 31`` then ``rand() % 13``."""
    N, C, M, K, Hin, Win, *_ = sizes(params)
    w_size, x_size = M * C * K * K, N * C * Hin * Win
    r = glibc_rand(123 + seed, w_size + x_size)
    return (r[w_size:] % 13).astype(np.float32), (r[:w_size] % 31).astype(np.float32)


def convolve(X, W, params):
    """NumPy: the layer's output (float32, ``N * M * Hout * Wout``)."""
    N, C, M, K, Hin, Win, Hout, Wout, _, _ = sizes(params)
    x = X.reshape(N, C, Hin, Win).astype(np.float64)
    w = W.reshape(M, C, K, K).astype(np.float64)
    y = np.zeros((N, M, Hout, Wout))
    for p in range(K):
        for q in range(K):
            y += np.einsum("nchw,mc->nmhw", x[:, :, p:p + Hout, q:q + Wout], w[:, :, p, q])
    return y.astype(np.float32).ravel()


def _inputs(first):
    def make_inputs(params, seed):
        N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z = sizes(params)
        X, W = program_data(params, seed)
        Y = np.full(N * M * Hout * Wout, -1.0, dtype=np.float32) if first else convolve(X, W, params)
        return X, W, Y, N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z
    return make_inputs


def work(params):
    N, C, M, K, Hin, Win, Hout, Wout, W_grid, Z = sizes(params)
    return N * M * Z * TILE * TILE, TILE * TILE


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="convolution3D",
        kernel=name,
        description=f"HeCBench convolution3D: {name}, direct convolution layer forward (a thread per output "
        f"pixel, 16x16 tiles, grid {grid})",
        cpu=region,
        gpu=_port(gpu, order),
        make_inputs=_inputs(name == "conv3d_s1"),
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    )
    for name, region, gpu, order, grid in (("conv3d_s1", conv3d_s1, _s1_gpu, "nmz", "(N, M, Z)"),
                                           ("conv3d_s2", conv3d_s2, _s2_gpu, "mzn", "(M, Z, N)"),
                                           ("conv3d_s3", conv3d_s3, _s3_gpu, "znm", "(Z, N, M)"))
]
