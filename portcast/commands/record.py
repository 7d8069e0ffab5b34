"""``portcast record`` (trace marked regions of a native program under Valgrind) and ``portcast import``
(convert ChampSim or Valgrind lackey traces to Portcast trace files)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from portcast.commands._common import UserError, console, user_errors
from portcast.commands._regions import finish_traces, record_and_report
from portcast.safe_text import escape

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
        run = record_and_report(program, region=region, whole=whole, trace_dir=trace_dir, features=features,
                                progress=progress and console.is_terminal)
    finish_traces(run.setup)


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
        console.print(f"wrote {escape(out)}: {info.n_records:,} records from {info.extra.get('instructions', 0):,} "
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
