"""``portcast simulate``: run a region's trace on the SIMT timing model of a GPU (docs/simt.md)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from core.atomic import atomic_write_json
from portcast.commands._common import UserError, console, user_errors, warn_if_incomplete
from portcast.commands._streams import load_streams, sweep_with_progress
from portcast.safe_text import as_text, escape


def _errors():
    from gpu_models.dvfs.counter_record import CounterError
    from gpu_models.scaling.dataset import DatasetError
    from gpu_models.simt.config import ConfigError

    return user_errors(ConfigError, DatasetError, CounterError, ValueError)


def _write_json(path: Path, doc: dict) -> None:
    atomic_write_json(path, doc, indent=2, sort_keys=True)


# -- the loaders (portcast.pipeline) with this command's status line and progress bar ----------------------------


def _print_run(name, streams, cfg, res) -> None:
    t = Table(title=f"{escape(name)} on {escape(cfg.name)}: "
                    f"{res.sm_count} SMs, {res.core_mhz:g} MHz core, {res.mem_mhz:g} MHz memory")
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
    mode: str = typer.Option("auto", "--mode",
                             help="Tracing mode for a SCRIPT / --function: auto | interpreted | compiled"),
    trace_dir: Optional[Path] = typer.Option(
        None, "--trace-dir", help="For a SCRIPT / --function: also write each region's trace file here."),
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
        from gpu_models.dvfs.counter_record import save_counters
        from gpu_models.simt.config import load_config
        from gpu_models.simt.model import simulate
        from gpu_models.simt.sweep import SweepGrid
        from portcast.pipeline.stage_run import concat_datasets

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
        warn_if_incomplete(source)
        loaded = load_streams(source, block_size, regions=region, function=function, args=args,
                              script_args=script_args or (), mode=mode, trace_dir=trace_dir)
        runs = []
        for name, streams in loaded:
            with console.status(as_text(f"simulating {name} on {cfg.name}")):
                res = simulate(streams, cfg, sm_count=sm_count, core_mhz=core_mhz, mem_mhz=mem_mhz, crisp=True,
                               name=name)
            _print_run(name, streams, cfg, res)
            runs.append((name, res))
        if counters_out is not None:
            save_counters([res.crisp for _, res in runs], counters_out)
            console.print(f"wrote DVFS counters to {escape(counters_out)}")
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
                console.print(f"wrote {escape(out)}")
            return
        ds = concat_datasets([sweep_with_progress(streams, cfg, grid, name) for name, streams in loaded])
        f = ds.frame
        for name in ds.kernels:
            fk = f[f["kernel"] == name]
            best = fk.loc[fk["time"].idxmin()]
            console.print(f"sweep of {escape(name)}: {grid.size} configurations, fastest {best['time'] * 1e6:.3f} us "
                          f"at {int(best['sm_count'])} SMs, {best['core_mhz']:g} MHz core, "
                          f"{best['mem_mhz']:g} MHz memory")
        if out is not None:
            ds.write(out)
            console.print(f"wrote {escape(out)}")


def register(app: typer.Typer) -> None:
    """Add ``portcast simulate``."""
    app.command("simulate")(simulate_cmd)
