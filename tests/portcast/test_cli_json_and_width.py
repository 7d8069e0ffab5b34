"""Every command prints JSON with `--json` (stdout: one document; tables as records with numbers as numbers),
and its tables stay readable in an 80-column terminal (no line over 80, no cell cut with an ellipsis)."""

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from rich.table import Table
from typer.testing import CliRunner

from portcast.cli import app
from portcast.commands._common import COMMAND_OUTPUT_FORMAT, _Console, table_record

ROOT = Path(__file__).resolve().parents[2]
SAXPY = ROOT / "examples" / "saxpy.py"


def _commands(c=None, prefix=()):
    c = c or typer.main.get_command(app)
    subs = getattr(c, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _commands(sub, (*prefix, name))
    else:
        yield " ".join(prefix), c


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("t")
    res = CliRunner().invoke(app, ["profile", str(SAXPY), "--no-progress", "--no-features", "--trace-dir",
                                   str(d), "--", "3000"])
    assert res.exit_code == 0, res.output
    return d / "saxpy.0.parquet"


def _run(*args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "portcast", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_every_command_has_json():
    missing = [name for name, c in _commands() if "--json" not in [o for p in c.params for o in getattr(p, "opts", [])]]
    assert missing == []


def test_trace_info_json_has_numbers(trace):
    res = _run("trace-info", str(trace), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["format"] == COMMAND_OUTPUT_FORMAT and doc["command"] == "trace-info"
    (t,) = doc["tables"]
    fields = {row[0]: row[1] for row in t["rows"]}  # a field/value table: rows as pairs
    assert fields["region"] == "saxpy" and fields["records"] == 21_000 and fields["threads"] == 3000


def test_simulate_json_tables_are_records(trace):
    res = _run("simulate", str(trace), "--gpu", "p100", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    first = doc["tables"][0]
    assert first["title"].startswith("saxpy on p100: 56 SMs") and first["columns"] == ["quantity", "value"]
    rows = {r["quantity"]: r["value"] for r in first["rows"]}
    assert rows["threads / warps / blocks"] == "3000 / 94 / 12" and isinstance(rows["cycles"], int)


def test_json_of_a_failing_command_prints_nothing_on_stdout(tmp_path):
    res = _run("trace-info", str(tmp_path / "missing.parquet"), "--json")
    assert res.returncode == 2 and res.stdout == "" and "missing.parquet" in res.stderr


def test_table_record_parses_numbers_and_keeps_text():
    t = Table(title="[bold]t[/]")
    for c in ("name", "count", "share", "time"):
        t.add_column(c)
    t.add_row("a", "1,234", "0.5", "12 us")
    t.add_row("b", "-3", "nan", "[red]x[/]")
    rec = table_record(t)
    assert rec == {"title": "t", "columns": ["name", "count", "share", "time"],
                   "rows": [{"name": "a", "count": 1234, "share": 0.5, "time": "12 us"},
                            {"name": "b", "count": -3, "share": None, "time": "x"}]}


def test_a_table_too_wide_for_the_terminal_is_stacked_not_cut():
    buf = io.StringIO()
    con = _Console(file=buf, force_terminal=True, width=40, color_system=None)
    t = Table(title="wide")
    for c in ("kernel", "records", "time (s)", "speedup", "where"):
        t.add_column(c, no_wrap=True)
    t.add_row("stencil2d_long_name", "123,456,789", "0.000123456", "12.3456x", "/a/long/path/to/kernel.py:123")
    con.print(t)
    out = buf.getvalue()
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 40
    for value in ("123,456,789", "0.000123456", "12.3456x", "stencil2d_long_name"):
        assert value in out
    assert "kernel.py:123" in out.replace("\n", "").replace("│", "").replace(" ", "")


@pytest.mark.parametrize("args", [["trace-info", "{trace}"], ["features", "{trace}", "--explain"],
                                  ["simulate", "{trace}", "--gpu", "p100"], ["predict", "{trace}"]])
def test_80_column_terminal(trace, args):
    res = _run(*[a.format(trace=trace) for a in args],
               env_extra={"TTY_COMPATIBLE": "1", "COLUMNS": "80", "NO_COLOR": "1"})
    assert res.returncode == 0, res.stderr
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", res.stdout)
    assert out.strip()
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
