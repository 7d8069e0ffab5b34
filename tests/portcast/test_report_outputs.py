"""The profile report as a user gets it: `portcast profile --json` (stdout is one JSON document, the script's own
prints go to stderr), `--report out.html` (one self-contained page), and `portcast.profile(...)` in Python and
Jupyter. The page in a real browser: tests/portcast/test_report_browser.py."""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import portcast
from portcast.cli import app
from portcast.profile_report import FORMAT, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
SAXPY = ROOT / "examples" / "saxpy.py"
PORTCAST = [sys.executable, "-m", "portcast"]


def _portcast(*args, cwd):
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([*PORTCAST, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


@pytest.fixture(scope="module")
def saxpy_json(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("json")
    res = _portcast("profile", str(SAXPY), "--no-progress", "--json", "--report", "saxpy.html", "--", "4000",
                    cwd=cwd)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout), res, cwd


def test_json_is_the_only_thing_on_stdout(saxpy_json):
    doc, res, _ = saxpy_json
    assert doc["format"] == FORMAT and doc["schema_version"] == SCHEMA_VERSION
    # the script's own print went to stderr, with the notice of the page written
    assert "saxpy n=4000: checksum" in res.stderr and "saxpy n=4000" not in res.stdout
    assert "wrote the report saxpy.html" in res.stderr


def test_json_region_summary_and_hot_lines(saxpy_json):
    doc, _, _ = saxpy_json
    assert doc["target"] == str(SAXPY) and doc["gpu"] == "a100" and doc["exit_code"] == 0
    (r,) = doc["regions"]
    assert (r["name"], r["invocation"], r["complete"], r["threads"]) == ("saxpy", 0, True, 4000)
    # 4000 iterations of `y[i] = a * x[i] + y[i]` and the loop header
    assert r["records"] == sum(r["op_counts"].values()) == 28_000
    assert r["op_counts"]["LOAD"] == 8000 and r["op_counts"]["STORE"] == 4000
    assert r["mix"]["mem"] == pytest.approx(12_000 / 28_000)
    hot = r["hot_lines"]
    assert [(Path(h["file"]).name, h["line"]) for h in hot] == [("saxpy.py", 18), ("saxpy.py", 17)]
    assert hot[0]["text"] == "y[i] = a * x[i] + y[i]" and hot[0]["records"] == 20_000
    assert sum(h["records"] for h in hot) == r["records"]
    assert r["thread_space"]["how"] == "marked" and r["thread_space"]["loops"][0]["threads"] == 4000


def test_json_prediction_bounds_and_terms_agree(saxpy_json):
    doc, _, _ = saxpy_json
    r = doc["regions"][0]
    p = r["prediction"]
    assert p["gpu"] == "a100" and p["kernel_s"] > 0 and p["cpu_s"] > 0
    assert p["speedup"] == pytest.approx(p["cpu_s"] / p["kernel_s"])
    assert p["speedup_with_transfers"] == pytest.approx(p["cpu_s"] / (p["kernel_s"] + p["transfer_s"]))
    # the CPU time is the median of runs of saxpy's Python loop as written; the interval is from their quartiles
    assert r["cpu_baseline"]["label"] == "Python as written" and r["cpu_baseline"]["median_s"] == p["cpu_s"]
    assert p["speedup_low"] == p["cpu_q25_s"] / p["kernel_s"] <= p["speedup"] <= p["speedup_high"]
    # x and y are read (2 x 4000 x 8 B), y written back
    assert (p["read_bytes"], p["written_bytes"]) == (64_000, 32_000)
    # the term contributions add up to the predicted log time
    assert sum(c["contribution"] for c in r["contributions"]) == pytest.approx(math.log(p["kernel_s"]), abs=1e-9)
    b = r["bounds"]
    assert b["bound"] == max(b["resources"], key=lambda x: x["time_s"])["resource"]
    assert b["lower_bound_s"] == pytest.approx(max(x["time_s"] for x in b["resources"]))
    assert {k["name"] for k in r["key_features"]} >= {"warp_threads", "warp_coalescing"}
    assert r["features"]["warp_threads"] == 4000


def test_report_page_is_self_contained(saxpy_json):
    _, _, cwd = saxpy_json
    page = (cwd / "saxpy.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for section in ("Traced regions", "Region saxpy #0", "What bounds the GPU time on", "The prediction's terms",
                    "Where the region sits against the training data", "GPU-relevant features", "Hot lines",
                    "GPU thread space", "Instruction mix and memory behaviour"):
        assert section in page, section
    assert page.count("<svg") >= 5  # terms, position, mix, reuse distance, strides
    assert "y[i] = a * x[i] + y[i]" in page
    # nothing is fetched: no scripts, no external links, images or fonts
    assert "<script" not in page and not re.search(r"(src|href)=\"?(https?:)?//", page)
    assert "@import" not in page and "url(" not in page.replace("url(#", "")


def test_report_does_not_overwrite_without_force(saxpy_json):
    _, _, cwd = saxpy_json
    res = CliRunner().invoke(app, ["profile", str(SAXPY), "--no-progress", "--report", str(cwd / "saxpy.html")])
    assert res.exit_code == 2 and "exists: pass --force to replace it" in " ".join(res.output.split())
    res = CliRunner().invoke(app, ["profile", str(SAXPY), "--report", str(SAXPY)])
    assert res.exit_code == 2 and "would destroy the input" in " ".join(res.output.split())


def test_json_when_the_script_raises(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import numpy as np\nimport portcast\n\n\n@portcast.region('w')\ndef w(x):\n"
                      "    for i in portcast.parallel(range(x.shape[0])):\n        if i == 7:\n"
                      "            raise ValueError('element 7')\n        x[i] += 1\n\n\nw(np.zeros(20))\n")
    res = _portcast("profile", str(script), "--no-progress", "--json", cwd=tmp_path)
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert doc["exit_code"] == 1 and doc["error"] == "ValueError: element 7"
    (r,) = doc["regions"]
    assert r["complete"] is False and r["prediction"] is None and r["no_prediction"] == "the region did not complete"
    assert 'raise ValueError' in res.stderr  # the user's traceback still goes to stderr


def test_json_without_any_region(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("print('no region here')\n")
    res = _portcast("profile", str(script), "--json", cwd=tmp_path)
    assert res.returncode == 0 and json.loads(res.stdout)["regions"] == []


def test_report_and_json_refused_where_they_do_not_apply():
    res = CliRunner().invoke(app, ["profile", "--function", f"{SAXPY}:saxpy", "--at-size", "100000", "--json"])
    assert res.exit_code == 2 and "--report and --json cover a traced run: not with --at-size" in res.output


def test_python_api_returns_the_report_and_renders_in_jupyter(tmp_path):
    sys.path.insert(0, str(SAXPY.parent))
    try:
        import saxpy
    finally:
        sys.path.remove(str(SAXPY.parent))
    report = portcast.profile(saxpy.saxpy, saxpy.portcast_inputs(2000), gpu="gtx1080")
    (r,) = report.regions
    assert r.threads == 2000 and r.prediction["gpu"] == "gtx1080"
    # (the invocation number counts the region's earlier calls in this process)
    assert re.fullmatch(r"<ProfileReport of saxpy: saxpy #\d+: \S+ \S+ on gtx1080, speedup \S+x>", repr(report))
    frag = report._repr_html_()  # what a notebook cell shows
    assert frag.startswith("<style>") and "<html" not in frag and f"Region {r.label}" in frag and "<svg" in frag
    back = json.loads(report.to_json())
    assert back["regions"][0]["prediction"]["kernel_s"] == r.prediction["kernel_s"]
    out = report.write_html(tmp_path / "r.html")
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_provisional_model_report_carries_its_speedup(tmp_path):
    res = _portcast("profile", "--function", f"{SAXPY}:saxpy", "--no-progress", "--model", "provisional", "--json",
                    cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (r,) = json.loads(res.stdout)["regions"]
    assert r["prediction"] is None and r["speedup_model"]["predicted_speedup"] > 0
    # the target is the provisional model's own, and says so, not the --gpu default
    doc = json.loads(res.stdout)
    assert doc["model_kind"] == "xapp" and doc["gpu"] == "h100"
    assert doc["gpu_label"] == r["speedup_model"]["label"] == "provisional model (simulated H100)"


def _terminal_figures(text: str) -> dict:
    """GPU time, target, bound and model file of the one region as the terminal prints them."""
    flat = " ".join(text.split())
    m = re.search(r"GPU time of saxpy #0 on (.+?): predicted kernel time (\S+ \S+)", flat)
    assert m, text
    bound = re.search(r"^│ (\w+) \* ", text, re.M)
    model = re.search(r"model: (\S+); trained on", flat)
    return {"gpu_label": m.group(1), "kernel": m.group(2), "bound": bound.group(1), "model_file": model.group(1)}


def _page_figures(page: str) -> dict:
    """The same figures as the HTML report gives them."""
    import html

    m = re.search(r"Predicted kernel time on (.+?): <b>(.+?)</b>", page)
    bound = re.search(r"<tr class=\"bound\"><td>(\w+) \*</td>", page)
    model = re.search(r"<p class=\"dim\">Model: <code>(.+?)</code></p>", page)
    return {"gpu_label": html.unescape(m.group(1)), "kernel": m.group(2), "bound": bound.group(1),
            "model_file": html.unescape(model.group(1))}


def test_report_and_json_print_the_terminals_numbers(tmp_path, saxpy_json):
    """The terminal, the HTML page written beside it and the JSON give one region the same GPU time, bound,
    target label and model file: all three read the same RegionPrediction."""
    from portcast.bounds_report import TITLES
    from portcast.formatting import format_time

    res = _portcast("profile", str(SAXPY), "--no-progress", "--report", "t.html", "--", "4000", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    term = _terminal_figures(res.stdout)
    assert term == _page_figures((tmp_path / "t.html").read_text())
    assert term["gpu_label"] == "NVIDIA A100 SXM4 40 GB (a100, Ampere)"
    assert term["model_file"] == str(ROOT / "predictor" / "models" / "gputime.json")
    # --json with --report: the document and the page of the same run
    doc, _, cwd = saxpy_json
    r = doc["regions"][0]
    from_json = {"gpu_label": r["prediction"]["gpu_label"], "kernel": format_time(r["prediction"]["kernel_s"]),
                 "bound": TITLES[r["bounds"]["bound"]], "model_file": r["prediction"]["model_file"]}
    assert from_json == _page_figures((cwd / "saxpy.html").read_text())
    assert doc["gpu_label"] == from_json["gpu_label"] and doc["model_file"] == from_json["model_file"]
    assert from_json["gpu_label"] == term["gpu_label"] and from_json["model_file"] == term["model_file"]
