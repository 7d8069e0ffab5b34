"""Naive exact string matching: flag every text position where a short pattern starts (divergent).

CPU region: one iteration of the parallel loop per text position; the comparison loop exits at the
first mismatch, so the work per position is data dependent (1 to ``m`` comparisons). GPU port: one
thread per position with the pattern in shared memory; text reads of a warp are contiguous.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256
MAX_PATTERN = 64
PATTERN_LENGTH = 6


def string_match(text, pattern):
    """1 where ``pattern`` occurs at that position of ``text``, else 0.

    Parameters
    ----------
    text, pattern : uint8 arrays, ``len(pattern) <= len(text)``.

    Returns
    -------
    uint8 array of length ``len(text) - len(pattern) + 1``.
    """
    n = text.shape[0]
    m = pattern.shape[0]
    out = np.empty(n - m + 1, dtype=np.uint8)
    for p in numba.prange(n - m + 1):
        k = 0
        while k < m and text[p + k] == pattern[k]:
            k += 1
        out[p] = 1 if k == m else 0
    return out


@cuda.jit
def _match(text, pattern, out):
    pat = cuda.shared.array(MAX_PATTERN, dtype=numba.uint8)
    m = pattern.shape[0]
    t = cuda.threadIdx.x
    if t < m:
        pat[t] = pattern[t]
    cuda.syncthreads()
    p = cuda.grid(1)
    if p < out.shape[0]:
        k = 0
        while k < m and text[p + k] == pat[k]:
            k += 1
        out[p] = 1 if k == m else 0


def _to_device(text, pattern):
    m = pattern.shape[0]
    if m > MAX_PATTERN:
        raise ValueError(f"string_match GPU port handles patterns up to {MAX_PATTERN} bytes, got {m}")
    return {"text": cuda.to_device(text), "pattern": cuda.to_device(pattern),
            "out": cuda.device_array(text.shape[0] - m + 1, dtype=np.uint8)}


def _launch(s):
    n = s["out"].shape[0]
    tpb = max(64, min(TPB, 32 * ((n + 31) // 32)))
    _match[(n + tpb - 1) // tpb, tpb](s["text"], s["pattern"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """A random text of ``n`` letters over a 4-letter alphabet and a 6-letter pattern copied from it."""
    rng = np.random.default_rng(seed)
    text = rng.integers(0, 4, size=n, dtype=np.uint8)
    start = int(rng.integers(0, n - PATTERN_LENGTH + 1))
    return text, text[start:start + PATTERN_LENGTH].copy()


KERNEL = KernelSpec(
    name="string_match",
    category="divergent",
    description="naive matching of a 6-letter pattern at every text position; GPU: thread per position",
    cpu=string_match,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 300, "small": 100_000, "medium": 4_000_000, "large": 50_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
