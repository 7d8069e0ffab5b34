"""Rotary position embedding, HeCBench ``rotary``: the kernel ``unrolled_elementwise_kernel_for_multi_outputs``
(PyTorch's unrolled elementwise launcher), its first launch.

``numel = 512 * 10000`` float elements of four inputs ``x1, x2, cos, sin`` give two outputs ``o1 = x1 cos - x2
sin`` and ``o2 = x1 sin + x2 cos`` (single precision). Launch: ``numel / 512`` blocks of 128 threads; block
``b`` owns elements ``512 b ... 512 b + 511`` (``remaining = numel - 512 b``) and thread ``t`` handles
``t, t + 128, t + 256, t + 384`` of them (four per thread, ``thread_work_size``), each guarded by ``< remaining``:
it loads the four inputs of its elements, computes both results of each, then stores them.

Deliberate difference: the original runs three unrolled loops over the thread's four elements (load all, compute
all, store all); the region runs one loop that loads, computes and stores each element in turn (the same loads,
arithmetic, stores and guards, interleaved differently within the thread).

Inputs: the host's, exactly: ``x1[i] = x2[i] = (i + 1) / numel``, ``cos[i] = cosf(i)``, ``sin[i] = sinf(i)``
(``i / powf(10000, i / numel)`` with integer ``i / numel = 0``), in float32 (NumPy's float32 ``cos``/``sin``
may differ from CUDA's in the last bit). ``seed`` is unused.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

THREADS = 128
PER_THREAD = 4
BLOCK_WORK = THREADS * PER_THREAD

POINTS = {"1000": {"blocks": 10000}}
TEST_POINT = {"blocks": 6}
#: the measured point traces about 1e8 records: features from 400 blocks (about 4e6)
FEATURE_POINT = {"blocks": 400}


def rotary(N, o1, o2, x1, x2, cos, sin, n_threads):
    """Both outputs of the ``N`` elements, 128-thread blocks of four elements per thread. Returns
    ``(o1, o2)``."""
    for gid in numba.prange(n_threads):
        b = gid // THREADS
        t = gid - b * THREADS
        remaining = N - BLOCK_WORK * b
        for i in range(PER_THREAD):
            j = t + THREADS * i
            if j >= remaining:
                break
            k = j + BLOCK_WORK * b
            a1 = x1[k]
            a2 = x2[k]
            c = cos[k]
            s = sin[k]
            o1[k] = a1 * c - a2 * s
            o2[k] = a1 * s + a2 * c
    return o1, o2


@cuda.jit
def _rotary_gpu(N, o1, o2, x1, x2, cos, sin):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    remaining = N - BLOCK_WORK * b
    for i in range(PER_THREAD):
        j = t + THREADS * i
        if j >= remaining:
            break
        k = j + BLOCK_WORK * b
        a1 = x1[k]
        a2 = x2[k]
        c = cos[k]
        s = sin[k]
        o1[k] = a1 * c - a2 * s
        o2[k] = a1 * s + a2 * c


_ARRAYS = ("o1", "o2", "x1", "x2", "cos", "sin")


def _to_device(N, *rest):
    s = {k: cuda.to_device(a) for k, a in zip(_ARRAYS, rest[:6])}
    s["N"] = int(N)
    return s


def _launch(s):
    _rotary_gpu[(s["N"] + BLOCK_WORK - 1) // BLOCK_WORK, THREADS](s["N"], *(s[k] for k in _ARRAYS))


def _from_device(s):
    return s["o1"].copy_to_host(), s["o2"].copy_to_host()


def make_inputs(params, seed):
    """The host's inputs (deterministic; ``seed`` unused)."""
    numel = BLOCK_WORK * int(params["blocks"])
    i = np.arange(numel)
    x1 = (np.float32(1.0) * (i + 1).astype(np.float32) / np.float32(numel)).astype(np.float32)
    angle = i.astype(np.float32)
    cos, sin = np.cos(angle), np.sin(angle)
    return (numel, np.zeros(numel, np.float32), np.zeros(numel, np.float32), x1, x1.copy(), cos, sin,
            work(params)[0])


def work(params):
    return int(params["blocks"]) * THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="rotary",
        kernel="unrolled_elementwise_kernel_for_multi_outputs",
        description="HeCBench rotary: rotary embedding of 5.12 M float pairs, PyTorch's unrolled elementwise "
        "launcher (4 elements per thread, 128-thread blocks)",
        cpu=rotary,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=1e-6,
        atol=1e-7,
    ),
]
