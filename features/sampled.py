"""Features of a whole region from a sampled trace (:mod:`profiler.sampling`).

A sampled trace gives the feature engine every host record and the records of the sampled thread blocks, and a
second, address-sampled stream (every access to a random set of pages). :func:`whole_region` turns the
engine's features of the two into estimates for the whole region, feature by feature (docs/sampling.md):

* **exact** from the filter's counts of every record: the instruction mix (``mem`` .. ``fp64``,
  ``mica_mix_*``, ``mica_instructions``, ``mica_branches``), the static footprint
  (``mica_instrFootprint``), the thread space's size (``warp_threads``, ``warp_log2Threads``,
  ``warp_launches``), ``warp_arithIntensity``, ``warp_parallelFraction`` and the load block references
  (``mica_loadBlockRefs``);
* **address sample** (SHARDS): distinct blocks and pages (``mica_dataBlocks``, ``mica_dataPages``, divided by
  the page rate), ``memInt`` and ``pages`` (those over the exact record count), ``coldRef`` (=
  ``mica_reuse_cold``), and the reuse histogram (``mica_reuse_*``, ``reuseDist4``: :func:`reuse_histogram`);
* **counts of the sampled blocks, scaled** by the thread instances in all over those kept: the dependence
  counts ``ts_carriedDeps``, ``ts_reductionDeps``, ``ts_atomicDeps``, ``ts_sameValueRaces`` (a dependence
  between a sampled and an unsampled thread is not seen: these are estimates of a lower bound), and
  ``ts_parallelFraction`` (the sampled threads' records in dependence-free launches, scaled, over all records);
* **ratios of the sampled blocks**, as they are: everything else (ILP, strides, branch behaviour, warp
  coalescing and divergence, registers). Each sampled block is 256 whole consecutive
  iterations, so what happens inside a block and between neighbouring records is seen as in the full trace.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core.trace_schema import Op
from profiler.sampling import (
    KEPT_RECORDS,
    LAUNCHES,
    LOAD_BLOCK_REFS,
    MAX_TID,
    RECORDS,
    THREAD_LOAD_BYTES,
    THREAD_RECORDS,
    THREAD_STORE_BYTES,
    SampleCounts,
)

from .mix import FP32_OPS, FP64_OPS, MixAnalyzer
from .reuse import N_REUSE_BUCKETS

#: features taken from the address sample and how: "count" (divided by the page rate), "ratio" (as it is)
ADDRESS_FEATURES = {"mica_dataBlocks": "count", "mica_dataPages": "count", "coldRef": "ratio",
                    "mica_reuse_cold": "ratio"}
#: the reuse histogram's buckets (features/reuse.py): b0 = {0, 1}, bk = [2^k, 2^(k+1)), the last >= 2^18
REUSE_BUCKETS = [f"mica_reuse_b{k}" for k in range(N_REUSE_BUCKETS)]
#: features whose value is a count over the sampled threads, scaled to all of them
SCALED_COUNTS = ("ts_carriedDeps", "ts_reductionDeps", "ts_atomicDeps", "ts_sameValueRaces")
#: what each feature's estimate is (docs/sampling.md): exact, address, scaled or ratio
EXACT = "exact"


def exact_features(counts: SampleCounts) -> dict[str, float]:
    """The features the filter's exact counts give."""
    mix = MixAnalyzer()
    mix.counts = counts.ops_all.astype(np.int64)
    mix.n = counts[RECORDS]
    out = mix.result()
    out["mica_branches"] = float(counts.ops_all[Op.BRANCH])
    out["mica_instrFootprint"] = float(np.count_nonzero(counts.pcs[1:]))
    threads = counts[MAX_TID] + 1
    out["warp_threads"] = float(threads)
    out["warp_log2Threads"] = math.log2(1 + threads)
    out["warp_launches"] = float(counts[LAUNCHES])
    fp = int(counts.ops_thread[list(FP32_OPS)].sum() + counts.ops_thread[list(FP64_OPS)].sum())
    nbytes = counts[THREAD_LOAD_BYTES] + counts[THREAD_STORE_BYTES]
    out["warp_arithIntensity"] = fp / nbytes if nbytes else 0.0
    out["mica_loadBlockRefs"] = float(counts[LOAD_BLOCK_REFS])
    out["warp_parallelFraction"] = counts[THREAD_RECORDS] / counts[RECORDS] if counts[RECORDS] else 0.0
    return out


def reuse_histogram(blocks: np.ndarray, address: np.ndarray, shift: int) -> np.ndarray:
    """The reuse-distance histogram of the whole trace (fractions of load block references per bucket, cold
    references apart) from the sampled blocks' (``blocks``) and the address sample's (``address``), whose page
    rate is 2^-``shift``. In the address sample every access to a sampled page is seen and each distinct block
    between two uses of a block is seen with the page rate, so a distance there is the whole trace's over
    2^shift: its bucket k >= 1 is the whole trace's bucket k + shift (SHARDS). Its bucket 0 holds the whole
    trace's buckets 0 .. shift, too short to tell apart there: they are shared out as the sampled blocks
    have them (a short reuse happens inside a block of threads, which the block sample sees whole)."""
    n = len(address)
    out = np.zeros(n)
    if shift <= 0:
        return address.astype(float).copy()
    for k in range(1, n):
        out[min(n - 1, k + shift)] += address[k]
    short = min(shift + 1, n)
    w = blocks[:short].astype(float)
    if w.sum() > 0:
        out[:short] += address[0] * w / w.sum()
    else:
        out[short - 1] += address[0]
    return out


def whole_region(series: pd.Series, counts: SampleCounts, address: pd.Series | None, page_rate: float,
                 weight: float, short_reuse: pd.Series | None = None) -> pd.Series:
    """The region's features from ``series`` (the sampled blocks'), ``address`` (the address sample's, None when
    there was none), the filter's ``counts``, the address sample's ``page_rate`` and the thread ``weight``
    (thread instances in all / kept). ``short_reuse``: the features whose reuse histogram shares out the short
    distances (default ``series``; a replicate, which has no reuse family of its own, passes the whole
    sample's)."""
    shift = max(0, round(-math.log2(page_rate))) if page_rate > 0 else 0
    out = series.astype(float).copy()
    for k, v in exact_features(counts).items():
        if k in out.index:
            out[k] = v
    n = counts[RECORDS]
    if address is not None:  # (a replicate's blocks have no footprint or reuse family: these come from here)
        for k, how in ADDRESS_FEATURES.items():
            if k in address.index:
                out[k] = float(address[k]) / page_rate if how == "count" else float(address[k])
        if "mica_dataBlocks" in address.index:
            out["memInt"] = out["mica_dataBlocks"] / n if n else 0.0
        if "mica_dataPages" in address.index:
            out["pages"] = out["mica_dataPages"] / n if n else 0.0
        if all(k in address.index for k in REUSE_BUCKETS):
            src = series if short_reuse is None else short_reuse
            blocks = np.array([float(src.get(k, 0.0)) for k in REUSE_BUCKETS])
            hist = reuse_histogram(blocks, np.array([float(address[k]) for k in REUSE_BUCKETS]), shift)
            for k, v in zip(REUSE_BUCKETS, hist):
                out[k] = v
            out["reuseDist4"] = hist[0] + hist[1]
    if math.isfinite(weight):
        for k in SCALED_COUNTS:
            if k in out.index:
                out[k] = float(out[k]) * weight
        if "ts_parallelFraction" in out.index and n and counts[THREAD_RECORDS]:
            # the sampled threads' records in dependence-free launches, scaled to all threads, over all records
            scaled = float(series["ts_parallelFraction"]) * counts[KEPT_RECORDS] * weight / n
            out["ts_parallelFraction"] = min(1.0, scaled)
    return out


def how_estimated(name: str) -> str:
    """How :func:`whole_region` estimates feature ``name``: exact, address, scaled or ratio."""
    if name in _EXACT_NAMES:
        return EXACT
    if name in ADDRESS_FEATURES or name in ("memInt", "pages", "reuseDist4") or name in REUSE_BUCKETS:
        return "address"
    if name in SCALED_COUNTS or name == "ts_parallelFraction":
        return "scaled"
    return "ratio"


_EXACT_NAMES = frozenset(
    ["mem", "ctrl", "arith", "fp", "mul", "div", "rem", "spf", "fp64", "mica_instructions", "mica_branches",
     "mica_instrFootprint", "warp_threads", "warp_log2Threads", "warp_launches", "warp_arithIntensity",
     "mica_loadBlockRefs", "warp_parallelFraction"]
    + [f"mica_mix_{o.name}" for o in Op])
