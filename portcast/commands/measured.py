"""``portcast measured trace|report``: the ports of measured GPU kernels (kernels/measured, docs/measured.md)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from portcast.safe_text import escape

from ._common import UserError, console, progress_bar, split_list, user_errors

app = typer.Typer(help="Ports of the GPU kernels others timed: trace them, compare their work with the data.",
                  no_args_is_help=True)


@app.command("trace")
def trace_cmd(
    out: Path = typer.Option(..., "--out", help="Parquet file to write (one row per port x point)."),
    ports: Optional[List[str]] = typer.Option(None, "--ports", help="Port names (repeat or comma-separate); "
                                              "default all."),
    points: Optional[List[str]] = typer.Option(None, "--points", help="Point labels (tiny, small, ..., "
                                               "'test', or PORT@LABEL for one port's); default every "
                                               "measured point."),
    max_work: Optional[int] = typer.Option(None, "--max-work", min=1,
                                           help="Skip points with more global work items than this."),
    no_features: bool = typer.Option(False, "--no-features", help="Count work only (faster)."),
    feature_records: Optional[int] = typer.Option(None, "--feature-records", min=1,
                                                  help="Compute features only for regions of at most this many "
                                                  "records (the feature engine is the slow part)."),
    simulate: bool = typer.Option(False, "--simulate", help="Also run the SIMT model on the preset of every GPU "
                                  "of the point's data (columns sim_<preset>, seconds)."),
    sample: bool = typer.Option(False, "--sample", help="With --simulate: simulate a large region's share of "
                                "blocks on a 4-SM slice of each GPU, at most two waves, and extrapolate "
                                "(bounded memory and time; docs/measured.md)."),
    seed: int = typer.Option(0, "--seed", help="Input seed."),
) -> None:
    """Trace the ports at their measured points: threads, instructions, loads, stores, bytes touched, features."""
    import datetime

    from core.version import portcast_version
    from kernels.measured.harness.points import selected_points, trace_points, write_points_table
    from kernels.measured.registry import all_measured

    with user_errors(ValueError):
        specs = all_measured()
        names = split_list(ports) or list(specs)
        unknown = [n for n in names if n not in specs]
        if unknown:
            raise UserError(f"unknown port(s) {', '.join(unknown)}; known: {', '.join(specs)}")
        if out.suffix.lower() != ".parquet":
            raise UserError(f"{out}: --out must be a .parquet path")
        if not out.parent.exists():
            raise UserError(f"{out.parent}: output folder does not exist")
        labels = split_list(points)
        chosen = [specs[n] for n in names]
        with progress_bar("trace") as progress:
            task = progress.add_task("", total=len(selected_points(chosen, labels, max_work)))
            table = trace_points(chosen, labels, seed=seed, features=not no_features, simulate=simulate, sample=sample,
                                 feature_records=feature_records, max_global_work=max_work,
                                 progress=lambda n, p: progress.update(task, advance=1, description=f"{n} {p}"))
        cmd = ("portcast measured trace" + (f" --ports {','.join(names)}" if ports else "")
               + (f" --points {','.join(labels)}" if labels else "") + (f" --max-work {max_work}" if max_work else "")
               + (" --no-features" if no_features else "")
               + (f" --feature-records {feature_records}" if feature_records else "")
               + (" --simulate" if simulate else "")
               + (" --sample" if sample else "")
               + (f" --seed {seed}" if seed else "") + f" --out {out}")
        path = write_points_table(table, out, extra={"command": cmd, "date": datetime.date.today().isoformat(),
                                                     "portcast_version": portcast_version()})
    console.print(f"wrote {len(table)} traced points to {escape(path)}")


@app.command("merge")
def merge_cmd(
    parts: List[Path] = typer.Argument(..., help="Points tables written by `portcast measured trace`."),
    out: Path = typer.Option(..., "--out", help="Parquet file to write (the rows of every part)."),
) -> None:
    """Join points tables traced apart (for example one port per process) into one."""
    import datetime

    from core.version import portcast_version
    from kernels.measured.harness.points import (
        merge_points_tables,
        points_table_extra,
        read_points_table,
        write_points_table,
    )
    from kernels.measured.registry import all_measured

    with user_errors(ValueError, FileNotFoundError):
        if out.suffix.lower() != ".parquet":
            raise UserError(f"{out}: --out must be a .parquet path")
        table = merge_points_tables([read_points_table(p) for p in parts], all_measured())
        extra = {"command": f"portcast measured merge {' '.join(str(p) for p in parts)} --out {out}",
                 "parts": [points_table_extra(p).get("command", str(p)) for p in parts],
                 "date": datetime.date.today().isoformat(), "portcast_version": portcast_version()}
        path = write_points_table(table, out, extra=extra)
    console.print(f"wrote {len(table)} traced points from {len(parts)} tables to {escape(path)}")


@app.command("report")
def report_cmd(
    table: Optional[Path] = typer.Option(None, "--table", help="Traced points (default: the shipped table)."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Also write the faithfulness table as CSV."),
) -> None:
    """Faithfulness of the ports: Portcast's threads, work and footprint against the data's counts."""
    from rich.table import Table

    from core.atomic import atomic_path
    from kernels.measured.harness.faithfulness import faithfulness
    from kernels.measured.harness.points import read_points_table
    from kernels.measured.registry import all_measured

    with user_errors(ValueError):
        f = faithfulness(read_points_table(table), all_measured())
        if csv is not None:
            with atomic_path(csv) as tmp:
                f.to_csv(tmp, index=False)
    t = Table(title="Portcast / data, per traced point (work: instructions; AIWC counts LLVM IR instructions, "
                    "Amaris warp instructions)")
    heads = {"port": "port", "point": "point", "threads": "threads", "data_threads": "data threads",
             "work_ratio": "work", "footprint_ratio": "footprint", "load_ratio": "loads", "store_ratio": "stores"}
    cols = [c for c in heads if c in f.columns]
    for c in cols:
        t.add_column(heads[c], justify="left" if c in ("port", "point") else "right")
    for r in f[cols].itertuples(index=False):
        t.add_row(*[v if isinstance(v, str) else ("" if v != v else (f"{v:.3g}" if isinstance(v, float) else str(v)))
                    for v in r])
    console.print(t)


@app.command("correlate")
def correlate_cmd(
    table: Optional[Path] = typer.Option(None, "--table", help="Traced points with simulated times (default: the "
                                         "shipped table)."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Write every (point, GPU) pair as CSV."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the log-log scatter (PNG)."),
    floor: bool = typer.Option(False, "--floor", help="Add a per-GPU launch floor fitted on the training half "
                               "of the applications; report the training and the held-out half apart."),
    scale: bool = typer.Option(False, "--scale", help="With --floor: also fit a per-GPU scale of the model's "
                               "time (on the training half)."),
) -> None:
    """The SIMT model against the measured times: MAPE, Pearson (log) and Spearman per GPU, and a plot."""
    import pandas as pd
    from rich.table import Table

    from core.atomic import atomic_path
    from kernels.measured.harness.correlation import (
        NOT_KERNEL_TIME,
        calibration_text,
        correlation_parts,
        correlation_plot,
        pair_times,
    )
    from kernels.measured.harness.points import read_points_table
    from kernels.measured.harness.sources import measured_times
    from kernels.measured.registry import all_measured

    with user_errors(ValueError):
        points = read_points_table(table)
        if not any(c.startswith("sim_") for c in points.columns):
            raise UserError("the points table has no simulated times: make it with `portcast measured trace "
                            "--simulate`")
        raw = pair_times(points, measured_times(all_measured()))
        for port, why in NOT_KERNEL_TIME.items():
            if port in set(points.port):
                console.print(f"left out: {port}: {why}")
        results, floors = correlation_parts(raw, floor, scale)
        if floors:
            console.print("fitted per GPU: " + calibration_text(floors))
        every = pd.concat([r[1] for r in results], ignore_index=True)
        if csv is not None:
            with atomic_path(csv) as tmp:
                every.to_csv(tmp, index=False)
        if plot is not None:
            correlation_plot(every, plot)
    for title, _, summary in results:
        t = Table(title=f"SIMT model time against measured kernel time: {title}")
        for c in ("GPU", "pairs", "MAPE", "Pearson (log)", "Spearman"):
            t.add_column(c, justify="left" if c == "GPU" else "right")
        for r in summary.itertuples(index=False):
            t.add_row(r.gpu, str(r.pairs), f"{100 * r.mape:.0f}%", f"{r.pearson_log:.2f}", f"{r.spearman:.2f}")
        console.print(t)


@app.command("tables")
def tables_cmd(
    out_dir: Path = typer.Option(..., "--out-dir", help="Folder to write into (created if missing)."),
    table: Optional[Path] = typer.Option(None, "--table", help="Traced points (default: the shipped table)."),
) -> None:
    """Every table and the plot of docs/measured.md from the points table and the vendored data:
    faithfulness.csv / .md, correlation.md, pairs.csv and correlation.png."""
    import pandas as pd

    from core.atomic import atomic_path
    from kernels.measured.harness.correlation import (
        NOT_KERNEL_TIME,
        calibration_text,
        correlation_parts,
        correlation_plot,
        markdown_table,
        pair_times,
        summarize,
    )
    from kernels.measured.harness.faithfulness import faithfulness, faithfulness_by_application
    from kernels.measured.harness.points import read_points_table
    from kernels.measured.harness.sources import GPU_LABELS, measured_times
    from kernels.measured.registry import all_measured

    def write(name, text):
        with atomic_path(out_dir / name) as tmp:
            Path(tmp).write_text(text)

    with user_errors(ValueError):
        points = read_points_table(table)
        if not any(c.startswith("sim_") for c in points.columns):
            raise UserError("the points table has no simulated times: make it with `portcast measured trace "
                            "--simulate`")
        out_dir.mkdir(parents=True, exist_ok=True)
        specs = all_measured()
        f = faithfulness(points, specs)
        with atomic_path(out_dir / "faithfulness.csv") as tmp:
            f.to_csv(tmp, index=False)
        write("faithfulness.md", markdown_table(faithfulness_by_application(f)))
        raw = pair_times(points, measured_times(specs))
        text = ["Left out: " + "; ".join(f"{p}: {why}" for p, why in NOT_KERNEL_TIME.items()) + ".", ""]
        def shown(summary):
            t = summary.assign(gpu=summary.gpu.map(lambda g: GPU_LABELS.get(g, g)),
                               mape=summary.mape.map(lambda m: f"{100 * m:.0f}%" if m == m else "-"),
                               pearson_log=summary.pearson_log.round(2), spearman=summary.spearman.round(2))
            return markdown_table(t.rename(columns={"gpu": "GPU", "mape": "MAPE", "pearson_log": "Pearson (log)",
                                                    "spearman": "Spearman"}))

        for floor, scale in ((False, False), (True, False), (True, True)):
            parts, floors = correlation_parts(raw, floor, scale)
            if floors:
                text += ["Fitted on the training half, per GPU: " + calibration_text(floors) + ".", ""]
            for title, pairs, summary in parts:
                text += [f"**{title[0].upper() + title[1:]}**", "", shown(summary)]
            if floor and not scale:
                every = pd.concat([p for _, p, _ in parts], ignore_index=True)
                with atomic_path(out_dir / "pairs.csv") as tmp:
                    every.to_csv(tmp, index=False)
                correlation_plot(every, out_dir / "correlation.png")
            if scale:
                held = parts[1][1]
                above = held[held.measured_s >= 2 * held.gpu.map({g: v[1] for g, v in floors.items()})]
                text += ["**Held-out half, the points measured at least twice their GPU's fitted floor**", "",
                         shown(summarize(above)[1])]
        write("correlation.md", "\n".join(text))
    console.print(f"wrote faithfulness.csv, faithfulness.md, correlation.md, pairs.csv and correlation.png "
                  f"to {escape(out_dir)}")


@app.command("cpu-times")
def cpu_times_cmd(
    out: Optional[Path] = typer.Option(None, "--out", help="CSV to write, with a JSON sidecar <stem>.json (default: "
                                       "kernels/measured/data/cpu_times.csv)."),
    ports: Optional[List[str]] = typer.Option(None, "--port", help="Port names (repeat or comma-separate); "
                                              "default all."),
    max_work: Optional[int] = typer.Option(None, "--max-global-work", min=1,
                                           help="Skip points with more global work items than this."),
    seed: int = typer.Option(0, "--seed", help="Input seed."),
) -> None:
    """Single-thread CPU time of every port at every measured point: numba.njit (parallel=False), a warm-up run,
    then the best and the median of timed runs on fresh copies of the inputs."""
    import os
    import time

    from core.version import portcast_version
    from kernels.measured.harness.cpu_times import (
        SHIPPED_CPU_TIMES,
        host_description,
        selected,
        time_points,
        write_cpu_times,
    )
    from kernels.measured.registry import all_measured

    with user_errors(ValueError):
        given, out = out, out or SHIPPED_CPU_TIMES
        specs = all_measured()
        names = split_list(ports) or list(specs)
        unknown = [n for n in names if n not in specs]
        if unknown:
            raise UserError(f"unknown port(s) {', '.join(unknown)}; known: {', '.join(specs)}")
        if out.suffix.lower() != ".csv":
            raise UserError(f"{out}: --out must be a .csv path")
        if not out.parent.exists():
            raise UserError(f"{out.parent}: output folder does not exist")
        chosen = [specs[n] for n in names]
        host = host_description()
        t0 = time.perf_counter()
        with progress_bar("cpu-times") as progress:
            task = progress.add_task("", total=len(selected(chosen, None, max_work)))

            def step(row: dict) -> None:
                if row["repeats"]:
                    line = (f"{row['port']} {row['point']}: best {row['cpu_s']:.4g} s, median "
                            f"{row['cpu_median_s']:.4g} s, {row['repeats']} runs"
                            + ("" if row["same_result"] else ", RESULT DIFFERS between runs"))
                else:
                    line = f"{row['port']} {row['point']}: {row['how']}"
                progress.console.print(line, highlight=False, soft_wrap=True)
                progress.update(task, advance=1, description=f"{row['port']} {row['point']}")

            table = time_points(chosen, seed=seed, max_global_work=max_work, progress=step)
        wall = time.perf_counter() - t0
        cmd = ("portcast measured cpu-times" + (f" --port {','.join(names)}" if ports else "")
               + (f" --max-global-work {max_work}" if max_work else "") + (f" --seed {seed}" if seed else "")
               + (f" --out {given}" if given else ""))
        csv_path, sidecar = write_cpu_times(table, out, host, extra={
            "command": cmd, "seed": seed, "wall_s": round(wall, 1), "portcast_version": portcast_version(),
            "load_average_end": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None})
    console.print(f"wrote CPU times of {len(table)} points to {escape(csv_path)} (+ {escape(sidecar.name)}) in "
                  f"{wall:.0f} s")


def register(root: typer.Typer) -> None:
    """Add ``measured`` to the ``portcast`` command."""
    root.add_typer(app, name="measured")
