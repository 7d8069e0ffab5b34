"""Timing on a real GPU: the CUDA back end (CUDA events around the launch and around copies + launch),
the CPU wall clock, and why no GPU is usable."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Protocol

from .host import device_attribute, host_machine, nvidia_smi


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
        info["gpu_sm_count"] = device_attribute(dev, "MULTIPROCESSOR_COUNT")
        try:
            major_minor = cuda.cudadrv.driver.driver.get_version()
            info["cuda_driver_api"] = "%d.%d" % tuple(major_minor)
        except Exception:  # noqa: BLE001
            info["cuda_driver_api"] = None
        clock = device_attribute(dev, "CLOCK_RATE")
        mem_clock = device_attribute(dev, "MEMORY_CLOCK_RATE")
        info["gpu_max_sm_clock_mhz"] = clock / 1000.0 if clock else None
        info["gpu_max_mem_clock_mhz"] = mem_clock / 1000.0 if mem_clock else None
        info.update(nvidia_smi())
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
