"""``portcast train``, ``portcast predict`` and ``portcast evaluate aiwc``: the XAPP speedup model."""

from __future__ import annotations

import shlex
import sys
import warnings
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import typer

from core.atomic import atomic_write_text
from portcast.commands._common import (
    UserError,
    check_output,
    console,
    err_console,
    progress_bar,
    user_errors,
    warn_if_incomplete,
)
from portcast.safe_text import as_text, escape


# ---------------------------------------------------------------------------------------------- train
def train(
    data: Path = typer.Option(
        ..., "--data", help="Features table (.csv, .csv.gz, .parquet, .json), one row per point."
    ),
    target: str = typer.Option(
        "speedup", "--target", help="Column with the measured speedup (> 0); with --calibration default speedup_kernel."
    ),
    out: Path = typer.Option(..., "--out", help="Model file to write (JSON)."),
    k: int = typer.Option(4, "--k", help="Features per model (2^k interaction terms)."),
    transform: str = typer.Option("none", "--transform", help="Response transform: none, log or sqrt."),
    weighting: str = typer.Option("none", "--weighting", help="none, or relative (1/y^2; not with log)."),
    n_splits: int = typer.Option(100, "--n-splits", help="Random validation splits per subset."),
    validation_size: int = typer.Option(12, "--validation-size", help="Points in each internal test set."),
    search: str = typer.Option("exhaustive", "--search", help="exhaustive or two-stage."),
    features: Optional[str] = typer.Option(
        None, "--features", help="Comma-separated candidate features (default: every numeric column but the target)."
    ),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="Comma-separated columns to leave out."),
    platform: Optional[str] = typer.Option(None, "--platform", help="Platform name stored in the model metadata."),
    backend: str = typer.Option("local", "--backend", help="local or dask."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address (with --backend dask)."),
    random_state: int = typer.Option(0, "--random-state", help="Seed of the validation splits."),
    calibration: Optional[Path] = typer.Option(
        None,
        "--calibration",
        help="Calibration CSV (`portcast calibrate`): --data is then a feature table (`portcast characterize`) and "
        "the two are joined on (kernel, size); key columns kernel, size, n, category are not features.",
    ),
    cv: Optional[str] = typer.Option(
        None,
        "--cv",
        help="Also cross-validate the whole search leaving one value of this column out at a time "
        "(e.g. kernel); the errors go into the model metadata.",
    ),
    cv_out: Optional[Path] = typer.Option(None, "--cv-out", help="Write the cross-validation predictions to this CSV."),
    exclude_kernels: Optional[str] = typer.Option(
        None,
        "--exclude-kernels",
        help="Comma-separated values of the kernel column whose rows are left out of "
        "training (recorded in the model metadata).",
    ),
    require: Optional[str] = typer.Option(
        None,
        "--require",
        help="Comma-separated features every candidate model must contain (e.g. the available parallelism).",
    ),
    clip: bool = typer.Option(
        True,
        "--clip/--no-clip",
        help="Clip each feature to its training range before predicting (the interaction "
        "terms cannot then grow without bound outside the data); --no-clip as in XAPP.",
    ),
    force: bool = typer.Option(False, "--force", help="Replace existing --out / --cv-out files."),
) -> None:
    """Fit the XAPP interaction model on a features table and save it as a JSON model file."""
    from predictor import InteractionSearchRegressor, ModelFileError, save_model

    with user_errors(ValueError, ModelFileError):
        check_output(out, inputs=(data, calibration), force=force)
        check_output(cv_out, inputs=(data, calibration, out), force=force, what="--cv-out")
        from features.table import read_feature_table

        df = read_feature_table(data)
        meta_extra: dict = {}
        drop_keys: set = set()
        if calibration is not None:
            from portcast.calibration import read_calibration, training_table
            from portcast.calibration.characterization import KEY_COLUMNS

            cal = read_calibration(calibration)
            if target == "speedup":
                target = "speedup_kernel"
            df, unmatched = training_table(df, cal, target, source=str(calibration))
            if unmatched:
                console.print(f"{len(unmatched)} calibration point(s) have no feature row and are left out: "
                              + escape(", ".join(f"{k} {s}" for k, s in unmatched)), highlight=False)
            drop_keys = set(KEY_COLUMNS)
            gpu = str(cal["gpu_name"].iloc[0])
            cpu = str(cal["cpu_model"].iloc[0]) if "cpu_model" in cal.columns else "cpu"
            if platform is None:
                platform = f"{cpu} -> {gpu}"
            meta_extra = {"data": [str(data), str(calibration)], "calibration": str(calibration),
                          "features_table": str(data), "n_points": int(len(df)),
                          "points": [f"{a} {b}" for a, b in zip(df["kernel"], df["size"])]}
            if cal.attrs.get("simulated"):
                preset = gpu.split(":", 1)[1].strip()
                meta_extra.update({"provisional": True, "gpu_preset": preset,
                                   "gpu_times": f"simulated (Portcast SIMT model, {preset} preset)"})
        if exclude_kernels:
            names = [c.strip() for c in exclude_kernels.split(",") if c.strip()]
            if "kernel" not in df.columns:
                raise UserError(f"{data}: --exclude-kernels needs a 'kernel' column")
            unknown = [n for n in names if n not in set(df["kernel"].astype(str))]
            if unknown:
                raise UserError(f"{data}: --exclude-kernels names no row: {', '.join(unknown)}")
            gone = df["kernel"].astype(str).isin(names)
            meta_extra["excluded_points"] = [f"{a} {b}" if "size" in df.columns else str(a) for a, b in
                                             zip(df.loc[gone, "kernel"], df.loc[gone, "size"] if "size" in df.columns
                                                 else df.loc[gone, "kernel"])]
            df = df.loc[~gone].reset_index(drop=True)
            if "n_points" in meta_extra:
                meta_extra["n_points"] = int(len(df))
                meta_extra["points"] = [f"{a} {b}" for a, b in zip(df["kernel"], df["size"])]
            console.print(f"left out {int(gone.sum())} row(s) of {escape(', '.join(map(str, names)))}", highlight=False)
        if target not in df.columns:
            raise UserError(f"{data}: no target column {target!r} (columns: {', '.join(map(str, df.columns))})")
        if cv is not None and cv not in df.columns:
            raise UserError(f"{data}: no column {cv!r} to cross-validate by")
        drop = {target} | drop_keys | set(filter(None, (exclude or "").split(",")))
        if features:
            cand = [c.strip() for c in features.split(",") if c.strip()]
            missing = [c for c in cand if c not in df.columns]
            if missing:
                raise UserError(f"{data}: no feature column(s) {missing}")
        else:
            cand = [c for c in df.columns if c not in drop and pd.api.types.is_numeric_dtype(df[c])
                    and not pd.api.types.is_bool_dtype(df[c])]
            skipped = [str(c) for c in df.columns if c not in drop and c not in cand]
            if skipped:
                console.print(f"non-numeric columns not used as features: {escape(', '.join(skipped))}",
                              highlight=False)
        yv = pd.to_numeric(df[target], errors="coerce")
        if yv.isna().any():
            row = int(np.flatnonzero(yv.isna().to_numpy())[0])
            raise UserError(f"{data}: target {target!r} is missing or non-numeric at row {row} (data row {row + 2})")

        def make():
            return InteractionSearchRegressor(
                k=k,
                transform=transform,
                weighting=weighting,
                n_splits=n_splits,
                validation_size=validation_size,
                search=search,
                backend=backend,
                scheduler_address=scheduler,
                random_state=random_state,
                required=tuple(c.strip() for c in (require or "").split(",") if c.strip()),
                clip_features=clip,
            )

        est = make()
        with progress_bar("", transient=True) as prog, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            task = prog.add_task("scoring feature subsets", total=None)

            def cb(done, total):
                prog.update(task, completed=done, total=total)

            est.fit(df[cand], yv.to_numpy(), progress=cb)
        for w in caught:
            err_console.print(f"[yellow]warning:[/] {escape(w.message)}", highlight=False)
        meta = {"target": target, "data": str(data), "platform": platform, **meta_extra}
        cv_summary = None
        if cv is not None:
            with progress_bar("", transient=True) as prog, warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                n_groups = int(df[cv].nunique())
                task = prog.add_task(f"cross-validation, one {escape(cv)} out at a time", total=n_groups)
                from predictor.cross_validation import grouped_cross_validation, summarize_cv

                table = grouped_cross_validation(make, df[cand], yv.to_numpy(), df[cv].to_numpy(),
                                                 progress=lambda d, t: prog.update(task, completed=d))
            cv_summary = summarize_cv(table)
            meta["cross_validation"] = {"protocol": f"leave one {cv} out: the whole feature search refitted "
                                                    f"without each {cv}'s points, which it then predicts",
                                        **cv_summary}
            if cv_out is not None:
                if "kernel" in df.columns and "size" in df.columns:
                    table.insert(1, "size", df["size"].to_numpy())
                atomic_write_text(cv_out, table.to_csv(index=False))
        save_model(est, out, metadata=meta)
    top = est.scores_.head(5)
    console.print(f"chosen features: {escape(', '.join(est.subset_))}  (validation score {est.best_score_:.3f}, "
                  f"{len(est.scores_)} subsets scored)", highlight=False)
    for _, r in top.iterrows():
        console.print(f"  {r['score']:.4f}  {escape(', '.join(r['features']))}", highlight=False)
    if cv_summary is not None:
        console.print(f"leave-one-{escape(cv)}-out: mean |relative error| {cv_summary['mean_abs_relative_error']:.1%}, "
                      f"median {cv_summary['median_abs_relative_error']:.1%}, weighted error "
                      f"{cv_summary['weighted_error']:.1%}, decision accuracy {cv_summary['decision_accuracy']:.1%} "
                      f"({cv_summary['n_points']} points, {cv_summary['n_groups']} groups)", highlight=False)
    if meta.get("provisional"):
        console.print(f"model marked PROVISIONAL: GPU times {escape(meta['gpu_times'])}", highlight=False)
    console.print(f"wrote {escape(out)}", highlight=False)


# ---------------------------------------------------------------------------------------------- predict
def _print_explanation(expl: pd.DataFrame, label: str, model=None) -> None:
    from portcast.report import print_prediction

    print_prediction(console, err_console, expl, label, model=model)


def predict(
    input: Path = typer.Argument(..., help="Features file (.csv/.parquet/.json, one row per region) or a Portcast "
                                           "trace (.parquet)."),
    model: Optional[Path] = typer.Option(None, "--model", help="Model file written by `portcast train` (default: the "
                                         "shipped speedup model, docs/predictor.md)."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="Column naming each row (default: "
                                                                      "region/name/kernel if present)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write predictions to this file (.csv, or .json)."),
    quiet: bool = typer.Option(False, "--quiet", help="Only the table of predictions, no explanation."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
) -> None:
    """Predict the GPU speedup of each region and explain it term by term."""
    from predictor import ModelFileError, explain_prediction, load_model
    from predictor.model_io import default_model_path

    with user_errors(ValueError, ModelFileError):
        if model is None:
            model = default_model_path()
            if model is None:
                raise UserError("no speedup model ships with this checkout: give --model MODEL.json")
        check_output(out, inputs=(input, model), force=force)
        m = load_model(model)
        from portcast.pipeline.stage_run import features_of_file

        warn_if_incomplete(input)
        df = features_of_file(input)
        if df.empty:
            raise UserError(f"{input}: no rows")
        missing = [c for c in m.subset_ if c not in df.columns]
        if missing:
            raise UserError(f"{input}: lacks the model's feature column(s) {missing}")
        for c in m.subset_:
            col = pd.to_numeric(df[c], errors="coerce")
            bad = np.flatnonzero(~np.isfinite(col.to_numpy(dtype=np.float64)))
            if bad.size:
                raise UserError(f"{input}: column {c!r} is missing, non-numeric or non-finite at row {int(bad[0])}: "
                                f"{df[c].iloc[bad[0]]!r}")
        if id_column is None:
            id_column = next((c for c in ("region", "name", "kernel") if c in df.columns), None)
        elif id_column not in df.columns:
            raise UserError(f"{input}: no column {id_column!r}")
        labels = [str(v) for v in df[id_column]] if id_column else [f"row {i}" for i in range(len(df))]
        rows = []
        for i in range(len(df)):
            expl = explain_prediction(m, df.iloc[[i]])
            rows.append({"id": labels[i], "predicted_speedup": expl.attrs["prediction"],
                         "extrapolating": expl.attrs["extrapolating"]})
            if not quiet:
                _print_explanation(expl, labels[i], model=m)
        res = pd.DataFrame(rows)
        if quiet or len(res) > 1:
            from rich.table import Table

            t = Table(title=f"predicted speedup ({escape(', '.join(m.subset_))})", title_justify="left")
            for c in ("id", "predicted speedup", "extrapolating"):
                t.add_column(c)
            for _, r in res.iterrows():
                t.add_row(as_text(r["id"]), f"{r['predicted_speedup']:.4g}", "yes" if r["extrapolating"] else "")
            console.print(t)
            if quiet:
                from portcast.report import print_model_label

                print_model_label(console, m)
        if out is not None:
            if out.suffix.lower() == ".json":
                import json

                doc = {"format": "portcast.predictions", "schema_version": 1,
                       "rows": [{"id": r["id"], "predicted_speedup": float(r["predicted_speedup"]),
                                 "extrapolating": bool(r["extrapolating"])} for r in rows]}
                atomic_write_text(out, json.dumps(doc, indent=2, allow_nan=False) + "\n")
            else:
                atomic_write_text(out, res.to_csv(index=False))
            console.print(f"wrote {escape(out)}", highlight=False)


# ---------------------------------------------------------------------------------------------- evaluate
evaluate_app = typer.Typer(help="Benchmarks of the speedup predictor on shipped datasets.", no_args_is_help=True)


@evaluate_app.command("aiwc")
def evaluate_aiwc_cmd(
    out: Path = typer.Option(..., "--out", help="Markdown page to write (the committed one: docs/aiwc-evaluation.md)."),
    force: bool = typer.Option(False, "--force", help="Replace existing --out / --csv files."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Also write every outer split's metrics to this CSV."),
    n_outer: int = typer.Option(20, "--n-outer", help="Random outer splits."),
    n_splits: int = typer.Option(10, "--n-splits", help="Validation splits inside each search (paper: 100)."),
    k: int = typer.Option(4, "--k", help="Features per XAPP model."),
    platform: Optional[list[str]] = typer.Option(
        None, "--platform", help="CPU:GPU pair (repeatable); default i7-6700k:gtx1080ti and xeon_es-2697v2:k40c."
    ),
    random_state: int = typer.Option(0, "--random-state"),
    no_baselines: bool = typer.Option(False, "--no-baselines", help="Skip the baselines."),
) -> None:
    """XAPP and its baselines on the AIWC dataset, paper protocol; writes the page given by --out."""
    from predictor import xapp_aiwc as aiwc

    with user_errors(ValueError):
        check_output(out, force=force)
        check_output(csv, inputs=(out,), force=force, what="--csv")
        if platform:
            pairs = []
            for p in platform:
                if ":" not in p:
                    raise UserError(f"--platform {p!r}: expected CPU:GPU, e.g. i7-6700k:gtx1080ti")
                pairs.append(tuple(p.split(":", 1)))
        else:
            pairs = list(aiwc.DEFAULT_PLATFORMS)
        total = len(pairs) * 2 * n_outer
        with progress_bar("", transient=True) as prog:
            task = prog.add_task("outer splits", total=total)
            res = aiwc.evaluate_aiwc(pairs, n_outer=n_outer, n_splits=n_splits, k=k, random_state=random_state,
                                     baselines=not no_baselines, progress=lambda msg: prog.advance(task))
        cmd = "portcast evaluate aiwc" + "".join(f" {a}" for a in _nondefault_args(sys.argv))
        settings = {"platforms": "; ".join(f"{c} -> {g}" for c, g in pairs), "n_outer": n_outer, "test points": 12,
                    "n_splits": n_splits, "validation_size": 12, "k": k, "random_state": random_state}
        atomic_write_text(out, aiwc.render_markdown(res, settings, cmd))
        if csv is not None:
            atomic_write_text(csv, res.to_csv(index=False))
    s = aiwc.summarize(res)
    fin = s[s["model"] == aiwc.FINAL]
    for _, r in fin.iterrows():
        console.print(f"{escape(r['platform'])} {escape(r['protocol'])}: final model weighted error "
                      f"{r['weighted_error_mean'] * 100:.0f}%"
                      f" ± {r['weighted_error_std'] * 100:.0f}%", highlight=False)
    console.print(f"wrote {escape(out)}", highlight=False)


def _nondefault_args(argv: list[str]) -> list[str]:
    """The options given after ``evaluate aiwc`` (quoted), so the page names the command that made it."""
    try:
        i = argv.index("aiwc")
    except ValueError:
        return []
    out, skip = [], False
    for a in argv[i + 1:]:
        if skip:
            skip = False
            continue
        if a == "--csv":  # does not change the page
            skip = True
            continue
        if a.startswith("--csv="):
            continue
        out.append(shlex.quote(a))
    return out


def register(app: typer.Typer) -> None:
    """Add ``train``, ``predict`` and the ``evaluate`` group to the ``portcast`` app."""
    app.command("train")(train)
    app.command("predict")(predict)
    app.add_typer(evaluate_app, name="evaluate")


