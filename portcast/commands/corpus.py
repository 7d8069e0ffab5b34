"""``portcast calibrate`` and ``portcast characterize``: measure and characterise the kernel corpus."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from portcast.safe_text import escape

from ._common import UserError, console, err_console, user_errors
from ._common import progress_bar as _progress
from ._common import split_list as _split

#: Exit status of ``portcast calibrate`` on a machine without a usable NVIDIA GPU.
EXIT_NO_GPU = 3


def _points(kernels, sizes, default_sizes):
    from kernels.registry import all_kernels
    from portcast.calibration import select

    try:
        return select(all_kernels(), kernels, sizes or list(default_sizes))
    except ValueError as exc:
        raise UserError(str(exc)) from None


def calibrate_cmd(
    out: Path = typer.Option(..., "--out", help="CSV file to write (a JSON sidecar is written next to it)."),
    kernels: Optional[List[str]] = typer.Option(
        None, "--kernels", help="Kernel names (repeat or comma-separate); default all."
    ),
    sizes: Optional[List[str]] = typer.Option(None, "--sizes", help="Size names; default small,medium,large."),
    repeats: int = typer.Option(10, "--repeats", min=1, help="Timed repetitions per point."),
    warmup: int = typer.Option(2, "--warmup", min=0, help="Untimed repetitions per point (compile + warm caches)."),
    seed: int = typer.Option(0, "--seed", help="Input seed."),
    simulate: Optional[str] = typer.Option(
        None,
        "--simulate",
        metavar="PRESET",
        help="No GPU: take GPU times from Portcast's SIMT timing model of this preset (e.g. h100) plus a PCIe "
        "transfer model; default sizes then small,medium. Rows say gpu_name='simulated: PRESET'.",
    ),
    block_size: int = typer.Option(256, "--block-size", min=1, help="Threads per block (with --simulate)."),
    max_records: Optional[float] = typer.Option(
        None,
        "--max-records",
        help="With --simulate: skip points whose trace has more thread instructions than this (counts from the "
        "shipped feature table, kernels/data/corpus_features.parquet); tracing holds a region's records in memory.",
    ),
) -> None:
    """Time every corpus kernel's CPU region (numba.njit, one thread) and GPU port (CUDA events) on this machine.

    With --simulate PRESET the GPU side is Portcast's SIMT timing model instead (docs/kernels.md).
    """
    from portcast.calibration import (
        DEFAULT_SIZES,
        SIMULATED_DEFAULT_SIZES,
        CudaBackend,
        NoGpuError,
        SimulatedBackend,
        calibrate,
        write_calibration,
    )

    errors = [ValueError]
    if simulate is not None:
        from gpu_models.simt.config import ConfigError

        errors.append(ConfigError)
    with user_errors(*errors):
        points = _points(_split(kernels), _split(sizes),
                         SIMULATED_DEFAULT_SIZES if simulate is not None else DEFAULT_SIZES)
        if out.suffix.lower() != ".csv":
            raise UserError(f"{out}: --out must be a .csv path")
        if not out.parent.exists():
            raise UserError(f"{out.parent}: output folder does not exist")
        skipped = []
        if max_records is not None:
            if simulate is None:
                raise UserError("--max-records applies to --simulate only")
            from portcast.calibration import limit_by_records
            from portcast.calibration.characterization import load_corpus_features

            ft = load_corpus_features()
            counts = {(k, s): v for k, s, v in zip(ft["kernel"], ft["size"], ft["mica_instructions"])}
            points, skipped = limit_by_records(points, counts, max_records)
            for name, size, rec in skipped:
                err_console.print(f"skipped {name} {size}: {rec:,.0f} thread instructions > --max-records "
                                  f"{max_records:,.0f}", highlight=False)
            if not points:
                raise UserError(f"--max-records {max_records:,.0f} leaves no point to run")
        if simulate is not None:
            backend = SimulatedBackend(simulate, block_size=block_size)
            backend.skipped.extend({"kernel": k, "size": z, "records": r} for k, z, r in skipped)
        else:
            try:
                backend = CudaBackend()
            except NoGpuError as exc:
                err_console.print(f"[bold red]error:[/] no GPU: {escape(exc)}", highlight=False)
                raise typer.Exit(EXIT_NO_GPU) from None
        with _progress("calibrate") as progress:
            task = progress.add_task("", total=len(points))

            def step(name, size):
                progress.update(task, advance=1, description=f"{name} {size}")

            table, machine = calibrate(points, backend, repeats=repeats, warmup=warmup, seed=seed, progress=step)
        names = sorted({spec.name for spec, _ in points})
        size_names = list(dict.fromkeys(size for _, size in points))
        csv_path, json_path = write_calibration(table, machine, out, kernels=names, sizes=size_names,
                                                repeats=repeats, warmup=warmup)
    failed = table.loc[~table["check_ok"].astype(bool), ["kernel", "size", "check_message"]]
    console.print(f"wrote {len(table)} points to {escape(csv_path)} (machine: {escape(json_path)})", highlight=False)
    if simulate is not None:
        console.print(f"GPU times are SIMULATED ({escape(machine['gpu_name'])}), not measured on a GPU",
                      highlight=False)
    for row in failed.itertuples(index=False):
        err_console.print(f"[yellow]warning:[/] {row.kernel} {row.size}: GPU result differs: "
                          f"{escape(row.check_message)}", highlight=False)


def characterize_cmd(
    out: Path = typer.Option(..., "--out", help="Parquet file to write."),
    kernels: Optional[List[str]] = typer.Option(None, "--kernels",
                                                help="Kernel names (repeat or comma-separate); default all."),
    sizes: Optional[List[str]] = typer.Option(None, "--sizes", help="Size names; default tiny,small,medium,large."),
    seed: int = typer.Option(0, "--seed", help="Input seed."),
) -> None:
    """Trace every corpus kernel at every size and write the training-feature table (one row per kernel x size)."""
    import datetime

    from core.version import portcast_version
    from portcast.calibration.characterization import DEFAULT_SIZES, characterize, write_feature_table

    with user_errors(ValueError):
        points = _points(_split(kernels), _split(sizes), DEFAULT_SIZES)
        if out.suffix.lower() != ".parquet":
            raise UserError(f"{out}: --out must be a .parquet path")
        if not out.parent.exists():
            raise UserError(f"{out.parent}: output folder does not exist")
        with _progress("characterize") as progress:
            task = progress.add_task("", total=len(points))

            def step(name, size):
                progress.update(task, advance=1, description=f"{name} {size}")

            table = characterize(points, seed=seed, progress=step)
        used = list(dict.fromkeys(size for _, size in points))
        extra = {"sizes": used, "command": "portcast characterize --sizes " + ",".join(used)
                 + (" --kernels " + ",".join(dict.fromkeys(spec.name for spec, _ in points)) if kernels else "")
                 + (f" --seed {seed}" if seed else "") + f" --out {out}",
                 "date": datetime.date.today().isoformat(), "portcast_version": portcast_version(),
                 "mode": "auto (compiled where Numba compiles the region)"}
        path = write_feature_table(table, out, seed=seed, extra=extra)
    console.print(f"wrote {len(table)} rows x {table.shape[1] - 4} features to {escape(path)}")


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` and ``characterize`` to the ``portcast`` command."""
    app.command("calibrate")(calibrate_cmd)
    app.command("characterize")(characterize_cmd)
