"""``portcast measured trace|report``: the ports of measured GPU kernels (kernels/measured, docs/measured.md)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

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
    simulate: bool = typer.Option(False, "--simulate", help="Also run the SIMT model on the preset of every GPU "
                                  "of the point's data (columns sim_<preset>, seconds)."),
    sample: bool = typer.Option(False, "--sample", help="With --simulate: simulate the first two waves of blocks "
                                "of a large region and extrapolate (bounded memory; docs/measured.md)."),
    seed: int = typer.Option(0, "--seed", help="Input seed."),
) -> None:
    """Trace the ports at their measured points: threads, instructions, loads, stores, bytes touched, features."""
    import datetime

    from kernels.measured.registry import all_measured
    from portcast.measured import selected_points, trace_points, write_points_table
    from profiler.session import _version

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
                                 max_global_work=max_work,
                                 progress=lambda n, p: progress.update(task, advance=1, description=f"{n} {p}"))
        cmd = ("portcast measured trace" + (f" --ports {','.join(names)}" if ports else "")
               + (f" --points {','.join(labels)}" if labels else "") + (f" --max-work {max_work}" if max_work else "")
               + (" --no-features" if no_features else "") + (" --simulate" if simulate else "")
               + (" --sample" if sample else "")
               + (f" --seed {seed}" if seed else "") + f" --out {out}")
        path = write_points_table(table, out, extra={"command": cmd, "date": datetime.date.today().isoformat(),
                                                     "portcast_version": _version()})
    console.print(f"wrote {len(table)} traced points to {path}")


@app.command("report")
def report_cmd(
    table: Optional[Path] = typer.Option(None, "--table", help="Traced points (default: the shipped table)."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Also write the faithfulness table as CSV."),
) -> None:
    """Faithfulness of the ports: Portcast's threads, work and footprint against the data's counts."""
    from rich.table import Table

    from kernels.measured.registry import all_measured
    from portcast.measured import faithfulness, read_points_table
    from profiler.atomic import atomic_path

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
) -> None:
    """The SIMT model against the measured times: MAPE, Pearson (log) and Spearman per GPU, and a plot."""
    import pandas as pd
    from rich.table import Table

    from kernels.measured.registry import all_measured
    from portcast.measured import (correlation_plot, fit_floors, measured_times, pair_times, read_points_table,
                                   split_applications, summarize)
    from profiler.atomic import atomic_path

    with user_errors(ValueError):
        points = read_points_table(table)
        if not any(c.startswith("sim_") for c in points.columns):
            raise UserError("the points table has no simulated times: make it with `portcast measured trace "
                            "--simulate`")
        raw = pair_times(points, measured_times(all_measured()))
        parts = [("all applications, the model as it is", raw, None)]
        if floor:
            train, held = split_applications(raw.port)
            floors = fit_floors(raw[raw.application.isin(train)])
            parts = [(f"training half ({', '.join(train)}), floor fitted there", raw[raw.application.isin(train)],
                      floors),
                     (f"held-out half ({', '.join(held)}), never fitted on", raw[raw.application.isin(held)], floors)]
            console.print("fitted launch floors: " + ", ".join(f"{g} {1e6 * v:.1f} us" for g, v in floors.items()))
        results = [(title, *summarize(p, fl)) for title, p, fl in parts]
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


def register(root: typer.Typer) -> None:
    """Add ``measured`` to the ``portcast`` command."""
    root.add_typer(app, name="measured")
