"""Scatter ``out[perm[i]] = src[i]`` through a random permutation (coalesced reads, irregular writes).

GPU port: one thread per input element with a grid-stride loop; the permutation makes writes conflict-free.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256


def scatter(src, perm):
    """Return ``out`` with ``out[perm[i]] = src[i]``.

    Parameters
    ----------
    src : float64 array.
    perm : int64 permutation of ``range(len(src))``.

    Returns
    -------
    float64 array of ``len(src)``.
    """
    n = src.shape[0]
    out = np.empty(n, dtype=np.float64)
    for i in numba.prange(n):
        out[perm[i]] = src[i]
    return out


@cuda.jit
def _scatter(src, perm, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, src.shape[0], stride):
        out[perm[i]] = src[i]


def _to_device(src, perm):
    return {"src": cuda.to_device(src), "perm": cuda.to_device(perm),
            "out": cuda.device_array(src.shape[0], dtype=np.float64)}


def _launch(s):
    n = s["out"].shape[0]
    blocks = min((n + TPB - 1) // TPB, 65_536)
    _scatter[blocks, TPB](s["src"], s["perm"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``n`` values and a uniformly random permutation of their positions."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, size=n), rng.permutation(n).astype(np.int64)


KERNEL = KernelSpec(
    name="scatter",
    category="irregular",
    description="permutation scatter out[perm[i]] = src[i]; GPU: grid-stride loop, one element per thread",
    cpu=scatter,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 256, "small": 100_000, "medium": 2_000_000, "large": 20_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
