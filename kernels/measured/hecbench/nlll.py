"""Negative log-likelihood loss, HeCBench ``nlll``: the kernel ``nll_loss_forward_reduce2d_kernel``, its first
launch (float data, int targets, 64 threads).

One block of ``NLL_LOSS_THREADS`` threads (the host evaluates 64, 128, ..., 1024 in turn with float data, then
again with half; the first launch is float with 64). Thread ``tid`` clears its two shared slots, then for frames
``i = tid, tid + 64, ... < nframe`` whose target ``t`` is not ``ignore_index`` subtracts ``input[i * kdim + t] *
weights[t]`` from its slot ``sm_inputs[tid]`` and adds ``weights[t]`` to ``acc_weight[tid]`` (read-modify-write
of shared memory each time, as the original). After the barrier thread 0 sums the 64 slots of each, writes the
total weight and (``size_average``) the mean loss ``sum / total_weight``. Single precision throughout.

Regions: two barrier phases, each a parallel loop over the 64 threads; the shared slots are arrays of one row
per block (one block here).

Inputs: ``input`` and ``weights`` uniform in [-1, 1), targets uniform in ``[0, n_classes - 1]`` from
``std::default_random_engine(123)``; here NumPy's generator seeded with ``seed`` (same distributions). The
original's weight vector has ``nframe`` entries indexed by class (every class is below ``nframe`` here).
``ignore_index = n_classes / 2``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

THREADS = 64

POINTS = {"2048 1000 1000": {"nframe": 2048, "n_classes": 1000}}
TEST_POINT = {"nframe": 300, "n_classes": 20}


def nll_loss_forward_reduce2d(output, total_weight, inp, target, weights, size_average, nframe, kdim,
                              ignore_index, sm_inputs, acc_weight):
    """The loss of ``nframe`` frames by one block of 64 threads. ``sm_inputs, acc_weight``: float32 ``(1, 64)``
    shared tiles. Returns ``(output, total_weight)`` (one float32 each)."""
    for tid in numba.prange(THREADS):
        sm_inputs[0, tid] = np.float32(0.0)
        acc_weight[0, tid] = np.float32(0.0)
        i = tid
        while i < nframe:
            t = target[i]
            if t != ignore_index:
                w = weights[t]
                sm_inputs[0, tid] -= inp[i * kdim + t] * w
                acc_weight[0, tid] += w
            i += THREADS
    for tid in numba.prange(THREADS):
        if tid == 0:
            out = np.float32(0.0)
            tw = np.float32(0.0)
            for i in range(THREADS):
                out += sm_inputs[0, i]
                tw += acc_weight[0, i]
            total_weight[0] = tw
            if size_average:
                output[0] = out / tw
            else:
                output[0] = out
    return output, total_weight


@cuda.jit
def _nll_gpu(output, total_weight, inp, target, weights, size_average, nframe, kdim, ignore_index):
    sm_inputs = cuda.shared.array(THREADS, numba.float32)
    acc_weight = cuda.shared.array(THREADS, numba.float32)
    tid = cuda.threadIdx.x
    sm_inputs[tid] = numba.float32(0.0)
    acc_weight[tid] = numba.float32(0.0)
    i = tid
    while i < nframe:
        t = target[i]
        if t != ignore_index:
            w = weights[t]
            sm_inputs[tid] -= inp[i * kdim + t] * w
            acc_weight[tid] += w
        i += THREADS
    cuda.syncthreads()
    if tid == 0:
        out = numba.float32(0.0)
        tw = numba.float32(0.0)
        for i in range(THREADS):
            out += sm_inputs[i]
            tw += acc_weight[i]
        total_weight[0] = tw
        if size_average:
            output[0] = out / tw
        else:
            output[0] = out


def _to_device(output, total_weight, inp, target, weights, size_average, nframe, kdim, ignore_index, sm, aw):
    s = {k: cuda.to_device(a) for k, a in zip(("output", "total_weight", "inp", "target", "weights"),
                                               (output, total_weight, inp, target, weights))}
    s.update(size_average=bool(size_average), nframe=int(nframe), kdim=int(kdim), ignore_index=int(ignore_index))
    return s


def _launch(s):
    _nll_gpu[1, THREADS](s["output"], s["total_weight"], s["inp"], s["target"], s["weights"], s["size_average"],
                         s["nframe"], s["kdim"], s["ignore_index"])


def _from_device(s):
    return s["output"].copy_to_host(), s["total_weight"].copy_to_host()


def make_inputs(params, seed):
    nframe, classes = int(params["nframe"]), int(params["n_classes"])
    rng = np.random.default_rng(seed)
    inp = rng.uniform(-1.0, 1.0, nframe * classes).astype(np.float32)
    weights = rng.uniform(-1.0, 1.0, nframe).astype(np.float32)
    target = rng.integers(0, classes, nframe).astype(np.int32)
    return (np.zeros(1, np.float32), np.zeros(1, np.float32), inp, target, weights, True, nframe, classes,
            classes // 2, np.zeros((1, THREADS), np.float32), np.zeros((1, THREADS), np.float32))


def work(params):
    return THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="nlll",
        kernel="nll_loss_forward_reduce2d_kernel",
        description="HeCBench nlll: weighted NLL loss of 2048 frames x 1000 classes by one block of 64 threads "
        "(strided gathers into shared partials, then a serial sum by thread 0)",
        cpu=nll_loss_forward_reduce2d,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-6,
    ),
]
