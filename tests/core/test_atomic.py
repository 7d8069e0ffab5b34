"""Atomic output: the final name appears only when the file is whole; a failure leaves nothing behind."""

import json
import os
from pathlib import Path

import pytest

from core.atomic import atomic_path, atomic_write_json, atomic_write_text


def test_text_and_json_land_whole(tmp_path):
    p = atomic_write_text(tmp_path / "sub" / "a.txt", "héllo\n")
    assert p.read_text(encoding="utf-8") == "héllo\n"
    q = atomic_write_json(tmp_path / "b.json", {"x": [1, 2]}, sort_keys=True)
    assert json.loads(q.read_text()) == {"x": [1, 2]}
    assert sorted(f.name for f in tmp_path.iterdir()) == ["b.json", "sub"]


def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="disk on fire"):
        with atomic_path(target) as tmp:
            tmp.write_text("half of the new")
            raise RuntimeError("disk on fire")
    assert target.read_text() == "old\n"
    assert [f.name for f in tmp_path.iterdir()] == ["t.csv"]


def test_permissions_follow_the_umask_like_a_plain_open(tmp_path):
    import os

    old = os.umask(0o027)
    try:
        p = atomic_write_text(tmp_path / "p.txt", "x")
    finally:
        os.umask(old)
    assert (p.stat().st_mode & 0o777) == 0o640


def test_a_killed_runs_temporaries_are_removed_by_the_next_write(tmp_path):
    import subprocess
    import sys

    from core.atomic import atomic_write_text, remove_stale_temps

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".out.json.{pid}.abc123.tmp"
    stale.write_text("half")
    live = tmp_path / f".out.json.{os.getpid()}.def456.tmp"  # a writer still running (this process)
    live.write_text("busy")
    other = tmp_path / f".other.json.{pid}.x.tmp"  # another file's temporary: not touched
    other.write_text("x")
    atomic_write_text(tmp_path / "out.json", "{}")
    assert not stale.exists() and live.exists() and other.exists()
    assert (tmp_path / "out.json").read_text() == "{}"
    # a temporary of the older form (no process id) goes once it is an hour old
    old = tmp_path / ".out.json.q1w2e3.tmp"
    old.write_text("old")
    os.utime(old, (0, 0))
    assert remove_stale_temps(tmp_path / "out.json") == [old] and not old.exists()
    # every temporary Portcast makes carries its process id
    from core.atomic import make_temp

    fd, name = make_temp(tmp_path / "new.bin")
    os.close(fd)
    assert Path(name).name.startswith(f".new.bin.{os.getpid()}.") and name.endswith(".tmp")


def test_a_killed_trace_writers_temporary_is_removed_by_the_next_run(tmp_path):
    import subprocess
    import sys

    from typer.testing import CliRunner

    from portcast.cli import app

    pid = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                             text=True, check=True).stdout)
    stale = tmp_path / f".saxpy.0.parquet.{pid}.zz.tmp"
    stale.write_bytes(b"PAR1 partial")
    root = Path(__file__).resolve().parents[2]
    res = CliRunner().invoke(app, ["profile", str(root / "examples" / "saxpy.py"), "--trace-dir", str(tmp_path),
                                   "--no-progress", "--no-features", "--no-baseline", "--", "64"])
    assert res.exit_code == 0, res.output
    assert not stale.exists() and (tmp_path / "saxpy.0.parquet").exists()
