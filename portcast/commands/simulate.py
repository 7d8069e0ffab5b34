"""``portcast simulate``: run a region's trace on the SIMT timing model of a GPU (docs/simt.md)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import Progress
from rich.table import Table

from portcast.commands._common import UserError, console, user_errors
from profiler.atomic import atomic_write_json


def _errors():
    from gpu_models.dataset import DatasetError
    from gpu_models.dvfs.counters import CounterError
    from gpu_models.simt.config import ConfigError

    return user_errors(ConfigError, DatasetError, CounterError, ValueError)


def _write_json(path: Path, doc: dict) -> None:
    atomic_write_json(path, doc, indent=2, sort_keys=True)


# -- the trace loader shared with ``portcast scale`` and ``portcast dvfs`` ---------------------------------------


def load_trace_streams(trace: Path, block_size: int = 256):
    """Read a region's trace file and build its warp streams (with a status line on the console).

    Parameters
    ----------
    trace : Path
        Trace file of one region invocation (docs/trace-format.md).
    block_size : int
        Threads per block.

    Returns
    -------
    (str, WarpStreams)
        The region name and its warp streams (:func:`gpu_models.simt.pipeline.load_region`).
    """
    from gpu_models.simt.pipeline import load_region

    with console.status(f"building warp streams of {trace}"):
        return load_region(trace, block_size)


def sweep_with_progress(streams, cfg, grid, name: str):
    """Run a configuration sweep of a region's warp streams with a progress bar.

    Parameters
    ----------
    streams : WarpStreams
    cfg : GPUConfig
    grid : SweepGrid
    name : str
        Kernel name of the dataset rows.

    Returns
    -------
    ScalingDataset
        One row per configuration (:func:`gpu_models.simt.sweep.sweep`).
    """
    from gpu_models.simt.sweep import sweep as run_sweep

    with Progress(console=console, transient=True) as prog:
        task = prog.add_task(f"sweeping {name}: {grid.size} configurations", total=grid.size)
        return run_sweep(streams, cfg, grid, kernel=name,
                         progress=lambda done, total: prog.update(task, completed=done))


def _marked_names(script: Path) -> list[str]:
    """Region names the script marks with a constant string (``region("n")``, ``region_start("n")``), for
    error messages; best effort (a name computed at run time is not seen)."""
    import ast

    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
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


def _region_labels(infos) -> list[str]:
    """Kernel names of traced region invocations: the region name, or ``name#k`` for a region invoked more than once."""
    from collections import Counter

    count = Counter(i.name for i in infos)
    return [i.name if count[i.name] == 1 else f"{i.name}#{i.invocation}" for i in infos]


def is_script(source) -> bool:
    """Whether a SOURCE argument names a Python script (``.py``) rather than a trace or dataset file."""
    return str(source).lower().endswith(".py")


def load_streams(source: Path | None = None, block_size: int = 256, *, regions=None, function: str | None = None,
                 args: str | None = None, script_args=(), mode: str = "auto", trace_dir: Path | None = None) -> list:
    """The one loader of ``portcast simulate``, ``scale`` and ``dvfs``: a trace file, a script or a function ->
    the warp streams of each region invocation.

    * a trace file (docs/trace-format.md): its one region (:func:`load_trace_streams`);
    * a Python script (``.py``): run with ``script_args`` under the profiler (``profiler.profile_script``, as
      ``portcast profile SCRIPT -- ARGS``); every invocation of its marked regions (only ``regions`` when given)
      is traced, and each one's streams are built when it ends (:class:`gpu_models.simt.pipeline.StreamsSink`:
      one region's records in memory at a time, no trace file);
    * ``function="MODULE:QUALNAME"`` (with ``args``, a Python expression, or the module's ``portcast_inputs()``):
      that one call is traced (``profiler.trace_function``), with the resolver of ``portcast profile --function``.

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

    Returns
    -------
    list of (str, WarpStreams)
        Kernel name (the region name; ``name#k`` for invocation ``k`` of a region invoked more than once) and
        streams, in the order the invocations ended. Never empty: no region traced is a :class:`UserError`.
    """
    from gpu_models.simt.pipeline import StreamsSink
    from portcast.commands.profile import _resolve_function
    from profiler.instrument import SourceUnavailable, UnsupportedConstruct
    from profiler.session import profile_script, trace_function

    if function is not None:
        if source is not None:
            raise UserError(f"give either a trace/SCRIPT ({source}) or --function, not both")
        if regions:
            raise UserError("--region selects regions of a SCRIPT; a --function call is one region")
    elif source is None:
        raise UserError("give a trace file, a SCRIPT.py with marked regions, or --function MODULE:QUALNAME")
    elif not is_script(source):
        if regions or script_args or args is not None or trace_dir is not None:
            raise UserError(f"{source}: --region, --args, --trace-dir and script arguments apply to a SCRIPT.py, not a trace file")
        return [load_trace_streams(Path(source), block_size)]
    elif not Path(source).is_file():
        raise UserError(f"{source}: no such script")
    elif args is not None:
        raise UserError("--args gives the arguments of --function, not of a SCRIPT (put those after --)")
    sink = StreamsSink(block_size)
    sinks: list = [sink]
    if trace_dir is not None:
        from profiler.tracefile import TraceDirectorySink

        sinks.append(TraceDirectorySink(trace_dir, replace=False))
    what = f"--function {function}" if function is not None else str(source)
    with user_errors(UnsupportedConstruct, SourceUnavailable), \
            console.status(f"tracing {what} and building warp streams"):
        try:
            if function is not None:
                fn, fargs = _resolve_function(function, args)
                trace_function(fn, fargs, sinks=sinks, mode=mode)
            else:
                profile_script(source, list(script_args or []), sinks=sinks, mode=mode, regions=regions or None)
        except (UserError, UnsupportedConstruct, SourceUnavailable):
            raise
        except Exception as exc:  # the user's code failed: name it in one line
            where = f" in region {sink.incomplete[-1].name!r}" if sink.incomplete else ""
            raise UserError(f"{what} raised {type(exc).__name__}{where}: {exc}") from None
    if not sink.regions:
        if regions:
            marked = _marked_names(Path(source))
            known = f" (the script marks: {', '.join(marked)})" if marked else ""
            raise UserError(f"{source} executed no marked region named {', '.join(map(repr, regions))}{known}")
        raise UserError(f"{source} executed no marked region (mark one with @portcast.region(\"name\"), "
                        "with portcast.region(\"name\"): ..., or portcast.region_start/region_end)")
    return list(zip(_region_labels([i for i, _ in sink.regions]), [s for _, s in sink.regions]))


def trace_dataset(trace: Path, gpu: str = "h100", sweep: str | None = None, block_size: int = 256,
                  name: str | None = None, regions=None):
    """A region's trace (or a script's marked regions) -> its scaling-surface dataset: what
    ``simulate TRACE --sweep SWEEP --out D`` writes.

    ``portcast scale`` calls this when a DATA argument is a trace file or a script, so that a trace and the
    dataset ``portcast simulate --sweep`` writes from it give the same results.

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

    Returns
    -------
    ScalingDataset
        One kernel per region invocation.
    """
    from gpu_models.simt.config import load_config
    from gpu_models.simt.sweep import SweepGrid

    cfg = load_config(gpu)
    grid = SweepGrid.parse(sweep or "default", cfg)
    loaded = load_streams(trace, block_size, regions=regions)
    if name is not None and len(loaded) == 1:
        loaded = [(name, loaded[0][1])]
    return _concat([sweep_with_progress(streams, cfg, grid, n) for n, streams in loaded])


def _concat(datasets):
    """Several regions' datasets (same grid and counters) -> one."""
    import pandas as pd

    from gpu_models.dataset import ScalingDataset

    if len(datasets) == 1:
        return datasets[0]
    return ScalingDataset(pd.concat([d.frame for d in datasets], ignore_index=True), source=datasets[0].source)


def _print_run(name, streams, cfg, res) -> None:
    t = Table(title=f"{name} on {cfg.name}: {res.sm_count} SMs, {res.core_mhz:g} MHz core, {res.mem_mhz:g} MHz memory")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("threads / warps / blocks", f"{streams.n_threads} / {streams.n_warps} / {streams.n_blocks}")
    t.add_row("thread instructions / warp instructions", f"{streams.n_records} / {streams.n}")
    t.add_row("cycles", f"{res.cycles}")
    t.add_row("time (us)", f"{res.time_ns / 1000:.3f}")
    t.add_row("dynamic power (W)", f"{res.power_w:.2f}")
    for k, v in res.counters.items():
        t.add_row(k, f"{v:.4g}")
    c = res.crisp
    t.add_row("CRISP: load critical path (us)", f"{c.lcp / 1000:.3f}")
    t.add_row("CRISP: overlapped computation (us)", f"{c.lcp_comp / 1000:.3f}")
    t.add_row("CRISP: store stalls (us)", f"{c.store_stall / 1000:.3f}")
    console.print(t)


def simulate_cmd(
    source: Optional[Path] = typer.Argument(
        None, help="Trace file of one region invocation (.parquet, docs/trace-format.md), or a SCRIPT.py whose "
                   "marked regions are traced and simulated."),
    script_args: Optional[List[str]] = typer.Argument(None, help="Arguments for the script (after --)."),
    region: Optional[List[str]] = typer.Option(None, "--region", "-r",
                                               help="For a SCRIPT: simulate only this region (repeatable)."),
    function: Optional[str] = typer.Option(None, "--function",
                                           help="Trace and simulate one function call instead: MODULE:QUALNAME "
                                                "(as in 'portcast profile --function')."),
    args: Optional[str] = typer.Option(None, "--args",
                                       help="Python expression giving the --function's arguments (a tuple), evaluated "
                                            "in its module; default: the module's portcast_inputs()."),
    mode: str = typer.Option("auto", "--mode", help="Tracing mode for a SCRIPT / --function: auto | interpreted | compiled"),
    trace_dir: Optional[Path] = typer.Option(None, "--trace-dir",
                                             help="For a SCRIPT / --function: also write each region's trace file here."),
    gpu: str = typer.Option("h100", "--gpu", help="GPU preset (h100, gtx480) or a description .json file."),
    sweep: Optional[str] = typer.Option(
        None, "--sweep",
        help="Also sweep SM count x core clock x memory clock: 'default' (the preset's 8x8x7 = 448 grid) or "
             "'SMS;CORES;MEMS' with comma lists, e.g. '4,8,15;100,700;924' ('default' for any part)."),
    out: Optional[Path] = typer.Option(
        None, "--out", help="Write the run (.json) or, with --sweep, the scaling dataset (.csv/.parquet)."),
    counters_out: Optional[Path] = typer.Option(
        None, "--counters-out", help="Write the DVFS models' counters (CRISP, LEAD, CRIT, ...) for 'portcast dvfs' "
                                     "(.json/.csv)."),
    block_size: int = typer.Option(256, "--block-size", help="Threads per block."),
    sm_count: Optional[int] = typer.Option(None, "--sm", help="SM count (default: the preset's)."),
    core_mhz: Optional[float] = typer.Option(None, "--core-mhz", help="Core clock (default: the preset's)."),
    mem_mhz: Optional[float] = typer.Option(None, "--mem-mhz", help="Memory clock (default: the preset's)."),
) -> None:
    """Predict a region's GPU run time, counters and power from its trace, or trace a script's marked regions
    (or one --function) and simulate each; optionally sweep configurations."""
    with _errors():
        from gpu_models.dvfs.counters import save_counters
        from gpu_models.simt.config import load_config
        from gpu_models.simt.model import simulate
        from gpu_models.simt.sweep import SweepGrid

        cfg = load_config(gpu)
        if mode not in ("auto", "interpreted", "compiled"):
            raise UserError(f"--mode must be auto, interpreted or compiled, not {mode!r}")
        if out is not None and sweep is None and out.suffix.lower() != ".json":
            raise UserError(f"--out {out}: a single run is written as .json (use --sweep for .csv/.parquet)")
        if out is not None and sweep is not None and out.suffix.lower() not in (".csv", ".parquet"):
            raise UserError(f"--out {out}: a sweep is written as .csv or .parquet")
        if counters_out is not None and counters_out.suffix.lower() not in (".json", ".csv"):
            raise UserError(f"--counters-out {counters_out}: use .json or .csv")
        grid = SweepGrid.parse(sweep, cfg) if sweep is not None else None
        loaded = load_streams(source, block_size, regions=region, function=function, args=args,
                              script_args=script_args or (), mode=mode, trace_dir=trace_dir)
        runs = []
        for name, streams in loaded:
            with console.status(f"simulating {name} on {cfg.name}"):
                res = simulate(streams, cfg, sm_count=sm_count, core_mhz=core_mhz, mem_mhz=mem_mhz, crisp=True,
                               name=name)
            _print_run(name, streams, cfg, res)
            runs.append((name, res))
        if counters_out is not None:
            save_counters([res.crisp for _, res in runs], counters_out)
            console.print(f"wrote DVFS counters to {counters_out}")
        if grid is None:
            if out is not None:
                docs = []
                for name, res in runs:
                    doc = {"schema": "portcast.simt.run", "schema_version": 1, "region": name, "block_size": block_size}
                    doc.update(res.to_json())
                    docs.append(doc)
                if len(docs) > 1:  # several region invocations: one document listing their runs
                    docs = [{"schema": "portcast.simt.runs", "schema_version": 1, "runs": docs}]
                _write_json(out, docs[0])
                console.print(f"wrote {out}")
            return
        ds = _concat([sweep_with_progress(streams, cfg, grid, name) for name, streams in loaded])
        f = ds.frame
        for name in ds.kernels:
            fk = f[f["kernel"] == name]
            best = fk.loc[fk["time"].idxmin()]
            console.print(f"sweep of {name}: {grid.size} configurations, fastest {best['time'] * 1e6:.3f} us at "
                          f"{int(best['sm_count'])} SMs, {best['core_mhz']:g} MHz core, {best['mem_mhz']:g} MHz memory")
        if out is not None:
            ds.write(out)
            console.print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Add ``portcast simulate``."""
    app.command("simulate")(simulate_cmd)
