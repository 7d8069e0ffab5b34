"""A script's run as segments (profiler/segments.py): the untraced run's region spans and host gaps, and the
traced run's arrays: which each region invocation reads and writes, what the host code between writes, what a
region returns, and the pairing of the two runs."""

import textwrap
import time

import pytest

from profiler.segments import ArrayUses, RegionArrays, RegionSpan, SegmentError, Timeline, pair, time_script
from profiler.session import profile_script

SOLVER = textwrap.dedent('''
    import time
    import numpy as np
    import portcast

    @portcast.region("stencil")
    def stencil(u, v):
        n = u.shape[0]
        for i in portcast.parallel(range(1, n - 1)):
            v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1])

    @portcast.region("norm")
    def norm(v):
        s = 0.0
        for i in range(v.shape[0]):
            s += v[i] * v[i]
        return s

    u = np.linspace(0.0, 1.0, 64)
    v = np.zeros(64)
    time.sleep(SETUP)
    for step in range(3):
        stencil(u, v)
        v[0] = v[-1] = step + 1.0   # the host's boundary condition writes v
        s = norm(v)
        with portcast.region("log"):
            w = u * 2.0
        u, v = v, u
    time.sleep(TAIL)
    u[0] = 1.0
''')


def script(tmp_path, setup=0.05, tail=0.03):
    p = tmp_path / "solver.py"
    p.write_text(SOLVER.replace("SETUP", str(setup)).replace("TAIL", str(tail)))
    return p


def test_the_untraced_run_times_each_outermost_region_and_the_host_code_between(tmp_path):
    t0 = time.perf_counter()
    tl = time_script(script(tmp_path))
    wall = time.perf_counter() - t0
    assert [(s.name, s.invocation) for s in tl.spans] == [
        ("stencil", 0), ("norm", 0), ("log", 0), ("stencil", 1), ("norm", 1), ("log", 1),
        ("stencil", 2), ("norm", 2), ("log", 2)]
    assert all(0 <= a.start <= a.end <= b.start for a, b in zip(tl.spans, tl.spans[1:]))
    gaps = tl.host_gaps()
    assert len(gaps) == 10 and gaps[0] >= 0.05 and gaps[-1] >= 0.03
    assert tl.total_s <= wall
    assert tl.total_s == pytest.approx(sum(gaps) + sum(s.end - s.start for s in tl.spans))


def test_a_region_nested_in_another_belongs_to_the_outermost(tmp_path):
    p = tmp_path / "nested.py"
    p.write_text("import portcast\nwith portcast.region('outer'):\n    with portcast.region('inner'):\n"
                 "        x = 1\nportcast.region_start('third')\nx = 2\nportcast.region_end('third')\n")
    assert [s.name for s in time_script(p).spans] == ["outer", "third"]


def test_the_traced_run_knows_each_regions_arrays_and_the_hosts_writes(tmp_path):
    uses = ArrayUses()
    profile_script(script(tmp_path, 0, 0), sinks=[uses], mode="interpreted")
    got = [(r.name, r.invocation, r.reads, r.writes, r.host_writes, r.result_bytes) for r in uses.results]
    # the arrays are named after the parameter they were first passed as: the script's u is stencil's u and
    # its v stencil's v; after the swap the names follow the arrays, not the script's variables
    assert got == [
        ("stencil", 0, ["u", "v"], ["v"], [], 0),  # it writes v but its ends: the rest of v must be there too
        ("norm", 0, ["v"], [], ["v"], 8),        # the boundary condition wrote v; the norm comes back
        ("log", 0, ["u"], ["log.out"], [], 0),  # the block made w
        ("stencil", 1, ["u", "v"], ["u"], [], 0),
        ("norm", 1, ["u"], [], ["u"], 8),
        ("log", 1, ["v"], ["log.out.2"], [], 0),
        ("stencil", 2, ["u", "v"], ["v"], [], 0),
        ("norm", 2, ["v"], [], ["v"], 8),
        ("log", 2, ["u"], ["log.out.3"], [], 0),
    ]
    assert uses.tail_writes == ["v"]  # u[0] = 1.0 after the loop: the script's u is the array named v
    assert uses.array_bytes()["u"] == 64 * 8
    # what the script still holds: the last w, u and v (the second w is gone; the first is still held by the
    # namespace the module-level block was compiled in)
    assert {"log.out.3", "u", "v"} <= set(uses.live) and "log.out.2" not in uses.live


def test_two_runs_that_part_are_refused_naming_where():
    tl = Timeline((RegionSpan("a", 0, 0, 1), RegionSpan("b", 0, 1, 2)), 2)
    pair(tl, [RegionArrays("a", 0, [], [], []), RegionArrays("b", 0, [], [], [])])
    with pytest.raises(SegmentError, match=r"part at region invocation 1: b #0 untraced, a #1 traced"):
        pair(tl, [RegionArrays("a", 0, [], [], []), RegionArrays("a", 1, [], [], [])])
    with pytest.raises(SegmentError, match="invoked 2 regions and the traced run 1"):
        pair(tl, [RegionArrays("a", 0, [], [], [])])
