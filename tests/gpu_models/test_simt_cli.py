"""``portcast simulate``: a trace file to time, counters and a sweep in one command; clear errors."""

import json

import pytest
from typer.testing import CliRunner

from gpu_models.dvfs.counter_record import load_counters
from gpu_models.scaling.dataset import read_dataset
from gpu_models.simt import synthetic_kernels as sy
from portcast.cli import app
from profiler.trace import RegionInfo, StaticTable
from profiler.tracefile import write_trace

runner = CliRunner()


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("simt")
    return write_trace(d / "triad.0.parquet", RegionInfo(name="triad"), StaticTable(), sy.stream_kernel(2048, 2))


def test_single_run_json_and_counters(trace_file, tmp_path):
    out, cnt = tmp_path / "run.json", tmp_path / "c.json"
    res = runner.invoke(app, ["simulate", str(trace_file), "--gpu", "gtx480", "--out", str(out),
                              "--counters-out", str(cnt)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "portcast.simt.run" and doc["region"] == "triad" and doc["sm_count"] == 15
    assert doc["time_ns"] == pytest.approx(doc["cycles"] * 1000 / 700)
    assert doc["crisp"]["total"] == pytest.approx(doc["time_ns"])
    rec = load_counters(cnt)[0]
    assert rec.name == "triad" and rec.base_mhz == 700.0


def test_sweep_writes_dataset(trace_file, tmp_path):
    out = tmp_path / "sweep.parquet"
    res = runner.invoke(app, ["simulate", str(trace_file), "--gpu", "gtx480", "--sweep", "2,15;350,700;924",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    ds = read_dataset(out)
    assert ds.grid().shape == (2, 2, 1) and ds.kernels == ["triad"]


@pytest.mark.parametrize("args, message", [
    (["--gpu", "b300"], "unknown GPU preset 'b300'"),
    (["--sweep", "1;2"], "--sweep must be"),
    (["--out", "x.csv"], "a single run is written as .json"),
    (["--block-size", "0"], "block_size must be a positive integer"),
])
def test_bad_input_is_one_line(trace_file, args, message):
    res = runner.invoke(app, ["simulate", str(trace_file), *args])
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


def test_missing_trace():
    res = runner.invoke(app, ["simulate", "/nonexistent/trace.parquet"])
    assert res.exit_code == 2 and "no such trace file" in res.output


def test_dvfs_predict_takes_a_trace_directly(trace_file, tmp_path):
    """`portcast dvfs predict --counters TRACE` runs the timing model; same numbers as going through a counter file."""
    cnt, direct, via = tmp_path / "c.json", tmp_path / "direct.json", tmp_path / "via.json"
    assert (
        runner.invoke(app, ["simulate", str(trace_file), "--gpu", "gtx480", "--counters-out", str(cnt)]).exit_code == 0
    )
    res = runner.invoke(app, ["dvfs", "predict", "--counters", str(trace_file), "--gpu", "gtx480",
                              "--targets", "350,500", "--out", str(direct)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["dvfs", "predict", "--counters", str(cnt), "--targets", "350,500", "--out", str(via)])
    assert res.exit_code == 0, res.output
    a, b = json.loads(direct.read_text())["predictions"], json.loads(via.read_text())["predictions"]
    assert len(a) == len(b) >= 2
    for x, y in zip(a, b):
        assert x["model"] == y["model"] and x["target_mhz"] == y["target_mhz"]
        assert x["pred_time"] == pytest.approx(y["pred_time"], rel=1e-12)
