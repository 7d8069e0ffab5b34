"""A profiled region's predicted kernel time on a named GPU (:class:`GpuPrediction`), its speedup against the
region's own CPU time and the host<->device transfers: the GPU-time model (:mod:`predictor.gputime`) fed from the
trace. :func:`predict_region` joins the region's work counts (:class:`features.work.WorkSink`), features, bytes
read and written (:class:`features.work.BytesSink`) and the SIMT model's estimate on the target GPU
(:class:`gpu_models.simt.slice_sample.SimtSink`) into the model's input row (:mod:`predictor.gputime_inputs`) and
returns the prediction; :func:`region_bounds` gives the region's lower bounds from the same counts.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpu_models.simt.slice_sample import BLOCK_SIZE


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


def load_default_model(path: Path | None = None):
    """The GPU-time model in ``path`` (default: the shipped one, :data:`predictor.gputime.DEFAULT_GPUTIME_MODEL`)."""
    from predictor.gputime import DEFAULT_GPUTIME_MODEL, load_gputime_model

    return load_gputime_model(path or DEFAULT_GPUTIME_MODEL)


def predict_region(model, gpu, work: dict, series: pd.Series, bytes_rw: dict, simulated_s: float, *,
                   cpu_s: float | None, model_file: str = "") -> GpuPrediction:
    """The prediction for one region: ``work`` (:class:`features.work.WorkSink` result), ``series`` (the feature
    engine's features), ``bytes_rw`` (:class:`features.work.BytesSink` result), ``simulated_s``
    (:class:`gpu_models.simt.slice_sample.SimtSink` result, NaN if none), ``cpu_s`` (the uninstrumented CPU
    time, None when not measured)."""
    from gpu_models.bounds import transfer_seconds
    from gpu_models.simt.config import load_config
    from predictor.gputime_inputs import model_inputs, tree_inputs

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
        row = tree_inputs(work, series, cfg, simulated_s=sim)
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
