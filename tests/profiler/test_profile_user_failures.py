"""`portcast profile` when the user's own code fails: the user's traceback (Portcast's frames removed), the
report of what ran before, the traces kept and marked incomplete, and the script's exit status."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from portcast.cli import app
from profiler.tracefile import TraceFile

REGION = '''import sys
import numpy as np
import portcast


@portcast.region("work")
def work(x, fail_at=-1):
    for i in portcast.parallel(range(x.shape[0])):
        if i == fail_at:
            raise ValueError(f"bad element {i}")
        x[i] = x[i] * 2
    return x
'''


def _run(tmp_path, body, *extra):
    script = tmp_path / "user.py"
    script.write_text(REGION + body)
    res = CliRunner().invoke(app, ["profile", str(script), "--no-progress", "--no-features",
                                   "--trace-dir", str(tmp_path / "traces"), *extra])
    return res, " ".join(res.output.split()), script


def test_exception_inside_a_region(tmp_path):
    res, out, script = _run(tmp_path, "\n\ndef main():\n    work(np.ones(100), fail_at=50)\n\n\nmain()\n")
    assert res.exit_code == 1, res.output
    # the user's traceback: their frames, in order, and the exception; none of Portcast's
    assert "Traceback (most recent call last):" in res.output
    assert f'File "{script}", line 19, in <module>' in res.output
    assert f'File "{script}", line 16, in main' in res.output
    assert f'File "{script}", line 10, in work' in res.output
    assert "ValueError: bad element 50" in res.output
    assert "/profiler/" not in res.output.split("Traceback")[1].split("ValueError")[0]
    # the report of what ran, and where the trace went
    assert "no (ValueError: bad element 50)" in out
    assert "the script raised ValueError: the report above covers what ran before it; work #0 marked incomplete" in out
    trace = tmp_path / "traces" / "work.0.parquet"
    assert f"wrote {trace}" in out
    tf = TraceFile(trace)
    assert not tf.info.complete and tf.info.n_records == 350  # 50 iterations of 7 records before the raise


def test_exception_outside_a_region_after_one_ran(tmp_path):
    res, out, script = _run(tmp_path, "\nwork(np.ones(64))\n{}['missing']\n")
    assert res.exit_code == 1, res.output
    assert f'File "{script}", line 15, in <module>' in res.output and "KeyError: 'missing'" in res.output
    assert "traced regions" in out and "work 0 448" in out.replace("│", "").replace("  ", " ")
    assert "the script raised KeyError: the report above covers what ran before it" in out
    assert TraceFile(tmp_path / "traces" / "work.0.parquet").info.complete


@pytest.mark.parametrize("body, status", [("\nwork(np.ones(64))\nsys.exit(3)\n", 3),
                                          ("\nwork(np.ones(64))\nsys.exit('fatal: done')\n", 1),
                                          ("\nwork(np.ones(64))\nsys.exit(0)\n", 0)])
def test_sys_exit_keeps_the_report_and_the_status(tmp_path, body, status):
    res, out, _ = _run(tmp_path, body)
    assert res.exit_code == status, res.output
    assert "traced regions" in out and "yes" in out
    if status == 3:
        assert "the script exited with status 3" in out
    if isinstance(body, str) and "fatal" in body:
        assert "fatal: done" in out


def test_sys_exit_inside_a_decorated_region(tmp_path):
    script_body = '''

@portcast.region("quit")
def quit_early(x):
    for i in portcast.parallel(range(x.shape[0])):
        x[i] = x[i] + 1
    sys.exit(4)


quit_early(np.ones(8))
'''
    res, out, _ = _run(tmp_path, script_body, "--mode", "interpreted", "--no-baseline")
    assert res.exit_code == 4, res.output
    assert "traced regions" in out and "quit 0" in out.replace("│", "").replace("  ", " ")
    assert "the script exited with status 4" in out


def test_function_mode_exception_is_the_users(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text(REGION + "\n\ndef portcast_inputs():\n    return (np.ones(40), 7)\n")
    res = CliRunner().invoke(app, ["profile", "--function", f"{mod}:work", "--no-progress", "--no-features"])
    assert res.exit_code == 1, res.output
    assert f'File "{mod}", line 10, in work' in res.output and "ValueError: bad element 7" in res.output
    assert "no (ValueError: bad element 7)" in " ".join(res.output.split())


def test_portcast_input_errors_stay_one_line(tmp_path):
    res = CliRunner().invoke(app, ["profile", str(tmp_path / "absent.py"), "--no-progress"])
    assert res.exit_code == 2 and "no such script" in res.output and "Traceback" not in res.output


def test_a_second_run_never_replaces_the_first_runs_traces(tmp_path):
    root = Path(__file__).resolve().parents[2]
    traces = tmp_path / "traces"
    args = ["profile", str(root / "examples" / "saxpy.py"), "--trace-dir", str(traces), "--no-progress",
            "--no-features", "--no-baseline"]
    first = CliRunner().invoke(app, [*args, "--", "64"])
    assert first.exit_code == 0, first.output
    before = (traces / "saxpy.0.parquet").read_bytes()
    second = CliRunner().invoke(app, [*args, "--", "32"])
    assert second.exit_code == 0, second.output
    out = " ".join(second.output.split())
    assert f"{traces} holds traces of an earlier run: this run's go to {traces / 'run-2'}" in out
    assert (traces / "saxpy.0.parquet").read_bytes() == before
    assert TraceFile(traces / "run-2" / "saxpy.0.parquet").info.n_records == 7 * 32
    third = CliRunner().invoke(app, [*args, "--", "16"])
    assert third.exit_code == 0 and TraceFile(traces / "run-3" / "saxpy.0.parquet").info.n_records == 7 * 16
    forced = CliRunner().invoke(app, [*args, "--force", "--", "8"])
    assert forced.exit_code == 0 and TraceFile(traces / "saxpy.0.parquet").info.n_records == 7 * 8


DEEP = '''

sys.setrecursionlimit(100_000)


def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)


@portcast.region("deep")
def deep(x):
    for i in portcast.parallel(range(x.shape[0])):
        x[i] = depth(30_000)
    return x


print(deep(np.zeros(2))[0])
'''


def test_deep_recursion_is_traced_in_interpreted_mode_not_crashed(tmp_path):
    res, out, _ = _run(tmp_path, DEEP, "--no-baseline")
    assert res.exit_code == 0, res.output
    assert "depth calls itself; deep recursion in Numba-compiled code can overflow the native stack" in out
    assert "tracing in interpreted mode" in out
    # 2 threads x (30,000 calls of 8 records + the return chain) ... and no segmentation fault
    assert "deep 0 480,018" in out.replace("│", "").replace("  ", " ") and "interpreted" in out
    assert list((tmp_path / "traces").glob(".*.tmp")) == []
    res, out, _ = _run(tmp_path, DEEP, "--no-baseline", "--mode", "compiled")
    assert res.exit_code == 2 and "trace it with --mode interpreted" in out and "Traceback" not in res.output


def test_recursive_functions_finds_cycles_only():
    from types import SimpleNamespace

    from profiler.instrument import recursive_functions

    a, b, c, d = (SimpleNamespace(qualname=n) for n in "abcd")
    assert recursive_functions([(a, b), (b, c)]) == []
    assert recursive_functions([(a, b), (b, b)]) == ["b"]
    assert recursive_functions([(a, b), (b, c), (c, a), (c, d)]) == ["a", "b", "c"]
