"""Strings from the user or from a file print as themselves: region names, paths, source lines, a trace's
metadata and the user's exception messages are never read as Rich markup, and their control characters are
written out (``\\x1b``), so none reaches the terminal (portcast.safe_text).

Each command a user runs is run on hostile input, as a user runs it (a process, its stdout and stderr):
``portcast profile`` of a script in a folder named ``x[/b]y`` whose regions have hostile names (text,
``--json``, ``--report``), then ``trace-info``, ``features --explain`` and ``simulate`` of its traces and of a
trace whose metadata (region name, error, mode, paths, source lines) holds escape sequences and markup."""

import dataclasses
import html
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: the regions of the hostile script: (name, as it must be printed)
NAMES = (
    ("y[i] += x[i]", "y[i] += x[i]"),
    ("a[/bold]b", "a[/bold]b"),
    ("[link=http://x]click[/link]", "[link=http://x]click[/link]"),
    ("red\x1b[31mbell\x07", "red\\x1b[31mbell\\x07"),
)

SCRIPT = """\
import numpy as np
import portcast

x = np.arange(8.0)
y = np.zeros(8)
NAMES = {names!r}

with portcast.region(NAMES[0]):
    for i in portcast.parallel(range(8)):
        y[i] += x[i]

with portcast.region(NAMES[1]):
    for i in portcast.parallel(range(8)):
        y[i] = 2.0 * x[i]

with portcast.region(NAMES[2]):
    for i in portcast.parallel(range(8)):
        y[i] = x[i] + 1.0

with portcast.region(NAMES[3]):
    for i in portcast.parallel(range(8)):
        y[i] = x[i] - 1.0
"""

#: what a shared trace's metadata holds: an SGR colour, an OSC 8 hyperlink, BEL, backspace, carriage
#: return, Rich's link markup and a closing tag that matches nothing; and how each must be printed
EVIL = "\x1b[31m\x1b]8;;http://e\x1b\\L\x07\x08\r[link=http://x]c[/link][/b]"
EVIL_SHOWN = "\\x1b[31m\\x1b]8;;http://e\\x1b\\L\\x07\\x08\\x0d[link=http://x]c[/link][/b]"
#: the same in the paths (shorter: the explanation table's columns fit in 200 columns)
PATH = "/s\x1b[31m[/b]\x07.py"
PATH_SHOWN = "/s\\x1b[31m[/b]\\x07.py"
RAW_BYTES = ("\x1b", "\x07", "\x08", "\r", "\x9b")


def _portcast(*args, cwd=None):
    """``python -m portcast ARGS`` with this checkout's code, as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "portcast", *map(str, args)], capture_output=True, env=env,
                          cwd=cwd or ROOT, timeout=600)


def _clean(res, status: int = 0) -> tuple[str, str]:
    """The run's stdout and stderr as text, after checking its status and that no control byte and no
    traceback (a MarkupError, say) reached either."""
    out, err = res.stdout.decode(), res.stderr.decode()
    assert res.returncode == status, out + err
    for stream in (out, err):
        assert [c for c in RAW_BYTES if c in stream] == [], stream
    assert "MarkupError" not in out + err
    return out, err


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile script in ``x[/b]y``, profiled once with the text report, ``--report`` and ``--trace-dir``."""
    folder = tmp_path_factory.mktemp("h") / "x[/b]y"  # a folder x[ and in it b]y
    folder.mkdir(parents=True)
    script = folder / "hostile.py"
    script.write_text(SCRIPT.format(names=tuple(n for n, _ in NAMES)))
    res = _portcast("profile", script, "--no-progress", "--mode", "interpreted", "--trace-dir", folder / "traces",
                    "--report", folder / "report.html")
    return script, res


def _traces(folder: Path) -> dict:
    from profiler.tracefile import TraceFile

    return {TraceFile(p).info.name: p for p in sorted(folder.rglob("*.parquet"))}


def test_profile_prints_every_name_as_itself(hostile):
    script, res = hostile
    out, err = _clean(res)
    lines = out.splitlines()
    for _, shown in NAMES:
        label = f"{shown} #0"
        assert any(line.startswith(("│ " + shown + " ", "┃ " + shown + " ")) for line in lines), shown  # summary row
        assert f"GPU-relevant features of {label}" in lines
        assert f"thread space of {label}: the loops marked with numba.prange / portcast.parallel" in lines
        assert any(line.startswith(f"GPU time of {label} on NVIDIA A100") for line in lines), label
        assert any(line.startswith(f"What bounds the GPU time of {label} on a100") for line in lines), label
        assert any(line.startswith(f"baseline {label}: not measured (marked blocks") for line in lines), label
    # the folder's name in the paths of the files written
    assert sum(line.startswith(f"wrote {script.parent}{os.sep}traces") for line in lines) == len(NAMES)
    assert f"wrote the report {script.parent / 'report.html'}" in err


def test_profile_report_escapes_the_names(hostile):
    script, _ = hostile
    page = (script.parent / "report.html").read_text(encoding="utf-8")
    assert [c for c in RAW_BYTES if c in page] == []
    for _, shown in NAMES:
        assert f">Region {html.escape(shown)} #0</h2>" in page
    assert f"<code>{html.escape(str(script))}</code>" in page


def test_profile_json_keeps_the_exact_names(hostile, tmp_path):
    script, _ = hostile
    out, _ = _clean(_portcast("profile", script, "--no-progress", "--mode", "interpreted", "--json"))
    doc = json.loads(out)
    assert [r["name"] for r in doc["regions"]] == [n for n, _ in NAMES]
    assert doc["target"] == str(script)
    assert [r["source"] for r in doc["regions"]] == [f"{script}:{line}" for line in (8, 12, 16, 20)]


def test_trace_info_of_the_hostile_traces(hostile):
    script, _ = hostile
    traces = _traces(script.parent / "traces")
    assert sorted(traces) == sorted(n for n, _ in NAMES)
    for (name, shown), line in zip(NAMES, (8, 12, 16, 20)):
        out, _ = _clean(_portcast("trace-info", traces[name]))
        rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines()
                if line.startswith("│")}
        assert rows["region"] == shown
        assert rows["source"] == f"{script}:{line}"
        assert rows["parallel loop"] == f"{script}:{line + 1}"


@pytest.fixture(scope="module")
def evil_trace(hostile, tmp_path_factory):
    """One of the hostile script's traces, its metadata rewritten by the trace writer: region name, error,
    mode, source, parallel loop, and the static table's file paths and source lines hold :data:`EVIL`."""
    from profiler.trace import StaticTable
    from profiler.tracefile import read_trace, write_trace

    script, _ = hostile
    info, static, chunk = read_trace(_traces(script.parent / "traces")["y[i] += x[i]"])
    info = dataclasses.replace(info, name="r" + EVIL, complete=False, error="boom" + EVIL, mode="m" + EVIL,
                               source=PATH + ":8", parallel_loop=PATH + ":9", n_records=0)
    static = StaticTable(dataclasses.replace(e, file=PATH, text=e.text + EVIL) for e in static)
    return write_trace(tmp_path_factory.mktemp("evil") / "evil.parquet", info, static, chunk)


def test_trace_info_of_a_hostile_trace(evil_trace):
    out, _ = _clean(_portcast("trace-info", evil_trace))
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines()
            if line.startswith("│")}
    assert rows["region"] == "r" + EVIL_SHOWN
    assert rows["complete"] == f"False (boom{EVIL_SHOWN})"
    assert rows["mode"] == "m" + EVIL_SHOWN
    assert rows["source"] == PATH_SHOWN + ":8"
    assert rows["parallel loop"] == PATH_SHOWN + ":9"


def _json_fields(trace) -> dict:
    out, _ = _clean(_portcast("trace-info", trace, "--json"))
    (table,) = json.loads(out)["tables"]
    return {row[0]: row[1] for row in table["rows"]}


def test_trace_info_json_keeps_the_exact_metadata(hostile, evil_trace):
    fields = _json_fields(evil_trace)
    assert fields["region"] == "r" + EVIL
    assert fields["complete"] == f"False (boom{EVIL})"
    assert fields["source"] == PATH + ":8"
    script, _ = hostile
    traces = _traces(script.parent / "traces")
    for name in ("y[i] += x[i]", "[link=http://x]click[/link]"):
        fields = _json_fields(traces[name])
        assert (fields["region"], fields["source"]) == (name, f"{script}:{8 if name.startswith('y') else 16}")


def test_features_explain_of_a_hostile_trace(evil_trace):
    out, _ = _clean(_portcast("features", evil_trace, "--explain"))
    lines = out.splitlines()
    assert any(line.split("┃")[2].strip() == "r" + EVIL_SHOWN for line in lines if line.count("┃") == 3)
    # the lines behind the features: the static table's paths and source lines
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in lines[lines.index(
        "what makes evil.parquet GPU-unfriendly"):] if line.startswith("│")]
    assert {r[0] for r in rows} == {"footprint"}  # coalesced: each array starts on a page of its own
    assert {(r[3], r[4]) for r in rows if r[0] == "footprint"} == {
        (PATH_SHOWN + ":10", "y[i]" + EVIL_SHOWN), (PATH_SHOWN + ":10", "x[i]" + EVIL_SHOWN)}
    assert {(r[3], r[4]) for r in rows} <= {
        (PATH_SHOWN + ":10", "y[i]" + EVIL_SHOWN), (PATH_SHOWN + ":10", "x[i]" + EVIL_SHOWN)}


def test_simulate_a_hostile_trace(evil_trace):
    out, _ = _clean(_portcast("simulate", evil_trace))
    assert out.splitlines()[0].strip() == f"r{EVIL_SHOWN} on h100: 132 SMs, 1755 MHz core, 2619 MHz memory"


def test_the_users_exception_prints_as_text(tmp_path):
    """A region named with markup raises an exception whose message holds escapes and markup: the traceback,
    the incomplete region and the closing line print them as text, and the status is the script's (1)."""
    folder = tmp_path / "x[/b]y"
    folder.mkdir(parents=True)
    script = folder / "fails.py"
    script.write_text("import portcast\n\nwith portcast.region('a[/bold]b'):\n"
                      "    raise ValueError('bad \\x1b[31m[/bold] \\x07')\n")
    out, err = _clean(_portcast("profile", script, "--no-progress", "--mode", "interpreted"), status=1)
    assert f'  File "{script}", line 4, in ' in err
    assert "ValueError: bad \\x1b[31m[/bold] \\x07" in err
    assert "the script raised ValueError: the report above covers what ran before it; a[/bold]b #0 marked " \
           "incomplete (the records before the exception are kept)" in err
    assert any(line.startswith("│ a[/bold]b ") and "no (ValueError: bad \\x1b[31m[/bold] \\x07)" in line
               for line in out.splitlines())


def test_safe_text():
    from portcast.safe_text import as_text, escape, raw, visible

    assert visible("a\x1b[31mb\x07\x08\r\n\tc\x7f\x9b\u202e") == "a\\x1b[31mb\\x07\\x08\\x0d\\x0a\tc\\x7f\\x9b\\u202e"
    assert visible("one\ntwo\x1b", lines=True) == "one\ntwo\\x1b"
    assert visible(None) == "" and visible(3) == "3"
    from rich.text import Text

    for s in ("y[i] += x[i]", "a[/bold]b", "[link=http://x]click[/link]", "\\[b]", "a\\\\[/b]"):
        assert Text.from_markup(escape(s)).plain == s
        assert Text.from_markup(f"[bold]{escape(s)}[/] #0").plain == s + " #0"
    path = "C:\\out\\"
    assert Text.from_markup(f"wrote {escape(path)}").plain == "wrote " + path
    t = as_text("a[/b]\x1b")
    assert t.plain == "a[/b]\\x1b" and raw(t) == "a[/b]\x1b" and raw("a") is None


def test_the_console_writes_out_control_characters():
    """The last guard: a control character that reaches the console without portcast.safe_text is written
    out; Rich's own style codes still work."""
    from rich.text import Text

    from portcast.commands._common import _Console

    buf = io.StringIO()
    c = _Console(file=buf, force_terminal=True, color_system="standard", width=80)
    c.print(Text("x\x1by"), "[bold]z[/]")
    assert "x\\x1by" in buf.getvalue() and "\x1b[1mz" in buf.getvalue()


def test_dvfs_and_scale_of_a_hostile_trace(evil_trace, tmp_path):
    """The other commands that read a trace: the DVFS models (counters from the SIMT model of the trace) and a
    scaling model trained on the trace's sweep print and show the region's name as text too (their status
    lines read it as markup before)."""
    out, _ = _clean(_portcast("dvfs", "predict", "--counters", evil_trace, "--targets", "700"))
    assert "r" + EVIL_SHOWN in out
    _, err = _clean(_portcast("scale", "train", evil_trace, "--sweep", "4,8;700,1000;924", "-o", tmp_path / "m.json"))
    assert "incomplete trace: region 'r\\x1b[31m" in err
