"""The loop table (profiler/loops.py): what the Python tracer writes for each loop of the source and of library
calls' expansions, in both modes; its checks; and its trip through a Parquet trace file."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from numba import prange

from core.trace_schema import Op, TraceError
from profiler.loops import LoopTable
from profiler.session import trace_function
from profiler.trace import MemorySink, RegionInfo, StaticInstruction, StaticTable, TraceChunk
from profiler.tracefile import METADATA_KEY, TraceFile, write_trace


def helper(v, k):
    s = 0.0
    for j in range(k):
        s += v * j
    return s


def kernel(x, out):
    for i in prange(x.shape[0]):
        acc = 0.0
        for v in x[:3]:
            acc += v
        j = 0
        while j < 2:
            if x[i] > 1.0:
                acc += helper(x[i], 2)
            j += 1
        out[i] = acc + np.sum(x[i:i + 2])
    return out


def _traced(mode):
    sink = MemorySink()
    trace_function(kernel, (np.arange(4.0), np.zeros(4)), region="k", sinks=[sink], mode=mode)
    return sink.regions[0]


def _by_text(static, text, kind=None):
    return [e for e in static if e.text.startswith(text) and (kind is None or e.kind == kind)]


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_the_tracer_writes_every_loop(mode):
    info, static, chunk = _traced(mode)
    lt = LoopTable.of(static)
    by_ctl = {static[lp.control[-1]].text: lp for lp in lt.loops}
    kern = by_ctl["for i in prange(x.shape[0])"]
    elem = by_ctl["for v in x[:3]"]
    wh = by_ctl["j < 2"]
    inner = by_ctl["for j in range(k)"]
    assert kern.parent == 0 and elem.parent == wh.parent == kern.id and inner.parent == 0
    # a for: its increment and test close it; a while: the test with what it computes
    assert [static[p].kind for p in kern.control] == ["loop:next", "branch:loop"]
    assert [static[p].kind for p in wh.control][-1] == "branch:while"
    assert all(static[p].loop == kern.id for p in wh.control)
    # the element of `for v in x[:3]` is loaded at the start of every iteration: the body's
    assert [e.loop for e in _by_text(static, "v = next element of")] == [elem.id]
    # library calls' element loops, nested in the loop around the call; np.sum's inner loop in its outer one
    lib = {static[lp.control[-1]].text: lp for lp in lt.loops if static[lp.control[-1]].kind == "lib:branch"}
    s_in, s_out = lib["np.sum(x[i:i + 2]): loop over elements"], lib["np.sum(x[i:i + 2]): loop over output elements"]
    assert s_in.parent == s_out.id and s_out.parent == kern.id
    assert all(lib[t].parent == wh.id for t in lib if t.startswith("acc += helper") or t.startswith("j += 1"))
    # the helper's own ids: in no loop of its caller, all below the call site (the tracer lays a function out
    # before every call of it)
    call = _by_text(static, "helper(x[i], 2)", kind="call")[0]
    assert call.loop == wh.id
    own = [e for e in static if e.function == "helper"]
    assert own and all(e.pc < call.pc for e in own)
    assert {lt.inner.get(e.pc, 0) for e in own} <= {0, inner.id} | {lp.id for lp in lt.loops if lp.parent == inner.id}
    # bodies nest; each body ends before the id after the loop
    assert set(lt.body(wh.id)) < set(lt.body(kern.id)) and call.pc in lt.body(wh.id)
    assert max(lt.body(kern.id)) == max(e.pc for e in static if e.function == "kernel")


def test_both_modes_write_the_same_table():
    a, b = _traced("interpreted")[1], _traced("compiled")[1]
    assert [(e.pc, e.loop, e.closes) for e in a] == [(e.pc, e.loop, e.closes) for e in b]
    # the four source loops (prange, for v, while, the helper's for) and nine element loops: acc += v, x[i] > 1.0,
    # acc += helper(..), j += 1, np.sum's two, acc + np.sum(..), and the helper's v * j and s += ..
    assert len(LoopTable.of(a)) == 4 + 9


def _w2_static(**bad):
    rows = {1: (0, 0), 2: (0, 1), 3: (1, 0), 4: (1, 0), 5: (1, 0), 6: (0, 0)}
    rows.update(bad)
    return StaticTable(StaticInstruction(pc=p, file="w.py", line=p, col=0, text=f"s{p}", loop=lp, closes=c)
                       for p, (lp, c) in rows.items())


def _chunk():
    return TraceChunk.from_columns(pc=[1, 3, 4, 2, 3, 4, 2, 6], op=[0, 8, 10, 10, 8, 10, 10, 9],
                                   addr=[0, 64, 0, 0, 72, 0, 0, 80], size=[0, 8, 0, 0, 8, 0, 0, 8], tid=[0] * 8)


def test_the_loop_table_survives_a_trace_file(tmp_path):
    path = write_trace(tmp_path / "w.parquet", RegionInfo(name="w"), _w2_static(), _chunk())
    tf = TraceFile(path)
    assert [(e.pc, e.loop, e.closes) for e in tf.static] == [(e.pc, e.loop, e.closes) for e in _w2_static()]
    (lp,) = tf.loops.loops
    assert (lp.id, lp.parent, lp.control, lp.body_end, tf.loops.body(1)) == (1, 0, (2,), 5, [3, 4, 5])


def _rewrite_static(path, edit):
    """Rewrite a trace file's static table in place with ``edit`` (a function of the list of entries)."""
    blob = json.loads(pq.ParquetFile(path).metadata.metadata[METADATA_KEY])
    blob["static"] = edit(blob["static"])
    t = pq.read_table(path)
    with pq.ParquetWriter(path, t.schema) as w:
        w.write_table(t)
        w.add_key_value_metadata({METADATA_KEY: json.dumps(blob).encode()})


@pytest.mark.parametrize("edit, message", [
    (lambda s: [{**e, "loop": -1} if e["pc"] == 3 else e for e in s],
     r"static table entry 2: field 'loop' = -1, expected an integer >= 0"),
    (lambda s: [{**e, "closes": "1"} if e["pc"] == 2 else e for e in s],
     r"static table entry 1: field 'closes' = '1', expected an integer >= 0"),
    (lambda s: [{**e, "closes": 1} if e["pc"] == 4 else e for e in s],
     r"static table: pc 4: field 'closes' = 1: an instruction cannot close the loop whose body holds it"),
    (lambda s: [{**e, "closes": 0} if e["pc"] == 2 else e for e in s],
     r"static table: pc 3: field 'loop' = 1: no instruction closes loop 1"),
])
def test_bad_loop_fields_are_refused_naming_file_and_field(tmp_path, edit, message):
    path = write_trace(tmp_path / "w.parquet", RegionInfo(name="w"), _w2_static(), _chunk())
    _rewrite_static(path, edit)
    with pytest.raises(TraceError, match=r"w\.parquet: " + message):
        TraceFile(path)


def test_files_without_loop_fields_have_no_loops(tmp_path):
    """A trace written before the loop fields existed (or by a tracer that knows no loops) is read as it was."""
    path = write_trace(tmp_path / "w.parquet", RegionInfo(name="w"), _w2_static(), _chunk())
    _rewrite_static(path, lambda s: [{k: v for k, v in e.items() if k not in ("loop", "closes")} for e in s])
    tf = TraceFile(path)
    assert len(tf.loops) == 0 and all(e.loop == e.closes == 0 for e in tf.static)
    assert tf.read().records() == _chunk().records()


def test_loop_table_without_a_static_table_or_loops():
    assert len(LoopTable.of(None)) == 0 and len(LoopTable.of(StaticTable())) == 0
    st = StaticTable([StaticInstruction(pc=1, file="n", line=0, col=0, text="0x400000 add", kind=str(Op.INT_ALU))])
    assert len(LoopTable.of(st)) == 0
