"""``portcast dvfs``: predict, control, plot and their error handling; plots written as PNG/SVG."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gpu_models.dvfs.clock_plots import plot_time_vs_clock
from gpu_models.dvfs.counter_record import CounterError
from portcast.cli import app

runner = CliRunner()

FIG6_CSV = (
    "name,base_mhz,total,load_stall,store_stall,lcp,lcp_comp,load_outstanding,lead,miss_count,miss_latency,crit\n"
    "fig6,1000,31,4,1,20,17,24,18,3,8,20\n"
)


@pytest.fixture()
def fig6_csv(tmp_path):
    p = tmp_path / "fig6.csv"
    p.write_text(FIG6_CSV)
    return p


def test_predict_writes_every_model(tmp_path, fig6_csv):
    out = tmp_path / "pred.json"
    res = runner.invoke(
        app, ["dvfs", "predict", "--counters", str(fig6_csv), "--targets", "500,2000", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "portcast.dvfs.predictions" and doc["schema_version"] == 1
    got = {(r["model"], r["target_mhz"]): r["pred_time"] for r in doc["predictions"]}
    assert got[("crisp", 500.0)] == 54.0 and got[("crisp", 2000.0)] == 26.0
    assert got[("crit", 500.0)] == 42.0 and got[("stall", 500.0)] == 58.0 and got[("lead", 500.0)] == 44.0
    assert got[("miss", 500.0)] == 38.0 and got[("crisp-l", 500.0)] == 52.0


def test_predict_base_mhz_option(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("total,crit\n100,50\n")
    out = tmp_path / "p.csv"
    res = runner.invoke(app, ["dvfs", "predict", "--counters", str(p), "--base-mhz", "700", "--targets", "350",
                              "--model", "crit", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "crit,700.0,350.0,100.0,150.0,1.5" in out.read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--targets", "500"], "field 'load_stall': stalls longer than the total"),
        (["--targets", "fast"], "--targets: expected comma-separated numbers"),
        (["--targets", "-5"], "--targets: expected positive numbers"),
        (["--targets", "500", "--model", "magic"], "unknown model 'magic'"),
    ],
)
def test_predict_errors_exit_2(tmp_path, args, message):
    p = tmp_path / "bad.csv"
    p.write_text("name,base_mhz,total,load_stall,store_stall\na,700,31,4,1\nb,700,31,40,1\n")
    if "stalls" not in message:
        p.write_text("name,base_mhz,total,crit\na,700,31,4\n")
    res = runner.invoke(app, ["dvfs", "predict", "--counters", str(p), *args])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "error:" in text and message in text and "Traceback" not in text


def test_predict_missing_counter_and_base_mismatch(tmp_path, fig6_csv):
    p = tmp_path / "c.csv"
    p.write_text("name,base_mhz,total,crit\nk,700,10,4\n")
    res = runner.invoke(app, ["dvfs", "predict", "--counters", str(p), "--targets", "350", "--model", "crisp"])
    assert res.exit_code == 2 and "model CRISP needs field 'lcp'" in " ".join(res.output.split())
    res = runner.invoke(app, ["dvfs", "predict", "--counters", str(fig6_csv), "--targets", "350", "--base-mhz", "700"])
    assert res.exit_code == 2 and "differs from --base-mhz 700" in " ".join(res.output.split())
    res = runner.invoke(app, ["dvfs", "predict", "--counters", str(tmp_path / "none.csv"), "--targets", "350"])
    assert res.exit_code == 2 and "no such counter file" in " ".join(res.output.split())


def test_control_decisions(tmp_path):
    p = tmp_path / "iv.csv"
    p.write_text("name,base_mhz,total,crit\nmem,700,100,100\ncomp,700,100,0\nhalf,700,100,50\n")
    res = runner.invoke(app, ["dvfs", "control", "--counters", str(p), "--model", "crit", "--objective", "edp"])
    assert res.exit_code == 0, res.output
    rows = {
        line.split("│")[1].strip(): line.split("│")[3].strip()
        for line in res.output.splitlines()
        if line.count("│") >= 6
    }
    assert rows == {"mem": "100", "comp": "700", "half": "600"}
    res = runner.invoke(app, ["dvfs", "control", "--counters", str(p), "--objective", "fast"])
    assert res.exit_code == 2 and "--objective must be one of" in res.output
    res = runner.invoke(app, ["dvfs", "control", "--counters", str(p), "--pstates", "100-0.5"])
    assert res.exit_code == 2 and "MHZ:VOLT" in res.output
    res = runner.invoke(app, ["dvfs", "control"])
    assert res.exit_code == 2 and "exactly one of" in res.output


def test_control_custom_pstates(tmp_path):
    p = tmp_path / "iv.json"
    p.write_text(json.dumps([{"name": "mem", "base_mhz": 1000, "total": 10, "crit": 10}]))
    res = runner.invoke(
        app, ["dvfs", "control", "--counters", str(p), "--model", "crit", "--pstates", "500:0.8,1000:1.0"]
    )
    assert res.exit_code == 0, res.output
    assert "500" in res.output.split("mem")[1]


def test_plot_commands(tmp_path):
    out = tmp_path / "o.png"
    res = runner.invoke(app, ["dvfs", "plot", "--kernel", "overlap-0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "b.svg"
    res = runner.invoke(app, ["dvfs", "plot", "--source", "titanx", "--kernel", "backprop@3505", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "<svg" in out.read_text()
    out = tmp_path / "c.svg"  # a new file: an existing one is refused before the input is looked at
    res = runner.invoke(app, ["dvfs", "plot", "--source", "titanx", "--kernel", "nothing@1", "--out", str(out)])
    assert res.exit_code == 2 and "unknown Titan X kernel" in res.output
    res = runner.invoke(app, ["dvfs", "plot", "--kernel", "nothing", "--out", str(out)])
    assert res.exit_code == 2 and "unknown synthetic kernel" in res.output


def test_evaluate_rejects_bad_top_k(tmp_path):
    res = runner.invoke(app, ["dvfs", "evaluate", "--out", str(tmp_path / "x.md"), "--top-k", "1"])
    assert res.exit_code == 2 and "--top-k must be between 2 and 15" in res.output


def test_plot_function_checks(tmp_path):
    with pytest.raises(CounterError, match="written as .png or .svg"):
        plot_time_vs_clock([1, 2], [1, 2], {}, tmp_path / "x.pdf")
    with pytest.raises(CounterError, match="prediction 'crisp' has 1 values for 2 clocks"):
        plot_time_vs_clock([1, 2], [1, 2], {"crisp": [1]}, tmp_path / "x.png")
    p = plot_time_vs_clock([100, 200], [2.0, 1.0], {"crisp": [2.0, 1.0]}, tmp_path / "ok.svg", normalize=False)
    assert p.exists() and not list(tmp_path.glob(".*"))
