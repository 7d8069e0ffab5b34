"""The whole program's timeline picture (portcast/timeline_plot.py): one bar per step on its lane, a strip under
each step of the critical path, drawn from the schedule's JSON data; written atomically as PNG or SVG."""

import json

import pytest

from gpu_models.whole_program import Program, Segment, schedule
from portcast.timeline_plot import LANE_ROWS, timeline_figure, timeline_svg, write_timeline


def small_schedule():
    prog = Program((Segment("setup", 1.0, writes=("A",)),
                    Segment("k #0", 10.0, region="k", gpu_s=5.0, reads=("A",), writes=("B",)),
                    Segment("log", 3.0, reads=("C",)),
                    Segment("output", 1.0, reads=("B",))), {"A": 8, "B": 8, "C": 8})
    return schedule(prog, {"k"}, lambda b: 1.0).to_dict()


def test_each_step_is_a_bar_on_its_lane_and_the_critical_ones_are_underlined():
    d = json.loads(json.dumps(small_schedule()))  # what a saved report holds
    ax = timeline_figure(d).axes[0]
    bars = [(round(p.get_x(), 6), round(p.get_width(), 6), round(p.get_y() + p.get_height() / 2, 6))
            for p in ax.patches]
    # the run takes 9 s: drawn in seconds
    steps = [(0.0, 1.0, LANE_ROWS["cpu"]), (1.0, 1.0, LANE_ROWS["link"]), (2.0, 5.0, LANE_ROWS["gpu"]),
             (1.0, 3.0, LANE_ROWS["cpu"]), (7.0, 1.0, LANE_ROWS["link"]), (8.0, 1.0, LANE_ROWS["cpu"])]
    critical = [(x, w, row - 0.38) for (x, w, row), st in zip(steps, d["steps"]) if st["critical"]]
    assert sorted(bars) == sorted(steps + critical)
    assert len(critical) == 5  # everything but the host code beside the kernel
    assert ax.get_xlabel() == "time (s)"


def test_written_as_png_or_svg_and_nothing_else(tmp_path):
    d = small_schedule()
    png = write_timeline(d, tmp_path / "t.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = write_timeline(d, tmp_path / "t.svg")
    assert svg.read_text().lstrip().startswith("<?xml") and timeline_svg(d).startswith("<svg")
    with pytest.raises(ValueError, match=r"t\.jpg: a timeline is written as \.png or \.svg, not \.jpg"):
        write_timeline(d, tmp_path / "t.jpg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.png", "t.svg"]
