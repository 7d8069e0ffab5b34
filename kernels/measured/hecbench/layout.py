"""HeCBench ``layout`` (after AMD's APP SDK sample): the kernels ``AoSKernel`` and ``SoAKernel``, as
gpuFLOPBench timed them on an RTX 3080.

``TREE_NUM = 4096`` trees of ``TREE_SIZE = 4096`` apples (ints); one thread per tree sums its tree's apples
into an unsigned accumulator and stores it to ``outBuf[gid]``. ``AoSKernel`` reads the array of structures
(``trees[gid].apples[i]``: a thread walks its own contiguous row, so a warp's loads are 16 KB apart);
``SoAKernel`` reads the structure of arrays (``applesOnTrees[i].trees[gid]``: a warp's loads are contiguous).

Launch: ``TREE_NUM / 256`` blocks of 256 threads (16 x 256 = 4096). The program's argument is the repeat
count (1000 in the data); the sizes are compile-time constants. The AoS kernel runs first on the AoS layout
(``data[j + i * TREE_SIZE] = j + i * TREE_SIZE``, apple ``j`` of tree ``i``); the host then rewrites the
buffer in the SoA layout (``data[i + j * TREE_NUM] = j + i * TREE_SIZE``) before the SoA kernel. So both
kernels sum the same values; no random numbers (the ``seed`` is ignored).

Here the buffer is a 2-D int32 array, ``(trees, apples)`` for AoS and ``(apples, trees)`` for SoA, indexed
as the original's structure members (same addresses). The sum of a tree (up to about 6.9e10) overflows the
original's 32-bit ``uint``: the region accumulates in int64 and stores the low 32 bits into a uint32 output
(the bits the original's ``int`` output holds).

Measured size: 4096 threads x 4096 loop steps (about 7e7 records): ``feature_point`` keeps the 4096 threads
with 256 apples per tree.

Precision: integer only.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

GROUP_SIZE = 256
MASK = 0xFFFFFFFF

POINTS = {"1000": {"repeat": 1000, "tree_num": 4096, "tree_size": 4096}}
FEATURE_POINT = {"repeat": 1000, "tree_num": 4096, "tree_size": 256}
TEST_POINT = {"repeat": 1, "tree_num": 512, "tree_size": 16}


def aos_kernel(trees, out):
    """``out[gid] = sum(trees[gid, :])`` (mod 2^32), one work item per tree.

    Parameters
    ----------
    trees : int32 ``(tree_num, tree_size)``: the AoS buffer. out : uint32 ``(tree_num,)``, overwritten.

    Returns
    -------
    ``out``.
    """
    tree_size = trees.shape[1]
    for gid in numba.prange(out.shape[0]):
        res = np.int64(0)
        for i in range(tree_size):
            res += trees[gid, i]
        out[gid] = res & MASK
    return out


def soa_kernel(apples, out):
    """``out[gid] = sum(apples[:, gid])`` (mod 2^32), one work item per tree.

    Parameters
    ----------
    apples : int32 ``(tree_size, tree_num)``: the SoA buffer. out : uint32 ``(tree_num,)``, overwritten.

    Returns
    -------
    ``out``.
    """
    tree_size = apples.shape[0]
    for gid in numba.prange(out.shape[0]):
        res = np.int64(0)
        for i in range(tree_size):
            res += apples[i, gid]
        out[gid] = res & MASK
    return out


@cuda.jit
def _aos_gpu(trees, out):
    gid = cuda.grid(1)
    res = numba.int64(0)
    for i in range(trees.shape[1]):
        res += trees[gid, i]
    out[gid] = res & MASK


@cuda.jit
def _soa_gpu(apples, out):
    gid = cuda.grid(1)
    res = numba.int64(0)
    for i in range(apples.shape[0]):
        res += apples[i, gid]
    out[gid] = res & MASK


def _to_device(buf, out):
    return {"buf": cuda.to_device(buf), "out": cuda.to_device(out)}


def _launch_aos(s):
    n = s["out"].shape[0]
    _aos_gpu[n // GROUP_SIZE, GROUP_SIZE](s["buf"], s["out"])


def _launch_soa(s):
    n = s["out"].shape[0]
    _soa_gpu[n // GROUP_SIZE, GROUP_SIZE](s["buf"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def _check(params):
    tree_num, tree_size = int(params["tree_num"]), int(params["tree_size"])
    if tree_num % GROUP_SIZE:
        raise ValueError(f"layout: the number of trees must be a multiple of {GROUP_SIZE}, got {tree_num}")
    return tree_num, tree_size


def make_inputs_aos(params, seed):
    """``(trees, out)``: ``trees[i, j] = j + i * tree_size``; ``out`` zeros."""
    tree_num, tree_size = _check(params)
    trees = np.arange(tree_num * tree_size, dtype=np.int32).reshape(tree_num, tree_size)
    return trees, np.zeros(tree_num, dtype=np.uint32)


def make_inputs_soa(params, seed):
    """``(apples, out)``: ``apples[j, i] = j + i * tree_size``; ``out`` holds the AoS kernel's sums (the
    buffer the first kernel left)."""
    trees, out = make_inputs_aos(params, seed)
    out = (trees.astype(np.int64).sum(axis=1) & MASK).astype(np.uint32)
    return np.ascontiguousarray(trees.T), out


def work(params):
    tree_num, _ = _check(params)
    return tree_num, GROUP_SIZE


def _kernel(name, cpu, launch, make_inputs, what):
    return MeasuredKernel(
        source="hecbench",
        application="layout",
        kernel=name,
        description=f"HeCBench layout: one thread per tree sums 4096 ints read {what}",
        cpu=cpu,
        gpu=GpuPort(_to_device, launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    )


KERNELS = [
    _kernel("AoSKernel", aos_kernel, _launch_aos, make_inputs_aos, "from its own row (array of structures)"),
    _kernel("SoAKernel", soa_kernel, _launch_soa, make_inputs_soa, "from a column (structure of arrays)"),
]
