"""Physical laws a GPU-time prediction must obey, checked on generated families of programs: the work counts and
features of the programs users write (streaming kernels, stencils over many time steps, all-pairs n-body in
float64 and float32, reductions, gathers) at any size, in the form the GPU-time model reads
(:func:`program`), and :func:`violations` counting the predictions of a model that break each law on every
GPU preset. ``portcast gpu-time evaluate`` reports them for every model family; ``tests/physics`` checks the
shipped model (and the same laws on programs traced through the profiler).

Laws (:data:`LAWS`):

* ``bound``: the predicted time is never below the region's own lower bound (``gpu_models.bounds``);
* ``size``: it never falls as the input grows;
* ``bytes``: a streaming kernel's time grows within 0.8-1.25x of its bytes once past the launch floor (its
  time at the smaller size at least :data:`PAST_FLOOR` launch overheads);
* ``launches``: a region of k launches costs at least k launch overheads;
* ``bandwidth``: a GPU with more DRAM bandwidth is not slower;
* ``fp64``: float64 code is not faster on a GPU with a lower FP64 rate.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

from gpu_models.bounds import COMPUTE_OPS, LAUNCH_SECONDS

KINDS = ("stream", "stencil", "nbody", "reduce", "gather")
LAWS = ("bound", "size", "bytes", "launches", "bandwidth", "fp64")
#: the ``bytes`` law applies once the smaller size takes at least this many launch overheads
PAST_FLOOR = 20


def program(kind: str, n: int, *, fp64: bool = True, arrays: int = 3, flops: int = 2, steps: int = 1,
            stride: int = 1) -> dict:
    """Work counts and features of one generated program at size ``n`` (elements, bodies or grid side).

    Per thread: ``per[OP]`` records of each class; loads and stores of ``size`` bytes; ``g`` sectors per warp
    memory access; ``launches`` launches of ``threads`` threads; ``footprint`` distinct bytes."""
    size = 8 if fp64 else 4
    sectors = None
    fpa, fpm = ("FP64_ALU", "FP64_MUL") if fp64 else ("FP_ALU", "FP_MUL")
    per = dict.fromkeys(COMPUTE_OPS, 0.0)
    if kind == "stream":  # y = f(x1 .. xk): k-1 loads, 1 store, `flops` operations per element
        threads, launches = n, 1
        loads, stores = arrays - 1, 1
        per.update({fpa: flops // 2 + flops % 2, fpm: flops // 2, "INT_ALU": 1, "BRANCH": 1})
        g, footprint, ilp = size, arrays * n * size, 3.0
    elif kind == "stencil":  # n x n grid, 5-point update then a copy back, `steps` time steps
        threads, launches = (n - 2) ** 2, 2 * steps
        loads, stores = 3, 1  # (5 + 1) / 2 loads and 1 store per thread per launch, on average
        per.update({fpa: 3, fpm: 1, "INT_ALU": 6, "INT_MUL": 2, "BRANCH": 1.5})
        g, footprint, ilp = size, 2 * n * n * size, 4.0
    elif kind == "nbody":  # n bodies, an inner loop over all n: ~20 operations and 4 loads per pair
        threads, launches = n, 1
        loads, stores = 4 * n + 6, 3
        per.update({fpa: 9 * n, fpm: 9 * n, "FP64_SPECIAL" if fp64 else "FP_SPECIAL": n, "INT_ALU": 2 * n,
                    "BRANCH": n})
        g, footprint, ilp = 1.0, 7 * n * size, 6.0  # the j loads are a broadcast: one sector per warp
    elif kind == "reduce":  # s += x[i]: one load and an atomic add per element
        threads, launches = n, 1
        loads, stores = 2, 1
        per.update({fpa: 1, "INT_ALU": 1, "BRANCH": 1})
        g, footprint, ilp = size, n * size + size, 2.0
    elif kind == "gather":  # y[i] = a * x[idx[i]], idx[i] = stride * i: a warp's x elements span stride x
        threads, launches = n, 1
        loads, stores = 2, 1
        per.update({"INT_ALU": 2, "BRANCH": 1, fpm: 1})
        x_sectors = min(32, stride * size)  # sectors of one warp's x access
        g = (8 + x_sectors + size) / 3  # idx (int64, coalesced), x, then the store of y
        footprint, ilp = (8 + 2 * size) * n, 2.0
        sectors = 32 * (math.ceil((8 + size) * n / 32) + math.ceil(n * x_sectors / 32))
    else:
        raise ValueError(kind)
    if sectors is None:
        sectors = 32 * math.ceil(footprint / 32)
    rpt = sum(per.values()) + loads + stores
    R = threads * rpt * launches
    N = R + 4 * launches  # the host loop around the launches
    ideal = size  # sectors of a fully coalesced warp access of `size`-byte elements
    c = {"threads": threads, "records": N, "thread_records": R, "loads": threads * loads * launches,
         "stores": threads * stores * launches, "load_bytes": threads * loads * launches * size,
         "store_bytes": threads * stores * launches * size, "unique_bytes": footprint,
         "launches": launches, "warp_launches": launches, "sector_bytes": sectors,
         "launch_sector_bytes": launches * sectors, "warp_simdEfficiency": 1.0,
         "warp_sectorsPerGroup": g, "warp_coalescing": min(1.0, ideal / g) if g >= 1 else 1.0, "ilp32": ilp,
         "coldRef": 0.2}
    for op in COMPUTE_OPS:
        c[f"mica_mix_{op}"] = threads * launches * per[op] / N
    fp = sum(per[o] for o in COMPUTE_OPS if o.startswith("FP"))
    c["mem"] = c["loads"] / N + c["stores"] / N
    c["fp"] = threads * launches * fp / N
    c["ctrl"] = threads * launches * per["BRANCH"] / N
    fp64 = sum(per[o] for o in COMPUTE_OPS if o.startswith("FP64"))
    c["fp64"] = fp64 / fp if fp else 0.0
    c.update(thread_mem=threads * launches * (loads + stores), thread_ctrl=threads * launches * per["BRANCH"],
             thread_fp=threads * launches * fp, thread_fp64=threads * launches * fp64)
    return c




def faster_memory(cfg, k: float):
    """``cfg`` with its memory clock, so its DRAM bandwidth, ``k`` times higher."""
    return dataclasses.replace(cfg, mem_mhz=cfg.mem_mhz * k, name=f"{cfg.name}-mem{k:g}")


def fewer_fp64_lanes(cfg, k: int):
    """``cfg`` with ``k`` times fewer FP64 lanes (a fraction of a lane per scheduler is allowed, as on the RTX 4090)."""
    lanes = dict(cfg.lanes)
    lanes["fp64"] = lanes["fp64"] / k
    return dataclasses.replace(cfg, lanes=lanes, name=f"{cfg.name}-fp64/{k:g}")


def _size_of(kind: str, n: int) -> int:
    # n-body and stencil sizes are a side (their work grows with its square)
    return max(34, int(n ** 0.5)) if kind in ("nbody", "stencil") else n


def violations(predict: Callable, presets, *, samples: int = 40, seed: int = 0) -> dict[str, int]:
    """How many of ``samples`` generated programs per preset (each at up to four sizes, and a streaming pair for
    ``bytes``) break each law of :data:`LAWS` under ``predict(counts, cfg) -> (seconds, Bounds)``. Programs and
    sizes are drawn from ``seed`` (sizes from 10^1.5 to 10^8.5 elements, steps, precisions, strides)."""
    from gpu_models.simt.config import load_config

    rng = np.random.default_rng(seed)
    out = dict.fromkeys(LAWS, 0)
    for preset in presets:
        cfg = load_config(preset)
        for _ in range(samples):
            kind = KINDS[int(rng.integers(len(KINDS)))]
            params = {"fp64": bool(rng.integers(2)), "arrays": int(rng.integers(2, 6)),
                      "flops": int(rng.integers(13)), "steps": int(rng.integers(1, 101)),
                      "stride": int(rng.integers(1, 65))}
            sizes = sorted({_size_of(kind, int(10 ** rng.uniform(1.5, 8.5))) for _ in range(4)})
            last = 0.0
            bad = dict.fromkeys(("bound", "size", "launches", "bandwidth", "fp64"), False)
            for n in sizes:
                c = program(kind, n, **params)
                t, b = predict(c, cfg)
                bad["bound"] |= t < b.total_lower * (1 - 1e-12)
                bad["size"] |= t < last * (1 - 1e-12)
                last = t
                bad["launches"] |= t < b.launches * LAUNCH_SECONDS * (1 - 1e-12)
                bad["bandwidth"] |= predict(c, faster_memory(cfg, 2.0))[0] > t * (1 + 1e-12)
                slow = fewer_fp64_lanes(cfg, 8) if params["fp64"] and "fp64" in cfg.lanes else None
                bad["fp64"] |= slow is not None and predict(c, slow)[0] < t * (1 - 1e-12)
            for law, broken in bad.items():
                out[law] += int(broken)
            n = int(10 ** rng.uniform(5, 8))
            small, big = program("stream", n, **params), program("stream", 10 * n, **params)
            t1, t2 = predict(small, cfg)[0], predict(big, cfg)[0]
            growth = (t2 / t1) / (big["unique_bytes"] / small["unique_bytes"])
            if t1 >= PAST_FLOOR * LAUNCH_SECONDS and not 0.8 <= growth <= 1.25:
                out["bytes"] += 1
    return out
