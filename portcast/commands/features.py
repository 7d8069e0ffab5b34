"""``portcast features``: compute the feature vector of trace files, or list the feature catalogue."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from core.atomic import atomic_write_text
from portcast.safe_text import as_text, escape

from ._common import UserError, check_output, console, user_errors, warn_if_incomplete


class Format(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


def _compute(paths: list[Path], chunk_records: int, quiet: bool):
    """(DataFrame with one row per trace, list of explanation tables, list of region names)."""
    import pandas as pd
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from features import compute_features
    from profiler.tracefile import TraceFile

    files = []
    for p in paths:
        if not p.exists():
            raise UserError(f"{p}: no such trace file")
        files.append(TraceFile(p))
        warn_if_incomplete(p, info=files[-1].info)
    rows, explanations = [], []
    total = sum(f.n_records for f in files)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, disable=quiet or total < 1_000_000, transient=True) as progress:
        task = progress.add_task("features", total=total)
        for f in files:
            progress.update(task, description=f"features {escape(f.path.name)}")
            engines: list = []
            s = compute_features(f, chunk_records=chunk_records, engine_out=engines,
                                 progress=lambda n: progress.advance(task, n))
            rows.append(s.rename(str(f.path)))
            explanations.append(engines[0].explain())
    df = pd.DataFrame(rows)
    df.index.name = "trace"
    return df, explanations, [f.info.name for f in files]


def _list_catalogue(fmt: Format, out: Optional[Path]) -> None:
    from rich.table import Table

    from features import catalogue

    cat = catalogue()
    if fmt is Format.table and out is None:
        table = Table(title=f"Portcast features ({len(cat)})")
        for col in cat.columns:
            table.add_column(col, overflow="fold")
        for row in cat.itertuples(index=False):
            table.add_row(*[as_text(v) for v in row])
        console.print(table)
        return
    _write_frame(cat, fmt, out, index=False, extra={"kind": "catalogue"})


def _write_frame(df, fmt: Format, out: Optional[Path], index: bool, extra: dict, explanations=None) -> None:
    """Write (or print) a table with the feature table's one writer (``features.table``)."""
    from features.table import feature_table_text, write_feature_table

    if fmt is Format.table:  # table to a file: plain text
        text = df.T.to_string() + "\n"
        if out is None:
            console.out(text, end="", highlight=False)
        else:
            atomic_write_text(out, text)
        return
    frame = df if index else df.rename_axis(None)
    if fmt is Format.json and explanations:
        extra = {**extra, "explain": {str(t): e.to_dict(orient="records") for t, e in zip(df.index, explanations)}}
    if out is None:
        if fmt is Format.parquet:
            raise UserError("--format parquet needs --out FILE")
        console.out(feature_table_text(frame, fmt.value, extra=extra), end="", highlight=False)
        return
    write_feature_table(frame, out, fmt.value, extra=extra)


def _format_of(fmt: Optional[Format], out: Optional[Path]) -> Format:
    """The format to write: ``--format``, else the one ``--out``'s extension names (.csv, .csv.gz, .json,
    .parquet; any other extension: a text table), else a table on the terminal. A ``--format`` the extension
    contradicts is refused (a text table in ``f.json`` would not read back as one)."""
    if out is None:
        return fmt or Format.table
    from features.table import FeatureTableError, table_format

    try:
        named = Format(table_format(out))
    except FeatureTableError:
        named = Format.table
    if fmt is None:
        return named
    if fmt is not named:
        says = "a text table" if named is Format.table else named.value
        raise UserError(f"--out {out}: the file name says {says}, --format says {fmt.value}")
    return fmt


def features_command(
    traces: List[Path] = typer.Argument(None, help="Portcast trace files (.parquet)."),
    fmt: Optional[Format] = typer.Option(None, "--format", "-f", help="Output format (default: table; with --out, "
                                         "the one its extension names: .csv, .json, .parquet, else a text table)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write to FILE instead of the terminal."),
    explain: bool = typer.Option(False, "--explain", help="Show the source lines behind locStrideOther, "
                                 "Lbdiv_32, warp_bdiv, warp_coalescing and footprint."),
    list_: bool = typer.Option(False, "--list", help="List the feature catalogue and exit."),
    chunk_records: int = typer.Option(1 << 20, "--chunk-records", min=1, help="Records per chunk read."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
) -> None:
    """Compute XAPP's, MICA's and the warp-level features of trace files (definitions: docs/features.md)."""
    with user_errors(ValueError):
        check_output(out, inputs=traces or (), force=force)
        fmt = _format_of(fmt, out)
        if list_:
            _list_catalogue(fmt, out)
            return
        if not traces:
            raise UserError("give at least one trace file, or --list")
        df, explanations, regions = _compute(list(traces), chunk_records, quiet)
        if fmt is Format.table and out is None:
            from rich.table import Table
            from rich.text import Text

            table = Table(title="features")
            table.add_column("feature")
            for name, path in zip(regions, df.index):
                table.add_column(Text("\n").join([as_text(name), as_text(Path(path).name)]), justify="right")
            for feat in df.columns:
                table.add_row(as_text(feat), *[Text(f"{v:.6g}") for v in df[feat]])
            console.print(table)
            if explain:
                for path, ex in zip(df.index, explanations):
                    et = Table(title=f"what makes {escape(Path(path).name)} GPU-unfriendly")
                    for col in ex.columns:
                        et.add_column(col)
                    for row in ex.itertuples(index=False):
                        et.add_row(*[Text(f"{v:.6g}") if isinstance(v, float) else as_text(v) for v in row])
                    console.print(et)
            return
        _write_frame(df, fmt, out, index=True, extra={"kind": "features"},
                     explanations=explanations if explain else None)
        if explain and fmt is not Format.json:
            import pandas as pd

            ex = pd.concat([e.assign(trace=p) for p, e in zip(df.index, explanations)], ignore_index=True)
            if out is None:
                console.out(ex.to_csv(index=False), end="", highlight=False)
            else:
                ex_path = out.with_name(out.stem + ".explain.csv")
                atomic_write_text(ex_path, ex.to_csv(index=False))


def register(app: typer.Typer) -> None:
    """Add ``portcast features`` to the CLI."""
    app.command("features")(features_command)
