"""The prepare stage of the profile pipeline: options -> the sinks a run sends each region's trace to, the model
and the GPU.

:func:`prepare` builds them (the op-class counter :class:`SummarySink`, the hot lines :class:`HotLinesSink`,
optional trace files, the feature engine and, for a model that reads them, the work, byte and SIMT sinks of
:func:`prediction_sinks`; under a sample plan a :class:`features.sample_estimator.SampleEstimator` last) into a
:class:`ProfileSetup`; :func:`resolve_model` reads ``--model`` into a
:class:`predictor.region_predictor.RegionPredictor` and :func:`check_gpu` the target GPU, both before anything
runs.
"""

from __future__ import annotations

import dataclasses
import linecache
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from portcast.defaults import DEFAULT_GPU
from portcast.errors import UserError

#: source lines a report lists per region, by records
HOT_LINES = 12


class SummarySink:
    """Counts records per operation class for each region invocation (for the summary table)."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []  # (RegionInfo, counts per op class)
        self._counts = None

    def start_region(self, info, static) -> None:
        from core.trace_schema import N_OPS

        self._counts = np.zeros(N_OPS, np.int64)

    def consume(self, chunk) -> None:
        from features.mix import count_ops

        count_ops(chunk, self._counts)

    def end_region(self, info, static) -> None:
        self.rows.append((info, self._counts))
        self._counts = None


class HotLinesSink:
    """Records per source line of each region invocation: ``results`` gets, per region, a list of
    ``{"location", "line", "text", "records", "share"}`` for its :data:`HOT_LINES` busiest lines."""

    def __init__(self, top: int = HOT_LINES) -> None:
        self.top = top
        self.results: list[list[dict]] = []
        self._counts = np.zeros(0, np.int64)

    def start_region(self, info, static) -> None:
        self._counts = np.zeros(0, np.int64)

    def consume(self, chunk) -> None:
        if not len(chunk):
            return
        c = np.bincount(chunk.pc.astype(np.int64))
        if len(c) > len(self._counts):
            c[:len(self._counts)] += self._counts
            self._counts = c
        else:
            self._counts[:len(c)] += c

    def end_region(self, info, static) -> None:
        self.results.append(self.lines(self._counts, static))

    def lines(self, counts: np.ndarray, static) -> list[dict]:
        """The busiest source lines of a region from its records per pc ``counts``."""
        total = int(counts.sum())
        per_line: dict[tuple, int] = {}
        for pc in np.nonzero(counts)[0]:
            e = static.get(int(pc))
            key = (e.file, int(e.line)) if e is not None else (f"pc {int(pc)}", 0)
            per_line[key] = per_line.get(key, 0) + int(counts[pc])
        rows = []
        for (file, line), n in sorted(per_line.items(), key=lambda kv: -kv[1])[:self.top]:
            text = linecache.getline(file, line).strip() if line else ""
            rows.append({"location": f"{file}:{line}" if line else file, "file": file, "line": line, "text": text,
                         "records": n, "share": n / total if total else 0.0})
        return rows


@dataclasses.dataclass
class ProfileSetup:
    """The sinks of one profile run and what the results are read from after it."""

    sinks: list
    summary: SummarySink
    hot: HotLinesSink
    chosen: Any  # the predictor.region_predictor.RegionPredictor of resolve_model; None without features
    gpu: str
    psinks: Any = None  # PredictionSinks, for a model that reads the work counts
    trace_sink: Any = None
    sample: Any = None  # what run_traced samples by: None (exact), "auto" or a profiler.sampling.SamplePlan
    estimator: Any = None  # features.sample_estimator.SampleEstimator of a sampled run (the last sink)

    @property
    def features(self):
        """The feature engine's sink, or None."""
        from features import FeatureSink

        return next((s for s in self.sinks if isinstance(s, FeatureSink)), None)

    def written(self) -> list:
        """The trace files written so far."""
        return [p for s in self.sinks for p in getattr(s, "written", [])]

    @property
    def trace_failure(self):
        """The :class:`profiler.tracefile.TraceWriteError` that stopped the traces of this run, or None."""
        return getattr(self.trace_sink, "failure", None)

    def close(self) -> None:
        """Release the trace folder this run claimed (:meth:`profiler.tracefile.TraceDirectorySink.close`)."""
        if self.trace_sink is not None:
            self.trace_sink.close()


@dataclasses.dataclass
class PredictionSinks:
    """The sinks a GPU-time prediction needs, one set per profile run: the work counts
    (:class:`features.work.WorkSink`), the bytes read and written (:class:`features.work.BytesSink`) and the SIMT
    sample (:class:`gpu_models.simt.slice_sample.SimtSink`, None when the model reads no SIMT estimate)."""

    gpu: str
    work: Any
    bytes: Any
    simt: Any = None

    @property
    def sinks(self) -> list:
        return [s for s in (self.work, self.bytes, self.simt) if s is not None]


def prediction_sinks(gpu: str, simulate: bool = True) -> PredictionSinks:
    """Sinks for :func:`predictor.gputime_region.predict_region` on preset ``gpu`` (``simulate``: keep the records
    the SIMT model needs, a sample of two waves on a 4-SM slice, bounded in memory)."""
    from features.work import BytesSink, WorkSink
    from gpu_models.simt.slice_sample import SimtSink

    return PredictionSinks(gpu, WorkSink(), BytesSink(), SimtSink(gpu) if simulate else None)


def sample_option(sample) -> Any:
    """What ``sample`` (``--sample``, ``sample=``) asks for: None for the exact trace (``None``, ``"exact"``),
    ``"auto"``, or a :class:`profiler.sampling.SamplePlan` (a plan, or a block rate in (0, 1] as a number or
    text); a :class:`UserError` saying what is wrong otherwise."""
    from profiler.sampling import SamplePlan

    if sample is None or sample == "exact":
        return None
    if isinstance(sample, SamplePlan) or sample == "auto":
        return sample
    try:
        rate = float(sample)
    except (TypeError, ValueError):
        raise UserError(f"--sample {sample!r}: give auto, exact, or a block rate in (0, 1] such as 0.01") from None
    if not 0.0 < rate <= 1.0:
        raise UserError(f"--sample {sample!r}: a block rate must be in (0, 1], e.g. 0.01 for 1% of the thread blocks")
    return SamplePlan.at_rate(rate)


def prepare(*, trace_dir: Optional[Path] = None, features: bool = True, model=None,
            gpu: str = DEFAULT_GPU, replace: bool = False, progress=None,
            notify: Callable[[str], None] | None = None, sample=None) -> ProfileSetup:
    """The sinks of a profile run: op-class summary, hot lines, ``progress`` (a sink, optional), Parquet traces
    under ``trace_dir`` (a folder of an earlier run, or one another run is writing to: this run's go to
    ``run-<k>`` inside it, said through ``notify``, unless ``replace``; a trace that cannot be written stops
    the traces, not the run: ``ProfileSetup.trace_failure``), the feature engine and the GPU-time model's sinks
    (``features``).
    ``model``: None (the shipped GPU-time model), ``"provisional"``, a model file (:func:`resolve_model`) or a
    :class:`predictor.region_predictor.RegionPredictor` already resolved. Bad model files and GPU
    names raise :class:`UserError` here, before anything runs. ``sample`` (:func:`sample_option`): under a
    sample plan the run's last sink is a :class:`features.sample_estimator.SampleEstimator`, which replaces what
    the others gathered from the sampled records by the whole region's estimates."""
    from predictor.region_predictor import RegionPredictor

    plan = sample_option(sample)
    chosen = (model if isinstance(model, RegionPredictor) else resolve_model(model)) if features else None
    if features:
        check_gpu(gpu)
    summary, hot = SummarySink(), HotLinesSink()
    sinks: list = [summary, hot]
    if progress is not None:
        sinks.append(progress)
    tsink = None
    if trace_dir is not None:
        from profiler.tracefile import TraceDirectorySink

        tsink = TraceDirectorySink(trace_dir, replace=replace, keep_going=True)
        if tsink.redirected and notify is not None:
            notify(f"another run is writing to {trace_dir}: this run's traces go to {tsink.folder}"
                   if tsink.redirect_reason == "busy" else
                   f"{trace_dir} holds traces of an earlier run: this run's go to {tsink.folder} "
                   "(--force replaces them instead)")
        sinks.append(tsink)
    psinks = None
    if features:
        from features import FeatureSink

        sinks.append(FeatureSink())
        if chosen.needs_counts:
            psinks = prediction_sinks(gpu, simulate=chosen.needs_simt)
            sinks.extend(psinks.sinks)
    estimator = None
    if plan is not None:
        from features.sample_estimator import SampleEstimator

        fsink = next((s for s in sinks if type(s).__name__ == "FeatureSink"), None)
        estimator = SampleEstimator(fsink, psinks.work if psinks else None, psinks.bytes if psinks else None,
                                    summary, hot, replicate=fsink is not None)
        sinks.append(estimator)
    return ProfileSetup(sinks, summary, hot, chosen, gpu, psinks, tsink, plan, estimator)


def resolve_model(model: Optional[str]):
    """The :class:`predictor.region_predictor.RegionPredictor` of ``--model``: the shipped GPU-time model (None),
    the provisional speedup model trained on simulated GPU times (``provisional``), or a file of either kind
    (told apart by its format). The provisional model is used only when asked for: a missing shipped model is
    a :class:`UserError`."""
    import predictor.gputime as gputime_module
    import predictor.model_io as model_io
    from core.jsonfile import JsonFileError, read_json
    from portcast.report import provisional_line
    from predictor import ModelFileError, load_model
    from predictor.gputime import FORMAT, GpuTimeModelError, load_gputime_model
    from predictor.region_predictor import GpuTimePredictor, XappPredictor

    def xapp(path):
        m = load_model(path)
        return XappPredictor(path, m, provisional_line(m))

    try:
        if model is None:
            path = gputime_module.DEFAULT_GPUTIME_MODEL
            if not path.is_file():  # never the older model in its place: that one is asked for by name
                raise UserError(f"the shipped GPU-time model {path} is missing from this installation; give a "
                                "model file with --model (portcast gpu-time train), or --model provisional for "
                                "the older speedup model")
            return GpuTimePredictor(path, load_gputime_model(path))
        if model == "provisional":
            if not model_io.DEFAULT_MODEL_FILE.is_file():
                raise UserError("--model provisional: the provisional speedup model is not shipped with this checkout")
            return xapp(model_io.DEFAULT_MODEL_FILE)
        path = Path(model)
        if not path.is_file():
            raise UserError(f"--model {model}: no such file (give a model file, or 'provisional')")
        doc = read_json(path, what="Portcast model file")
        fmt = doc.get("format") if isinstance(doc, dict) else None
        if fmt == FORMAT:
            return GpuTimePredictor(path, load_gputime_model(path))
        return xapp(path)
    except (JsonFileError, ModelFileError, GpuTimeModelError) as exc:
        raise UserError(str(exc)) from None


def check_gpu(gpu: str) -> None:
    """A :class:`UserError` listing the described GPUs when ``gpu`` is not one of them."""
    from gpu_models.simt.config import ConfigError, load_config, preset_names

    try:
        load_config(gpu)
    except ConfigError as exc:
        if gpu.endswith(".json") or Path(gpu).exists():  # a description file: what is wrong with it, and where
            raise UserError(f"--gpu {gpu}: {exc}" if not str(exc).startswith(gpu) else str(exc)) from None
        raise UserError(f"--gpu {gpu!r}: not a described GPU; choose one of {', '.join(preset_names())}") from None
    except (FileNotFoundError, ValueError):
        raise UserError(f"--gpu {gpu!r}: not a described GPU; choose one of {', '.join(preset_names())}") from None
