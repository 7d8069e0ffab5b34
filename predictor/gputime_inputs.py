"""The GPU-time model's input row of one region on one GPU: the one assembly that training
(:mod:`predictor.gputime_training`), every prediction (:mod:`predictor.gputime_region`) and the physics checks
(:mod:`predictor.physics`) use.

:func:`model_inputs` gives the bounded family's row (per-launch estimates ``term_*``, the lower bound, the launches,
the rates) and the region's bounds; :func:`tree_inputs` the row of the older tree and linear families (work counts,
rate features, the GPU's description numbers :func:`gpu_columns`, the SIMT estimate); :func:`region_inputs` picks
the row a model reads. :data:`GENERATIONS` maps every preset to its GPU generation.
"""

from __future__ import annotations

import math

import numpy as np

from gpu_models.simt.config import preset_generations
from gpu_models.simt.slice_sample import BLOCK_SIZE
from predictor.gputime import RATE_FEATURES, WORK_KEYS

#: preset -> GPU generation, for every preset (for the Pascal hold-out and the extrapolation note): the presets' own
#: ``generation`` field, read once at import (``gpu_models.simt.config.preset_generations``; their order, oldest
#: first: ``gpu_models.simt.config.GENERATION_ORDER``)
GENERATIONS = preset_generations()


def gpu_columns(preset) -> dict:
    """The GPU description numbers the tree models use (:data:`predictor.gputime.GPU_KEYS`) of a SIMT preset (a
    name or a :class:`gpu_models.simt.config.GPUConfig`)."""
    from gpu_models.simt.config import load_config

    c = load_config(preset) if isinstance(preset, str) else preset
    return {"sm_count": c.sm_count, "core_mhz": c.core_mhz, "dram_gb_s": c.dram_bytes_per_ns(),
            "l2_bytes": c.l2_bytes, "schedulers_per_sm": c.schedulers_per_sm,
            "max_warps_per_sm": c.max_warps_per_sm}


def model_inputs(counts, gpu, *, block_size: int = BLOCK_SIZE, launches: float | None = None,
                 host_timer: float = 0.0):
    """The GPU-time model's input row of one region on one GPU (a preset name or a
    :class:`gpu_models.simt.config.GPUConfig`), and the region's bounds there: ``(row, bounds)``.

    ``counts``: the region's work and features in one mapping (``{**WorkSink result, **feature series}``,
    feature names without a prefix); ``launches``: kernel launches when they differ from the trace's
    (a measured port's barrier phases are one launch); ``host_timer``: 1 for a time taken by a host timer
    around the launch. The row holds the per-launch estimates (``term_<name>``), the lower bound
    (``bound_s``), the launches, the rate features and ``host_timer``: the same assembly for training
    (:mod:`predictor.gputime_training`) and for every prediction. Returns ``(None, None)`` when the counts lack
    what the bounds need (:data:`gpu_models.bounds.REQUIRED`)."""
    from gpu_models.bounds import REQUIRED, bounds
    from gpu_models.simt.config import load_config
    from predictor.bounded import FACTOR_RATES, TERM_NAMES

    c = {k: float(v) for k, v in counts.items() if isinstance(v, (int, float, np.integer, np.floating))
         and np.isfinite(v)}
    if any(k not in c for k in REQUIRED):
        return None, None
    if launches is not None:
        c["launches"] = float(launches)
    cfg = load_config(gpu) if isinstance(gpu, str) else gpu
    # the mix is the kernel's own (records inside threads) where the work counts give it: the host code around
    # the launches neither dilutes it nor makes it drift with the input size
    R = c.get("thread_records", 0.0)
    if R > 0 and all(k in c for k in ("thread_mem", "thread_ctrl", "thread_fp", "thread_fp64")):
        c["mem"], c["ctrl"], c["fp"] = c["thread_mem"] / R, c["thread_ctrl"] / R, c["thread_fp"] / R
        c["fp64"] = c["thread_fp64"] / c["thread_fp"] if c["thread_fp"] > 0 else 0.0
    b = bounds(c, cfg, block_size=int(block_size))
    # how much slower the GPU runs double precision: log2 of its FP32:FP64 lane ratio (0 where the description
    # gives no FP64 lanes: it runs FP64 at the FP32 rate), weighted by the FP64 share of the floating point
    fp64_lanes = float(cfg.lanes.get("fp64", cfg.lanes["fp"]))
    c["fp64_slowdown"] = c.get("fp64", 0.0) * max(0.0, math.log2(cfg.lanes["fp"] / fp64_lanes))
    row = {f"term_{t}": float(b.terms[t]) for t in TERM_NAMES}
    row.update(bound_s=float(b.total_lower), launches=float(b.launches), host_timer=float(host_timer))
    row.update({r: float(c.get(r, 0.0)) for r in FACTOR_RATES})
    return row, b


def tree_inputs(work, rates, gpu, *, block_size: int = BLOCK_SIZE, simulated_s: float = float("nan"),
                host_timer: float = 0.0) -> dict:
    """The input row of the tree and linear families (:data:`predictor.gputime.INPUT_COLUMNS`) of one region on
    one GPU (a preset name or a GPUConfig): every count of ``work`` (a :class:`features.work.WorkSink` result),
    the rate features (:data:`predictor.gputime.RATE_FEATURES`) from ``rates`` (NaN where it lacks one), the
    block size, the GPU's description (:func:`gpu_columns`), the SIMT estimate and ``host_timer``."""
    return {**{k: float(work[k]) for k in work}, "block_size": float(block_size),
            **{k: float(rates.get(k, np.nan)) for k in RATE_FEATURES}, **gpu_columns(gpu),
            "simulated_s": float(simulated_s), "host_timer": float(host_timer)}


def region_inputs(model, counts, gpu, *, simulated_s: float = float("nan"), block_size: int = BLOCK_SIZE):
    """The row ``model`` reads of a region on ``gpu``, and the region's bounds there: ``(row, bounds)``.
    ``counts``: the region's work counts and features in one mapping. The bounded family reads
    :func:`model_inputs` (``(None, None)`` when the counts lack what the bounds need); the tree and linear
    families :func:`tree_inputs` (the work counts of :data:`predictor.gputime.WORK_KEYS`, 0 where missing), with
    the bounds when the counts have what they need."""
    row, b = model_inputs(counts, gpu, block_size=block_size)
    if getattr(model, "family", "") == "bounded":
        return row, b
    work = {k: counts.get(k, 0.0) for k in WORK_KEYS}
    return tree_inputs(work, counts, gpu, block_size=block_size, simulated_s=simulated_s), b
