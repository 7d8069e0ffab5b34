"""``portcast simulate``: run a region's trace on the SIMT timing model of a GPU (docs/simt.md)."""

from __future__ import annotations

from profiler.atomic import atomic_write_json

from pathlib import Path
from typing import Optional

import typer
from rich.progress import Progress
from rich.table import Table

from portcast.commands._common import UserError, console, user_errors


def _errors():
    from gpu_models.dataset import DatasetError
    from gpu_models.dvfs.counters import CounterError
    from gpu_models.simt.config import ConfigError

    return user_errors(ConfigError, DatasetError, CounterError, ValueError)


def _write_json(path: Path, doc: dict) -> None:
    atomic_write_json(path, doc, indent=2, sort_keys=True)


# -- the trace loader shared with ``portcast scale`` and ``portcast dvfs`` ---------------------------------------


def load_trace_streams(trace: Path, block_size: int = 256):
    """Read a region's trace file and build its warp streams (with a status line on the console).

    Parameters
    ----------
    trace : Path
        Trace file of one region invocation (docs/trace-format.md).
    block_size : int
        Threads per block.

    Returns
    -------
    (str, WarpStreams)
        The region name and its warp streams (:func:`gpu_models.simt.pipeline.load_region`).
    """
    from gpu_models.simt.pipeline import load_region

    with console.status(f"building warp streams of {trace}"):
        return load_region(trace, block_size)


def sweep_with_progress(streams, cfg, grid, name: str):
    """Run a configuration sweep of a region's warp streams with a progress bar.

    Parameters
    ----------
    streams : WarpStreams
    cfg : GPUConfig
    grid : SweepGrid
    name : str
        Kernel name of the dataset rows.

    Returns
    -------
    ScalingDataset
        One row per configuration (:func:`gpu_models.simt.sweep.sweep`).
    """
    from gpu_models.simt.sweep import sweep as run_sweep

    with Progress(console=console, transient=True) as prog:
        task = prog.add_task(f"sweeping {name}: {grid.size} configurations", total=grid.size)
        return run_sweep(streams, cfg, grid, kernel=name,
                         progress=lambda done, total: prog.update(task, completed=done))


def trace_dataset(trace: Path, gpu: str = "h100", sweep: str | None = None, block_size: int = 256, name: str | None = None):
    """A region's trace -> its scaling-surface dataset: what ``simulate TRACE --sweep SWEEP --out D`` writes.

    ``portcast scale`` calls this when a DATA argument is a trace file, so that a trace and the dataset
    ``portcast simulate --sweep`` writes from it give the same results.

    Parameters
    ----------
    trace : Path
        Trace file (docs/trace-format.md).
    gpu : str
        GPU preset or description file.
    sweep : str, optional
        Grid text for :meth:`gpu_models.simt.sweep.SweepGrid.parse`; default: the preset's grid.
    block_size : int
        Threads per block.
    name : str, optional
        Kernel name for the rows (default: the region name).

    Returns
    -------
    ScalingDataset
    """
    from gpu_models.simt.config import load_config
    from gpu_models.simt.sweep import SweepGrid

    cfg = load_config(gpu)
    grid = SweepGrid.parse(sweep or "default", cfg)
    region, streams = load_trace_streams(trace, block_size)
    return sweep_with_progress(streams, cfg, grid, name or region)


def simulate_cmd(
    trace: Path = typer.Argument(..., help="Trace file of one region invocation (.parquet, docs/trace-format.md)."),
    gpu: str = typer.Option("h100", "--gpu", help="GPU preset (h100, gtx480) or a description .json file."),
    sweep: Optional[str] = typer.Option(
        None, "--sweep",
        help="Also sweep SM count x core clock x memory clock: 'default' (the preset's 8x8x7 = 448 grid) or "
             "'SMS;CORES;MEMS' with comma lists, e.g. '4,8,15;100,700;924' ('default' for any part)."),
    out: Optional[Path] = typer.Option(
        None, "--out", help="Write the run (.json) or, with --sweep, the scaling dataset (.csv/.parquet)."),
    counters_out: Optional[Path] = typer.Option(
        None, "--counters-out", help="Write the DVFS models' counters (CRISP, LEAD, CRIT, ...) for 'portcast dvfs' "
                                     "(.json/.csv)."),
    block_size: int = typer.Option(256, "--block-size", help="Threads per block."),
    sm_count: Optional[int] = typer.Option(None, "--sm", help="SM count (default: the preset's)."),
    core_mhz: Optional[float] = typer.Option(None, "--core-mhz", help="Core clock (default: the preset's)."),
    mem_mhz: Optional[float] = typer.Option(None, "--mem-mhz", help="Memory clock (default: the preset's)."),
) -> None:
    """Predict a region's GPU run time, counters and power from its trace; optionally sweep configurations."""
    with _errors():
        from gpu_models.dvfs.counters import save_counters
        from gpu_models.simt.config import load_config
        from gpu_models.simt.model import simulate
        from gpu_models.simt.sweep import SweepGrid

        cfg = load_config(gpu)
        if out is not None and sweep is None and out.suffix.lower() != ".json":
            raise UserError(f"--out {out}: a single run is written as .json (use --sweep for .csv/.parquet)")
        if out is not None and sweep is not None and out.suffix.lower() not in (".csv", ".parquet"):
            raise UserError(f"--out {out}: a sweep is written as .csv or .parquet")
        if counters_out is not None and counters_out.suffix.lower() not in (".json", ".csv"):
            raise UserError(f"--counters-out {counters_out}: use .json or .csv")
        grid = SweepGrid.parse(sweep, cfg) if sweep is not None else None
        name, streams = load_trace_streams(trace, block_size)
        with console.status(f"simulating on {cfg.name}"):
            res = simulate(streams, cfg, sm_count=sm_count, core_mhz=core_mhz, mem_mhz=mem_mhz, crisp=True, name=name)
        t = Table(title=f"{name} on {cfg.name}: {res.sm_count} SMs, {res.core_mhz:g} MHz core, {res.mem_mhz:g} MHz memory")
        t.add_column("quantity")
        t.add_column("value", justify="right")
        t.add_row("threads / warps / blocks", f"{streams.n_threads} / {streams.n_warps} / {streams.n_blocks}")
        t.add_row("thread instructions / warp instructions", f"{streams.n_records} / {streams.n}")
        t.add_row("cycles", f"{res.cycles}")
        t.add_row("time (us)", f"{res.time_ns / 1000:.3f}")
        t.add_row("dynamic power (W)", f"{res.power_w:.2f}")
        for k, v in res.counters.items():
            t.add_row(k, f"{v:.4g}")
        c = res.crisp
        t.add_row("CRISP: load critical path (us)", f"{c.lcp / 1000:.3f}")
        t.add_row("CRISP: overlapped computation (us)", f"{c.lcp_comp / 1000:.3f}")
        t.add_row("CRISP: store stalls (us)", f"{c.store_stall / 1000:.3f}")
        console.print(t)
        if counters_out is not None:
            save_counters([c], counters_out)
            console.print(f"wrote DVFS counters to {counters_out}")
        if grid is None:
            if out is not None:
                doc = {"schema": "portcast.simt.run", "schema_version": 1, "region": name, "block_size": block_size}
                doc.update(res.to_json())
                _write_json(out, doc)
                console.print(f"wrote {out}")
            return
        ds = sweep_with_progress(streams, cfg, grid, name)
        f = ds.frame
        best = f.loc[f["time"].idxmin()]
        console.print(f"sweep: {grid.size} configurations, fastest {best['time'] * 1e6:.3f} us at "
                      f"{int(best['sm_count'])} SMs, {best['core_mhz']:g} MHz core, {best['mem_mhz']:g} MHz memory")
        if out is not None:
            ds.write(out)
            console.print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Add ``portcast simulate``."""
    app.command("simulate")(simulate_cmd)
