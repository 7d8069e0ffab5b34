"""Coarse gene alignment, HeCBench ``ga``: the kernel ``ga``.

A target DNA sequence (``tseq`` bases) is scanned in batches of 1024 start positions; thread ``tid`` of a
batch (guard ``tid > length`` returns: the original's off-by-one, harmless since ``tid < 1024``) compares
the ``coarse_match_length`` target bases at ``current_position + tid`` with every window of the query
(``qseq`` bases, ``qseq - coarse_match_length + 1`` windows in order), counting mismatches over the whole
window (no early exit inside a window), and stops at the first window whose distance is below
``coarse_match_threshold``; a match sets ``batch_result[tid] = 1`` (the result is zeroed before each launch).

Launch: blocks of 256, ``ceil(length / 256)`` blocks, ``length`` = the batch's positions (1024 except in the
last batch). Measured point ``1000000 1000 11 1`` (target length, query length, coarse match length,
threshold): the first batch (``current_position = 0``, 1024 threads in 4 blocks); threshold 1 asks for an
exact 11-base match, which a random query almost never has, so nearly every thread scans all 990 windows.

Inputs: the host's ``srand(123)`` then ``"ACTG"[rand() % 4]`` for the target, then for the query (glibc
``rand`` seeded with ``123 + seed``; seed 0 gives the original's sequences); bases are uint8 (ASCII). Only
the target bases the first batch reads are generated when the target is longer (the draws of the query
follow the whole target's in the sequence, so the whole target's draws are made; only a prefix is kept).

Precision: integer only (byte compares and counts), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
BATCH = 1024
BASES = np.frombuffer(b"ACTG", dtype=np.uint8)

POINTS = {"1000000 1000 11 1": {"tseq": 1000000, "qseq": 1000, "coarse_length": 11, "threshold": 1}}
TEST_POINT = {"tseq": 3000, "qseq": 40, "coarse_length": 5, "threshold": 2}
#: a 50-base query instead of 1000 (about 5e6 records; the same 1024 threads)
FEATURE_POINT = {"tseq": 1000000, "qseq": 50, "coarse_length": 11, "threshold": 1}


def ga(target, query, batch_result, length, qseq, coarse_length, threshold, current_position, n_threads):
    """One batch: ``batch_result[tid] = 1`` where the target window at ``current_position + tid`` is within
    ``threshold - 1`` mismatches of some query window."""
    for tid in numba.prange(n_threads):
        if tid <= length:
            match = False
            max_length = qseq - coarse_length
            for i in range(max_length + 1):
                distance = 0
                for j in range(coarse_length):
                    if target[current_position + tid + j] != query[i + j]:
                        distance += 1
                if distance < threshold:
                    match = True
                    break
            if match:
                batch_result[tid] = 1
    return batch_result


@cuda.jit
def _ga_gpu(target, query, batch_result, length, qseq, coarse_length, threshold, current_position):
    tid = cuda.grid(1)
    if tid > length:
        return
    match = False
    max_length = qseq - coarse_length
    for i in range(max_length + 1):
        distance = 0
        for j in range(coarse_length):
            if target[current_position + tid + j] != query[i + j]:
                distance += 1
        if distance < threshold:
            match = True
            break
    if match:
        batch_result[tid] = 1


def _to_device(target, query, batch_result, length, qseq, coarse_length, threshold, current_position,
               n_threads):
    return {"target": cuda.to_device(target), "query": cuda.to_device(query),
            "result": cuda.to_device(batch_result), "length": int(length), "qseq": int(qseq),
            "cl": int(coarse_length), "th": int(threshold), "pos": int(current_position), "n": int(n_threads)}


def _launch(s):
    _ga_gpu[s["n"] // BLOCK, BLOCK](s["target"], s["query"], s["result"], s["length"], s["qseq"], s["cl"],
                                    s["th"], s["pos"])


def _from_device(s):
    return s["result"].copy_to_host()


def sequences(tseq, qseq, seed):
    """The host's target and query, uint8 ASCII bases."""
    r = glibc_rand(123 + seed, tseq + qseq)
    return BASES[r[:tseq] % 4], BASES[r[tseq:] % 4]


def _length(params):
    return min(BATCH, int(params["tseq"]) - int(params["coarse_length"]))


def make_inputs(params, seed):
    """The first batch: the sequences (the target cut to the bases the batch reads), the zeroed batch result."""
    tseq, qseq = int(params["tseq"]), int(params["qseq"])
    cl = int(params["coarse_length"])
    target, query = sequences(tseq, qseq, seed)
    length = _length(params)
    target = target[: min(tseq, length + cl + 1)].copy()
    return (target, query, np.zeros(BATCH, dtype=np.uint8), length, qseq, cl, int(params["threshold"]), 0,
            work(params)[0])


def work(params):
    return (_length(params) + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="ga",
        kernel="ga",
        description="HeCBench ga: coarse DNA alignment, each thread compares a target window with every "
        "query window (byte compares), first batch of 1024 positions",
        cpu=ga,
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
