"""What ``portcast profile`` and ``portcast record`` share: the sinks of a traced run and the tables they print
(the region summary, features and prediction, the baseline, what an interrupt leaves), and
:func:`record_and_report`, the one native-recording run behind ``record`` and ``profile --native``."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.table import Table

from portcast.commands._common import UserError, console, err_console, user_errors
from portcast.defaults import DEFAULT_GPU
from portcast.pipeline.stage_prepare import ProfileSetup
from portcast.safe_text import as_text, escape, visible


class ProgressSink:
    """Shows a live count of traced records for long regions (Rich progress on stderr)."""

    def __init__(self) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        from portcast.commands._common import err_console

        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                  console=err_console, transient=True)
        self._task = None
        self._n = 0
        self._filter = None

    def bind_sample_filter(self, filt) -> None:
        """A sampled region: the count shown is the filter's (every record), with the records analysed."""
        self._filter = filt

    def start_region(self, info, static) -> None:
        self._n = 0
        self._progress.start()
        self._task = self._progress.add_task(f"tracing {escape(info.name)} #{info.invocation}: 0 records")

    def consume(self, chunk) -> None:
        self._n += len(chunk)
        if self._filter is not None:
            from profiler.sampling import RECORDS

            total = int(self._filter.counts[RECORDS])
            text = f"tracing: {total:,} records, {self._n:,} of them analysed (sampled)"
        else:
            text = f"tracing: {self._n:,} records"
        self._progress.update(self._task, description=text)

    def end_region(self, info, static) -> None:
        self._progress.remove_task(self._task)
        self._progress.stop()
        self._filter = None


def build_sinks(trace_dir: Optional[Path], *, progress: bool = True, features: bool = False,
                replace: bool = False, predict: bool = False, model: Optional[str] = None,
                gpu: str = DEFAULT_GPU, sample=None) -> ProfileSetup:
    """The sinks of a native run (:func:`portcast.pipeline.stage_prepare.prepare`: summary counter, hot lines, optional
    progress, optional Parquet files): with ``predict``, the feature engine and the chosen model's sinks
    (``model``, ``gpu`` as for ``portcast profile``), exactly those of a Python profile run; else the feature
    engine alone when ``features`` (``portcast record --features``). ``sample``: a block rate or sample plan
    (:func:`portcast.pipeline.stage_prepare.sample_option`; ``"auto"`` is the exact trace here: a native region has no
    uninstrumented run to size a sample from)."""
    from portcast.pipeline.stage_prepare import prepare

    setup = prepare(trace_dir=trace_dir, features=predict, model=model, gpu=gpu, replace=replace,
                    progress=ProgressSink() if progress else None,
                    notify=lambda m: err_console.print(as_text(m), highlight=False, soft_wrap=True),
                    sample=None if sample == "auto" else sample)
    if features and not predict:
        from features import FeatureSink

        setup.sinks.append(FeatureSink())
    return setup


def print_profile(report, preds=(), *, written=None, baseline: bool = False, verbose: bool = False) -> None:
    """Everything a traced run prints, from its :class:`portcast.profile_report.ProfileReport` (the object the
    JSON and the HTML page are made from, so the three never disagree): the region summary, with ``baseline``
    each region's uninstrumented CPU time, then :func:`print_features_and_prediction`. ``preds``: the run's
    :class:`portcast.pipeline.stage_predict.RegionPrediction` objects, for the two things the report does not
    hold (an XAPP model's term tables, ``--verbose``'s model inputs); ``written``: the trace files (default: the
    report's)."""
    if written is None:
        written = [f for r in report.regions for f in r.trace_files]
    print_region_summary(report.regions, written)
    if baseline:
        print_baseline(report.regions)
    print_features_and_prediction(report, preds, verbose=verbose)


def print_features_and_prediction(report, preds=(), *, verbose: bool = False) -> None:
    """After the summary: each featured region's thread space, key features and the lines behind its weak spots
    (the footprint among them when its prediction says DRAM bounds it), its library calls; then each region's
    prediction (:func:`print_prediction`), all from the report's regions."""
    from portcast.report import print_features, print_library_calls, print_thread_space

    out = console
    featured = [r for r in report.regions if r.features]  # the regions the feature engine saw
    for r in featured:
        print_thread_space(out, err_console, r.label, r.thread_space)
        print_features(out, r.label, r.key_features, r.weak_spots)
        print_library_calls(out, r.label, r.library_calls)
    if report.model_kind is None:
        return
    live = {rp.label: rp for rp in preds}
    for r in featured:
        print_prediction(r, live.get(r.label), verbose=verbose)


def prediction_view(rp, series=None):
    """A region's prediction (:class:`portcast.pipeline.stage_predict.RegionPrediction`) as
    :func:`print_prediction` reads it from a report's region: for a prediction no report holds (``--at-size``)."""
    import types

    from portcast.profile_report import jsonable, prediction_fields

    return types.SimpleNamespace(label=rp.label, cpu_how=rp.cpu_how, sample=jsonable(rp.sample),
                                 **prediction_fields(rp, None, series))


def print_prediction(r, rp=None, *, verbose: bool = False) -> None:
    """One region's prediction as every path prints it, from the report's region ``r``
    (:class:`portcast.profile_report.RegionReport`, or :func:`prediction_view`): its notes; the GPU time on the
    target with the speedups, the bound table with the lines behind the bound and the model line; or an XAPP
    model's speedup, every line naming that model; or why there is none. ``rp``: the live prediction, for an
    XAPP model's tables and ``verbose``'s model inputs."""
    from portcast.bounds_report import print_bounds
    from portcast.report import print_gpu_prediction, print_model_line

    out = console
    xapp = rp is not None and rp.model_kind == "xapp"
    lead = f"{rp.model_label}: " if xapp else ""
    for note in r.notes:
        out.print(escape(f"{lead}{r.label}: {note}"), highlight=False, soft_wrap=True)
    if r.no_prediction is not None:
        what = "speedup" if xapp else "GPU time"
        out.print(escape(f"{lead}{r.label}: no {what} predicted: {r.no_prediction}."), highlight=False,
                  soft_wrap=True)
        return
    if r.speedup_model is not None:
        _print_speedup(rp, verbose)
        return
    p = r.prediction
    print_gpu_prediction(out, r.label, p, cpu_how=r.cpu_how, cpu_why=p.get("cpu_why") or "")
    if r.sample is not None:
        from portcast.sample_text import sample_line

        out.print(escape(f"{r.label}: {sample_line(r.sample)}"), highlight=False, soft_wrap=True)
    if r.bounds is not None:
        print_bounds(out, r.label, r.bounds)
    print_model_line(out, p, r.bounds)
    if verbose and rp is not None:
        _print_inputs(out, rp.model, rp.prediction)


def _print_speedup(rp, terms: bool) -> None:
    """An XAPP speedup model's prediction (``rp.speedup_model``), every line starting with the model's label."""
    from portcast.report import print_prediction as print_xapp

    sm, lead = rp.speedup_model, rp.model_label
    console.print(escape(f"{lead}: {sm['model_file']}; it predicts a speedup, not a GPU time"), highlight=False,
                  soft_wrap=True)
    print_xapp(console, err_console, sm["explanation"], f"{lead}: {rp.label}", model=None, terms=terms,
               title_prefix=f"{lead}: ")
    if sm.get("provisional"):
        console.print(as_text(f"{lead}: {sm['provisional']}", style="bold yellow"), highlight=False, soft_wrap=True)


def _print_inputs(out, model, p) -> None:
    """``--verbose``: the GPU-time model's inputs beside their training ranges."""
    import pandas as pd

    from predictor.gputime import design

    if getattr(model, "family", "") == "bounded":
        from portcast.formatting import format_seconds
        from predictor.bounded import rate_matrix

        logs = [r for r in model.rates if r in ("ilp32", "warp_sectorsPerGroup")]
        t = Table(title="model inputs: per-launch estimates (seconds), the lower bound, launches, and the rates of "
                        "the factor with their training ranges" + (f" ({escape(' and '.join(logs))} as natural logs)"
                                                                   if logs else ""), title_justify="left")
        for c in ("input", "value", "training min", "training max"):
            t.add_column(c, justify="left" if c == "input" else "right", no_wrap=True)
        row = pd.DataFrame([p.inputs])
        for name in (*(f"term_{k}" for k in model.terms), "bound_s"):
            t.add_row(as_text(name), format_seconds(p.inputs[name]), "", "")
        t.add_row("launches", f"{p.inputs['launches']:g}", "", "")
        x = rate_matrix(row, model.rates)[0]
        for i, r in enumerate(model.rates):
            lo, hi = model.training_ranges[r]
            t.add_row(as_text(r), f"{x[i]:.3g}", f"{lo:.3g}", f"{hi:.3g}")
        out.print(t)
        return

    d = design(pd.DataFrame([p.inputs])).iloc[0]
    t = Table(title="model inputs (natural logs of seconds / counts) and training ranges", title_justify="left")
    for c in ("input", "value", "training min", "training max"):
        t.add_column(c, justify="left" if c == "input" else "right", no_wrap=True)
    for c in model.columns:
        lo, hi = model.training_ranges.get(c, [float("nan")] * 2)
        t.add_row(as_text(c), f"{d[c]:.3g}", f"{lo:.3g}", f"{hi:.3g}")
    out.print(t)


def print_region_summary(regions, written=(), out=None) -> None:
    """Print one line per traced region invocation (``regions``: the report's
    :class:`~portcast.profile_report.RegionReport` objects, or :func:`region_summaries`): records, instruction
    mix, wall time, mode, complete (in a terminal narrower than the table, one small field/value table per
    invocation instead, so that no number is cut); on ``out`` (default: stdout's console)."""
    from features.mix import MIX_GROUPS

    out = out or console
    if out.width < 110:
        for r in regions:
            t = Table(title=f"traced region {escape(r.name)} #{r.invocation}", title_justify="left",
                      show_header=False)
            t.add_column("field", no_wrap=True)
            t.add_column("value", overflow="fold")
            t.add_row("records", f"{r.records:,}")
            t.add_row("mix", "  ".join(f"{k} {r.mix[k]:.3f}" for k, _ in MIX_GROUPS))
            t.add_row("threads", str(r.threads))
            t.add_row("time (s)", f"{r.wall_time_s or 0.0:.3f}")
            t.add_row("mode", as_text(r.mode))
            t.add_row("complete", "yes" if r.complete else as_text(f"no ({r.error})"))
            out.print(t)
        for p in written:
            out.print(f"wrote {escape(p)}", highlight=False, soft_wrap=True)
        return
    table = Table(title="traced regions", show_lines=False)
    for col in ("region", "inv", "records", "mem", "ctrl", "int", "fp", "other", "threads", "time (s)", "mode",
                "complete"):
        table.add_column(col, justify="right" if col not in ("region", "mode", "complete") else "left", no_wrap=True)
    for r in regions:
        table.add_row(
            as_text(r.name), str(r.invocation), f"{r.records:,}", *(f"{r.mix[k]:.3f}" for k, _ in MIX_GROUPS),
            str(r.threads), f"{r.wall_time_s or 0.0:.3f}", as_text(r.mode),
            "yes" if r.complete else as_text(f"no ({r.error})"),
        )
    out.print(table)
    for p in written:
        out.print(f"wrote {escape(p)}", highlight=False, soft_wrap=True)


def region_summaries(rows) -> list:
    """The summary sink's rows (``(RegionInfo, op-class counts)``) as :func:`print_region_summary` reads a
    report's regions: for a run that ends before its report is made (an interrupt)."""
    import types

    from features.mix import mix_fractions

    return [types.SimpleNamespace(name=info.name, invocation=info.invocation, records=info.n_records,
                                  mix=mix_fractions(counts), threads=info.n_threads, wall_time_s=info.wall_time_s,
                                  mode=info.mode, complete=info.complete, error=info.error) for info, counts in rows]


@contextlib.contextmanager
def report_if_interrupted(setup: ProfileSetup, json_out: bool = False):
    """On Ctrl-C (KeyboardInterrupt) inside the block: print the regions recorded so far and the files
    written (the region open at the interrupt is among them, marked incomplete), then exit with status 130
    instead of a bare traceback or nothing at all. With ``json_out`` all of it goes to stderr: stdout, which
    carries the JSON document when a run ends, carries nothing when it is interrupted. Either way the trace
    folder the run claimed is released when the block ends (:meth:`ProfileSetup.close`)."""
    try:
        yield
    except KeyboardInterrupt:
        if setup.summary.rows:
            print_region_summary(region_summaries(setup.summary.rows), setup.written(),
                                 out=err_console if json_out else None)
            err_console.print("interrupted: the traces above are what was recorded; the region open at the "
                              "interrupt is marked incomplete", highlight=False, soft_wrap=True)
        else:
            err_console.print("interrupted before any region was recorded", highlight=False)
        raise typer.Exit(130) from None
    finally:
        setup.close()


def finish_traces(setup: ProfileSetup) -> None:
    """At the end of a run: release the trace folder it claimed and, when a trace could not be written
    (``setup.trace_failure``: a full disk, a read-only folder, ...), print one line naming the file and the
    cause and exit with status 2; the run itself went on, and the traces written before stay."""
    from rich.text import Text

    setup.close()
    failure = setup.trace_failure
    if failure is None:
        return
    n = len(setup.written())
    kept = f"the {n} written before it {'is' if n == 1 else 'are'} kept" if n else "none was written before it"
    err_console.print(Text.assemble(("error:", "bold red"), f" {visible(failure)}; the run went on without writing "
                                                            f"more traces, and {kept}"),
                      highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def print_baseline(regions) -> None:
    """``--baseline``: each region's uninstrumented CPU time (what was timed, how many runs, how well they
    agreed) and the tracing slowdown (traced / uninstrumented), from the report's regions."""
    for r in regions:
        t = r.cpu_time_s
        if t:
            traced = r.wall_time_s or 0.0
            console.print(visible(f"baseline {r.label}: uninstrumented {t * 1e3:.4g} ms "
                                  f"({r.cpu_baseline['description']}); traced {traced * 1e3:.4g} ms = "
                                  f"{traced / t:.1f}x slowdown"), highlight=False, markup=False, soft_wrap=True)
        else:
            console.print(visible(f"baseline {r.label}: not measured ({r.cpu_not_measured})"),
                          highlight=False, markup=False, soft_wrap=True)


@dataclasses.dataclass
class NativeRun:
    """What :func:`record_and_report` ran: the decoder (``regions``, ``exit_code``), the sinks, the regions'
    predictions (empty without ``predict``) and the report it printed (its target the program)."""

    decoder: Any
    setup: ProfileSetup
    predictions: list
    report: Any


def record_and_report(program: List[str], *, region: Optional[str] = None, whole: bool = False,
                      trace_dir: Optional[Path] = None, features: bool = False, progress: bool = False,
                      predict: bool = False, model: Optional[str] = None, gpu: str = DEFAULT_GPU, verbose: bool = False,
                      chunk_records: int = 1 << 20, no_region_error: Optional[str] = None,
                      quiet: bool = False, sample=None) -> NativeRun:
    """Run ``program`` under the Valgrind tool, then print the per-region summary, features and prediction.

    The one implementation behind ``portcast record`` and ``portcast profile --native``, whose regions go to
    the sinks of a Python profile run and get their prediction from the same function
    (``portcast.pipeline.stage_predict.predict_regions``), printed as for Python regions.

    Parameters
    ----------
    program : the command (program path and arguments)
    region : record only regions with this name
    whole : record the whole run as one region ``program``
    trace_dir : write each region to ``DIR/<region>.<invocation>.parquet``
    features : compute each region's features while it runs (feature engine)
    progress : show a live record count
    predict : also predict each region (``model``: None for the shipped GPU-time model, ``provisional``, or a
        file; on ``gpu``), with the features
    verbose : with ``predict``, also the model's inputs (or the speedup model's terms)
    chunk_records : records per chunk handed to the sinks
    no_region_error : when given and no region was recorded, raise :class:`UserError` with this message
        (plus the program's exit status); otherwise print a hint
    quiet : print nothing (``--json``: the caller prints the report); the program's own output goes to stderr
    sample : a block rate or sample plan: the sinks see the sampled records (``profiler.sampling.SamplingSink``)

    Returns
    -------
    NativeRun
    """
    from profiler.native.record import record_program

    setup = build_sinks(trace_dir, progress=progress, features=features, predict=predict, model=model, gpu=gpu,
                        sample=sample)
    sinks = setup.sinks
    if setup.sample is not None:
        from profiler.sampling import SamplingSink

        sinks = [SamplingSink(setup.sample, setup.sinks)]
    with report_if_interrupted(setup, json_out=quiet):
        dec = record_program(program, sinks, region=region, whole_program=whole, chunk_records=chunk_records,
                             stdout=2 if quiet else None)
    if not dec.regions:
        if no_region_error is not None:
            status = f" (it exited with status {dec.exit_code})" if dec.exit_code else ""
            raise UserError(no_region_error + status)
        hint = f" named {escape(repr(region))}" if region else ""
        console.print(f"no region{hint} was recorded: mark one with PORTCAST_REGION_START/END "
                      f"(#include \"portcast.h\", -I {_include_dir()}) or use --whole-program", highlight=False)
        script = _script_interpreter(program[0])
        if script:
            console.print(f"{escape(program[0])} is a script run by {escape(script)}: the tool traces that "
                          "interpreter, not the programs the script starts (they run untraced); record the program "
                          "itself", highlight=False)
    preds = []
    if predict:
        from portcast.pipeline.stage_predict import predict_regions
        from predictor import ModelFileError
        from predictor.gputime import GpuTimeModelError

        with user_errors(ModelFileError, GpuTimeModelError, ValueError):
            preds = predict_regions(setup, baseline=False)
    from portcast.pipeline.stage_report import build_report

    report = build_report(setup, preds, target=program[0], exit_code=dec.exit_code)
    if not quiet:
        if report.regions:
            print_region_summary(report.regions, setup.written())
        print_features_and_prediction(report, preds, verbose=verbose)
        if dec.exit_code:
            console.print(f"the program exited with status {dec.exit_code}", highlight=False)
    return NativeRun(dec, setup, preds, report)


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
