"""``portcast features``: formats, explanations, catalogue listing and clean errors."""

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner
from vectors import v4

from features import FEATURE_NAMES, compute_features
from features.synthetic_trace import static_table, synthetic_trace
from portcast.cli import app
from profiler.trace import RegionInfo
from profiler.tracefile import write_trace

runner = CliRunner()


@pytest.fixture()
def traces(tmp_path):
    a = write_trace(tmp_path / "syn.parquet", RegionInfo(name="syn"), static_table(), synthetic_trace(3000))
    b = write_trace(tmp_path / "list.parquet", RegionInfo(name="list"), static_table(), v4())
    return a, b


def test_csv_json_and_parquet_agree_with_the_api(traces, tmp_path):
    a, b = traces
    res = runner.invoke(app, ["features", str(a), str(b), "--format", "csv", "--out", str(tmp_path / "f.csv")])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(tmp_path / "f.csv", comment="#", index_col="trace")
    assert list(df.columns) == list(FEATURE_NAMES)
    assert df.loc[str(b)].to_dict() == pytest.approx(compute_features(v4()).to_dict(), rel=1e-15)
    res = runner.invoke(app, ["features", str(a), "-f", "json", "--explain", "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["format"] == "portcast.features" and doc["schema_version"] == 1 and doc["rows"][0]["trace"] == str(a)
    assert doc["rows"][0]["mem"] == 4 / 15
    assert doc["explain"][str(a)][0]["feature"] == "locStrideOther"
    assert doc["explain"][str(a)][0]["location"] == "synthetic.py:11"
    res = runner.invoke(app, ["features", str(a), str(b), "-f", "parquet", "-o", str(tmp_path / "f.parquet")])
    assert res.exit_code == 0, res.output
    t = pq.read_table(tmp_path / "f.parquet")
    assert json.loads(t.schema.metadata[b"portcast.features"])["schema_version"] == 1
    assert t.to_pandas().set_index("trace").loc[str(b), "coldRef"] == 0.375


def test_table_output_and_explanations(traces):
    a, _ = traces
    res = runner.invoke(app, ["features", str(a), "--explain"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "locStrideOther" in res.output and "y = b[idx[i]]" in res.output
    assert "synthetic.py:17" in res.output  # the data-dependent branch behind Lbdiv_32


def test_list_catalogue():
    res = runner.invoke(app, ["features", "--list", "--format", "csv"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[1] == "name,family,definition,range,source"
    assert lines[2].startswith("mem,mix,")
    assert len(lines) == 2 + len(FEATURE_NAMES)


def _err(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    return " ".join(res.output.split())  # the console may wrap long paths


def test_errors_are_one_clean_line(tmp_path, traces):
    out = _err(["features", str(tmp_path / "missing.parquet")])
    assert out.startswith("error:") and "missing.parquet: no such trace file" in out
    (tmp_path / "junk.parquet").write_text("not parquet")
    assert "not a readable Parquet trace file" in _err(["features", str(tmp_path / "junk.parquet")])
    assert "give at least one trace file" in _err(["features"])
    assert "--format parquet needs --out FILE" in _err(["features", str(traces[0]), "-f", "parquet"])


def test_explain_next_to_csv_output(traces, tmp_path):
    a, _ = traces
    res = runner.invoke(app, ["features", str(a), "-f", "csv", "--explain", "-o", str(tmp_path / "f.csv")])
    assert res.exit_code == 0, res.output
    ex = pd.read_csv(tmp_path / "f.explain.csv")
    assert list(ex.columns) == ["feature", "rank", "pc", "location", "text", "count", "share", "trace"]
    first = ex[ex.feature == "Lbdiv_32"].iloc[0]
    assert (first.pc, first.location, first.text) == (8, "synthetic.py:17", "if w > limit:")
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes left no temporary file behind
