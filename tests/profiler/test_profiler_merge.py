"""Compiled mode writes the records of a straight run of statements with one call (``merge_records``): the
records, their order and their values stay those of the interpreted mode, also where the statements in
between rebind the indices, arrays and values the records read."""

import ast
import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiler_testing import load_source

from core.trace_schema import COLUMN_NAMES
from profiler.instrument import merge_records
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink

_counter = itertools.count()


def _load(tmp_dir, body):
    src = "def prog(i, j, s, x, y):\n" + "".join(f"    {line}\n" for line in body) + "    return i, j, s\n"
    return load_source(tmp_dir, f"pc_merge_{next(_counter)}", src).prog, src


def _records(fn, mode):
    x, y = np.linspace(-1.0, 2.0, 4), np.arange(12.0).reshape(3, 4)
    sink = MemorySink()
    res = trace_function(fn, (1, 2, 0.5, x, y), sinks=[sink], mode=mode, chunk_records=7)
    assert res.info.mode == mode
    chunk = sink.regions[0][2]
    cols = {name: getattr(chunk, name).copy() for name in COLUMN_NAMES}
    for arr in (x, y):
        inside = (chunk.size > 0) & (chunk.addr >= _dev(arr)) & (chunk.addr < _dev(arr) + arr.nbytes)
        cols["addr"][inside] -= _dev(arr)
    return res.value, x, y, cols


# i and j stay in 0..3 (x has 4 elements, y 3 x 4): an out-of-bounds index would raise in one mode only
STATEMENTS = [
    "i = (i + 1) % 4", "j = i", "i, j = j, i", "s = x[i] * 2.0", "x[j] = s + x[i]", "s += x[(i + 3) % 4]",
    "y[i % 3, j] = s - y[j % 3, i]", "t = i * j", "s = abs(s) + t", "i = (j + 1) % 4 if s > 0.0 else j",
    "x = y[i % 3]", "s = -s", "j = (j * 3 + 1) % 4", "if x[j] > 0.0:\n        s = s + 1.5",
]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(body=st.lists(st.sampled_from(STATEMENTS), min_size=2, max_size=12))
def test_merged_records_equal_the_interpreted_ones(tmp_path_factory, body):
    lines = ["t = 0"] + [part for stmt in body for part in stmt.split("\n    ")]
    fn, src = _load(tmp_path_factory.mktemp("merge"), lines)
    vi, xi, yi, ci = _records(fn, "interpreted")
    vc, xc, yc, cc = _records(fn, "compiled")
    assert vi == vc and np.array_equal(xi, xc) and np.array_equal(yi, yc), src
    for name in COLUMN_NAMES:
        assert np.array_equal(ci[name], cc[name]), (name, src)


def _merged(src):
    fdef = ast.parse(src).body[0]
    return [ast.unparse(s) for s in merge_records(fdef.body)]


def test_records_known_at_compile_time_are_written_with_the_next_memory_record():
    got = _merged(
        "def f():\n"
        "    _pc_p = _pc_rec(_pc_c0, _pc_p, 60)\n"
        "    t = x[i]\n"
        "    _pc_p = _pc_recf(_pc_c0, _pc_p, t, 128, 136, 137)\n"
        "    u = t * 2.0\n"
        "    _pc_p = _pc_recm(_pc_c0, _pc_c1, _pc_p, 80, x, i)\n"
        "    _pc_p = _pc_rec(_pc_c0, _pc_p, 194)\n"
        "    _pc_save(_pc_S, _pc_p, _pc_k)\n"
        "    _pc_p = _pc_rec(_pc_c0, _pc_p, 258)\n"
    )
    assert got == ["t = x[i]", "u = t * 2.0",
                   "_pc_p = _pc_recs(_pc_c0, _pc_c1, _pc_p, 'cfm', (60, t, 128, 136, 137, 80, x, i))",
                   "_pc_p = _pc_rec(_pc_c0, _pc_p, 194)", "_pc_save(_pc_S, _pc_p, _pc_k)",
                   "_pc_p = _pc_rec(_pc_c0, _pc_p, 258)"]


def test_records_are_written_before_a_value_that_chooses_their_code_is_rebound_or_control_flow():
    got = _merged(
        "def f():\n"
        "    _pc_p = _pc_recf(_pc_c0, _pc_p, v, 1, 2, 3)\n"
        "    v = v + 1.5\n"
        "    _pc_p = _pc_rec(_pc_c0, _pc_p, 130)\n"
        "    _pc_p = _pc_rec(_pc_c0, _pc_p, _pc_kc(v, (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)))\n"
        "    w = v * 2.0\n"
        "    _pc_p = _pc_recb(_pc_c0, _pc_p, 96, c)\n"
        "    if c:\n"
        "        _pc_p = _pc_rec(_pc_c0, _pc_p, 140)\n"
        "        _pc_p = _pc_rec(_pc_c0, _pc_p, 150)\n"
        "    _pc_p = _pc_rec(_pc_c0, _pc_p, _pc_other(v))\n"
    )
    assert got == [
        "_pc_p = _pc_recf(_pc_c0, _pc_p, v, 1, 2, 3)", "v = v + 1.5", "w = v * 2.0",
        "_pc_p = _pc_recs(_pc_c0, _pc_c1, _pc_p, 'ckb', (130, v, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 96, c))",
        "if c:\n    _pc_p = _pc_recs(_pc_c0, _pc_c1, _pc_p, 'cc', (140, 150))",
        "_pc_p = _pc_rec(_pc_c0, _pc_p, _pc_other(v))",
    ]
