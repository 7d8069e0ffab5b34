"""The predict stage of the pipeline: what the sinks gathered -> one :class:`RegionPrediction` per region.

:func:`predict_one_region` is the one prediction of every path (a script, ``--function``, ``--native``,
``--at-size``, the Python API, the report): the chosen :class:`predictor.region_predictor.RegionPredictor`
predicts the region into its fields. :func:`predict_regions` does it for every region a run traced (with the
intervals of a sampled one, :func:`sample_summary`); :func:`predict_at_size` at an input size it does not trace.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from portcast.errors import UserError


@dataclasses.dataclass
class RegionPrediction:
    """One region's prediction (or why there is none) and what explains it: what :func:`predict_one_region`
    returns, the one thing the terminal, the JSON and HTML report and the Python API read a region's GPU time,
    speedup, bounds and target from.

    With the GPU-time model, ``prediction`` holds the kernel time on ``gpu`` and the speedup against the CPU
    time, ``bounds`` the physical lower bounds of the same work counts, ``contributions`` the model's terms.
    With an XAPP speedup model (``--model provisional`` or a file of that format; ``model_kind`` ``xapp``),
    ``speedup_model`` holds its predicted speedup instead (no GPU time, no bounds), and ``model_label`` names
    it on every line printed for it."""

    index: int
    label: str
    prediction: Any = None  # predictor.gputime_region.GpuPrediction
    bounds: Any = None  # gpu_models.bounds.Bounds
    contributions: Any = None  # pandas DataFrame of GpuTimeModel.contributions, with training ranges
    model: Any = None
    reason: Optional[str] = None  # why no time was predicted
    notes: list = dataclasses.field(default_factory=list)  # said before the prediction
    gpu: str = ""  # the target GPU's preset name ("p100"); the XAPP model's own preset for model_kind xapp
    gpu_label: str = ""  # the target as every output names it: "NVIDIA Tesla P100 PCIe 16 GB (p100, Pascal)"
    model_file: str = ""
    model_kind: str = ""  # the kind of the predictor that made it (RegionPredictor.kind), for the report
    model_label: str = ""  # xapp: what every printed line starts with ("provisional model (simulated H100)")
    speedup_model: Optional[dict] = None  # xapp: predicted_speedup, model_file, label, provisional line, terms
    cpu_how: str = ""  # how the CPU time was measured (njit, python)
    cpu_why: str = ""  # why there is no CPU time, when there is none
    #: a sampled region's rate, counts and 95% intervals (:func:`sample_summary`); None: exact
    sample: Optional[dict] = None


#: said for a region traced by the native recorder (``portcast profile --native``): what its trace lacks
NATIVE_NOTE = ("traced natively: the trace has no source-level thread-space analysis, so the threads are the "
               "region_thread() iterations, unchecked for dependences between them (ts_checked = 0), and the "
               "parallel loop's own control records (its increment and branch) count as thread work, which the "
               "Python tracer leaves out; the work counts, bytes, features and SIMT sample are the native "
               "trace's own")


#: why a native region has no CPU time
NATIVE_CPU_WHY = "a native region runs only under Valgrind here; its uninstrumented time is not measured"


def predict_one_region(chosen, gpu: str, series, *, work: dict | None = None, bytes_rw: dict | None = None,
                       simulated_s: float = float("nan"), cpu_s: Optional[float] = None, complete: bool = True,
                       index: int = 0, label: str = "", notes=(), cpu_how: str = "",
                       cpu_why: str = "", cpu_baseline=None, cpu_numpy: bool = False,
                       cpu_at: str = "") -> RegionPrediction:
    """The one prediction of a region, for every path (``portcast profile`` of a script or ``--function``,
    ``--native``, ``--at-size``, ``portcast.profile``/``predict``/``api.predict_gpu_time`` and the report).

    ``chosen`` is the :class:`predictor.region_predictor.RegionPredictor` of
    :func:`portcast.pipeline.stage_prepare.resolve_model`, which predicts the region into its fields
    (:meth:`~predictor.region_predictor.RegionPredictor.predict`). With the GPU-time model: the kernel time on
    preset ``gpu`` from the region's ``work`` (``WorkSink``), features ``series``, ``bytes_rw`` (``BytesSink``)
    and ``simulated_s`` (``SimtSink``; NaN when there is none: a model that needs it then gives a ``reason``)
    by :func:`predictor.gputime_region.predict_region`, the bounds of the same counts by
    :func:`predictor.gputime_region.region_bounds`, the model's term contributions, and the speedup against
    ``cpu_s`` (None: ``cpu_why`` says why; ``cpu_baseline``, the :class:`profiler.baseline.Baseline` of the
    timed runs, gives the speedup its interval and says what was timed, ``cpu_numpy`` whether the region ran
    NumPy, ``cpu_at`` at what size). With an XAPP model (``--model provisional``): its predicted speedup
    (``speedup_model``), labelled. A region that did not complete, or that
    :func:`portcast.report.no_prediction_reason` refuses, gets a ``reason`` instead."""
    from portcast.report import no_prediction_reason

    preset, where = chosen.target(gpu)
    rp = RegionPrediction(index, label, notes=list(notes), gpu=preset, gpu_label=where,
                          model_file=str(chosen.path) if chosen.path else "", model_kind=chosen.kind,
                          cpu_how=cpu_how, cpu_why=cpu_why, model=chosen.model, model_label=chosen.model_label(where))
    if not complete:
        rp.reason = "the region did not complete"
        return rp
    reason = no_prediction_reason(series)
    if reason is not None:
        rp.reason = reason
        return rp
    fields = chosen.predict(gpu, series, work=work, bytes_rw=bytes_rw, simulated_s=simulated_s, cpu_s=cpu_s,
                            cpu_baseline=cpu_baseline, cpu_numpy=cpu_numpy, cpu_at=cpu_at)
    for name, value in fields.items():
        setattr(rp, name, value)
    return rp


def _cpu_why(info, baseline: bool) -> str:
    """Why a region has no CPU time (empty when it has one)."""
    from profiler.baseline import why_not_measured

    if info.uninstrumented_time_s:
        return ""
    if info.mode == "native":
        return NATIVE_CPU_WHY
    return why_not_measured(info, "not measured" if baseline else "--no-baseline")


def predict_regions(setup, *, baseline: bool = True) -> list[RegionPrediction]:
    """Each featured region's prediction (:func:`predict_one_region`) from what ``setup``'s sinks gathered
    (a :class:`portcast.pipeline.stage_prepare.ProfileSetup`),
    with the chosen model on ``setup.gpu``: the Python tracer's regions and the native recorder's alike (a
    native region's notes say what its trace lacks)."""
    from profiler.baseline import Baseline, uses_numpy
    from profiler.sampling import AUTO_MIN_RECORDS

    fsink = setup.features
    if fsink is None or setup.chosen is None:
        return []
    psinks = setup.psinks
    out = []
    samples = setup.estimator.samples if setup.estimator is not None else []
    for i, (info, series) in enumerate(fsink.results):
        have = psinks is not None and i < len(psinks.work.results)
        sim = psinks.simt.results[i] if have and psinks.simt is not None else float("nan")
        out.append(predict_one_region(
            setup.chosen, setup.gpu, series, work=psinks.work.results[i] if have else None,
            bytes_rw=psinks.bytes.results[i] if have else None, simulated_s=sim,
            cpu_s=info.uninstrumented_time_s or None, complete=info.complete, index=i,
            label=f"{info.name} #{info.invocation}", notes=[NATIVE_NOTE] if info.mode == "native" else [],
            cpu_how=str(info.extra.get("uninstrumented_mode", "")), cpu_why=_cpu_why(info, baseline),
            cpu_baseline=Baseline.from_info(info), cpu_numpy=uses_numpy(info)))
        why = str(info.extra.get("sample_auto", ""))
        if why.startswith("exact: ") and not why.endswith("small enough") and info.n_records > AUTO_MIN_RECORDS:
            out[-1].notes.append(f"every one of its {info.n_records:,} records was analysed ({why[7:]}); "
                                 "--sample RATE (e.g. 0.01) profiles a region this large in seconds")
        sample = samples[i] if i < len(samples) else None
        if sample is not None:
            from features.sample_estimator import kept_nothing

            out[-1].sample = sample_summary(out[-1], sample, setup.chosen, setup.gpu, series)
            why = kept_nothing(sample)
            if why:  # the estimate would be the host code's alone
                out[-1].prediction = out[-1].bounds = out[-1].contributions = out[-1].speedup_model = None
                out[-1].reason = why
    return out


def _at_least(ci, point: float, rel: float):
    """Interval ``ci`` widened to at least ``point`` times (1 -/+ ``rel``)."""
    if ci is None:
        return None
    return min(ci[0], point * (1.0 - rel)), max(ci[1], point * (1.0 + rel))


def _fractions() -> frozenset:
    """The features whose values are fractions (catalogue range 0..1)."""
    from features.catalogue import catalogue

    cat = catalogue()
    return frozenset(cat.loc[cat["range"] == "0..1", "name"])


def sample_summary(rp, sample, chosen, gpu: str, series) -> dict:
    """What a report says of a sampled region (``sample``: its
    :class:`features.sample_estimator.RegionSample`): the plan, what was kept, and the 95% intervals of the
    kernel time, the speedups and every feature that is estimated (not exact), from the replicates' predictions
    by ``chosen`` (a :class:`predictor.region_predictor.RegionPredictor`)."""
    from features.sample_estimator import interval
    from features.sampled import EXACT, how_estimated
    from profiler.sampling import INSTANCE_RECORDS, INSTANCES, KEPT_INSTANCES, UNIT

    c = sample.counts
    out = {**c.to_json(), "replicates": len(sample.replicates)}
    kept = c[INSTANCES]
    out["kept_fraction"] = c[KEPT_INSTANCES] / kept if kept else 1.0
    feats = {}
    gap = 1.0 / (INSTANCE_RECORDS if c.plan.intervals else UNIT)
    fractions = _fractions()
    for name in series.index:
        how = how_estimated(name)
        if how == EXACT:
            continue
        point = float(series[name])
        ci = interval(point, [float(r[0].get(name, np.nan)) for r in sample.replicates])
        if ci is not None:
            # a ratio of the sampled units also carries the gaps between them (one pair of records per unit
            # follows another unit's: docs/sampling.md): at most ``gap`` of a fraction, or of the value
            bias = (gap if name in fractions else gap * abs(point)) if how == "ratio" else 0.0
            feats[name] = [ci[0] - bias, ci[1] + bias]
    out["feature_intervals"] = feats
    p = rp.prediction
    if p is None or chosen is None or not chosen.predicts_time:
        return out
    kernel, total = [], []
    for s, w, b in sample.replicates:
        if w is None or b is None:
            continue
        q = chosen.replicate_time(gpu, s, w, b, p.cpu_s)
        if q is None:
            continue
        kernel.append(q[0])
        total.append(q[0] + q[1])
    # the sampled ratios' gap bound (above) carried into the time: at least that much either way
    k_ci = _at_least(interval(p.kernel_s, kernel, log=True), p.kernel_s, gap)
    t_ci = _at_least(interval(p.kernel_s + p.transfer_s, total, log=True), p.kernel_s + p.transfer_s, gap)
    out["kernel_s_interval"] = list(k_ci) if k_ci else None
    if p.cpu_s and k_ci:
        out["speedup_interval"] = [p.cpu_s / k_ci[1], p.cpu_s / k_ci[0]]
    if p.cpu_s and t_ci:
        out["speedup_with_transfers_interval"] = [p.cpu_s / t_ci[1], p.cpu_s / t_ci[0]]
    return out


def at_size_ladder(make, at_size: int, sizes: Optional[list] = None) -> list:
    """The small sizes ``--at-size`` traces: ``sizes`` when given, else :func:`features.at_size.default_sizes`
    below ``at_size`` (starting from the default size of ``make``'s first parameter, when it has one)."""
    import inspect

    from features.at_size import default_sizes

    if sizes:
        return [int(n) for n in sizes]
    first = next(iter(inspect.signature(make).parameters.values()))
    traced = first.default if isinstance(first.default, int) else None
    return list(default_sizes(at_size, traced))


@dataclasses.dataclass
class AtSizePrediction:
    """What :func:`predict_at_size` found: the sizes traced, the work extrapolated to the size and the
    region's prediction there (:func:`predict_one_region`, with the model without the SIMT input)."""

    ladder: list
    extrapolation: Any  # features.at_size.AtSize
    region: RegionPrediction
    cpu_baseline: Any = None  # profiler.baseline.Baseline of the runs at the size, or None


def predict_at_size(fn, make, at_size: int, ladder: list, *, chosen, gpu: str, mode: str = "auto",
                    baseline: bool = True, label: str = "", baseline_kind: str = "as-written",
                    baseline_rule=None) -> AtSizePrediction:
    """Trace ``fn(*make(n))`` at each size of ``ladder``, fit every count, extrapolate to ``at_size`` and
    predict there with :func:`predict_one_region` and the GPU-time model of ``chosen`` (a RegionPredictor;
    one that needs the SIMT input is refused: the size itself is not traced); with ``baseline``, the CPU time is
    measured at ``at_size`` itself (``baseline_kind``, ``baseline_rule`` as in :func:`profile`)."""
    from features.at_size import extrapolate
    from features.work import BytesSink
    from predictor.gputime import WORK_KEYS
    from profiler.baseline import measure_uninstrumented, uses_numpy

    notes = []
    if chosen.needs_simt:
        raise UserError(f"--at-size needs a GPU-time model without the SIMT input ({chosen.path} needs it: a size "
                        "that is not traced has no SIMT estimate)")
    at = extrapolate(fn, make, ladder, at_size, mode=mode, extra_sinks=lambda: [BytesSink()])
    cpu, why, b = None, "--no-baseline", None
    if baseline:
        inputs = make(at_size)
        b = measure_uninstrumented(fn, inputs if isinstance(inputs, tuple) else (inputs,), kind=baseline_kind,
                                   rule=baseline_rule)
        cpu, why = b.seconds, (f"it raised {b.error}" if b.error else "")
    work = {k: float(v) for k, v in at.counts.items() if k not in ("read_bytes", "written_bytes")}
    # the distinct sectors move with where each traced size's arrays start (a sector per array), which no
    # polynomial fits: they are the distinct bytes at the size times the largest traced size's sectors per byte
    # (and the per-launch sectors per launch per sector of the region)
    last = at.traced[-1]
    if all(k in last and k in work for k in ("sector_bytes", "launch_sector_bytes", "unique_bytes", "launches")):
        if last["unique_bytes"] > 0 and last["sector_bytes"] > 0:
            work["sector_bytes"] = work["unique_bytes"] * last["sector_bytes"] / last["unique_bytes"]
            work["launch_sector_bytes"] = (work["sector_bytes"] * max(work["launches"], 1.0)
                                           * last["launch_sector_bytes"] / (last["sector_bytes"]
                                                                            * max(last["launches"], 1.0)))
    missing = [k for k in WORK_KEYS if k not in work]
    if missing:
        raise UserError(f"--at-size: the extrapolation lacks the counts {missing}")
    rw = {"read_bytes": float(at.counts.get("read_bytes", 0.0)),
          "written_bytes": float(at.counts.get("written_bytes", 0.0))}
    rp = predict_one_region(chosen, gpu, at.features, work=work, bytes_rw=rw, cpu_s=cpu,
                            label=label, notes=notes, cpu_why=why, cpu_baseline=b,
                            cpu_numpy=any(uses_numpy(i) for i in at.infos), cpu_at=f"at n = {at_size:,} (not traced)")
    return AtSizePrediction(ladder=list(ladder), extrapolation=at, region=rp, cpu_baseline=b)
