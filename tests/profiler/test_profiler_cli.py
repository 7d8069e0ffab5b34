"""``portcast profile`` and ``portcast trace-info``."""

import os
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from portcast.cli import app
from profiler.tracefile import TraceFile

ROOT = Path(__file__).resolve().parents[2]
_runner = CliRunner()


class runner:  # noqa: N801 - output with Rich's line wrapping undone
    @staticmethod
    def invoke(app_, args):
        r = _runner.invoke(app_, args)
        r.flat = " ".join(r.output.split())
        return r


def test_profile_example_writes_parquet_and_prints_summary(tmp_path):
    r = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--trace-dir", str(tmp_path),
                            "--no-progress", "--mode", "interpreted", "--", "50"])
    assert r.exit_code == 0, r.output
    assert "saxpy n=50" in r.output and "traced regions" in r.output and "350" in r.output
    f = tmp_path / "saxpy.0.parquet"
    assert f.exists() and [p.name for p in tmp_path.iterdir()] == ["saxpy.0.parquet"]
    df = pd.read_parquet(f)
    assert len(df) == 350 and (df["op"] == 8).sum() == 100
    tf = TraceFile(f)
    assert tf.info.name == "saxpy" and tf.info.complete and tf.info.mode == "interpreted" and len(tf.static) > 5
    r = runner.invoke(app, ["trace-info", str(f)])
    assert r.exit_code == 0, r.output
    assert "saxpy" in r.flat and "350" in r.flat and "LOAD 100" in r.flat and "STORE 50" in r.flat


def test_profile_function_with_args_expression(tmp_path):
    r = runner.invoke(app, ["profile", "--function", f"{ROOT / 'examples' / 'saxpy.py'}:saxpy", "--args",
                            "(2.0, np.ones(10), np.ones(10))", "--no-progress", "--mode", "interpreted"])
    assert r.exit_code == 0, r.output
    assert "70" in r.output and "interpreted" in r.output


def test_profile_function_uses_portcast_inputs():
    r = runner.invoke(app, ["profile", "--function", f"{ROOT / 'examples' / 'saxpy.py'}:saxpy", "--no-progress",
                            "--mode", "interpreted"])
    assert r.exit_code == 0, r.output
    assert "7,000" in r.output


def test_trace_info_rejects_corrupt_and_truncated_files(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    r = runner.invoke(app, ["trace-info", str(bad)])
    assert r.exit_code == 2 and "bad.parquet" in r.output and "error" in r.output and "Traceback" not in r.output
    runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "-o", str(tmp_path / "t"), "--no-progress",
                        "--mode", "interpreted", "--", "20"])
    good = tmp_path / "t" / "saxpy.0.parquet"
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[: os.path.getsize(good) // 2])
    r = runner.invoke(app, ["trace-info", str(cut)])
    assert r.exit_code == 2 and "cut.parquet" in r.output


def test_profile_bad_input_gives_one_clear_error(tmp_path):
    r = runner.invoke(app, ["profile", str(tmp_path / "missing.py")])
    assert r.exit_code == 2 and "missing.py" in r.output
    r = runner.invoke(app, ["profile", "--function", "nocolon"])
    assert r.exit_code == 2 and "MODULE:QUALNAME" in r.output
    bad = tmp_path / "gen.py"
    bad.write_text("import portcast\n\n@portcast.region('g')\ndef g():\n    yield 1\n\nlist(g())\n")
    r = runner.invoke(app, ["profile", str(bad), "--no-progress"])
    assert r.exit_code == 2 and "gen.py:5: generator (yield)" in r.flat
    r = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--mode", "fast"])
    assert r.exit_code == 2 and "--mode" in r.output


def test_ctrl_c_inside_a_region_prints_what_was_recorded_and_exits_130(tmp_path):
    """A KeyboardInterrupt in the traced script (Ctrl-C): the finished region and the interrupted one are
    listed and written (the latter marked incomplete), with a one-line notice instead of a traceback."""
    script = tmp_path / "stops.py"
    script.write_text(
        "import portcast\n"
        "with portcast.region('first'):\n"
        "    s = sum(i * 2 for i in range(10))\n"
        "with portcast.region('second'):\n"
        "    s = 0\n"
        "    for i in range(20):\n"
        "        s += i\n"
        "    raise KeyboardInterrupt\n")
    out = tmp_path / "traces"
    r = runner.invoke(app, ["profile", str(script), "--trace-dir", str(out), "--no-progress", "--mode",
                            "interpreted"])
    assert r.exit_code == 130, r.output
    assert "Traceback" not in r.output
    assert "interrupted: the traces above are what was recorded" in r.flat
    assert "no (interrupted (KeyboardInterrupt))" in r.flat
    assert sorted(p.name for p in out.iterdir()) == ["first.0.parquet", "second.0.parquet"]
    first, second = TraceFile(out / "first.0.parquet").info, TraceFile(out / "second.0.parquet").info
    assert first.complete and not second.complete and second.error == "interrupted (KeyboardInterrupt)"
    assert second.n_records > 0


def _corrupted(tmp_path, column, row, value):
    """A real trace with one value of one column replaced (its metadata kept)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path / "src"
    runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "-o", str(d), "--no-progress",
                        "--no-features", "--no-baseline", "--", "20"])
    good = d / "saxpy.0.parquet"
    table = pq.read_table(good)
    values = table.column(column).to_pylist()
    values[row] = value
    table = table.set_column(table.schema.get_field_index(column), column,
                             pa.array(values, type=table.schema.field(column).type))
    bad = tmp_path / f"bad_{column}.parquet"
    meta = pq.ParquetFile(good).metadata.metadata  # the file's key-value metadata: region and static table
    with pq.ParquetWriter(bad, table.schema) as w:
        w.write_table(table)
        w.add_key_value_metadata({k: v for k, v in meta.items() if k != b"ARROW:schema"})
    return bad


@pytest.mark.parametrize("column, row, value, message", [
    ("op", 17, 200, "row 17: op code 200 is not an operation class of trace schema version 3 (0..19)"),
    ("pc", 5, 9999, "row 5: static id 9999 is not in the file's static table"),
    ("taken", 3, 7, "row 3: branch outcome 7 is not 0 or 1"),
    ("size", 40, -8, "row 40: size -8 is negative"),
])
def test_trace_content_is_validated_on_read(tmp_path, column, row, value, message):
    bad = _corrupted(tmp_path, column, row, value)
    for args in (["trace-info", str(bad)], ["features", str(bad), "-q"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output
        assert f"{bad.name}: {message}" in r.flat and "Traceback" not in r.output
