"""``portcast record`` (trace marked regions of a native program under Valgrind) and ``portcast import``
(convert ChampSim or Valgrind lackey traces to Portcast trace files)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from portcast.commands._common import UserError, console, user_errors

import_app = typer.Typer(help="Convert traces recorded by other tools into Portcast trace files (.parquet).",
                         no_args_is_help=True)


def _native_errors():
    from profiler.native.build import NativeToolError

    return user_errors(NativeToolError, ValueError)


def record_command(
    program: List[str] = typer.Argument(..., help="The program and its arguments (put them after --)."),
    region: Optional[str] = typer.Option(None, "--region", help="Record only regions with this name."),
    trace_dir: Optional[Path] = typer.Option(None, "--trace-dir",
                                             help="Write each region to DIR/<region>.<invocation>.parquet."),
    whole: bool = typer.Option(False, "--whole-program",
                               help="Record the whole run as one region 'program' (no markers needed)."),
    features: bool = typer.Option(False, "--features", help="Also compute the region's features (feature engine)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a live record count."),
) -> None:
    """Run a native program under Portcast's Valgrind tool and trace its PORTCAST_REGION_START/END regions.

    Example: portcast record --trace-dir traces -- ./saxpy 100000
    """
    with _native_errors():
        if region is not None and whole:
            raise UserError("--region and --whole-program exclude each other")
        record_and_report(program, region=region, whole=whole, trace_dir=trace_dir, features=features,
                          progress=progress and console.is_terminal)


def record_and_report(program: List[str], *, region: Optional[str] = None, whole: bool = False,
                      trace_dir: Optional[Path] = None, features: bool = False, progress: bool = False,
                      predict: bool = False, model: Optional[Path] = None, chunk_records: int = 1 << 20,
                      no_region_error: Optional[str] = None):
    """Run ``program`` under the Valgrind tool, then print the per-region summary, features and prediction.

    The one implementation behind ``portcast record`` and ``portcast profile --native`` (which prints
    what the Python profiler prints for the same regions).

    Parameters
    ----------
    program : the command (program path and arguments)
    region : record only regions with this name
    whole : record the whole run as one region ``program``
    trace_dir : write each region to ``DIR/<region>.<invocation>.parquet``
    features : compute each region's features while it runs (feature engine)
    progress : show a live record count
    predict : after the features, predict each region's speedup (with ``model``; None = the default one)
    chunk_records : records per chunk handed to the sinks
    no_region_error : when given and no region was recorded, raise :class:`UserError` with this message
        (plus the program's exit status); otherwise print a hint

    Returns
    -------
    profiler.native.record.StreamDecoder
        The decoder of the run (``regions``, ``exit_code``).
    """
    from portcast.commands.profile import (
        build_sinks,
        print_features_and_prediction,
        print_region_summary,
        report_if_interrupted,
        written_files,
    )
    from profiler.native.record import record_program

    sinks, summary = build_sinks(trace_dir, progress=progress, features=features)
    with report_if_interrupted(summary, sinks):
        dec = record_program(program, sinks, region=region, whole_program=whole, chunk_records=chunk_records)
    if not dec.regions:
        if no_region_error is not None:
            status = f" (it exited with status {dec.exit_code})" if dec.exit_code else ""
            raise UserError(no_region_error + status)
        hint = f" named {region!r}" if region else ""
        console.print(f"no region{hint} was recorded: mark one with PORTCAST_REGION_START/END "
                      f"(#include \"portcast.h\", -I {_include_dir()}) or use --whole-program", highlight=False)
        script = _script_interpreter(program[0])
        if script:
            console.print(f"{program[0]} is a script run by {script}: the tool traces that interpreter, not the "
                          "programs the script starts (they run untraced); record the program itself",
                          highlight=False)
    if summary.rows:
        print_region_summary(summary.rows, written_files(sinks))
    if predict:
        from predictor import ModelFileError

        with user_errors(ModelFileError, ValueError):
            print_features_and_prediction(sinks, model, predict=True)
    else:
        print_features_and_prediction(sinks, None, predict=False)
    if dec.exit_code:
        console.print(f"the program exited with status {dec.exit_code}", highlight=False)
    return dec


def _script_interpreter(program: str) -> Optional[str]:
    """The interpreter named by ``program``'s ``#!`` line, or None (not a script, or not readable)."""
    import shutil

    path = program if os.sep in program else shutil.which(program)
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except (OSError, TypeError):
        return None
    if not first.startswith(b"#!"):
        return None
    return first[2:].decode(errors="replace").strip() or None


def _include_dir() -> str:
    from profiler.native import INCLUDE_DIR

    return str(INCLUDE_DIR)


def _import(kind: str, file: Path, out: Path, name: Optional[str], chunk_records: int, **kw) -> None:
    from profiler.native.importers import import_champsim, import_lackey
    from profiler.tracefile import ParquetTraceWriter

    with _native_errors():
        if not file.exists():
            raise UserError(f"{file}: no such file")
        if out.suffix != ".parquet":
            raise UserError(f"--out {out}: expected a .parquet file name")
        writer = ParquetTraceWriter(out)
        fn = import_champsim if kind == "champsim" else import_lackey
        try:
            info = fn(file, [writer], name=name, chunk_records=chunk_records, **kw)
        except BaseException:
            # the writer renamed an incomplete file into place; an import that failed leaves nothing behind
            if out.exists():
                os.unlink(out)
            raise
        console.print(f"wrote {out}: {info.n_records:,} records from {info.extra.get('instructions', 0):,} "
                      f"instructions ({kind})", highlight=False, soft_wrap=True)


@import_app.command("champsim")
def import_champsim_cmd(
    file: Path = typer.Argument(..., help="ChampSim binary trace (raw, .xz or .gz)."),
    out: Path = typer.Option(..., "--out", help="Portcast trace file to write (.parquet)."),
    name: Optional[str] = typer.Option(None, "--name", help="Region name (default: the file name)."),
    access_size: int = typer.Option(8, "--access-size", min=1, help="Bytes per memory access (ChampSim has none)."),
    max_instructions: Optional[int] = typer.Option(None, "--max-instructions", min=1,
                                                   help="Convert only the first N instructions."),
    chunk_records: int = typer.Option(1 << 20, "--chunk-records", min=1, help="Records per chunk."),
) -> None:
    """Convert a ChampSim binary trace to a Portcast trace file."""
    _import("champsim", file, out, name, chunk_records, access_size=access_size, max_instructions=max_instructions)


@import_app.command("lackey")
def import_lackey_cmd(
    file: Path = typer.Argument(..., help="Output of valgrind --tool=lackey --trace-mem=yes (--log-file)."),
    out: Path = typer.Option(..., "--out", help="Portcast trace file to write (.parquet)."),
    name: Optional[str] = typer.Option(None, "--name", help="Region name (default: the file name)."),
    chunk_records: int = typer.Option(1 << 20, "--chunk-records", min=1, help="Records per chunk."),
) -> None:
    """Convert Valgrind lackey memory-trace output to a Portcast trace file."""
    _import("lackey", file, out, name, chunk_records)


def register(app: typer.Typer) -> None:
    app.command("record", context_settings={"allow_interspersed_args": False})(record_command)
    app.add_typer(import_app, name="import")
