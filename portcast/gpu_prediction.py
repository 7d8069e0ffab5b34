"""A profiled region's predicted kernel time on a named GPU, its speedup against the region's own CPU time,
and the host<->device transfers: the GPU-time model (:mod:`predictor.gputime`) fed from the trace.

``portcast profile`` adds :func:`prediction_sinks` to the region's sinks; after the run, :func:`predict_region`
joins the region's work counts, features, bytes read and written and the SIMT model's estimate on the target
GPU into one row of the model's inputs and returns the prediction (:class:`GpuPrediction`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from portcast.measured_ports import ThreadRecordsSink, WorkSink, merge_intervals, sample_threads
from profiler.trace import Op

#: threads per block assumed for a region (the launch a port would most likely use)
BLOCK_SIZE = 256
#: the default target: the newest GPU with measured points in the model's training data
DEFAULT_GPU = "p100"
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

    @property
    def speedup(self) -> float | None:
        """CPU time / predicted kernel time."""
        return None if not self.cpu_s else self.cpu_s / self.kernel_s

    @property
    def speedup_with_transfers(self) -> float | None:
        """CPU time / (predicted kernel time + copies of the inputs in and the outputs out)."""
        return None if not self.cpu_s else self.cpu_s / (self.kernel_s + self.transfer_s)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(speedup=self.speedup, speedup_with_transfers=self.speedup_with_transfers)
        return d


def load_default_model(path: Path | None = None):
    from predictor.gputime import DEFAULT_GPUTIME_MODEL, load_gputime_model

    return load_gputime_model(path or DEFAULT_GPUTIME_MODEL)


def predict_region(model, gpu: str, work: dict, series: pd.Series, bytes_rw: dict, simulated_s: float, *,
                   cpu_s: float | None, model_file: str = "") -> GpuPrediction:
    """The prediction for one region: ``work`` (:class:`WorkSink` result), ``series`` (the feature engine's
    features), ``bytes_rw`` (:class:`BytesSink` result), ``simulated_s`` (:class:`SimtSink` result, NaN if
    none), ``cpu_s`` (the uninstrumented CPU time, None when not measured)."""
    from gpu_models.bounds import transfer_seconds
    from gpu_models.simt.config import load_config
    from portcast.gputime_training import GENERATIONS, gpu_columns
    from predictor.gputime import RATE_FEATURES

    cfg = load_config(gpu)
    sim = float(simulated_s)
    row = {**{k: float(work[k]) for k in work}, "block_size": float(BLOCK_SIZE),
           **{k: float(series.get(k, np.nan)) for k in RATE_FEATURES}, **gpu_columns(gpu),
           "simulated_s": sim, "host_timer": 0.0}
    frame = pd.DataFrame([row])
    kernel = float(model.predict(frame, gpu=[gpu])[0])
    meta = model.metadata or {}
    trained_gens = set(meta.get("generations", []))
    gen = GENERATIONS.get(gpu, "unknown")
    return GpuPrediction(
        gpu=gpu, gpu_name=cfg.description.split(" (")[0] if cfg.description else gpu, generation=gen,
        extrapolated=gen not in trained_gens, kernel_s=kernel,
        transfer_s=float(transfer_seconds(bytes_rw["read_bytes"], bytes_rw["written_bytes"], cfg)),
        read_bytes=round(bytes_rw["read_bytes"]), written_bytes=round(bytes_rw["written_bytes"]), cpu_s=cpu_s,
        simulated_s=None if not np.isfinite(sim) else float(sim), out_of_range=model.out_of_range(frame),
        model_file=model_file, trained_on=str(meta.get("trained_on", "")), inputs=row, uses_simt=model.needs_simt)


def describe(p: GpuPrediction) -> dict[str, Any]:
    """Short strings for printing: the target, the times and speedups."""
    def t(s):
        return "-" if s is None else (f"{s * 1e6:.3g} us" if s < 1e-3 else f"{s * 1e3:.4g} ms" if s < 1 else f"{s:.4g} "
                                                                                                             "s")

    return {"gpu": f"{p.gpu_name} ({p.gpu}, {p.generation})", "kernel": t(p.kernel_s), "transfer": t(p.transfer_s),
            "cpu": t(p.cpu_s)}


def _bytes(n: int) -> str:
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{n} B"


def print_gpu_prediction(console, label: str, p: GpuPrediction, *, cpu_how: str = "", cpu_why: str = "") -> None:
    """Print one region's predicted GPU time, its speedups and what the prediction rests on."""
    from rich.markup import escape

    d = describe(p)
    console.print(f"[bold]GPU time of {escape(label)}[/] on {escape(d['gpu'])}: predicted kernel time "
                  f"[bold]{d['kernel']}[/]", highlight=False, soft_wrap=True)
    if p.cpu_s:
        how = f" ({cpu_how})" if cpu_how else ""
        console.print(f"  CPU time of the region here{escape(how)}: {d['cpu']} -> [bold]speedup {p.speedup:.3g}x[/]",
                      highlight=False, soft_wrap=True)
        console.print(f"  with the copies over the host link ({_bytes(p.read_bytes)} in, {_bytes(p.written_bytes)} "
                      "out: "
                      f"{d['transfer']}): speedup {p.speedup_with_transfers:.3g}x", highlight=False, soft_wrap=True)
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
    from rich.markup import escape

    if bounds is not None and bounds.total_lower > 0:
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
                     measure_cpu: bool = True, mode: str = "auto") -> tuple[GpuPrediction, Any]:
    """Trace ``fn(*args)`` once and predict its GPU kernel time on ``gpu`` (the Python face of
    ``portcast profile --function``): ``(prediction, bounds)``, the bounds being
    :func:`gpu_models.bounds.bounds` of the same work (None when the features lack a count they need).
    ``measure_cpu``: also time an uninstrumented run (njit when Numba compiles it) for the speedup.
    Raises ValueError for a region without a parallel thread space (``portcast.report.no_prediction_reason``)."""
    from features import FeatureSink
    from portcast.report import no_prediction_reason
    from predictor.gputime import DEFAULT_GPUTIME_MODEL, load_gputime_model
    from profiler.session import trace_function

    path = Path(model_path) if model_path is not None else DEFAULT_GPUTIME_MODEL
    model = load_gputime_model(path)
    feats = FeatureSink()
    ps = prediction_sinks(gpu, simulate=model.needs_simt)
    result = trace_function(fn, args, sinks=[feats, *ps.sinks], mode=mode, measure_uninstrumented=measure_cpu)
    info, series = feats.results[-1]
    why = no_prediction_reason(series)
    if why is not None:
        raise ValueError(f"{info.name}: no GPU time predicted: {why}")
    sim = ps.simt.results[-1] if ps.simt is not None else float("nan")
    if model.needs_simt and not sim == sim:
        path = DEFAULT_GPUTIME_MODEL.with_name("gputime-nosimt.json")
        model = load_gputime_model(path)
    p = predict_region(model, gpu, ps.work.results[-1], series, ps.bytes.results[-1], sim,
                       cpu_s=result.info.uninstrumented_time_s or None, model_file=str(path))
    return p, region_bounds(p, series)
