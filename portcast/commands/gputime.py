"""``portcast gpu-time train|evaluate``: the GPU-time model learned from measured GPU times (docs/gputime.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from portcast.safe_text import escape

from ._common import UserError, check_output, console, progress_bar, user_errors

app = typer.Typer(help="The GPU-time model: train it on the measured kernels, evaluate it on held-out ones.",
                  no_args_is_help=True)


def _cpu_times(path: Optional[Path]):
    """The single-thread CPU times of the ports (None when the file is absent and none was named)."""
    from kernels.measured.harness.cpu_times import SHIPPED_CPU_TIMES, read_cpu_times

    if path is None and not SHIPPED_CPU_TIMES.is_file():
        return None
    return read_cpu_times(path or SHIPPED_CPU_TIMES)


@app.command("train")
def train_cmd(
    out: Path = typer.Option(..., "--out", help="Model file to write (JSON)."),
    family: str = typer.Option("bounded", "--family", help="bounded (shipped: the bounds-based model with a linear "
                               "factor) | bounded-xapp | bounded-trees | gbm | gbm-residual | simt-calibrated"),
    without_simt: bool = typer.Option(False, "--without-simt", help="gbm without the SIMT estimate among its inputs "
                                      "(what --at-size uses: a size that is not traced has no SIMT estimate)."),
    points: Optional[Path] = typer.Option(None, "--points", help="Also write the training rows as a report plots "
                                          "them (CSV; the shipped predictor/models/gputime-points.csv)."),
    force: bool = typer.Option(False, "--force", help="Replace existing files."),
) -> None:
    """Fit the GPU-time model on every measured (port, point, GPU) row and save it."""
    from predictor.gputime import GpuTimeModelError, save_gputime_model
    from predictor.gputime_training import train_default, training_frame

    with user_errors(GpuTimeModelError, ValueError):
        check_output(out, force=force)
        check_output(points, force=force, what="--points")
        from predictor.gputime_training import TRAIN_FAMILIES

        if family not in TRAIN_FAMILIES:
            raise UserError(f"--family must be one of {', '.join(TRAIN_FAMILIES)}, not {family!r}")
        frame = training_frame()
        model = train_default(frame, family, without_simt=without_simt)
        save_gputime_model(model, out)
        if points is not None:
            from predictor.gputime_training import training_points, write_training_points

            write_training_points(training_points(frame), points)
            console.print(f"wrote {escape(points)}: {len(frame)} training rows", highlight=False)
    console.print(f"wrote {escape(out)}: {family} on {len(frame)} measured rows "
                  f"({frame['application'].nunique()} applications, {frame['preset'].nunique()} GPU models)",
                  highlight=False)


@app.command("evaluate")
def evaluate_cmd(
    out_dir: Path = typer.Option(..., "--out-dir", help="Folder for evaluation.md, scores.csv, predictions.parquet, "
                                 "per-application.md and evaluation.png."),
    cpu: Optional[Path] = typer.Option(None, "--cpu-times", help="CPU times of the ports (default: the committed "
                                       "kernels/measured/data/cpu_times.csv)."),
    quick: bool = typer.Option(False, "--quick", help="Only the shipped bounded model, the SIMT model and gradient "
                               "boosting (minutes less)."),
    physics_samples: int = typer.Option(40, "--physics-samples", min=1, help="Generated programs per GPU preset "
                                        "and model for the physics table."),
) -> None:
    """Leave-one-application-out, leave-one-GPU-out, Kepler/Maxwell -> Pascal and largest-size errors of every
    model variant, on GPU time and on speedup against the ports' CPU times, and the physical laws each breaks."""
    import pandas as pd

    import predictor.gputime_evaluation as E
    import predictor.gputime_training as G
    from core.atomic import atomic_path
    from kernels.measured.harness.points import read_points_table

    def write(name, text):
        with atomic_path(out_dir / name) as tmp:
            Path(tmp).write_text(text)

    with user_errors(ValueError):
        cpu_frame = _cpu_times(cpu)
        points = read_points_table()
        every = G.training_frame(points, keep_below_bound=True)
        frame = every[~G.below_bound(every)].reset_index(drop=True)
        names = list(G.variants())
        if quick:
            names = [G.BOUNDED_LINEAR, "SIMT model alone", "gradient boosting (all inputs)"]
        total = sum(len(E.folds(frame, s)) for s in E.SPLITS) * len(names)
        with progress_bar("evaluating") as bar:
            task = bar.add_task("", total=total)

            def step(what):
                bar.update(task, description=what, advance=1)

            pred = E.evaluate(frame, names, progress=step)
        if cpu_frame is not None:
            pred = pd.concat([pred, E.provisional_predictions(frame, points, cpu_frame)], ignore_index=True)
        scores = E.score(pred, cpu_frame)
        out_dir.mkdir(parents=True, exist_ok=True)
        with atomic_path(out_dir / "scores.csv") as tmp:
            scores.to_csv(tmp, index=False)
        with atomic_path(out_dir / "predictions.parquet") as tmp:
            pred.to_parquet(tmp, index=False, compression="zstd")
        with progress_bar("physical laws") as bar:
            bar.add_task("fitting each model on every row and predicting generated programs", total=None)
            physics = E.physics_table(frame, names, samples=physics_samples)
        with atomic_path(out_dir / "physics.csv") as tmp:
            physics.to_csv(tmp, index=False)
        write("below-bound.md", "Measured rows below their port's own lower bound, left out of training and "
              f"evaluation ({int(G.below_bound(every).sum())} of {len(every)}; docs/gputime.md):\n\n"
              + G.below_bound_markdown(every) + "\n")
        write("evaluation.md", E.evaluation_markdown(scores, frame) + "\n**Physical laws broken** (generated "
              f"programs, {physics_samples} per GPU preset; predictor.physics)\n\n" + E.physics_markdown(physics)
              + "\n")
        best = G.BOUNDED_LINEAR
        write(
            "per-application.md",
            "\n\n".join(
                [f"**{E.SPLIT_TITLES[s]}, {best}**\n\n" + E.per_fold_markdown(pred, best, s, by=by)
                 for s, by in (("application", "fold"), ("gpu", "fold"), ("generation", "fold"),
                               ("largest", "application"))]
                + [f"**Per data source, {best}**\n\n" + E.source_markdown(pred, best)]
                + [f"**{E.SPLIT_TITLES['application']}, {v}**\n\n" + E.per_fold_markdown(pred, v, "application")
                   for v in ("gradient boosting (all inputs)", "SIMT, per-GPU scale + constant") if v in names]
            )
            + "\n",
        )
        E.evaluation_plot(pred, [n for n in (best, "gradient boosting (all inputs)", "SIMT, per-GPU scale + constant")
                                 if n in names], out_dir / "evaluation.png")
    console.print(f"wrote evaluation.md, per-application.md, below-bound.md, scores.csv, physics.csv, "
                  f"predictions.parquet and evaluation.png to {escape(out_dir)}")
    if cpu_frame is None:
        console.print("no CPU times of the ports (kernels/measured/data/cpu_times.csv): speedup columns left out; "
                      "make them with `portcast measured cpu-times`", highlight=False)


def register(root: typer.Typer) -> None:
    """Add ``gpu-time`` to the ``portcast`` command."""
    root.add_typer(app, name="gpu-time")
