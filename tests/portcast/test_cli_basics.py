"""The `portcast` command itself: --version, help."""

from typer.testing import CliRunner

import portcast
from portcast.cli import app


def test_version_prints_the_package_version():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == portcast.__version__


def test_no_command_shows_help():
    res = CliRunner().invoke(app, [])
    assert "Usage" in res.output and "profile" in res.output


def test_help_shows_no_bool_metavar_for_flags():
    for args in (["profile", "--help"], ["gpu-time", "train", "--help"], ["measured", "trace", "--help"],
                 ["--help"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert "<bool>" not in res.output, args
    res = CliRunner().invoke(app, ["profile", "--help"])
    assert "--no-baseline" in res.output and "<int" in res.output  # value options keep their type


def test_short_options_mean_one_thing_everywhere():
    """-f is --format, -o is where output goes, -r is --region, in every command that has them."""
    import typer

    from portcast.cli import app as root

    meaning = {"-f": {"--format"}, "-o": {"--out", "--trace-dir"}, "-r": {"--region"}}
    cmd = typer.main.get_command(root)

    def walk(c, path):
        for p in getattr(c, "params", []):
            for short, longs in meaning.items():
                if short in p.opts:
                    long = [o for o in p.opts if o.startswith("--")]
                    assert set(long) <= longs, f"{' '.join(path)}: {short} means {long}"
        for name, sub in getattr(c, "commands", {}).items():
            walk(sub, [*path, name])

    walk(cmd, ["portcast"])


def test_piped_output_does_not_depend_on_the_terminal_width(tmp_path):
    """Output that is not a terminal (here: captured) is laid out the same for any COLUMNS, and a message
    with a long path stays on one line (the flake of a test that matched printed text)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    long_dir = tmp_path / ("a-rather-long-folder-name-" * 4)
    res = CliRunner().invoke(app, ["profile", str(root / "examples" / "saxpy.py"), "--trace-dir", str(long_dir),
                                   "--no-progress", "--no-features", "--no-baseline", "--", "64"])
    assert res.exit_code == 0, res.output
    trace = long_dir / "saxpy.0.parquet"
    assert f"wrote {trace}\n" in res.output  # one line, not wrapped
    outs = set()
    for columns in ("40", "80", "300"):
        env = {**__import__("os").environ, "COLUMNS": columns}
        run = subprocess.run([sys.executable, "-m", "portcast", "trace-info", str(trace)], capture_output=True,
                             text=True, env=env, check=True)
        outs.add(run.stdout)
    assert len(outs) == 1


def test_profile_is_readable_in_an_80_column_terminal():
    """In an 80-column terminal nothing is cut (no ellipsis), no line is longer than 80, and the numbers and
    file:line references are whole."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TTY_COMPATIBLE": "1", "COLUMNS": "80", "NO_COLOR": "1", "TERM": "xterm"}
    run = subprocess.run([sys.executable, "-m", "portcast", "profile", str(root / "examples" / "saxpy.py"),
                          "--no-progress", "--", "4000"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    text = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout)
    lines = text.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert "…" not in text
    assert "28,000" in text and "saxpy.py:17" in text  # records and the thread space's loop line
    assert "traced region saxpy #0" in text  # the summary stacked into field/value rows
