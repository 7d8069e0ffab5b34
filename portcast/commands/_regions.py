"""What ``portcast profile`` and ``portcast record`` share: the sinks of a traced run and the tables they print
(the region summary, features and prediction, the baseline, what an interrupt leaves), and
:func:`record_and_report`, the one native-recording run behind ``record`` and ``profile --native``."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from portcast.commands._common import UserError, console, err_console, user_errors
from portcast.pipeline import MIX_GROUPS, ProfileSetup, mix_fractions


class ProgressSink:
    """Shows a live count of traced records for long regions (Rich progress on stderr)."""

    def __init__(self) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        from portcast.commands._common import err_console

        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                  console=err_console, transient=True)
        self._task = None
        self._n = 0

    def start_region(self, info, static) -> None:
        self._n = 0
        self._progress.start()
        self._task = self._progress.add_task(f"tracing {info.name} #{info.invocation}: 0 records")

    def consume(self, chunk) -> None:
        self._n += len(chunk)
        self._progress.update(self._task, description=f"tracing: {self._n:,} records")

    def end_region(self, info, static) -> None:
        self._progress.remove_task(self._task)
        self._progress.stop()


def build_sinks(trace_dir: Optional[Path], *, progress: bool = True, features: bool = False,
                replace: bool = False) -> ProfileSetup:
    """The sinks of ``portcast record``'s regions: those of :func:`portcast.pipeline.prepare` without the
    GPU-time prediction (summary counter, hot lines, optional progress, optional Parquet files), plus the
    feature engine when ``features`` (``setup.features``)."""
    from portcast.pipeline import prepare

    setup = prepare(trace_dir=trace_dir, features=False, replace=replace,
                    progress=ProgressSink() if progress else None,
                    notify=lambda m: err_console.print(m, highlight=False, soft_wrap=True))
    if features:
        from features import FeatureSink

        setup.sinks.append(FeatureSink())
    return setup


def print_features_and_prediction(setup: ProfileSetup, model: Optional[Path], predict: bool = True,
                                  terms: bool = True) -> None:
    """After the summary: each region's key features and weak-spot lines, then its predicted speedup."""
    from portcast.commands._common import err_console
    from portcast.report import predict_regions, print_features, print_library_calls, print_thread_space

    fsink = setup.features
    if fsink is None:
        return
    out = console
    for (info, series), expl, ts in zip(fsink.results, fsink.explanations, fsink.thread_spaces):
        label = f"{info.name} #{info.invocation}"
        print_thread_space(out, err_console, label, ts)
        print_features(out, label, series, expl)
        print_library_calls(out, label, info)
    if predict and fsink.results:
        predict_regions(out, err_console, model, fsink.results, terms=terms)


def print_region_summary(rows, written=()) -> None:
    """Print one line per traced region invocation: records, instruction mix, wall time, mode, complete (in a
    terminal narrower than the table, one small field/value table per invocation instead, so that no number
    is cut)."""
    out = console
    if out.width < 110:
        for info, counts in rows:
            mix = mix_fractions(counts)
            t = Table(title=f"traced region {info.name} #{info.invocation}", title_justify="left", show_header=False)
            t.add_column("field", no_wrap=True)
            t.add_column("value", overflow="fold")
            t.add_row("records", f"{info.n_records:,}")
            t.add_row("mix", "  ".join(f"{k} {mix[k]:.3f}" for k, _ in MIX_GROUPS))
            t.add_row("threads", str(info.n_threads))
            t.add_row("time (s)", f"{info.wall_time_s or 0.0:.3f}")
            t.add_row("mode", info.mode)
            t.add_row("complete", "yes" if info.complete else f"no ({info.error})")
            out.print(t)
        for p in written:
            out.print(f"wrote {p}", highlight=False, soft_wrap=True)
        return
    table = Table(title="traced regions", show_lines=False)
    for col in ("region", "inv", "records", "mem", "ctrl", "int", "fp", "other", "threads", "time (s)", "mode",
                "complete"):
        table.add_column(col, justify="right" if col not in ("region", "mode", "complete") else "left", no_wrap=True)
    for info, counts in rows:
        mix = mix_fractions(counts)
        table.add_row(
            info.name, str(info.invocation), f"{info.n_records:,}", *(f"{mix[k]:.3f}" for k, _ in MIX_GROUPS),
            str(info.n_threads), f"{info.wall_time_s or 0.0:.3f}", info.mode,
            "yes" if info.complete else f"no ({info.error})",
        )
    console.print(table)
    for p in written:
        console.print(f"wrote {p}", highlight=False, soft_wrap=True)


@contextlib.contextmanager
def report_if_interrupted(setup: ProfileSetup):
    """On Ctrl-C (KeyboardInterrupt) inside the block: print the regions recorded so far and the files
    written (the region open at the interrupt is among them, marked incomplete), then exit with status 130
    instead of a bare traceback or nothing at all."""
    try:
        yield
    except KeyboardInterrupt:
        if setup.summary.rows:
            print_region_summary(setup.summary.rows, setup.written())
            err_console.print("interrupted: the traces above are what was recorded; the region open at the "
                              "interrupt is marked incomplete", highlight=False, soft_wrap=True)
        else:
            err_console.print("interrupted before any region was recorded", highlight=False)
        raise typer.Exit(130) from None


def print_baseline(rows) -> None:
    """``--baseline``: each region's uninstrumented CPU time (what was timed, how many runs, how well they
    agreed) and the tracing slowdown (traced / uninstrumented)."""
    from profiler.baseline import Baseline, uses_numpy, why_not_measured

    for info, _ in rows:
        t = info.uninstrumented_time_s
        label = f"{info.name} #{info.invocation}"
        if t:
            how = Baseline.from_info(info).describe(uses_numpy(info))
            traced = info.wall_time_s or 0.0
            console.print(f"baseline {label}: uninstrumented {t * 1e3:.4g} ms ({how}); traced {traced * 1e3:.4g} ms "
                          f"= {traced / t:.1f}x slowdown", highlight=False, markup=False, soft_wrap=True)
        else:
            console.print(f"baseline {label}: not measured ({why_not_measured(info, 'not measured')})",
                          highlight=False, markup=False, soft_wrap=True)


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
    from profiler.native.record import record_program

    setup = build_sinks(trace_dir, progress=progress, features=features)
    with report_if_interrupted(setup):
        dec = record_program(program, setup.sinks, region=region, whole_program=whole, chunk_records=chunk_records)
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
    if setup.summary.rows:
        print_region_summary(setup.summary.rows, setup.written())
    if predict:
        from predictor import ModelFileError

        with user_errors(ModelFileError, ValueError):
            print_features_and_prediction(setup, model, predict=True)
    else:
        print_features_and_prediction(setup, None, predict=False)
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
