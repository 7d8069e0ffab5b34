"""Synthetic SM issue streams for evaluating the DVFS models (the paper's Fig. 8/9 on timelines).

A generated kernel is an issue stream (:class:`~gpu_models.dvfs.timeline.Timeline`) drawn from a
:class:`KernelProfile`:

* each instruction is a load with probability ``load_frac``; its latency is uniform in
  ``[lat_lo_ns, lat_hi_ns]`` (fixed in time, so it does not scale with the clock);
* each load is consumed by the instruction ``1 + Geometric(1 / consumer_distance)`` slots later
  (``consumer_distance`` is the mean independent work the warps of an SM find to overlap with a load: small
  values give memory-bound kernels, large ones hide loads until the clock drops, the two-slope case);
* with ``chain_frac`` a load's address depends on the previous load (it waits for it), building serial
  chains of misses as in pointer chasing;
* every ``store_burst_every`` instructions a burst of ``store_burst_len`` stores is issued (SIMT stores from
  all warps at once); each holds one of ``store_queue_depth`` entries for ``store_ns`` (0 bursts = none);
* everything else is one cycle of computation.

:data:`PROFILES` holds the families used in ``docs/dvfs.md``; :func:`suite` draws several kernels of each
with fixed seeds, so tables are reproducible.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gpu_models.dvfs.timeline import COMPUTE, LOAD, STORE, Timeline


@dataclasses.dataclass(frozen=True)
class KernelProfile:
    """Parameters of one synthetic kernel family (see the module docstring)."""

    name: str
    n: int = 20000
    load_frac: float = 0.05
    lat_lo_ns: float = 300.0
    lat_hi_ns: float = 600.0
    consumer_distance: float = 20.0
    chain_frac: float = 0.0
    store_burst_every: int = 0
    store_burst_len: int = 0
    store_ns: float = 40.0
    store_queue_depth: int = 8


#: Families: memory-bound, compute-bound, overlapped (two-slope), pointer chasing, store-bound, mixed.
PROFILES: tuple[KernelProfile, ...] = (
    KernelProfile("membound", load_frac=0.08, consumer_distance=6.0),
    KernelProfile("compute", load_frac=0.002, consumer_distance=400.0),
    KernelProfile("overlap", load_frac=0.01, consumer_distance=300.0),
    KernelProfile("chase", load_frac=0.02, consumer_distance=30.0, chain_frac=0.8),
    KernelProfile(
        "store", load_frac=0.01, consumer_distance=60.0, store_burst_every=400, store_burst_len=48, store_ns=120.0
    ),
    KernelProfile(
        "mixed",
        load_frac=0.03,
        consumer_distance=80.0,
        chain_frac=0.3,
        store_burst_every=1000,
        store_burst_len=32,
        store_ns=150.0,
    ),
)


def generate(profile: KernelProfile, seed: int = 0) -> Timeline:
    """Draw one issue stream from ``profile``.

    Parameters
    ----------
    profile : KernelProfile
    seed : int
        Seed of the NumPy generator.

    Returns
    -------
    Timeline
    """
    rng = np.random.default_rng(seed)
    n = int(profile.n)
    kind = np.full(n, COMPUTE, dtype=np.int8)
    lat = np.zeros(n, dtype=np.float64)
    if profile.store_burst_every > 0 and profile.store_burst_len > 0:
        for start in range(profile.store_burst_every, n, profile.store_burst_every):
            kind[start : min(start + profile.store_burst_len, n)] = STORE
    free = kind == COMPUTE
    is_load = free & (rng.random(n) < profile.load_frac)
    kind[is_load] = LOAD
    loads = np.flatnonzero(is_load)
    lat[loads] = rng.uniform(profile.lat_lo_ns, profile.lat_hi_ns, loads.size)
    lat[kind == STORE] = profile.store_ns
    consumers = []
    producers = []
    dist = 1 + rng.geometric(1.0 / max(profile.consumer_distance, 1.0), loads.size)
    chained = rng.random(loads.size) < profile.chain_frac
    for k, i in enumerate(loads):
        c = i + dist[k]
        if c < n:
            consumers.append(c)
            producers.append(i)
        if k > 0 and chained[k]:
            consumers.append(i)
            producers.append(loads[k - 1])
    cons = np.asarray(consumers, dtype=np.int64)
    prods = np.asarray(producers, dtype=np.int64)
    order = np.lexsort((prods, cons))
    cons, prods = cons[order], prods[order]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(ptr, cons + 1, 1)
    ptr = np.cumsum(ptr)
    return Timeline(kind, lat, ptr, prods, profile.store_queue_depth)


def suite(per_profile: int = 2, n: int | None = None, seed: int = 0) -> list[tuple[str, Timeline]]:
    """Named kernels: ``per_profile`` draws of every profile in :data:`PROFILES`.

    Parameters
    ----------
    per_profile : int
        Kernels per family.
    n : int, optional
        Override of the instruction count of every profile.
    seed : int
        Base seed; kernel ``j`` of family ``p`` uses ``seed + 100 * p + j``.

    Returns
    -------
    list of (name, Timeline)
    """
    out = []
    for p, prof in enumerate(PROFILES):
        if n is not None:
            prof = dataclasses.replace(prof, n=int(n))
        for j in range(per_profile):
            out.append((f"{prof.name}-{j}", generate(prof, seed + 100 * p + j)))
    return out
