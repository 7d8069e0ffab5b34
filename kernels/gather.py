"""Gather ``out[i] = src[idx[i]]`` through a random index array (irregular reads, coalesced writes).

GPU port: one thread per output element; a grid-stride loop keeps the grid a fixed size.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def gather(src, idx):
    """Return ``src[idx]`` computed element by element.

    Parameters
    ----------
    src : float64 array.
    idx : int64 array of indices into ``src``.

    Returns
    -------
    float64 array of ``len(idx)``.
    """
    n = idx.shape[0]
    out = np.empty(n, dtype=np.float64)
    for i in numba.prange(n):
        out[i] = src[idx[i]]
    return out


@cuda.jit
def _gather(src, idx, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        out[i] = src[idx[i]]


def _to_device(src, idx):
    return {"src": cuda.to_device(src), "idx": cuda.to_device(idx),
            "out": cuda.device_array(idx.shape[0], dtype=np.float64)}


def _launch(s):
    n = s["out"].shape[0]
    blocks = min((n + TPB - 1) // TPB, 65_536)
    _gather[blocks, TPB](s["src"], s["idx"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """A source vector of ``n`` values and ``n`` uniformly random indices into it."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, size=n), rng.integers(0, n, size=n).astype(np.int64)


KERNEL = KernelSpec(
    name="gather",
    category="irregular",
    description="random gather out[i] = src[idx[i]]; GPU: grid-stride loop, one element per thread",
    cpu=gather,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 256, "small": 100_000, "medium": 2_000_000, "large": 20_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
