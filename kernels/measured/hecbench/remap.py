"""HeCBench ``remap``: the kernel ``remap_kernel``, as gpuFLOPBench timed it on an RTX 3080.

Relabels ``N`` integer keys by the rank of their value among the distinct values. The host sorts the keys
with Thrust (``sort_by_key``, carrying ``first_order = 0 ... N - 1``: the sorting permutation) and compacts
the sorted keys with ``unique_by_key`` (carrying ``second_order = 0 ... N - 1``: afterwards its first ``K``
entries are the positions in the sorted array where each of the ``K`` distinct values starts). Then
``remap_kernel``, one thread per distinct value ``i < K``, writes ``i`` to ``output[first_order[idx]]`` for
every sorted position ``idx`` of its group (from ``second_order[i]`` up to the next group's start, or to
``N`` for the last group): a gather of the permutation and a scatter of the rank.

Launch: ``ceil(K / 256)`` blocks of 256. The program runs its timed loop twice (warm-up and run), each
``repeat`` times; the data's row is the first launch. Inputs: ``rand() % N`` after ``srand(123)`` (glibc;
here ``srand(123 + seed)``, so seed 0 gives the original's keys: K = 6,320,959 for N = 10^7, the data's
24,692 blocks). ``first_order`` is the stable sorting permutation (Thrust's radix sort is stable; the
output does not depend on the order within a group), ``second_order`` the groups' starts, both computed
with NumPy; ``output`` is ``cudaMalloc``'d and not cleared (zeros here; the kernel writes all of it).

Measured size: 1.9e8 records (6.3 M threads, about 40 s to trace): ``feature_point`` is N = 2^18.

Precision: integer only (int32).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

TPB = 256
SEED = 123

POINTS = {"10000000 1000": {"n": 10_000_000, "repeat": 1000, "k": 6_320_959}}
FEATURE_POINT = {"n": 1 << 18, "repeat": 1000, "k": 165_721}
TEST_POINT = {"n": 2000, "repeat": 1, "k": 1255}


def remap_kernel(second_order, first_order, output, n, k, n_threads):
    """Write each key's rank among the distinct values, one work item per distinct value.

    Parameters
    ----------
    second_order : int32, the sorted positions where the groups start (the first ``k`` entries are read).
    first_order : int32 ``(n,)``, the sorting permutation. output : int32 ``(n,)``, written.
    n : keys. k : distinct values. n_threads : launched threads.

    Returns
    -------
    ``output``.
    """
    for i in numba.prange(n_threads):
        if i < k:
            idx = second_order[i]
            output[first_order[idx]] = i
            idx += 1
            while idx < n and (i == k - 1 or idx != second_order[i + 1]):
                output[first_order[idx]] = i
                idx += 1
    return output


@cuda.jit
def _remap_gpu(second_order, first_order, output, n, k):
    i = cuda.grid(1)
    if i >= k:
        return
    idx = second_order[i]
    output[first_order[idx]] = i
    idx += 1
    while idx < n and (i == k - 1 or idx != second_order[i + 1]):
        output[first_order[idx]] = i
        idx += 1


def _to_device(second_order, first_order, output, n, k, n_threads):
    return {"so": cuda.to_device(second_order), "fo": cuda.to_device(first_order), "out": cuda.to_device(output),
            "n": int(n), "k": int(k), "threads": int(n_threads)}


def _launch(s):
    _remap_gpu[s["threads"] // TPB, TPB](s["so"], s["fo"], s["out"], s["n"], s["k"])


def _from_device(s):
    return s["out"].copy_to_host()


def work(params):
    k = int(params["k"])
    return (k + TPB - 1) // TPB * TPB, TPB


def keys(n, seed):
    """The host's keys: ``rand() % n`` after ``srand(123 + seed)``, int32."""
    return (glibc_rand(SEED + seed, n) % n).astype(np.int32)


def make_inputs(params, seed):
    """``(second_order, first_order, output, n, k, n_threads)`` after the host's sort and unique (NumPy)."""
    n = int(params["n"])
    x = keys(n, seed)
    first_order = np.argsort(x, kind="stable").astype(np.int32)
    s = x[first_order]
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]])).astype(np.int32)
    k = starts.size
    second_order = np.arange(n, dtype=np.int32)  # unique_by_key leaves the tail of the sequence
    second_order[:k] = starts
    return second_order, first_order, np.zeros(n, dtype=np.int32), n, k, (k + TPB - 1) // TPB * TPB


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="remap",
        kernel="remap_kernel",
        description="HeCBench remap: each of 10^7 random keys gets the rank of its value among the distinct "
        "values, one thread per distinct value scattering through the sort permutation",
        cpu=remap_kernel,
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
