"""What ``portcast simulate``, ``scale`` and ``dvfs`` share: loading a trace, script or function into warp
streams (:func:`portcast.pipeline.load_streams`) and making a scaling dataset of a trace, with the commands'
status line and sweep progress bar."""

from __future__ import annotations

from pathlib import Path

from rich.progress import Progress

from portcast.commands._common import console


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


def is_script(source) -> bool:
    """Whether a SOURCE argument names a Python script (``.py``) rather than a trace or dataset file."""
    from portcast.pipeline import is_script as check

    return check(source)


def load_streams(source: Path | None = None, block_size: int = 256, **options) -> list:
    """:func:`portcast.pipeline.load_streams` with this command's status line (used by ``scale`` and ``dvfs``
    too)."""
    from portcast.pipeline import load_streams as load

    return load(source, block_size, status=console.status, **options)


def trace_dataset(trace: Path, gpu: str = "h100", sweep: str | None = None, block_size: int = 256,
                  name: str | None = None, regions=None):
    """:func:`portcast.pipeline.trace_dataset` with this command's status line and sweep progress bar."""
    from portcast.pipeline import trace_dataset as make

    return make(trace, gpu, sweep, block_size, name, regions, status=console.status, run_sweep=sweep_with_progress)
