"""How a region's GPU-time prediction (:class:`predictor.gputime_region.GpuPrediction`) is printed: times,
speedups and the prediction's lines on the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (annotations only: printing needs no model code)
    from predictor.gputime_region import GpuPrediction


def format_time(s: float | None) -> str:
    """A time as the prediction lines print it (``"18.4 us"``, ``"2.345 ms"``; ``"-"`` for None); the HTML
    report prints its times the same way."""
    if s is None:
        return "-"
    return f"{s * 1e6:.3g} us" if s < 1e-3 else f"{s * 1e3:.4g} ms" if s < 1 else f"{s:.4g} s"


def describe(p: GpuPrediction) -> dict[str, Any]:
    """Short strings for printing: the target, the times and speedups."""
    t = format_time
    return {"gpu": f"{p.gpu_name} ({p.gpu}, {p.generation})", "kernel": t(p.kernel_s), "transfer": t(p.transfer_s),
            "cpu": t(p.cpu_s)}


def _bytes(n: int) -> str:
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{n} B"


def speedup_number(v: float) -> str:
    """A speedup factor: three significant digits (``5.13``, ``0.191``), whole numbers from 1,000 (``1,040``)."""
    text = f"{v:.3g}"
    return f"{v:,.0f}" if "e+" in text else text


def speedup_text(value: float, interval: tuple[float, float] | None = None) -> str:
    """``5.1x (4.8-5.4)``: a speedup and, when known, its interval from the CPU time's quartiles."""
    span = f" ({speedup_number(interval[0])}-{speedup_number(interval[1])})" if interval is not None else ""
    return f"{speedup_number(value)}x{span}"


def print_gpu_prediction(console, label: str, p: GpuPrediction, *, cpu_how: str = "", cpu_why: str = "") -> None:
    """Print one region's predicted GPU time, its speedups and what the prediction rests on. ``cpu_how``: what
    was timed on the CPU when ``p.cpu_baseline`` does not say; ``cpu_why``: why there is no CPU time."""
    from portcast.safe_text import escape

    d = describe(p)
    console.print(f"[bold]GPU time of {escape(label)}[/] on {escape(d['gpu'])}: predicted kernel time "
                  f"[bold]{d['kernel']}[/]", highlight=False, soft_wrap=True)
    if p.cpu_s:
        cpu_how = p.cpu_baseline or cpu_how
        how = f" ({cpu_how})" if cpu_how else ""
        console.print(f"  CPU time of the region here{escape(how)}: {d['cpu']} -> "
                      f"[bold]speedup {speedup_text(p.speedup, p.speedup_range)}[/]", highlight=False, soft_wrap=True)
        with_copies = speedup_text(p.speedup_with_transfers, p.speedup_with_transfers_range)
        console.print(f"  with the copies over the host link ({_bytes(p.read_bytes)} in, {_bytes(p.written_bytes)} "
                      f"out: {d['transfer']}): speedup {with_copies}", highlight=False, soft_wrap=True)
    else:
        console.print(f"  no speedup: the region's CPU time was not measured ({escape(cpu_why or 'not asked for')}); "
                      f"copies over the host link would take {d['transfer']} ({_bytes(p.read_bytes)} in, "
                      f"{_bytes(p.written_bytes)} out)", highlight=False, soft_wrap=True)
    notes = []
    if p.extrapolated:
        notes.append(f"no GPU of the {p.generation} generation has measured points: the prediction for it is "
                     "extrapolated from older generations")
    if p.out_of_range:
        notes.append(f"outside the training range in {', '.join(p.out_of_range)}: treat the time as a rough guide")
    if p.simulated_s is None and p.uses_simt:
        notes.append("the SIMT model's estimate was not available (incomplete region or sample too large)")
    for n in notes:
        console.print(f"  [yellow]note:[/] {escape(n)}", highlight=False, soft_wrap=True)


def print_model_line(console, p: GpuPrediction, bounds=None) -> None:
    """How the prediction stands to the largest physical bound, and what it rests on: the model file and the
    measured data it was trained on."""
    from portcast.safe_text import escape

    e = p.explanation
    if e is not None:
        from portcast.bounds_report import format_seconds as fs

        launches = f"{e['launches']:g} launches x " if e["launches"] != 1 else ""
        how = (f"  how: {launches}({fs(e['launch_s'])} per launch + factor {e['factor']:.3g} x the {e['term']} "
               f"estimate {fs(e['term_s'])}) = {fs(e['estimate_s'])}")
        if e["floor_decides"]:
            how += f"; below the lower bound {fs(e['bound_s'])}, which is the prediction"
        console.print(escape(how), highlight=False, soft_wrap=True)
    if bounds is not None and bounds.total_lower > 0 and e is not None:
        r = p.kernel_s / bounds.total_lower
        console.print(f"  the predicted time is {r:.3g}x the largest bound ({bounds.bound}); the model never predicts "
                      "less (docs/gputime.md)", highlight=False, soft_wrap=True)
    elif bounds is not None and bounds.total_lower > 0:
        r = p.kernel_s / bounds.total_lower
        how = ("above it: the measured kernels of this shape ran that far above their bounds (latencies, "
               "scheduling and launch costs the bounds do not count)") if r >= 1 else \
              "below it: the model is off here, read the bound as the better figure"
        console.print(f"  the predicted time is {r:.3g}x the largest bound ({bounds.bound}); {how}",
                      highlight=False, soft_wrap=True)

    console.print(f"  model: {escape(p.model_file)}; trained on {escape(p.trained_on)} (docs/gputime.md gives its "
                  "held-out errors)", highlight=False, soft_wrap=True, style="dim")
