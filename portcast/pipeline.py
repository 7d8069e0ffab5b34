"""The profile pipeline under the command line and the Python API: source -> sinks -> one result per region.

:func:`prepare` builds the sinks a profile run sends every region's trace to (the op-class counter, the hot
lines, optional trace files, the feature engine, what the GPU-time prediction needs); the caller runs the
user's script or function with them (or the native recorder its program); :func:`predict_regions` turns what
the sinks gathered into each region's GPU-time prediction, its physical bounds and the model's term
contributions through :func:`predict_one_region`, the one prediction every path uses (``--at-size`` calls it
directly); :func:`build_report` gathers all of it into a :class:`portcast.profile_report.ProfileReport` (what
``--json`` prints, ``--report`` writes as HTML and ``portcast.profile()`` returns).

    report = portcast.profile(saxpy, (x, y), gpu="a100")   # in Jupyter the report renders inline
    report.regions[0].prediction["kernel_s"], report.write_html("saxpy.html")
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import linecache
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from portcast.defaults import DEFAULT_GPU
from portcast.errors import UserError

#: op-class groups of the instruction mix a region summary shows (``features.mix`` defines the features)
MIX_GROUPS = (
    ("mem", ("LOAD", "STORE")),
    ("ctrl", ("BRANCH", "JUMP", "CALL", "RET")),
    ("int", ("INT_ALU", "INT_MUL", "INT_DIV", "INT_REM")),
    ("fp", ("FP_ALU", "FP_MUL", "FP_DIV", "FP_SPECIAL", "FP64_ALU", "FP64_MUL", "FP64_DIV", "FP64_SPECIAL")),
    ("other", ("MOVE", "OTHER")),
)
#: source lines a report lists per region, by records
HOT_LINES = 12


def mix_fractions(counts: np.ndarray) -> dict[str, float]:
    """Instruction-mix fractions (:data:`MIX_GROUPS`: mem, ctrl, int, fp, other) of per-op-class counts."""
    from core.trace_schema import Op

    total = int(counts.sum())
    return {name: (sum(int(counts[Op[o]]) for o in ops) / total if total else 0.0) for name, ops in MIX_GROUPS}


class SummarySink:
    """Counts records per operation class for each region invocation (for the summary table)."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []  # (RegionInfo, counts per op class)
        self._counts = None

    def start_region(self, info, static) -> None:
        from core.trace_schema import N_OPS

        self._counts = np.zeros(N_OPS, np.int64)

    def consume(self, chunk) -> None:
        from features.mix import count_ops

        count_ops(chunk, self._counts)

    def end_region(self, info, static) -> None:
        self.rows.append((info, self._counts))
        self._counts = None


class HotLinesSink:
    """Records per source line of each region invocation: ``results`` gets, per region, a list of
    ``{"location", "line", "text", "records", "share"}`` for its :data:`HOT_LINES` busiest lines."""

    def __init__(self, top: int = HOT_LINES) -> None:
        self.top = top
        self.results: list[list[dict]] = []
        self._counts = np.zeros(0, np.int64)

    def start_region(self, info, static) -> None:
        self._counts = np.zeros(0, np.int64)

    def consume(self, chunk) -> None:
        if not len(chunk):
            return
        c = np.bincount(chunk.pc.astype(np.int64))
        if len(c) > len(self._counts):
            c[:len(self._counts)] += self._counts
            self._counts = c
        else:
            self._counts[:len(c)] += c

    def end_region(self, info, static) -> None:
        self.results.append(self.lines(self._counts, static))

    def lines(self, counts: np.ndarray, static) -> list[dict]:
        """The busiest source lines of a region from its records per pc ``counts``."""
        total = int(counts.sum())
        per_line: dict[tuple, int] = {}
        for pc in np.nonzero(counts)[0]:
            e = static.get(int(pc))
            key = (e.file, int(e.line)) if e is not None else (f"pc {int(pc)}", 0)
            per_line[key] = per_line.get(key, 0) + int(counts[pc])
        rows = []
        for (file, line), n in sorted(per_line.items(), key=lambda kv: -kv[1])[:self.top]:
            text = linecache.getline(file, line).strip() if line else ""
            rows.append({"location": f"{file}:{line}" if line else file, "file": file, "line": line, "text": text,
                         "records": n, "share": n / total if total else 0.0})
        return rows


@dataclasses.dataclass
class ProfileSetup:
    """The sinks of one profile run and what the results are read from after it."""

    sinks: list
    summary: SummarySink
    hot: HotLinesSink
    chosen: Optional[tuple]  # (kind, path, model) of resolve_model; None without features
    gpu: str
    psinks: Any = None  # portcast.gpu_prediction.PredictionSinks, for the GPU-time model
    trace_sink: Any = None
    sample: Any = None  # what run_traced samples by: None (exact), "auto" or a profiler.sampling.SamplePlan
    estimator: Any = None  # portcast.sampled.SampleEstimator of a sampled run (the last sink)

    @property
    def features(self):
        """The feature engine's sink, or None."""
        from features import FeatureSink

        return next((s for s in self.sinks if isinstance(s, FeatureSink)), None)

    def written(self) -> list:
        """The trace files written so far."""
        return [p for s in self.sinks for p in getattr(s, "written", [])]

    @property
    def trace_failure(self):
        """The :class:`profiler.tracefile.TraceWriteError` that stopped the traces of this run, or None."""
        return getattr(self.trace_sink, "failure", None)

    def close(self) -> None:
        """Release the trace folder this run claimed (:meth:`profiler.tracefile.TraceDirectorySink.close`)."""
        if self.trace_sink is not None:
            self.trace_sink.close()


def sample_option(sample) -> Any:
    """What ``sample`` (``--sample``, ``sample=``) asks for: None for the exact trace (``None``, ``"exact"``),
    ``"auto"``, or a :class:`profiler.sampling.SamplePlan` (a plan, or a block rate in (0, 1] as a number or
    text); a :class:`UserError` saying what is wrong otherwise."""
    from profiler.sampling import SamplePlan

    if sample is None or sample == "exact":
        return None
    if isinstance(sample, SamplePlan) or sample == "auto":
        return sample
    try:
        rate = float(sample)
    except (TypeError, ValueError):
        raise UserError(f"--sample {sample!r}: give auto, exact, or a block rate in (0, 1] such as 0.01") from None
    if not 0.0 < rate <= 1.0:
        raise UserError(f"--sample {sample!r}: a block rate must be in (0, 1], e.g. 0.01 for 1% of the thread blocks")
    return SamplePlan.at_rate(rate)


def prepare(*, trace_dir: Optional[Path] = None, features: bool = True, model: Optional[str] = None,
            gpu: str = DEFAULT_GPU, replace: bool = False, progress=None,
            notify: Callable[[str], None] | None = None, sample=None) -> ProfileSetup:
    """The sinks of a profile run: op-class summary, hot lines, ``progress`` (a sink, optional), Parquet traces
    under ``trace_dir`` (a folder of an earlier run, or one another run is writing to: this run's go to
    ``run-<k>`` inside it, said through ``notify``, unless ``replace``; a trace that cannot be written stops
    the traces, not the run: ``ProfileSetup.trace_failure``), the feature engine and the GPU-time model's sinks
    (``features``).
    ``model``: None (the shipped GPU-time model), ``"provisional"`` or a model file. Bad model files and GPU
    names raise :class:`UserError` here, before anything runs. ``sample`` (:func:`sample_option`): under a
    sample plan the run's last sink is a :class:`portcast.sampled.SampleEstimator`, which replaces what the
    others gathered from the sampled records by the whole region's estimates."""
    plan = sample_option(sample)
    chosen = resolve_model(model) if features else None
    if features:
        check_gpu(gpu)
    summary, hot = SummarySink(), HotLinesSink()
    sinks: list = [summary, hot]
    if progress is not None:
        sinks.append(progress)
    tsink = None
    if trace_dir is not None:
        from profiler.tracefile import TraceDirectorySink

        tsink = TraceDirectorySink(trace_dir, replace=replace, keep_going=True)
        if tsink.redirected and notify is not None:
            notify(f"another run is writing to {trace_dir}: this run's traces go to {tsink.folder}"
                   if tsink.redirect_reason == "busy" else
                   f"{trace_dir} holds traces of an earlier run: this run's go to {tsink.folder} "
                   "(--force replaces them instead)")
        sinks.append(tsink)
    psinks = None
    if features:
        from features import FeatureSink

        sinks.append(FeatureSink())
        if chosen[0] == "gputime":
            from portcast.gpu_prediction import prediction_sinks

            psinks = prediction_sinks(gpu, simulate=chosen[2].needs_simt)
            sinks.extend(psinks.sinks)
    estimator = None
    if plan is not None:
        from portcast.sampled import SampleEstimator

        fsink = next((s for s in sinks if type(s).__name__ == "FeatureSink"), None)
        estimator = SampleEstimator(fsink, psinks.work if psinks else None, psinks.bytes if psinks else None,
                                    summary, hot, replicate=fsink is not None)
        sinks.append(estimator)
    return ProfileSetup(sinks, summary, hot, chosen, gpu, psinks, tsink, plan, estimator)


def resolve_model(model: Optional[str]):
    """``(kind, path, model)`` for ``--model``: the shipped GPU-time model (None), the provisional speedup model
    trained on simulated GPU times (``provisional``), or a file of either kind (told apart by its format). The
    provisional model is used only when asked for: a missing shipped model is a :class:`UserError`."""
    import predictor.gputime as gputime_module
    import predictor.model_io as model_io
    from core.jsonfile import JsonFileError, read_json
    from predictor import ModelFileError, load_model
    from predictor.gputime import FORMAT, GpuTimeModelError, load_gputime_model

    try:
        if model is None:
            path = gputime_module.DEFAULT_GPUTIME_MODEL
            if not path.is_file():  # never the older model in its place: that one is asked for by name
                raise UserError(f"the shipped GPU-time model {path} is missing from this installation; give a "
                                "model file with --model (portcast gpu-time train), or --model provisional for "
                                "the older speedup model")
            return "gputime", path, load_gputime_model(path)
        if model == "provisional":
            if not model_io.DEFAULT_MODEL_FILE.is_file():
                raise UserError("--model provisional: the provisional speedup model is not shipped with this checkout")
            return "xapp", model_io.DEFAULT_MODEL_FILE, load_model(model_io.DEFAULT_MODEL_FILE)
        path = Path(model)
        if not path.is_file():
            raise UserError(f"--model {model}: no such file (give a model file, or 'provisional')")
        doc = read_json(path, what="Portcast model file")
        fmt = doc.get("format") if isinstance(doc, dict) else None
        if fmt == FORMAT:
            return "gputime", path, load_gputime_model(path)
        return "xapp", path, load_model(path)
    except (JsonFileError, ModelFileError, GpuTimeModelError) as exc:
        raise UserError(str(exc)) from None


def check_gpu(gpu: str) -> None:
    """A :class:`UserError` listing the described GPUs when ``gpu`` is not one of them."""
    from gpu_models.simt.config import ConfigError, load_config, preset_names

    try:
        load_config(gpu)
    except ConfigError as exc:
        if gpu.endswith(".json") or Path(gpu).exists():  # a description file: what is wrong with it, and where
            raise UserError(f"--gpu {gpu}: {exc}" if not str(exc).startswith(gpu) else str(exc)) from None
        raise UserError(f"--gpu {gpu!r}: not a described GPU; choose one of {', '.join(preset_names())}") from None
    except (FileNotFoundError, ValueError):
        raise UserError(f"--gpu {gpu!r}: not a described GPU; choose one of {', '.join(preset_names())}") from None


def load_module(spec: str):
    """A module from a file path (``examples/saxpy.py``) or a dotted name; :class:`UserError` when missing."""
    if spec.endswith(".py") or os.sep in spec:
        path = Path(spec)
        if not path.is_file():
            raise UserError(f"{spec}: no such module file")
        name = path.stem
        sys.path.insert(0, str(path.parent.resolve()))
        mspec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(mspec)
        sys.modules[name] = module
        mspec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(spec)
    except ImportError as exc:
        raise UserError(f"cannot import module {spec!r}: {exc}") from None


def resolve_function(target: str, args_expr: Optional[str]):
    """``(function, args)`` of ``MODULE:QUALNAME``: ``args_expr`` evaluated in the module, else the module's
    ``portcast_inputs()``."""
    if ":" not in target:
        raise UserError(f"--function needs MODULE:QUALNAME (e.g. examples/saxpy.py:saxpy), got {target!r}")
    mod_spec, qual = target.rsplit(":", 1)
    module = load_module(mod_spec)
    obj = module
    for part in qual.split("."):
        if not hasattr(obj, part):
            raise UserError(f"{mod_spec} has no attribute {qual!r}")
        obj = getattr(obj, part)
    if args_expr is not None:
        try:
            args = eval(args_expr, dict(vars(module)))  # the user's own expression, evaluated in their module
        except Exception as exc:
            raise UserError(f"--args {args_expr!r}: {type(exc).__name__}: {exc}") from None
    elif hasattr(module, "portcast_inputs"):
        args = module.portcast_inputs()
    else:
        raise UserError(f"{mod_spec} defines no portcast_inputs(); give the arguments with --args \"(x, y)\"")
    if not isinstance(args, tuple):
        args = (args,)
    return obj, args


def run_traced(sinks: list, *, script: Optional[Path] = None, script_args=(), fn=None, fargs: tuple = (),
               mode: str = "auto", regions=None, chunk_records: int = 1 << 20, measure_uninstrumented: bool = False,
               baseline_kind: str = "as-written", baseline_rule=None, sample=None):
    """Run a script's marked regions (``script`` with ``script_args``; only ``regions`` when given) or one call
    ``fn(*fargs)`` under the tracer, every region invocation sent to ``sinks``; with ``measure_uninstrumented``,
    each function region is first timed untraced (``baseline_kind``, ``baseline_rule``:
    :func:`profiler.baseline.measure_uninstrumented`). Exceptions of the user's code propagate (the regions
    open at that moment end incomplete). ``sample``: None, ``"auto"`` or a sample plan
    (:func:`sample_option`; :func:`profiler.session.trace_function`)."""
    from profiler.session import profile_script, trace_function

    timing = dict(measure_uninstrumented=measure_uninstrumented, baseline_kind=baseline_kind,
                  baseline_rule=baseline_rule, sample=sample)
    if fn is not None:
        return trace_function(fn, fargs, sinks=sinks, mode=mode, chunk_records=chunk_records, **timing)
    return profile_script(script, list(script_args or []), sinks=sinks, mode=mode, regions=regions or None,
                          chunk_records=chunk_records, **timing)


def is_script(source) -> bool:
    """Whether a SOURCE argument names a Python script (``.py``) rather than a trace or dataset file."""
    return str(source).lower().endswith(".py")


def marked_names(script: Path) -> list[str]:
    """Region names the script marks with a constant string (``region("n")``, ``region_start("n")``), for
    error messages; best effort (a name computed at run time is not seen)."""
    import ast

    try:
        tree = ast.parse(Path(script).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if fname in ("region", "region_start") and node.args[0].value not in names:
                names.append(node.args[0].value)
    return names


def region_labels(infos) -> list[str]:
    """Kernel names of traced region invocations: the region name, or ``name#k`` for a region invoked more
    than once."""
    from collections import Counter

    count = Counter(i.name for i in infos)
    return [i.name if count[i.name] == 1 else f"{i.name}#{i.invocation}" for i in infos]


def load_streams(source: Path | None = None, block_size: int = 256, *, regions=None, function: str | None = None,
                 args: str | None = None, script_args=(), mode: str = "auto", trace_dir: Path | None = None,
                 status=None, fn=None, fargs: tuple = ()) -> list:
    """The one loader of ``portcast simulate``, ``scale`` and ``dvfs``: a trace file, a script or a function ->
    the warp streams of each region invocation.

    * a trace file (docs/trace-format.md): its one region (:func:`gpu_models.simt.trace_input.load_region`);
    * a Python script (``.py``): run with ``script_args`` under the profiler (as ``portcast profile SCRIPT --
      ARGS``); every invocation of its marked regions (only ``regions`` when given) is traced, and each one's
      streams are built when it ends (:class:`gpu_models.simt.trace_input.StreamsSink`: one region's records in
      memory at a time, no trace file);
    * ``function="MODULE:QUALNAME"`` (with ``args``, a Python expression, or the module's
      ``portcast_inputs()``): that one call is traced, with the resolver of ``portcast profile --function``.

    Parameters
    ----------
    source : Path, optional
        Trace file or script; None with ``function``.
    block_size : int
        Threads per block.
    regions : list of str, optional
        For a script: trace only these region names.
    function, args : str, optional
        ``--function`` / ``--args`` as in ``portcast profile``.
    script_args : sequence of str
        ``sys.argv[1:]`` for the script.
    mode : str
        Tracing mode (auto | interpreted | compiled).
    trace_dir : Path, optional
        For a script or function: also write each region invocation's trace file here (as ``portcast profile
        -o``); simulating such a file gives exactly the numbers of the region it came from (a later run of the
        script allocates its arrays elsewhere, so its addresses, and with them cache behaviour, can differ).
    status : callable, optional
        ``status(text)`` returns a context manager shown while the work runs (the command's status line).
    fn, fargs : callable and tuple, optional
        Instead of ``source`` or ``function``: trace the call ``fn(*fargs)`` (the Python API's way).

    Returns
    -------
    list of (str, WarpStreams)
        Kernel name (the region name; ``name#k`` for invocation ``k`` of a region invoked more than once) and
        streams, in the order the invocations ended. Never empty: no region traced is a :class:`UserError`.
    """
    import contextlib

    from gpu_models.simt.trace_input import StreamsSink, load_region
    from profiler.instrument import SourceUnavailable, UnsupportedConstruct

    status = status or (lambda text: contextlib.nullcontext())
    if fn is not None:
        if source is not None or function is not None:
            raise UserError("give a callable, a trace/SCRIPT or --function, not several")
        function = getattr(fn, "__qualname__", repr(fn))
    elif function is not None:
        if source is not None:
            raise UserError(f"give either a trace/SCRIPT ({source}) or --function, not both")
        if regions:
            raise UserError("--region selects regions of a SCRIPT; a --function call is one region")
    elif source is None:
        raise UserError("give a trace file, a SCRIPT.py with marked regions, or --function MODULE:QUALNAME")
    elif not is_script(source):
        if regions or script_args or args is not None or trace_dir is not None:
            raise UserError(f"{source}: --region, --args, --trace-dir and script arguments apply to a SCRIPT.py, "
                            "not a trace file")
        with status(f"building warp streams of {source}"):
            return [load_region(Path(source), block_size)]
    elif not Path(source).is_file():
        raise UserError(f"{source}: no such script")
    elif args is not None:
        raise UserError("--args gives the arguments of --function, not of a SCRIPT (put those after --)")
    from profiler.tracefile import TraceDirectorySink, TraceWriteError

    sink = StreamsSink(block_size)
    sinks: list = [sink]
    if trace_dir is not None:
        sinks.append(TraceDirectorySink(trace_dir, replace=False))
    what = (f"{function}()" if fn is not None else f"--function {function}" if function is not None
            else str(source))
    with status(f"tracing {what} and building warp streams"):
        try:
            if fn is None and function is not None:
                fn, fargs = resolve_function(function, args)
            run_traced(sinks, script=Path(source) if source is not None else None, script_args=script_args,
                       fn=fn, fargs=fargs, mode=mode, regions=regions)
        except (UserError, UnsupportedConstruct, SourceUnavailable, TraceWriteError):
            raise  # a trace that cannot be written is Portcast's failure, not the user's code's
        except Exception as exc:  # the user's code failed: name it in one line
            where = f" in region {sink.incomplete[-1].name!r}" if sink.incomplete else ""
            raise UserError(f"{what} raised {type(exc).__name__}{where}: {exc}") from None
    if not sink.regions:
        if regions:
            marked = marked_names(Path(source))
            known = f" (the script marks: {', '.join(marked)})" if marked else ""
            raise UserError(f"{source} executed no marked region named {', '.join(map(repr, regions))}{known}")
        raise UserError(f"{source} executed no marked region (mark one with @portcast.region(\"name\"), "
                        "with portcast.region(\"name\"): ..., or portcast.region_start/region_end)")
    return list(zip(region_labels([i for i, _ in sink.regions]), [s for _, s in sink.regions]))


def trace_dataset(trace: Path, gpu: str = "h100", sweep: str | None = None, block_size: int = 256,
                  name: str | None = None, regions=None, *, status=None, run_sweep=None):
    """A region's trace (or a script's marked regions) -> its scaling-surface dataset: what
    ``portcast simulate TRACE --sweep SWEEP --out D`` writes; ``portcast scale`` calls it for a DATA argument
    that is a trace file or a script, so that a trace and its dataset give the same results.

    Parameters
    ----------
    trace : Path
        Trace file (docs/trace-format.md) or a Python script with marked regions (run without arguments).
    gpu : str
        GPU preset or description file.
    sweep : str, optional
        Grid text for :meth:`gpu_models.simt.sweep.SweepGrid.parse`; default: the preset's grid.
    block_size : int
        Threads per block.
    name : str, optional
        Kernel name for the rows of a single region (default: the region name).
    regions : list of str, optional
        For a script: only these regions.
    status : callable, optional
        As in :func:`load_streams`.
    run_sweep : callable, optional
        ``run_sweep(streams, cfg, grid, name)`` -> ScalingDataset (default: :func:`gpu_models.simt.sweep.sweep`
        without progress; the command passes one with a progress bar).

    Returns
    -------
    ScalingDataset
        One kernel per region invocation.
    """
    from gpu_models.simt.config import load_config
    from gpu_models.simt.sweep import SweepGrid

    if run_sweep is None:
        from gpu_models.simt.sweep import sweep as plain

        def run_sweep(streams, cfg, grid, name):
            return plain(streams, cfg, grid, kernel=name)

    cfg = load_config(gpu)
    grid = SweepGrid.parse(sweep or "default", cfg)
    loaded = load_streams(trace, block_size, regions=regions, status=status)
    if name is not None and len(loaded) == 1:
        loaded = [(name, loaded[0][1])]
    return concat_datasets([run_sweep(streams, cfg, grid, n) for n, streams in loaded])


def load_scaling_data(data, gpu: str = "h100", sweep: str | None = None, block_size: int = 256, regions=None,
                      *, status=None, run_sweep=None):
    """One or more DATA arguments -> one dataset.

    Each item is a dataset file, ``titanx``, ``synthetic`` or a region's trace file; a trace is swept on the
    SIMT timing model (``--gpu``, ``--sweep``, ``--block-size``), exactly as ``portcast simulate TRACE --sweep``
    does. Several items are combined into one dataset (same counter columns and configuration grid).
    ``status`` and ``run_sweep``: as for :func:`trace_dataset` (the command's status line and progress bar).
    """
    import pandas as pd

    from gpu_models.scaling.dataset import ScalingDataset, load_titanx, read_dataset
    from gpu_models.scaling.generator import generate
    from profiler.tracefile import is_trace_file

    items = [data] if isinstance(data, str) else list(data)
    if not items:
        raise UserError("give at least one DATA argument (dataset file, trace file, 'titanx' or 'synthetic')")
    parts = []
    for item in items:
        if item == "titanx":
            ds = load_titanx()
        elif item == "synthetic":
            ds = generate()
        elif is_script(item) or is_trace_file(item, strict=True):
            # a region's trace, or a script's marked regions: run the timing model over the grid
            ds = trace_dataset(Path(item), gpu, sweep, block_size, None, regions if is_script(item) else None,
                               status=status, run_sweep=run_sweep)
        else:
            ds = read_dataset(item)
        parts.append((item, ds))
    if len(parts) == 1:
        return parts[0][1]
    frames, seen = [], set()
    cols0 = parts[0][1].counter_columns
    for item, ds in parts:
        if ds.counter_columns != cols0:
            raise UserError(f"{item}: counter columns {ds.counter_columns} differ from those of {parts[0][0]} "
                            f"({cols0}); only data with the same counters can be combined")
        f = ds.frame.copy()
        clash = sorted(set(ds.kernels) & seen)
        if (
            clash and (is_script(item) or is_trace_file(item)) and len(ds.kernels) == 1
        ):  # two traces of a region: name by file
            f["kernel"] = f"{ds.kernels[0]}@{Path(item).stem}"
            clash = sorted(set(f["kernel"]) & seen)
        if clash:
            raise UserError(f"{item}: kernel(s) {', '.join(clash)} already come from an earlier DATA argument")
        seen.update(f["kernel"])
        frames.append(f)
    ds = ScalingDataset(pd.concat(frames, ignore_index=True), source=" + ".join(i for i, _ in parts))
    f = ds.frame
    per_kernel = f.groupby("kernel").size()
    full = ds.grid().n_configs
    short = per_kernel[per_kernel != full]
    if len(short):
        k = short.index[0]
        raise UserError(f"kernel {k!r} has {int(short.iloc[0])} of the {full} configurations of the combined grid; "
                        "combine data swept over the same grid")
    return ds


def load_counter_records(counters: Path, base_mhz: Optional[float], gpu: str = "gtx480", block_size: int = 256,
                         regions=None, *, status=None):
    """Counter records from a counter file, or from a region's trace through the SIMT timing model.

    A trace's (or a script's regions', one record each) streams are built by the loader ``portcast simulate``
    uses (:func:`load_streams`) and run once at ``base_mhz`` (default: the GPU's clock); the record is the
    one ``portcast simulate TRACE --counters-out`` writes. ``status(text)``: a context manager shown while
    each region is simulated (the command's status line).
    """
    import contextlib

    from gpu_models.dvfs.counter_record import load_counters
    from profiler.tracefile import is_trace_file

    if is_script(counters) or is_trace_file(counters, strict=True):
        # a region's trace, or a script whose marked regions are traced: run the SIMT timing model for the counters
        from gpu_models.simt.config import load_config
        from gpu_models.simt.model import simulate

        cfg = load_config(gpu)
        status = status or (lambda text: contextlib.nullcontext())
        recs = []
        for name, streams in load_streams(counters, block_size, regions=regions if is_script(counters) else None,
                                          status=status):
            with status(f"simulating {name} on {cfg.name}"):
                recs.append(simulate(streams, cfg, core_mhz=base_mhz, crisp=True, name=name).crisp)
        return recs
    recs = load_counters(counters, default_base_mhz=base_mhz)
    if base_mhz is not None:
        for i, r in enumerate(recs):
            if abs(r.base_mhz - base_mhz) > 1e-9 * base_mhz:
                raise UserError(f"{counters} record {i}: base_mhz {r.base_mhz:g} differs from --base-mhz {base_mhz:g}")
    return recs


def concat_datasets(datasets):
    """Several regions' scaling datasets (same grid and counters) -> one."""
    import pandas as pd

    from gpu_models.scaling.dataset import ScalingDataset

    if len(datasets) == 1:
        return datasets[0]
    return ScalingDataset(pd.concat([d.frame for d in datasets], ignore_index=True), source=datasets[0].source)


@dataclasses.dataclass
class RegionPrediction:
    """One region's prediction (or why there is none) and what explains it: what :func:`predict_one_region`
    returns, the one thing the terminal, the JSON and HTML report and the Python API read a region's GPU time,
    speedup, bounds and target from.

    With the GPU-time model, ``prediction`` holds the kernel time on ``gpu`` and the speedup against the CPU
    time, ``bounds`` the physical lower bounds of the same work counts, ``contributions`` the model's terms.
    With an XAPP speedup model (``--model provisional`` or a file of that format; ``model_kind`` ``xapp``),
    ``speedup_model`` holds its predicted speedup instead (no GPU time, no bounds), and ``model_label`` names
    it on every line printed for it."""

    index: int
    label: str
    prediction: Any = None  # portcast.gpu_prediction.GpuPrediction
    bounds: Any = None  # gpu_models.bounds.Bounds
    contributions: Any = None  # pandas DataFrame of GpuTimeModel.contributions, with training ranges
    model: Any = None
    reason: Optional[str] = None  # why no time was predicted
    notes: list = dataclasses.field(default_factory=list)  # said before the prediction
    gpu: str = ""  # the target GPU's preset name ("p100"); the XAPP model's own preset for model_kind xapp
    gpu_label: str = ""  # the target as every output names it: "NVIDIA Tesla P100 PCIe 16 GB (p100, Pascal)"
    model_file: str = ""
    model_kind: str = "gputime"  # or "xapp"
    model_label: str = ""  # xapp: what every printed line starts with ("provisional model (simulated H100)")
    speedup_model: Optional[dict] = None  # xapp: predicted_speedup, model_file, label, provisional line, terms
    cpu_how: str = ""  # how the CPU time was measured (njit, python)
    cpu_why: str = ""  # why there is no CPU time, when there is none
    #: a sampled region's rate, counts and 95% intervals (:func:`portcast.sampled.sample_summary`); None: exact
    sample: Optional[dict] = None


#: said for a region traced by the native recorder (``portcast profile --native``): what its trace lacks
NATIVE_NOTE = ("traced natively: the trace has no source-level thread-space analysis, so the threads are the "
               "region_thread() iterations, unchecked for dependences between them (ts_checked = 0), and the "
               "parallel loop's own control records (its increment and branch) count as thread work, which the "
               "Python tracer leaves out; the work counts, bytes, features and SIMT sample are the native "
               "trace's own")
#: why a native region has no CPU time
NATIVE_CPU_WHY = "a native region runs only under Valgrind here; its uninstrumented time is not measured"


def target_label(chosen, gpu: str) -> tuple[str, str]:
    """``(preset, label)`` of the target a model predicts for: the GPU-time model's ``gpu`` (its description's
    name, preset and generation, as :func:`portcast.gpu_prediction.describe` prints it), or an XAPP model's own
    (the GPU its training times came from, e.g. ``provisional model (simulated H100)``)."""
    kind, path, model = chosen
    if kind == "gputime":
        from gpu_models.simt.config import load_config

        cfg = load_config(gpu)
        name = cfg.description.split(" (")[0] if cfg.description else gpu
        return gpu, f"{name} ({gpu}, {cfg.generation or 'unknown'})"
    meta = getattr(model, "metadata_", None) or {}
    preset = str(meta.get("gpu_preset") or "")
    return preset, _xapp_label(path, model)


def _xapp_label(path, model) -> str:
    """What every line printed for an XAPP speedup model's prediction starts with."""
    from predictor.model_io import is_provisional

    meta = getattr(model, "metadata_", None) or {}
    if is_provisional(model):
        preset = meta.get("gpu_preset")
        simulated = str(meta.get("gpu_times") or "").startswith("simulated")
        what = (f"simulated {str(preset).upper()}" if preset and simulated else
                "simulated GPU times" if simulated else str(meta.get("gpu_times") or "not GPU measurements"))
        return f"provisional model ({what})"
    platform = meta.get("platform")
    return f"speedup model {Path(str(path)).name}" + (f" ({platform})" if platform else "")


def predict_one_region(chosen, gpu: str, series, *, work: dict | None = None, bytes_rw: dict | None = None,
                       simulated_s: float = float("nan"), cpu_s: Optional[float] = None, complete: bool = True,
                       index: int = 0, label: str = "", notes=(), cpu_how: str = "",
                       cpu_why: str = "", cpu_baseline=None, cpu_numpy: bool = False,
                       cpu_at: str = "") -> RegionPrediction:
    """The one prediction of a region, for every path (``portcast profile`` of a script or ``--function``,
    ``--native``, ``--at-size``, ``portcast.profile``/``predict``/``api.predict_gpu_time`` and the report).

    ``chosen`` is :func:`resolve_model`'s ``(kind, path, model)``. With the GPU-time model: the kernel time on
    preset ``gpu`` from the region's ``work`` (``WorkSink``), features ``series``, ``bytes_rw`` (``BytesSink``)
    and ``simulated_s`` (``SimtSink``; NaN when there is none: a model that needs it then gives a ``reason``)
    by :func:`portcast.gpu_prediction.predict_region`, the bounds of the same counts by
    :func:`portcast.gpu_prediction.region_bounds`, the model's term contributions, and the speedup against
    ``cpu_s`` (None: ``cpu_why`` says why; ``cpu_baseline``, the :class:`profiler.baseline.Baseline` of the
    timed runs, gives the speedup its interval and says what was timed, ``cpu_numpy`` whether the region ran
    NumPy, ``cpu_at`` at what size). With an XAPP model (``--model provisional``): its predicted speedup
    (``speedup_model``), labelled. A region that did not complete, or that
    :func:`portcast.report.no_prediction_reason` refuses, gets a ``reason`` instead."""
    from portcast.report import no_prediction_reason

    kind, path, model = chosen
    preset, where = target_label(chosen, gpu)
    rp = RegionPrediction(index, label, notes=list(notes), gpu=preset, gpu_label=where,
                          model_file=str(path) if path else "", model_kind=kind, cpu_how=cpu_how,
                          cpu_why=cpu_why, model=model)
    if kind == "xapp":
        rp.model_label = where
    if not complete:
        rp.reason = "the region did not complete"
        return rp
    reason = no_prediction_reason(series)
    if reason is not None:
        rp.reason = reason
        return rp
    if kind == "xapp":
        return _predict_speedup(rp, path, model, series)
    if work is None or bytes_rw is None:
        rp.reason = "the region's work counts were not gathered (a run without the prediction's sinks)"
        return rp
    from portcast.gpu_prediction import predict_region, region_bounds

    use, use_path = model, path
    if model.needs_simt and not simulated_s == simulated_s:
        rp.reason = (f"the model {path} needs the SIMT model's estimate, which this region does not have (too "
                     "large for its sample, or a size that was not traced); the shipped model needs none")
        return rp
    p = predict_region(use, gpu, work, series, bytes_rw, simulated_s, cpu_s=cpu_s, model_file=str(use_path))
    if cpu_baseline is not None:
        p.set_cpu(cpu_baseline, cpu_numpy, at=cpu_at)
    rp.prediction, rp.model, rp.model_file = p, use, str(use_path)
    rp.bounds = region_bounds(p, series)
    rp.contributions = model_contributions(use, p)
    return rp


def _predict_speedup(rp: RegionPrediction, path, model, series) -> RegionPrediction:
    """An XAPP speedup model's prediction of the region (:func:`predictor.explain_prediction`)."""
    from portcast.report import provisional_line
    from predictor import explain_prediction

    missing = [f for f in model.subset_ if f not in series.index]
    if missing:
        rp.reason = f"the model needs feature(s) {', '.join(missing)}, which were not computed"
        return rp
    expl = explain_prediction(model, series[list(model.subset_)].astype(float).to_dict())
    meta = model.metadata_ or {}
    rp.speedup_model = {"predicted_speedup": float(expl.attrs["prediction"]), "model_file": str(path),
                        "label": rp.model_label, "platform": meta.get("platform"),
                        "provisional": provisional_line(model), "explanation": expl}
    return rp


def _cpu_why(info, baseline: bool) -> str:
    """Why a region has no CPU time (empty when it has one)."""
    from profiler.baseline import why_not_measured

    if info.uninstrumented_time_s:
        return ""
    if info.mode == "native":
        return NATIVE_CPU_WHY
    return why_not_measured(info, "not measured" if baseline else "--no-baseline")


def predict_regions(setup: ProfileSetup, *, baseline: bool = True) -> list[RegionPrediction]:
    """Each featured region's prediction (:func:`predict_one_region`) from what ``setup``'s sinks gathered,
    with the chosen model on ``setup.gpu``: the Python tracer's regions and the native recorder's alike (a
    native region's notes say what its trace lacks)."""
    from profiler.baseline import Baseline, uses_numpy
    from profiler.sampling import AUTO_MIN_RECORDS

    fsink = setup.features
    if fsink is None or setup.chosen is None:
        return []
    psinks = setup.psinks
    out = []
    samples = setup.estimator.samples if setup.estimator is not None else []
    for i, (info, series) in enumerate(fsink.results):
        have = psinks is not None and i < len(psinks.work.results)
        sim = psinks.simt.results[i] if have and psinks.simt is not None else float("nan")
        out.append(predict_one_region(
            setup.chosen, setup.gpu, series, work=psinks.work.results[i] if have else None,
            bytes_rw=psinks.bytes.results[i] if have else None, simulated_s=sim,
            cpu_s=info.uninstrumented_time_s or None, complete=info.complete, index=i,
            label=f"{info.name} #{info.invocation}", notes=[NATIVE_NOTE] if info.mode == "native" else [],
            cpu_how=str(info.extra.get("uninstrumented_mode", "")), cpu_why=_cpu_why(info, baseline),
            cpu_baseline=Baseline.from_info(info), cpu_numpy=uses_numpy(info)))
        why = str(info.extra.get("sample_auto", ""))
        if why.startswith("exact: ") and not why.endswith("small enough") and info.n_records > AUTO_MIN_RECORDS:
            out[-1].notes.append(f"every one of its {info.n_records:,} records was analysed ({why[7:]}); "
                                 "--sample RATE (e.g. 0.01) profiles a region this large in seconds")
        sample = samples[i] if i < len(samples) else None
        if sample is not None:
            from portcast.sampled import kept_nothing, sample_summary

            out[-1].sample = sample_summary(out[-1], sample, setup.chosen, setup.gpu, series)
            why = kept_nothing(sample)
            if why:  # the estimate would be the host code's alone
                out[-1].prediction = out[-1].bounds = out[-1].contributions = out[-1].speedup_model = None
                out[-1].reason = why
    return out


def model_contributions(model, p):
    """The model's term contributions to the log time of prediction ``p`` with each input's training range
    (None for a family without them)."""
    import pandas as pd

    if model.family not in ("gbm", "gbm-residual", "bounded"):
        return None
    c = model.contributions(pd.DataFrame([p.inputs]))
    c["training_min"] = [model.training_ranges.get(k, [np.nan, np.nan])[0] for k in c["column"]]
    c["training_max"] = [model.training_ranges.get(k, [np.nan, np.nan])[1] for k in c["column"]]
    return c


def build_report(setup: ProfileSetup, predictions: list[RegionPrediction], *, target: str,
                 exit_code: int = 0, error: BaseException | None = None, no_baseline: str = "not asked for"):
    """The :class:`~portcast.profile_report.ProfileReport` of a finished run (``no_baseline``: why regions that
    were not timed uninstrumented were not, when no other reason is known, e.g. ``--no-baseline``)."""
    from portcast.profile_report import ProfileReport, region_report

    fsink = setup.features
    feats = {id(info): k for k, (info, _) in enumerate(fsink.results)} if fsink is not None else {}
    by_index = {p.index: p for p in predictions}
    regions = []
    written = [str(p) for p in setup.written()]
    for k, (info, counts) in enumerate(setup.summary.rows):
        fi = feats.get(id(info))
        series = fsink.results[fi][1] if fi is not None else None
        regions.append(region_report(
            info, counts, hot=setup.hot.results[k] if k < len(setup.hot.results) else [],
            series=series, explanation=fsink.explanations[fi] if fi is not None else None,
            thread_space=fsink.thread_spaces[fi] if fi is not None else None,
            pred=by_index.get(fi) if fi is not None else None,
            trace_files=[w for w in written if _trace_of(w, info)], no_baseline=no_baseline))
    kind, path, model = setup.chosen or (None, None, None)
    meta = getattr(model, "metadata", None) or getattr(model, "metadata_", None) or {}
    gpu, label = target_label(setup.chosen, setup.gpu) if setup.chosen else (None, None)
    return ProfileReport(target=target, gpu=gpu, gpu_label=label,
                         model_file=str(path) if path else None, model_kind=kind,
                         trained_on=str(meta.get("trained_on", "")) or None, exit_code=exit_code,
                         error=None if error is None else f"{type(error).__name__}: {error}", regions=regions)


def _trace_of(path: str, info) -> bool:
    """Whether a written trace file belongs to region invocation ``info``."""
    from profiler.tracefile import region_file_name

    return Path(path).name == region_file_name(info)


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


def features_of_file(path):
    """The features of ``path``: a feature table (CSV, JSON or Parquet, read by :mod:`features.table`), or a
    Portcast trace file, whose features are computed first (one row)."""
    from pathlib import Path

    from features import compute_features
    from features.table import read_feature_table
    from profiler.tracefile import is_trace_file

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if is_trace_file(path, strict=True):
        return compute_features(path).to_frame().T
    return read_feature_table(path)


def at_size_ladder(make, at_size: int, sizes: Optional[list] = None) -> list:
    """The small sizes ``--at-size`` traces: ``sizes`` when given, else :func:`portcast.at_size.default_sizes`
    below ``at_size`` (starting from the default size of ``make``'s first parameter, when it has one)."""
    import inspect

    from portcast.at_size import default_sizes

    if sizes:
        return [int(n) for n in sizes]
    first = next(iter(inspect.signature(make).parameters.values()))
    traced = first.default if isinstance(first.default, int) else None
    return list(default_sizes(at_size, traced))


@dataclasses.dataclass
class AtSizePrediction:
    """What :func:`predict_at_size` found: the sizes traced, the work extrapolated to the size and the
    region's prediction there (:func:`predict_one_region`, with the model without the SIMT input)."""

    ladder: list
    extrapolation: Any  # portcast.at_size.Extrapolation
    region: RegionPrediction
    cpu_baseline: Any = None  # profiler.baseline.Baseline of the runs at the size, or None


def predict_at_size(fn, make, at_size: int, ladder: list, *, chosen, gpu: str, mode: str = "auto",
                    baseline: bool = True, label: str = "", baseline_kind: str = "as-written",
                    baseline_rule=None) -> AtSizePrediction:
    """Trace ``fn(*make(n))`` at each size of ``ladder``, fit every count, extrapolate to ``at_size`` and
    predict there with :func:`predict_one_region` and the GPU-time model of ``chosen`` (:func:`resolve_model`;
    one that needs the SIMT input is refused: the size itself is not traced); with ``baseline``, the CPU time is
    measured at ``at_size`` itself (``baseline_kind``, ``baseline_rule`` as in :func:`profile`)."""
    from portcast.at_size import extrapolate
    from portcast.gpu_prediction import BytesSink
    from predictor.gputime import WORK_KEYS
    from profiler.baseline import measure_uninstrumented, uses_numpy

    kind, path, model = chosen
    notes = []
    if model.needs_simt:
        raise UserError(f"--at-size needs a GPU-time model without the SIMT input ({path} needs it: a size that is "
                        "not traced has no SIMT estimate)")
    at = extrapolate(fn, make, ladder, at_size, mode=mode, extra_sinks=lambda: [BytesSink()])
    cpu, why, b = None, "--no-baseline", None
    if baseline:
        inputs = make(at_size)
        b = measure_uninstrumented(fn, inputs if isinstance(inputs, tuple) else (inputs,), kind=baseline_kind,
                                   rule=baseline_rule)
        cpu, why = b.seconds, (f"it raised {b.error}" if b.error else "")
    work = {k: float(v) for k, v in at.counts.items() if k not in ("read_bytes", "written_bytes")}
    # the distinct sectors move with where each traced size's arrays start (a sector per array), which no
    # polynomial fits: they are the distinct bytes at the size times the largest traced size's sectors per byte
    # (and the per-launch sectors per launch per sector of the region)
    last = at.traced[-1]
    if all(k in last and k in work for k in ("sector_bytes", "launch_sector_bytes", "unique_bytes", "launches")):
        if last["unique_bytes"] > 0 and last["sector_bytes"] > 0:
            work["sector_bytes"] = work["unique_bytes"] * last["sector_bytes"] / last["unique_bytes"]
            work["launch_sector_bytes"] = (work["sector_bytes"] * max(work["launches"], 1.0)
                                           * last["launch_sector_bytes"] / (last["sector_bytes"]
                                                                            * max(last["launches"], 1.0)))
    missing = [k for k in WORK_KEYS if k not in work]
    if missing:
        raise UserError(f"--at-size: the extrapolation lacks the counts {missing}")
    rw = {"read_bytes": float(at.counts.get("read_bytes", 0.0)),
          "written_bytes": float(at.counts.get("written_bytes", 0.0))}
    rp = predict_one_region((kind, path, model), gpu, at.features, work=work, bytes_rw=rw, cpu_s=cpu,
                            label=label, notes=notes, cpu_why=why, cpu_baseline=b,
                            cpu_numpy=any(uses_numpy(i) for i in at.infos), cpu_at=f"at n = {at_size:,} (not traced)")
    return AtSizePrediction(ladder=list(ladder), extrapolation=at, region=rp, cpu_baseline=b)
