"""Trace file names that cannot collide, runs that never write the same file, and outputs that cannot be
written reported as Portcast's own failures (run as a user runs them: `portcast profile`, `trace-info`,
`features` through the CLI).

A full disk is simulated in-process (a small tmpfs needs root to mount): the writer raises
``OSError(ENOSPC)`` as pyarrow and Python's file objects do when the disk fills (see ``full_disk``)."""

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from portcast.cli import app
from profiler.tracefile import TraceDirectorySink, TraceFile

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

NAMES = ["a/b", "a_b", "a b", "..", ".", "", "ü", "é"]
#: each name's file: plain names keep their name, any other gets a safe stem and a hash of the exact name
FILES = {"a/b": "a_b-c14cddc033.0.parquet", "a_b": "a_b.0.parquet", "a b": "a_b-c8687a08aa.0.parquet",
         "..": "region-5ec1f7e700.0.parquet", ".": "region-cdb4ee2aea.0.parquet", "": "region-e3b0c44298.0.parquet",
         "ü": "region-607474ca47.0.parquet", "é": "region-4a99557e40.0.parquet"}

REGIONS = '''import portcast

for name in {names!r}:
    with portcast.region(name):
        s = 0
        for i in range(3):
            s += i
print("the script finished")
'''


def _flat(res) -> str:
    return " ".join(res.output.split())


def _profile(script: Path, *args: str):
    return runner.invoke(app, ["profile", str(script), "--no-progress", "--no-features", "--no-baseline",
                               "--mode", "interpreted", *args])


def _script(tmp_path: Path, names) -> Path:
    script = tmp_path / "regions.py"
    script.write_text(REGIONS.format(names=list(names)), encoding="utf-8")
    return script


def _wrote(res) -> list[str]:
    return [line[len("wrote "):] for line in res.output.splitlines() if line.startswith("wrote ")]


def test_region_names_that_made_the_same_file_each_get_their_own(tmp_path):
    traces = tmp_path / "traces"
    res = _profile(_script(tmp_path, NAMES), "--trace-dir", str(traces))
    assert res.exit_code == 0, res.output
    # every region invocation is a file of its own, and every `wrote` line names a file that is there
    assert sorted(p.name for p in traces.iterdir()) == sorted(FILES.values())
    assert _wrote(res) == [str(traces / FILES[n]) for n in NAMES]
    # the exact name stays in the metadata, for readers and for trace-info
    for name, file in FILES.items():
        assert TraceFile(traces / file).info.name == name
    info = runner.invoke(app, ["trace-info", str(traces / FILES["a b"])])
    assert info.exit_code == 0 and "│ region                  │ a b" in info.output
    info = runner.invoke(app, ["trace-info", str(traces / FILES["ü"])])
    assert info.exit_code == 0 and "│ region                  │ ü" in info.output


def test_a_5000_character_region_name_is_a_file_name_that_fits(tmp_path):
    traces = tmp_path / "traces"
    res = _profile(_script(tmp_path, ["x" * 5000]), "--trace-dir", str(traces))
    assert res.exit_code == 0, res.output
    assert "File name too long" not in res.output and "the script raised" not in res.output
    file = traces / ("x" * 89 + "-c59d3c0480.0.parquet")
    assert [p.name for p in traces.iterdir()] == [file.name] and _wrote(res) == [str(file)]
    assert TraceFile(file).info.name == "x" * 5000


def test_two_runs_at_once_never_write_the_same_file(tmp_path):
    """One run (its own process) is inside its region while a second run starts with the same --trace-dir:
    the second writes to run-2, and both traces survive under the names their `wrote` lines give."""
    traces, started, release = tmp_path / "traces", tmp_path / "started", tmp_path / "release"
    slow = tmp_path / "slow.py"
    slow.write_text(f'''import os, time
import portcast

with portcast.region("shared"):
    s = 0
    for i in range(5):
        s += i
    open({str(started)!r}, "w").close()
    t0 = time.time()
    while not os.path.exists({str(release)!r}) and time.time() - t0 < 120:
        time.sleep(0.05)
''')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen([sys.executable, "-m", "portcast", "profile", str(slow), "--trace-dir", str(traces),
                              "--no-progress", "--no-features", "--no-baseline", "--mode", "interpreted"],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        t0 = time.time()
        while not started.exists():
            assert first.poll() is None and time.time() - t0 < 240, "the first run did not reach its region"
            time.sleep(0.05)
        second = _profile(_script(tmp_path, ["shared"]), "--trace-dir", str(traces))
    finally:
        release.touch()
        out, _ = first.communicate(timeout=240)
    assert first.returncode == 0, out
    assert second.exit_code == 0, second.output
    assert f"another run is writing to {traces}: this run's traces go to {traces / 'run-2'}" in _flat(second)
    assert f"wrote {traces / 'shared.0.parquet'}" in out
    assert _wrote(second) == [str(traces / "run-2" / "shared.0.parquet")]
    assert TraceFile(traces / "shared.0.parquet").info.n_records != TraceFile(
        traces / "run-2" / "shared.0.parquet").info.n_records  # 5 iterations against 3: each run's own trace
    assert sorted(str(p.relative_to(traces)) for p in traces.rglob("*")) == [
        "run-2", "run-2/shared.0.parquet", "shared.0.parquet"]


def test_two_sinks_of_one_folder_claim_different_folders(tmp_path):
    """From Python: a second sink asked for a folder that another one is writing to takes run-2; closing the
    first lets a later run see the folder as it is (here: holding a trace, so run-3 after run-2)."""
    from profiler.trace import RegionInfo, StaticTable

    a = TraceDirectorySink(tmp_path, replace=False)
    b = TraceDirectorySink(tmp_path, replace=False)
    assert (a.folder, b.folder, b.redirect_reason) == (tmp_path, tmp_path / "run-2", "busy")
    for sink in (a, b):
        sink.start_region(RegionInfo(name="r"), StaticTable())
        sink.end_region(RegionInfo(name="r"), StaticTable())
    assert (a.written, b.written) == ([tmp_path / "r.0.parquet"], [tmp_path / "run-2" / "r.0.parquet"])
    a.close()
    b.close()
    c = TraceDirectorySink(tmp_path, replace=False)
    assert (c.folder, c.redirect_reason) == (tmp_path / "run-3", "traces")
    c.close()
    assert not (tmp_path / "run-3").exists()  # created for a run that wrote nothing: removed again


@pytest.fixture
def full_disk(monkeypatch, tmp_path):
    """A folder on a disk that is full: writing a file in it (Python's file objects, pyarrow's Parquet writer)
    writes what fits and raises OSError(ENOSPC), as they do on a full file system."""
    disk = tmp_path / "full"
    disk.mkdir()
    real_write_text, real_write_table = Path.write_text, pq.ParquetWriter.write_table

    def write_text(self, data, *args, **kwargs):
        if disk in self.parents:
            real_write_text(self, data[: len(data) // 2], *args, **kwargs)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write_text(self, data, *args, **kwargs)

    def write_table(self, table, *args, **kwargs):
        if disk in Path(self.where).parents and not Path(self.where).name.startswith(".first."):
            raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")
        return real_write_table(self, table, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)
    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
    return disk


def test_a_full_disk_stops_the_traces_not_the_run(full_disk, tmp_path):
    traces = full_disk / "traces"
    res = _profile(_script(tmp_path, ["first", "second", "third"]), "--trace-dir", str(traces))
    out = _flat(res)
    assert res.exit_code == 2, res.output
    assert "the script finished" in out and "the script raised" not in out and "Traceback" not in out
    assert (f"error: cannot write the trace {traces / 'second.0.parquet'}: No space left on device; the run went "
            "on without writing more traces, and the 1 written before it is kept") in out
    assert "traced regions" in out and "third" in out  # the run went on: every region is reported
    # the trace written before is kept, the one that failed leaves nothing behind, and `wrote` says so
    assert sorted(p.name for p in traces.iterdir()) == ["first.0.parquet"]
    assert _wrote(res) == [str(traces / "first.0.parquet")] and TraceFile(traces / "first.0.parquet").info.complete


def test_a_read_only_trace_folder_while_the_run_goes_on(monkeypatch, tmp_path):
    """The folder turns read-only once the run has claimed it (a remount): the first file cannot be created."""
    import tempfile

    traces = tmp_path / "traces"
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == traces:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(traces))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    res = _profile(_script(tmp_path, ["first", "second"]), "--trace-dir", str(traces))
    out = _flat(res)
    assert res.exit_code == 2, res.output
    assert (f"error: cannot write the trace {traces / 'first.0.parquet'}: Read-only file system; the run went on "
            "without writing more traces, and none was written before it") in out
    assert "the script finished" in out and "the script raised" not in out and _wrote(res) == []
    assert not traces.exists()  # the run made the folder and could write nothing in it: not left behind


def test_a_trace_dir_that_names_a_file(tmp_path):
    script, taken = _script(tmp_path, ["first"]), tmp_path / "notes.txt"
    taken.write_text("keep me")
    res = _profile(script, "--trace-dir", str(taken))
    assert res.exit_code == 2, res.output
    assert _flat(res) == f"error: cannot write the trace folder {taken}: Not a directory"
    assert taken.read_text() == "keep me"


def test_a_trace_dir_whose_name_is_too_long(tmp_path):
    traces = tmp_path / ("t" * 300)
    res = _profile(_script(tmp_path, ["first"]), "--trace-dir", str(traces))
    assert res.exit_code == 2, res.output
    assert _flat(res) == f"error: cannot write the trace folder {traces}: File name too long"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
def test_a_trace_dir_without_write_permission(tmp_path):
    traces = tmp_path / "traces"
    traces.mkdir()
    traces.chmod(0o555)
    try:
        res = _profile(_script(tmp_path, ["first"]), "--trace-dir", str(traces))
    finally:
        traces.chmod(0o755)
    assert res.exit_code == 2, res.output
    assert _flat(res) == f"error: cannot write the trace folder {traces}: Permission denied"


def test_features_out_onto_a_full_disk(full_disk, tmp_path):
    traces = tmp_path / "traces"
    assert _profile(_script(tmp_path, ["first"]), "--trace-dir", str(traces)).exit_code == 0
    out = full_disk / "f.csv"
    res = runner.invoke(app, ["features", str(traces / "first.0.parquet"), "-o", str(out), "-q"])
    assert res.exit_code == 2, res.output
    assert _flat(res) == f"error: cannot write {out}: No space left on device"
    assert list(full_disk.iterdir()) == []  # no partial file, no temporary


def test_profile_report_onto_a_full_disk(full_disk, tmp_path):
    report = full_disk / "r.html"
    res = _profile(_script(tmp_path, ["first"]), "--report", str(report))
    assert res.exit_code == 2, res.output
    assert f"error: cannot write {report}: No space left on device" in _flat(res)
    assert "Traceback" not in res.output and list(full_disk.iterdir()) == []


def test_profile_report_naming_a_directory_even_with_force(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    res = _profile(_script(tmp_path, ["first"]), "--report", str(folder), "--force")
    assert res.exit_code == 2, res.output
    assert _flat(res) == f"error: --report {folder} is a directory: give a file name"  # before the script ran
    assert folder.is_dir() and list(folder.iterdir()) == []
