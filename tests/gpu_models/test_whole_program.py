"""The whole-program schedule (gpu_models/whole_program.py): exact schedules of programs built by hand, the copies
an array makes while it stays on the GPU, and, over generated programs, the schedule's laws: every step starts
when its last predecessor ends, no lane runs two things at once, the critical path is a chain of predecessors
whose times add up to the program's, the copies are those a plain replay of where each array is valid gives,
and the program never gets slower when a segment or the link gets faster."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_models.whole_program import (
    PlanError,
    Program,
    Segment,
    default_plan,
    link_time,
    marginal_gains,
    schedule,
    with_gpu_times,
)


def one_second(nbytes):
    return 1.0


def spans(sched):
    return [(s.name, s.lane, s.start, s.end, s.critical) for s in sched.steps]


def test_setup_kernel_output_runs_in_series_with_its_copies():
    prog = Program((Segment("setup", 1.0, writes=("A",)),
                    Segment("k #1", 10.0, region="k", gpu_s=1.0, reads=("A",), writes=("B",)),
                    Segment("output", 1.0, reads=("B",))), {"A": 8, "B": 8})
    s = schedule(prog, {"k"}, one_second)
    assert spans(s) == [("setup", "cpu", 0.0, 1.0, True), ("h2d A", "link", 1.0, 2.0, True),
                        ("k #1", "gpu", 2.0, 3.0, True), ("d2h B", "link", 3.0, 4.0, True),
                        ("output", "cpu", 4.0, 5.0, True)]
    assert s.total_s == 5.0 and s.cpu_s == 12.0 and s.speedup == 12.0 / 5.0
    assert s.critical_seconds() == {"host": 2.0, "copies": 2.0, "k": 1.0}
    cpu_only = schedule(prog, set(), one_second)
    assert cpu_only.total_s == 12.0 and [x.lane for x in cpu_only.steps] == ["cpu"] * 3


def test_host_code_independent_of_the_kernel_runs_beside_it_and_is_off_the_critical_path():
    prog = Program((Segment("setup", 1.0, writes=("A",)),
                    Segment("k #1", 10.0, region="k", gpu_s=5.0, reads=("A",), writes=("B",)),
                    Segment("log", 3.0, reads=("C",)),
                    Segment("output", 1.0, reads=("B",))), {"A": 8, "B": 8, "C": 8})
    s = schedule(prog, {"k"}, one_second)
    assert spans(s) == [("setup", "cpu", 0.0, 1.0, True), ("h2d A", "link", 1.0, 2.0, True),
                        ("k #1", "gpu", 2.0, 7.0, True), ("log", "cpu", 1.0, 4.0, False),
                        ("d2h B", "link", 7.0, 8.0, True), ("output", "cpu", 8.0, 9.0, True)]
    # the host code beside the kernel buys nothing when it gets faster
    faster_log = Program(prog.segments[:2] + (Segment("log", 0.5, reads=("C",)),) + prog.segments[3:],
                         prog.array_bytes)
    assert schedule(faster_log, {"k"}, one_second).total_s == 9.0


def solver(steps=50, grid=8 << 20):
    """setup, then per time step a stencil (u -> v), a host boundary update of v and a reduction of v, the grids
    swapped; output of the last grid."""
    segs = [Segment("setup", 0.2, writes=("u", "v"))]
    u, v = "u", "v"
    for t in range(steps):
        segs.append(Segment(f"stencil #{t}", 0.10, region="stencil", gpu_s=0.002, reads=(u,), writes=(v,)))
        segs.append(Segment(f"bc {t}", 0.001, reads=(v,), writes=(v,)))
        segs.append(Segment(f"reduce #{t}", 0.03, region="reduce", gpu_s=0.001, reads=(v,), writes=("norm",)))
        segs.append(Segment(f"check {t}", 0.0001, reads=("norm",)))
        u, v = v, u
    segs.append(Segment("output", 0.05, reads=(u,)))
    return Program(tuple(segs), {"u": grid, "v": grid, "norm": 8}, outputs=(u,))


def test_a_grid_that_stays_on_the_gpu_crosses_once_and_one_left_behind_crosses_every_step():
    prog, link = solver(), link_time(25.0, 10e-6)
    grid = 8 << 20
    stencil_only = schedule(prog, {"stencil"}, link)
    # each step: the host boundary update needs v back (d2h) and the next stencil needs it again (h2d)
    assert stencil_only.copied_bytes("d2h") == 50 * grid
    assert stencil_only.copied_bytes("h2d") == 50 * grid  # the first u, then every grid the host updated
    both = schedule(prog, {"stencil", "reduce"}, link)
    # the boundary update still runs on the host: the grid crosses twice a step, the norm comes back every step
    assert both.copied_bytes("h2d") == 51 * grid  # the first u, then the updated grid for each reduction
    assert both.copied_bytes("d2h") == 50 * grid + 50 * 8
    all_gpu = Program(tuple(Segment(s.name, s.cpu_s, region=s.region or ("bc" if s.name.startswith("bc") else None),
                                    gpu_s=s.gpu_s if s.region else (1e-5 if s.name.startswith("bc") else None),
                                    reads=s.reads, writes=s.writes) for s in prog.segments),
                      prog.array_bytes, prog.outputs)
    resident = schedule(all_gpu, {"stencil", "reduce", "bc"}, link)
    # u goes in once (v is written on the GPU before it is read), the result comes back once, the norm every step
    assert resident.copied_bytes("h2d") == grid
    assert resident.copied_bytes("d2h") == grid + 50 * 8
    # every step runs in series: the host waits for the norm, and the next step's launches wait for the host
    c, n = 10e-6 + grid / 25e9, 10e-6 + 8 / 25e9
    assert math.isclose(resident.total_s, 0.2 + c + 50 * (0.002 + 1e-5 + 0.001 + n + 1e-4) + c + 0.05)
    # the stencil alone: its grid out for the boundary update and back in for the next step
    assert math.isclose(stencil_only.total_s, 0.2 + 50 * (c + 0.002 + c + 0.001 + 0.03 + 1e-4) + 0.05)
    assert resident.speedup > 4 * stencil_only.speedup
    gains = marginal_gains(all_gpu, {"stencil"}, link)
    assert set(gains) == {"reduce", "bc"}
    assert gains["bc"] > 0


def test_marginal_gains_are_the_differences_of_the_schedules():
    prog, link = solver(steps=5), link_time(25.0, 10e-6)
    g = marginal_gains(prog, {"stencil"}, link)
    assert g == {"reduce": schedule(prog, {"stencil"}, link).total_s
                 - schedule(prog, {"stencil", "reduce"}, link).total_s}


def test_default_plan_takes_the_regions_faster_with_their_copies():
    assert default_plan({"a": 3.0, "b": 0.5, "c": None, "d": 1.0}) == frozenset({"a"})


def test_other_gpu_times_re_evaluate_the_same_run():
    prog = solver(steps=3)
    slow = with_gpu_times(prog, {i: 0.5 for i, s in enumerate(prog.segments) if s.region == "stencil"})
    assert [s.gpu_s for s in slow.segments if s.region == "stencil"] == [0.5, 0.5, 0.5]
    assert schedule(slow, {"stencil"}, one_second).total_s > schedule(prog, {"stencil"}, one_second).total_s


def test_bad_plans_say_what_is_wrong():
    prog = Program((Segment("h", 1.0, writes=("A",)), Segment("k #0", 2.0, region="k", reads=("A",))), {"A": 4})
    with pytest.raises(PlanError, match=r"segment 1 \(k #0\) of region 'k' has no predicted GPU time"):
        schedule(prog, {"k"}, one_second)
    with pytest.raises(PlanError, match=r"names region 'nope', which the run does not have \(regions: k\)"):
        schedule(prog, {"nope"}, one_second)
    with pytest.raises(PlanError, match=r"uses array 'B', whose size is not known"):
        schedule(Program((Segment("h", 1.0, reads=("B",)),), {}), set(), one_second)
    with pytest.raises(PlanError, match="rate must be positive"):
        link_time(0.0, 1e-6)


# --- generated programs ------------------------------------------------------------------------------------------

ARRAYS = ("a", "b", "c", "d")


@st.composite
def programs(draw):
    n = draw(st.integers(1, 12))
    segs = []
    for i in range(n):
        region = draw(st.sampled_from([None, "r1", "r2", "r3"]))
        reads = tuple(draw(st.lists(st.sampled_from(ARRAYS), max_size=3, unique=True)))
        writes = tuple(draw(st.lists(st.sampled_from(ARRAYS), max_size=2, unique=True)))
        cpu = draw(st.integers(1, 20)) / 4
        gpu = draw(st.integers(1, 20)) / 8 if region else None
        segs.append(Segment(f"s{i}", cpu, region=region, gpu_s=gpu, reads=reads, writes=writes))
    sizes = {a: draw(st.integers(0, 3)) * 1000 for a in ARRAYS}
    outputs = tuple(draw(st.lists(st.sampled_from(ARRAYS), max_size=2, unique=True)))
    plan = frozenset(draw(st.lists(st.sampled_from(["r1", "r2", "r3"]), unique=True)))
    plan = frozenset(r for r in plan if any(s.region == r for s in segs))
    return Program(tuple(segs), sizes, outputs), plan


def link_ms(nbytes):
    return 0.25 + nbytes / 1000


def replay_copies(prog, plan):
    """(direction, array) of every copy, from a plain replay of where each array is valid."""
    valid = {a: {"cpu"} for a in prog.array_bytes}
    out = []
    for s in prog.segments:
        dev = "gpu" if s.region in plan else "cpu"
        for a in dict.fromkeys(s.reads):
            if dev not in valid[a]:
                out.append(("h2d" if dev == "gpu" else "d2h", a))
                valid[a].add(dev)
        for a in s.writes:
            valid[a] = {dev}
    for a in prog.outputs:
        if "cpu" not in valid[a]:
            out.append(("d2h", a))
    return out


@settings(max_examples=300, deadline=None)
@given(programs())
def test_every_step_starts_when_its_last_predecessor_ends_and_lanes_never_overlap(case):
    prog, plan = case
    s = schedule(prog, plan, link_ms)
    for k, step in enumerate(s.steps):
        assert all(p < k for p in s.preds[k])
        assert step.start == max((s.steps[p].end for p in s.preds[k]), default=0.0)
    for lane in ("cpu", "gpu", "link"):
        mine = [x for x in s.steps if x.lane == lane]
        assert all(a.end <= b.start for a, b in zip(mine, mine[1:]))
    assert s.total_s == max((x.end for x in s.steps), default=0.0)
    # the critical path: consecutive predecessors, starting at 0, ending last, its times adding up
    path = s.critical
    if path:
        assert s.steps[path[0]].start == 0.0 and s.steps[path[-1]].end == s.total_s
        assert all(a in s.preds[b] and s.steps[a].end == s.steps[b].start for a, b in zip(path, path[1:]))
        assert math.isclose(sum(s.steps[k].seconds for k in path), s.total_s)
    assert [(x.kind, x.arrays[0]) for x in s.steps if x.lane == "link"] == replay_copies(prog, plan)
    assert sum(x.bytes for x in s.steps) == sum(prog.array_bytes[a] for _, a in replay_copies(prog, plan))


@settings(max_examples=200, deadline=None)
@given(programs(), st.data())
def test_the_program_never_gets_slower_when_a_segment_or_the_link_gets_faster(case, data):
    prog, plan = case
    base = schedule(prog, plan, link_ms).total_s
    i = data.draw(st.integers(0, len(prog.segments) - 1))
    seg = prog.segments[i]
    quicker = Segment(seg.name, seg.cpu_s / 2, region=seg.region, gpu_s=seg.gpu_s / 2 if seg.gpu_s else None,
                      reads=seg.reads, writes=seg.writes)
    faster = Program(prog.segments[:i] + (quicker,) + prog.segments[i + 1:], prog.array_bytes, prog.outputs)
    assert schedule(faster, plan, link_ms).total_s <= base
    assert schedule(prog, plan, lambda b: link_ms(b) / 2).total_s <= base
    assert schedule(prog, frozenset(), link_ms).total_s == prog.cpu_time()


def test_a_run_becomes_host_and_region_segments_with_the_returned_values():
    from gpu_models.whole_program import RegionRun, program_from_run

    regions = [RegionRun("stencil", 0, 2.0, 0.5, ("u", "v"), ("v",), ()),
               RegionRun("norm", 0, 1.0, 0.25, ("v",), (), ("v",), result_bytes=8)]
    prog = program_from_run([0.5, 0.125, 0.25], regions, ["u"], {"u": 80, "v": 80})
    assert [(s.name, s.cpu_s, s.region, s.gpu_s, s.reads, s.writes) for s in prog.segments] == [
        ("host 0", 0.5, None, None, (), ()),
        ("stencil #0", 2.0, "stencil", 0.5, ("u", "v"), ("v",)),
        ("host 1", 0.125, None, None, ("v",), ("v",)),
        ("norm #0", 1.0, "norm", 0.25, ("v",), ("norm #0 result",)),
        ("host 2", 0.25, None, None, ("norm #0 result", "u"), ("u",)),
    ]
    assert prog.array_bytes == {"u": 80, "v": 80, "norm #0 result": 8} and prog.outputs == ("u", "v")
    s = schedule(prog, {"stencil", "norm"}, one_second)
    # u and v in; v back for the host's boundary, in again for the norm; the norm back; nothing left on the GPU
    assert [x.name for x in s.steps if x.lane == "link"] == ["h2d u", "h2d v", "d2h v", "h2d v",
                                                             "d2h norm #0 result"]
    with pytest.raises(PlanError, match="2 region invocations need 3 host times, not 2"):
        program_from_run([0.5, 0.1], regions, [], {"u": 80, "v": 80})
