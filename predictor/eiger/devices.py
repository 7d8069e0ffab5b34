"""Characteristics of the 15 devices of the AIWC dataset (``devices.csv`` beside this module).

The table was compiled from the vendors' public specifications (product pages, datasheets and
whitepapers named in its ``source`` column): compute units (cores, SMs or CUs), processing elements
(CUDA cores / stream processors; for CPUs, cores x single-precision SIMD lanes), base and boost clocks,
peak memory bandwidth, L1 per compute unit, total L2 and last-level cache, and board/package power.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

#: Numeric columns used as machine metrics, in this order.
MACHINE_METRICS = (
    "compute_units",
    "processing_elements",
    "base_clock_mhz",
    "boost_clock_mhz",
    "memory_bandwidth_gbs",
    "l1_cache_kb_per_cu",
    "l2_cache_kb",
    "last_level_cache_kb",
    "tdp_w",
)
_TEXT = ("device", "vendor", "kind", "model", "source")


def load_devices() -> pd.DataFrame:
    """The device table, indexed by the AIWC device name.

    Returns
    -------
    DataFrame with the text columns ``vendor, kind, model, source`` and the numeric
    :data:`MACHINE_METRICS` (float), one row per device.
    """
    path = resources.files("predictor.eiger") / "devices.csv"
    with resources.as_file(path) as p:
        df = pd.read_csv(p)
    missing = [c for c in _TEXT + MACHINE_METRICS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}")
    for c in MACHINE_METRICS:
        df[c] = pd.to_numeric(df[c], errors="raise").astype(float)
    return df.set_index("device")


def machine_vectors() -> dict[str, dict[str, float]]:
    """Machine metric vectors by device name, ready for :meth:`predictor.eiger.db.TrialsDB.add_machine`."""
    df = load_devices()
    return {dev: {c: float(row[c]) for c in MACHINE_METRICS} for dev, row in df.iterrows()}
