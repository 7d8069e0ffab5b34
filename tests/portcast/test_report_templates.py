"""The HTML report's templates (portcast/templates/, Jinja2 with autoescaping): a user's string with markup or
template syntax in a region name, a file name or a source line comes out as text, escaped once; a notebook
cell shows the page's own body; an installed copy carries the templates."""

import html
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

import portcast.profile_report as profile_report
from portcast.profile_report import ProfileReport, RegionReport

ROOT = Path(__file__).resolve().parents[2]
#: markup, a template expression, a template statement, an entity and a quote in one string
HOSTILE = "<script>alert(1)</script>{{ x }}{% if 1 %}&amp;\"'"
SHOWN = html.escape(HOSTILE, quote=False)  # what a reader sees, less the quotes (escaped either way)


def _region(name: str, file: str, line: str) -> RegionReport:
    loc = f"/home/u/{file}:12"
    return RegionReport(
        name=name, invocation=0, complete=False, error=f"ValueError: {line}", mode="compiled", source=f"{file}:3",
        records=1000, threads=8, wall_time_s=0.5, cpu_time_s=None, cpu_how="python",
        op_counts={"LOAD": 600, "FP_ALU": 400}, mix={"mem": 0.6, "ctrl": 0.0, "int": 0.0, "fp": 0.4, "other": 0.0},
        trace_files=[f"/t/{file}.parquet"], hot_lines=[{"location": loc, "records": 900, "share": 0.9, "text": line}],
        features={}, key_features=[{"name": name, "value": 1.5, "meaning": line, "training_min": None,
                                    "training_max": None}],
        weak_spots=[{"feature": "warp_coalescing", "what": name, "why": line, "share": 0.5, "location": loc,
                     "text": line}],
        thread_space={"how": "marked", "loops": [{"header": line, "location": loc, "dims": 1, "launches": 1,
                                                  "threads": 8, "verdict": "parallel",
                                                  "sunk": [{"location": loc, "text": line}]}]},
        library_calls=[{"call": name, "location": loc, "calls": 2, "flops": 1e6, "bytes": 4096}],
        prediction={"gpu": "a100", "gpu_label": name, "kernel_s": 1e-5, "cpu_s": None, "speedup": None,
                    "transfer_s": 2e-6, "model_file": file, "generation": line, "extrapolated": True,
                    "out_of_range": [name], "cpu_why": line, "roofline_s": 1e-6},
        bounds={"gpu": name, "bound": "dram", "lower_bound_s": 5e-6,
                "resources": [{"resource": "dram", "title": "DRAM", "time_s": 5e-6, "share": 1.0, "meaning": line}],
                "lines": [{"what": name, "share": 0.5, "location": loc, "text": line}]},
        notes=[line], no_prediction=None)


@pytest.fixture()
def page(monkeypatch):
    monkeypatch.setattr(profile_report, "_training_points", lambda: None)  # no position plot: nothing fetched
    rep = ProfileReport(target=HOSTILE, gpu="a100", gpu_label=HOSTILE, model_file=HOSTILE, model_kind="gputime",
                        trained_on=HOSTILE, exit_code=1, error=HOSTILE,
                        regions=[_region(HOSTILE, f"my{HOSTILE}.py", f"y[i] = {HOSTILE}")])
    return rep, rep.to_html()


def test_markup_and_template_syntax_come_out_as_text(page):
    _, text = page
    assert "<script" not in text and "alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;{{ x }}{% if 1 %}&amp;amp;" in text  # inert, escaped once
    assert html.unescape(text).count(HOSTILE) >= 20  # every place a string is shown reads as the user wrote it
    for shown in (f">Region {SHOWN.split('&amp;amp;')[0]}", f"<code>y[i] = {SHOWN.split('&amp;amp;')[0]}",
                  f"my{SHOWN.split('&amp;amp;')[0]}"):
        assert shown in text, shown
    # nothing is escaped twice: the only &amp;amp; is the user's own "&amp;"
    assert "&amp;lt;" not in text and "&amp;#" not in text
    assert text.count("&amp;amp;") == html.unescape(text).count("&amp;")
    # the section's id keeps only letters, digits, - and _
    assert re.search(r'<h2 id="region-_script_alert_1_script_x_if_1_amp_-0">', text)


def test_control_characters_are_written_out(monkeypatch):
    monkeypatch.setattr(profile_report, "_training_points", lambda: None)
    rep = ProfileReport(target="t", gpu=None, gpu_label=None, model_file=None, model_kind=None, trained_on=None,
                        exit_code=0, error=None, regions=[_region("red\x1b[31mbell\x07", "f.py", "a\rb")])
    text = rep.to_html()
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert ">Region red\\x1b[31mbell\\x07 #0</h2>" in text and "a\\x0db" in text


def test_a_notebook_cell_shows_the_pages_body(page):
    rep, text = page
    frag = rep._repr_html_()
    assert frag.startswith("<style>") and "<html" not in frag and "<!DOCTYPE" not in frag
    body = text[text.index('<div class="portcast-report">'):text.rindex("</div>") + len("</div>")]
    assert body in frag
    style = text[text.index("<style>"):text.index("</style>")]
    assert frag.startswith(style)


def test_the_installed_package_carries_the_templates():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["portcast"]
    files = [p.relative_to(ROOT / "portcast").as_posix() for p in (ROOT / "portcast" / "templates").iterdir()]
    assert sorted(files) == sorted(["templates/page.html.j2", "templates/fragment.html.j2",
                                    "templates/report.html.j2", "templates/region.html.j2",
                                    "templates/macros.html.j2", "templates/report.css",
                                    "templates/program.html.j2", "templates/program_page.html.j2"])
    assert all(any(fnmatch(f, g) for g in data) for f in files)
