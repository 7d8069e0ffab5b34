"""The uninstrumented run (``measure_uninstrumented`` / ``portcast profile --baseline``): RegionInfo's
``uninstrumented_time_s`` is measured on copies of the inputs, stored in trace files, and shown as a slowdown."""

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import profiler_test_kernels as K
from portcast.cli import app
from profiler.session import measure_uninstrumented, profile_script, trace_function
from profiler.trace import MemorySink
from profiler.tracefile import TraceDirectorySink, read_trace

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_trace_function_measures_njit_baseline_on_copies(mode, tmp_path):
    x, y = np.arange(6.0), np.ones(6)
    res = trace_function(K.saxpy, (2.0, x, y), sinks=[TraceDirectorySink(tmp_path)], mode=mode, measure_uninstrumented=True)
    t = res.info.uninstrumented_time_s
    assert isinstance(t, float) and 0.0 < t < 1.0
    assert res.info.extra["uninstrumented_mode"] == "njit"
    # the baseline ran on copies: the traced run updated y exactly once
    assert y.tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0] and x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    (path,) = list(tmp_path.glob("saxpy.*.parquet"))
    info, _, chunk = read_trace(path)
    assert info.uninstrumented_time_s == t and info.extra["uninstrumented_mode"] == "njit" and len(chunk) == 42


def test_baseline_is_not_measured_by_default():
    res = trace_function(K.saxpy, (2.0, np.ones(3), np.ones(3)), mode="interpreted")
    assert res.info.uninstrumented_time_s is None and "uninstrumented_mode" not in res.info.extra


def test_baseline_falls_back_to_python_when_numba_cannot_compile():
    xs, d = [1, 2, 3], {"k": 2}
    res = trace_function(K.with_lists, (xs, d), mode="auto", measure_uninstrumented=True)
    assert res.value == 12 and xs == [1, 2, 3]
    assert res.info.uninstrumented_time_s > 0 and res.info.extra["uninstrumented_mode"] == "python"
    b = measure_uninstrumented(K.special, (2.0,), jit=False, repeat=2)
    assert b.how == "python" and b.seconds > 0 and b.error is None


def test_baseline_of_a_raising_region_is_none_and_the_trace_still_raises():
    b = measure_uninstrumented(K.raises_midway, (np.zeros(5, np.int64),))
    assert b.seconds is None and b.error.startswith("ZeroDivisionError")
    sink = MemorySink()
    x = np.zeros(5, np.int64)
    with pytest.raises(ZeroDivisionError):
        trace_function(K.raises_midway, (x,), sinks=[sink], mode="interpreted", measure_uninstrumented=True)
    info = sink.regions[0][0]
    assert info.uninstrumented_time_s is None and info.extra["uninstrumented_error"].startswith("ZeroDivisionError")
    assert x.tolist() == [5, 10, 0, 0, 0]  # only the traced run touched the caller's array


def test_measure_rejects_bad_repeat():
    with pytest.raises(ValueError, match="repeat"):
        measure_uninstrumented(K.saxpy, (1.0, np.ones(2), np.ones(2)), repeat=0)


def test_profile_script_measures_function_regions_not_blocks(tmp_path):
    path = tmp_path / "script_bl.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        import portcast

        @portcast.region("dec")
        def dec(x):
            for i in range(x.shape[0]):
                x[i] = x[i] * 2.0

        x = np.ones(4)
        dec(x)
        with portcast.region("blk"):
            for i in range(x.shape[0]):
                x[i] = x[i] + 1.0
        assert x.tolist() == [3.0] * 4
    """))
    infos = profile_script(path, mode="interpreted", measure_uninstrumented=True)
    by = {i.name: i for i in infos}
    assert by["dec"].uninstrumented_time_s > 0 and by["dec"].extra["uninstrumented_mode"] == "njit"
    assert by["blk"].uninstrumented_time_s is None


def test_cli_baseline_prints_slowdown():
    r = CliRunner().invoke(app, ["profile", "--function", f"{ROOT / 'examples' / 'saxpy.py'}:saxpy", "--args",
                                 "(2.0, np.ones(100), np.ones(100))", "--no-progress", "--no-features", "--baseline"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert re.search(r"baseline saxpy #\d+: uninstrumented [0-9.e-]+ ms \(njit\); traced [0-9.e-]+ ms = [0-9.]+x slowdown", flat), flat
