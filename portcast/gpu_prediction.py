"""A profiled region's predicted kernel time on a named GPU, its speedup against the region's own CPU time,
and the host<->device transfers: the GPU-time model (:mod:`predictor.gputime`) fed from the trace.

``portcast profile`` adds :func:`prediction_sinks` to the region's sinks; after the run, :func:`predict_region`
joins the region's work counts, features, bytes read and written and the SIMT model's estimate on the target
GPU into one row of the model's inputs and returns the prediction (:class:`GpuPrediction`).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.trace_schema import Op
from portcast.defaults import DEFAULT_GPU
from portcast.measured_ports import ThreadRecordsSink, WorkSink, merge_intervals, sample_threads

#: threads per block assumed for a region (the launch a port would most likely use)
BLOCK_SIZE = 256
#: the default target: the newest GPU with measured points in the model's training data
#: records a profiled region may keep for the SIMT estimate (about 45 bytes each while tracing, 280 in the
#: warp streams: about 1.3 GB at most); past it a 1-SM slice, past that no estimate (and the model without it)
PROFILE_SAMPLE_RECORDS = 4_000_000


class BytesSink:
    """Distinct bytes a region reads (``read_bytes``: union of its LOAD ranges) and writes (``written_bytes``:
    union of its STORE ranges): what a GPU port copies in and out. ``results`` gets one dict per region."""

    def __init__(self) -> None:
        self.results: list[dict] = []

    def start_region(self, info, static) -> None:
        self._parts: dict[int, list] = {int(Op.LOAD): [], int(Op.STORE): []}
        self._runs: dict[int, tuple] = {k: (np.zeros(0, np.int64), np.zeros(0, np.int64)) for k in self._parts}

    def consume(self, chunk) -> None:
        for op, parts in self._parts.items():
            m = (chunk.op == op) & (chunk.size > 0)
            if m.any():
                a = chunk.addr[m].astype(np.int64)
                parts.append(merge_intervals(a, a + chunk.size[m].astype(np.int64)))
                if len(parts) >= 64:
                    self._fold(op)

    def _fold(self, op: int) -> None:
        parts = self._parts[op]
        if parts:
            s, e = self._runs[op]
            self._runs[op] = merge_intervals(np.concatenate([s] + [p[0] for p in parts]),
                                             np.concatenate([e] + [p[1] for p in parts]))
            parts.clear()

    def end_region(self, info, static) -> None:
        for op in self._parts:
            self._fold(op)
        length = {op: int((e - s).sum()) for op, (s, e) in self._runs.items()}
        self.results.append({"read_bytes": length[int(Op.LOAD)], "written_bytes": length[int(Op.STORE)]})


class SimtSink(ThreadRecordsSink):
    """Keeps a bounded sample of each region's threads and, when the region ends, runs the SIMT model on it
    for one preset: ``results`` gets the estimated time in seconds per region (NaN when the region was
    incomplete, had no threads, or its sample outgrew the memory bound)."""

    def __init__(self, gpu: str) -> None:
        from portcast.measured_ports import SLICE_SMS

        super().__init__(sample_threads([gpu], BLOCK_SIZE, SLICE_SMS), PROFILE_SAMPLE_RECORDS,
                         sample_threads([gpu], BLOCK_SIZE, 1))
        self.gpu = gpu
        self.results: list[float] = []

    def end_region(self, info, static) -> None:
        from portcast.measured_ports import SLICE_SMS, WHOLE_RECORDS, simulated_times

        super().end_region(info, static)
        chunk, self.chunk = self.chunk, None
        t = float("nan")
        if chunk is not None and len(chunk.tid) and self.threads > 0:
            whole = self.kept == self.total and self.kept <= WHOLE_RECORDS
            t = simulated_times(chunk, self.threads, BLOCK_SIZE, [self.gpu], complete=whole,
                                name=info.name, slice_sms=1 if self.fell_back else SLICE_SMS, static=static)[self.gpu]
        self.results.append(t)


@dataclasses.dataclass
class PredictionSinks:
    """The sinks a prediction needs, one set per profile run."""

    gpu: str
    work: WorkSink
    bytes: BytesSink
    simt: SimtSink | None

    @property
    def sinks(self) -> list:
        return [s for s in (self.work, self.bytes, self.simt) if s is not None]


def prediction_sinks(gpu: str, simulate: bool = True) -> PredictionSinks:
    """Sinks for :func:`predict_region` on preset ``gpu`` (``simulate``: keep the records the SIMT model needs,
    a sample of two waves on a 4-SM slice, bounded in memory)."""
    return PredictionSinks(gpu, WorkSink(), BytesSink(), SimtSink(gpu) if simulate else None)


@dataclasses.dataclass
class GpuPrediction:
    """One region's prediction on one GPU (times in seconds)."""

    gpu: str
    gpu_name: str
    generation: str
    extrapolated: bool
    kernel_s: float
    transfer_s: float
    read_bytes: int
    written_bytes: int
    cpu_s: float | None
    simulated_s: float | None
    out_of_range: list
    model_file: str
    trained_on: str
    inputs: dict
    uses_simt: bool = False
    #: how the time is made (:meth:`predictor.bounded.BoundedTimeModel.explain`; None for the older families)
    explanation: dict | None = None
    #: the region's lower bounds on this GPU (:class:`gpu_models.bounds.Bounds`; not serialised here: the report
    #: writes them on their own)
    bounds: Any = dataclasses.field(default=None, repr=False, compare=False)
    # the CPU side: the 25th and 75th percentiles of the timed runs whose median is cpu_s (None when not
    # repeated), and what was timed in words ("NumPy as written, median of 2,000 runs, IQR 3%")
    cpu_q25_s: float | None = None
    cpu_q75_s: float | None = None
    cpu_baseline: str = ""

    @property
    def speedup(self) -> float | None:
        """CPU time / predicted kernel time."""
        return None if not self.cpu_s else self.cpu_s / self.kernel_s

    @property
    def speedup_with_transfers(self) -> float | None:
        """CPU time / (predicted kernel time + copies of the inputs in and the outputs out)."""
        return None if not self.cpu_s else self.cpu_s / (self.kernel_s + self.transfer_s)

    def _interval(self, gpu_s: float) -> tuple[float, float] | None:
        if not self.cpu_s or self.cpu_q25_s is None or self.cpu_q75_s is None:
            return None
        return self.cpu_q25_s / gpu_s, self.cpu_q75_s / gpu_s

    @property
    def speedup_range(self) -> tuple[float, float] | None:
        """The speedup at the CPU time's 25th and 75th percentiles (the spread of the CPU runs only)."""
        return self._interval(self.kernel_s)

    @property
    def speedup_with_transfers_range(self) -> tuple[float, float] | None:
        """The speedup with the copies at the CPU time's 25th and 75th percentiles."""
        return self._interval(self.kernel_s + self.transfer_s)

    def set_cpu(self, baseline, numpy: bool = False, at: str = "") -> None:
        """Take the CPU side from a :class:`profiler.baseline.Baseline` (None: not measured): its median, the
        quartiles of its runs and its description."""
        t = (baseline.timing or {}) if baseline is not None else {}
        self.cpu_s = (baseline.seconds or None) if baseline is not None else None
        self.cpu_q25_s, self.cpu_q75_s = t.get("q25_s"), t.get("q75_s")
        self.cpu_baseline = baseline.describe(numpy, at=at) if baseline is not None and self.cpu_s else ""

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "bounds"}
        d.update(speedup=self.speedup, speedup_with_transfers=self.speedup_with_transfers)
        for name, r in (("speedup", self.speedup_range), ("speedup_with_transfers", self.speedup_with_transfers_range)):
            d[f"{name}_low"], d[f"{name}_high"] = r if r is not None else (None, None)
        return d


def model_inputs(counts, gpu, *, block_size: int = BLOCK_SIZE, launches: float | None = None,
                 host_timer: float = 0.0):
    """The GPU-time model's input row of one region on one GPU (a preset name or a
    :class:`gpu_models.simt.config.GPUConfig`), and the region's bounds there: ``(row, bounds)``.

    ``counts``: the region's work and features in one mapping (``{**WorkSink result, **feature series}``,
    feature names without a prefix); ``launches``: kernel launches when they differ from the trace's
    (a measured port's barrier phases are one launch); ``host_timer``: 1 for a time taken by a host timer
    around the launch. The row holds the per-launch estimates (``term_<name>``), the lower bound
    (``bound_s``), the launches, the rate features and ``host_timer``: the same assembly for training
    (``portcast.gputime_training``) and for every prediction. Returns ``(None, None)`` when the counts lack
    what the bounds need (:data:`gpu_models.bounds.REQUIRED`)."""
    from gpu_models.bounds import REQUIRED, bounds
    from gpu_models.simt.config import load_config
    from predictor.bounded import FACTOR_RATES, TERM_NAMES

    c = {k: float(v) for k, v in counts.items() if isinstance(v, (int, float, np.integer, np.floating))
         and np.isfinite(v)}
    if any(k not in c for k in REQUIRED):
        return None, None
    if launches is not None:
        c["launches"] = float(launches)
    cfg = load_config(gpu) if isinstance(gpu, str) else gpu
    # the mix is the kernel's own (records inside threads) where the work counts give it: the host code around
    # the launches neither dilutes it nor makes it drift with the input size
    R = c.get("thread_records", 0.0)
    if R > 0 and all(k in c for k in ("thread_mem", "thread_ctrl", "thread_fp", "thread_fp64")):
        c["mem"], c["ctrl"], c["fp"] = c["thread_mem"] / R, c["thread_ctrl"] / R, c["thread_fp"] / R
        c["fp64"] = c["thread_fp64"] / c["thread_fp"] if c["thread_fp"] > 0 else 0.0
    b = bounds(c, cfg, block_size=int(block_size))
    # how much slower the GPU runs double precision: log2 of its FP32:FP64 lane ratio (0 where the description
    # gives no FP64 lanes: it runs FP64 at the FP32 rate), weighted by the FP64 share of the floating point
    fp64_lanes = float(cfg.lanes.get("fp64", cfg.lanes["fp"]))
    c["fp64_slowdown"] = c.get("fp64", 0.0) * max(0.0, math.log2(cfg.lanes["fp"] / fp64_lanes))
    row = {f"term_{t}": float(b.terms[t]) for t in TERM_NAMES}
    row.update(bound_s=float(b.total_lower), launches=float(b.launches), host_timer=float(host_timer))
    row.update({r: float(c.get(r, 0.0)) for r in FACTOR_RATES})
    return row, b


def load_default_model(path: Path | None = None):
    from predictor.gputime import DEFAULT_GPUTIME_MODEL, load_gputime_model

    return load_gputime_model(path or DEFAULT_GPUTIME_MODEL)


def predict_region(model, gpu, work: dict, series: pd.Series, bytes_rw: dict, simulated_s: float, *,
                   cpu_s: float | None, model_file: str = "") -> GpuPrediction:
    """The prediction for one region: ``work`` (:class:`WorkSink` result), ``series`` (the feature engine's
    features), ``bytes_rw`` (:class:`BytesSink` result), ``simulated_s`` (:class:`SimtSink` result, NaN if
    none), ``cpu_s`` (the uninstrumented CPU time, None when not measured)."""
    from gpu_models.bounds import transfer_seconds
    from gpu_models.simt.config import load_config
    from portcast.gputime_training import gpu_columns
    from predictor.gputime import RATE_FEATURES

    cfg = load_config(gpu) if isinstance(gpu, str) else gpu  # a preset name or a GPUConfig
    gpu = cfg.name
    sim = float(simulated_s)
    explanation, b = None, None
    if getattr(model, "family", "") == "bounded":
        row, b = model_inputs({**series.to_dict(), **work}, cfg)
        if row is None:
            from gpu_models.bounds import REQUIRED

            missing = [k for k in REQUIRED if k not in work and k not in series.index]
            raise ValueError(f"the region's features lack {', '.join(missing)}: no GPU time can be predicted")
        frame = pd.DataFrame([row])
        kernel = float(model.predict(frame)[0])
        explanation = model.explain(frame)
    else:
        row = {**{k: float(work[k]) for k in work}, "block_size": float(BLOCK_SIZE),
               **{k: float(series.get(k, np.nan)) for k in RATE_FEATURES}, **gpu_columns(cfg),
               "simulated_s": sim, "host_timer": 0.0}
        frame = pd.DataFrame([row])
        kernel = float(model.predict(frame, gpu=[gpu])[0])
    meta = model.metadata or {}
    trained_gens = set(meta.get("generations", []))
    gen = cfg.generation or "unknown"
    return GpuPrediction(
        gpu=gpu, gpu_name=cfg.description.split(" (")[0] if cfg.description else gpu, generation=gen,
        extrapolated=gen not in trained_gens, kernel_s=kernel,
        transfer_s=float(transfer_seconds(bytes_rw["read_bytes"], bytes_rw["written_bytes"], cfg)),
        read_bytes=round(bytes_rw["read_bytes"]), written_bytes=round(bytes_rw["written_bytes"]), cpu_s=cpu_s,
        simulated_s=None if not np.isfinite(sim) else float(sim), out_of_range=model.out_of_range(frame),
        model_file=model_file, trained_on=str(meta.get("trained_on", "")), inputs=row, uses_simt=model.needs_simt,
        explanation=explanation, bounds=b)


def format_time(s: float | None) -> str:
    """A time as the prediction lines print it (``"18.4 us"``, ``"2.345 ms"``; ``"-"`` for None); the HTML
    report prints its times the same way."""
    if s is None:
        return "-"
    return f"{s * 1e6:.3g} us" if s < 1e-3 else f"{s * 1e3:.4g} ms" if s < 1 else f"{s:.4g} s"


def describe(p: GpuPrediction) -> dict[str, Any]:
    """Short strings for printing: the target, the times and speedups."""
    t = format_time
    return {"gpu": f"{p.gpu_name} ({p.gpu}, {p.generation})", "kernel": t(p.kernel_s), "transfer": t(p.transfer_s),
            "cpu": t(p.cpu_s)}


def _bytes(n: int) -> str:
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{n} B"


def speedup_number(v: float) -> str:
    """A speedup factor: three significant digits (``5.13``, ``0.191``), whole numbers from 1,000 (``1,040``)."""
    text = f"{v:.3g}"
    return f"{v:,.0f}" if "e+" in text else text


def speedup_text(value: float, interval: tuple[float, float] | None = None) -> str:
    """``5.1x (4.8-5.4)``: a speedup and, when known, its interval from the CPU time's quartiles."""
    span = f" ({speedup_number(interval[0])}-{speedup_number(interval[1])})" if interval is not None else ""
    return f"{speedup_number(value)}x{span}"


def print_gpu_prediction(console, label: str, p: GpuPrediction, *, cpu_how: str = "", cpu_why: str = "") -> None:
    """Print one region's predicted GPU time, its speedups and what the prediction rests on. ``cpu_how``: what
    was timed on the CPU when ``p.cpu_baseline`` does not say; ``cpu_why``: why there is no CPU time."""
    from portcast.safe_text import escape

    d = describe(p)
    console.print(f"[bold]GPU time of {escape(label)}[/] on {escape(d['gpu'])}: predicted kernel time "
                  f"[bold]{d['kernel']}[/]", highlight=False, soft_wrap=True)
    if p.cpu_s:
        cpu_how = p.cpu_baseline or cpu_how
        how = f" ({cpu_how})" if cpu_how else ""
        console.print(f"  CPU time of the region here{escape(how)}: {d['cpu']} -> "
                      f"[bold]speedup {speedup_text(p.speedup, p.speedup_range)}[/]", highlight=False, soft_wrap=True)
        with_copies = speedup_text(p.speedup_with_transfers, p.speedup_with_transfers_range)
        console.print(f"  with the copies over the host link ({_bytes(p.read_bytes)} in, {_bytes(p.written_bytes)} "
                      f"out: {d['transfer']}): speedup {with_copies}", highlight=False, soft_wrap=True)
    else:
        console.print(f"  no speedup: the region's CPU time was not measured ({escape(cpu_why or 'not asked for')}); "
                      f"copies over the host link would take {d['transfer']} ({_bytes(p.read_bytes)} in, "
                      f"{_bytes(p.written_bytes)} out)", highlight=False, soft_wrap=True)
    notes = []
    if p.extrapolated:
        notes.append(f"no GPU of the {p.generation} generation has measured points: the prediction for it is "
                     "extrapolated from older generations")
    if p.out_of_range:
        notes.append(f"outside the training range in {', '.join(p.out_of_range)}: treat the time as a rough guide")
    if p.simulated_s is None and p.uses_simt:
        notes.append("the SIMT model's estimate was not available (incomplete region or sample too large)")
    for n in notes:
        console.print(f"  [yellow]note:[/] {escape(n)}", highlight=False, soft_wrap=True)


def print_model_line(console, p: GpuPrediction, bounds=None) -> None:
    """How the prediction stands to the largest physical bound, and what it rests on: the model file and the
    measured data it was trained on."""
    from portcast.safe_text import escape

    e = p.explanation
    if e is not None:
        from portcast.bounds_report import format_seconds as fs

        launches = f"{e['launches']:g} launches x " if e["launches"] != 1 else ""
        how = (f"  how: {launches}({fs(e['launch_s'])} per launch + factor {e['factor']:.3g} x the {e['term']} "
               f"estimate {fs(e['term_s'])}) = {fs(e['estimate_s'])}")
        if e["floor_decides"]:
            how += f"; below the lower bound {fs(e['bound_s'])}, which is the prediction"
        console.print(escape(how), highlight=False, soft_wrap=True)
    if bounds is not None and bounds.total_lower > 0 and e is not None:
        r = p.kernel_s / bounds.total_lower
        console.print(f"  the predicted time is {r:.3g}x the largest bound ({bounds.bound}); the model never predicts "
                      "less (docs/gputime.md)", highlight=False, soft_wrap=True)
    elif bounds is not None and bounds.total_lower > 0:
        r = p.kernel_s / bounds.total_lower
        how = ("above it: the measured kernels of this shape ran that far above their bounds (latencies, "
               "scheduling and launch costs the bounds do not count)") if r >= 1 else \
              "below it: the model is off here, read the bound as the better figure"
        console.print(f"  the predicted time is {r:.3g}x the largest bound ({bounds.bound}); {how}",
                      highlight=False, soft_wrap=True)

    console.print(f"  model: {escape(p.model_file)}; trained on {escape(p.trained_on)} (docs/gputime.md gives its "
                  "held-out errors)", highlight=False, soft_wrap=True, style="dim")


def region_bounds(p: GpuPrediction, series: pd.Series):
    """The physical lower bounds of the region's time on the prediction's GPU (:func:`gpu_models.bounds.bounds`)
    from the same work counts and features the prediction used."""
    from gpu_models.bounds import OPTIONAL, REQUIRED, bounds
    from gpu_models.simt.config import load_config

    if p.bounds is not None:
        return p.bounds
    counts = {}
    for k in (*REQUIRED, *OPTIONAL):
        if k in p.inputs:
            counts[k] = p.inputs[k]
        elif k in series.index:
            counts[k] = float(series[k])
    missing = [k for k in REQUIRED if k not in counts]
    if missing:
        return None
    return bounds(counts, load_config(p.gpu), block_size=BLOCK_SIZE)


def predict_function(fn, args: tuple, *, gpu: str = DEFAULT_GPU, model_path: Path | None = None,
                     measure_cpu: bool = True, mode: str = "auto", baseline_kind: str = "as-written",
                     baseline_rule=None) -> tuple[GpuPrediction, Any]:
    """Trace ``fn(*args)`` once and predict its GPU kernel time on ``gpu`` (the Python face of
    ``portcast profile --function``, through the same pipeline: :func:`portcast.pipeline.predict`):
    ``(prediction, bounds)``, the bounds being :func:`gpu_models.bounds.bounds` of the same work (None when the
    features lack a count they need). ``measure_cpu``: also time uninstrumented runs for the speedup
    (``baseline_kind``, ``baseline_rule``: :func:`profiler.baseline.measure_uninstrumented`'s ``kind`` and
    ``rule``). ``model_path`` must be a GPU-time model file. Raises ValueError for a region that gets no
    prediction (no parallel thread space: ``portcast.report.no_prediction_reason``)."""
    from portcast.pipeline import predict

    preds = predict(fn, args, gpu=gpu, model=None if model_path is None else str(model_path), mode=mode,
                    baseline=measure_cpu, baseline_kind=baseline_kind, baseline_rule=baseline_rule)
    rp = preds[-1]
    if rp.model_kind != "gputime":
        raise ValueError(f"{model_path}: not a GPU-time model (portcast gpu-time train); predict_function "
                         "predicts a GPU time")
    if rp.prediction is None:
        raise ValueError(f"{rp.label.split(' #')[0]}: no GPU time predicted: {rp.reason}")
    return rp.prediction, rp.bounds
