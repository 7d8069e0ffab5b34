"""The CPU side of the speedup as a user sees it: what was timed (the region as written, or njit-compiled), how
many runs and how well they agreed, and the speedups' interval from the CPU time's quartiles, in the terminal,
the JSON report, the HTML page and the Python API. No time is asserted: the interval arithmetic is checked on
exact numbers, and the measured reports by the relations between their own fields."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

import portcast
from portcast.cli import app
from portcast.formatting import speedup_number, speedup_text
from portcast.report import print_gpu_prediction
from predictor.gputime_region import GpuPrediction
from profiler.baseline import Baseline, timing_words
from profiler.repeat_timing import RepeatRule
from profiler.session import BLOCK_NOT_RERUN

HERE = Path(__file__).resolve().parent
REGIONS = HERE / "cpu_baseline_regions.py"
QUICK = ["--baseline-budget", "0.05"]  # keep the CLI runs short; the rule itself is tested on a fake clock
runner = CliRunner()

# "(NumPy as written, median of 1,234 runs, IQR 5.6%)" or "(..., IQR 68%: not below the 10% target in the 50 ms
# budget)"
WORDS = r"median of [0-9,]+ runs?, IQR [0-9.]+%(: [^)]+)?"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _prediction(**cpu) -> GpuPrediction:
    return GpuPrediction(gpu="p100", gpu_name="NVIDIA Tesla P100", generation="Pascal", extrapolated=False,
                         kernel_s=0.25, transfer_s=0.25, read_bytes=1000, written_bytes=500, cpu_s=cpu.pop("cpu_s"),
                         simulated_s=None, out_of_range=[], model_file="m.json", trained_on="t", inputs={}, **cpu)


def test_the_speedup_interval_is_the_speedup_at_the_cpu_quartiles():
    p = _prediction(cpu_s=1.0, cpu_q25_s=0.75, cpu_q75_s=1.5, cpu_baseline="NumPy as written, median of 12 runs")
    assert (p.speedup, p.speedup_range) == (4.0, (3.0, 6.0))
    assert (p.speedup_with_transfers, p.speedup_with_transfers_range) == (2.0, (1.5, 3.0))
    d = p.to_dict()
    assert (d["speedup_low"], d["speedup_high"], d["speedup_with_transfers_low"], d["speedup_with_transfers_high"]) \
        == (3.0, 6.0, 1.5, 3.0)
    assert (d["cpu_q25_s"], d["cpu_q75_s"], d["cpu_baseline"]) == (0.75, 1.5, "NumPy as written, median of 12 runs")
    # no quartiles (an old trace, or no CPU time): no interval
    q = _prediction(cpu_s=1.0)
    assert q.speedup == 4.0 and q.speedup_range is None and q.to_dict()["speedup_low"] is None
    assert _prediction(cpu_s=None, cpu_q25_s=0.75, cpu_q75_s=1.5).speedup_range is None


def test_set_cpu_takes_median_quartiles_and_words_from_a_baseline():
    b = Baseline(seconds=1.0, how="python", kind="as-written", timing={
        "runs": 2000, "median_s": 1.0, "q25_s": 0.75, "q75_s": 1.5, "min_s": 0.5, "max_s": 2.0, "spread": 0.75,
        "target_spread": 0.1, "budget_s": 1.0, "reached": False, "stopped_by": "budget"})
    p = _prediction(cpu_s=None)
    p.set_cpu(b, numpy=True)
    assert (p.cpu_s, p.cpu_q25_s, p.cpu_q75_s) == (1.0, 0.75, 1.5)
    assert p.cpu_baseline == ("NumPy as written, median of 2,000 runs, IQR 75%: not below the 10% target in the "
                              "1 s budget")
    p.set_cpu(None)
    assert (p.cpu_s, p.cpu_q25_s, p.cpu_q75_s, p.cpu_baseline) == (None, None, None, "")


def test_the_printed_lines():
    p = _prediction(cpu_s=1.0, cpu_q25_s=0.75, cpu_q75_s=1.5,
                    cpu_baseline="NumPy as written, median of 2,000 runs, IQR 3.1%")
    out = io.StringIO()
    print_gpu_prediction(Console(file=out, width=200, color_system=None), "nbody #0", p)
    assert out.getvalue().splitlines() == [
        "GPU time of nbody #0 on NVIDIA Tesla P100 (p100, Pascal): predicted kernel time 250 ms",
        "  CPU time of the region here (NumPy as written, median of 2,000 runs, IQR 3.1%): 1 s -> speedup 4x (3-6)",
        "  with the copies over the host link (1 kB in, 500 B out: 250 ms): speedup 2x (1.5-3)",
    ]
    assert speedup_text(1234.4, (1000.2, 1500.7)) == "1,234x (1,000-1,501)"
    assert [speedup_number(v) for v in (0.1914, 5.126, 999.4, 999.94, 12345.6)] == \
        ["0.191", "5.13", "999", "1,000", "12,346"]


@pytest.mark.parametrize("timing, words", [
    ({"runs": 2000, "spread": 0.031, "reached": True}, "median of 2,000 runs, IQR 3.1%"),
    ({"runs": 1, "spread": 0.0, "reached": False, "target_spread": 0.1, "budget_s": 1.0, "stopped_by": "budget"},
     "median of 1 run, IQR 0%: only 1 in the 1 s budget"),
    ({"runs": 40, "spread": 0.68, "reached": False, "target_spread": 0.1, "budget_s": 0.05, "stopped_by": "budget"},
     "median of 40 runs, IQR 68%: not below the 10% target in the 50 ms budget"),
    ({"runs": 100000, "spread": 0.2, "reached": False, "target_spread": 0.05, "budget_s": 9.0,
      "stopped_by": "max runs"}, "median of 100,000 runs, IQR 20%: not below the 5% target in 100,000 runs"),
])
def test_timing_words(timing, words):
    assert timing_words(timing) == words


@pytest.fixture(scope="module")
def nbody_json(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("nbody")
    res = runner.invoke(app, ["profile", "--function", f"{REGIONS}:step", "--no-progress", "--json", "--report",
                              str(cwd / "nbody.html"), *QUICK])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), (cwd / "nbody.html").read_text()


def test_numpy_region_report_says_it_was_timed_as_written(nbody_json):
    doc, _ = nbody_json
    assert doc["schema_version"] == 2
    (r,) = doc["regions"]
    b, p = r["cpu_baseline"], r["prediction"]
    assert (b["kind"], b["how"], b["as_written"], b["label"], b["note"], b["error"]) == \
        ("as-written", "python", True, "NumPy as written", None, None)
    assert b["budget_s"] == 0.05 and b["target_spread"] == 0.1 and b["runs"] >= 1
    assert b["stopped_by"] in ("spread", "budget", "max runs") and isinstance(b["reached"], bool)
    assert b["description"] == p["cpu_baseline"] and re.fullmatch(rf"NumPy as written, {WORDS}", b["description"])
    assert r["cpu_time_s"] == b["median_s"] == p["cpu_s"] and r["cpu_how"] == "python" and r["cpu_not_measured"] is None
    assert b["min_s"] <= b["q25_s"] <= b["median_s"] <= b["q75_s"] <= b["max_s"]
    assert b["spread"] == pytest.approx((b["q75_s"] - b["q25_s"]) / b["median_s"], rel=1e-12)
    # the interval: the speedups at the CPU time's quartiles
    assert (p["cpu_q25_s"], p["cpu_q75_s"]) == (b["q25_s"], b["q75_s"])
    assert p["speedup_low"] == p["cpu_q25_s"] / p["kernel_s"] and p["speedup_high"] == p["cpu_q75_s"] / p["kernel_s"]
    copies = p["kernel_s"] + p["transfer_s"]
    assert p["speedup_with_transfers_low"] == p["cpu_q25_s"] / copies
    assert p["speedup_with_transfers_high"] == p["cpu_q75_s"] / copies


def test_numpy_region_page_shows_what_was_timed_and_the_interval(nbody_json):
    doc, page = nbody_json
    p = doc["regions"][0]["prediction"]
    low, high = speedup_number(p["speedup_low"]), speedup_number(p["speedup_high"])
    assert f"CPU time here ({p['cpu_baseline']})" in page
    assert f"speedup {speedup_number(p['speedup'])}x ({low}&ndash;{high})" in page


def test_cli_prints_what_was_timed_and_the_speedup_interval():
    res = runner.invoke(app, ["profile", str(REGIONS), "--no-progress", *QUICK])
    assert res.exit_code == 0, res.output
    out = _flat(res.output)
    num = r"[0-9][0-9.,e+]*"
    assert re.search(rf"baseline nbody #0: uninstrumented [0-9.e-]+ ms \(NumPy as written, {WORDS}\); traced", out), out
    assert re.search(rf"CPU time of the region here \(NumPy as written, {WORDS}\): [0-9.]+ (us|ms|s) -> speedup "
                     rf"{num}x \({num}-{num}\)", out), out
    assert re.search(rf"with the copies over the host link \([^)]*\): speedup {num}x \({num}-{num}\)", out), out


def test_cli_njit_kind_says_portcast_compiled_it():
    res = runner.invoke(app, ["profile", "--function", f"{REGIONS}:step", "--no-progress", "--baseline-kind", "njit",
                              *QUICK])
    assert res.exit_code == 0, res.output
    out = _flat(res.output)
    assert re.search(rf"CPU time of the region here \(njit-compiled by Portcast, {WORDS}\): ", out), out


def test_a_marked_block_gets_no_cpu_time_and_the_output_says_why():
    res = runner.invoke(app, ["profile", str(REGIONS), "--no-progress", "--json", *QUICK, "--", "48", "block"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    by = {r["name"]: r for r in doc["regions"]}
    assert by["drift"]["cpu_time_s"] is None and by["drift"]["cpu_baseline"] is None
    assert by["drift"]["cpu_not_measured"] == BLOCK_NOT_RERUN
    assert by["nbody"]["cpu_not_measured"] is None and by["nbody"]["cpu_baseline"]["label"] == "NumPy as written"
    res = runner.invoke(app, ["profile", str(REGIONS), "--no-progress", "--no-features", *QUICK, "--", "48", "block"])
    assert f"baseline drift #0: not measured ({BLOCK_NOT_RERUN})" in _flat(res.output)
    res = runner.invoke(app, ["profile", str(REGIONS), "--no-progress", "--json", "--no-baseline"])
    assert json.loads(res.stdout)["regions"][0]["cpu_not_measured"] == "not asked for (--no-baseline)"


@pytest.mark.parametrize("args, message", [
    (["--baseline-kind", "fast"], "--baseline-kind must be as-written or njit, not 'fast'"),
    (["--baseline-spread", "0"], "--baseline-spread must be a number > 0, got 0.0"),
    (["--baseline-budget", "-1"], "--baseline-budget must be a number > 0, got -1.0"),
    (["--baseline-budget", "nan"], "--baseline-budget must be a number > 0, got nan"),
    (["--no-baseline", "--baseline-kind", "njit"],
     "--baseline-kind sets the uninstrumented CPU timing, which --no-baseline turns off"),
    (["--native", "--baseline-spread", "0.2"],
     "--baseline-spread sets the uninstrumented CPU timing, which --native does not make"),
])
def test_cli_refuses_bad_baseline_options_in_one_line(args, message):
    res = runner.invoke(app, ["profile", str(REGIONS), "--no-progress", *args])
    assert res.exit_code == 2, res.output
    assert message in _flat(res.output)


def test_region_names_are_printed_as_text(tmp_path):
    script = tmp_path / "marked.py"
    script.write_text("import numpy as np\nimport portcast\n\n\n@portcast.region('[red]hot[/red]')\n"
                      "def f(x):\n    return x * 2.0\n\n\nf(np.ones(8))\n")
    res = runner.invoke(app, ["profile", str(script), "--no-progress", "--no-features", *QUICK])
    assert res.exit_code == 0, res.output
    assert re.search(r"baseline \[red\]hot\[/red\] #0: uninstrumented .* \(NumPy as written, ", _flat(res.output))


def test_python_api_takes_the_kind_and_rule_and_says_what_was_timed():
    pos, vel, mass, dt = (np.random.default_rng(1).random((32, 3)), np.zeros((32, 3)),
                          np.random.default_rng(2).random(32), 0.01)
    import cpu_baseline_regions as R

    rule = RepeatRule(budget_s=0.05)
    report = portcast.profile(R.step, (pos, vel, mass, dt), baseline_rule=rule)
    r = report.regions[0]
    assert (r.cpu_baseline["label"], r.cpu_baseline["budget_s"]) == ("NumPy as written", 0.05)
    assert r.prediction["cpu_baseline"] == r.cpu_baseline["description"]
    (rp,) = portcast.predict(R.step, (pos, vel, mass, dt), baseline_kind="njit", baseline_rule=rule)
    p = rp.prediction
    assert p.cpu_baseline.startswith("njit-compiled by Portcast, median of ")
    assert p.speedup_range == (p.cpu_q25_s / p.kernel_s, p.cpu_q75_s / p.kernel_s)
    with pytest.raises(ValueError, match="baseline_kind must be one of as-written, njit, got 'numpy'"):
        portcast.predict(R.step, (pos, vel, mass, dt), baseline_kind="numpy")
    report = portcast.profile(R.step, (pos, vel, mass, dt), baseline=False)
    assert report.regions[0].cpu_not_measured == "not asked for (baseline=False)"
