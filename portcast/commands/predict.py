"""``portcast train``, ``portcast predict`` and ``portcast evaluate aiwc``: the XAPP speedup model."""

from __future__ import annotations

from profiler.atomic import atomic_write_text
import json
import shlex
import sys
import warnings
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import typer

from portcast.commands._common import UserError, console, err_console, user_errors
from profiler.tracefile import is_trace_file


# ---------------------------------------------------------------------------------------------- input
def read_table(path: Path) -> pd.DataFrame:
    """Read a features table (CSV, Parquet, or JSON: a list of row objects or one object).

    Parameters
    ----------
    path : Path

    Returns
    -------
    pandas.DataFrame
    """
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    suf = path.suffix.lower()
    try:
        if suf in (".csv", ".gz") and path.name.lower().endswith((".csv", ".csv.gz")):
            return pd.read_csv(path)
        if suf == ".parquet":
            return pd.read_parquet(path)
        if suf == ".json":
            doc = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(doc, dict):
                doc = [doc]
            if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
                raise UserError(f"{path}: JSON features must be an object or a list of objects (one per region)")
            return pd.DataFrame(doc)
    except UserError:
        raise
    except (ValueError, OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    raise UserError(f"{path}: unsupported file type {suf!r} (use .csv, .csv.gz, .parquet or .json)")


def features_from_input(path: Path) -> pd.DataFrame:
    """Features of ``path``: a features table, or a Portcast trace file (features computed first)."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if is_trace_file(path, strict=True):
        try:
            from features import compute_features
        except ImportError:
            raise UserError(
                f"{path} is a trace file, but this Portcast has no features.compute_features to turn it into "
                "features; pass a features file instead"
            ) from None
        fv = compute_features(path)
        if isinstance(fv, pd.DataFrame):
            return fv
        if isinstance(fv, pd.Series):
            return fv.to_frame().T
        if isinstance(fv, dict):
            return pd.DataFrame([fv])
        for attr in ("to_frame", "to_dict", "as_dict"):
            if hasattr(fv, attr):
                out = getattr(fv, attr)()
                return out if isinstance(out, pd.DataFrame) else pd.DataFrame([dict(out)])
        raise UserError(f"{path}: compute_features returned {type(fv).__name__}, which has no feature table")
    return read_table(path)


def _atomic_write(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err_console, transient=True)


# ---------------------------------------------------------------------------------------------- train
def train(
    data: Path = typer.Option(..., "--data", help="Features table (.csv, .csv.gz, .parquet, .json), one row per point."),
    target: str = typer.Option("speedup", "--target", help="Column with the measured speedup (> 0)."),
    out: Path = typer.Option(..., "--out", help="Model file to write (JSON)."),
    k: int = typer.Option(4, "--k", help="Features per model (2^k interaction terms)."),
    transform: str = typer.Option("none", "--transform", help="Response transform: none, log or sqrt."),
    weighting: str = typer.Option("none", "--weighting", help="none, or relative (1/y^2; not with log)."),
    n_splits: int = typer.Option(100, "--n-splits", help="Random validation splits per subset."),
    validation_size: int = typer.Option(12, "--validation-size", help="Points in each internal test set."),
    search: str = typer.Option("exhaustive", "--search", help="exhaustive or two-stage."),
    features: Optional[str] = typer.Option(None, "--features", help="Comma-separated candidate features (default: every numeric column but the target)."),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="Comma-separated columns to leave out."),
    platform: Optional[str] = typer.Option(None, "--platform", help="Platform name stored in the model metadata."),
    backend: str = typer.Option("local", "--backend", help="local or dask."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address (with --backend dask)."),
    random_state: int = typer.Option(0, "--random-state", help="Seed of the validation splits."),
) -> None:
    """Fit the XAPP interaction model on a features table and save it as a JSON model file."""
    from predictor import InteractionSearchRegressor, ModelFileError, save_model

    with user_errors(ValueError, ModelFileError):
        df = read_table(data)
        if target not in df.columns:
            raise UserError(f"{data}: no target column {target!r} (columns: {', '.join(map(str, df.columns))})")
        drop = {target} | set(filter(None, (exclude or "").split(",")))
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
                console.print(f"non-numeric columns not used as features: {', '.join(skipped)}", highlight=False)
        yv = pd.to_numeric(df[target], errors="coerce")
        if yv.isna().any():
            row = int(np.flatnonzero(yv.isna().to_numpy())[0])
            raise UserError(f"{data}: target {target!r} is missing or non-numeric at row {row} (data row {row + 2})")
        est = InteractionSearchRegressor(k=k, transform=transform, weighting=weighting, n_splits=n_splits,
                                         validation_size=validation_size, search=search, backend=backend,
                                         scheduler_address=scheduler, random_state=random_state)
        with _progress() as prog, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            task = prog.add_task("scoring feature subsets", total=None)

            def cb(done, total):
                prog.update(task, completed=done, total=total)

            est.fit(df[cand], yv.to_numpy(), progress=cb)
        for w in caught:
            err_console.print(f"[yellow]warning:[/] {w.message}", highlight=False)
        meta = {"target": target, "data": str(data), "platform": platform}
        save_model(est, out, metadata=meta)
    top = est.scores_.head(5)
    console.print(f"chosen features: {', '.join(est.subset_)}  (validation score {est.best_score_:.3f}, "
                  f"{len(est.scores_)} subsets scored)", highlight=False)
    for _, r in top.iterrows():
        console.print(f"  {r['score']:.4f}  {', '.join(r['features'])}", highlight=False)
    console.print(f"wrote {out}", highlight=False)


# ---------------------------------------------------------------------------------------------- predict
def _print_explanation(expl: pd.DataFrame, label: str) -> None:
    from portcast.report import print_prediction

    print_prediction(console, err_console, expl, label)


def predict(
    input: Path = typer.Argument(..., help="Features file (.csv/.parquet/.json, one row per region) or a Portcast trace (.parquet)."),
    model: Path = typer.Option(..., "--model", help="Model file written by `portcast train`."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="Column naming each row (default: region/name/kernel if present)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write predictions to this CSV."),
    quiet: bool = typer.Option(False, "--quiet", help="Only the table of predictions, no explanation."),
) -> None:
    """Predict the GPU speedup of each region and explain it term by term."""
    from predictor import ModelFileError, explain_prediction, load_model

    with user_errors(ValueError, ModelFileError):
        m = load_model(model)
        df = features_from_input(input)
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
                _print_explanation(expl, labels[i])
        res = pd.DataFrame(rows)
        if quiet or len(res) > 1:
            from rich.table import Table

            t = Table(title=f"predicted speedup ({', '.join(m.subset_)})", title_justify="left")
            for c in ("id", "predicted speedup", "extrapolating"):
                t.add_column(c)
            for _, r in res.iterrows():
                t.add_row(r["id"], f"{r['predicted_speedup']:.4g}", "yes" if r["extrapolating"] else "")
            console.print(t)
        if out is not None:
            _atomic_write(out, res.to_csv(index=False))
            console.print(f"wrote {out}", highlight=False)


# ---------------------------------------------------------------------------------------------- evaluate
evaluate_app = typer.Typer(help="Benchmarks of the speedup predictor on shipped datasets.", no_args_is_help=True)


@evaluate_app.command("aiwc")
def evaluate_aiwc_cmd(
    out: Path = typer.Option(Path("docs/aiwc-evaluation.md"), "--out", help="Markdown page to write."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Also write every outer split's metrics to this CSV."),
    n_outer: int = typer.Option(20, "--n-outer", help="Random outer splits."),
    n_splits: int = typer.Option(10, "--n-splits", help="Validation splits inside each search (paper: 100)."),
    k: int = typer.Option(4, "--k", help="Features per XAPP model."),
    platform: Optional[list[str]] = typer.Option(None, "--platform", help="CPU:GPU pair (repeatable); default i7-6700k:gtx1080ti and xeon_es-2697v2:k40c."),
    random_state: int = typer.Option(0, "--random-state"),
    no_baselines: bool = typer.Option(False, "--no-baselines", help="Skip the baselines."),
) -> None:
    """XAPP and its baselines on the AIWC dataset, paper protocol; writes docs/aiwc-evaluation.md."""
    from predictor import aiwc

    with user_errors(ValueError):
        if platform:
            pairs = []
            for p in platform:
                if ":" not in p:
                    raise UserError(f"--platform {p!r}: expected CPU:GPU, e.g. i7-6700k:gtx1080ti")
                pairs.append(tuple(p.split(":", 1)))
        else:
            pairs = list(aiwc.DEFAULT_PLATFORMS)
        total = len(pairs) * 2 * n_outer
        with _progress() as prog:
            task = prog.add_task("outer splits", total=total)
            res = aiwc.evaluate_aiwc(pairs, n_outer=n_outer, n_splits=n_splits, k=k, random_state=random_state,
                                     baselines=not no_baselines, progress=lambda msg: prog.advance(task))
        cmd = "portcast evaluate aiwc" + "".join(f" {a}" for a in _nondefault_args(sys.argv))
        settings = {"platforms": "; ".join(f"{c} -> {g}" for c, g in pairs), "n_outer": n_outer, "test points": 12,
                    "n_splits": n_splits, "validation_size": 12, "k": k, "random_state": random_state}
        _atomic_write(out, aiwc.render_markdown(res, settings, cmd))
        if csv is not None:
            _atomic_write(csv, res.to_csv(index=False))
    s = aiwc.summarize(res)
    fin = s[s["model"] == aiwc.FINAL]
    for _, r in fin.iterrows():
        console.print(f"{r['platform']} {r['protocol']}: final model weighted error {r['weighted_error_mean'] * 100:.0f}%"
                      f" ± {r['weighted_error_std'] * 100:.0f}%", highlight=False)
    console.print(f"wrote {out}", highlight=False)


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
