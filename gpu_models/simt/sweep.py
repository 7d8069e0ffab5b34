"""Configuration sweeps: one region over a grid of SM count x core clock x memory clock.

The warp streams (and their coalesced sector lists) are built once per trace; each configuration then runs
only the timing kernel. Configurations run in parallel on worker threads (the timing kernel releases the GIL).
The result is a scaling-surface dataset (:mod:`gpu_models.scaling.dataset`): one row per configuration with
``kernel, sm_count, core_mhz, mem_mhz, time`` (seconds), ``power`` (W, dynamic), ``group`` (``simt:<gpu>``)
and the Table II-style counters of :func:`gpu_models.simt.model.table2_counters` as counter columns.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import numba as nb
import numpy as np
import pandas as pd

from gpu_models.scaling.dataset import ScalingDataset
from gpu_models.simt.config import MAX_VALUE, GPUConfig
from gpu_models.simt.model import N_STATS, _kernel_args, _result, _run
from gpu_models.simt.threads import WarpStreams


@dataclasses.dataclass(frozen=True)
class SweepGrid:
    """SM counts x core clocks x memory clocks (the paper's default is 8 x 8 x 7 = 448)."""

    sm_counts: tuple[int, ...]
    core_mhz: tuple[float, ...]
    mem_mhz: tuple[float, ...]

    def __post_init__(self) -> None:
        for name in ("sm_counts", "core_mhz", "mem_mhz"):
            vals = getattr(self, name)
            if len(vals) == 0:
                raise ValueError(f"sweep grid: {name} is empty")
            if any(not (v > 0) for v in vals):
                raise ValueError(f"sweep grid: {name} must be positive, got {list(vals)}")
            if len(set(vals)) != len(vals):
                raise ValueError(f"sweep grid: {name} has repeated values {list(vals)}")

    @property
    def size(self) -> int:
        """Number of configurations."""
        return len(self.sm_counts) * len(self.core_mhz) * len(self.mem_mhz)

    def configs(self) -> list[tuple[int, float, float]]:
        """All configurations, SM count slowest, memory clock fastest.

        Returns
        -------
        list of (sm_count, core_mhz, mem_mhz)
        """
        return [(int(s), float(c), float(m)) for s in self.sm_counts for c in self.core_mhz for m in self.mem_mhz]

    @classmethod
    def default(cls, cfg: GPUConfig) -> "SweepGrid":
        """The preset's default grid (``sweep`` field of the description).

        Parameters
        ----------
        cfg : GPUConfig

        Returns
        -------
        SweepGrid
        """
        sw = cfg.sweep
        return cls(tuple(int(v) for v in sw["sm_counts"]), tuple(float(v) for v in sw["core_mhz"]),
                   tuple(float(v) for v in sw["mem_mhz"]))

    @classmethod
    def parse(cls, text: str, cfg: GPUConfig) -> "SweepGrid":
        """Parse ``SMS;CORES;MEMS`` (comma-separated lists, ``default`` or empty for the preset's list).

        Examples: ``"4,8,16;default;924"``, ``"default"`` (the preset's 448-configuration grid).

        Parameters
        ----------
        text : str
        cfg : GPUConfig

        Returns
        -------
        SweepGrid
        """
        d = cls.default(cfg)
        if text.strip() in ("", "default"):
            return d
        parts = text.split(";")
        if len(parts) != 3:
            raise ValueError(f"--sweep must be 'default' or SM_COUNTS;CORE_MHZ;MEM_MHZ (comma lists), got {text!r}")
        out = []
        for name, key, part, dflt, cast in zip(("SM counts", "core clocks", "memory clocks"),
                                               ("sm_count", "core_mhz", "mem_mhz"), parts,
                                               (d.sm_counts, d.core_mhz, d.mem_mhz), (int, float, float)):
            part = part.strip()
            if part in ("", "default"):
                out.append(dflt)
                continue
            try:
                vals = tuple(cast(v) for v in part.split(","))
            except ValueError:
                raise ValueError(f"--sweep: {name} must be a comma-separated list of numbers, got {part!r}") from None
            top = MAX_VALUE[key]
            bad = [v for v in vals if not (0 < v <= top)]
            if bad:
                raise ValueError(f"--sweep: {name} must be in (0, {top:g}], got {bad[0]:g}")
            out.append(vals)
        return cls(*out)


def sweep_stats(streams: WarpStreams, cfg: GPUConfig, grid: SweepGrid, threads: int | None = None) -> np.ndarray:
    """Run every configuration of a grid; the raw statistics vectors.

    Parameters
    ----------
    streams : WarpStreams
    cfg : GPUConfig
    grid : SweepGrid
    threads : int, optional
        Worker threads (default: Numba's thread count).

    Returns
    -------
    ndarray, shape (grid.size, N_STATS)
        Rows in the order of :meth:`SweepGrid.configs`.
    """
    confs = grid.configs()
    out = np.zeros((len(confs), N_STATS), np.float64)

    def one(j: int) -> None:
        s, c, m = confs[j]
        out[j] = _run(*_kernel_args(streams, cfg, s, c, m), -1)[0]

    workers = max(1, min(threads or nb.get_num_threads(), len(confs)))
    if workers == 1:
        for j in range(len(confs)):
            one(j)
    else:  # the timing kernel releases the GIL
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, range(len(confs))))
    return out


def sweep(streams: WarpStreams, cfg: GPUConfig, grid: SweepGrid | None = None, kernel: str = "region",
          batch: int = 64, progress: Callable[[int, int], None] | None = None) -> ScalingDataset:
    """Simulate a region over a configuration grid and return the scaling-surface dataset.

    Parameters
    ----------
    streams : WarpStreams
        The region's warp streams.
    cfg : GPUConfig
        The GPU (caches, latencies, pipelines); the grid overrides its SM count and clocks.
    grid : SweepGrid, optional
        Default: the preset's 8 x 8 x 7 grid.
    kernel : str
        Kernel name for the ``kernel`` column.
    batch : int
        Configurations per parallel batch (progress is reported between batches).
    progress : callable(done, total), optional
        Called after each batch.

    Returns
    -------
    ScalingDataset
        Columns ``kernel, sm_count, core_mhz, mem_mhz, time`` (s), ``power`` (W), ``group`` and counters.
    """
    grid = grid or SweepGrid.default(cfg)
    confs = grid.configs()
    rows = []
    for a in range(0, len(confs), batch):
        part = confs[a:a + batch]
        sub = _SubGrid(part)
        stats = sweep_stats(streams, cfg, sub)
        for (s, c, m), st in zip(part, stats):
            r = _result(st, cfg, s, c, m, streams.n_blocks, None)
            row = {"kernel": kernel, "sm_count": s, "core_mhz": c, "mem_mhz": m, "time": r.time_ns * 1e-9,
                   "power": max(r.power_w, 1e-12), "group": f"simt:{cfg.name}"}
            row.update(r.counters)
            rows.append(row)
        if progress is not None:
            progress(min(a + batch, len(confs)), len(confs))
    return ScalingDataset(pd.DataFrame(rows), source=f"simt sweep of {kernel} on {cfg.name}")


class _SubGrid:
    """A list of configurations posing as a grid for :func:`sweep_stats`."""

    def __init__(self, confs: Sequence[tuple[int, float, float]]) -> None:
        self._confs = list(confs)

    def configs(self):
        return self._confs
