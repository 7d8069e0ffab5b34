"""The profile pipeline under the command line and the Python API: source -> sinks -> one result per region, by
stage: :mod:`.stage_prepare` (options -> sinks, model, GPU), :mod:`.stage_run` (running a script or a function
under the tracer; loading traces, streams and datasets), :mod:`.stage_predict` (each region's prediction) and
:mod:`.stage_report` (the :class:`portcast.profile_report.ProfileReport` every output renders). This module is
the Python face of the pipeline: :func:`profile`, :func:`features`, :func:`predict`, :func:`simulate` and
:func:`predict_function` (``portcast.profile`` etc. call them).

    report = portcast.profile(saxpy, (x, y), gpu="a100")   # in Jupyter the report renders inline
    report.regions[0].prediction["kernel_s"], report.write_html("saxpy.html")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from portcast.defaults import DEFAULT_GPU
from portcast.errors import UserError
from portcast.pipeline.stage_predict import RegionPrediction, predict_regions
from portcast.pipeline.stage_prepare import prepare
from portcast.pipeline.stage_report import build_report
from portcast.pipeline.stage_run import features_of_file, is_script, load_streams, run_traced


def profile(target, args: tuple | None = None, *, gpu: str = DEFAULT_GPU, model: Optional[str] = None,
            script_args: tuple = (), regions: Optional[list] = None, mode: str = "auto", baseline: bool = True,
            trace_dir: Optional[Path] = None, baseline_kind: str = "as-written", baseline_rule=None,
            sample="auto"):
    """Profile a function (``target`` callable, called with ``args``) or a script (``target`` a path: its marked
    regions) and return the :class:`~portcast.profile_report.ProfileReport`: per region its summary, features,
    hot lines, thread space and the predicted GPU time on ``gpu`` with its bounds and the model's term
    contributions. In Jupyter the report renders inline; ``.to_dict()``, ``.write_html(path)`` save it.
    ``baseline``: time each function region untraced for the speedup, as written (``baseline_kind``
    ``"as-written"``) or njit-compiled (``"njit"``), repeated by ``baseline_rule``
    (:class:`profiler.repeat_timing.RepeatRule`). An exception in the user's code propagates (the traces written
    so far stay, marked incomplete). A trace under ``trace_dir`` that cannot be written (a full disk) does not
    stop the run: :class:`profiler.tracefile.TraceWriteError`, naming the file and the cause, is raised after it
    (the traces written before stay). ``sample``: ``"auto"`` (sampled when the region is large, sized from its
    uninstrumented run), ``"exact"`` (every record), or a block rate in (0, 1] (docs/sampling.md); with
    ``trace_dir`` the profile is exact (a trace file holds every record)."""
    _check_baseline_options(baseline_kind, baseline_rule)
    if trace_dir is not None:
        if sample not in ("auto", "exact", None):
            raise UserError("trace_dir writes every record of a region: it profiles exactly, not with a sample")
        sample = "exact"
    setup = prepare(trace_dir=Path(trace_dir) if trace_dir is not None else None, model=model, gpu=gpu,
                    sample=sample)
    try:
        name = _run_target(setup.sinks, target, args, script_args=script_args, regions=regions, mode=mode,
                           baseline=baseline, baseline_kind=baseline_kind, baseline_rule=baseline_rule,
                           sample=setup.sample)
    finally:
        setup.close()
    if setup.trace_failure is not None:
        raise setup.trace_failure
    return build_report(setup, predict_regions(setup, baseline=baseline), target=name,
                        no_baseline="not asked for (baseline=False)")


def _check_baseline_options(kind: str, rule) -> None:
    """Refuse a bad ``baseline_kind`` (ValueError) or ``baseline_rule`` (TypeError) before anything runs."""
    from profiler.session import check_baseline_options

    check_baseline_options(kind, rule)


def _run_target(sinks: list, target, args, *, script_args=(), regions=None, mode: str = "auto",
                baseline: bool = False, baseline_kind: str = "as-written", baseline_rule=None, sample=None) -> str:
    """Trace ``target(*args)`` (a callable) or the marked regions of the script ``target`` into ``sinks``;
    returns the target's name."""
    timing = dict(measure_uninstrumented=baseline, baseline_kind=baseline_kind, baseline_rule=baseline_rule,
                  sample=sample)
    if callable(target):
        run_traced(sinks, fn=target, fargs=tuple(args or ()), mode=mode, **timing)
        return getattr(target, "__qualname__", getattr(target, "__name__", repr(target)))
    path = Path(target)
    if not path.is_file():
        raise UserError(f"{target}: no such script")
    run_traced(sinks, script=path, script_args=script_args, mode=mode, regions=regions, **timing)
    return str(path)


def features(target, args: tuple | None = None, *, script_args: tuple = (), regions: Optional[list] = None,
             mode: str = "auto"):
    """The features of each region invocation of a call ``target(*args)`` or of a script's marked regions, as a
    pandas DataFrame (one row per invocation, indexed ``"name #k"``, the columns of docs/features.md); for a
    trace file or a feature table, :func:`features_of_file`."""
    import pandas as pd

    from features import FeatureSink

    if not callable(target) and not is_script(target):
        return features_of_file(target)
    sink = FeatureSink()
    name = _run_target([sink], target, args, script_args=script_args, regions=regions, mode=mode)
    if not sink.results:
        raise UserError(f"{name} traced no region")
    return pd.DataFrame([series.rename(f"{info.name} #{info.invocation}") for info, series in sink.results])


def predict(target, args: tuple | None = None, *, gpu: str = DEFAULT_GPU, model: Optional[str] = None,
            script_args: tuple = (), regions: Optional[list] = None, mode: str = "auto",
            baseline: bool = True, baseline_kind: str = "as-written", baseline_rule=None,
            sample="auto") -> list[RegionPrediction]:
    """The predicted GPU time on ``gpu`` of each region invocation of a call or script: one
    :class:`RegionPrediction` each (``.prediction``: kernel time, speedup against the CPU with its interval and
    ``cpu_baseline``, what was timed; ``.bounds``; ``.contributions``: the model's terms; ``.reason`` when there is
    no prediction). ``model``: None (the shipped GPU-time model) or a model file; ``baseline`` times the region
    uninstrumented for the speedup (``baseline_kind``, ``baseline_rule``, ``sample`` as in :func:`profile`)."""
    _check_baseline_options(baseline_kind, baseline_rule)
    setup = prepare(model=model, gpu=gpu, sample=sample)
    _run_target(setup.sinks, target, args, script_args=script_args, regions=regions, mode=mode, baseline=baseline,
                baseline_kind=baseline_kind, baseline_rule=baseline_rule, sample=setup.sample)
    return predict_regions(setup, baseline=baseline)


def simulate(target, args: tuple | None = None, *, gpu: str = "h100", block_size: int = 256,
             sm_count: Optional[int] = None, core_mhz: Optional[float] = None, mem_mhz: Optional[float] = None,
             script_args: tuple = (), regions: Optional[list] = None, mode: str = "auto") -> dict:
    """Run each region invocation of a call ``target(*args)``, a script's marked regions or a trace file on the
    SIMT timing model of ``gpu`` (a preset name or JSON file; SM count and clocks overridable): a dict
    ``{label: gpu_models.simt.model.SimResult}`` in the order the invocations ended (what
    ``portcast simulate`` prints)."""
    from gpu_models.simt.config import ConfigError, load_config
    from gpu_models.simt.model import simulate as run

    try:
        cfg = load_config(gpu)
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    if callable(target):
        loaded = load_streams(None, block_size, fn=target, fargs=tuple(args or ()), mode=mode)
    else:
        loaded = load_streams(Path(target), block_size, regions=regions, script_args=script_args, mode=mode)
    return {name: run(streams, cfg, sm_count, core_mhz, mem_mhz, name=name) for name, streams in loaded}


def predict_function(fn, args: tuple, *, gpu: str = DEFAULT_GPU, model_path: Path | None = None,
                     measure_cpu: bool = True, mode: str = "auto", baseline_kind: str = "as-written",
                     baseline_rule=None) -> tuple[Any, Any]:
    """Trace ``fn(*args)`` once and predict its GPU kernel time on ``gpu`` (the Python face of
    ``portcast profile --function``, through the same pipeline: :func:`predict`):
    ``(prediction, bounds)``, the bounds being :func:`gpu_models.bounds.bounds` of the same work (None when the
    features lack a count they need). ``measure_cpu``: also time uninstrumented runs for the speedup
    (``baseline_kind``, ``baseline_rule``: :func:`profiler.baseline.measure_uninstrumented`'s ``kind`` and
    ``rule``). ``model_path`` must be a GPU-time model file. Raises ValueError for a region that gets no
    prediction (no parallel thread space: ``portcast.report.no_prediction_reason``)."""
    from portcast.pipeline.stage_prepare import resolve_model

    chosen = resolve_model(None if model_path is None else str(model_path))
    if not chosen.predicts_time:
        raise ValueError(f"{model_path}: not a GPU-time model (portcast gpu-time train); predict_function "
                         "predicts a GPU time")
    preds = predict(fn, args, gpu=gpu, model=chosen, mode=mode, baseline=measure_cpu, baseline_kind=baseline_kind,
                    baseline_rule=baseline_rule)
    rp = preds[-1]
    if rp.prediction is None:
        raise ValueError(f"{rp.label.split(' #')[0]}: no GPU time predicted: {rp.reason}")
    return rp.prediction, rp.bounds
