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

:class:`SimulatedBackend` (``portcast calibrate --simulate h100``) replaces the GPU side by Portcast's SIMT
timing model (docs/simt.md): the kernel time is the model's time for the CPU region traced by the profiler,
the transfer-inclusive time adds the inputs' and outputs' copies over a PCIe link of stated bandwidth and
latency (:data:`PCIE_BANDWIDTH_B_PER_S`, :data:`PCIE_LATENCY_S`). Its rows say so in ``gpu_name``
(``"simulated: <preset>"``, see :func:`is_simulated`) and its sidecar in ``gpu_source`` and ``simulation``.
"""

from __future__ import annotations

import copy
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

from profiler.atomic import atomic_write_text
from profiler.jsonfile import read_json

CALIBRATION_SCHEMA_VERSION = 1
DEFAULT_SIZES = ("small", "medium", "large")
#: Default sizes of ``portcast calibrate --simulate``: the sizes of the shipped feature table (tracing ``large``
#: takes hours).
SIMULATED_DEFAULT_SIZES = ("small", "medium")

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
    """What :func:`calibrate` needs from the machine.

    A backend may also define ``time_gpu_point(spec, size, inputs, warmup, repeats)`` with the return value of
    ``time_gpu``; :func:`calibrate` then calls it instead of ``time_gpu`` (the simulated backend needs the
    kernel's CPU region, not its GPU port).
    """

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
        return time_cpu_wall(fn, inputs, warmup, repeats)

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


def time_cpu_wall(fn: Callable, inputs: tuple, warmup: int, repeats: int) -> tuple[Any, list[float]]:
    """Wall-clock times of ``fn(*inputs)``: ``max(warmup, 1)`` untimed calls (the first compiles), then ``repeats``.

    Parameters
    ----------
    fn : the compiled CPU region.
    inputs : its arguments.
    warmup, repeats : untimed and timed calls.

    Returns
    -------
    (result of the last call, list of ``repeats`` times in seconds)
    """
    result = None
    for _ in range(max(warmup, 1)):  # the first call compiles
        result = fn(*inputs)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn(*inputs)
        times.append(time.perf_counter() - t0)
    return result, times


# ---------------------------------------------------------------------------------------------------------
# the simulated backend

#: Host<->device copy bandwidth assumed by the simulated backend: 50 GB/s, a practical pinned-memory figure of a
#: PCIe 5.0 x16 link (64 GT/s x 16 lanes = 63 GB/s per direction after 128b/130b encoding; ~80% of it is reached
#: by large copies). Pageable NumPy arrays copy slower, so this flatters the GPU's transfer-inclusive time.
PCIE_BANDWIDTH_B_PER_S = 50e9
#: Fixed cost per copy (one cudaMemcpy: driver call + link round trip): 10 microseconds.
PCIE_LATENCY_S = 10e-6


def _leaves(value) -> list:
    """The arrays and scalars of a kernel's inputs or result (tuples and lists flattened)."""
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def transfer_copies(inputs: tuple, result) -> tuple[list[int], list[int]]:
    """The host-to-device and device-to-host copies of a kernel, as byte counts.

    Every NumPy array among the inputs is copied to the device (scalars travel as kernel arguments: no copy);
    every part of the result (array or scalar, e.g. a reduction's one number) is copied back.

    Parameters
    ----------
    inputs : the CPU region's arguments.
    result : the CPU region's return value.

    Returns
    -------
    (bytes of each host-to-device copy, bytes of each device-to-host copy)
    """
    h2d = [int(a.nbytes) for a in _leaves(tuple(inputs)) if isinstance(a, np.ndarray)]
    d2h = [int(np.asarray(r).nbytes) for r in _leaves(result) if r is not None]
    return h2d, d2h


def transfer_time(h2d: Sequence[int], d2h: Sequence[int], bandwidth: float = PCIE_BANDWIDTH_B_PER_S,
                  latency: float = PCIE_LATENCY_S) -> float:
    """Time of a kernel's copies over PCIe: the sum over copies of ``latency + bytes / bandwidth``.

    Parameters
    ----------
    h2d, d2h : bytes of each copy in each direction (:func:`transfer_copies`).
    bandwidth : bytes per second (default :data:`PCIE_BANDWIDTH_B_PER_S`).
    latency : seconds per copy (default :data:`PCIE_LATENCY_S`).

    Returns
    -------
    float, seconds
    """
    copies = list(h2d) + list(d2h)
    return len(copies) * latency + sum(copies) / bandwidth


def is_simulated(table) -> bool:
    """Whether a calibration table's GPU times come from the SIMT model (``gpu_name`` = ``"simulated: ..."``).

    Parameters
    ----------
    table : pandas.DataFrame read from a calibration CSV.

    Returns
    -------
    bool (True when any row is simulated)
    """
    if "gpu_name" not in table.columns or len(table) == 0:
        return False
    return bool(table["gpu_name"].astype(str).str.startswith("simulated:").any())


class SimulatedBackend:
    """CPU timed as :class:`CudaBackend` does; GPU times from the SIMT timing model and a PCIe link model.

    For each point the kernel's CPU region is traced once by the profiler
    (``profiler.session.trace_function`` with :class:`gpu_models.simt.pipeline.StreamsSink`: the parallel
    loop's iterations are the GPU threads, ``block_size`` per block) and the warp streams are run on the preset
    (:func:`gpu_models.simt.model.simulate`): that time is ``gpu_kernel``. ``gpu_total`` adds
    :func:`transfer_time` of :func:`transfer_copies`. The model is deterministic, so one run gives every
    statistic. The traced run's result stands in for the GPU result in ``KernelSpec.check`` (it checks that
    the traced region computed what the compiled one did). Work outside the parallel loop is not part of
    the SIMT model's kernel (docs/simt.md), so serial code costs nothing on the simulated GPU.

    Parameters
    ----------
    preset : SIMT GPU preset name or description file (default ``h100``).
    block_size : threads per block.
    bandwidth, latency : the PCIe link (bytes/s, s per copy).
    mode : tracing mode (auto | interpreted | compiled).

    Attributes
    ----------
    points : list of dict
        Per point: kernel, n, threads, warps, records, simulated kernel seconds, copies and their bytes,
        transfer seconds (recorded in the sidecar by ``portcast calibrate --simulate``).
    """

    source = "simulated"

    def __init__(self, preset: str = "h100", block_size: int = 256, bandwidth: float = PCIE_BANDWIDTH_B_PER_S,
                 latency: float = PCIE_LATENCY_S, mode: str = "auto") -> None:
        from gpu_models.simt.config import load_config

        if not (bandwidth > 0 and latency >= 0):
            raise ValueError(f"PCIe bandwidth must be > 0 and latency >= 0, got {bandwidth} and {latency}")
        if block_size < 1:
            raise ValueError(f"block size must be at least 1, got {block_size}")
        self.preset = str(preset)
        self.cfg = load_config(preset)
        self.block_size = int(block_size)
        self.bandwidth = float(bandwidth)
        self.latency = float(latency)
        self.mode = mode
        self.points: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []  # points left out (e.g. by --max-records), for the sidecar
        import numba

        try:
            numba.set_num_threads(1)  # as CudaBackend: the njit region is timed on one thread
        except Exception:  # noqa: BLE001
            pass

    def machine(self) -> dict[str, Any]:
        info = host_machine()
        name = getattr(self.cfg, "name", None) or self.preset
        info["gpu_name"] = f"simulated: {name}"
        info["gpu_sm_count"] = int(self.cfg.sm_count)
        info["gpu_max_sm_clock_mhz"] = info["gpu_sm_clock_mhz"] = float(self.cfg.core_mhz)
        info["gpu_max_mem_clock_mhz"] = info["gpu_mem_clock_mhz"] = float(self.cfg.mem_mhz)
        info["simulation"] = {
            "preset": name, "model": "Portcast SIMT timing model (gpu_models/simt, docs/simt.md)",
            "block_size": self.block_size, "pcie_bandwidth_bytes_per_s": self.bandwidth,
            "pcie_latency_s_per_copy": self.latency, "trace_mode": self.mode,
            "transfer_formula": "sum over copies of (latency + bytes / bandwidth); one copy per input array to "
                                "the device and per result part back",
            "points": self.points,
            "skipped_points": self.skipped,
        }
        return info

    def time_cpu(self, fn, inputs, warmup, repeats):
        return time_cpu_wall(fn, inputs, warmup, repeats)

    def time_gpu(self, port, inputs, warmup, repeats):
        raise TypeError("SimulatedBackend simulates the CPU region; calibrate() calls time_gpu_point")

    def simulate_point(self, spec, inputs) -> dict[str, Any]:
        """Trace ``spec.cpu(*inputs)`` (on a copy of the inputs) and simulate it.

        Parameters
        ----------
        spec : KernelSpec
        inputs : its inputs

        Returns
        -------
        dict with ``result`` (the traced run's return value), ``kernel_s``, ``transfer_s``, ``h2d``/``d2h``
        (bytes per copy), ``threads``, ``warps``, ``records``.
        """
        from gpu_models.simt.model import simulate
        from gpu_models.simt.pipeline import StreamsSink
        from profiler.session import trace_function

        args = copy.deepcopy(tuple(inputs))
        h2d, _ = transfer_copies(args, None)
        sink = StreamsSink(self.block_size)
        traced = trace_function(spec.cpu, args, region=spec.name, sinks=[sink], mode=self.mode)
        if not sink.regions:
            why = sink.incomplete[-1].error if sink.incomplete else "no region recorded"
            raise RuntimeError(f"kernel {spec.name!r}: the traced region did not complete ({why})")
        _info, streams = sink.regions[-1]
        if streams.n_threads == 0:
            raise RuntimeError(f"kernel {spec.name!r}: the traced region has no parallel-loop iterations to simulate")
        sim = simulate(streams, self.cfg, crisp=False, name=spec.name)
        _, d2h = transfer_copies((), traced.value)
        return {"result": traced.value, "kernel_s": float(sim.time_ns) * 1e-9,
                "transfer_s": transfer_time(h2d, d2h, self.bandwidth, self.latency), "h2d": h2d, "d2h": d2h,
                "threads": int(streams.n_threads), "warps": int(streams.n_warps), "records": int(streams.n_records)}

    def time_gpu_point(self, spec, size, inputs, warmup, repeats):
        """One simulation of the point: (traced result, [kernel seconds], [kernel + transfer seconds])."""
        p = self.simulate_point(spec, inputs)
        self.points.append({"kernel": spec.name, "size": size,
                            **{k: p[k] for k in ("threads", "warps", "records", "kernel_s", "transfer_s")},
                            "h2d_bytes": p["h2d"], "d2h_bytes": p["d2h"]})
        return p["result"], [p["kernel_s"]], [p["kernel_s"] + p["transfer_s"]]


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


def limit_by_records(points, records: dict, max_records: float):
    """Split points into those whose traced instruction count is at most ``max_records`` and the rest.

    Parameters
    ----------
    points : list of (KernelSpec, size name).
    records : (kernel, size) -> traced thread instructions (e.g. ``mica_instructions`` of the shipped feature
        table); a point missing from it is kept.
    max_records : the limit.

    Returns
    -------
    (kept points, list of (kernel, size, records) skipped)
    """
    kept, skipped = [], []
    for spec, size in points:
        r = records.get((spec.name, size))
        if r is not None and float(r) > max_records:
            skipped.append((spec.name, size, float(r)))
        else:
            kept.append((spec, size))
    return kept, skipped


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
        point = getattr(backend, "time_gpu_point", None)
        if point is not None:
            gpu_result, k_times, t_times = point(spec, size, inputs, warmup, repeats)
        else:
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
    _atomic_write(out, table.to_csv(index=False, lineterminator="\n"))
    _atomic_write(sidecar, json.dumps(meta, indent=2, sort_keys=False) + "\n")
    return out, sidecar


def _atomic_write(path: Path, text: str) -> None:
    atomic_write_text(path, text)


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
