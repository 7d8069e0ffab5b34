"""Scripts with markers, faults, unsupported constructs, markers without a session."""

import textwrap
import time

import numpy as np
import profiler_test_kernels as K
import pytest

import portcast
from core.trace_schema import Op
from profiler.instrument import UnsupportedConstruct
from profiler.markers import _state
from profiler.runtime import device_address as _dev
from profiler.session import profile_script, trace_function
from profiler.trace import MemorySink
from profiler.tracefile import TraceDirectorySink, TraceFile

SCRIPT = '''
import sys
import numpy as np
import portcast

@portcast.region("dec")
def scale(x, a):
    for i in range(x.shape[0]):
        x[i] = x[i] * a
    return x

def main():
    n = int(sys.argv[1])
    x = np.arange(n, dtype=np.float64)
    total = 0.0
    with portcast.region("sum"):
        for i in range(n):
            total += x[i]
    scale(x, 2.0)
    scale(x, 2.0)
    portcast.region_start("count")
    k = 0
    while k < 3:
        k += 1
    portcast.region_end("count")
    print("RESULT", total, k, x.tolist())

main()
with portcast.region("top"):
    z = 0
    for j in range(3):
        z = z + j
print("Z", z)
'''


def _write(tmp_path, text, name="script.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


@pytest.mark.parametrize("mode", ["interpreted", "auto"])
def test_profile_script_traces_every_marker_kind_and_invocation(tmp_path, capsys, mode):
    path = _write(tmp_path, SCRIPT)
    sink = MemorySink()
    infos = profile_script(path, ["4"], sinks=[sink], mode=mode)
    out = capsys.readouterr().out
    # semantics preserved: the script computes what it computes without the profiler
    assert "RESULT 6.0 3 [0.0, 4.0, 8.0, 12.0]" in out and "Z 3" in out
    assert [(i.name, i.invocation) for i in infos] == [("sum", 0), ("dec", 0), ("dec", 1), ("count", 0), ("top", 0)]
    assert all(i.complete for i in infos)
    by_name = {(i.name, i.invocation): (i, c) for i, _, c in sink.regions}
    info, chunk = by_name[("sum", 0)]
    # 4 iterations x (load, add, next, branch)
    assert info.n_records == 16 and info.n_threads == 4
    assert np.bincount(chunk.op, minlength=16)[Op.LOAD] == 4
    assert info.parallel_loop == f"{path}:17"
    info, chunk = by_name[("count", 0)]
    assert [int(t) for t in chunk.taken[chunk.op == Op.BRANCH]] == [1, 1, 1, 0]
    # load, mul, store, next, branch per iteration
    assert by_name[("dec", 1)][0].n_records == 4 * 5


def test_regions_filter_runs_others_untraced(tmp_path, capsys):
    path = _write(tmp_path, SCRIPT)
    infos = profile_script(path, ["3"], regions=["dec"], mode="interpreted")
    assert [i.name for i in infos] == ["dec", "dec"]
    assert "RESULT 3.0 3" in capsys.readouterr().out


def test_nested_region_is_part_of_outer_trace(tmp_path):
    path = _write(tmp_path, '''
        import portcast

        @portcast.region("inner")
        def inner(v):
            return v + 1

        @portcast.region("outer")
        def outer(n):
            s = 0
            for i in range(n):
                s = inner(s)
            return s

        assert outer(3) == 3
    ''')
    sink = MemorySink()
    infos = profile_script(path, sinks=[sink], mode="interpreted")
    assert [i.name for i in infos] == ["outer"]
    assert int((sink.regions[0][2].op == Op.CALL).sum()) == 3


def test_unmatched_region_start_is_reported_before_running(tmp_path, capsys):
    path = _write(tmp_path, '''
        import portcast
        print("RAN")
        portcast.region_start("a")
        x = 1
    ''')
    with pytest.raises(UnsupportedConstruct, match=r"script.py:4: region_start\('a'\) has no matching region_end"):
        profile_script(path)
    assert "RAN" not in capsys.readouterr().out


def test_unsupported_constructs_name_file_line_before_running():
    x = np.zeros(2)
    with pytest.raises(UnsupportedConstruct, match=r"profiler_test_kernels.py:\d+: nested function definition "
                                                   r"'gen'.*generator \(yield\)"):
        trace_function(K.uses_generator, (x,), mode="interpreted")
    with pytest.raises(UnsupportedConstruct, match=r"profiler_test_kernels.py:\d+: exec\(\)"):
        trace_function(K.uses_exec, (x,), mode="interpreted")


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_exception_keeps_partial_trace_and_reraises_with_note(tmp_path, mode):
    x = np.zeros(4, dtype=np.int64)
    sink, files = MemorySink(), TraceDirectorySink(tmp_path)
    with pytest.raises(ZeroDivisionError) as ei:
        trace_function(K.raises_midway, (x,), sinks=[sink, files], mode=mode, region="boom")
    assert any("trace is marked incomplete" in n for n in getattr(ei.value, "__notes__", []))
    info, _, chunk = sink.regions[0]
    assert not info.complete and info.error.startswith("ZeroDivisionError")
    # iterations 0 and 1 completed (5 records each: 2 ALU ops, the store, the latch); iteration 2 divides by 0
    stores = chunk.addr[chunk.op == Op.STORE]
    assert stores.tolist() == [_dev(x), _dev(x) + 8]
    assert x.tolist() == [5, 10, 0, 0]
    tf = TraceFile(files.written[0])
    assert not tf.info.complete and tf.n_records == len(chunk)


def test_keyboard_interrupt_marks_trace_incomplete(tmp_path):
    path = _write(tmp_path, '''
        import portcast

        @portcast.region("spin")
        def spin(n):
            s = 0
            for i in range(n):
                s += 1
                if i == 5:
                    raise KeyboardInterrupt
            return s

        spin(10)
    ''')
    sink = MemorySink()
    with pytest.raises(KeyboardInterrupt):
        profile_script(path, sinks=[sink], mode="interpreted")
    info = sink.regions[0][0]
    assert not info.complete and "interrupted" in info.error and info.n_records > 0
    assert _state.session is None


def test_markers_without_session_cost_next_to_nothing():
    assert _state.session is None

    @portcast.region("r")
    def f(v):
        return v + 1

    def g(v):
        return v + 1

    assert f(1) == 2
    with portcast.region("blk"):
        portcast.region_start("s")
        portcast.region_end("s")
    assert list(portcast.parallel(range(3))) == [0, 1, 2]
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        g(1)
    plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(n):
        f(1)
    marked = time.perf_counter() - t0
    # one attribute check and one extra call frame; generous bound for a shared machine
    assert marked < 20 * plain + 0.05


def test_decorated_function_traced_directly_keeps_region_name():
    x = np.zeros(3)
    res = trace_function(K.decorated, (x,), mode="interpreted")
    assert res.info.name == "decorated" and res.info.n_records == 3 * 5 and x.tolist() == [1.0, 1.0, 1.0]


def test_invocations_count_per_region_name():
    a = trace_function(K.reduce_sum, (np.ones(2),), mode="interpreted", region="inv-test")
    b = trace_function(K.reduce_sum, (np.ones(2),), mode="interpreted", region="inv-test")
    assert b.info.invocation == a.info.invocation + 1
