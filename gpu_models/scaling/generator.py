"""SYNTHETIC kernel x configuration data from a documented analytic model (not measurements).

The vendored Titan X data never vary the number of SMs/CUs, so the CU path of the scaling models is
exercised on this generator. Every kernel, dataset row and figure made from it is labelled synthetic
(kernel names start with ``syn_``, the ``group`` column reads ``synthetic:<archetype>``).

The machine (per CU count ``n``, core clock ``fc`` MHz, memory clock ``fm`` MHz):

- compute: ``OPS_PER_CYCLE`` operations per cycle per CU;
- DRAM: ``DRAM_BYTES_PER_CYCLE`` bytes per memory-clock cycle (the whole chip);
- L2: ``L2_MB`` megabytes shared by all CUs, ``L2_BYTES_PER_CYCLE`` bytes per core cycle.

A kernel has ``ops`` operations, ``dram_gb`` gigabytes that always come from DRAM, ``l2_gb`` gigabytes
of reuse traffic that hit in the L2 while the working set fits, a working set ``ws_mb`` per active CU,
``parallelism`` (at most that many CUs have work) and a fixed ``latency_s`` (launch, serial parts).
With ``a = min(n, parallelism)`` active CUs:

- ``t_comp = ops / (a * OPS_PER_CYCLE * fc * 1e6)``
- L2 hit rate ``h = min(1, L2_MB / (ws_mb * a))``: the L2 thrashes as more CUs compete for it;
- ``t_dram = (dram_gb + (1 - h) * l2_gb) * 1e9 / (DRAM_BYTES_PER_CYCLE * fm * 1e6)``
- ``t_l2 = h * l2_gb * 1e9 / (L2_BYTES_PER_CYCLE * fc * 1e6)``
- time ``t = latency_s + max(t_comp, t_dram, t_l2)`` (a roofline: the slowest resource bounds);
- power ``P = n * fc/1000 * (P_CU_BASE + P_CU_DYN * t_comp/t) + fm/1000 * (P_MEM_BASE + P_MEM_DYN * t_dram/t)``
  (dynamic power grows with clock and utilisation; W).

Counters at a configuration (what a profiler would read there): ``comp_util = t_comp/t``,
``dram_util = t_dram/t``, ``l2_util = t_l2/t``, ``l2_hit = h``, ``occupancy = a/n``, and
``ops_per_byte`` (log10 of ops per byte moved, at least one byte), each multiplied by log-normal noise of
``counter_noise``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_models.scaling.dataset import ScalingDataset

OPS_PER_CYCLE = 128.0
DRAM_BYTES_PER_CYCLE = 32.0
L2_MB = 2.0
L2_BYTES_PER_CYCLE = 512.0
P_CU_BASE, P_CU_DYN = 0.8, 2.4
P_MEM_BASE, P_MEM_DYN = 10.0, 30.0

ARCHETYPES: tuple[str, ...] = ("compute", "bandwidth", "balanced", "cache_thrash", "limited_parallelism",
                               "insensitive")
COUNTER_NAMES: tuple[str, ...] = ("comp_util", "dram_util", "l2_util", "l2_hit", "occupancy", "ops_per_byte")

DEFAULT_SM_COUNTS = (4, 8, 12, 16, 20, 24, 28, 32)
DEFAULT_CORE_MHZ = (300, 400, 500, 600, 700, 800, 900, 1000)
DEFAULT_MEM_MHZ = (475, 625, 775, 925, 1075, 1225, 1375)


@dataclass(frozen=True)
class SyntheticKernel:
    """Parameters of one synthetic kernel (see the module docstring for the model)."""

    name: str
    archetype: str
    ops: float
    dram_gb: float
    l2_gb: float
    ws_mb: float
    parallelism: float
    latency_s: float


def evaluate(k: SyntheticKernel, sm_count, core_mhz, mem_mhz) -> dict[str, np.ndarray]:
    """Time, power and noiseless counters of a kernel at the given configurations (broadcast arrays).

    Parameters
    ----------
    k:
        The kernel.
    sm_count, core_mhz, mem_mhz:
        Configuration values (scalars or arrays that broadcast).

    Returns
    -------
    dict
        ``time``, ``power`` and every name of :data:`COUNTER_NAMES`.
    """
    n = np.asarray(sm_count, dtype=float)
    fc = np.asarray(core_mhz, dtype=float)
    fm = np.asarray(mem_mhz, dtype=float)
    a = np.minimum(n, k.parallelism)
    t_comp = k.ops / (a * OPS_PER_CYCLE * fc * 1e6)
    h = np.minimum(1.0, L2_MB / (k.ws_mb * a))
    t_dram = (k.dram_gb + (1 - h) * k.l2_gb) * 1e9 / (DRAM_BYTES_PER_CYCLE * fm * 1e6)
    t_l2 = h * k.l2_gb * 1e9 / (L2_BYTES_PER_CYCLE * fc * 1e6)
    t = k.latency_s + np.maximum(np.maximum(t_comp, t_dram), t_l2)
    power = n * fc / 1000 * (P_CU_BASE + P_CU_DYN * t_comp / t) + fm / 1000 * (P_MEM_BASE + P_MEM_DYN * t_dram / t)
    bytes_moved = (k.dram_gb + k.l2_gb) * 1e9
    return {"time": t, "power": power, "comp_util": t_comp / t, "dram_util": t_dram / t, "l2_util": t_l2 / t,
            "l2_hit": h, "occupancy": a / n, "ops_per_byte": np.log10(k.ops / max(bytes_moved, 1.0)) + 0 * t}


def sample_kernels(n_per_archetype: int = 10, random_state: int | None = 0,
                   archetypes: tuple[str, ...] = ARCHETYPES) -> list[SyntheticKernel]:
    """Draw kernels of each archetype with randomised parameters.

    Parameters
    ----------
    n_per_archetype:
        Kernels per archetype.
    random_state:
        Seed.
    archetypes:
        Which archetypes (names of :data:`ARCHETYPES`).

    Returns
    -------
    list of SyntheticKernel
    """
    rng = np.random.default_rng(random_state)
    u = lambda lo, hi: float(np.exp(rng.uniform(np.log(lo), np.log(hi))))  # noqa: E731
    out = []
    for arch in archetypes:
        for i in range(n_per_archetype):
            ops = u(2e11, 4e11)
            if arch == "compute":
                p = dict(ops=ops, dram_gb=u(0.05, 0.2), l2_gb=0.1, ws_mb=0.01, parallelism=1e6, latency_s=1e-4)
            elif arch == "bandwidth":
                p = dict(ops=u(5e9, 1e10), dram_gb=u(40, 80), l2_gb=1.0, ws_mb=0.01, parallelism=1e6, latency_s=1e-4)
            elif arch == "balanced":
                # compute and DRAM time equal near 16 CUs, 600 MHz core, 925 MHz memory
                t_c = ops / (16 * OPS_PER_CYCLE * 600e6)
                p = dict(ops=ops, dram_gb=t_c * DRAM_BYTES_PER_CYCLE * 925e6 / 1e9 * u(0.8, 1.25), l2_gb=0.5,
                         ws_mb=0.01, parallelism=1e6, latency_s=1e-4)
            elif arch == "cache_thrash":
                p = dict(ops=u(2e10, 4e10), dram_gb=u(0.5, 1.0), l2_gb=u(150, 250),
                         ws_mb=L2_MB / u(6, 14), parallelism=1e6, latency_s=1e-4)
            elif arch == "limited_parallelism":
                p = dict(
                    ops=ops / 4,
                    dram_gb=u(0.05, 0.2),
                    l2_gb=0.1,
                    ws_mb=0.01,
                    parallelism=float(rng.integers(2, 7)),
                    latency_s=1e-4,
                )
            elif arch == "insensitive":
                p = dict(ops=u(1e8, 1e9), dram_gb=0.01, l2_gb=0.01, ws_mb=0.01, parallelism=1e6,
                         latency_s=u(0.2, 0.4))
            else:
                raise ValueError(f"unknown archetype {arch!r}; known: {', '.join(ARCHETYPES)}")
            out.append(SyntheticKernel(name=f"syn_{arch}_{i:02d}", archetype=arch, **p))
    return out


def generate(n_per_archetype: int = 10, sm_counts=DEFAULT_SM_COUNTS, core_mhz=DEFAULT_CORE_MHZ,
             mem_mhz=DEFAULT_MEM_MHZ, time_noise: float = 0.0, counter_noise: float = 0.02,
             random_state: int | None = 0, archetypes: tuple[str, ...] = ARCHETYPES) -> ScalingDataset:
    """A SYNTHETIC dataset: every sampled kernel at every configuration of the grid.

    Parameters
    ----------
    n_per_archetype:
        Kernels per archetype.
    sm_counts, core_mhz, mem_mhz:
        The grid.
    time_noise:
        Log-normal sigma applied to time and power (0 = exact model values).
    counter_noise:
        Log-normal sigma applied to every counter.
    random_state:
        Seed (kernels and noise).
    archetypes:
        Which archetypes.

    Returns
    -------
    ScalingDataset
        Columns ``kernel, sm_count, core_mhz, mem_mhz, time, power, group`` and the counters.
    """
    kernels = sample_kernels(n_per_archetype, random_state, archetypes)
    rng = np.random.default_rng(None if random_state is None else random_state + 1)
    S, C, M = np.meshgrid(np.asarray(sm_counts, float), np.asarray(core_mhz, float), np.asarray(mem_mhz, float),
                          indexing="ij")
    S, C, M = S.ravel(), C.ravel(), M.ravel()
    frames = []
    for k in kernels:
        v = evaluate(k, S, C, M)
        row = {"kernel": k.name, "sm_count": S.astype(int), "core_mhz": C, "mem_mhz": M,
               "time": v["time"] * np.exp(rng.normal(0, time_noise, len(S))) if time_noise else v["time"],
               "power": v["power"] * np.exp(rng.normal(0, time_noise, len(S))) if time_noise else v["power"],
               "group": f"synthetic:{k.archetype}"}
        for name in COUNTER_NAMES:
            x = np.broadcast_to(v[name], S.shape).astype(float)
            if counter_noise:
                x = x * np.exp(rng.normal(0, counter_noise, len(S)))
            row[name] = x
        frames.append(pd.DataFrame(row))
    return ScalingDataset(pd.concat(frames, ignore_index=True), source="synthetic generator")
