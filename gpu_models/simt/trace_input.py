"""Trace in, model inputs out: the functions ``portcast simulate``, ``portcast dvfs`` and ``portcast scale`` use.

* :func:`load_region` reads a trace file (or takes a chunk) and builds the warp streams;
* :class:`StreamsSink` builds them while a region is traced (``profiler.profile_script`` /
  ``trace_function``), so a marked region goes to the timing model without a trace file;
* :func:`trace_counters` runs the timing model at a base clock and returns the DVFS models' counters
  (a :class:`~gpu_models.dvfs.counter_record.CounterRecord`, what ``portcast dvfs predict`` reads);
* :func:`trace_sweep` runs the configuration grid and returns a scaling-surface dataset
  (a :class:`~gpu_models.scaling.dataset.ScalingDataset`, what ``portcast scale`` reads).
"""

from __future__ import annotations

import os
from pathlib import Path

from gpu_models.dvfs.counter_record import CounterRecord
from gpu_models.scaling.dataset import ScalingDataset
from gpu_models.simt.config import GPUConfig, load_config
from gpu_models.simt.model import SimResult, simulate
from gpu_models.simt.sweep import SweepGrid, sweep
from gpu_models.simt.threads import WarpStreams, build_streams
from profiler.trace import TraceChunk
from profiler.tracefile import is_trace_file  # noqa: F401  (re-exported: part of this module's API)


def load_region(trace: str | os.PathLike | TraceChunk, block_size: int = 256) -> tuple[str, WarpStreams]:
    """Read a region's trace and build its warp streams.

    Parameters
    ----------
    trace : path or TraceChunk
        A trace file (docs/trace-format.md; its static table's loops decide the warps' layout positions) or the
        records themselves (no static table: every record at its static id).
    block_size : int
        Threads per block.

    Returns
    -------
    (name, WarpStreams)
        The region name (from the file's metadata; ``region`` for a chunk) and the streams.
    """
    if isinstance(trace, TraceChunk):
        return "region", build_streams(trace, block_size)
    from profiler.tracefile import read_trace

    path = Path(trace)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such trace file")
    info, static, chunk = read_trace(path)
    return info.name or path.stem, build_streams(chunk, block_size, static=static)


class StreamsSink:
    """A trace sink that builds each traced region invocation's warp streams when the region ends.

    Only one region's records are held at a time (they are dropped once its streams are built), so a script
    with many region invocations costs the memory of its largest region, not of all of them.

    Parameters
    ----------
    block_size : int
        Threads per block.

    Attributes
    ----------
    regions : list of (RegionInfo, WarpStreams)
        One per complete region invocation, in the order they ended.
    incomplete : list of RegionInfo
        Invocations that ended early (an exception or Ctrl-C in the region); not simulated.
    """

    def __init__(self, block_size: int = 256) -> None:
        self.block_size = block_size
        self.regions: list[tuple] = []
        self.incomplete: list = []
        self._chunks: list[TraceChunk] = []

    def start_region(self, info, static) -> None:
        self._chunks = []

    def consume(self, chunk: TraceChunk) -> None:
        # copy: a tracer may reuse its buffers after handing a chunk over
        self._chunks.append(TraceChunk(**{k: v.copy() for k, v in chunk.columns().items()}))

    def end_region(self, info, static) -> None:
        chunks, self._chunks = self._chunks, []
        if not info.complete:
            self.incomplete.append(info)
            return
        self.regions.append((info, build_streams(TraceChunk.concat(chunks), self.block_size, static=static)))


def _cfg(gpu: str | GPUConfig) -> GPUConfig:
    return gpu if isinstance(gpu, GPUConfig) else load_config(gpu)


def trace_simulate(trace, gpu: str | GPUConfig = "h100", block_size: int = 256, **overrides) -> SimResult:
    """Trace -> one simulated run (time, counters, power, CRISP record).

    Parameters
    ----------
    trace : path or TraceChunk
    gpu : preset name, description file or GPUConfig
    block_size : int
    **overrides
        ``sm_count``, ``core_mhz``, ``mem_mhz``.

    Returns
    -------
    SimResult
    """
    name, streams = load_region(trace, block_size)
    return simulate(streams, _cfg(gpu), name=name, **overrides)


def trace_counters(trace, gpu: str | GPUConfig = "gtx480", base_mhz: float | None = None,
                   block_size: int = 256) -> CounterRecord:
    """Trace -> the DVFS models' counters at a base clock (input of ``portcast dvfs predict``).

    Parameters
    ----------
    trace : path or TraceChunk
    gpu : preset name, description file or GPUConfig
    base_mhz : float, optional
        Base core clock (default: the GPU's nominal clock).
    block_size : int

    Returns
    -------
    CounterRecord
        Times in ns at ``base_mhz``.
    """
    name, streams = load_region(trace, block_size)
    cfg = _cfg(gpu)
    return simulate(streams, cfg, core_mhz=base_mhz, crisp=True, name=name).crisp


def trace_sweep(trace, gpu: str | GPUConfig = "h100", grid: SweepGrid | str | None = None, block_size: int = 256,
                progress=None) -> ScalingDataset:
    """Trace -> a scaling-surface dataset over a configuration grid (input of ``portcast scale``).

    Parameters
    ----------
    trace : path or TraceChunk
    gpu : preset name, description file or GPUConfig
    grid : SweepGrid, text for :meth:`SweepGrid.parse`, or None for the preset's 448-configuration grid
    block_size : int
    progress : callable(done, total), optional

    Returns
    -------
    ScalingDataset
    """
    name, streams = load_region(trace, block_size)
    cfg = _cfg(gpu)
    if isinstance(grid, str):
        grid = SweepGrid.parse(grid, cfg)
    return sweep(streams, cfg, grid, kernel=name, progress=progress)
