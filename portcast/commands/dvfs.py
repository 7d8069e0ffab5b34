"""``portcast dvfs``: CRISP and the DVFS performance models, the energy controller, evaluation and plots."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import Progress
from rich.table import Table

from portcast.commands._common import UserError, console, user_errors, warn_if_incomplete
from portcast.safe_text import as_text, escape

dvfs_app = typer.Typer(
    help="Predict run time at other core clocks (STALL, MISS, LEAD, CRIT, CRISP, CRISP-L) and pick DVFS states.",
    no_args_is_help=True,
)


def _load(counters, base_mhz, gpu, block_size, regions):
    """:func:`portcast.pipeline.stage_run.load_counter_records` with this command's status line."""
    from portcast.pipeline.stage_run import load_counter_records

    warn_if_incomplete(counters)
    return load_counter_records(counters, base_mhz, gpu, block_size, regions,
                                status=lambda text: console.status(as_text(text)))


def _errors():
    from gpu_models.dvfs.counter_record import CounterError
    from gpu_models.dvfs.timeline import TimelineError
    from gpu_models.simt.config import ConfigError

    return user_errors(CounterError, TimelineError, ConfigError, ValueError)


def _floats(text: str, what: str) -> list[float]:
    try:
        vals = [float(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise UserError(f"{what}: expected comma-separated numbers (got {text!r})") from None
    if not vals or any(not (v > 0 and math.isfinite(v)) for v in vals):
        raise UserError(f"{what}: expected positive numbers (got {text!r})")
    return vals


def _models(text: str) -> list[str]:
    from gpu_models.dvfs.models import MODEL_NAMES, get_model

    if text.strip().lower() == "all":
        return list(MODEL_NAMES)
    return [get_model(m).name for m in text.split(",") if m.strip()]


@dvfs_app.command("predict")
def predict_cmd(
    counters: Path = typer.Option(..., "--counters", help="Counter file (.json or .csv, see docs/dvfs.md), or a trace "
                                                          "file (.parquet) or SCRIPT.py with marked regions (run "
                                                          "without arguments): its counters then come from the SIMT "
                                                          "timing model."),
    targets: str = typer.Option(..., "--targets", help="Target core clocks in MHz, comma-separated."),
    base_mhz: Optional[float] = typer.Option(None, "--base-mhz", help="Base clock of the counters (fills records "
                                                                      "without one)."),
    model: str = typer.Option("all", "--model", help="Model(s): all, or a comma list of "
                                                     "stall,miss,lead,crit,crisp,crisp-l."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the predictions as .csv or .json."),
    gpu: str = typer.Option("gtx480", "--gpu", help="GPU preset or description file for a trace input (SIMT timing "
                                                    "model)."),
    block_size: int = typer.Option(256, "--block-size", help="Threads per block for a trace input."),
    region: Optional[List[str]] = typer.Option(None, "--region", "-r",
                                               help="For a SCRIPT.py input: only this marked region (repeatable)."),
) -> None:
    """Predict each record's run time at the target clocks with every model whose counters it has."""
    with _errors():
        import pandas as pd

        from core.atomic import atomic_write_text
        from gpu_models.dvfs.counter_record import SCHEMA_VERSION
        from gpu_models.dvfs.models import get_model

        tg = _floats(targets, "--targets")
        names = _models(model)
        recs = _load(counters, base_mhz, gpu, block_size, region)
        rows = []
        for i, rec in enumerate(recs):
            usable = [m for m in names if get_model(m).usable(rec)]
            if not usable:
                get_model(names[0]).predict(rec, tg)  # raises naming the missing field
            for m in usable:
                for f, t in zip(tg, get_model(m).predict(rec, tg)):
                    rows.append({"record": rec.name or str(i), "model": m, "base_mhz": rec.base_mhz, "target_mhz": f,
                                 "base_time": rec.total, "pred_time": float(t), "ratio": float(t) / rec.total})
        df = pd.DataFrame(rows)
        table = Table(title=f"predicted run time ({escape(counters.name)})")
        for c in ("record", "model", "target MHz", "time", "x base"):
            table.add_column(c, justify="left" if c in ("record", "model") else "right")
        for r in rows:
            table.add_row(as_text(r["record"]), r["model"], f"{r['target_mhz']:g}", f"{r['pred_time']:.6g}",
                          f"{r['ratio']:.3f}")
        console.print(table)
        if out is not None:
            if out.suffix.lower() == ".csv":
                atomic_write_text(
                    out, f"# portcast.dvfs.predictions schema_version={SCHEMA_VERSION}\n" + df.to_csv(index=False)
                )
            elif out.suffix.lower() == ".json":
                doc = {"schema": "portcast.dvfs.predictions", "schema_version": SCHEMA_VERSION, "predictions": rows}
                atomic_write_text(out, json.dumps(doc, indent=2) + "\n")
            else:
                raise UserError(f"{out}: --out must end in .csv or .json")
            console.print(f"wrote {escape(out)}")


def _pstates(text: Optional[str]):
    from gpu_models.dvfs.controller import PState, check_pstates, default_pstates

    if not text:
        return default_pstates()
    out = []
    for item in text.split(","):
        try:
            f, v = item.split(":")
            out.append(PState(float(f), float(v)))
        except ValueError:
            raise UserError(f"--pstates: expected MHZ:VOLT pairs separated by commas (got {item!r})") from None
    return check_pstates(out)


@dvfs_app.command("control")
def control_cmd(
    counters: Optional[Path] = typer.Option(
        None,
        "--counters",
        help="Per-interval counters (.json/.csv), each at its "
        "base clock, or a trace file (.parquet): its "
        "counters then come from the SIMT timing model at "
        "the GPU's clock.",
    ),
    synthetic: bool = typer.Option(
        False, "--synthetic", help="Closed-loop simulation on the synthetic program, every model."
    ),
    model: str = typer.Option("crisp", "--model", help="Predictor for --counters decisions."),
    objective: str = typer.Option(
        "edp", "--objective", help="edp, ed2p, or energy (minimum energy within --slowdown)."
    ),
    slowdown: float = typer.Option(0.01, "--slowdown", help="Allowed slowdown for --objective energy (fraction)."),
    pstates: Optional[str] = typer.Option(
        None, "--pstates", help="P-states as MHZ:VOLT,... (default 100-700 MHz, 0.55-1.0 V)."
    ),
    dynamic_w: float = typer.Option(60.0, "--dynamic-w", help="SM dynamic power at the top state (W)."),
    static_w: float = typer.Option(30.0, "--static-w", help="SM static power at the top state (W)."),
    other_w: float = typer.Option(20.0, "--other-w", help="Power of the unscaled rest of the GPU (W)."),
    gpu: str = typer.Option(
        "gtx480", "--gpu", help="GPU preset or description file for a trace input (SIMT timing model)."
    ),
    block_size: int = typer.Option(256, "--block-size", help="Threads per block for a trace input."),
    region: Optional[List[str]] = typer.Option(
        None, "--region", "-r", help="For a SCRIPT.py input: only this marked region (repeatable)."
    ),
) -> None:
    """Pick a P-state per interval (minimum EDP, ED^2P, or energy under a slowdown bound)."""
    with _errors():
        from gpu_models.dvfs.controller import OBJECTIVES, PowerModel, decide

        if objective not in OBJECTIVES:
            raise UserError(f"--objective must be one of {', '.join(OBJECTIVES)} (got {objective!r})")
        for name, v in (("--dynamic-w", dynamic_w), ("--static-w", static_w), ("--other-w", other_w)):
            if not (v >= 0 and math.isfinite(v)):
                raise UserError(f"{name} must be >= 0 (got {v})")
        ps = _pstates(pstates)
        pw = PowerModel(dynamic_w, static_w, other_w, ps[-1])
        if synthetic == (counters is not None):
            raise UserError("give exactly one of --counters FILE or --synthetic")
        if synthetic:
            from gpu_models.dvfs.crisp_evaluation import control_table, synthetic_program

            with Progress(console=console, transient=True) as prog:
                task = prog.add_task("simulating the controller", total=7)
                ivs = synthetic_program(power=pw)
                df = control_table(ivs, objectives=[objective], slowdown=slowdown, power=pw,
                                   progress=lambda k: prog.advance(task))
            table = Table(title=f"controller, objective {objective}: savings vs always at {ps[-1].mhz:g} MHz (%)")
            for c in ("model", "energy", "time change", "EDP", "ED2P", "transitions"):
                table.add_column(c, justify="right")
            for r in df.itertuples(index=False):
                tr = "" if isinstance(r.transitions, float) and math.isnan(r.transitions) else str(int(r.transitions))
                table.add_row(
                    r.model,
                    f"{r.energy_saving_pct:.1f}",
                    f"{r.time_change_pct:+.1f}",
                    f"{r.edp_saving_pct:.1f}",
                    f"{r.ed2p_saving_pct:.1f}",
                    tr,
                )
            console.print(table)
            return
        recs = _load(counters, None, gpu, block_size, region)
        table = Table(title=f"{model} decisions, objective {objective}")
        for c in ("interval", "at MHz", "chosen MHz", "V", "pred. time x", "pred. energy x"):
            table.add_column(c, justify="right")
        for i, rec in enumerate(recs):
            d = decide(rec, ps, pw, model, objective, slowdown)
            k = ps.index(d.chosen)
            table.add_row(
                as_text(rec.name or str(i)),
                f"{rec.base_mhz:g}",
                f"{d.chosen.mhz:g}",
                f"{d.chosen.volt:.3f}",
                f"{d.predicted_time[k] / d.predicted_time[-1]:.3f}",
                f"{d.predicted_energy[k] / d.predicted_energy[-1]:.3f}",
            )
        console.print(table)


@dvfs_app.command("evaluate")
def evaluate_cmd(
    out: Path = typer.Option(..., "--out", help="Markdown file to (re)write the generated tables into (the committed "
                                                "one: docs/dvfs.md)."),
    top_k: int = typer.Option(4, "--top-k", help="Titan X: number of top clocks to fit the model forms to."),
    csv_dir: Optional[Path] = typer.Option(None, "--csv-dir", help="Also write the raw per-prediction tables as CSV "
                                                                   "here."),
) -> None:
    """Regenerate the evaluation tables (synthetic timelines, controller, GTX Titan X)."""
    with _errors():
        from core.atomic import atomic_write_text
        from gpu_models.dvfs.crisp_evaluation import run_all, write_report

        if not 2 <= top_k <= 15:
            raise UserError(f"--top-k must be between 2 and 15 (got {top_k})")
        extra = tuple(k for k in (3, 6) if k != top_k)
        stages = (
            ["synthetic timelines", "controller"]
            + [f"Titan X fits (top {k})" for k in sorted({top_k, *extra})]
            + ["Titan X shapes"]
        )
        with Progress(console=console, transient=True) as prog:
            task = prog.add_task("evaluating", total=len(stages))

            def step(name: str) -> None:
                prog.update(task, description=name, completed=stages.index(name))

            rep = run_all(top_k=top_k, extra_k=extra, progress=step)
        write_report(rep, out)
        if csv_dir is not None:
            atomic_write_text(csv_dir / "dvfs_synthetic.csv", rep.synth.to_csv(index=False))
            atomic_write_text(csv_dir / "dvfs_control.csv", rep.control.to_csv(index=False))
            for k, df in rep.titan.items():
                atomic_write_text(csv_dir / f"dvfs_titanx_top{k}.csv", df.to_csv(index=False))
        s = rep.summary()
        console.print("synthetic MAPE: " + ", ".join(f"{m} {v:.1f}%" for m, v in s["synthetic_mape"].items()))
        console.print(f"Titan X MAPE (top {top_k}): " + ", ".join(f"{m} {v:.1f}%" for m, v in s["titanx_mape"].items()))
        console.print(f"wrote {escape(out)}")


@dvfs_app.command("plot")
def plot_cmd(
    kernel: str = typer.Option(..., "--kernel", help="Synthetic kernel (e.g. overlap-0) or Titan X curve (e.g. "
                                                     "backprop@3505)."),
    out: Path = typer.Option(..., "--out", help="Output .png or .svg."),
    source: str = typer.Option("synthetic", "--source", help="synthetic or titanx."),
    top_k: int = typer.Option(4, "--top-k", help="Titan X: top clocks to fit to."),
) -> None:
    """Run time versus core clock for one kernel with every model and the truth (like the paper's Fig. 10)."""
    with _errors():
        from gpu_models.dvfs.clock_plots import plot_synthetic_kernel, plot_titanx_kernel

        if source == "synthetic":
            from gpu_models.dvfs.synthetic_timelines import suite

            ks = dict(suite(2))
            if kernel not in ks:
                raise UserError(f"unknown synthetic kernel {kernel!r} (known: {', '.join(ks)})")
            plot_synthetic_kernel(kernel, ks[kernel], out)
        elif source == "titanx":
            if not 2 <= top_k <= 15:
                raise UserError(f"--top-k must be between 2 and 15 (got {top_k})")
            plot_titanx_kernel(kernel, out, top_k)
        else:
            raise UserError(f"--source must be synthetic or titanx (got {source!r})")
        console.print(f"wrote {escape(out)}")


def register(app: typer.Typer) -> None:
    """Add the ``dvfs`` command group."""
    app.add_typer(dvfs_app, name="dvfs")
