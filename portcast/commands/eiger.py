"""``portcast eiger import|fit|evaluate|export``: Eiger statistical performance models (papers/001)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from portcast.commands._common import UserError, console, err_console, progress_bar, user_errors
from portcast.safe_text import as_text, escape, visible

eiger_app = typer.Typer(help="Eiger: statistical performance models synthesised from a trials database.",
                        no_args_is_help=True)

DB_HELP = ("Trials database: SQLAlchemy URL (sqlite:///file, postgresql://user@host:port/db) or an SQLite "
           "file path. Default: $PORTCAST_DB, else eiger.sqlite in the user data directory.")


def _errors():
    from predictor.eiger.db import DatabaseError
    from predictor.eiger.synthesis import EigerError

    return user_errors(DatabaseError, EigerError)


def _progress():
    """A transient progress bar on stderr in a terminal; on a pipe or in a file none (Rich would leave a blank
    line there)."""
    prog = progress_bar("", transient=True)
    prog.disable = not err_console.is_terminal
    return prog


def _open_db(url: Optional[str]):
    from predictor.eiger.db import TrialsDB

    return TrialsDB(url)


@eiger_app.command("import")
def import_cmd(
    source: str = typer.Argument(..., help="'aiwc' (the vendored AIWC dataset and device table), or a "
                                           ".csv/.csv.gz/.parquet table with one row per trial."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    kind: str = typer.Option("trials", "--kind", help="trials | features (a Portcast feature table) | "
                                                      "machines (one row per machine: its metric vector)"),
    result: List[str] = typer.Option([], "--result", help="Result column (repeatable)."),
    application_col: Optional[str] = typer.Option(None, "--application-col"),
    machine_col: Optional[str] = typer.Option(None, "--machine-col"),
    dataset_col: Optional[str] = typer.Option(None, "--dataset-col"),
    kernel_col: Optional[str] = typer.Option(None, "--kernel-col"),
    metric: List[str] = typer.Option([], "--metric", "-m",
                                     help="Application metric column (repeatable; default: every other "
                                          "numeric column)."),
    application: Optional[str] = typer.Option(None, "--application", help="One application for all rows."),
    machine: Optional[str] = typer.Option(None, "--machine", help="One machine for all rows."),
    name_col: str = typer.Option("device", "--name-col", help="Machine name column (--kind machines)."),
    append: bool = typer.Option(False, "--append", help="Import even if the same source with the same options "
                                "was imported into this database before (its trials are then added again)."),
) -> None:
    """Import trials (or machines) into the trials database. An import is one transaction: all of its rows
    or, if it fails or is interrupted, none. Importing the same source with the same options twice does
    nothing the second time (unless --append), also when both run at once."""
    import hashlib
    import json as _json
    import uuid

    if kind not in ("trials", "features", "machines"):
        with _errors():
            raise UserError(f"--kind must be trials, features or machines, got {kind!r}")
    database = None
    fingerprint = None
    import_id = uuid.uuid4().hex
    try:
        with _errors():
            from predictor.eiger import trials_import as eimp
            from predictor.eiger.db import AlreadyImported, WriteError

            database = _open_db(db)
            where = database.where
            digest = hashlib.sha256()
            if source == "aiwc":
                digest.update(b"aiwc")
            else:
                if not Path(source).is_file():
                    raise UserError(f"{source}: no such file")
                digest.update(Path(source).read_bytes())
            options = {"kind": kind, "result": list(result), "application_col": application_col,
                       "machine_col": machine_col, "dataset_col": dataset_col, "kernel_col": kernel_col,
                       "metric": list(metric), "application": application, "machine": machine,
                       "name_col": name_col}
            digest.update(_json.dumps(options, sort_keys=True).encode())
            fingerprint = digest.hexdigest()
            earlier = database.import_record(fingerprint)
            if earlier is not None and not append:
                _already_imported(source, earlier)
                return
            cause = database.read_only_cause()
            if cause is not None:
                raise UserError(f"{where}: cannot write the trials database: {cause}; nothing was imported")
            work = _import_work(eimp, source, kind, result, application_col, machine_col, dataset_col,
                                kernel_col, metric, application, machine, name_col)
            with _progress() as prog:
                task = prog.add_task("importing trials", total=None)

                def cb(done: int, total: int) -> None:
                    prog.update(task, completed=done, total=total)

                try:
                    record = database.import_once(fingerprint, {"id": import_id, "source": str(source)},
                                                  lambda w: work(w, cb), append=append)
                except AlreadyImported as exc:  # another import of it committed while this one read the file
                    record = exc.record
                    already = True
                except WriteError as exc:
                    raise UserError(f"{exc.where}: cannot write the trials database: {exc.cause}; nothing was "
                                    "imported") from None
                else:
                    already = False
            if already:
                _already_imported(source, record)
                return
        console.print(f"imported {record['n']} {record['what']} into "
                      f"{escape(database.engine.url.render_as_string(hide_password=True))} "
                      f"({database.count_trials()} trials in all)")
    except KeyboardInterrupt:
        _interrupted(database, fingerprint, import_id, db or "the trials database")


def _already_imported(source: str, earlier: dict) -> None:
    console.print(f"{escape(source)} was already imported into this database with the same options "
                  f"({earlier.get('n')} {earlier.get('what')}, {earlier.get('date')}): nothing imported; "
                  "--append imports it again", highlight=False, soft_wrap=True)


def _interrupted(database, fingerprint: str | None, import_id: str, where_before_open: str) -> None:
    """Ctrl-C during ``eiger import``: one line saying whether the import was committed (the interrupt came
    after its transaction ended) or not (then nothing of it is in the database), and exit status 130."""
    record = None
    if database is not None and fingerprint is not None:
        try:
            record = database.import_record(fingerprint)
        except Exception:  # noqa: BLE001 - the interrupt may have come while opening the database
            record = None
    where = database.where if database is not None else where_before_open
    if record is not None and record.get("id") == import_id:
        err_console.print(f"interrupted after the import was committed: {record.get('n')} {record.get('what')} "
                          f"imported into {escape(where)}", highlight=False, soft_wrap=True)
    else:
        err_console.print(f"interrupted: nothing was imported into {escape(where)}", highlight=False,
                          soft_wrap=True)
    raise typer.Exit(130)


def _import_work(eimp, source, kind, result, application_col, machine_col, dataset_col, kernel_col, metric,
                 application, machine, name_col):
    """Read and check the source (before any transaction begins), and return ``work(writer, progress) ->
    (n, what)`` that writes it inside the import's transaction."""
    if source == "aiwc":
        return lambda w, cb: (eimp.import_aiwc(w, progress=cb), "trials")
    df = eimp.read_table(source)
    if kind == "machines":
        eimp.machine_rows(df, name_col=name_col, metric_cols=metric or None)  # errors before the transaction
        return lambda w, cb: (eimp.import_machines(w, df, name_col=name_col, metric_cols=metric or None),
                              "machines")
    if kind == "features":
        if not machine:
            raise UserError("--kind features needs --machine NAME (the machine the results were measured on)")
        if not result:
            raise UserError("--kind features needs at least one --result column")
        recs = eimp.feature_table_records(df, machine, result)
    else:
        if not result:
            raise UserError("name at least one result column with --result")
        recs = eimp.frame_to_records(df, result, application_col=application_col, machine_col=machine_col,
                                     dataset_col=dataset_col, kernel_col=kernel_col, metric_cols=metric or None,
                                     application=application, machine=machine)
    return lambda w, cb: (len(w.add_trials(recs, progress=cb)), "trials")


def _training_frame(database, result: str, application: list[str], machine: list[str],
                    no_machine_metrics: bool):
    df = database.trials_frame(machine_metrics_too=not no_machine_metrics)
    if df.empty:
        raise UserError(f"the trials database {database.url} has no trials; run `portcast eiger import` first")
    kinds = df.attrs["metric_kinds"]
    if result not in df.columns or kinds.get(result) != "result":
        results = sorted(c for c, k in kinds.items() if k == "result")
        raise UserError(f"no result metric {result!r} in the database (results: {', '.join(results) or 'none'})")
    if application:
        df = df[df["application"].isin(application)]
    if machine:
        df = df[df["machine"].isin(machine)]
    df = df[df[result].notna()]
    feats = [c for c, k in kinds.items() if k in ("application", "machine") and c in df.columns]
    incomplete = [c for c in feats if df[c].isna().any()]
    if incomplete:
        console.print(f"[yellow]note:[/] leaving out metrics missing on some trials: {escape(', '.join(incomplete))}")
        feats = [c for c in feats if c not in incomplete]
    if len(df) < 3 or not feats:
        raise UserError(f"too few trials ({len(df)}) or metrics ({len(feats)}) to fit a model")
    return df, feats


@eiger_app.command("fit")
def fit_cmd(
    out: Path = typer.Option(..., "--out", "-o", help="Model file to write (JSON)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    result: str = typer.Option(..., "--result", help="Result metric to model, e.g. kernel_time."),
    components: Optional[int] = typer.Option(None, "--components", "-p", help="Principal components kept "
                                                                              "(default: all)."),
    clusters: int = typer.Option(1, "--clusters", "-k", help="k-means clusters."),
    threshold: float = typer.Option(0.01, "--threshold", help="Minimal adjusted-R^2 gain to add a function."),
    varimax: bool = typer.Option(False, "--varimax", help="Varimax-rotate the retained components."),
    log_target: bool = typer.Option(False, "--log-target", help="Model log2 of the result."),
    slog_inputs: bool = typer.Option(False, "--slog-inputs", help="Pass metrics through sign(x)ln(1+|x|)."),
    no_interactions: bool = typer.Option(False, "--no-interactions", help="Leave x_i*x_j out of the pool."),
    max_terms: Optional[int] = typer.Option(None, "--max-terms", help="Cap on terms per cluster model."),
    application: List[str] = typer.Option([], "--application", help="Train on these applications only."),
    machine: List[str] = typer.Option([], "--machine", help="Train on these machines only."),
    no_machine_metrics: bool = typer.Option(False, "--no-machine-metrics", help="Use application metrics only."),
    seed: int = typer.Option(0, "--seed", help="k-means random state."),
) -> None:
    """Fit an Eiger model on the trials in the database and save it as JSON."""
    from predictor.eiger.export import save_model
    from predictor.eiger.synthesis import EigerRegressor, error_metrics

    with _errors():
        database = _open_db(db)
        df, feats = _training_frame(database, result, application, machine, no_machine_metrics)
        est = EigerRegressor(n_components=components, rotation="varimax" if varimax else None,
                             n_clusters=clusters, threshold=threshold, interactions=not no_interactions,
                             max_terms=max_terms, input_transform="slog" if slog_inputs else "none",
                             target_transform="log2" if log_target else "none", random_state=seed)
        with _progress() as prog:
            task = prog.add_task("fitting cluster models", total=clusters)
            est.fit(df[feats], df[result].to_numpy(float),
                    progress=lambda d, t: prog.update(task, completed=d, total=t))
        err = error_metrics(df[result].to_numpy(float), est.predict(df[feats]))
        save_model(est, out, info={"result": result, "n_trials": int(len(df)),
                                   "applications": sorted(df["application"].unique().tolist()),
                                   "machines": sorted(df["machine"].unique().tolist()),
                                   "training_error": err})
        for line in est.describe():
            console.print(as_text(line), highlight=False)
        console.print(f"training error: MAPE {err['mape']:.2f} %, median APE {err['median_ape']:.2f} % on "
                      f"{len(df)} trials; model written to {escape(out)}", highlight=False)


@eiger_app.command("evaluate")
def evaluate_cmd(
    source: str = typer.Argument(..., help="'aiwc' to run the paper's experiments on the AIWC dataset, or a "
                                           "model file to score against the trials in the database."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="aiwc: Markdown page to write."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    application: List[str] = typer.Option([], "--application", help="Score these applications only."),
    machine: List[str] = typer.Option([], "--machine", help="Score these machines only."),
) -> None:
    """Run the AIWC experiments, or measure a model's error on the database's trials."""
    with _errors():
        if source == "aiwc":
            from core.atomic import atomic_write_text
            from predictor.eiger.experiments import render_markdown, run_aiwc_experiments

            with _progress() as prog:
                task = prog.add_task("experiments", total=None)
                res = run_aiwc_experiments(
                    progress=lambda stage, d, t: prog.update(task, completed=d, total=t, description=stage))
            cmd = "portcast eiger evaluate aiwc" + (f" --out {out}" if out else "")
            text = render_markdown(res, command=cmd)
            if out:
                atomic_write_text(out, text)
                console.print(f"wrote {escape(out)} ({res['seconds']:.0f} s)")
            else:
                console.print(visible(text, lines=True), highlight=False, markup=False)
            return
        from predictor.eiger.export import load_model
        from predictor.eiger.synthesis import error_metrics

        model = load_model(source)
        result = model.info_.get("result")
        if not result:
            raise UserError(f"{source}: the model file does not say which result it models (info.result)")
        database = _open_db(db)
        df = database.trials_frame()
        feats = [str(f) for f in model.feature_names_in_]
        missing = [f for f in feats if f not in df.columns]
        if missing:
            raise UserError(f"the database lacks metrics the model needs: {', '.join(missing)}")
        if result not in df.columns:
            raise UserError(f"the database has no result {result!r}")
        if application:
            df = df[df["application"].isin(application)]
        if machine:
            df = df[df["machine"].isin(machine)]
        df = df.dropna(subset=feats + [result])
        if df.empty:
            raise UserError("no trials to score")
        err = error_metrics(df[result].to_numpy(float), model.predict(df[feats]))
        console.print(f"{len(df)} trials: MAPE {err['mape']:.2f} %, median APE {err['median_ape']:.2f} %, "
                      f"MSE {err['mse']:.6g}, MSE of log10 {err['mse_log10']:.4g}", highlight=False)


@eiger_app.command("export")
def export_cmd(
    model: Path = typer.Argument(..., help="Model file (JSON) written by `portcast eiger fit`."),
    fmt: str = typer.Option("c", "--format", "-f", help="c | python | json"),
    out: Path = typer.Option(..., "--out", "-o", help="File to write."),
    name: Optional[str] = typer.Option(None, "--name", help="Generated function name."),
) -> None:
    """Export a model as a standalone C or Python function (or re-save its JSON)."""
    from core.atomic import atomic_write_text
    from predictor.eiger.export import export_c, export_python, load_model, save_model

    with _errors():
        suffixes = {"c": (".c", ".h"), "python": (".py",), "json": (".json",)}.get(fmt)
        if suffixes and out.suffix.lower() not in suffixes:
            raise UserError(f"--out {out}: eiger export --format {fmt} writes {' or '.join(suffixes)} there, not "
                            f"{out.suffix or 'no extension'}")
        est = load_model(model)
        if fmt == "c":
            atomic_write_text(out, export_c(est, name or "eiger_predict"))
        elif fmt == "python":
            atomic_write_text(out, export_python(est, name or "predict"))
        elif fmt == "json":
            save_model(est, out, info=est.info_)
        else:
            raise UserError(f"--format must be c, python or json, got {fmt!r}")
        console.print(f"wrote {escape(out)}")


def register(app: typer.Typer) -> None:
    """Add the ``eiger`` command group to the ``portcast`` app."""
    app.add_typer(eiger_app, name="eiger")
