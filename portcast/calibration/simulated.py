"""The simulated back end (``portcast calibrate --simulate PRESET``): the SIMT timing model's time of the traced
CPU region as the GPU kernel time, plus the copies over a PCIe link of stated bandwidth and latency."""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from .cuda import time_cpu_wall
from .host import host_machine

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
    (``profiler.session.trace_function`` with :class:`gpu_models.simt.trace_input.StreamsSink`: the parallel
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
        from gpu_models.simt.trace_input import StreamsSink
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
