"""The status line and sweep progress bar ``portcast simulate`` and ``scale`` put around the pipeline's loaders
(:func:`portcast.pipeline.stage_run.load_streams`, :func:`portcast.pipeline.stage_run.load_scaling_data`)."""

from __future__ import annotations

from pathlib import Path

from rich.progress import Progress

from portcast.commands._common import console
from portcast.safe_text import as_text, escape


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
        task = prog.add_task(f"sweeping {escape(name)}: {grid.size} configurations", total=grid.size)
        return run_sweep(streams, cfg, grid, kernel=name,
                         progress=lambda done, total: prog.update(task, completed=done))


def load_streams(source: Path | None = None, block_size: int = 256, **options) -> list:
    """:func:`portcast.pipeline.stage_run.load_streams` with the command's status line."""
    from portcast.pipeline.stage_run import load_streams as load

    return load(source, block_size, status=lambda text: console.status(as_text(text)), **options)


