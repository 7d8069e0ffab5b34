"""No command destroys its input or replaces an existing output without --force (run as a user would)."""

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from portcast.cli import app
from predictor.model_io import default_model_path

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _flat(res):
    return " ".join(res.output.split())


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("t")
    res = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--trace-dir", str(d), "--no-progress",
                              "--no-features", "--no-baseline", "--", "64"])
    assert res.exit_code == 0, res.output
    return d / "saxpy.0.parquet"


def test_features_never_overwrites_its_trace(trace):
    before = trace.read_bytes()
    res = runner.invoke(app, ["features", str(trace), "-f", "parquet", "-o", str(trace), "--force"])
    assert res.exit_code == 2 and "is the input" in _flat(res) and "would destroy the input" in _flat(res)
    assert trace.read_bytes() == before


def test_features_output_is_replaced_only_with_force(trace, tmp_path):
    out = tmp_path / "f.parquet"
    assert runner.invoke(app, ["features", str(trace), "-f", "parquet", "-o", str(out), "-q"]).exit_code == 0
    first = out.read_bytes()
    res = runner.invoke(app, ["features", str(trace), "-f", "parquet", "-o", str(out), "-q"])
    assert res.exit_code == 2 and f"--out {out} exists: pass --force to replace it" in _flat(res)
    assert out.read_bytes() == first
    assert runner.invoke(app, ["features", str(trace), "-f", "parquet", "-o", str(out), "-q", "--force"]).exit_code == 0


def test_train_never_writes_over_its_data(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0] * 8, "speedup": [2.0, 3.0, 4.0] * 8}).to_csv(data, index=False)
    before = data.read_bytes()
    res = runner.invoke(app, ["train", "--data", str(data), "--out", str(data), "--k", "1", "--force"])
    assert res.exit_code == 2 and "is the input" in _flat(res)
    assert data.read_bytes() == before


def test_predict_uses_the_default_model_and_never_writes_over_it(tmp_path):
    table = pd.read_parquet(ROOT / "kernels" / "data" / "corpus_features.parquet")
    rows = tmp_path / "rows.csv"
    table[(table["kernel"] == "saxpy") & (table["size"] == "small")].to_csv(rows, index=False)
    res = runner.invoke(app, ["predict", str(rows), "--quiet"])  # no --model: the shipped one, as documented
    assert res.exit_code == 0, res.output
    assert "saxpy" in res.output and "predicted" in res.output
    model = tmp_path / "m.json"
    model.write_bytes(default_model_path().read_bytes())
    res = runner.invoke(app, ["predict", str(rows), "--model", str(model), "--out", str(model), "--force"])
    assert res.exit_code == 2 and "is the input" in _flat(res)
    assert model.read_bytes() == default_model_path().read_bytes()


def test_evaluate_aiwc_writes_nowhere_unless_told(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["evaluate", "aiwc", "--n-outer", "1"])
    assert res.exit_code == 2 and "--out" in res.output
    assert list(tmp_path.iterdir()) == []


def test_no_command_writes_into_the_working_directory_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["dvfs", "evaluate"], ["scale", "evaluate", "--quick"], ["scale", "taxonomy", "synthetic"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "--out" in res.output, (args, res.output)
    assert list(tmp_path.iterdir()) == []


def _command_options():
    import typer.main

    def walk(c, pre=()):
        subs = getattr(c, "commands", None)
        if subs:
            for n, s in subs.items():
                yield from walk(s, (*pre, n))
        else:
            yield " ".join(pre), [o for p in c.params for o in getattr(p, "opts", [])]

    return list(walk(typer.main.get_command(app)))


def test_every_command_that_writes_has_force():
    writes = {name: opts for name, opts in _command_options()
              if {"--out", "--out-dir", "--plot", "--counters-out"} & set(opts)}
    assert len(writes) >= 25
    assert [name for name, opts in writes.items() if "--force" not in opts] == []


def test_scale_synthetic_replaces_its_dataset_only_with_force(tmp_path):
    out = tmp_path / "s.csv"
    assert runner.invoke(app, ["scale", "synthetic", "--out", str(out), "--per-archetype", "2"]).exit_code == 0
    first = out.read_bytes()
    res = runner.invoke(app, ["scale", "synthetic", "--out", str(out), "--per-archetype", "3"])
    assert res.exit_code == 2 and f"--out {out} exists: pass --force to replace it" in _flat(res)
    assert out.read_bytes() == first
    res = runner.invoke(app, ["scale", "synthetic", "--out", str(out), "--per-archetype", "3", "--force"])
    assert res.exit_code == 0 and out.read_bytes() != first


def test_import_never_writes_over_the_file_it_reads(tmp_path):
    lk = tmp_path / "run.lackey"
    lk.write_text("I  04000000,3\n L 7ff000100,8\n")
    before = lk.read_bytes()
    res = runner.invoke(app, ["import", "lackey", str(lk), "--out", str(lk), "--force"])
    assert res.exit_code == 2 and "would destroy the input" in _flat(res)
    assert lk.read_bytes() == before


def test_a_folder_with_files_is_written_into_only_with_force(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    res = runner.invoke(app, ["measured", "tables", "--out-dir", str(tmp_path)])
    assert res.exit_code == 2 and f"--out-dir {tmp_path} is a folder with files in it: pass --force" in _flat(res)
    assert (tmp_path / "keep.txt").read_text() == "mine" and len(list(tmp_path.iterdir())) == 1
