"""``portcast simulate`` / ``scale`` / ``dvfs`` take a script with marked regions or ``--function`` directly (issue 8).

A marked region goes from the script to predicted time, CRISP counters and a configuration sweep in one
command, and gives exactly the numbers its trace file (``portcast profile SCRIPT -o DIR``) gives.
"""

from __future__ import annotations

import json
import textwrap

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpu_models.dvfs.counter_record import load_counters
from gpu_models.scaling.dataset import read_dataset
from gpu_models.simt.config import load_config
from gpu_models.simt.model import simulate
from gpu_models.simt.trace_input import StreamsSink, load_region
from portcast.cli import app
from profiler.session import profile_script

runner = CliRunner()
GRID = "4,15;350,700;924"
SCRIPT = textwrap.dedent('''
    import sys

    import numpy as np

    import portcast


    @portcast.region("axpy")
    def axpy(a, x, y):
        for i in portcast.parallel(range(x.shape[0])):
            y[i] = a * x[i] + y[i]
        return y


    @portcast.region("gather")
    def gather(idx, x, out):
        for i in portcast.parallel(range(idx.shape[0])):
            out[i] = x[idx[i]] * 2.0
        return out


    def portcast_inputs(n=700):
        rng = np.random.default_rng(1)
        return (3.0, rng.random(n), rng.random(n))


    if __name__ == "__main__":
        n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
        a, x, y = portcast_inputs(n)
        axpy(a, x, y)
        idx = np.random.default_rng(2).integers(0, n, n)
        gather(idx, x, np.zeros(n))
''')


COMPUTE = textwrap.dedent('''
    import portcast


    @portcast.region("poly")
    def poly(n):
        acc = 0.0
        for i in portcast.parallel(range(n)):
            v = 0.5
            for k in range(i % 5):
                v = v * 1.25 + k
            acc += v
        return acc


    poly(96)
''')


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    d = tmp_path_factory.mktemp("script")
    path = d / "two_regions.py"
    path.write_text(SCRIPT)
    return path


def _traces(d):
    return {p.name.split(".")[0]: p for p in sorted(d.glob("*.parquet"))}


def test_script_region_gives_exactly_its_trace_files_numbers(script, tmp_path):
    a, b, ca, cb = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "a_c.json", tmp_path / "b_c.json"
    r = runner.invoke(app, ["simulate", str(script), "--region", "gather", "--gpu", "gtx480", "--out", str(a),
                            "--counters-out", str(ca), "--trace-dir", str(tmp_path / "t"), "--", "500"])
    assert r.exit_code == 0, r.output
    traces = _traces(tmp_path / "t")
    assert list(traces) == ["gather"]
    r = runner.invoke(
        app, ["simulate", str(traces["gather"]), "--gpu", "gtx480", "--out", str(b), "--counters-out", str(cb)]
    )
    assert r.exit_code == 0, r.output
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert da == db
    assert da["region"] == "gather" and da["sm_count"] == 15
    # the same numbers as the library run on the trace file's records
    name, streams = load_region(traces["gather"])
    res = simulate(streams, load_config("gtx480"), crisp=True, name=name)
    assert streams.n_threads == 500 and streams.n_warps == 16
    assert da["cycles"] == res.cycles and da["time_ns"] == res.time_ns
    assert da["cycles"] > 0 and da["time_ns"] == pytest.approx(da["cycles"] * 1000 / 700)
    assert load_counters(ca)[0] == load_counters(cb)[0]
    assert load_counters(ca)[0].total == pytest.approx(res.time_ns)


def test_script_all_regions_sweep_equals_trace_sweeps(script, tmp_path):
    out = tmp_path / "sweep.parquet"
    r = runner.invoke(app, ["simulate", str(script), "--gpu", "gtx480", "--sweep", GRID, "--out", str(out),
                            "--trace-dir", str(tmp_path / "t"), "--", "500"])
    assert r.exit_code == 0, r.output
    assert "sweep of axpy: 4 configurations" in r.output and "sweep of gather: 4 configurations" in r.output
    got = read_dataset(out).frame
    assert list(dict.fromkeys(got["kernel"])) == ["axpy", "gather"] and len(got) == 8
    traces = _traces(tmp_path / "t")
    parts = []
    for k in ("axpy", "gather"):
        p = tmp_path / f"{k}.parquet"
        r = runner.invoke(app, ["simulate", str(traces[k]), "--gpu", "gtx480", "--sweep", GRID, "--out", str(p)])
        assert r.exit_code == 0, r.output
        parts.append(read_dataset(p).frame)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), pd.concat(parts, ignore_index=True))


def test_several_regions_single_run_json_lists_runs(script, tmp_path):
    out = tmp_path / "runs.json"
    r = runner.invoke(app, ["simulate", str(script), "--gpu", "gtx480", "--out", str(out),
                            "--trace-dir", str(tmp_path / "t"), "--", "500"])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "portcast.simt.runs" and [d["region"] for d in doc["runs"]] == ["axpy", "gather"]
    for run, k in zip(doc["runs"], ("axpy", "gather")):
        name, streams = load_region(_traces(tmp_path / "t")[k])
        assert run["cycles"] == simulate(streams, load_config("gtx480"), name=name).cycles


def test_function_equals_its_trace(script, tmp_path):
    a, b = tmp_path / "f.json", tmp_path / "t.json"
    r = runner.invoke(
        app,
        [
            "simulate",
            "--function",
            f"{script}:axpy",
            "--args",
            "portcast_inputs(700)",
            "--gpu",
            "h100",
            "--out",
            str(a),
            "--trace-dir",
            str(tmp_path / "t"),
        ],
    )
    assert r.exit_code == 0, r.output
    (trace,) = _traces(tmp_path / "t").values()
    r = runner.invoke(app, ["simulate", str(trace), "--gpu", "h100", "--out", str(b)])
    assert r.exit_code == 0, r.output
    da = json.loads(a.read_text())
    assert da == json.loads(b.read_text()) and da["region"] == "axpy"
    # the library: StreamsSink on profile_script of the same region with n = 700 builds the same stream shape
    sink = StreamsSink()
    profile_script(script, ["700"], sinks=[sink], regions=["axpy"])
    (info, streams), = sink.regions
    _, ref = load_region(trace)
    assert info.name == "axpy" and streams.n_threads == ref.n_threads == 700
    assert streams.n_records == ref.n_records and (streams.op == ref.op).all()


def test_region_invoked_twice_is_named_by_invocation(tmp_path):
    p = tmp_path / "twice.py"
    p.write_text(SCRIPT.replace("    axpy(a, x, y)\n", "    axpy(a, x, y)\n    axpy(a, x[:64], y[:64])\n"))
    out = tmp_path / "c.json"
    r = runner.invoke(app, ["simulate", str(p), "--region", "axpy", "--gpu", "gtx480", "--counters-out", str(out)])
    assert r.exit_code == 0, r.output
    recs = load_counters(out)
    assert [c.name for c in recs] == ["axpy#0", "axpy#1"]
    assert recs[1].total < recs[0].total  # 64 threads against 300


def test_dvfs_and_scale_take_a_script(tmp_path):
    """A region without memory accesses has no addresses, so every run of its script gives the same trace."""
    path = tmp_path / "poly.py"
    path.write_text(COMPUTE)
    cnt, ds = tmp_path / "c.json", tmp_path / "d.parquet"
    r = runner.invoke(app, ["simulate", str(path), "--gpu", "gtx480", "--counters-out", str(cnt), "--sweep", GRID,
                            "--out", str(ds)])
    assert r.exit_code == 0, r.output
    (rec,) = load_counters(cnt)
    assert rec.name == "poly" and rec.base_mhz == 700.0 and rec.total > 0
    # dvfs predict on the script == on the counter file simulate writes
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    r = runner.invoke(app, ["dvfs", "predict", "--counters", str(path), "--targets", "300,500", "--out", str(a)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["dvfs", "predict", "--counters", str(cnt), "--targets", "300,500", "--out", str(b)])
    assert r.exit_code == 0, r.output
    fa, fb = pd.read_csv(a, comment="#"), pd.read_csv(b, comment="#")
    pd.testing.assert_frame_equal(fa, fb)
    assert set(fa["record"]) == {"poly"} and (fa["base_time"] == rec.total).all()
    # scale predict on the script == on the dataset simulate --sweep writes (model trained on the dataset)
    m = tmp_path / "m.json"
    r = runner.invoke(app, ["scale", "train", str(ds), "-o", str(m), "--base", "15,700,924", "--clusters", "1"])
    assert r.exit_code == 0, r.output
    p1, p2 = tmp_path / "p1.csv", tmp_path / "p2.csv"
    r = runner.invoke(app, ["scale", "predict", str(m), str(path), "-o", str(p1), "--gpu", "gtx480", "--sweep", GRID])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["scale", "predict", str(m), str(ds), "-o", str(p2)])
    assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(pd.read_csv(p1, comment="#"), pd.read_csv(p2, comment="#"))


@pytest.mark.parametrize("argv, message", [
    (["simulate", "missing_script.py"], "missing_script.py: no such script"),
    (["simulate"], "give a trace file, a SCRIPT.py"),
])
def test_errors_without_running(argv, message):
    r = runner.invoke(app, argv)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


def test_errors_of_script_runs(script, tmp_path):
    path = script
    r = runner.invoke(app, ["simulate", str(path), "--region", "nope", "--", "40"])
    assert r.exit_code == 2
    assert "executed no marked region named 'nope' (the script marks: axpy, gather)" in r.output
    plain = tmp_path / "plain.py"
    plain.write_text("x = sum(range(10))\n")
    r = runner.invoke(app, ["simulate", str(plain)])
    assert r.exit_code == 2 and "executed no marked region" in r.output
    bad = tmp_path / "bad.py"
    bad.write_text(SCRIPT.replace("out[i] = x[idx[i]] * 2.0", "out[i] = x[idx[i] + 10**6] * 2.0"))
    r = runner.invoke(app, ["simulate", str(bad), "--mode", "interpreted", "--", "40"])
    assert r.exit_code == 2 and "raised IndexError in region 'gather'" in r.output
    trace = tmp_path / "axpy.0.parquet"
    trace.write_bytes(b"")
    r = runner.invoke(app, ["simulate", str(trace), "--region", "axpy"])
    assert r.exit_code == 2 and "apply to a SCRIPT.py, not a trace file" in r.output
    r = runner.invoke(app, ["simulate", str(path), "--function", f"{path}:axpy"])
    assert r.exit_code == 2 and "not both" in r.output
    r = runner.invoke(app, ["simulate", "--function", f"{path}:nothere"])
    assert r.exit_code == 2 and "has no attribute 'nothere'" in r.output


def test_region_option_of_dvfs_and_scale(tmp_path):
    """``--region`` picks one region of a SCRIPT in ``dvfs`` and ``scale`` too."""
    path = tmp_path / "two.py"
    path.write_text(COMPUTE.replace("\npoly(96)\n", textwrap.dedent('''
        @portcast.region("other")
        def other(n):
            t = 0.0
            for i in portcast.parallel(range(n)):
                t += i * 0.5
            return t


        poly(96)
        other(64)
    ''')))
    cnt = tmp_path / "c.json"
    r = runner.invoke(app, ["simulate", str(path), "--gpu", "gtx480", "--counters-out", str(cnt)])
    assert r.exit_code == 0, r.output
    assert [c.name for c in load_counters(cnt)] == ["poly", "other"]
    a = tmp_path / "a.csv"
    r = runner.invoke(app, ["dvfs", "predict", "--counters", str(path), "--region", "other", "--targets", "350",
                            "--model", "crisp", "--out", str(a)])
    assert r.exit_code == 0, r.output
    fa = pd.read_csv(a, comment="#")
    assert list(fa["record"]) == ["other"] and fa["base_time"].iloc[0] == load_counters(cnt)[1].total
    m, pr = tmp_path / "m.json", tmp_path / "p.csv"
    sim = ["--gpu", "gtx480", "--sweep", GRID]
    r = runner.invoke(app, ["scale", "train", str(path), "--region", "poly", *sim, "--base", "15,700,924",
                            "--clusters", "1", "-o", str(m)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["scale", "predict", str(m), str(path), "--region", "other", *sim, "-o", str(pr)])
    assert r.exit_code == 0, r.output
    assert set(pd.read_csv(pr, comment="#")["kernel"]) == {"other"}
    r = runner.invoke(app, ["dvfs", "predict", "--counters", str(path), "--region", "nope", "--targets", "350"])
    assert r.exit_code == 2 and "executed no marked region named 'nope' (the script marks: poly, other)" in r.output
