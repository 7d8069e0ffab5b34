"""The whole program: a script's run as segments on CPU, GPU and the host link, for a chosen set of ported
regions (``portcast program``, :func:`profile_program`).

Two runs of the script (``profiler.segments``): an untraced one times every region invocation and the host code
between them; a traced one predicts each region invocation's GPU time (the profile pipeline's sinks and model)
and learns its arrays. :func:`gpu_models.whole_program.schedule` places them on the lanes with the copies the plan
needs and finds the critical path. The result is a :class:`ProgramReport`, saved as JSON
(``portcast.program-report`` v1) and read back by :meth:`ProgramReport.from_dict`; the text, the timeline and
the HTML section are drawn from it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any, Optional, Sequence

from portcast.defaults import DEFAULT_GPU
from portcast.errors import UserError

FORMAT = "portcast.program-report"
SCHEMA_VERSION = 1


@dataclasses.dataclass
class ProgramReport:
    """A whole program's prediction for one plan on one GPU, and the same run on other GPUs.

    ``regions``: per region, its invocations, CPU seconds (the untraced run's), predicted GPU seconds and the
    speedup of the region alone with its own copies (``None`` when a region has no prediction: ``why``);
    ``schedule``: the plan's schedule (``Schedule.to_dict``); ``gains``: seconds each region not in the plan
    would save if ported too; ``configurations``: the same plan's time and speedup on other GPUs."""

    script: str
    gpu: str
    gpu_label: str
    link_gb_per_s: float
    plan: list[str]
    default_plan: list[str]
    regions: list[dict]
    schedule: dict
    gains: dict[str, float]
    configurations: list[dict]
    cpu_total_s: float
    #: the profile report of the traced run (``ProfileReport.to_dict``): each region invocation's features,
    #: prediction and bounds, the HTML page's second part
    profile: dict = dataclasses.field(default_factory=dict)
    #: the plan across a scaling-surface model's configurations (:func:`surface_configurations`), or None
    surface: Optional[dict] = None
    notes: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "schema_version": SCHEMA_VERSION, **dataclasses.asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=False, allow_nan=False)

    @classmethod
    def from_dict(cls, d: dict, source: str = "<report>") -> "ProgramReport":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError(f"{source}: not a Portcast whole-program report (format {FORMAT!r})")
        if d.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"{source}: schema_version {d.get('schema_version')!r} is not one this Portcast "
                             f"reads ({SCHEMA_VERSION})")
        names = [f.name for f in dataclasses.fields(cls)]
        missing = [n for n in names if n not in d and n not in ("notes", "surface")]
        if missing:
            raise ValueError(f"{source}: field {missing[0]!r} is missing")
        from portcast.profile_report import ProfileReport

        ProfileReport.from_dict(d["profile"], where=f"{source}: profile")  # refuses a damaged one, naming the field
        return cls(**{n: d[n] for n in names if n in d})

    def to_html(self) -> str:
        """The self-contained page: the whole-program section (the timeline inline), then the traced run's
        profile report of each region's first invocation, from the report's templates (the JSON holds every
        invocation's)."""
        import dataclasses as dc

        from portcast.profile_report import ProfileReport, render_program_html

        profile = ProfileReport.from_dict(self.profile)
        first = [r for r in profile.regions if r.invocation == 0]  # a page of every invocation would be huge
        return render_program_html(self, dc.replace(profile, regions=first))

    def write_html(self, path) -> Path:
        """Write :meth:`to_html` atomically."""
        from core.atomic import atomic_write_text

        atomic_write_text(Path(path), self.to_html())
        return Path(path)

    @property
    def total_s(self) -> float:
        return float(self.schedule["total_s"])

    @property
    def speedup(self) -> float:
        return float(self.schedule["speedup"])


def _region_table(runs, preds) -> list[dict]:
    """Per region: invocations, CPU and GPU seconds, the speedup alone with its own copies."""
    out: dict[str, dict] = {}
    for run, rp in zip(runs, preds):
        row = out.setdefault(run.name, {"region": run.name, "invocations": 0, "cpu_s": 0.0, "gpu_s": 0.0,
                                        "copies_s": 0.0, "predicted": True, "why": ""})
        row["invocations"] += 1
        row["cpu_s"] += run.cpu_s
        p = rp.prediction
        if p is None:
            row["predicted"] = False
            row["why"] = row["why"] or (rp.reason or "no GPU-time prediction")
        else:
            row["gpu_s"] += p.kernel_s
            row["copies_s"] += p.transfer_s
    for row in out.values():
        alone = row["gpu_s"] + row["copies_s"]
        row["speedup_alone"] = row["cpu_s"] / alone if row["predicted"] and alone > 0 else None
        if not row["predicted"]:
            row["gpu_s"] = row["copies_s"] = None
    return list(out.values())


def profile_program(script: Path, script_args: Sequence[str] = (), *, gpu: str = DEFAULT_GPU,
                    model: Optional[str] = None, ports: Optional[Sequence[str]] = None,
                    compare: Sequence[str] = (), mode: str = "auto", sample: Any = "auto",
                    regions: Optional[Sequence[str]] = None, progress=None,
                    surface: Optional[Path] = None) -> ProgramReport:
    """Run ``script`` twice (untraced, then traced) and predict the whole program with ``ports`` on the GPU
    (None: every region whose speedup alone, with its own copies, is above 1) on ``gpu``, on each GPU of
    ``compare``, and across the configurations of the scaling-surface model file ``surface``."""
    from gpu_models.bounds import TRANSFER_LATENCY_S
    from gpu_models.simt.config import load_config
    from gpu_models.whole_program import (
        PlanError,
        RegionRun,
        default_plan,
        link_time,
        marginal_gains,
        program_from_run,
        schedule,
        with_gpu_times,
    )
    from portcast.pipeline.stage_predict import predict_regions
    from portcast.pipeline.stage_prepare import check_gpu, prepare
    from portcast.pipeline.stage_report import build_report
    from portcast.pipeline.stage_run import run_traced
    from profiler.segments import ArrayUses, SegmentError, pair, time_script

    script = Path(script)
    if not script.is_file():
        raise UserError(f"{script}: no such script")
    check_gpu(gpu)
    for spec in compare:
        gpu_config(spec)
    if surface is not None:
        _surface_model(surface)  # a bad model file fails before the script runs
    with _users_own("untraced"):
        timeline = time_script(script, script_args, regions)
    setup = prepare(features=True, model=model, gpu=gpu, sample=sample, progress=progress)
    if not setup.chosen.predicts_time:
        raise UserError("the whole-program view needs GPU times: use the GPU-time model (not --model provisional)")
    uses = ArrayUses()
    setup.sinks.insert(0, uses)
    with _users_own("traced"):
        run_traced(setup.sinks, script=script, script_args=script_args, mode=mode, regions=regions,
                   sample=setup.sample)
    try:
        pair(timeline, uses.results)
    except SegmentError as exc:
        raise UserError(str(exc)) from None
    preds = predict_regions(setup, baseline=False)
    profile = build_report(setup, preds, target=str(script),
                           no_baseline="the whole-program view times each region in its untraced run")
    spans = timeline.spans
    runs = [RegionRun(u.name, u.invocation, s.end - s.start,
                      rp.prediction.kernel_s if rp.prediction is not None else None,
                      tuple(u.reads), tuple(u.writes), tuple(u.host_writes), u.result_bytes)
            for s, u, rp in zip(spans, uses.results, preds)]
    program = program_from_run(timeline.host_gaps(), runs, uses.tail_writes, uses.array_bytes(), uses.live)
    table = _region_table(runs, preds)
    suggested = default_plan({r["region"]: r["speedup_alone"] for r in table})
    plan = frozenset(suggested if ports is None else ports)
    cfg = load_config(gpu)
    link = link_time(cfg.link_gb_per_s, TRANSFER_LATENCY_S)
    try:
        sched = schedule(program, plan, link)
        gains = marginal_gains(program, plan, link)
    except PlanError as exc:
        raise UserError(str(exc)) from None
    configs = []
    for spec in dict.fromkeys(c for c in compare if c != gpu):
        label_c, other = gpu_config(spec)
        times = {}
        for i, rp in _region_segments(program, preds):
            times[i] = _kernel_s(setup, rp.index, other)
        try:
            s = schedule(with_gpu_times(program, times), plan, link_time(other.link_gb_per_s, TRANSFER_LATENCY_S))
            configs.append({"gpu": label_c, "total_s": s.total_s, "speedup": s.speedup, "why": ""})
        except PlanError as exc:
            configs.append({"gpu": label_c, "total_s": None, "speedup": None, "why": str(exc)})
    _, label = setup.chosen.target(gpu)
    prof = profile.to_dict()
    surf = surface_configurations(program, prof["regions"], surface, plan, link) if surface is not None else None
    return ProgramReport(str(script), gpu, label, float(cfg.link_gb_per_s), sorted(plan), sorted(suggested),
                         table, sched.to_dict(), gains, configs, program.cpu_time(), prof, surf)


#: what a configuration may change of a GPU description: ``h100:sm_count=66,core_mhz=1200``
CONFIG_FIELDS = {"sm_count": int, "core_mhz": float, "mem_mhz": float, "link_gb_per_s": float}


def gpu_config(spec: str):
    """``(label, GPUConfig)`` of a configuration: a preset name or description file, optionally followed by
    ``:field=value,...`` changing its SM count, core or memory clock (MHz) or host link (GB/s): the same GPU
    design at another size or clock, as an architect varies it."""
    from gpu_models.simt.config import ConfigError, load_config

    base, _, changes = spec.partition(":")
    try:
        cfg = load_config(base)
    except (ConfigError, FileNotFoundError) as exc:
        raise UserError(f"--compare {spec}: {exc}") from None
    kw = {}
    for part in filter(None, changes.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if key not in CONFIG_FIELDS or not eq:
            raise UserError(f"--compare {spec}: {part!r} is not FIELD=VALUE with a field among "
                            f"{', '.join(CONFIG_FIELDS)}")
        try:
            v = CONFIG_FIELDS[key](value)
        except ValueError:
            raise UserError(f"--compare {spec}: {key} must be a number, not {value!r}") from None
        if not v > 0:
            raise UserError(f"--compare {spec}: {key} must be positive, not {value}")
        kw[key] = v
    if kw:
        cfg = dataclasses.replace(cfg, name=spec, **kw)
    return spec, cfg


def _kernel_s(setup, index: int, cfg) -> Optional[float]:
    """The region invocation ``index``'s predicted kernel time on ``cfg`` (a GPUConfig), or None: the chosen
    model's prediction from the counts it already has, as for a sampled region's replicate."""
    ps = setup.psinks
    if ps is None or index >= len(ps.work.results) or setup.chosen.needs_simt:
        return None
    got = setup.chosen.replicate_time(cfg, setup.features.results[index][1], ps.work.results[index],
                                      ps.bytes.results[index], None)
    return None if got is None else got[0]


def surface_configurations(program, regions: list[dict], path, plan, transfer_s) -> dict:
    """The plan's whole-program time at every configuration of a scaling-surface model (``portcast scale train
    --counters classes``; gpu_models/scaling): each region invocation's predicted GPU time scaled by the change
    the model predicts from its base configuration for the invocation's operation mix (its class counters,
    ``regions``: the profile report's regions, in program order), the schedule evaluated again at each.
    Returns the grid, the base, and the time and speedup at every configuration."""
    from features.counters import counters_from_op_counts
    from gpu_models.whole_program import schedule, with_gpu_times

    model = _surface_model(path)
    seg_index = [i for i, seg in enumerate(program.segments) if seg.region is not None]
    if len(seg_index) != len(regions):
        raise UserError(f"--surface: the run has {len(seg_index)} region invocations but its profile "
                        f"{len(regions)}: nothing to place them by")
    rel = {}
    for i, r in zip(seg_index, regions):
        x = counters_from_op_counts(r["op_counts"])
        rel[i] = model.predict_surface(x, 1.0).ravel()  # 1 at the base configuration
    configs = model.grid_.configs()
    totals = []
    for k in range(len(configs)):
        times = {i: (program.segments[i].gpu_s * rel[i][k] if program.segments[i].gpu_s is not None else None)
                 for i in seg_index}
        totals.append(schedule(with_gpu_times(program, times), plan, transfer_s).total_s)
    cpu = program.cpu_time()
    return {"model": str(path), "grid": [list(c) for c in configs], "base": list(model.base),
            "total_s": totals, "speedup": [cpu / t if t > 0 else None for t in totals]}


@contextlib.contextmanager
def _users_own(run: str):
    """The script's own exception, in one line naming the run it broke: the whole-program view needs runs that
    complete (an interruption stays one)."""
    from profiler.instrument import SourceUnavailable, UnsupportedConstruct

    try:
        yield
    except (UserError, UnsupportedConstruct, SourceUnavailable, KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        raise UserError(f"the script raised {type(exc).__name__}: {exc} in its {run} run; the whole-program view "
                        "needs a run that completes (portcast profile keeps what ran before an error)") from None


def _surface_model(path):
    """The scaling-surface model at ``path``, which must place a region by its operation mix."""
    from features.counters import COUNTER_NAMES
    from gpu_models.scaling import ScalingModel
    from gpu_models.scaling.surface import ScalingModelError

    try:
        model = ScalingModel.load(path)
    except (ScalingModelError, OSError, ValueError) as exc:
        raise UserError(f"--surface {path}: {exc}") from None
    if model.meta_.get("counters") != "classes" or tuple(model.counter_names_) != COUNTER_NAMES:
        raise UserError(f"--surface {path}: the model was trained on counters {model.meta_.get('counters')!r}; a "
                        "region is placed on a model trained with --counters classes (its operation mix)")
    return model


def _region_segments(program, preds):
    """(segment index, region prediction) of each region invocation, in program order."""
    k = 0
    for i, seg in enumerate(program.segments):
        if seg.region is not None:
            yield i, preds[k]
            k += 1
