"""``portcast program SCRIPT``: the whole program's predicted time and speedup with a chosen set of regions on
the GPU, the critical path, the copies, what porting each other region would add, and the same on other GPUs
(portcast/program_view.py)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import List, Optional

import typer

from portcast.commands._common import UserError, check_output, console, err_console, user_errors
from portcast.defaults import DEFAULT_GPU
from portcast.safe_text import as_text


def render_text(rep) -> None:
    """The report as text on the console: the summary, the regions table, the critical path, other GPUs."""
    from rich.table import Table

    from portcast.formatting import format_bytes as _bytes
    from portcast.formatting import format_seconds as _ms
    from portcast.formatting import speedup_number

    sched = rep.schedule
    host = sum(s["end_s"] - s["start_s"] for s in sched["steps"] if s["lane"] == "cpu" and s["region"] is None)
    out = console
    out.print(as_text(f"whole program: {rep.script} on {rep.gpu_label}, host link {rep.link_gb_per_s:g} GB/s"))
    out.print(as_text(f"  the CPU run: {_ms(rep.cpu_total_s)} ({_ms(rep.cpu_total_s - host)} in regions, "
                      f"{_ms(host)} host code)"))
    plan = ", ".join(rep.plan) or "none (everything on the CPU)"
    why = " (the default: every region faster alone with its own copies)" if rep.plan == rep.default_plan else ""
    out.print(as_text(f"  on the GPU: {plan}{why}"))
    out.print(as_text(f"  predicted: {_ms(rep.total_s)}, {rep.speedup:.3g}x the CPU run; copies "
                      f"{_bytes(sched['h2d_bytes'])} in, {_bytes(sched['d2h_bytes'])} out"))
    crit = sorted(sched["critical_s"].items(), key=lambda kv: -kv[1])
    out.print(as_text("  critical path: " + ", ".join(
        f"{k} {_ms(v)} ({v / rep.total_s:.0%})" for k, v in crit if rep.total_s > 0)))
    t = Table(title="regions")
    for col in ("region", "invocations", "CPU", "GPU", "speedup alone, with its copies", "on the GPU",
                "porting it too saves"):
        t.add_column(col, justify="left" if col == "region" else "right")
    for r in rep.regions:
        alone = f"{speedup_number(r['speedup_alone'])}x" if r["speedup_alone"] is not None else as_text(r["why"] or "-")
        gain = rep.gains.get(r["region"])
        t.add_row(as_text(r["region"]), str(r["invocations"]), _ms(r["cpu_s"]), _ms(r["gpu_s"]), alone,
                  "yes" if r["region"] in rep.plan else "no",
                  "-" if gain is None else (f"{_ms(gain)}" if gain >= 0 else f"costs {_ms(-gain)}"))
    out.print(t)
    if rep.configurations:
        c = Table(title="the same plan on other GPUs")
        for col in ("GPU", "predicted", "speedup"):
            c.add_column(col, justify="left" if col == "GPU" else "right")
        c.add_row(as_text(rep.gpu), _ms(rep.total_s), f"{speedup_number(rep.speedup)}x")
        for cfg in rep.configurations:
            c.add_row(as_text(cfg["gpu"]), _ms(cfg["total_s"]) if cfg["total_s"] is not None else as_text(cfg["why"]),
                      f"{speedup_number(cfg['speedup'])}x" if cfg["speedup"] is not None else "-")
        out.print(c)
    if rep.surface is not None:
        sf = rep.surface
        tot = sf["total_s"]
        lo, hi = min(range(len(tot)), key=tot.__getitem__), max(range(len(tot)), key=tot.__getitem__)
        base = sf["grid"].index(sf["base"]) if sf["base"] in sf["grid"] else None

        def at(k: int) -> str:
            sm, core, mem = sf["grid"][k]
            return f"{_ms(tot[k])} ({speedup_number(sf['speedup'][k])}x) at {sm} SMs, {core:g}/{mem:g} MHz"

        out.print(as_text(f"across the {len(tot)} configurations of the scaling model {sf['model']}: fastest "
                          f"{at(lo)}; slowest {at(hi)}" + (f"; its base {at(base)}" if base is not None else "")))


def register(app: typer.Typer) -> None:
    @app.command("program")
    def program_cmd(
        script: Path = typer.Argument(..., help="Script with marked regions, run twice: untraced, then traced."),
        script_args: Optional[List[str]] = typer.Argument(None, help="Arguments for the script (after --)."),
        port: Optional[List[str]] = typer.Option(
            None, "--port", help="A region to run on the GPU (repeatable); default: every region faster alone "
                                 "with its own copies."),
        gpu: str = typer.Option(DEFAULT_GPU, "--gpu", help="Target GPU (a preset name or a description .json)."),
        compare: Optional[List[str]] = typer.Option(
            None, "--compare", help="Also evaluate the same plan on this GPU (repeatable)."),
        surface: Optional[Path] = typer.Option(
            None, "--surface", help="A scaling-surface model (portcast scale train --counters classes): the plan at "
                                    "every SM count and clock of its grid, each region scaled by its op mix."),
        model: Optional[str] = typer.Option(None, "--model", help="GPU-time model file; default: the shipped one."),
        mode: str = typer.Option("auto", "--mode", help="auto | interpreted | compiled"),
        sample: str = typer.Option("auto", "--sample", help="auto, exact, or a block rate in (0, 1]."),
        timeline: Optional[Path] = typer.Option(
            None, "--timeline", help="Write the timeline (CPU, GPU and link lanes, the critical path) here: "
                                     ".png or .svg."),
        report: Optional[Path] = typer.Option(
            None, "--report", help="Also write the whole report as one self-contained HTML page: the program's "
                                   "section with its timeline, then each region's profile."),
        force: bool = typer.Option(False, "--force", help="Replace an existing --timeline or --report file."),
        json_out: bool = typer.Option(False, "--json", help="Print the report as JSON (portcast.program-report) "
                                                            "on stdout; the script's own output goes to stderr."),
    ) -> None:
        """Predict the whole program's time with some regions on the GPU: the copies between CPU and GPU, the
        critical path, what each other region would add, and the same plan on other GPUs."""
        from portcast.program_view import profile_program
        from portcast.timeline_plot import write_timeline
        from profiler.instrument import SourceUnavailable, UnsupportedConstruct

        with user_errors(UnsupportedConstruct, SourceUnavailable, ValueError):
            if mode not in ("auto", "interpreted", "compiled"):
                raise UserError(f"--mode must be auto, interpreted or compiled, not {mode!r}")
            check_output(timeline, inputs=[script], force=force, what="--timeline")
            check_output(report, inputs=[script], force=force, what="--report")
            quiet = contextlib.redirect_stdout(sys.stderr) if json_out else contextlib.nullcontext()
            with quiet:
                rep = profile_program(script, script_args or [], gpu=gpu, model=model, ports=port,
                                      compare=compare or [], mode=mode, sample=sample, surface=surface)
            if timeline is not None:
                write_timeline(rep.schedule, timeline)
                err_console.print(as_text(f"wrote the timeline {timeline}"), highlight=False, soft_wrap=True)
            if report is not None:
                rep.write_html(report)
                err_console.print(as_text(f"wrote the report {report}"), highlight=False, soft_wrap=True)
            if json_out:
                sys.stdout.write(rep.to_json() + "\n")
                return
            render_text(rep)
