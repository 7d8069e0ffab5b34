"""What bounds a region's GPU kernel time, in physical terms: a table of ``gpu_models.bounds.Bounds`` (one row
per resource, its lower-bound time, share of the largest and a sentence of what it counts), and the source lines
behind the bounding resource: the region's weak spots (``portcast.report.weak_spots``) that make it larger.
"""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from gpu_models.bounds import Bounds
from portcast.formatting import format_bytes, format_count, format_seconds, short_location
from portcast.safe_text import as_text, escape

#: Short names of the resources in the table.
TITLES = {"dram": "DRAM", "issue": "issue", "pipe": "pipeline", "waves": "waves", "latency": "latency",
          "launch": "launch"}


def meanings(b: Bounds) -> dict[str, str]:
    """One sentence per resource saying what its time counts, from ``b.details``.

    Parameters
    ----------
    b : Bounds

    Returns
    -------
    dict
        ``{resource: sentence}``.
    """
    d = b.details
    mhz = d["core_hz"] / 1e6
    sms = f"{d['effective_sms']:.3g} SMs" if d["effective_sms"] != d["sm_count"] else f"{d['sm_count']} SMs"
    coal = f", coalescing {d['coalescing']:.2f}" if "coalescing" in d else ""
    share = d.get("record_derate", 1.0)
    half = f"{share:.0%} of " if share < 1 else ""
    moved = (f"{format_bytes(d['dram_bytes'])} of distinct 32-B sectors the threads touch, each moved at least "
             f"once (the warps' accesses without any cache reuse: {format_bytes(d['traffic_bytes'])}{coal})")
    s = d["simd_efficiency"]
    div = (f"; SIMD efficiency {s:.2f}: {1 - s:.0%} of lanes idle, {1 / s:.3g}x the converged count"
           if s < 1 else "; no divergence")
    unit = d["busiest_pipe"]
    per = d["pipe_per_cycle"][unit]
    if unit == "lsu":
        pipe = (f"busiest pipeline lsu (load/store): {half}{format_count(d['pipe_cycles'][unit])} sectors at {per:g} "
                f"per cycle per SM on {sms}")
    else:
        pipe = (f"busiest pipeline {unit}: {half}{format_count(d['pipe_cycles'][unit])} pipe cycles over {per:g} "
                f"{unit} pipes per SM on {sms}")
    folded = " (a compiler folds part of the trace's records)" if share < 1 else ""
    out = {
        "dram": f"{moved} at {d['dram_bytes_per_s'] / 1e9:.4g} GB/s",
        "issue": (f"{half}{format_count(d['warp_instructions'])} warp instructions{folded} at {d['schedulers_per_sm']} "
                  f"per cycle per SM on {sms} at {mhz:.0f} MHz{div}"),
        "pipe": pipe,
        "waves": (f"{d['blocks']:,} blocks of {d['block_size']} threads: {d['waves']:.3g} waves ({d['rounds']} "
                  f"round{'s' if d['rounds'] != 1 else ''}) on {d['sms_used']} of {d['sm_count']} SMs, occupancy "
                  f"{d['occupancy']:.0%}; a round lasts one warp's chain ({half}its records x "
                  f"{d['chain_cycles']:g} cycles)"),
        "latency": (f"one thread's chain: {half}{d['records_per_thread']:.3g} records x {d['chain_cycles']:g} cycles "
                    f"at {mhz:.0f} MHz"),
        "launch": f"{d['launches']:g} launch{'es' if d['launches'] != 1 else ''} x "
                  f"{format_seconds(d['launch_seconds'])} (the least a launch takes)",
    }
    return out


def bounds_summary(bounds: Bounds, explanation: pd.DataFrame | None = None, top: int = 3,
                   series: pd.Series | None = None) -> dict:
    """What the report holds of a region's bounds (``RegionReport.bounds``) and every output prints: the GPU,
    the bounding resource, the lower bound, one row per resource (its title, time, share of the largest and
    what it counts) and the lines behind the bound (:func:`bound_lines`)."""
    text, shares = meanings(bounds), bounds.shares()
    return {"gpu": bounds.gpu, "bound": bounds.bound, "lower_bound_s": bounds.total_lower,
            "resources": [{"resource": r, "title": TITLES[r], "time_s": t, "share": shares[r], "meaning": text[r]}
                          for r, t in bounds.times.items()],
            "lines": bound_lines(bounds, explanation, top, series)}


def print_bounds(console: Console, label: str, bounds, explanation: pd.DataFrame | None = None,
                 top: int = 3, transfer_s: float | None = None, series: pd.Series | None = None) -> None:
    """Print what bounds a region's GPU kernel time and the source lines behind the bounding resource.

    Parameters
    ----------
    console : where to print
    label : region name shown in the titles
    bounds : the region's bounds as the report holds them (:func:`bounds_summary`), or a
        ``gpu_models.bounds.Bounds`` (``explanation``, ``top`` and ``series`` then choose the lines behind it)
    explanation : ``features.FeatureEngine.explain()`` table (``FeatureSink.explanations``), optional
    top : lines shown per weak spot
    transfer_s : seconds of the host<->device copies (``gpu_models.bounds.transfer_seconds``), optional;
        printed below the table, not part of the kernel time
    series : the region's features, optional (:func:`bound_lines`)
    """
    if isinstance(bounds, Bounds):
        bounds = bounds_summary(bounds, explanation, top, series)
    b = bounds["bound"]
    t = Table(title=f"What bounds the GPU time of {escape(label)} on {escape(bounds['gpu'])}", title_justify="left",
              caption=f"* bound: no kernel doing this work runs faster than {format_seconds(bounds['lower_bound_s'])}",
              caption_justify="left")
    t.add_column("resource", no_wrap=True)
    t.add_column("time", no_wrap=True, justify="right")
    t.add_column("share", no_wrap=True, justify="right")
    t.add_column("meaning", overflow="fold", ratio=1)
    for r in bounds["resources"]:
        mark = r["resource"] == b
        t.add_row(r["title"] + (" *" if mark else ""), format_seconds(r["time_s"]), f"{r['share']:.0%}",
                  escape(r["meaning"]), style="bold" if mark else None)
    console.print(t)
    if transfer_s is not None:
        console.print(f"host<->device copies: {format_seconds(transfer_s)} (not part of the kernel time)")
    if not bounds["lines"]:
        return
    lines = Table(title=f"lines behind the {TITLES[b]} bound of {escape(label)}", title_justify="left")
    lines.add_column("what", overflow="fold")
    lines.add_column("share", no_wrap=True, justify="right")
    lines.add_column("line", no_wrap=True)
    lines.add_column("source", overflow="fold")
    for r in bounds["lines"]:
        lines.add_row(escape(r["what"]), f"{r['share']:.0%}", as_text(short_location(r["location"])),
                      as_text(r["text"]))
    console.print(lines)


def bound_lines(bounds: Bounds, explanation: pd.DataFrame | None, top: int = 3,
                series: pd.Series | None = None) -> list[dict]:
    """The source lines behind the bounding resource (``{"feature", "what", "why", "share", "location",
    "text"}`` each): the region's weak spots (:func:`portcast.report.weak_spots`, the same rules as the
    "lines behind the weak spots" table) that make that resource's time larger; none where no weak spot does
    (no lane idle, accesses coalesced)."""
    from .report import weak_spots

    return weak_spots(series, explanation, bounds, top, resource=bounds.bound)
