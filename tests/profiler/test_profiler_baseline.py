"""The uninstrumented CPU time (``measure_uninstrumented`` / ``portcast profile --baseline``): the region as
written (or njit-compiled, ``--baseline-kind njit``) on copies of the inputs, repeated until the runs agree;
stored in RegionInfo and trace files, and shown with the tracing slowdown. Nothing here asserts a time: the
repetitions are counted on a fake clock, and which code ran is counted in Python frames."""

import random
import re
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import profiler_test_kernels as K
import pytest
from typer.testing import CliRunner

from portcast.cli import app
from profiler import baseline
from profiler.baseline import (
    NOT_COMPILABLE_NOTE,
    SERIAL_NOTE,
    Baseline,
    measure_uninstrumented,
    uses_numpy,
    why_not_measured,
)
from profiler.repeat_timing import RepeatRule
from profiler.session import BLOCK_NOT_RERUN, profile_script, trace_function
from profiler.trace import MemorySink
from profiler.tracefile import TraceDirectorySink, read_trace

ROOT = Path(__file__).resolve().parents[2]
QUICK = RepeatRule(budget_s=0.02, min_time_s=0.005)  # real clock, short: for tests that do not count runs
U = 2.0 ** -20


def numpy_step(pos, vel):
    """A NumPy region: whole-array operations, as a user writes them."""
    d = np.sqrt(pos * pos + vel * vel)
    return pos + 0.5 * vel / (d + 1.0)


def uses_object(x):
    return object()  # Numba has no type for it


def draws(out):
    for i in range(out.shape[0]):
        out[i] = np.random.random() + random.random()


class TickClock:
    """A fake clock that moves U on at every reading: every timed run lasts exactly U."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += U
        return self.now


def interpreted_runs(code, call):
    """How many times the interpreter executed ``code`` while ``call()`` ran (its frames that ran a line: a
    Numba-compiled call runs none, though Numba reports the call itself to tracers), and ``call()``'s result."""
    runs = []

    def trace(frame, event, arg):
        if event != "call" or frame.f_code is not code:
            return None
        seen = []

        def lines(frame, event, arg):
            if event == "line" and not seen:
                seen.append(1)
                runs.append(1)
            return lines

        return lines

    sys.settrace(trace)
    try:
        out = call()
    finally:
        sys.settrace(None)
    return len(runs), out


def test_a_numpy_region_is_timed_as_written_and_njit_only_when_asked():
    pos, vel = np.linspace(0.0, 1.0, 64), np.linspace(1.0, 2.0, 64)
    rule = RepeatRule(spread=0.1, budget_s=1e6, min_runs=5, min_time_s=0.0)
    frames, b = interpreted_runs(numpy_step.__code__,
                              lambda: measure_uninstrumented(numpy_step, (pos, vel), rule=rule, clock=TickClock()))
    # the NumPy code ran in the interpreter: the warm-up and the 5 runs after which equal times stop the timing
    assert frames == 6
    assert (b.kind, b.how, b.as_written, b.note, b.error) == ("as-written", "python", True, None, None)
    assert b.seconds == U and b.timing["runs"] == 5 and b.timing["stopped_by"] == "spread" and b.timing["reached"]
    assert b.label(numpy=True) == "NumPy as written"
    frames, b = interpreted_runs(numpy_step.__code__, lambda: measure_uninstrumented(
        numpy_step, (pos, vel), kind="njit", rule=rule, clock=TickClock()))
    # njit: compiled by Portcast, the interpreter never ran the function
    assert frames == 0
    assert (b.kind, b.how, b.as_written, b.timing["runs"]) == ("njit", "njit", False, 5)
    assert b.label(numpy=True) == "njit-compiled by Portcast"
    assert b.describe(numpy=True) == "njit-compiled by Portcast, median of 5 runs, IQR 0%"


def test_trace_function_labels_a_numpy_region_and_keeps_the_inputs():
    pos, vel = np.linspace(0.0, 1.0, 64), np.linspace(1.0, 2.0, 64)
    res = trace_function(numpy_step, (pos, vel), measure_uninstrumented=True, baseline_rule=QUICK)
    info = res.info
    assert uses_numpy(info)
    b = Baseline.from_info(info)
    assert (b.kind, b.how, b.label(uses_numpy(info))) == ("as-written", "python", "NumPy as written")
    assert info.uninstrumented_time_s == b.timing["median_s"] == b.seconds
    t = b.timing
    assert t["q25_s"] <= t["median_s"] <= t["q75_s"] and t["min_s"] <= t["q25_s"] and t["q75_s"] <= t["max_s"]
    assert t["runs"] >= 1 and t["target_spread"] == QUICK.spread and t["budget_s"] == QUICK.budget_s
    np.testing.assert_array_equal(res.value, numpy_step(pos, vel))
    assert pos.tolist() == np.linspace(0.0, 1.0, 64).tolist()


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_trace_function_measures_on_copies_and_the_trace_file_keeps_it(mode, tmp_path):
    x, y = np.arange(6.0), np.ones(6)
    res = trace_function(K.saxpy, (2.0, x, y), sinks=[TraceDirectorySink(tmp_path)], mode=mode,
                         measure_uninstrumented=True, baseline_rule=QUICK)
    t = res.info.uninstrumented_time_s
    assert isinstance(t, float) and t > 0
    extra = res.info.extra
    assert (extra["uninstrumented_mode"], extra["uninstrumented_kind"], extra["uninstrumented_as_written"]) == \
        ("python", "as-written", True)
    assert not uses_numpy(res.info)  # a Python loop over array elements
    # the baseline ran on copies: the traced run updated y exactly once
    assert y.tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0] and x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    (path,) = list(tmp_path.glob("saxpy.*.parquet"))
    info, _, chunk = read_trace(path)
    assert info.uninstrumented_time_s == t and len(chunk) == 42
    back = Baseline.from_info(info)
    assert back == Baseline.from_info(res.info) and back.describe().startswith("Python as written, median of ")


def test_njit_kind_compiles_the_region():
    res = trace_function(K.saxpy, (2.0, np.arange(6.0), np.ones(6)), mode="interpreted", measure_uninstrumented=True,
                         baseline_kind="njit", baseline_rule=QUICK)
    b = Baseline.from_info(res.info)
    assert (b.kind, b.how, b.as_written, b.note) == ("njit", "njit", False, None)
    assert b.label() == "njit-compiled by Portcast"


def test_baseline_is_not_measured_by_default():
    res = trace_function(K.saxpy, (2.0, np.ones(3), np.ones(3)), mode="interpreted")
    assert res.info.uninstrumented_time_s is None and "uninstrumented_mode" not in res.info.extra
    assert Baseline.from_info(res.info) is None
    assert why_not_measured(res.info, "--no-baseline") == "--no-baseline"


def test_njit_kind_falls_back_to_python_as_written_and_says_so():
    xs, d = [1, 2, 3], {"k": 2}
    res = trace_function(K.with_lists, (xs, d), mode="auto", measure_uninstrumented=True, baseline_kind="njit",
                         baseline_rule=QUICK)
    assert res.value == 12 and xs == [1, 2, 3]
    b = Baseline.from_info(res.info)
    assert res.info.uninstrumented_time_s > 0 and (b.how, b.kind, b.note) == ("python", "njit", NOT_COMPILABLE_NOTE)
    assert b.describe().startswith("Python as written; Numba cannot compile it: timed as written, median of ")
    b = measure_uninstrumented(uses_object, (np.ones(2),), kind="njit", rule=QUICK)
    assert (b.how, b.note, b.error) == ("python", NOT_COMPILABLE_NOTE, None) and b.seconds > 0
    assert baseline._BASELINE_JIT[uses_object.__code__, False] is None  # not tried again


def test_baseline_of_a_raising_region_is_none_and_the_trace_still_raises():
    b = measure_uninstrumented(K.raises_midway, (np.zeros(5, np.int64),))
    assert b.seconds is None and b.error.startswith("ZeroDivisionError") and b.timing is None
    sink = MemorySink()
    x = np.zeros(5, np.int64)
    with pytest.raises(ZeroDivisionError):
        trace_function(K.raises_midway, (x,), sinks=[sink], mode="interpreted", measure_uninstrumented=True)
    info = sink.regions[0][0]
    assert info.uninstrumented_time_s is None and info.extra["uninstrumented_error"].startswith("ZeroDivisionError")
    assert why_not_measured(info, "x").startswith("it raised ZeroDivisionError")
    assert x.tolist() == [5, 10, 0, 0, 0]  # only the traced run touched the caller's array


def test_bad_kind_and_rule_are_refused_naming_the_parameter():
    args = (1.0, np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="kind must be one of as-written, njit, got 'fast'"):
        measure_uninstrumented(K.saxpy, args, kind="fast")
    with pytest.raises(ValueError, match="baseline_kind must be one of as-written, njit, got 'fast'"):
        trace_function(K.saxpy, args, measure_uninstrumented=True, baseline_kind="fast")
    with pytest.raises(TypeError, match="baseline_rule must be a profiler.repeat_timing.RepeatRule, got dict"):
        trace_function(K.saxpy, args, measure_uninstrumented=True, baseline_rule={"spread": 0.1})


def test_copies_keep_memory_order_and_aliasing():
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    a, b, g = baseline._fresh_copies([f, f, np.ones(2)])
    assert a is b and a is not f and a.flags.f_contiguous and a.tolist() == f.tolist()
    assert not np.shares_memory(a, f)


def test_global_random_states_are_as_if_only_the_traced_run_happened():
    def draw():
        np.random.seed(7)
        random.seed(7)
        trace_function(draws, (np.zeros(4),), mode="interpreted", measure_uninstrumented=with_baseline,
                       baseline_rule=QUICK)
        return np.random.random(), random.random()

    with_baseline = False
    plain = draw()
    with_baseline = True
    assert draw() == plain


def test_profile_script_measures_function_regions_not_blocks(tmp_path):
    path = tmp_path / "script_bl.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        import portcast

        @portcast.region("inner")
        def inner(x):
            for i in range(x.shape[0]):
                x[i] = x[i] * 2.0

        @portcast.region("dec")
        def dec(x):
            inner(x)

        x = np.ones(4)
        dec(x)
        with portcast.region("blk"):
            for i in range(x.shape[0]):
                x[i] = x[i] + 1.0
        assert x.tolist() == [3.0] * 4
    """))
    infos = profile_script(path, mode="interpreted", measure_uninstrumented=True, baseline_rule=QUICK)
    # the nested region is part of the outer trace; the baseline's runs of dec did not trace it on their own
    assert [i.name for i in infos] == ["dec", "blk"]
    by = {i.name: i for i in infos}
    assert by["dec"].uninstrumented_time_s > 0 and by["dec"].extra["uninstrumented_mode"] == "python"
    assert by["blk"].uninstrumented_time_s is None and by["blk"].extra["uninstrumented_skipped"] == BLOCK_NOT_RERUN
    assert why_not_measured(by["blk"], "--no-baseline") == BLOCK_NOT_RERUN


def test_cli_baseline_prints_what_was_timed_and_the_slowdown():
    r = CliRunner().invoke(app, ["profile", "--function", f"{ROOT / 'examples' / 'saxpy.py'}:saxpy", "--args",
                                 "(2.0, np.ones(100), np.ones(100))", "--no-progress", "--no-features", "--baseline",
                                 "--baseline-budget", "0.05"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert re.search(r"baseline saxpy #\d+: uninstrumented [0-9.e-]+ ms \(Python as written, median of [0-9,]+ "
                     r"runs?, IQR [0-9.]+%[^)]*\); traced [0-9.e-]+ ms = [0-9.]+x slowdown", flat), flat


def test_baseline_of_a_parallel_dispatcher_times_its_serial_version():
    import profiler_parallel_kernels as PK

    b = measure_uninstrumented(PK.scale, (np.arange(1000.0), np.zeros(1000)), rule=QUICK)
    assert (b.how, b.as_written, b.note) == ("njit", True, SERIAL_NOTE) and b.seconds > 0 and b.error is None
    disp = baseline._BASELINE_JIT[PK.scale.py_func.__code__, True]
    assert disp is not PK.scale and disp.py_func is PK.scale.py_func and len(disp.signatures) == 1
    assert disp.targetoptions["parallel"] is False and disp.targetoptions["fastmath"] is True  # the other options kept
    # the run is single-threaded: every prange iteration on thread 0 (the parallel original uses its pool)
    measure_uninstrumented(PK.thread_ids, (np.full(4096, -1, np.int64),), rule=QUICK)
    serial = baseline._BASELINE_JIT[PK.thread_ids.py_func.__code__, True]
    assert serial.targetoptions["parallel"] is False
    assert set(serial(np.full(4096, -1, np.int64)).tolist()) == {0}
    assert set(PK.thread_ids(np.full(4096, -1, np.int64)).tolist()) <= set(range(numba.get_num_threads()))
    # a serial dispatcher is the user's njit code as written, timed as it is, without a note, whatever the kind
    plain = numba.njit(PK.scale.py_func)
    for kind in ("as-written", "njit"):
        b = measure_uninstrumented(plain, (np.ones(8), np.zeros(8)), kind=kind, rule=QUICK)
        assert (b.how, b.as_written, b.note, b.label()) == ("njit", True, None, "njit as written")


def test_trace_function_and_cli_report_the_serial_baseline():
    import profiler_parallel_kernels as PK

    res = trace_function(PK.scale, (np.arange(10.0), np.zeros(10)), mode="compiled", measure_uninstrumented=True,
                         baseline_rule=QUICK)
    assert res.info.extra["uninstrumented_mode"] == "njit" and res.info.extra["uninstrumented_note"] == SERIAL_NOTE
    assert res.value.tolist() == [2.0 * k for k in range(10)]
    path = Path(PK.__file__)
    r = CliRunner().invoke(
        app, ["profile", "--function", f"{path}:scale", "--no-progress", "--no-features", "--baseline",
              "--baseline-budget", "0.05"]
    )
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert re.search(r"baseline scale #\d+: uninstrumented [0-9.e-]+ ms \(njit as written; serial: the function is "
                     r"parallel=True; timed single-threaded \(prange runs as range\), median of [0-9,]+ runs?, IQR "
                     r"[0-9.]+%[^)]*\); traced", flat), flat
