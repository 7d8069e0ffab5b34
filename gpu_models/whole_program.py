"""The whole program on CPU, GPU and the host link: segments, their happens-before order, the copies between the
devices, the schedule and its critical path.

A run of a program is a sequence of **segments** in program order (:class:`Segment`): each invocation of a marked
region, and the unmarked host code between them. Each has its measured CPU time, its predicted GPU time (none for
host code, which stays on the CPU) and the arrays it reads and writes. A **plan** names the regions that run on
the GPU; every invocation of a named region does.

:func:`schedule` places the segments on three lanes, ``cpu``, ``gpu`` and ``link`` (the host link; copies in
both directions share it), each of which runs one thing at a time in program order, and adds a **copy** segment
on the link wherever a segment needs an array whose valid copy is only on the other device. An array starts
valid on the host (the program created it there); a write on a device makes that device's copy the only valid
one; a copy makes the destination valid too, so an array that stays on the GPU between regions crosses the link
once, not once per region.

Happens-before, the order every schedule keeps:

* **lanes**: a lane runs its segments one at a time, in program order (one host thread, one stream, one link);
* **host issue**: a GPU segment or copy starts only after the host code issued before it has run (the host
  launches kernels and copies in program order; a launch does not wait for the GPU: host code after a kernel
  that does not touch the kernel's arrays runs beside it);
* **read after write**: a segment (or copy) reading an array on a device starts after the segment or copy that
  made that device's copy valid;
* **write after read and after write**: a segment writing an array on a device starts after every earlier
  segment and copy that read or wrote that device's copy since it was last written.

Every segment starts at the latest end among its predecessors in that order, and the program's time is the
latest end. The **critical path** is found backwards from the segment that ends last: the predecessor that ends
latest (data before lane on ties) is the one that held it back. Speeding up a segment off that path does not
shorten the program.

At the end of the run, an array named in ``Program.outputs`` whose only valid copy is on the GPU is copied back
(the program's results are on the host when it ends).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Optional

#: the lanes of a schedule, in the order a timeline draws them
LANES = ("cpu", "gpu", "link")


class PlanError(ValueError):
    """A program or plan that cannot be scheduled: says which segment or region and why."""


@dataclasses.dataclass(frozen=True)
class Segment:
    """One segment of a run: a region invocation or the host code between two of them.

    ``region`` is the marked region's name (None: host code, which runs on the CPU in every plan); ``cpu_s`` its
    measured time on the CPU, ``gpu_s`` its predicted time on the GPU (None: it cannot run there); ``reads`` and
    ``writes`` the arrays (by name) it reads and writes. An array the segment writes only in part belongs in
    ``reads`` too: the rest of it must be valid where the segment runs."""

    name: str
    cpu_s: float
    region: Optional[str] = None
    gpu_s: Optional[float] = None
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Program:
    """A run: its segments in program order, the bytes each array holds, and the arrays the run's result is
    (needed on the host when it ends)."""

    segments: tuple[Segment, ...]
    array_bytes: Mapping[str, int]
    outputs: tuple[str, ...] = ()

    def regions(self) -> list[str]:
        """The regions that can run on the GPU (every invocation has a GPU time), in order of first
        invocation."""
        seen: dict[str, bool] = {}
        for s in self.segments:
            if s.region is not None:
                seen[s.region] = seen.get(s.region, True) and s.gpu_s is not None
        return [r for r, ok in seen.items() if ok]

    def cpu_time(self) -> float:
        """The run's time with every segment on the CPU: their sum (one host thread)."""
        return float(sum(s.cpu_s for s in self.segments))


@dataclasses.dataclass(frozen=True)
class Step:
    """A scheduled segment or copy. ``kind`` is ``cpu``, ``gpu``, ``h2d`` or ``d2h``; ``segment`` the index of
    the program's segment it runs (-1 for a copy); ``arrays`` and ``bytes`` what a copy moves."""

    name: str
    lane: str
    kind: str
    start: float
    end: float
    segment: int = -1
    region: Optional[str] = None
    arrays: tuple[str, ...] = ()
    bytes: int = 0
    critical: bool = False

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A plan's schedule: every step, the predecessors of each (indices into ``steps``), the program's time and
    the critical path (indices into ``steps``, first to last)."""

    plan: frozenset[str]
    steps: tuple[Step, ...]
    preds: tuple[tuple[int, ...], ...]
    total_s: float
    critical: tuple[int, ...]
    cpu_s: float  # the run's time with every segment on the CPU

    @property
    def speedup(self) -> float:
        return self.cpu_s / self.total_s if self.total_s > 0 else float("inf")

    def copied_bytes(self, kind: str) -> int:
        """Bytes moved by the copies of ``kind`` (``h2d`` or ``d2h``)."""
        return sum(s.bytes for s in self.steps if s.kind == kind)

    def lane_busy(self, lane: str) -> float:
        """Seconds ``lane`` is busy."""
        return sum(s.seconds for s in self.steps if s.lane == lane)

    def to_dict(self) -> dict:
        """The schedule as JSON-able data: the plan, the times, the copies and every step."""
        return {"plan": sorted(self.plan), "total_s": self.total_s, "cpu_s": self.cpu_s, "speedup": self.speedup,
                "h2d_bytes": self.copied_bytes("h2d"), "d2h_bytes": self.copied_bytes("d2h"),
                "critical_s": self.critical_seconds(),
                "steps": [{"name": s.name, "lane": s.lane, "kind": s.kind, "start_s": s.start, "end_s": s.end,
                           "region": s.region, "bytes": s.bytes, "critical": s.critical} for s in self.steps]}

    def critical_seconds(self) -> dict[str, float]:
        """Seconds of the critical path by what runs: each region's name, ``host`` for host code, ``copies``."""
        out: dict[str, float] = {}
        for i in self.critical:
            s = self.steps[i]
            key = "copies" if s.lane == "link" else (s.region or "host")
            out[key] = out.get(key, 0.0) + s.seconds
        return out


class _Copies:
    """Where each array is valid and which steps last touched each device's copy."""

    def __init__(self, arrays: Iterable[str]):
        self.valid = {a: {"cpu"} for a in arrays}
        self.maker: dict[tuple[str, str], int] = {}  # (array, device) -> step that made that copy valid
        self.users: dict[tuple[str, str], list[int]] = {}  # (array, device) -> steps that read it since

    def read(self, a: str, dev: str, step: int) -> list[int]:
        deps = [self.maker[(a, dev)]] if (a, dev) in self.maker else []
        self.users.setdefault((a, dev), []).append(step)
        return deps

    def write(self, a: str, dev: str, step: int) -> list[int]:
        deps = list(self.users.get((a, dev), []))
        if (a, dev) in self.maker:
            deps.append(self.maker[(a, dev)])
        self.valid[a] = {dev}
        self.maker[(a, dev)] = step
        self.users[(a, dev)] = []
        return deps

    def filled(self, a: str, dev: str, step: int) -> list[int]:
        """A copy into ``dev`` (step ``step``): it waits for the users of the copy it overwrites."""
        deps = list(self.users.get((a, dev), []))
        self.valid[a].add(dev)
        self.maker[(a, dev)] = step
        self.users[(a, dev)] = []
        return deps


def schedule(program: Program, plan: Iterable[str], transfer_s: Callable[[int], float]) -> Schedule:
    """The schedule of ``program`` with the regions in ``plan`` on the GPU.

    ``transfer_s(bytes)`` is the time of one copy over the host link (e.g. the GPU description's link rate and
    latency, :func:`link_time`). A region of the plan that cannot run on the GPU (no GPU time) is an error."""
    plan = frozenset(plan)
    _check(program, plan)
    copies = _Copies(program.array_bytes)
    steps: list[dict] = []
    preds: list[set[int]] = []
    last_cpu = -1  # the host code issued last: GPU work and copies wait for it

    def add(step: dict, deps: Iterable[int]) -> int:
        steps.append(step)
        preds.append({d for d in deps if d >= 0})
        return len(steps) - 1

    def copy_in(arrays: list[str], dev: str) -> list[int]:
        """One copy per array not valid on ``dev``; the indices of the copies."""
        made = []
        for a in arrays:
            if dev in copies.valid[a]:
                continue
            src = "gpu" if dev == "cpu" else "cpu"
            nbytes = int(program.array_bytes[a])
            kind = "h2d" if dev == "gpu" else "d2h"
            k = add({"name": f"{kind} {a}", "lane": "link", "kind": kind, "arrays": (a,), "bytes": nbytes,
                     "seconds": float(transfer_s(nbytes))}, [last_cpu])
            preds[k] |= set(copies.read(a, src, k)) | set(copies.filled(a, dev, k))
            preds[k].discard(k)
            made.append(k)
        return made

    for i, seg in enumerate(program.segments):
        dev = "gpu" if seg.region in plan else "cpu"
        copy_in(list(dict.fromkeys(seg.reads)), dev)
        k = add({"name": seg.name, "lane": dev, "kind": dev, "segment": i, "region": seg.region,
                 "seconds": float(seg.gpu_s if dev == "gpu" else seg.cpu_s)}, [last_cpu] if dev == "gpu" else [])
        for a in seg.reads:
            preds[k] |= set(copies.read(a, dev, k))
        for a in dict.fromkeys(seg.writes):
            preds[k] |= set(copies.write(a, dev, k))
        preds[k].discard(k)
        if dev == "cpu":
            last_cpu = k
    copy_in([a for a in program.outputs if a in copies.valid], "cpu")
    return _place(program, plan, steps, preds)


def _check(program: Program, plan: frozenset[str]) -> None:
    known = {s.region for s in program.segments if s.region is not None}
    for r in sorted(plan):
        if r not in known:
            raise PlanError(f"the plan names region {r!r}, which the run does not have (regions: "
                            f"{', '.join(sorted(known)) or 'none'})")
    for i, s in enumerate(program.segments):
        if s.region in plan and s.gpu_s is None:
            raise PlanError(f"segment {i} ({s.name}) of region {s.region!r} has no predicted GPU time, so the "
                            "region cannot go to the GPU")
        for a in s.reads + s.writes:
            if a not in program.array_bytes:
                raise PlanError(f"segment {i} ({s.name}) uses array {a!r}, whose size is not known")
    for a in program.outputs:
        if a not in program.array_bytes:
            raise PlanError(f"output array {a!r} has no known size")


def _place(program: Program, plan: frozenset[str], steps: list[dict], preds: list[set[int]]) -> Schedule:
    """Start times (latest end among data predecessors and the lane's previous step) and the critical path."""
    lane_prev: dict[str, int] = {}
    start, end = [0.0] * len(steps), [0.0] * len(steps)
    binding: list[int] = [-1] * len(steps)
    all_preds: list[tuple[int, ...]] = []
    for k, st in enumerate(steps):
        data = sorted(preds[k])
        lane = lane_prev.get(st["lane"], -1)
        t, held = 0.0, -1
        for p in data:  # data first: on a tie the data dependence is what held the step back
            if end[p] > t:
                t, held = end[p], p
        if lane >= 0 and end[lane] > t:
            t, held = end[lane], lane
        start[k], end[k], binding[k] = t, t + st["seconds"], held
        lane_prev[st["lane"]] = k
        all_preds.append(tuple(sorted(set(data) | ({lane} if lane >= 0 else set()))))
    total = max(end, default=0.0)
    path: list[int] = []
    if steps:
        k = max(range(len(steps)), key=lambda j: (end[j], -j))
        while k >= 0:
            path.append(k)
            k = binding[k]
    path.reverse()
    on_path = set(path)
    placed = tuple(Step(name=st["name"], lane=st["lane"], kind=st["kind"], start=start[k], end=end[k],
                        segment=st.get("segment", -1), region=st.get("region"), arrays=st.get("arrays", ()),
                        bytes=st.get("bytes", 0), critical=k in on_path) for k, st in enumerate(steps))
    return Schedule(plan, placed, tuple(all_preds), float(total), tuple(path), program.cpu_time())


@dataclasses.dataclass(frozen=True)
class RegionRun:
    """What a run says of one region invocation: its times, its arrays, and what the host code before it
    wrote (``profiler.segments``); ``result_bytes`` is what it returned to the host code after it."""

    name: str
    invocation: int
    cpu_s: float
    gpu_s: Optional[float]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    host_writes: tuple[str, ...] = ()
    result_bytes: int = 0


def program_from_run(host_s: list[float], regions: list[RegionRun], tail_writes: Iterable[str],
                     array_bytes: Mapping[str, int], outputs: Optional[Iterable[str]] = None) -> Program:
    """The segments of a run: host code (``host_s[i]`` seconds before region invocation ``i``, and
    ``host_s[-1]`` after the last), each region invocation, in program order.

    Host code is taken to read what it writes (its reads are not traced) and the value the region before it
    returned (a pseudo-array ``<region> #<k> result`` of ``result_bytes``). ``outputs`` are the arrays the
    program still holds when it ends (None: every array): what of them the GPU holds alone comes back."""
    if len(host_s) != len(regions) + 1:
        raise PlanError(f"{len(regions)} region invocations need {len(regions) + 1} host times, not {len(host_s)}")
    sizes = dict(array_bytes)
    segs: list[Segment] = []
    result: tuple[str, ...] = ()
    writes_before = [r.host_writes for r in regions] + [tuple(tail_writes)]
    for i, w in enumerate(writes_before):
        w = tuple(sorted(w))
        segs.append(Segment(f"host {i}", float(host_s[i]), reads=result + w, writes=w))
        if i == len(regions):
            break
        r = regions[i]
        result = ()
        if r.result_bytes:
            res = f"{r.name} #{r.invocation} result"
            sizes[res] = int(r.result_bytes)
            result = (res,)
        segs.append(Segment(f"{r.name} #{r.invocation}", float(r.cpu_s), region=r.name, gpu_s=r.gpu_s,
                            reads=tuple(r.reads), writes=tuple(r.writes) + result))
    return Program(tuple(segs), sizes, tuple(array_bytes if outputs is None else outputs))


def default_plan(speedups: Mapping[str, Optional[float]]) -> frozenset[str]:
    """The regions worth porting on their own: those whose predicted speedup with copies is above 1."""
    return frozenset(r for r, s in speedups.items() if s is not None and s > 1.0)


def marginal_gains(program: Program, plan: Iterable[str],
                   transfer_s: Callable[[int], float]) -> dict[str, float]:
    """For each region that can run on the GPU and is not in ``plan``: the seconds the program's time would
    drop by if it were ported too (negative: porting it would slow the program down)."""
    plan = frozenset(plan)
    base = schedule(program, plan, transfer_s).total_s
    return {r: base - schedule(program, plan | {r}, transfer_s).total_s
            for r in program.regions() if r not in plan}


def link_time(link_gb_per_s: float, latency_s: float) -> Callable[[int], float]:
    """One copy's time over a host link of ``link_gb_per_s`` GB/s (one direction) with ``latency_s`` per copy."""
    if not link_gb_per_s > 0:
        raise PlanError(f"the host link's rate must be positive, not {link_gb_per_s!r} GB/s")

    def seconds(nbytes: int) -> float:
        return float(latency_s) + nbytes / (float(link_gb_per_s) * 1e9)

    return seconds


def with_gpu_times(program: Program, gpu_s: Mapping[int, Optional[float]]) -> Program:
    """``program`` with the GPU times of the segments in ``gpu_s`` (segment index -> seconds) replaced: the
    same run re-evaluated on another GPU or configuration."""
    segs = tuple(dataclasses.replace(s, gpu_s=gpu_s[i]) if i in gpu_s else s
                 for i, s in enumerate(program.segments))
    return dataclasses.replace(program, segments=segs)
