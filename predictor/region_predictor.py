"""What the profile pipeline asks of a model that predicts a region: the :class:`RegionPredictor` interface, and
its two implementations, :class:`GpuTimePredictor` (the GPU-time model, :mod:`predictor.gputime`: a kernel time on
a named GPU, its bounds and term contributions) and :class:`XappPredictor` (an XAPP speedup model,
:mod:`predictor.model_io`: a speedup on the GPU its training times came from).

The pipeline (``portcast/pipeline/``) chooses its behaviour through this interface only: which sinks a run needs
(:attr:`~RegionPredictor.needs_counts`, :attr:`~RegionPredictor.needs_simt`), the target every output names
(:meth:`~RegionPredictor.target`), one region's prediction as the fields of the pipeline's ``RegionPrediction``
(:meth:`~RegionPredictor.predict`) and the time of a sampled region's replicate
(:meth:`~RegionPredictor.replicate_time`). :attr:`~RegionPredictor.kind` is the tag the report's JSON keeps
(``"gputime"`` or ``"xapp"``); nothing chooses by it.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import Any, Optional


class RegionPredictor(abc.ABC):
    """A loaded model, read from ``path``, that predicts one profiled region at a time."""

    #: the tag of the model's kind in a report's JSON (``model_kind``)
    kind: str = ""
    #: whether the model predicts a kernel time (with bounds and the copies), rather than a speedup alone
    predicts_time: bool = False

    def __init__(self, path: Path | None, model: Any) -> None:
        self.path, self.model = path, model

    @property
    def needs_counts(self) -> bool:
        """Whether a run must gather the region's work counts and bytes (``features.work`` sinks)."""
        return False

    @property
    def needs_simt(self) -> bool:
        """Whether the model reads the SIMT model's estimate of the region (a run then keeps a sample for it)."""
        return False

    @property
    def metadata(self) -> dict:
        """The model's metadata (what it was trained on, its GPU, ...)."""
        return getattr(self.model, "metadata", None) or getattr(self.model, "metadata_", None) or {}

    @property
    def trained_on(self) -> str | None:
        """What the model was trained on, as its metadata says (None when it does not say)."""
        return str(self.metadata.get("trained_on", "")) or None

    @abc.abstractmethod
    def target(self, gpu: str) -> tuple[str, str]:
        """``(preset, label)`` of what the model predicts for when the user asks for ``gpu``."""

    def model_label(self, target_label: str) -> str:
        """What every line printed for the model's prediction starts with (empty: nothing)."""
        return ""

    @abc.abstractmethod
    def predict(self, gpu: str, series, *, work: dict | None = None, bytes_rw: dict | None = None,
                simulated_s: float = float("nan"), cpu_s: Optional[float] = None, cpu_baseline=None,
                cpu_numpy: bool = False, cpu_at: str = "") -> dict:
        """One region's prediction as the fields of the pipeline's ``RegionPrediction`` to set (``prediction``,
        ``bounds``, ``contributions``, ``model``, ``model_file``, ``speedup_model``), or ``{"reason": ...}`` when
        the region gets none. ``series``: its features; ``work``, ``bytes_rw``, ``simulated_s``: what the
        sinks of :attr:`needs_counts` and :attr:`needs_simt` gathered; ``cpu_*``: the CPU side of the speedup."""

    def replicate_time(self, gpu: str, series, work: dict, bytes_rw: dict, cpu_s: Optional[float]):
        """``(kernel_s, transfer_s)`` of a sampled region's replicate (its own estimates of the counts), None
        when the model predicts no time or the replicate gets none."""
        return None


class GpuTimePredictor(RegionPredictor):
    """The GPU-time model (:class:`predictor.gputime.GpuTimeModel` or :class:`predictor.bounded.BoundedTimeModel`)
    behind :class:`RegionPredictor`: a kernel time on the target GPU, the speedup against the CPU time, the
    region's bounds and the model's term contributions (:mod:`predictor.gputime_region`)."""

    kind = "gputime"
    predicts_time = True

    @property
    def needs_counts(self) -> bool:
        return True

    @property
    def needs_simt(self) -> bool:
        return bool(self.model.needs_simt)

    def target(self, gpu: str) -> tuple[str, str]:
        """The preset ``gpu`` and its description's name, preset and generation."""
        from gpu_models.simt.config import load_config

        cfg = load_config(gpu)
        name = cfg.description.split(" (")[0] if cfg.description else gpu
        return gpu, f"{name} ({gpu}, {cfg.generation or 'unknown'})"

    def predict(self, gpu: str, series, *, work: dict | None = None, bytes_rw: dict | None = None,
                simulated_s: float = float("nan"), cpu_s: Optional[float] = None, cpu_baseline=None,
                cpu_numpy: bool = False, cpu_at: str = "") -> dict:
        from predictor.gputime_region import predict_region, region_bounds

        if work is None or bytes_rw is None:
            return {"reason": "the region's work counts were not gathered (a run without the prediction's sinks)"}
        if self.model.needs_simt and not simulated_s == simulated_s:
            return {"reason": f"the model {self.path} needs the SIMT model's estimate, which this region does not "
                              "have (too large for its sample, or a size that was not traced); the shipped model "
                              "needs none"}
        p = predict_region(self.model, gpu, work, series, bytes_rw, simulated_s, cpu_s=cpu_s,
                           model_file=str(self.path))
        if cpu_baseline is not None:
            p.set_cpu(cpu_baseline, cpu_numpy, at=cpu_at)
        return {"prediction": p, "model": self.model, "model_file": str(self.path),
                "bounds": region_bounds(p, series), "contributions": self.contributions(p)}

    def contributions(self, p):
        """The model's term contributions to the log time of prediction ``p`` with each input's training range
        (None for a family without them)."""
        import numpy as np
        import pandas as pd

        model = self.model
        if model.family not in ("gbm", "gbm-residual", "bounded"):
            return None
        c = model.contributions(pd.DataFrame([p.inputs]))
        c["training_min"] = [model.training_ranges.get(k, [np.nan, np.nan])[0] for k in c["column"]]
        c["training_max"] = [model.training_ranges.get(k, [np.nan, np.nan])[1] for k in c["column"]]
        return c

    def replicate_time(self, gpu: str, series, work: dict, bytes_rw: dict, cpu_s: Optional[float]):
        from predictor.gputime_region import predict_region

        try:
            q = predict_region(self.model, gpu, work, series, bytes_rw, float("nan"), cpu_s=cpu_s)
        except ValueError:
            return None
        return q.kernel_s, q.transfer_s


class XappPredictor(RegionPredictor):
    """An XAPP speedup model (:mod:`predictor.model_io`) behind :class:`RegionPredictor`: the speedup on the GPU
    its training times came from, explained term by term (:func:`predictor.explain_prediction`); no kernel
    time, no bounds. ``provisional``: the line that labels a provisional model (None for another)."""

    kind = "xapp"

    def __init__(self, path: Path | None, model: Any, provisional: str | None = None) -> None:
        super().__init__(path, model)
        self.provisional = provisional

    def target(self, gpu: str) -> tuple[str, str]:
        """The model's own GPU (its metadata's preset) and the label of every line printed for it."""
        meta = getattr(self.model, "metadata_", None) or {}
        return str(meta.get("gpu_preset") or ""), self.label()

    def model_label(self, target_label: str) -> str:
        return target_label

    def label(self) -> str:
        """What every line printed for the model's prediction starts with."""
        from predictor.model_io import is_provisional

        meta = getattr(self.model, "metadata_", None) or {}
        if is_provisional(self.model):
            preset = meta.get("gpu_preset")
            simulated = str(meta.get("gpu_times") or "").startswith("simulated")
            what = (f"simulated {str(preset).upper()}" if preset and simulated else
                    "simulated GPU times" if simulated else str(meta.get("gpu_times") or "not GPU measurements"))
            return f"provisional model ({what})"
        platform = meta.get("platform")
        return f"speedup model {Path(str(self.path)).name}" + (f" ({platform})" if platform else "")

    def predict(self, gpu: str, series, *, work: dict | None = None, bytes_rw: dict | None = None,
                simulated_s: float = float("nan"), cpu_s: Optional[float] = None, cpu_baseline=None,
                cpu_numpy: bool = False, cpu_at: str = "") -> dict:
        from predictor import explain_prediction

        model = self.model
        missing = [f for f in model.subset_ if f not in series.index]
        if missing:
            return {"reason": f"the model needs feature(s) {', '.join(missing)}, which were not computed"}
        expl = explain_prediction(model, series[list(model.subset_)].astype(float).to_dict())
        meta = model.metadata_ or {}
        return {"speedup_model": {"predicted_speedup": float(expl.attrs["prediction"]), "model_file": str(self.path),
                                  "label": self.label(), "platform": meta.get("platform"),
                                  "provisional": self.provisional, "explanation": expl}}
