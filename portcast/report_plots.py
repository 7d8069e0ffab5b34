"""The plots of a profile report, as inline SVG text (matplotlib's SVG back end, no pyplot: a report made in
Jupyter leaves the notebook's own plotting state alone; fonts are drawn as paths, so the page needs nothing
from the network or the system)."""

from __future__ import annotations

import io
import math

import numpy as np

#: colours of the plots (matplotlib's default cycle); the browser test looks for the first one on the page
BLUE, ORANGE, GREEN, RED, GREY = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#7f7f7f"


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=96)
    return fig


def _svg(fig) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "portcast", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # no XML prolog inside HTML


def mix_svg(op_counts: dict) -> str:
    """Horizontal bars: share of the region's records per operation class (classes with records only)."""
    items = [(k, v) for k, v in op_counts.items() if v]
    total = sum(v for _, v in items) or 1
    items.sort(key=lambda kv: kv[1])
    fig = _figure(5.0, 0.28 * len(items) + 0.8)
    ax = fig.add_subplot()
    ax.barh([k for k, _ in items], [v / total for _, v in items], color=BLUE)
    ax.set_xlabel("share of records")
    ax.set_title("instruction mix", loc="left", fontsize=10)
    ax.tick_params(labelsize=8)
    return _svg(fig)


def reuse_svg(features: dict) -> str | None:
    """Bars of the LRU stack-distance histogram of load block references (MICA's buckets, cold last)."""
    keys = [f"mica_reuse_b{k}" for k in range(19)] + ["mica_reuse_cold"]
    if not all(k in features and features[k] is not None for k in keys):
        return None
    labels = ["0-1"] + [f"2^{k}" for k in range(1, 18)] + [">=2^18", "cold"]
    vals = [float(features[k]) for k in keys]
    fig = _figure(5.6, 2.3)
    ax = fig.add_subplot()
    ax.bar(range(len(vals)), vals, color=[BLUE] * 19 + [GREY])
    ax.set_xticks(range(len(vals)), labels, rotation=90, fontsize=7)
    ax.set_ylabel("share of references", fontsize=8)
    ax.set_title("reuse distance of loads (distinct 64-B blocks between reuses)", loc="left", fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    return _svg(fig)


def stride_svg(features: dict) -> str | None:
    """Grouped bars: local (per instruction) and global stride histograms in XAPP's four buckets."""
    buckets = ("0", "8", "128", "Other")
    loc = [features.get(f"locStride{b}") for b in buckets]
    glo = [features.get(f"gStride{b}") for b in buckets]
    if any(v is None for v in loc + glo):
        return None
    x = np.arange(4)
    fig = _figure(4.2, 2.3)
    ax = fig.add_subplot()
    ax.bar(x - 0.2, [float(v) for v in loc], 0.4, color=BLUE, label="per instruction")
    ax.bar(x + 0.2, [float(v) for v in glo], 0.4, color=ORANGE, label="all accesses")
    ax.set_xticks(x, ["0 B", "1-8 B", "9-128 B", "> 128 B"], fontsize=8)
    ax.set_ylabel("share of strides", fontsize=8)
    ax.set_title("address strides", loc="left", fontsize=10)
    ax.legend(fontsize=7, frameon=False)
    ax.tick_params(axis="y", labelsize=8)
    return _svg(fig)


def contributions_svg(rows: list) -> str | None:
    """Horizontal bars: each model input's factor on the predicted time (exp of its log contribution), the
    largest first; the common start is left out (it is the same for every region)."""
    rows = [r for r in rows if r["column"] != "start" and r["contribution"] is not None
            and abs(r["contribution"]) > 1e-6]
    if not rows:
        return None
    rows = sorted(rows, key=lambda r: abs(r["contribution"]))[-12:]
    vals = [r["contribution"] / math.log(10) for r in rows]
    fig = _figure(5.6, 0.3 * len(rows) + 0.9)
    ax = fig.add_subplot()
    ax.barh([_plot_text(r["column"]) for r in rows], vals, color=[RED if v > 0 else GREEN for v in vals])
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlabel("log10 factor on the predicted time (right: slower)", fontsize=8)
    ax.set_title("what moves the predicted time", loc="left", fontsize=10)
    ax.tick_params(labelsize=8)
    return _svg(fig)


def _plot_text(s: str) -> str:
    """A user's string as a plot label: control characters written out, ``$`` not read as mathtext."""
    from portcast.safe_text import visible

    return visible(s).replace("$", r"\$")


def position_svg(points, preset: str, region_roofline_s: float, region_kernel_s: float,
                 region_simd: float | None, region_coalescing: float | None, label: str) -> str:
    """Two panels: the measured training kernels (time against the roofline time of their work on the same
    GPU; the target's rows when it has any, else all) with the region's prediction as a star; and their SIMD
    efficiency against coalescing with the region's."""
    pts = points[points["preset"] == preset]
    which = f"measured on {preset}"
    if pts.empty:
        pts, which = points, "measured on every GPU in the training data"
    fig = _figure(9.0, 3.3)
    ax1, ax2 = fig.subplots(1, 2)
    apps = sorted(pts["application"].unique())
    cmap = __import__("matplotlib").colormaps["tab20"]
    for k, app in enumerate(apps):
        g = pts[pts["application"] == app]
        c = cmap(k % 20)
        ax1.scatter(g["roofline_s"], g["measured_s"], s=9, color=c, alpha=0.7, label=app.split("/")[-1])
        ax2.scatter(g["warp_coalescing"], g["warp_simdEfficiency"], s=9, color=c, alpha=0.7)
    lo = float(min(pts["roofline_s"].min(), region_roofline_s))
    hi = float(max(pts["roofline_s"].max(), region_roofline_s))
    ax1.plot([lo, hi], [lo, hi], color=GREY, lw=0.7, ls="--")
    ax1.scatter([region_roofline_s], [region_kernel_s], marker="*", s=220, color=RED, edgecolor="black",
                zorder=5, label=f"{_plot_text(label)} (predicted)")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("roofline time of the work (s)", fontsize=8)
    ax1.set_ylabel("kernel time (s)", fontsize=8)
    ax1.set_title(f"training kernels {which}", loc="left", fontsize=9)
    ax1.tick_params(labelsize=7)
    ax1.legend(fontsize=6, frameon=False, ncol=2, loc="upper left")
    if region_simd is not None and region_coalescing is not None:
        ax2.scatter([region_coalescing], [region_simd], marker="*", s=220, color=RED, edgecolor="black", zorder=5)
    ax2.set_xlabel("coalescing (1 = ideal)", fontsize=8)
    ax2.set_ylabel("SIMD efficiency", fontsize=8)
    ax2.set_title("memory and branch behaviour", loc="left", fontsize=9)
    ax2.tick_params(labelsize=7)
    return _svg(fig)
