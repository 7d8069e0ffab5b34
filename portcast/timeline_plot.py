"""The whole program's timeline: a Gantt chart of the CPU, GPU and link lanes of a schedule, its critical path
marked, drawn from the schedule's JSON data (``gpu_models.whole_program.Schedule.to_dict``, as a report holds
it), so a saved report draws the same picture. No pyplot: a notebook's plotting state is left alone."""

from __future__ import annotations

from pathlib import Path

#: lane colours: host code and regions on the CPU, regions on the GPU, copies in and out
COLOURS = {"cpu": "#1f77b4", "gpu": "#2ca02c", "h2d": "#ff7f0e", "d2h": "#d62728"}
LANE_ROWS = {"cpu": 2, "gpu": 1, "link": 0}


def _scale(total_s: float) -> tuple[float, str]:
    for factor, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "us")):
        if total_s * factor >= 1.0:
            return factor, unit
    return 1e9, "ns"


def timeline_figure(schedule: dict, title: str = ""):
    """A matplotlib Figure of ``schedule`` (a ``Schedule.to_dict()``): one bar per step on its lane, the
    critical path's steps underlined in black, the host code in a lighter shade than the regions."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    factor, unit = _scale(float(schedule.get("total_s") or 0.0))
    fig = Figure(figsize=(9.0, 2.6), dpi=96)
    ax = fig.add_subplot()
    for st in schedule["steps"]:
        row = LANE_ROWS[st["lane"]]
        colour = COLOURS[st["kind"]]
        width = (st["end_s"] - st["start_s"]) * factor
        host = st["lane"] == "cpu" and st.get("region") is None
        ax.barh(row, width, left=st["start_s"] * factor, height=0.6, color=colour, alpha=0.45 if host else 0.9,
                linewidth=0)
        if st["critical"]:  # a black strip under the bar
            ax.barh(row - 0.38, width, left=st["start_s"] * factor, height=0.1, color="black", linewidth=0)
    ax.set_yticks([LANE_ROWS[k] for k in ("cpu", "gpu", "link")], ["CPU", "GPU", "link"])
    ax.set_xlabel(f"time ({unit})")
    ax.set_xlim(0, max(float(schedule.get("total_s") or 0.0) * factor, 1e-12))
    handles = [Patch(color=COLOURS["cpu"], alpha=0.45, label="host code"),
               Patch(color=COLOURS["cpu"], label="region on the CPU"),
               Patch(color=COLOURS["gpu"], label="region on the GPU"),
               Patch(color=COLOURS["h2d"], label="copy in"), Patch(color=COLOURS["d2h"], label="copy out"),
               Patch(color="black", label="critical path")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=6, fontsize=7, frameon=False)
    ax.set_title(title or f"whole program: {schedule['total_s'] * factor:.3g} {unit}, "
                 f"{schedule['speedup']:.3g}x the CPU run", loc="left", fontsize=10)
    return fig


def timeline_svg(schedule: dict, title: str = "") -> str:
    """The timeline as inline SVG text (the HTML report's)."""
    import io

    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "portcast", "svg.fonttype": "path"}):
        timeline_figure(schedule, title).savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def write_timeline(schedule: dict, path, title: str = "") -> Path:
    """The timeline written atomically to ``path`` (.png or .svg, by its suffix)."""
    from core.atomic import atomic_path

    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in ("png", "svg"):
        raise ValueError(f"{path}: a timeline is written as .png or .svg, not {path.suffix or 'no suffix'}")
    meta = {"Date": None} if fmt == "svg" else {"Software": None}
    with atomic_path(path) as tmp:
        timeline_figure(schedule, title).savefig(tmp, format=fmt, dpi=120, bbox_inches="tight", metadata=meta)
    return path
