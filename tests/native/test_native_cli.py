"""``portcast record`` and ``portcast import champsim|lackey``."""

import lzma
import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_native_importers import LACKEY, WORKED, WORKED_RECORDS  # shared worked examples
from test_native_tool import build
from typer.testing import CliRunner

from core.trace_schema import N_OPS, Op
from portcast.cli import app
from profiler.native import INCLUDE_DIR
from profiler.native.build import NativeToolError, find_toolchain
from profiler.native.importers import champsim_records
from profiler.tracefile import TraceFile

runner = CliRunner()


def test_import_champsim_and_lackey_write_parquet(tmp_path):
    src = tmp_path / "w.champsim.xz"
    src.write_bytes(lzma.compress(champsim_records(WORKED)))
    out = tmp_path / "w.parquet"
    res = runner.invoke(app, ["import", "champsim", str(src), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "10 records from 6 instructions" in res.output
    assert TraceFile(out).read().records() == [tuple(int(v) for v in r) for r in WORKED_RECORDS]
    lk = tmp_path / "run.lackey"
    lk.write_text(LACKEY)
    out2 = tmp_path / "lk.parquet"
    res = runner.invoke(app, ["import", "lackey", str(lk), "--out", str(out2), "--name", "kernel"])
    assert res.exit_code == 0, res.output
    tf = TraceFile(out2)
    assert tf.info.name == "kernel" and tf.n_records == 10
    assert np.bincount(tf.read().op, minlength=16)[Op.STORE] == 3


def test_import_errors_are_one_line_and_leave_no_file(tmp_path):
    bad = tmp_path / "bad.champsim"
    bad.write_bytes(champsim_records(WORKED[:1]) + b"\x01\x02")
    out = tmp_path / "bad.parquet"
    res = runner.invoke(app, ["import", "champsim", str(bad), "--out", str(out)])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert text.startswith("error:") and "byte offset 64: trailing partial record of 2 bytes" in text
    assert "Traceback" not in res.output and not out.exists()
    assert list(tmp_path.iterdir()) == [bad]
    res = runner.invoke(app, ["import", "lackey", str(tmp_path / "none.txt"), "--out", str(out)])
    assert res.exit_code == 2 and "no such file" in " ".join(res.output.split())
    res = runner.invoke(app, ["import", "lackey", str(bad), "--out", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and "expected a .parquet file name" in " ".join(res.output.split())


try:
    find_toolchain()
    _missing = None
except NativeToolError as exc:  # pragma: no cover
    _missing = str(exc)


@pytest.mark.skipif(_missing is not None, reason=f"native toolchain missing: {_missing}")
def test_record_command_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("PORTCAST_CACHE", str(tmp_path / "cache"))
    exe = tmp_path / "kernels"
    subprocess.run(["gcc", "-O1", "-g", "-fno-inline", f"-I{INCLUDE_DIR}", "-o", str(exe),
                    str(Path(__file__).parent / "data" / "native_kernels.c"), "-lm"], check=True)
    out = tmp_path / "traces"
    res = runner.invoke(app, ["record", "--region", "special", "--trace-dir", str(out), "--no-progress", "--",
                              str(exe), "200"])
    assert res.exit_code == 0, res.output
    assert [p.name for p in out.iterdir()] == ["special.0.parquet"]
    tf = TraceFile(out / "special.0.parquet")
    assert tf.info.mode == "native" and tf.info.complete and tf.info.source.endswith("kernels 200")
    counts = np.bincount(tf.read().op, minlength=N_OPS)
    assert counts[Op.FP64_SPECIAL] == 200 and counts[Op.FP64_DIV] == 200  # sqrt and division of doubles
    assert any(e.function == "k_special" for e in tf.static)
    res = runner.invoke(app, ["record", "--no-progress", "--", str(tmp_path / "missing-program")])
    assert res.exit_code == 2 and "does not exist or is not executable" in " ".join(res.output.split())
    res = runner.invoke(app, ["record", "--region", "x", "--whole-program", "--", str(exe)])
    assert res.exit_code == 2 and "exclude each other" in " ".join(res.output.split())


LONG_C = r"""
#include <stdlib.h>
#include "portcast.h"
static volatile double s;
int main(int argc, char** argv) {
    long n = atol(argv[1]);
    PORTCAST_REGION_START("long");
    for (long i = 0; i < n; i++) s += i * 0.5;
    PORTCAST_REGION_END("long");
    return 0;
}
"""


@pytest.mark.skipif(_missing is not None, reason=f"native toolchain missing: {_missing}")
def test_ctrl_c_during_record_writes_the_trace_so_far_marked_incomplete(tmp_path):
    """A real SIGINT to ``portcast record``'s process group while the region runs: the program is stopped,
    the region's records so far are written (complete=False, "interrupted"), the summary says so, exit 130."""
    import os
    import signal
    import sys
    import time

    exe = build(tmp_path, "long", LONG_C, "-O1")
    out = tmp_path / "traces"
    proc = subprocess.Popen(
        [sys.executable, "-m", "portcast", "record", "--no-progress", "--trace-dir", str(out), "--", str(exe),
         str(10 ** 10)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL), os.setsid()),
        env={**os.environ, "COLUMNS": "200"})
    try:
        deadline = time.monotonic() + 120
        # wait until records are being written (the Parquet writer's temporary file has data)
        while time.monotonic() < deadline and not any(
                p.stat().st_size > 1 << 20 for p in (out.iterdir() if out.exists() else [])):
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        text, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, text
    flat = " ".join(text.split())
    assert "Traceback" not in text and "interrupted: the traces above are what was recorded" in flat
    assert [p.name for p in out.iterdir()] == ["long.0.parquet"]
    tf = TraceFile(out / "long.0.parquet")
    assert not tf.info.complete and tf.info.error == "interrupted (KeyboardInterrupt)"
    assert tf.n_records > 0 and tf.n_records == len(tf.read())


@pytest.mark.skipif(_missing is not None, reason=f"native toolchain missing: {_missing}")
def test_record_of_a_wrapper_script_says_to_record_the_program_itself(tmp_path):
    """A shell script that starts the marked program: the tool traces /bin/sh, the program runs untraced
    (a forked child, or after exec). The output says why nothing was recorded, with no empty table."""
    exe = build(tmp_path, "long", LONG_C, "-O1")
    for body in (f"{exe} 1000\n", f"exec {exe} 1000\n"):
        wrapper = tmp_path / "run.sh"
        wrapper.write_text("#!/bin/sh\n" + body)
        wrapper.chmod(0o755)
        res = runner.invoke(app, ["record", "--no-progress", "--", str(wrapper)])
        assert res.exit_code == 0, res.output
        flat = " ".join(res.output.split())
        assert "no region was recorded" in flat
        assert f"{wrapper} is a script run by /bin/sh: the tool traces that interpreter" in flat
        assert "traced regions" not in flat
