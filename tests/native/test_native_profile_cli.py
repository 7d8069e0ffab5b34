"""``portcast profile --native SCRIPT.py``: a Numba script run under the Valgrind tool, its compiled regions
traced at machine level, reported like the Python profiler's regions (summary, features, prediction).

The end-to-end run starts CPython and Numba under Valgrind (about a minute here); it is the one slow test
of this area.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from native_toolchain import needs_tool
from typer.testing import CliRunner

from core.trace_schema import N_OPS, Op
from portcast.cli import app
from profiler.tracefile import TraceFile

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "numba_saxpy.py"



def _text(res):
    return " ".join(res.output.split())


@needs_tool
def test_profile_native_numba_example(tmp_path, monkeypatch):
    n = 1000
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba_cache"))
    # fill Numba's cache with a plain run, so that the traced run loads the compiled code
    plain = subprocess.run([sys.executable, str(EXAMPLE), str(n)], capture_output=True, text=True, check=True,
                           env=dict(os.environ))
    assert plain.stdout.startswith(f"numba saxpy n={n}: checksum")
    out = tmp_path / "traces"
    res = runner.invoke(app, ["profile", "--native", "--no-progress", "-o", str(out), str(EXAMPLE), "--", str(n)])
    assert res.exit_code == 0, res.output
    text = _text(res)
    # the Python profiler's report: summary line, key features, the prediction paragraph
    assert "traced regions" in text and "saxpy │ 0 │ 13,013 │" in text and "│ 1000 │" in text and "native" in text
    assert "GPU-relevant features of saxpy #0" in text and "warp_threads │ 1,000 │" in text
    # the same prediction as a Python region's: the shipped GPU-time model on the default target, with the
    # bounds of the same work; no speedup (no CPU time outside Valgrind) and the note of what the trace lacks
    assert "GPU time of saxpy #0 on NVIDIA A100 SXM4 40 GB (a100, Ampere): predicted kernel time" in text
    assert "What bounds the GPU time of saxpy #0 on a100" in text
    assert "predictor/models/gputime.json" in text and "provisional" not in text and "simulated: h100" not in text
    assert "no speedup: the region's CPU time was not measured (a native region runs only under Valgrind" in text
    assert "saxpy #0: traced natively: the trace has no source-level thread-space analysis" in text
    assert [p.name for p in out.iterdir()] == ["saxpy.0.parquet"]
    tf = TraceFile(out / "saxpy.0.parquet")
    info = tf.info
    assert info.mode == "native" and info.complete and info.n_threads == n
    assert info.source.endswith(f"numba_saxpy.py {n}")
    counts = np.bincount(tf.read().op, minlength=N_OPS)
    # per iteration of the compiled loop: x[i], y[i] loads; a*x[i] (FP64_MUL) + y[i] (FP64_ALU); the y[i] store;
    # the loop branch; region_thread(i)'s client request (OTHER, three stores of its argument block);
    # plus region_end's request and the loop exit
    assert counts[Op.FP64_MUL] == n and counts[Op.FP64_ALU] == n
    assert counts[Op.LOAD] == 2 * n + 1 and counts[Op.BRANCH] == n + 1 and counts[Op.OTHER] == n + 1
    assert counts[Op.STORE] == 4 * n + 3
    assert info.extra["loads"] == counts[Op.LOAD] and info.extra["stores"] == counts[Op.STORE]
    assert info.extra["cond_branches"] == n + 1 and info.n_records == counts.sum() == 13 * n + 13


@needs_tool
def test_profile_native_script_without_region_is_an_error(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text('print("no region here")\n')
    res = runner.invoke(app, ["profile", "--native", "--no-progress", str(script)])
    assert res.exit_code == 2
    text = _text(res)
    assert text.startswith(f"error: {script} ran under the Valgrind tool but executed no native region")
    assert "profiler.native.numba_markers" in text and "Traceback" not in res.output
    script.write_text("import sys\nsys.exit(4)\n")
    res = runner.invoke(app, ["profile", "--native", "--no-progress", "-r", "k", str(script)])
    assert res.exit_code == 2
    assert "executed no native region named 'k'" in _text(res) and "(it exited with status 4)" in _text(res)


def test_profile_native_bad_usage_and_missing_toolchain(tmp_path, monkeypatch):
    res = runner.invoke(app, ["profile", "--native", str(tmp_path / "none.py")])
    assert res.exit_code == 2 and "none.py: no such script" in _text(res)
    res = runner.invoke(app, ["profile", "--native", "-r", "a", "-r", "b", str(EXAMPLE)])
    assert res.exit_code == 2 and "--native traces one --region at a time" in _text(res)
    res = runner.invoke(app, ["profile", "--native", "--function", "examples/saxpy.py:saxpy"])
    assert res.exit_code == 2 and "--function is for the Python profiler" in _text(res)
    res = runner.invoke(app, ["profile", "--native", "--mode", "compiled", str(EXAMPLE)])
    assert res.exit_code == 2 and "--mode applies to the Python profiler" in _text(res)
    res = runner.invoke(app, ["profile", "--native", "--baseline", str(EXAMPLE)])
    assert res.exit_code == 2 and "--baseline applies to the Python profiler" in _text(res)
    monkeypatch.setenv("CC", "portcast-no-such-cc")
    res = runner.invoke(app, ["profile", "--native", str(EXAMPLE)])
    assert res.exit_code == 2
    assert _text(res).startswith("error: cannot build Portcast's Valgrind tool; missing: the C compiler "
                                 "'portcast-no-such-cc'")
