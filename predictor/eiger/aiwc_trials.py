"""The vendored AIWC dataset (``predictor/data/aiwc``) as Eiger trials.

One trial = one (application, kernel, problem size, device) point; the several runs of a point are
reduced to their median kernel time (the AIWC metrics are deterministic, identical across runs).
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from predictor.eiger.devices import MACHINE_METRICS, load_devices

#: The 31 architecture-independent AIWC metrics (application metrics of the trials; every column of the
#: source between ``kernel`` and ``invocation``).
AIWC_METRICS = (
    "opcode", "granularity", "barriers_per_instruction", "instructions_per_operand",
    "total_instruction_count", "workitems", "operand_sum", "total_barriers_hit",
    "min_instructions_to_barrier", "max_instructions_to_barrier", "median_instructions_to_barrier",
    "max_simd_width", "mean_simd_width", "stddev_simd_width", "total_memory_footprint",
    "ninety_percent_memory_footprint", "global_memory_address_entropy",
    *(f"local_memory_address_entropy_{i}" for i in range(1, 11)),
    "total_unique_branch_instructions", "ninety_percent_branch_instructions", "branch_entropy_yokota",
    "branch_entropy_average_linear",
)
AIWC_METRICS = tuple(AIWC_METRICS)
SIZES = ("tiny", "small", "medium", "large")


def raw_aiwc() -> pd.DataFrame:
    """The vendored ``full_dat.csv.gz`` as read (one row per run)."""
    path = resources.files("predictor") / "data" / "aiwc" / "full_dat.csv.gz"
    with resources.as_file(path) as p:
        return pd.read_csv(p)


def aiwc_trials(with_devices: bool = True) -> pd.DataFrame:
    """AIWC trials: median kernel and total time per (application, kernel, size, device).

    Parameters
    ----------
    with_devices : join the device characteristics (:data:`~predictor.eiger.devices.MACHINE_METRICS`).

    Returns
    -------
    DataFrame with ``application, kernel, size, device``, the :data:`AIWC_METRICS`, ``n_runs``,
    ``kernel_time`` and ``total_time`` (medians; the source's unit, apparently microseconds), and the
    machine metrics when asked; sorted by application, kernel, size order, device.
    """
    raw = raw_aiwc()
    keys = ["application", "kernel", "size", "device"]
    agg = {c: "first" for c in AIWC_METRICS}
    agg.update(kernel_time="median", total_time="median", run="count")
    df = raw.groupby(keys, sort=False).agg(agg).reset_index().rename(columns={"run": "n_runs"})
    if with_devices:
        dev = load_devices()
        unknown = sorted(set(df["device"]) - set(dev.index))
        if unknown:
            raise ValueError(f"AIWC devices missing from the device table: {unknown}")
        df = df.join(dev[list(MACHINE_METRICS)], on="device")
    df["_s"] = df["size"].map({s: i for i, s in enumerate(SIZES)})
    df = df.sort_values(["application", "kernel", "_s", "device"]).drop(columns="_s")
    return df.reset_index(drop=True)
