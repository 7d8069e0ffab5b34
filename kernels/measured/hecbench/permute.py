"""HeCBench ``permute``: the kernel ``permute_kernel`` (from llm.c's attention), which splits a fused QKV
tensor into three head-major tensors (RTX 3080).

The input ``inp`` is ``(B, T, 3, NH, d)`` float32 (``T = 1024`` tokens, ``C = NH d = 768`` channels, ``NH = 12``
heads of ``d = 64``, all compile-time constants; ``B`` the first argument). One thread per element ``idx <
B C T`` of each output: it decomposes ``idx`` into ``(b, nh, n, d_)`` of the ``(B, NH, T, d)`` layout (four
integer divisions and moduli), forms ``inp_idx = b T 3C + n 3C + nh d + d_`` and copies ``inp[inp_idx]``,
``inp[inp_idx + C]``, ``inp[inp_idx + 2C]`` to ``q[idx]``, ``k[idx]``, ``v[idx]``.

Launch: ``ceil(B T C / block)`` blocks; the program first validates with block sizes 32, 64, ..., 512 and
then times each: the data's first row is the first launch, block size 32 (``8 100``: 196608 blocks of 32,
6.3 M threads). Inputs: the program's ``make_random_float`` (``rand() / RAND_MAX * 2 - 1``, unseeded glibc);
here NumPy uniform floats in [-1, 1) from ``seed`` (the values do not matter to the copy). ``q, k, v`` are the
three thirds of ``d_out`` (``cudaMalloc``'d, not cleared: zeros here; the kernel writes all of them).

CPU region: one ``prange`` over the launched threads. ``T, C, NH`` are parameters (the original fixes them)
so that the test point may be small. Measured size: 2.0e8 records; ``feature_point`` B = 1, T = 256.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

POINTS = {"8 100": {"B": 8, "T": 1024, "C": 768, "NH": 12, "block": 32, "repeat": 100}}
#: 2 x 12 tokens x 24 channels in 3 heads: 576 threads (18 blocks of 32)
TEST_POINT = {"B": 2, "T": 12, "C": 24, "NH": 3, "block": 32, "repeat": 1}
#: one sequence of 256 tokens, the original's channels and block: 196608 threads
FEATURE_POINT = {"B": 1, "T": 256, "C": 768, "NH": 12, "block": 32, "repeat": 1}


def permute_kernel(q, k, v, inp, B, T, NH, d, block):
    """CPU region: one launch of ``ceil(B T NH d / block)`` blocks of ``block``; writes ``q, k, v`` (float32,
    ``(B, NH, T, d)`` flattened) from ``inp`` (float32 ``(B, T, 3, NH, d)`` flattened) and returns them."""
    C = NH * d
    total = B * C * T
    n_threads = (total + block - 1) // block * block
    for idx in numba.prange(n_threads):
        if idx < total:
            b = idx // (C * T)
            rest = idx % (C * T)
            nh_ = rest // (T * d)
            rest = rest % (T * d)
            n = rest // d
            d_ = rest % d
            inp_idx = b * T * 3 * C + n * 3 * C + nh_ * d + d_
            q[idx] = inp[inp_idx]
            k[idx] = inp[inp_idx + C]
            v[idx] = inp[inp_idx + 2 * C]
    return q, k, v


@cuda.jit
def _permute_gpu(q, k, v, inp, B, T, NH, d):
    idx = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    C = NH * d
    if idx < B * C * T:
        b = idx // (C * T)
        rest = idx % (C * T)
        nh_ = rest // (T * d)
        rest = rest % (T * d)
        n = rest // d
        d_ = rest % d
        inp_idx = b * T * 3 * C + n * 3 * C + nh_ * d + d_
        q[idx] = inp[inp_idx]
        k[idx] = inp[inp_idx + C]
        v[idx] = inp[inp_idx + 2 * C]


def _to_device(q, k, v, inp, B, T, NH, d, block):
    return {"arrays": tuple(cuda.to_device(a) for a in (q, k, v, inp)), "dims": (int(B), int(T), int(NH), int(d)),
            "block": int(block)}


def _launch(s):
    B, T, NH, d = s["dims"]
    bs = s["block"]
    _permute_gpu[(B * T * NH * d + bs - 1) // bs, bs](*s["arrays"], B, T, NH, d)


def _from_device(s):
    return tuple(a.copy_to_host() for a in s["arrays"][:3])


def work(params):
    total = int(params["B"]) * int(params["T"]) * int(params["C"])
    bs = int(params["block"])
    return (total + bs - 1) // bs * bs, bs


def make_inputs(params, seed):
    """``(q, k, v, inp, B, T, NH, d, block)``: ``inp`` uniform in [-1, 1), the outputs zero."""
    B, T, C, NH = (int(params[key]) for key in ("B", "T", "C", "NH"))
    rng = np.random.default_rng(seed)
    inp = rng.uniform(-1.0, 1.0, 3 * B * T * C).astype(np.float32)
    outs = [np.zeros(B * T * C, dtype=np.float32) for _ in range(3)]
    return (*outs, inp, B, T, NH, C // NH, int(params["block"]))


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="permute",
        kernel="permute_kernel",
        description="HeCBench permute: split a fused (B, T, 3, NH, d) QKV tensor into three (B, NH, T, d) "
        "tensors, one thread per output element (index arithmetic, three gathers)",
        cpu=permute_kernel,
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
