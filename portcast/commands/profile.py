"""``portcast profile`` (trace the marked regions of a script, or one function) and ``portcast trace-info``."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from portcast.commands._common import UserError, check_output, console, err_console, user_errors, warn_if_incomplete
from portcast.commands._regions import (
    ProgressSink,
    finish_traces,
    prediction_view,
    print_prediction,
    print_profile,
    record_and_report,
    report_if_interrupted,
)
from portcast.defaults import DEFAULT_GPU
from portcast.pipeline.stage_predict import at_size_ladder, predict_at_size
from portcast.pipeline.stage_run import load_module, resolve_function
from portcast.safe_text import as_text, escape, visible


def _sample_choice(sample: Optional[str], exact: bool, trace_dir) -> Optional[str]:
    """What ``--sample`` and ``--exact`` ask for (:func:`portcast.pipeline.stage_prepare.sample_option` checks
    the value): the exact trace with ``--exact`` or when traces are written (a trace file holds every record, so
    ``--sample`` with ``--trace-dir`` is refused); else ``--sample`` (default ``auto``)."""
    if exact and sample is not None:
        raise UserError("give either --sample or --exact, not both")
    if trace_dir is not None and sample is not None and sample != "exact":
        raise UserError("--trace-dir writes every record of a region: it profiles exactly, not with --sample")
    if exact or trace_dir is not None:
        return "exact"
    return "auto" if sample is None else sample


def _profile_native(script, script_args, *, function, mode, region, trace_dir, chunk_records, progress,
                    features, model, gpu, verbose, baseline=False, report=None, json_out=False,
                    sample=None) -> None:
    """``portcast profile --native``: the script runs under the Valgrind tool (``portcast record``'s code); its
    regions go to the sinks of a Python profile run and get their prediction, report and JSON the same way."""
    from profiler.native.build import NativeToolError

    if function:
        raise UserError("--native traces a whole SCRIPT; --function is for the Python profiler")
    if mode != "auto":
        raise UserError("--mode applies to the Python profiler, not to --native")
    if baseline:
        raise UserError("--baseline applies to the Python profiler, not to --native")
    if script is None:
        raise UserError("give a SCRIPT to run under --native")
    if not script.is_file():
        raise UserError(f"{script}: no such script")
    if region and len(region) > 1:
        raise UserError("--native traces one --region at a time (or all regions without --region)")
    hint = f" named {region[0]!r}" if region else ""
    with user_errors(NativeToolError):
        run = record_and_report(
            [sys.executable, str(script), *(script_args or [])], region=region[0] if region else None,
            trace_dir=trace_dir, features=features, progress=progress and console.is_terminal,
            predict=features, model=model, gpu=gpu, verbose=verbose, chunk_records=chunk_records, quiet=json_out,
            sample=sample,
            no_region_error=f"{script} ran under the Valgrind tool but executed no native region{hint}: mark one "
                            f"in @numba.njit code with region_start(\"name\") / region_end(\"name\") from "
                            f"profiler.native.numba_markers (see examples/numba_saxpy.py)")
    if report is not None or json_out:
        rep = run.report
        rep.target = str(script)
        if report is not None:
            rep.write_html(report)
            err_console.print(f"wrote the report {escape(report)}", highlight=False, soft_wrap=True)
        if json_out:
            sys.stdout.write(rep.to_json() + "\n")
    finish_traces(run.setup)


_PORTCAST_DIRS = tuple(str(Path(__file__).resolve().parents[2] / d) + os.sep
                       for d in ("profiler", "portcast", "features", "predictor", "gpu_models"))


class UserOutcome:
    """How the user's script or function ended: ``exit_code`` (what the script's own process would have
    returned), ``error`` (the exception it raised, None if none) and its ``frames`` (the user's, Portcast's
    removed)."""

    def __init__(self, exit_code: int = 0, error: BaseException | None = None, frames=()) -> None:
        self.exit_code, self.error, self.frames = exit_code, error, list(frames)

    def finish(self, rows, setup=None) -> None:
        """After the report: say what happened to the traces (``setup``'s trace folder is released; a trace
        that could not be written is one line and status 2, when the script's own status is 0), and exit with
        the script's status."""
        status = self.exit_code
        if setup is not None:
            try:
                finish_traces(setup)
            except typer.Exit as exc:
                status = status or exc.exit_code
        if self.error is not None:
            open_ = [f"{i.name} #{i.invocation}" for i, _ in rows if not i.complete]
            kept = (f"; {', '.join(open_)} marked incomplete (the records before the exception are kept)"
                    if open_ else "")
            err_console.print(f"the script raised {escape(type(self.error).__name__)}: the report above covers "
                              f"what ran before it{escape(kept)}", highlight=False, soft_wrap=True)
        elif self.exit_code:
            err_console.print(f"the script exited with status {self.exit_code}", highlight=False)
        if status:
            raise typer.Exit(status)


def _user_frames(tb, user_file: str | None) -> list:
    """The frames of a traceback from the user's own code on: those before the first frame of ``user_file``
    (Portcast and the command line) and every frame of Portcast's own packages are left out."""
    import traceback

    frames = traceback.extract_tb(tb)
    start = next((k for k, f in enumerate(frames) if user_file and os.path.abspath(f.filename) == user_file), None)
    if start is None:
        start = next((k for k, f in enumerate(frames) if not f.filename.startswith(_PORTCAST_DIRS)
                      and "site-packages" not in f.filename and not f.filename.startswith("<")), None)
    if start is None:
        return []
    return [f for f in frames[start:] if not os.path.abspath(f.filename).startswith(_PORTCAST_DIRS)]


def run_user_code(run, user_file: str | None) -> UserOutcome:
    """Run the user's script or function (``run()``) and keep how it ended instead of letting it end
    Portcast: ``sys.exit(n)`` gives status n; an exception raised by the user's code (one with a frame of the
    user's code in its traceback) gives status 1 and the exception. Portcast's own input errors propagate."""
    from profiler.instrument import SourceUnavailable, UnsupportedConstruct
    from profiler.tracefile import TraceWriteError

    try:
        run()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return UserOutcome(0)
        if isinstance(code, int):
            return UserOutcome(code)
        err_console.print(as_text(code, lines=True), highlight=False, soft_wrap=True)
        return UserOutcome(1)
    except (UserError, UnsupportedConstruct, SourceUnavailable, KeyboardInterrupt, TraceWriteError):
        raise
    except Exception as exc:
        frames = _user_frames(exc.__traceback__, user_file)
        if not frames:
            raise  # not the user's code: Portcast's own error handling applies
        return UserOutcome(1, exc, frames)
    return UserOutcome(0)


def print_user_traceback(exc: BaseException, frames) -> None:
    """The user's exception as Python prints it, with the user's frames only."""
    import traceback

    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + \
        "".join(traceback.format_exception_only(type(exc), exc))
    err_console.print(visible(text.rstrip("\n"), lines=True), highlight=False, markup=False, soft_wrap=True)


def _profile_at_size(script, function, at_size, sizes, *, gpu, mode, chosen, baseline, verbose, native, args,
                     trace_dir, baseline_kind="as-written", baseline_rule=None) -> None:
    """``--at-size N``: trace the function at small sizes, extrapolate its work to N, predict there (the same
    prediction and printing as a traced region's)."""
    import inspect

    if at_size is None:
        raise UserError("--sizes needs --at-size N (the size to predict at)")
    if function is None or script is not None:
        raise UserError("--at-size needs --function MODULE:QUALNAME (whose module's portcast_inputs(n) makes "
                        "inputs of size n)")
    if native or args is not None or trace_dir is not None:
        raise UserError("--at-size cannot be combined with --native, --args or --trace-dir")
    if chosen is None or not chosen.predicts_time:
        raise UserError("--at-size predicts with a GPU-time model (not the provisional speedup model, and not "
                        "with --no-features)")
    mod_spec, qual = function.rsplit(":", 1) if ":" in function else (function, "")
    fn, _ = resolve_function(function, "()")
    module = load_module(mod_spec)
    make = getattr(module, "portcast_inputs", None)
    if make is None or not inspect.signature(make).parameters:
        raise UserError(f"{mod_spec}: --at-size needs portcast_inputs(n) that makes the inputs at size n")
    try:
        given = [int(x) for x in sizes.split(",") if x.strip()] if sizes else None
    except ValueError:
        raise UserError(f"--sizes must be integers separated by commas, got {sizes!r}") from None
    ladder = at_size_ladder(make, at_size, given)
    console.print(f"tracing {escape(qual)} at sizes {', '.join(map(str, ladder))} to extrapolate to {at_size:,}",
                  highlight=False)
    res = predict_at_size(fn, make, at_size, ladder, chosen=chosen, gpu=gpu, mode=mode, baseline=baseline,
                          label=f"{qual} at n = {at_size:,}", baseline_kind=baseline_kind,
                          baseline_rule=baseline_rule)
    at, out = res.extrapolation, console
    t = Table(title=f"work of {escape(qual)} at n = {at_size:,} (extrapolated)", title_justify="left")
    for c in ("quantity", "fit", f"at n = {ladder[-1]:,}", f"at n = {at_size:,}"):
        t.add_column(c, justify="left" if c in ("quantity", "fit") else "right")
    table = at.table()
    from predictor.gputime import RATE_FEATURES, WORK_KEYS

    shown = set(WORK_KEYS) | set(RATE_FEATURES) | {"read_bytes", "written_bytes"}
    for r in table.itertuples(index=False):
        if r.name in shown:
            t.add_row(r.name, str(r.form), f"{r.traced:,.4g}", f"{r.at_target:,.4g}")
    out.print(t)
    print_prediction(prediction_view(res.region, at.features), res.region, verbose=verbose)


def _baseline_options(baseline, kind, spread, budget, native):
    """``(kind, RepeatRule)`` of ``--baseline-kind``, ``--baseline-spread`` and ``--baseline-budget``; a
    :class:`UserError` naming the option for a bad value, or for one given with ``--no-baseline`` or ``--native``
    (which time nothing)."""
    import math

    from profiler.baseline import KINDS
    from profiler.repeat_timing import RepeatRule

    given = [name for name, v in (("--baseline-kind", kind), ("--baseline-spread", spread),
                                  ("--baseline-budget", budget)) if v is not None]
    if given and (baseline is False or native):
        raise UserError(f"{given[0]} sets the uninstrumented CPU timing, which "
                        f"{'--no-baseline turns off' if baseline is False else '--native does not make'}")
    if kind is not None and kind not in KINDS:
        raise UserError(f"--baseline-kind must be {' or '.join(KINDS)}, not {kind!r}")
    for name, v in (("--baseline-spread", spread), ("--baseline-budget", budget)):
        if v is not None and not (math.isfinite(v) and v > 0):
            raise UserError(f"{name} must be a number > 0, got {v}")
    defaults = RepeatRule()
    rule = RepeatRule(spread=defaults.spread if spread is None else spread,
                      budget_s=defaults.budget_s if budget is None else budget)
    return kind or "as-written", rule


def _baseline_words(info) -> str:
    """``portcast trace-info``'s line on how the uninstrumented time was measured."""
    from profiler.baseline import Baseline, uses_numpy

    b = Baseline.from_info(info)
    return "not measured" if b is None or not b.seconds else b.describe(uses_numpy(info))


def register(app: typer.Typer) -> None:
    @app.command("profile")
    def profile_cmd(
        script: Optional[Path] = typer.Argument(None, help="Script whose marked regions are traced."),
        script_args: Optional[List[str]] = typer.Argument(None, help="Arguments for the script (after --)."),
        function: Optional[str] = typer.Option(
            None, "--function", help="Trace one function instead: MODULE:QUALNAME (module file or dotted name)."),
        args: Optional[str] = typer.Option(
            None, "--args", help="Python expression giving the function's arguments (a tuple), evaluated in its "
                                 "module; default: the module's portcast_inputs()."),
        trace_dir: Optional[Path] = typer.Option(
            None, "--trace-dir", "-o", help="Write one Parquet trace file per region invocation here."),
        mode: str = typer.Option("auto", "--mode", help="auto | interpreted | compiled"),
        region: Optional[List[str]] = typer.Option(None, "--region", "-r",
                                                   help="Trace only this region (repeatable)."),
        chunk_records: int = typer.Option(1 << 20, "--chunk-records", help="Records per chunk / Parquet row group."),
        no_progress: bool = typer.Option(False, "--no-progress", help="No live progress display."),
        features: bool = typer.Option(True, "--features/--no-features",
                                      help="Compute each region's features while it runs, and predict its speedup."),
        model: Optional[str] = typer.Option(
            None, "--model", help="GPU-time model file (portcast gpu-time train); default: the shipped one, trained "
                                  "on measured GPU times. 'provisional' (or an XAPP speedup model file) predicts a "
                                  "speedup with the older model trained on simulated GPU times."),
        gpu: str = typer.Option(
            DEFAULT_GPU, "--gpu", help="Target GPU: a preset name (docs/gpus.md lists them) or a description .json; "
                                       f"default {DEFAULT_GPU}, a current GPU with measured kernel times."),
        baseline: Optional[bool] = typer.Option(
            None, "--baseline/--no-baseline",
            help="Time each function region untraced, on copies of the arguments, repeated until the runs agree: "
                 "the CPU time the speedup is against (default: on; marked blocks of a script are never re-run)."),
        baseline_kind: Optional[str] = typer.Option(
            None, "--baseline-kind",
            help="What the CPU time is of: as-written (default: the code as you run it, NumPy or Python "
                 "interpreted, your own njit functions compiled) or njit (compiled with numba.njit by Portcast "
                 "when Numba can)."),
        baseline_spread: Optional[float] = typer.Option(
            None, "--baseline-spread",
            help="Repeat the CPU timing until the interquartile range / median of the runs is at most this "
                 "(default 0.1) ..."),
        baseline_budget: Optional[float] = typer.Option(
            None, "--baseline-budget",
            help="... or until this many seconds of timing are spent, per region invocation (default 1; at least "
                 "one run is made)."),
        verbose: bool = typer.Option(False, "--verbose", "-v",
                                     help="Also print the model's inputs and their training ranges."),
        at_size: Optional[int] = typer.Option(
            None, "--at-size", min=1,
            help="With --function: predict at this input size without tracing it: trace at smaller sizes (the "
                 "module's portcast_inputs(n)), fit each count against size, extrapolate (docs/gputime.md)."),
        sizes: Optional[str] = typer.Option(
            None, "--sizes", help="With --at-size: the sizes to trace, e.g. 1000,2000,4000 (default: four sizes up "
                                  "to at-size/16)."),
        force: bool = typer.Option(
            False, "--force", help="Replace an existing --report file, and the traces an earlier run left in "
                                   "--trace-dir (default: this run writes to a new run-<k> folder inside it)."),
        native: bool = typer.Option(
            False, "--native", help="Run SCRIPT under Portcast's Valgrind tool and trace its compiled Numba regions "
                                    "(profiler.native.numba_markers) at machine level."),
        report: Optional[Path] = typer.Option(
            None, "--report", help="Also write the whole report as one self-contained HTML page (tables, source "
                                   "lines, plots; nothing fetched from the network)."),
        json_out: bool = typer.Option(False, "--json",
                                      help="Print the report as JSON on stdout instead of tables (the script's own "
                                           "output goes to stderr)."),
        sample: Optional[str] = typer.Option(
            None, "--sample",
            help="auto (default): a large region's features come from a sample of its thread blocks and pages, "
                 "sized from its uninstrumented run to finish in seconds, with 95% intervals; or a block rate in "
                 "(0, 1], e.g. 0.01 (docs/sampling.md). --trace-dir profiles exactly."),
        exact: bool = typer.Option(False, "--exact", help="Trace every record (no sampling)."),
    ) -> None:
        """Run SCRIPT (or one --function), trace its marked regions, and print each region's summary,
        GPU-relevant features, the lines behind them, and its predicted GPU time and speedup."""
        from portcast.pipeline.stage_predict import predict_regions
        from portcast.pipeline.stage_prepare import check_gpu, prepare, resolve_model
        from portcast.pipeline.stage_report import build_report
        from portcast.pipeline.stage_run import run_traced
        from profiler.instrument import SourceUnavailable, UnsupportedConstruct

        with user_errors(UnsupportedConstruct, SourceUnavailable, ValueError):
            if mode not in ("auto", "interpreted", "compiled"):
                raise UserError(f"--mode must be auto, interpreted or compiled, not {mode!r}")
            kind, rule = _baseline_options(baseline, baseline_kind, baseline_spread, baseline_budget, native)
            if chunk_records < 1:
                raise UserError(f"--chunk-records must be >= 1, got {chunk_records}")
            if (report is not None or json_out) and (at_size is not None or sizes is not None):
                raise UserError("--report and --json cover a traced run: not with --at-size")
            check_output(report, inputs=[script], force=force, what="--report")
            if at_size is not None or sizes is not None:
                # a bad model file or GPU name should fail before the script runs, not after
                chosen = resolve_model(model) if features else None
                if features:
                    check_gpu(gpu)
                _profile_at_size(script, function, at_size, sizes, gpu=gpu, mode=mode, chosen=chosen,
                                 baseline=baseline is not False, verbose=verbose, native=native, args=args,
                                 trace_dir=trace_dir, baseline_kind=kind, baseline_rule=rule)
                return
            if native:  # the model file and the GPU name are checked before the script runs (prepare)
                _profile_native(script, script_args, function=function, mode=mode, region=region,
                                trace_dir=trace_dir, chunk_records=chunk_records, progress=not no_progress,
                                features=features, model=model, gpu=gpu, verbose=verbose, baseline=bool(baseline),
                                report=report, json_out=json_out, sample=_sample_choice(sample, exact, trace_dir))
                return
            baseline = True if baseline is None else baseline
            setup = prepare(
                trace_dir=trace_dir, features=features, model=model, gpu=gpu, replace=force,
                progress=ProgressSink() if not no_progress else None,
                notify=lambda m: err_console.print(as_text(m), highlight=False, soft_wrap=True),
                sample=_sample_choice(sample, exact, trace_dir))
            sinks, summary = setup.sinks, setup.summary
            # with --json stdout carries the report only: the user's own prints go to stderr
            quiet = contextlib.redirect_stdout(sys.stderr) if json_out else contextlib.nullcontext()
            with report_if_interrupted(setup, json_out=json_out), quiet:
                if function:
                    if script is not None:
                        raise UserError("give either SCRIPT or --function, not both")
                    fn, fargs = resolve_function(function, args)
                    user_file = getattr(getattr(fn, "__code__", None), "co_filename", None) or \
                        getattr(getattr(getattr(fn, "py_func", None), "__code__", None), "co_filename", None)
                    outcome = run_user_code(lambda: run_traced(
                        sinks, fn=fn, fargs=fargs, mode=mode, chunk_records=chunk_records,
                        measure_uninstrumented=baseline, baseline_kind=kind, baseline_rule=rule,
                        sample=setup.sample), user_file)
                    target = function
                else:
                    if script is None:
                        raise UserError("give a SCRIPT to run, or --function MODULE:QUALNAME")
                    if not script.is_file():
                        raise UserError(f"{script}: no such script")
                    outcome = run_user_code(lambda: run_traced(
                        sinks, script=script, script_args=script_args, mode=mode, regions=region,
                        chunk_records=chunk_records, measure_uninstrumented=baseline, baseline_kind=kind,
                        baseline_rule=rule, sample=setup.sample), str(script.resolve()))
                    target = str(script)
        if outcome.error is not None:
            print_user_traceback(outcome.error, outcome.frames)
        from predictor import ModelFileError
        from predictor.gputime import GpuTimeModelError

        with user_errors(ModelFileError, GpuTimeModelError, ValueError):
            preds = predict_regions(setup, baseline=baseline)
            rep = build_report(setup, preds, target=target, exit_code=outcome.exit_code, error=outcome.error,
                                        no_baseline="not measured" if baseline else "not asked for (--no-baseline)")
            if report is not None:
                rep.write_html(report)
                err_console.print(f"wrote the report {escape(report)}", highlight=False, soft_wrap=True)
            if json_out:
                sys.stdout.write(rep.to_json() + "\n")
                outcome.finish(summary.rows, setup)
                return
            if not summary.rows:
                console.print("no marked region was executed (mark one with @portcast.region, with "
                              "portcast.region(...), "
                              "or portcast.region_start/region_end)")
                outcome.finish([], setup)
                return
            print_profile(rep, preds, written=setup.written(), baseline=baseline, verbose=verbose)
        outcome.finish(summary.rows, setup)

    @app.command("trace-info")
    def trace_info_cmd(
        file: Path = typer.Argument(..., help="A Parquet trace file written by portcast profile."),
    ) -> None:
        """Describe a trace file: region metadata, records, instruction mix, static table size."""
        from core.trace_schema import Op
        from features.mix import mix_fractions, op_counts
        from profiler.tracefile import TraceFile

        with user_errors():
            tf = TraceFile(file)
            warn_if_incomplete(file, info=tf.info)
            counts = op_counts(tf.chunks())
            n = int(counts.sum())
        info = tf.info
        table = Table(title=escape(file), show_header=False)
        table.add_column("field")
        table.add_column("value")
        for k, v in (
            ("region", info.name), ("invocation", info.invocation), ("records", f"{n:,}"),
            ("row groups", tf.n_row_groups), ("complete", info.complete if info.complete else f"False ({info.error})"),
            ("mode", info.mode), ("wall time (s)", info.wall_time_s),
            ("uninstrumented time (s)", info.uninstrumented_time_s),
            ("uninstrumented runs", _baseline_words(info)),
            ("parallel loop", info.parallel_loop), ("threads", info.n_threads), ("source", info.source),
            ("portcast version", info.portcast_version), ("static instructions", len(tf.static)),
        ):
            table.add_row(k, as_text(str(v)))
        mix = mix_fractions(counts)
        table.add_row("mix", "  ".join(f"{k} {v:.3f}" for k, v in mix.items()))
        table.add_row("classes", "  ".join(f"{Op(i).name} {int(c):,}" for i, c in enumerate(counts) if c))
        console.print(table)
