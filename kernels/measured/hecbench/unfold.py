"""HeCBench ``unfold``: the kernel ``unfold_backward_elementwise_kernel`` (PyTorch's ``unfold`` backward,
the elementwise path), as timed on an RTX 3080.

The gradient of ``Tensor.unfold(dim, size, step)`` sums, for every element of the unfolded dimension, the
gradients of all windows (folds) that contain it. The program runs it on a one-dimensional case: ``N``
int gradients (``grad_in``, ``rand() % 256`` after ``srand(123)``), ``size = 2``, ``step = 1``, all strides
1, ``grad_in_dim_size = N``, and a one-element index tensor ``idx_dim = 0``. The kernel template launches
blocks of 64 threads with 4 elements per thread: thread ``t`` of block ``b`` handles ``i = 256 b + t + 64 k``
(``k = 0..3``, while ``i < N``), and for each ``i`` evaluates PyTorch's lambda: read ``idx_dim``, find the
left fold ``(idx_dim > size ? (idx_dim - size) / step : 0)``, bumped by one unless it overlaps, and the
right fold ``min(idx_dim / step, grad_in_dim_size - 1)``; for each fold in between, ``grad_out[i] +=
grad_in[i + fold * grad_in_dim_stride + (idx_dim - fold * step) * last_dim_stride]``. With ``idx_dim = 0``
there is exactly one fold (0): ``grad_out[i] += grad_in[i]``.

Launch: ``ceil(N / 256)`` blocks of 64 (``10000000 1000``: 39063 blocks, 2,500,032 threads). The timed launch
is the first; ``grad_out`` is ``cudaMalloc``'d and not cleared (the program's check assumes zeros: zeros
here). ``grad_in`` is glibc's ``rand() % 256`` after ``srand(123 + seed)`` (seed 0: the original's values).

CPU region: one ``prange`` over the launched threads, each running its four-element loop; the lambda's int64
arithmetic in Numba's int64. Precision: int32 data (``scalar_t = int``), int64 indices, as the original.
Measured size: 3.7e8 records; ``feature_point``: N = 2^17.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

N_THREADS = 64
N_ELEMS = 4
SIZE, STEP = 2, 1

POINTS = {"10000000 1000": {"n": 10_000_000, "repeat": 1000}}
#: 1000 elements: 4 blocks of 64, the last partly idle
TEST_POINT = {"n": 1000, "repeat": 1}
FEATURE_POINT = {"n": 1 << 17, "repeat": 1}


def unfold_backward_elementwise_kernel(grad_out, grad_in, idx_dim_ptr, size, step, grad_in_dim_stride,
                                       grad_in_last_dim_stride, grad_in_dim_size):
    """CPU region: one launch (``ceil(grad_in_dim_size / 256)`` blocks of 64, four elements per thread);
    accumulates into ``grad_out`` (int32) in place and returns it."""
    total = grad_in_dim_size
    work_block = N_THREADS * N_ELEMS
    n_threads = (total + work_block - 1) // work_block * N_THREADS
    for gid in numba.prange(n_threads):
        blk = gid // N_THREADS
        idx = work_block * blk + (gid - blk * N_THREADS)
        for _ in range(N_ELEMS):
            if idx < total:
                idx_dim = idx_dim_ptr[0]
                left = (idx_dim - size) // step if idx_dim > size else 0
                if not (left * step <= idx_dim and idx_dim < left * step + size):
                    left += 1
                right = idx_dim // step
                if right >= grad_in_dim_size:
                    right = grad_in_dim_size - 1
                for fold in range(left, right + 1):
                    last = idx_dim - fold * step
                    grad_out[idx] += grad_in[idx + fold * grad_in_dim_stride + last * grad_in_last_dim_stride]
                idx += N_THREADS
    return grad_out


@cuda.jit
def _unfold_gpu(grad_out, grad_in, idx_dim_ptr, size, step, grad_in_dim_stride, grad_in_last_dim_stride,
                grad_in_dim_size):
    idx = N_THREADS * N_ELEMS * cuda.blockIdx.x + cuda.threadIdx.x
    for _ in range(N_ELEMS):
        if idx < grad_in_dim_size:
            idx_dim = idx_dim_ptr[0]
            left = (idx_dim - size) // step if idx_dim > size else 0
            if not (left * step <= idx_dim and idx_dim < left * step + size):
                left += 1
            right = idx_dim // step
            if right >= grad_in_dim_size:
                right = grad_in_dim_size - 1
            for fold in range(left, right + 1):
                last = idx_dim - fold * step
                grad_out[idx] += grad_in[idx + fold * grad_in_dim_stride + last * grad_in_last_dim_stride]
            idx += N_THREADS


def _to_device(grad_out, grad_in, idx_dim, size, step, dim_stride, last_stride, dim_size):
    return {"arrays": tuple(cuda.to_device(a) for a in (grad_out, grad_in, idx_dim)),
            "scalars": (int(size), int(step), int(dim_stride), int(last_stride), int(dim_size))}


def _launch(s):
    n = s["scalars"][-1]
    _unfold_gpu[(n + N_THREADS * N_ELEMS - 1) // (N_THREADS * N_ELEMS), N_THREADS](*s["arrays"], *s["scalars"])


def _from_device(s):
    return s["arrays"][0].copy_to_host()


def work(params):
    n = int(params["n"])
    return (n + N_THREADS * N_ELEMS - 1) // (N_THREADS * N_ELEMS) * N_THREADS, N_THREADS


def make_inputs(params, seed):
    """``(grad_out, grad_in, idx_dim, size, step, dim_stride, last_dim_stride, dim_size)``: the program's case."""
    n = int(params["n"])
    grad_in = (glibc_rand(123 + seed, n) % 256).astype(np.int32)
    return (np.zeros(n, dtype=np.int32), grad_in, np.zeros(1, dtype=np.int64), SIZE, STEP, 1, 1, n)


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="unfold",
        kernel="unfold_backward_elementwise_kernel",
        description="HeCBench unfold: PyTorch's unfold backward on 10^7 ints (window 2, step 1), four "
        "elements per thread, fold search then a one-fold accumulation",
        cpu=unfold_backward_elementwise_kernel,
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
