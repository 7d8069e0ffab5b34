"""Systematic resampling of a particle filter (serial prefix sum + divergent binary searches).

CPU region: a serial running sum builds the cumulative weights, then the parallel loop places particle
``j`` at ``u_j = (j + u0) * total / n`` and binary-searches the first cumulative weight above it. GPU
port: a three-kernel scan (per-block Hillis-Steele scan in shared memory, a one-block chunked scan
of the block totals, adding the block offsets), then one thread per particle for the search.

Weights are whole numbers stored as float64 so every partial sum is exact and the CPU and GPU scans
(which add in different orders) produce identical cumulative weights.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 256
MAX_SCAN_THREADS = 1024


def particle_resample(weights, u0):
    """Indices of the particles chosen by systematic resampling.

    Parameters
    ----------
    weights : float64 non-negative particle weights (positive total).
    u0 : offset in [0, 1) of the resampling comb.

    Returns
    -------
    int64 array: ``out[j]`` is the first ``i`` with ``cumsum(weights)[i] > (j + u0) * total / n``.
    """
    n = weights.shape[0]
    cdf = np.empty(n, dtype=np.float64)
    acc = 0.0
    for i in range(n):
        acc += weights[i]
        cdf[i] = acc
    total = acc
    out = np.empty(n, dtype=np.int64)
    for j in numba.prange(n):
        u = (j + u0) * total / n
        lo = 0
        hi = n - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        out[j] = lo
    return out


@cuda.jit
def _block_scan(w, cdf, block_sums):
    buf = cuda.shared.array(TPB, dtype=numba.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = w[i] if i < w.shape[0] else 0.0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        v = buf[t - offset] if t >= offset else 0.0
        cuda.syncthreads()
        buf[t] += v
        cuda.syncthreads()
        offset *= 2
    if i < w.shape[0]:
        cdf[i] = buf[t]
    if t == TPB - 1:
        block_sums[cuda.blockIdx.x] = buf[t]


@cuda.jit
def _scan_block_sums(block_sums):
    # One block turns the block totals into exclusive offsets: each thread sums a contiguous chunk,
    # the chunk totals are scanned in shared memory, then each thread writes its chunk's offsets.
    totals = cuda.shared.array(MAX_SCAN_THREADS, dtype=numba.float64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x  # a power of two <= MAX_SCAN_THREADS
    nb = block_sums.shape[0]
    chunk = (nb + nt - 1) // nt
    lo = min(t * chunk, nb)
    hi = min(lo + chunk, nb)
    acc = 0.0
    for b in range(lo, hi):
        acc += block_sums[b]
    totals[t] = acc
    cuda.syncthreads()
    offset = 1
    while offset < nt:
        v = totals[t - offset] if t >= offset else 0.0
        cuda.syncthreads()
        totals[t] += v
        cuda.syncthreads()
        offset *= 2
    run = totals[t] - acc
    for b in range(lo, hi):
        v = block_sums[b]
        block_sums[b] = run
        run += v


@cuda.jit
def _add_offsets(cdf, block_sums):
    i = cuda.grid(1)
    if i < cdf.shape[0]:
        cdf[i] += block_sums[cuda.blockIdx.x]


@cuda.jit
def _search(cdf, u0, out):
    j = cuda.grid(1)
    n = cdf.shape[0]
    if j < n:
        total = cdf[n - 1]
        u = (j + u0) * total / n
        lo = 0
        hi = n - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        out[j] = lo


def _to_device(weights, u0):
    n = weights.shape[0]
    nblocks = (n + TPB - 1) // TPB
    return {"w": cuda.to_device(weights), "u0": float(u0), "cdf": cuda.device_array(n),
            "sums": cuda.device_array(nblocks), "out": cuda.device_array(n, dtype=np.int64)}


def _launch(s):
    nblocks = s["sums"].shape[0]
    _block_scan[nblocks, TPB](s["w"], s["cdf"], s["sums"])
    scan_threads = 32
    while scan_threads < MAX_SCAN_THREADS and scan_threads < nblocks:
        scan_threads *= 2
    _scan_block_sums[1, scan_threads](s["sums"])
    _add_offsets[nblocks, TPB](s["cdf"], s["sums"])
    _search[nblocks, TPB](s["cdf"], s["u0"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``n`` whole-number weights in [0, 100] (some zero: those particles die) and a comb offset."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(0, 101, size=n).astype(np.float64)
    weights[0] += 1.0
    return weights, float(rng.random())


KERNEL = KernelSpec(
    name="particle_resample",
    category="divergent",
    description="systematic resampling: serial cumulative sum + per-particle binary search; "
    "GPU: 3-kernel scan + search",
    cpu=particle_resample,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 300, "small": 50_000, "medium": 1_000_000, "large": 10_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
