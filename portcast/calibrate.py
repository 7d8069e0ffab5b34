"""Calibration: time every corpus kernel's CPU region and GPU port on this machine.

For each kernel and problem size the CPU region is compiled with ``numba.njit`` (single thread) and timed
with a wall clock; the GPU port is timed with CUDA events, once as *kernel time* (around ``launch``
only, after ``to_device``, as the XAPP paper measures) and once as *transfer-inclusive time* (around
``to_device`` + ``launch`` + ``from_device``). Every point runs ``warmup`` untimed repetitions (which
also compile), then ``repeats`` timed ones; the table keeps the median, the quartiles and the extremes,
the speedups of the medians, and whether the GPU result matched the CPU result (``KernelSpec.check``).
The machine (CPU model, GPU name, driver, clocks, library versions, date) is recorded in every row and
in a JSON sidecar next to the CSV.

Timing goes through a *backend* object so that the table assembly can be tested without a GPU:
:class:`CudaBackend` is the real one; tests inject a fake with the same three methods.
"""

from __future__ import annotations

from profiler.atomic import atomic_write_text
import datetime as _dt
import importlib.metadata
import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

import numpy as np

CALIBRATION_SCHEMA_VERSION = 1
DEFAULT_SIZES = ("small", "medium", "large")

#: Machine description columns, in CSV order (also the keys of the sidecar's ``machine`` object).
MACHINE_FIELDS = (
    "cpu_model", "cpu_count", "gpu_name", "gpu_compute_capability", "gpu_sm_count", "gpu_driver",
    "cuda_driver_api", "gpu_sm_clock_mhz", "gpu_mem_clock_mhz", "gpu_max_sm_clock_mhz",
    "gpu_max_mem_clock_mhz", "numba_version", "numba_cuda_version", "numpy_version", "python_version",
    "numba_num_threads", "hostname", "date_utc",
)

#: Statistic suffixes written for each timed quantity.
STATS = ("median", "q1", "q3", "min", "max")
TIMED = ("cpu", "gpu_kernel", "gpu_total")

COLUMNS = (
    ("schema_version", "kernel", "category", "size", "n", "repeats", "warmup")
    + tuple(f"{t}_{s}_s" for t in TIMED for s in STATS)
    + ("speedup_kernel", "speedup_total", "check_ok", "check_message", "expect_gpu_faster")
    + MACHINE_FIELDS
)


class NoGpuError(RuntimeError):
    """Calibration was asked for on a machine without a usable NVIDIA GPU."""


class TimingBackend(Protocol):
    """What :func:`calibrate` needs from the machine."""

    def machine(self) -> dict[str, Any]:
        """The machine description: a value (or None) for every name in :data:`MACHINE_FIELDS`."""

    def time_cpu(self, fn: Callable, inputs: tuple, warmup: int, repeats: int) -> tuple[Any, list[float]]:
        """Run the compiled CPU region; return its result and ``repeats`` wall times in seconds."""

    def time_gpu(self, port, inputs: tuple, warmup: int, repeats: int) -> tuple[Any, list[float], list[float]]:
        """Run the GPU port; return its result, kernel times and transfer-inclusive times in seconds."""


# ---------------------------------------------------------------------------------------------------------
# the real backend


def gpu_unavailable_reason() -> str | None:
    """Why calibration cannot run here, or None when a real NVIDIA GPU is usable."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return ("the CUDA simulator is enabled (NUMBA_ENABLE_CUDASIM is set); calibration needs a real "
                "NVIDIA GPU — unset NUMBA_ENABLE_CUDASIM or set it to 0")
    try:
        from numba import cuda
    except ImportError:
        return "numba-cuda is not installed (pip install 'portcast[cuda]'); calibration needs an NVIDIA GPU"
    try:
        if not cuda.is_available():
            return "no NVIDIA GPU was found (numba.cuda.is_available() is False); calibration needs one"
    except Exception as exc:  # driver libraries missing or broken
        return f"the CUDA driver could not be used ({exc}); calibration needs an NVIDIA GPU"
    return None


class CudaBackend:
    """Times with ``time.perf_counter`` (CPU) and CUDA events (GPU) on the current CUDA device."""

    def __init__(self) -> None:
        reason = gpu_unavailable_reason()
        if reason:
            raise NoGpuError(reason)
        import numba
        from numba import cuda

        self._cuda = cuda
        try:
            numba.set_num_threads(1)  # njit regions are single-threaded anyway; recorded in the table
        except Exception:  # noqa: BLE001 - a missing threading layer must not stop calibration
            pass

    def machine(self) -> dict[str, Any]:
        cuda = self._cuda
        info = host_machine()
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        info["gpu_name"] = name
        info["gpu_compute_capability"] = "%d.%d" % tuple(dev.compute_capability)
        info["gpu_sm_count"] = _attr(dev, "MULTIPROCESSOR_COUNT")
        try:
            major_minor = cuda.cudadrv.driver.driver.get_version()
            info["cuda_driver_api"] = "%d.%d" % tuple(major_minor)
        except Exception:  # noqa: BLE001
            info["cuda_driver_api"] = None
        clock = _attr(dev, "CLOCK_RATE")
        mem_clock = _attr(dev, "MEMORY_CLOCK_RATE")
        info["gpu_max_sm_clock_mhz"] = clock / 1000.0 if clock else None
        info["gpu_max_mem_clock_mhz"] = mem_clock / 1000.0 if mem_clock else None
        info.update(_nvidia_smi())
        return info

    def time_cpu(self, fn, inputs, warmup, repeats):
        result = None
        for _ in range(max(warmup, 1)):  # the first call compiles
            result = fn(*inputs)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            result = fn(*inputs)
            times.append(time.perf_counter() - t0)
        return result, times

    def time_gpu(self, port, inputs, warmup, repeats):
        cuda = self._cuda
        result = None
        for _ in range(max(warmup, 1)):
            result = port.run(*inputs)
        cuda.synchronize()
        kernel, total = [], []
        for _ in range(repeats):
            e0, e1, e2, e3 = (cuda.event(timing=True) for _ in range(4))
            e0.record()
            state = port.to_device(*inputs)
            e1.record()
            port.launch(state)
            e2.record()
            result = port.from_device(state)
            e3.record()
            e3.synchronize()
            kernel.append(cuda.event_elapsed_time(e1, e2) / 1000.0)
            total.append(cuda.event_elapsed_time(e0, e3) / 1000.0)
        return result, kernel, total


def _attr(dev, name):
    try:
        return int(getattr(dev, name))
    except Exception:  # noqa: BLE001
        return None


def _nvidia_smi() -> dict[str, Any]:
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

    info: dict[str, Any] = {k: None for k in MACHINE_FIELDS}
    info["cpu_model"] = _cpu_model()
    info["cpu_count"] = os.cpu_count()
    info["numba_version"] = numba.__version__
    info["numba_cuda_version"] = _version("numba-cuda")
    info["numpy_version"] = np.__version__
    info["python_version"] = platform.python_version()
    info["numba_num_threads"] = numba.get_num_threads()
    info["hostname"] = platform.node()
    info["date_utc"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return info


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


# ---------------------------------------------------------------------------------------------------------
# the table


def summarize(times: Sequence[float]) -> dict[str, float]:
    """Median, quartiles (linear interpolation) and extremes of a list of times.

    Parameters
    ----------
    times : at least one time in seconds.

    Returns
    -------
    dict with keys ``median``, ``q1``, ``q3``, ``min``, ``max``.
    """
    if len(times) == 0:
        raise ValueError("no timings to summarise")
    a = np.asarray(times, dtype=np.float64)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return {"median": float(med), "q1": float(q1), "q3": float(q3), "min": float(a.min()), "max": float(a.max())}


def select(kernels: dict, names: Iterable[str] | None, sizes: Iterable[str] | None):
    """The (spec, size name) points to run, validating the names.

    Parameters
    ----------
    kernels : name -> KernelSpec (the corpus).
    names : kernel names, or None for all.
    sizes : size names, or None for ``small, medium, large``.

    Returns
    -------
    list of (KernelSpec, size name) pairs in kernel then size order.
    """
    names = list(kernels) if not names else list(names)
    unknown = [n for n in names if n not in kernels]
    if unknown:
        raise ValueError(f"unknown kernel(s) {', '.join(unknown)}; known: {', '.join(kernels)}")
    sizes = list(DEFAULT_SIZES) if not sizes else list(sizes)
    for name in names:
        missing = [s for s in sizes if s not in kernels[name].sizes]
        if missing:
            raise ValueError(f"kernel {name!r} has no size(s) {', '.join(missing)}; it has "
                             f"{', '.join(kernels[name].sizes)}")
    return [(kernels[n], s) for n in names for s in sizes]


def calibrate(points, backend: TimingBackend, *, repeats: int = 10, warmup: int = 2, seed: int = 0,
              compile_cpu: Callable[[Callable], Callable] | None = None,
              progress: Callable[[str, str], None] | None = None):
    """Time every point and return the calibration table.

    Parameters
    ----------
    points : list of (KernelSpec, size name), as from :func:`select`.
    backend : the timing backend (:class:`CudaBackend` on a real GPU).
    repeats, warmup : timed and untimed repetitions per point (``repeats >= 1``, ``warmup >= 0``).
    seed : input seed passed to ``make_inputs``.
    compile_cpu : turns a CPU region into the callable that is timed (default ``numba.njit``).
    progress : called with (kernel, size) after each point.

    Returns
    -------
    (pandas.DataFrame with :data:`COLUMNS`, machine dict)
    """
    import pandas as pd

    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if warmup < 0:
        raise ValueError(f"warmup must be at least 0, got {warmup}")
    if compile_cpu is None:
        import numba

        compile_cpu = numba.njit
    machine = backend.machine()
    compiled: dict[str, Callable] = {}
    rows = []
    for spec, size in points:
        n = spec.sizes[size]
        inputs = spec.make_inputs(n, seed)
        if spec.name not in compiled:
            compiled[spec.name] = compile_cpu(spec.cpu)
        cpu_result, cpu_times = backend.time_cpu(compiled[spec.name], inputs, warmup, repeats)
        gpu_result, k_times, t_times = backend.time_gpu(spec.gpu, inputs, warmup, repeats)
        try:
            spec.check(cpu_result, gpu_result)
            ok, message = True, ""
        except AssertionError as exc:
            ok, message = False, str(exc)
        row: dict[str, Any] = {"schema_version": CALIBRATION_SCHEMA_VERSION, "kernel": spec.name,
                               "category": spec.category, "size": size, "n": n, "repeats": repeats,
                               "warmup": warmup}
        for label, times in (("cpu", cpu_times), ("gpu_kernel", k_times), ("gpu_total", t_times)):
            for stat, value in summarize(times).items():
                row[f"{label}_{stat}_s"] = value
        row["speedup_kernel"] = _ratio(row["cpu_median_s"], row["gpu_kernel_median_s"])
        row["speedup_total"] = _ratio(row["cpu_median_s"], row["gpu_total_median_s"])
        row["check_ok"] = ok
        row["check_message"] = message
        row["expect_gpu_faster"] = spec.expect_gpu_faster
        for key in MACHINE_FIELDS:
            row[key] = machine.get(key)
        rows.append(row)
        if progress is not None:
            progress(spec.name, size)
    return pd.DataFrame(rows, columns=list(COLUMNS)), machine


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
    meta = {
        "schema_version": CALIBRATION_SCHEMA_VERSION,
        "kind": "portcast.calibration",
        "csv": out.name,
        "machine": {k: machine.get(k) for k in MACHINE_FIELDS},
        "kernels": list(kernels),
        "sizes": list(sizes),
        "repeats": repeats,
        "warmup": warmup,
        "timing": {
            "cpu": "numba.njit (single thread), time.perf_counter around one call",
            "gpu_kernel": "CUDA events around GpuPort.launch, after to_device",
            "gpu_total": "CUDA events around to_device + launch + from_device",
            "spread": "q1/q3 are the 25th/75th percentiles (linear interpolation); min/max the extremes",
        },
        "n_rows": int(len(table)),
        "n_check_failed": int((~table["check_ok"].astype(bool)).sum()) if len(table) else 0,
    }
    _atomic_write(out, table.to_csv(index=False, lineterminator="\n"))
    _atomic_write(sidecar, json.dumps(meta, indent=2, sort_keys=False) + "\n")
    return out, sidecar


def _atomic_write(path: Path, text: str) -> None:
    atomic_write_text(path, text)
