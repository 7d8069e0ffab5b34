"""features.table, the one reader/writer of feature tables, and its round trips through the commands a user
runs: `portcast features -f csv|json|parquet` -> `portcast predict` and `portcast train`."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from features.table import FeatureTableError, read_feature_table, write_feature_table
from portcast.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _frame():
    f = pd.DataFrame({"ilp32": [1.5, 2.25, 3.0], "warp_coalescing": [1.0, 0.5, 1 / 3], "n": [1, 2, 3]},
                     index=pd.Index(["a.parquet", "b.parquet", "c.parquet"], name="trace"))
    return f


@pytest.mark.parametrize("name", ["t.csv", "t.json", "t.parquet", "t.csv.gz"])
def test_round_trip_is_exact(tmp_path, name):
    f = _frame()
    if name.endswith(".gz"):
        plain = write_feature_table(f, tmp_path / "t.csv")
        import gzip

        (tmp_path / name).write_bytes(gzip.compress(plain.read_bytes()))
    else:
        write_feature_table(f, tmp_path / name, extra={"kind": "features"})
    back = read_feature_table(tmp_path / name)
    assert list(back.columns) == ["trace", "ilp32", "warp_coalescing", "n"]
    pd.testing.assert_frame_equal(back.set_index("trace"), f, check_dtype=False, rtol=0, atol=0)
    assert back.attrs["feature_table"]["schema_version"] == 1


def test_plain_tables_people_write_are_read(tmp_path):
    (tmp_path / "p.csv").write_text("ilp32,speedup\n1,2\n3,4\n")
    assert read_feature_table(tmp_path / "p.csv")["speedup"].tolist() == [2, 4]
    (tmp_path / "p.json").write_text('[{"ilp32": 1, "speedup": 2}]')
    assert read_feature_table(tmp_path / "p.json")["ilp32"].tolist() == [1]
    (tmp_path / "o.json").write_text('{"ilp32": 1, "speedup": 2}')
    assert len(read_feature_table(tmp_path / "o.json")) == 1


@pytest.mark.parametrize("name, text", [
    ("d.csv", "a,b,a,speedup\n1,2,3,4\n"),
    ("d.json", '[{"a": 1, "b": 2, "a": 3}]'),
])
def test_duplicate_column_names_are_refused_by_name(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    with pytest.raises(FeatureTableError, match=rf"{name}: column names repeat: a$"):
        read_feature_table(tmp_path / name)


def test_duplicate_columns_in_parquet_and_on_write(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table([[1], [2]], names=["x", "x"]), tmp_path / "d.parquet")
    with pytest.raises(FeatureTableError, match="d.parquet: column names repeat: x"):
        read_feature_table(tmp_path / "d.parquet")
    with pytest.raises(FeatureTableError, match="w.csv: column names repeat: y"):
        write_feature_table(pd.DataFrame([[1, 2]], columns=["y", "y"]), tmp_path / "w.csv")


def test_newer_schema_and_foreign_layouts_are_refused(tmp_path):
    (tmp_path / "n.csv").write_text("# portcast.features schema_version=9\na\n1\n")
    with pytest.raises(FeatureTableError, match="n.csv: feature table schema_version 9"):
        read_feature_table(tmp_path / "n.csv")
    (tmp_path / "f.json").write_text('{"format": "other", "rows": []}')
    with pytest.raises(FeatureTableError, match="f.json: format 'other'"):
        read_feature_table(tmp_path / "f.json")
    (tmp_path / "x.txt").write_text("a\n1\n")
    with pytest.raises(FeatureTableError, match="x.txt: unsupported feature table type"):
        read_feature_table(tmp_path / "x.txt")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("tr")
    res = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--trace-dir", str(d), "--no-progress",
                              "--no-features", "--no-baseline", "--", "256"])
    assert res.exit_code == 0, res.output
    return d / "saxpy.0.parquet"


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_features_output_feeds_predict_and_train_in_every_format(tmp_path, trace, fmt):
    out = tmp_path / f"f.{fmt}"
    res = runner.invoke(app, ["features", str(trace), "-f", fmt, "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    table = read_feature_table(out)
    assert table["trace"].tolist() == [str(trace)] and table["warp_threads"].tolist() == [256.0]
    res = runner.invoke(app, ["predict", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "predicted" in res.output
    # a training table made from it (more rows, a target) is read by train
    ilp = np.linspace(1, 6, 12)
    rows = pd.concat([table] * 12, ignore_index=True).assign(ilp32=ilp, speedup=2 + ilp)
    data = tmp_path / f"train.{fmt}"
    write_feature_table(rows.drop(columns=["trace"]), data)
    res = runner.invoke(app, ["train", "--data", str(data), "--out", str(tmp_path / "m.json"), "--k", "1",
                              "--features", "ilp32", "--n-splits", "3", "--validation-size", "3"])
    assert res.exit_code == 0, res.output


def test_format_and_file_name_must_agree(tmp_path, trace):
    res = runner.invoke(app, ["features", str(trace), "-f", "csv", "-o", str(tmp_path / "f.json"), "-q"])
    assert res.exit_code == 2 and "the file name says json, --format says csv" in " ".join(res.output.split())
