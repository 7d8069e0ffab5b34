"""The run stage of the pipeline, and the loaders every command shares: a script or a function run under the
tracer into a run's sinks (:func:`run_traced`), a module or ``MODULE:QUALNAME`` loaded (:func:`load_module`,
:func:`resolve_function`), and a trace file, script or function loaded into warp streams for ``simulate``,
``scale`` and ``dvfs`` (:func:`load_streams`, :func:`trace_dataset`, :func:`load_scaling_data`,
:func:`load_counter_records`), or a file's features (:func:`features_of_file`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Optional

from portcast.errors import UserError


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
