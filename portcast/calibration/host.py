"""The machine a calibration ran on: CPU model, GPU and driver, clocks, library versions, date."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
import subprocess
from typing import Any

import numpy as np

from .schema import MACHINE_FIELDS


def device_attribute(dev, name):
    try:
        return int(getattr(dev, name))
    except Exception:  # noqa: BLE001
        return None


def nvidia_smi() -> dict[str, Any]:
    """Driver version and current clocks from nvidia-smi, where it exists."""
    query = "driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"gpu_driver": None, "gpu_sm_clock_mhz": None, "gpu_mem_clock_mhz": None}
    parts = [p.strip() for p in out.strip().splitlines()[0].split(",")] if out.strip() else []
    if len(parts) < 5:
        return {"gpu_driver": None, "gpu_sm_clock_mhz": None, "gpu_mem_clock_mhz": None}
    info: dict[str, Any] = {"gpu_driver": parts[0]}
    for key, value in zip(("gpu_sm_clock_mhz", "gpu_mem_clock_mhz", "gpu_max_sm_clock_mhz", "gpu_max_mem_clock_mhz"),
                          parts[1:5]):
        try:
            info[key] = float(value)
        except ValueError:
            pass
    return info


def host_machine() -> dict[str, Any]:
    """The host side of the machine description (no GPU fields filled)."""
    import numba

    from kernels.measured.harness.cpu_times import cpu_model

    info: dict[str, Any] = {k: None for k in MACHINE_FIELDS}
    info["cpu_model"] = cpu_model()
    info["cpu_count"] = os.cpu_count()
    info["numba_version"] = numba.__version__
    info["numba_cuda_version"] = _version("numba-cuda")
    info["numpy_version"] = np.__version__
    info["python_version"] = platform.python_version()
    info["numba_num_threads"] = numba.get_num_threads()
    info["hostname"] = platform.node()
    info["date_utc"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return info


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
