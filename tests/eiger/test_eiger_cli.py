"""`portcast eiger import|fit|evaluate|export` end to end on a small synthetic trials table."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from portcast.cli import app
from predictor.eiger.export import load_model

runner = CliRunner()


@pytest.fixture()
def setup(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    n = 60
    a = rng.uniform(1, 100, n)
    b = rng.uniform(1, 10, n)
    df = pd.DataFrame({"application": np.repeat(["app1", "app2", "app3"], n // 3),
                       "machine": np.tile(["m1", "m2"], n // 2), "size": "s", "a": a, "b": b,
                       "note": "text", "time": 2.0 + 3.0 * a + 0.5 * b})
    csv = tmp_path / "trials.csv"
    df.to_csv(csv, index=False)
    monkeypatch.setenv("PORTCAST_DB", str(tmp_path / "db.sqlite"))
    return tmp_path, csv, df


def _ok(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def test_import_fit_evaluate_export(setup):
    tmp, csv, df = setup
    out = _ok(["eiger", "import", str(csv), "--result", "time", "--application-col", "application",
               "--machine-col", "machine", "--dataset-col", "size"])
    assert "imported 60 trials" in out
    machines = tmp / "machines.csv"
    pd.DataFrame({"device": ["m1", "m2"], "bw": [100.0, 200.0]}).to_csv(machines, index=False)
    assert "imported 2 machines" in _ok(["eiger", "import", str(machines), "--kind", "machines"])
    model = tmp / "model.json"
    out = _ok(["eiger", "fit", "--result", "time", "-o", str(model), "--no-machine-metrics", "--threshold", "1e-6"])
    assert "model written to" in out
    est = load_model(model)
    assert list(est.feature_names_in_) == ["a", "b"]  # the text column is not a metric
    doc = json.loads(model.read_text())
    assert doc["info"]["result"] == "time" and doc["info"]["n_trials"] == 60
    pred = est.predict(df[["a", "b"]])
    assert np.max(np.abs(pred - df["time"]) / df["time"]) < 1e-6  # an exactly linear law is recovered
    out = _ok(["eiger", "evaluate", str(model), "--application", "app2"])
    assert out.startswith("20 trials: MAPE 0.00 %")
    py = tmp / "model.py"
    _ok(["eiger", "export", str(model), "-f", "python", "-o", str(py)])
    ns = {}
    exec(py.read_text(), ns)
    assert ns["predict"]([10.0, 2.0]) == pytest.approx(2.0 + 30.0 + 1.0, rel=1e-6)
    _ok(["eiger", "export", str(model), "-f", "c", "-o", str(tmp / "model.c")])
    assert "double eiger_predict(const double *x)" in (tmp / "model.c").read_text()
    # with machine metrics joined
    _ok(["eiger", "fit", "--result", "time", "-o", str(tmp / "m2.json"), "-k", "2", "-p", "2"])
    assert list(load_model(tmp / "m2.json").feature_names_in_) == ["a", "b", "bw"]


def test_errors_are_one_line_exit_2(setup):
    tmp, csv, _ = setup
    for args, msg in [
        (["eiger", "import", str(csv), "--result", "runtime", "--application-col", "application",
          "--machine-col", "machine"], "no column 'runtime'"),
        (["eiger", "import", str(csv)], "name at least one result column"),
        (["eiger", "import", str(tmp / "none.csv"), "--result", "t"], "no such file"),
        (["eiger", "fit", "--result", "time", "-o", str(tmp / "m.json")], "has no trials"),
        (["eiger", "export", str(tmp / "none.json"), "-o", str(tmp / "x.c")], "no such model file"),
    ]:
        res = runner.invoke(app, args)
        assert res.exit_code == 2, res.output
        assert "error:" in res.output and msg in res.output.replace("\n", " ")
        assert "Traceback" not in res.output
