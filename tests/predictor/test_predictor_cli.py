"""`portcast train`, `portcast predict`, `portcast evaluate aiwc` through the Typer app."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from portcast.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(1, 3, (45, 4)), columns=["ilp", "mem", "lbdiv", "gbdiv"])
    X.insert(0, "kernel", [f"k{i}" for i in range(45)])
    X["speedup"] = np.exp(0.5 + 0.8 * X["ilp"] - 0.4 * X["lbdiv"] + 0.1 * X["ilp"] * X["lbdiv"])
    data = d / "train.csv"
    X.to_csv(data, index=False)
    model = d / "model.json"
    res = runner.invoke(app, ["train", "--data", str(data), "--target", "speedup", "--k", "2", "--transform", "log",
                              "--n-splits", "5", "--validation-size", "8", "--platform", "test-pair",
                              "--out", str(model)])
    assert res.exit_code == 0, res.output
    return d, X, model, res.output


def test_train_writes_model(trained):
    d, X, model, out = trained
    doc = json.loads(model.read_text())
    assert doc["subset"] == ["ilp", "lbdiv"]
    assert doc["metadata"]["platform"] == "test-pair" and doc["metadata"]["target"] == "speedup"
    assert "non-numeric columns not used as features: kernel" in out
    assert "chosen features: ilp, lbdiv" in out


def test_predict_prints_prediction_ranges_and_terms(trained):
    d, X, model, _ = trained
    inp = d / "new.json"
    inp.write_text(json.dumps({"kernel": "mine", "ilp": 2.0, "mem": 1.0, "lbdiv": 5.0, "gbdiv": 1.0}))
    res = runner.invoke(app, ["predict", "--model", str(model), str(inp)])
    assert res.exit_code == 0, res.output
    top = float(X["lbdiv"].max())  # lbdiv = 5 lies outside the data (< 3): clipped to the range by default
    expect = np.exp(0.5 + 1.6 - 0.4 * top + 0.2 * top)
    assert f"predicted speedup {expect:.3g}x" in res.output
    assert "outside: clipped to the range" in res.output
    assert "ilp*lbdiv" in res.output and "(intercept)" in res.output
    assert f"outside the training data, so clipped to its range: lbdiv = 5 (used {top:.4g})" in res.output


def test_predict_with_an_unclipped_model_extrapolates(trained):
    d, X, _, _ = trained
    model = d / "noclip.json"
    res = runner.invoke(app, ["train", "--data", str(d / "train.csv"), "--target", "speedup", "--k", "2",
                              "--transform", "log", "--n-splits", "5", "--validation-size", "8", "--no-clip",
                              "--out", str(model)])
    assert res.exit_code == 0, res.output
    inp = d / "new2.json"
    inp.write_text(json.dumps({"kernel": "mine", "ilp": 2.0, "mem": 1.0, "lbdiv": 5.0, "gbdiv": 1.0}))
    res = runner.invoke(app, ["predict", "--model", str(model), str(inp)])
    assert res.exit_code == 0, res.output
    expect = np.exp(0.5 + 1.6 - 2.0 + 1.0)
    assert f"predicted speedup {expect:.3g}x" in res.output
    assert "outside: extrapolating" in res.output and "extrapolates" in res.output


def test_predict_many_rows_to_csv(trained):
    d, X, model, _ = trained
    inp = d / "rows.parquet"
    X.drop(columns="speedup").iloc[:3].to_parquet(inp)
    out = d / "pred.csv"
    res = runner.invoke(app, ["predict", "--model", str(model), str(inp), "--quiet", "--out", str(out)])
    assert res.exit_code == 0, res.output
    got = pd.read_csv(out)
    assert list(got["id"]) == ["k0", "k1", "k2"]
    np.testing.assert_allclose(got["predicted_speedup"], X["speedup"].iloc[:3], rtol=1e-8)


@pytest.mark.parametrize(
    "args, match",
    [
        (["predict", "--model", "{d}/nope.json", "{d}/train.csv"], "No such file or directory"),
        (["predict", "--model", "{d}/train.csv", "{d}/train.csv"], "not a Portcast model file"),
        (["predict", "--model", "{d}/model.json", "{d}/bad.csv"], "lacks the model's feature column"),
        (
            ["predict", "--model", "{d}/model.json", "{d}/nan.csv"],
            "column 'ilp' is missing, non-numeric or non-finite at row 1",
        ),
        (["train", "--data", "{d}/train.csv", "--target", "time", "--out", "{d}/x.json"], "no target column 'time'"),
        (
            ["train", "--data", "{d}/train.csv", "--transform", "cube", "--out", "{d}/x.json"],
            "transform must be one of",
        ),
        (["train", "--data", "{d}/train.csv", "--features", "ilp,zzz", "--out", "{d}/x.json"], "no feature column"),
        (["train", "--data", "{d}/model.txt", "--out", "{d}/x.json"], "unsupported feature table type"),
    ],
)
def test_user_errors_exit_2(trained, args, match):
    d, X, model, _ = trained
    pd.DataFrame({"foo": [1.0]}).to_csv(d / "bad.csv", index=False)
    X.assign(ilp=[1.0, np.nan] + [1.0] * 43).to_csv(d / "nan.csv", index=False)
    (d / "model.txt").write_text("x")
    res = runner.invoke(app, [a.format(d=d) for a in args])
    assert res.exit_code == 2, res.output
    assert "error:" in res.output and match in " ".join(res.output.split())
    assert "Traceback" not in res.output


def test_evaluate_aiwc_writes_page(tmp_path):
    out = tmp_path / "page.md"
    res = runner.invoke(app, ["evaluate", "aiwc", "--out", str(out), "--n-outer", "1", "--n-splits", "2", "--k", "1",
                              "--platform", "i7-6700k:gtx1080ti", "--no-baselines"])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert "## i7-6700k -> gtx1080ti" in text and "XAPP (transform chosen by validation)" in text
    bad = runner.invoke(app, ["evaluate", "aiwc", "--out", str(out), "--force", "--platform", "i7"])
    assert bad.exit_code == 2 and "expected CPU:GPU" in bad.output


def test_predict_from_trace_file_computes_features_first(tmp_path):
    from features import compute_features
    from features.synthetic_trace import static_table, synthetic_trace
    from profiler.trace import RegionInfo
    from profiler.tracefile import write_trace

    trace = write_trace(tmp_path / "r.parquet", RegionInfo(name="loop", n_records=3000), static_table(),
                        [synthetic_trace(3000)])
    fv = compute_features(trace)
    rng = np.random.default_rng(1)
    tab = pd.DataFrame({"mem": rng.uniform(0.1, 0.5, 40), "ilp32": rng.uniform(2, 12, 40),
                        "fp": rng.uniform(0, 1, 40)})
    tab["speedup"] = np.exp(0.3 + 2 * tab["mem"] + 0.1 * tab["ilp32"])
    tab.to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "m.json"
    res = runner.invoke(app, ["train", "--data", str(tmp_path / "t.csv"), "--k", "2", "--transform", "log",
                              "--n-splits", "4", "--validation-size", "8", "--out", str(model)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["predict", "--model", str(model), str(trace)])
    assert res.exit_code == 0, res.output
    expect = np.exp(0.3 + 2 * fv["mem"] + 0.1 * fv["ilp32"])
    assert f"predicted speedup {expect:.3g}x" in res.output
