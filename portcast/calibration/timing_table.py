"""Writing a calibration table (CSV + JSON sidecar) and reading it back; joining it with the feature table
into a training table."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from core.atomic import atomic_write_text
from core.jsonfile import read_json

from .schema import CALIBRATION_SCHEMA_VERSION, MACHINE_FIELDS
from .simulated import is_simulated


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def write_calibration(table, machine: dict, out: str | os.PathLike, *, kernels: Sequence[str],
                      sizes: Sequence[str], repeats: int, warmup: int) -> tuple[Path, Path]:
    """Write the table as CSV and the JSON sidecar (``<out stem>.json``), each atomically.

    Parameters
    ----------
    table : the DataFrame from :func:`calibrate`.
    machine : the machine dict from :func:`calibrate`.
    out : CSV path.
    kernels, sizes, repeats, warmup : the run's settings, recorded in the sidecar.

    Returns
    -------
    (csv path, json path)
    """
    out = Path(out)
    if out.suffix.lower() != ".csv":
        raise ValueError(f"{out}: the calibration table is written as CSV; give a path ending in .csv")
    if not out.parent.exists():
        raise FileNotFoundError(f"{out.parent}: output folder does not exist")
    sidecar = out.with_suffix(".json")
    simulation = machine.get("simulation") if isinstance(machine.get("simulation"), dict) else None
    timing = {
        "cpu": "numba.njit (single thread), time.perf_counter around one call",
        "gpu_kernel": "CUDA events around GpuPort.launch, after to_device",
        "gpu_total": "CUDA events around to_device + launch + from_device",
        "spread": "q1/q3 are the 25th/75th percentiles (linear interpolation); min/max the extremes",
    }
    if simulation is not None:
        timing["gpu_kernel"] = (f"simulated: Portcast SIMT timing model, preset {simulation['preset']}, time of the "
                                "CPU region traced by the profiler (one deterministic run; the spread is zero)")
        timing["gpu_total"] = ("simulated: gpu_kernel + transfers, each input array copied to the device and each "
                               "result copied back over PCIe: sum over copies of (latency + bytes / bandwidth)")
    meta = {
        "schema_version": CALIBRATION_SCHEMA_VERSION,
        "kind": "portcast.calibration",
        "csv": out.name,
        "machine": {k: machine.get(k) for k in MACHINE_FIELDS},
        "kernels": list(kernels),
        "sizes": list(sizes),
        "repeats": repeats,
        "warmup": warmup,
        "gpu_source": "simulated" if simulation is not None else "measured",
        "timing": timing,
        "n_rows": int(len(table)),
        "n_check_failed": int((~table["check_ok"].astype(bool)).sum()) if len(table) else 0,
    }
    if simulation is not None:
        meta["simulation"] = simulation
    atomic_write_text(out, table.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(sidecar, json.dumps(meta, indent=2, sort_keys=False) + "\n")
    return out, sidecar


# ---------------------------------------------------------------------------------------------------------
# reading a calibration table back, and joining it with the feature table

#: Calibration CSV schema versions this Portcast reads.
READABLE_SCHEMA_VERSIONS = (1,)
#: Columns a calibration CSV must have to be joined with a feature table.
REQUIRED_COLUMNS = ("schema_version", "kernel", "size", "speedup_kernel", "speedup_total", "gpu_name")


def read_calibration(path: str | os.PathLike):
    """Read a calibration CSV written by :func:`write_calibration`, checking its schema version.

    Parameters
    ----------
    path : the CSV.

    Returns
    -------
    pandas.DataFrame; ``attrs["simulated"]`` is :func:`is_simulated` of it and ``attrs["sidecar"]`` the JSON
    sidecar's content (or None when there is none).

    Raises
    ------
    FileNotFoundError, ValueError
        Naming the file and the column, row or version at fault.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such calibration file")
    try:
        table = pd.read_csv(path)
    except (ValueError, OSError) as exc:
        raise ValueError(f"{path}: cannot read the calibration CSV ({exc})") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: not a Portcast calibration table (missing column(s) {', '.join(missing)})")
    versions = sorted({int(v) for v in pd.to_numeric(table["schema_version"], errors="coerce").fillna(-1)})
    bad = [v for v in versions if v not in READABLE_SCHEMA_VERSIONS]
    if bad:
        raise ValueError(f"{path}: calibration schema version {bad[0]}; this Portcast reads "
                         f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))}")
    sidecar = path.with_suffix(".json")
    meta = None
    if sidecar.is_file():
        meta = read_json(sidecar, what="calibration sidecar")
    table.attrs["simulated"] = is_simulated(table)
    table.attrs["sidecar"] = meta
    return table


def training_table(features, calibration, target: str = "speedup_kernel", *, source: str = "calibration"):
    """The training table of ``portcast train --calibration``: feature rows joined with their speedups.

    Rows are matched on ``(kernel, size)``; the result has the feature table's columns and ``target``. Points
    of either side without a partner are left out.

    Parameters
    ----------
    features : feature table (``portcast characterize``: ``kernel, size, n, category``, features).
    calibration : calibration table (:func:`read_calibration`).
    target : ``speedup_kernel`` or ``speedup_total`` (or another numeric calibration column).
    source : name of the calibration file, for error messages.

    Returns
    -------
    (pandas.DataFrame, list of (kernel, size) calibration points without feature rows)

    Raises
    ------
    ValueError
        Missing key or target columns, duplicate points, a non-positive or missing speedup, or no match.
    """
    for name, df, cols in (("feature table", features, ("kernel", "size")),
                           (source, calibration, ("kernel", "size", target))):
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"{name}: no column(s) {', '.join(missing)}")
    if target in features.columns:
        raise ValueError(f"feature table: already has a column {target!r}")
    for name, df in (("feature table", features), (source, calibration)):
        dup = df.duplicated(["kernel", "size"])
        if dup.any():
            i = int(np.flatnonzero(dup.to_numpy())[0])
            raise ValueError(f"{name}: point {df['kernel'].iloc[i]} {df['size'].iloc[i]} appears twice (row {i})")
    cal = calibration[["kernel", "size", target]].copy()
    import pandas as pd

    y = pd.to_numeric(cal[target], errors="coerce")
    bad = np.flatnonzero(~(np.isfinite(y.to_numpy(dtype=np.float64)) & (y.to_numpy(dtype=np.float64) > 0)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{source}: {target} of {cal['kernel'].iloc[i]} {cal['size'].iloc[i]} is "
                         f"{cal[target].iloc[i]} (row {i + 2}); speedups must be finite and > 0")
    cal[target] = y
    joined = features.merge(cal, on=["kernel", "size"], how="inner", validate="one_to_one")
    have = set(zip(features["kernel"], features["size"]))
    unmatched = [(k, s) for k, s in zip(cal["kernel"], cal["size"]) if (k, s) not in have]
    if joined.empty:
        raise ValueError(f"{source}: no (kernel, size) point matches the feature table")
    return joined.reset_index(drop=True), unmatched
