"""The result of ``portcast profile`` as one object: what ``--json`` prints, what ``--report out.html`` writes
and what ``portcast.profile(...)`` returns (rendered inline in Jupyter).

A :class:`ProfileReport` holds one :class:`RegionReport` per traced region invocation: its summary (records,
instruction mix, threads, times, completeness, trace files), its busiest source lines, its features (the key
ones with their meaning and the training data's range), the lines behind its weak spots, its GPU thread space,
its library calls, and its GPU-time prediction with the physical bounds and the model's term contributions (or
why no time was predicted). Everything is plain data: :meth:`ProfileReport.to_dict` is JSON as it is
(``format`` ``portcast.profile-report``, ``schema_version`` 2; numbers that are not finite become null).
Version 2: the CPU time is the median of repeated runs of the region as written (``cpu_baseline`` says what was
timed and how well the runs agreed; the prediction carries the speedups' interval); version 1 had the best of
three njit runs.

The HTML page (:meth:`ProfileReport.to_html`) is one self-contained file: inline CSS, the plots as inline SVG
(:mod:`portcast.report_plots`), no script and nothing fetched from the network. It is rendered from the Jinja2
templates in ``portcast/templates/`` with autoescaping, so a user's string (a region name, a file name, a source
line) is text by construction; a notebook cell (``_repr_html_``) shows the same body.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
import math
from pathlib import Path
from typing import Any, Optional

from core.version import portcast_version
from portcast.formatting import format_bytes, format_seconds, format_time, format_value, short_location, speedup_number
from portcast.safe_text import visible

FORMAT = "portcast.profile-report"
SCHEMA_VERSION = 2


def jsonable(x: Any) -> Any:
    """``x`` as JSON-ready data: NumPy scalars and arrays as Python numbers and lists, non-finite floats as
    None, paths as strings, tuples as lists, frames as lists of row dicts."""
    import numpy as np
    import pandas as pd

    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, pd.DataFrame):
        return [jsonable(r) for r in x.to_dict(orient="records")]
    if isinstance(x, pd.Series):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(float(x)) else None
    if isinstance(x, Path):
        return str(x)
    if x is None or isinstance(x, str):
        return x
    return str(x)


@dataclasses.dataclass
class RegionReport:
    """One traced region invocation (see the module docstring). Times in seconds."""

    name: str
    invocation: int
    complete: bool
    error: Optional[str]
    mode: str
    source: str
    records: int
    threads: int
    wall_time_s: Optional[float]
    cpu_time_s: Optional[float]  # the median of the uninstrumented runs
    cpu_how: str  # "python" or "njit": how they ran
    op_counts: dict
    mix: dict
    trace_files: list
    hot_lines: list
    features: dict
    key_features: list
    weak_spots: list
    thread_space: Optional[dict]
    library_calls: list
    prediction: Optional[dict] = None
    bounds: Optional[dict] = None
    contributions: Optional[list] = None
    no_prediction: Optional[str] = None
    notes: list = dataclasses.field(default_factory=list)
    speedup_model: Optional[dict] = None
    cpu_baseline: Optional[dict] = None  # what was timed and how the runs agreed (profiler.baseline.baseline_summary)
    cpu_not_measured: Optional[str] = None  # why there is no CPU time
    #: a sampled region's plan, exact counts and 95% intervals (docs/sampling.md); None when traced exactly
    sample: Optional[dict] = None

    @property
    def label(self) -> str:
        return f"{self.name} #{self.invocation}"


@dataclasses.dataclass
class ProfileReport:
    """Every region of one profile run, the target GPU and model, and how the user's code ended."""

    target: str
    gpu: Optional[str]
    gpu_label: Optional[str]
    model_file: Optional[str]
    model_kind: Optional[str]
    trained_on: Optional[str]
    exit_code: int
    error: Optional[str]
    regions: list
    created: str = dataclasses.field(
        default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    portcast_version: str = dataclasses.field(default_factory=lambda: portcast_version())

    def to_dict(self) -> dict:
        """The report as JSON-ready data (:data:`FORMAT`, :data:`SCHEMA_VERSION`)."""
        d = {"format": FORMAT, "schema_version": SCHEMA_VERSION}
        d.update(jsonable(dataclasses.asdict(self)))
        return d

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any, where: str = "profile report") -> "ProfileReport":
        """The report :meth:`to_dict` gave (a saved ``--json``), to render again: the same :meth:`to_html`. A
        :class:`ReportFormatError` names what is wrong and where (``where``: the file, in messages)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ReportFormatError(f"{where}: not a Portcast profile report (its format is not {FORMAT!r})")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ReportFormatError(f"{where}: schema_version {version!r}; this Portcast reads version "
                                    f"{SCHEMA_VERSION}")
        top = _fields(cls, {k: v for k, v in data.items() if k not in ("format", "schema_version")}, where)
        regions = top.get("regions")
        if not isinstance(regions, list):
            raise ReportFormatError(f"{where}: field 'regions' must be a list")
        top["regions"] = [RegionReport(**_fields(RegionReport, r, f"{where}: regions[{i}]"))
                          for i, r in enumerate(regions)]
        return cls(**top)

    @classmethod
    def read_json(cls, path) -> "ProfileReport":
        """A report saved with ``--json`` (or :meth:`write_json`), read with bounded size and nesting."""
        from core.jsonfile import JsonFileError, read_json

        try:
            doc = read_json(Path(path), what="Portcast profile report")
        except JsonFileError as exc:
            raise ReportFormatError(str(exc)) from None
        return cls.from_dict(doc, where=str(path))

    def write_json(self, path) -> Path:
        from core.atomic import atomic_write_text

        atomic_write_text(Path(path), self.to_json() + "\n")
        return Path(path)

    def to_html(self, full: bool = True) -> str:
        """The report as HTML: a whole page (``full``) or a fragment for a notebook cell."""
        return render_html(self, full=full)

    def write_html(self, path) -> Path:
        """Write the self-contained page (atomically)."""
        from core.atomic import atomic_write_text

        atomic_write_text(Path(path), self.to_html(full=True))
        return Path(path)

    def _repr_html_(self) -> str:  # Jupyter
        return self.to_html(full=False)

    def __repr__(self) -> str:
        parts = []
        for r in self.regions:
            p = r.prediction
            if p:
                s = f", speedup {p['speedup']:.3g}x" if p.get("speedup") else ""
                parts.append(f"{r.label}: {format_time(p['kernel_s'])} on {p['gpu']}{s}")
            else:
                parts.append(f"{r.label}: {r.no_prediction or 'no prediction'}")
        return f"<ProfileReport of {self.target}: " + ("; ".join(parts) or "no region") + ">"


class ReportFormatError(ValueError):
    """A saved profile report that cannot be read back: which file and which field."""


def _fields(cls, data: Any, where: str) -> dict:
    """``data``'s fields of dataclass ``cls``: a :class:`ReportFormatError` for data that is not an object, a
    missing field without a default, or a field ``cls`` does not have."""
    if not isinstance(data, dict):
        raise ReportFormatError(f"{where}: must be an object")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ReportFormatError(f"{where}: unknown field(s) {', '.join(unknown)}")
    missing = sorted(n for n, f in fields.items() if n not in data and f.default is dataclasses.MISSING
                     and f.default_factory is dataclasses.MISSING)
    if missing:
        raise ReportFormatError(f"{where}: missing field(s) {', '.join(missing)}")
    return dict(data)


# ----------------------------------------------------------------------------------------- building ---
def _training_points():
    """The shipped model's training rows (``predictor.gputime_training.training_points``), or None when absent."""
    from predictor.gputime import DEFAULT_TRAINING_POINTS

    if not DEFAULT_TRAINING_POINTS.is_file():
        return None
    from predictor.gputime_training import read_training_points

    return read_training_points(DEFAULT_TRAINING_POINTS)


def region_report(info, counts, *, hot, series=None, explanation=None, thread_space=None, pred=None,
                  trace_files=(), no_baseline: str = "not asked for") -> RegionReport:
    """Gather one region's results (the sinks' outputs and its
    :class:`portcast.pipeline.stage_predict.RegionPrediction`, the same object the terminal prints from);
    ``no_baseline``: why a region that has no CPU time measurement has none."""
    from core.trace_schema import Op
    from features.mix import mix_fractions
    from portcast.report import key_features, no_prediction_reason, weak_spots
    from profiler.baseline import Baseline, baseline_summary, uses_numpy, why_not_measured

    op_counts = {Op(i).name: int(c) for i, c in enumerate(counts)}
    mix = mix_fractions(counts)
    feats = {} if series is None else {str(k): jsonable(v) for k, v in series.items()}
    key = []
    points = _training_points() if series is not None else None
    for k in key_features(series) if series is not None else []:
        lo = hi = None
        col = {"warp_threads": "threads"}.get(k["name"], k["name"])  # the training rows' thread count
        if points is not None and col in points.columns:
            lo, hi = float(points[col].min()), float(points[col].max())
        key.append({**k, "training_min": lo, "training_max": hi})
    weak = weak_spots(series, explanation, pred.bounds if pred is not None else None)
    rep = RegionReport(
        name=info.name, invocation=int(info.invocation), complete=bool(info.complete), error=info.error,
        mode=info.mode, source=info.source, records=int(info.n_records), threads=int(info.n_threads),
        wall_time_s=info.wall_time_s, cpu_time_s=info.uninstrumented_time_s or None,
        cpu_how=str(info.extra.get("uninstrumented_mode", "")), op_counts=op_counts, mix=mix,
        trace_files=list(trace_files), hot_lines=jsonable(hot), features=feats, key_features=jsonable(key),
        weak_spots=weak, thread_space=jsonable(thread_space) if thread_space is not None else None,
        library_calls=jsonable((info.extra or {}).get("library_work") or []))
    base = Baseline.from_info(info)
    rep.cpu_baseline = jsonable(baseline_summary(base, uses_numpy(info)))
    rep.cpu_not_measured = None if rep.cpu_time_s else why_not_measured(info, no_baseline)
    if pred is not None and pred.sample is not None:
        rep.sample = jsonable(pred.sample)
    elif (info.extra or {}).get("sample") is not None:
        rep.sample = jsonable(info.extra["sample"])
    if pred is not None:
        for name, value in prediction_fields(pred, explanation, series).items():
            setattr(rep, name, value)
    elif series is not None:
        rep.no_prediction = no_prediction_reason(series)
    return rep


def prediction_fields(pred, explanation=None, series=None) -> dict:
    """A :class:`portcast.pipeline.stage_predict.RegionPrediction` as the report's fields (``notes``, ``no_prediction``,
    ``speedup_model``, ``prediction``, ``bounds``, ``contributions``: plain data), what the terminal, the JSON
    and the page print of a region's prediction. ``explanation``, ``series``: the region's feature explanation
    and features, for the lines behind the bound."""
    from portcast.bounds_report import bounds_summary

    out = {"notes": list(pred.notes), "no_prediction": pred.reason, "speedup_model": None, "prediction": None,
           "bounds": None, "contributions": None}
    if pred.speedup_model is not None:
        sm = dict(pred.speedup_model)
        expl = sm.pop("explanation", None)
        if expl is not None:
            sm["terms"] = [{"term": r.term, "coefficient": r.coefficient, "contribution": r.contribution}
                           for r in expl.itertuples(index=False)]
        out["speedup_model"] = jsonable(sm)
    if pred.prediction is not None:
        p = pred.prediction.to_dict()
        p.pop("inputs", None)
        out["prediction"] = jsonable(p)
        out["prediction"]["gpu_label"] = pred.gpu_label
        out["prediction"]["cpu_why"] = pred.cpu_why or None
        out["prediction"]["roofline_s"] = _roofline_s(pred.prediction)
    if pred.bounds is not None:
        out["bounds"] = jsonable(bounds_summary(pred.bounds, explanation, series=series))
    if pred.contributions is not None:
        rows = []
        for r in pred.contributions.itertuples(index=False):
            lo, hi = r.training_min, r.training_max
            outside = bool(r.value == r.value and lo == lo and not (lo - 1e-12 <= r.value <= hi + 1e-12))
            rows.append({"column": r.column, "value": r.value, "contribution": r.contribution,
                         "factor": math.exp(r.contribution), "training_min": lo, "training_max": hi,
                         "outside": outside})
        out["contributions"] = jsonable(rows)
    return out


def _roofline_s(p) -> float:
    """The physical estimate of a prediction's work on its GPU (what the report's position plot puts it against:
    :func:`predictor.gputime_training.physical_estimate`)."""
    import pandas as pd

    from predictor.gputime_training import physical_estimate

    return float(physical_estimate(pd.DataFrame([p.inputs]))[0])


# --------------------------------------------------------------------------------------------- HTML ---
def render_html(report: ProfileReport, full: bool = True) -> str:
    """The report as HTML (see :meth:`ProfileReport.to_html`): ``templates/page.html.j2`` (a whole page) or
    ``templates/fragment.html.j2`` (a notebook cell), the same body either way."""
    template = _environment().get_template("page.html.j2" if full else "fragment.html.j2")
    return template.render(report=report, points=_training_points() if report.regions else None)


def render_program_html(program, profile: ProfileReport) -> str:
    """A whole-program report (:class:`portcast.program_view.ProgramReport`) as a self-contained page: its
    section (``templates/program.html.j2``: the plan, the timeline, the regions, other GPUs), then the profile
    report of its traced run, from the same templates."""
    from portcast.timeline_plot import timeline_svg

    env = _environment()
    return env.get_template("program_page.html.j2").render(
        program=program, report=profile, points=_training_points() if profile.regions else None,
        timeline=_safe(timeline_svg)(program.schedule))


@functools.lru_cache(maxsize=1)
def _environment():
    """The templates under ``portcast/templates`` with autoescaping (a user's string is text, never markup, by
    construction) and strict undefined names (a misspelt field fails instead of printing nothing). Every value
    printed has its control characters written out first (:func:`_shown`); the formatting helpers and the plots
    are filters."""
    import jinja2

    from portcast import report_plots as plots
    from portcast.report import verdict_text

    env = jinja2.Environment(loader=jinja2.PackageLoader("portcast", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, finalize=_shown)
    env.filters.update(
        seconds=format_seconds, time=format_time, bytes=format_bytes, value=format_value, short=short_location,
        speedup_number=speedup_number, fmt=format, anchor_text=_anchor_text, verdict=verdict_text,
        sample_line=_sample_line, by_weight=_by_weight,
        mix_svg=_safe(plots.mix_svg), reuse_svg=_safe(plots.reuse_svg), stride_svg=_safe(plots.stride_svg),
        contributions_svg=_safe(plots.contributions_svg))
    env.globals["position_svg"] = _safe(plots.position_svg)
    return env


def _shown(value):
    """What a template prints for a value: a string with its control characters written out
    (:func:`portcast.safe_text.visible`; autoescaping then makes it text), nothing for None, markup (a plot)
    as it is."""
    from markupsafe import Markup

    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value, lines=True)
    return value


def _safe(plot):
    """A plot function whose SVG (Portcast's own, drawn by matplotlib) goes into the page as markup."""
    from markupsafe import Markup

    def svg(*args):
        text = plot(*args)
        return None if text is None else Markup(text)

    return svg


def _anchor_text(name: str) -> str:
    """A region's name in the id of its section (letters, digits, - and _ only)."""
    import re

    return re.sub(r"[^A-Za-z0-9_-]+", "_", name)


def _by_weight(rows: list) -> list:
    """The model's terms as the page lists them: the base first, then by the size of their contribution."""
    return sorted(rows, key=lambda c: (c["column"] != "start", -abs(c["contribution"] or 0)))


def _sample_line(sample: dict) -> str:
    from portcast.sample_text import sample_line

    return sample_line(sample)
