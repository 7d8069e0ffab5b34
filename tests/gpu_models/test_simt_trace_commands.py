"""``portcast scale`` and ``portcast dvfs`` take a region's trace directly (issue 8, point 5).

The traces are of three corpus kernels (saxpy, triad, gather; 4096 threads each, traced with the Portcast profiler).
Giving a trace to a ``scale`` command must give exactly what ``portcast simulate TRACE --sweep GRID --out D``
followed by the command on ``D`` gives; ``dvfs control --counters TRACE`` must decide exactly as on the counter
file ``simulate --counters-out`` writes. The numbers are cross-checked against single simulated runs.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from gpu_models.scaling.dataset import read_dataset
from gpu_models.simt.config import load_config
from gpu_models.simt.model import simulate
from gpu_models.simt.trace_input import load_region
from kernels.registry import get_kernel
from portcast.cli import app
from profiler.session import trace_function
from profiler.tracefile import TraceDirectorySink

runner = CliRunner()
GRID = "4,15;350,700;462,924"  # 2 x 2 x 2 configurations of the gtx480 preset
SIM = ["--gpu", "gtx480", "--sweep", GRID, "--block-size", "128"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Trace files of saxpy, triad and gather, and the datasets ``portcast simulate --sweep`` writes from them."""
    d = tmp_path_factory.mktemp("corpus")
    traces, datasets = {}, {}
    for name in ("saxpy", "triad", "gather"):
        spec = get_kernel(name)
        sub = d / name
        trace_function(spec.cpu, spec.make_inputs(4096, 0), region=name, sinks=[TraceDirectorySink(sub)])
        (traces[name],) = sorted(sub.glob("*.parquet"))
        datasets[name] = d / f"{name}_sweep.parquet"
        r = runner.invoke(app, ["simulate", str(traces[name]), *SIM, "--out", str(datasets[name])])
        assert r.exit_code == 0, r.output
    return traces, datasets


def _model(path):
    doc = json.loads(path.read_text())
    doc["meta"].pop("data")  # the data's source label (file names), the only thing allowed to differ
    return doc


def test_scale_train_on_traces_equals_train_on_simulated_datasets(corpus, tmp_path):
    traces, datasets = corpus
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    opts = ["--base", "15,700,924", "--clusters", "2"]
    r = runner.invoke(app, ["scale", "train", str(traces["saxpy"]), str(traces["triad"]), "-o", str(a), *opts, *SIM])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["scale", "train", str(datasets["saxpy"]), str(datasets["triad"]), "-o", str(b), *opts])
    assert r.exit_code == 0, r.output
    ma, mb = _model(a), _model(b)
    assert ma == mb
    assert ma["params"]["base"] == [15, 700.0, 924.0] and ma["meta"]["counters"] == "columns"
    assert ma["grid"] == {"sm_counts": [4, 15], "core_mhz": [350.0, 700.0], "mem_mhz": [462.0, 924.0]}


def test_scale_predict_on_a_trace_equals_predict_on_its_dataset(corpus, tmp_path):
    traces, datasets = corpus
    model = tmp_path / "m.json"
    r = runner.invoke(app, ["scale", "train", str(datasets["saxpy"]), str(datasets["triad"]), "-o", str(model),
                            "--base", "15,700,924", "--clusters", "2"])
    assert r.exit_code == 0, r.output
    via, direct = tmp_path / "via.csv", tmp_path / "direct.csv"
    r = runner.invoke(app, ["scale", "predict", str(model), str(datasets["saxpy"]), "-o", str(via)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["scale", "predict", str(model), str(traces["saxpy"]), "-o", str(direct), *SIM])
    assert r.exit_code == 0, r.output
    p, q = pd.read_csv(via, comment="#"), pd.read_csv(direct, comment="#")
    pd.testing.assert_frame_equal(p, q, check_exact=True)
    assert len(q) == 8 and set(q.kernel) == {"saxpy"}
    # the measured column is the timing model's own time: one single run per configuration agrees exactly
    _, streams = load_region(traces["saxpy"], 128)
    cfg = load_config("gtx480")
    for row in q.itertuples(index=False):
        res = simulate(streams, cfg, sm_count=row.sm_count, core_mhz=row.core_mhz, mem_mhz=row.mem_mhz, crisp=False)
        assert row.measured_time == pytest.approx(res.time_ns * 1e-9, rel=5e-6)  # the CSV keeps 6 digits
    base = q[(q.sm_count == 15) & (q.core_mhz == 700) & (q.mem_mhz == 924)].iloc[0]
    assert base.predicted_time == pytest.approx(base.measured_time, rel=5e-6)


def test_scale_taxonomy_on_traces(corpus, tmp_path):
    traces, datasets = corpus
    da, db = tmp_path / "a", tmp_path / "b"
    r = runner.invoke(app, ["scale", "taxonomy", *map(str, traces.values()), "--clusters", "2",
                            "-o", str(da), "--format", "svg", *SIM])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["scale", "taxonomy", *map(str, datasets.values()), "--clusters", "2",
                            "-o", str(db), "--format", "svg"])
    assert r.exit_code == 0, r.output
    ta, tb = pd.read_csv(da / "taxonomy_combined_time.csv", comment="#"), pd.read_csv(db / "taxonomy_combined_time.csv",
                                                                                      comment="#")
    pd.testing.assert_frame_equal(ta, tb, check_exact=True)
    assert sorted(ta.kernel) == ["gather", "saxpy", "triad"] and set(ta.group) == {"simt:gtx480"}


def test_two_traces_of_one_region_are_named_by_file(corpus, tmp_path):
    traces, _ = corpus
    from portcast.pipeline.stage_run import load_scaling_data

    ds = load_scaling_data([str(traces["saxpy"]), str(traces["saxpy"])], "gtx480", GRID, 128)
    assert ds.kernels == ["saxpy", f"saxpy@{traces['saxpy'].stem}"]
    a, b = (ds.frame[ds.frame.kernel == k].time.to_numpy() for k in ds.kernels)
    np.testing.assert_array_equal(a, b)
    single = read_dataset(corpus[1]["saxpy"]).frame.time.to_numpy()
    np.testing.assert_array_equal(a, single)


def test_scale_bad_inputs_are_one_line(corpus, tmp_path):
    traces, _ = corpus
    r = runner.invoke(app, ["scale", "train", str(traces["saxpy"]), "-o", str(tmp_path / "m.json"), "--gpu", "b300"])
    assert r.exit_code == 2 and "unknown GPU preset 'b300'" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["scale", "train", str(traces["saxpy"]), "synthetic", "-o", str(tmp_path / "m.json"),
                            "--sweep", GRID, "--gpu", "gtx480"])
    assert r.exit_code == 2 and "counter columns" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["scale", "train", str(traces["saxpy"]), "-o", str(tmp_path / "m.json"), "--sweep", "1;2"])
    assert r.exit_code == 2 and "--sweep must be" in r.output


def test_dvfs_control_takes_a_trace(corpus, tmp_path):
    traces, _ = corpus
    cnt = tmp_path / "c.json"
    r = runner.invoke(app, ["simulate", str(traces["triad"]), "--gpu", "gtx480", "--block-size", "128",
                            "--counters-out", str(cnt)])
    assert r.exit_code == 0, r.output
    via = runner.invoke(app, ["dvfs", "control", "--counters", str(cnt)])
    direct = runner.invoke(app, ["dvfs", "control", "--counters", str(traces["triad"]), "--gpu", "gtx480",
                                 "--block-size", "128"])
    assert via.exit_code == 0 and direct.exit_code == 0, direct.output
    table = [ln for ln in direct.output.splitlines() if "triad" in ln]
    assert len(table) == 1 and table == [ln for ln in via.output.splitlines() if "triad" in ln]
    assert "700" in table[0]  # the counters were read at the preset's 700 MHz
    r = runner.invoke(app, ["dvfs", "control", "--counters", str(traces["triad"]), "--gpu", "b300"])
    assert r.exit_code == 2 and "unknown GPU preset 'b300'" in r.output and "Traceback" not in r.output


def test_dvfs_predict_on_a_trace_with_block_size(corpus, tmp_path):
    traces, _ = corpus
    out = tmp_path / "p.json"
    r = runner.invoke(app, ["dvfs", "predict", "--counters", str(traces["triad"]), "--gpu", "gtx480",
                            "--block-size", "128", "--targets", "350", "--model", "crisp", "--out", str(out)])
    assert r.exit_code == 0, r.output
    (row,) = json.loads(out.read_text())["predictions"]
    _, streams = load_region(traces["triad"], 128)
    res = simulate(streams, load_config("gtx480"), crisp=True, name="triad")
    assert row["base_time"] == pytest.approx(res.time_ns, rel=1e-12) and row["base_mhz"] == 700.0
    from gpu_models.dvfs.models import get_model

    assert row["pred_time"] == pytest.approx(float(get_model("crisp").predict(res.crisp, [350.0])[0]), rel=1e-12)
    r = runner.invoke(app, ["dvfs", "predict", "--counters", str(traces["triad"]), "--targets", "350",
                            "--block-size", "0"])
    assert r.exit_code == 2 and "block_size must be a positive integer" in r.output
