"""The uninstrumented run (``measure_uninstrumented`` / ``portcast profile --baseline``): RegionInfo's
``uninstrumented_time_s`` is measured on copies of the inputs, stored in trace files, and shown as a slowdown."""

import re
import textwrap
from pathlib import Path

import numpy as np
import profiler_test_kernels as K
import pytest
from typer.testing import CliRunner

from portcast.cli import app
from profiler.baseline import measure_uninstrumented
from profiler.session import profile_script, trace_function
from profiler.trace import MemorySink
from profiler.tracefile import TraceDirectorySink, read_trace

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_trace_function_measures_njit_baseline_on_copies(mode, tmp_path):
    x, y = np.arange(6.0), np.ones(6)
    res = trace_function(
        K.saxpy, (2.0, x, y), sinks=[TraceDirectorySink(tmp_path)], mode=mode, measure_uninstrumented=True
    )
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
    assert re.search(r"baseline saxpy #\d+: uninstrumented [0-9.e-]+ ms \(njit\); traced [0-9.e-]+ ms = [0-9.]+x "
                     r"slowdown", flat), flat


def test_baseline_of_a_parallel_dispatcher_times_its_serial_version():
    import numba
    import profiler_parallel_kernels as PK

    from profiler import baseline

    b = measure_uninstrumented(PK.scale, (np.arange(1000.0), np.zeros(1000)))
    assert b.how == "njit" and b.note == baseline.SERIAL_NOTE and b.seconds > 0 and b.error is None
    disp = baseline._BASELINE_JIT[PK.scale.py_func.__code__, True]
    assert disp is not PK.scale and disp.py_func is PK.scale.py_func and len(disp.signatures) == 1
    assert disp.targetoptions["parallel"] is False and disp.targetoptions["fastmath"] is True  # the other options kept
    # the run is single-threaded: every prange iteration on thread 0 (the parallel original uses its pool)
    measure_uninstrumented(PK.thread_ids, (np.full(4096, -1, np.int64),))
    serial = baseline._BASELINE_JIT[PK.thread_ids.py_func.__code__, True]
    assert serial.targetoptions["parallel"] is False
    assert set(serial(np.full(4096, -1, np.int64)).tolist()) == {0}
    assert set(PK.thread_ids(np.full(4096, -1, np.int64)).tolist()) <= set(range(numba.get_num_threads()))
    # a serial dispatcher is timed as it is, without a note
    plain = numba.njit(PK.scale.py_func)
    assert measure_uninstrumented(plain, (np.ones(8), np.zeros(8))).note is None


def test_trace_function_and_cli_report_the_serial_baseline():
    import profiler_parallel_kernels as PK

    from profiler.baseline import SERIAL_NOTE

    res = trace_function(PK.scale, (np.arange(10.0), np.zeros(10)), mode="compiled", measure_uninstrumented=True)
    assert res.info.extra["uninstrumented_mode"] == "njit" and res.info.extra["uninstrumented_note"] == SERIAL_NOTE
    assert res.value.tolist() == [2.0 * k for k in range(10)]
    path = Path(PK.__file__)
    r = CliRunner().invoke(
        app, ["profile", "--function", f"{path}:scale", "--no-progress", "--no-features", "--baseline"]
    )
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert re.search(r"baseline scale #\d+: uninstrumented [0-9.e-]+ ms \(njit; serial: the function is parallel=True; "
                     r"timed single-threaded \(prange runs as range\)\); traced", flat), flat
