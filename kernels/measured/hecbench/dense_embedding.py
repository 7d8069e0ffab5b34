"""Dense embedding addition, HeCBench ``dense-embedding``: the kernels ``dense_esuhm`` and ``dense_esuhm2``, their
first launches (embedding dimension 768, block size 128).

A jagged batch: segment ``b`` of the flat input (``offset[b] ... offset[b + 1]``, a multiple of the embedding
dimension long) gets the dense row ``dense[b]`` added to each of its embedding-sized rows. One block per batch
entry; thread ``tid`` walks the columns ``idx = tid, tid + blockDim, ... < embedding_dim``, reads
``dense[b * dim + idx]`` and, for ``nested = idx, idx + dim, ... < range``, writes ``output[offset[b] + nested]
= input[offset[b] + nested] + dense_elem``. ``dense_esuhm`` re-reads ``offset[b]`` from global memory for every
element (twice); ``dense_esuhm2`` keeps it in a register (``start``). Single precision.

Launch: ``batch_size`` (256) blocks of 128 threads (the host sweeps block sizes 128 ... 1024 and embedding
dimensions 768, 2048, 12288; the first launch of each kernel is 768 with 128).

Inputs: ``offset[i] = offset[i - 1] + (rand() % batch_size + 1) * dim`` after ``srand(123)`` (glibc ``rand``: the
original's offsets for seed 0, 26898432 elements in all; ``srand(123 + seed)`` otherwise); ``dense`` and
``input`` uniform in [-1, 1) from ``std::default_random_engine(123)``, here NumPy's generator. The original's
input holds ``nrows x dim`` floats (76.8 M for 100000 rows); only the first ``offset[batch_size]`` are read, so
only those are made (input and output arrays of that length).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

POINTS = {"100000 256 1000": {"nrows": 100000, "batch_size": 256, "dim": 768, "block": 128}}
TEST_POINT = {"nrows": 600, "batch_size": 6, "dim": 40, "block": 16}
#: the measured point traces over 1e8 records: features from 64 batch entries
FEATURE_POINT = {"nrows": 10000, "batch_size": 64, "dim": 768, "block": 128}


def dense_esuhm(inp, dense, out, embedding_dim, offset, block, n_threads):
    """``dense_esuhm``: ``offset[b]`` re-read per element. Returns ``out``."""
    for gid in numba.prange(n_threads):
        b = gid // block
        tid = gid - b * block
        rng = offset[b + 1] - offset[b]
        idx = tid
        while idx < embedding_dim:
            d = dense[b * embedding_dim + idx]
            nested = idx
            while nested < rng:
                out[offset[b] + nested] = inp[offset[b] + nested] + d
                nested += embedding_dim
            idx += block
    return out


def dense_esuhm2(inp, dense, out, embedding_dim, offset, block, n_threads):
    """``dense_esuhm2``: the segment start kept in a register. Returns ``out``."""
    for gid in numba.prange(n_threads):
        b = gid // block
        tid = gid - b * block
        start = offset[b]
        rng = offset[b + 1] - start
        idx = tid
        while idx < embedding_dim:
            d = dense[b * embedding_dim + idx]
            nested = idx
            while nested < rng:
                out[start + nested] = inp[start + nested] + d
                nested += embedding_dim
            idx += block
    return out


@cuda.jit
def _esuhm_gpu(inp, dense, out, embedding_dim, offset):
    b = cuda.blockIdx.x
    block = cuda.blockDim.x
    rng = offset[b + 1] - offset[b]
    idx = cuda.threadIdx.x
    while idx < embedding_dim:
        d = dense[b * embedding_dim + idx]
        nested = idx
        while nested < rng:
            out[offset[b] + nested] = inp[offset[b] + nested] + d
            nested += embedding_dim
        idx += block


@cuda.jit
def _esuhm2_gpu(inp, dense, out, embedding_dim, offset):
    b = cuda.blockIdx.x
    block = cuda.blockDim.x
    start = offset[b]
    rng = offset[b + 1] - start
    idx = cuda.threadIdx.x
    while idx < embedding_dim:
        d = dense[b * embedding_dim + idx]
        nested = idx
        while nested < rng:
            out[start + nested] = inp[start + nested] + d
            nested += embedding_dim
        idx += block


def _to_device(inp, dense, out, embedding_dim, offset, block, n_threads):
    return {"inp": cuda.to_device(inp), "dense": cuda.to_device(dense), "out": cuda.to_device(out),
            "dim": int(embedding_dim), "offset": cuda.to_device(offset), "block": int(block),
            "blocks": int(n_threads) // int(block)}


def _launcher(kernel):
    def launch(s):
        kernel[s["blocks"], s["block"]](s["inp"], s["dense"], s["out"], s["dim"], s["offset"])
    return launch


def _from_device(s):
    return s["out"].copy_to_host()


def offsets(batch_size, dim, seed):
    """The host's segment offsets (int32, ``batch_size + 1``)."""
    r = glibc_rand(123 + seed, batch_size)
    off = np.zeros(batch_size + 1, dtype=np.int64)
    off[1:] = np.cumsum((r % batch_size + 1) * dim)
    return off.astype(np.int32)


def make_inputs(params, seed):
    bs, dim, block = int(params["batch_size"]), int(params["dim"]), int(params["block"])
    off = offsets(bs, dim, seed)
    rng = np.random.default_rng(seed)
    dense = rng.uniform(-1.0, 1.0, bs * dim).astype(np.float32)
    inp = rng.uniform(-1.0, 1.0, int(off[-1])).astype(np.float32)
    return inp, dense, np.zeros(int(off[-1]), np.float32), dim, off, block, bs * block


def work(params):
    return int(params["batch_size"]) * int(params["block"]), int(params["block"])


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="dense-embedding",
        kernel=kernel,
        description=f"HeCBench dense-embedding: {what} add a dense row to each 768-wide row of 256 jagged "
        "segments (26.9 M floats), one 128-thread block per segment",
        cpu=cpu,
        gpu=GpuPort(_to_device, _launcher(gpu), _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    )
    for kernel, what, cpu, gpu in (
        ("dense_esuhm", "segment start re-read per element:", dense_esuhm, _esuhm_gpu),
        ("dense_esuhm2", "segment start in a register:", dense_esuhm2, _esuhm2_gpu),
    )
]
