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
(:mod:`portcast.report_plots`), no script and nothing fetched from the network.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import html
import json
import math
from pathlib import Path
from typing import Any, Optional

from core.version import portcast_version
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
                parts.append(f"{r.label}: {_printed_time(p['kernel_s'])} on {p['gpu']}{s}")
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
    """The shipped model's training rows (``portcast.gputime_training.training_points``), or None when absent."""
    from predictor.gputime import DEFAULT_TRAINING_POINTS

    if not DEFAULT_TRAINING_POINTS.is_file():
        return None
    from portcast.gputime_training import read_training_points

    return read_training_points(DEFAULT_TRAINING_POINTS)


def region_report(info, counts, *, hot, series=None, explanation=None, thread_space=None, pred=None,
                  trace_files=(), no_baseline: str = "not asked for") -> RegionReport:
    """Gather one region's results (the sinks' outputs and its :class:`portcast.pipeline.RegionPrediction`,
    the same object the terminal prints from); ``no_baseline``: why a region that has no CPU time measurement
    has none."""
    from core.trace_schema import Op
    from portcast.bounds_report import TITLES, bound_lines, meanings
    from portcast.pipeline import mix_fractions
    from portcast.report import KEY_FEATURES, no_prediction_reason, weak_spots
    from profiler.baseline import Baseline, baseline_summary, uses_numpy, why_not_measured

    op_counts = {Op(i).name: int(c) for i, c in enumerate(counts)}
    mix = mix_fractions(counts)
    feats = {} if series is None else {str(k): jsonable(v) for k, v in series.items()}
    key = []
    points = _training_points() if series is not None else None
    for name, fmt, meaning in KEY_FEATURES:
        if name in feats:
            lo = hi = None
            col = {"warp_threads": "threads"}.get(name, name)  # the training rows' thread count
            if points is not None and col in points.columns:
                lo, hi = float(points[col].min()), float(points[col].max())
            key.append({"name": name, "value": feats[name], "meaning": meaning, "training_min": lo,
                        "training_max": hi})
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
        rep.notes = list(pred.notes)
        rep.no_prediction = pred.reason
        if pred.speedup_model is not None:
            sm = dict(pred.speedup_model)
            expl = sm.pop("explanation", None)
            if expl is not None:
                sm["terms"] = [{"term": r.term, "coefficient": r.coefficient, "contribution": r.contribution}
                               for r in expl.itertuples(index=False)]
            rep.speedup_model = jsonable(sm)
        if pred.prediction is not None:
            p = pred.prediction.to_dict()
            p.pop("inputs", None)
            rep.prediction = jsonable(p)
            rep.prediction["gpu_label"] = pred.gpu_label
            rep.prediction["cpu_why"] = pred.cpu_why or None
            rep.prediction["roofline_s"] = _roofline_s(pred.prediction)
        if pred.bounds is not None:
            b = pred.bounds
            text, shares = meanings(b), b.shares()
            rep.bounds = jsonable({
                "gpu": b.gpu, "bound": b.bound, "lower_bound_s": b.total_lower,
                "resources": [{"resource": r, "title": TITLES[r], "time_s": t, "share": shares[r],
                               "meaning": text[r]} for r, t in b.times.items()],
                "lines": bound_lines(b, explanation, series=series)})
        if pred.contributions is not None:
            rows = []
            for r in pred.contributions.itertuples(index=False):
                lo, hi = r.training_min, r.training_max
                outside = bool(r.value == r.value and lo == lo and not (lo - 1e-12 <= r.value <= hi + 1e-12))
                rows.append({"column": r.column, "value": r.value, "contribution": r.contribution,
                             "factor": math.exp(r.contribution), "training_min": lo, "training_max": hi,
                             "outside": outside})
            rep.contributions = jsonable(rows)
    elif series is not None:
        rep.no_prediction = no_prediction_reason(series)
    return rep


def _roofline_s(p) -> float:
    """The physical estimate of a prediction's work on its GPU (what the report's position plot puts it against:
    :func:`portcast.gputime_training.physical_estimate`)."""
    import pandas as pd

    from portcast.gputime_training import physical_estimate

    return float(physical_estimate(pd.DataFrame([p.inputs]))[0])


# --------------------------------------------------------------------------------------------- HTML ---
CSS = """
.portcast-report { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; max-width: 1100px;
  line-height: 1.4; }
.portcast-report h1 { font-size: 1.5em; margin: 0.2em 0; }
.portcast-report h2 { font-size: 1.25em; border-bottom: 2px solid #3b4a5a; padding-bottom: 2px; margin-top: 1.6em; }
.portcast-report h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
.portcast-report table { border-collapse: collapse; margin: 0.4em 0 0.8em; font-size: 0.9em; }
.portcast-report th, .portcast-report td { border: 1px solid #ccc; padding: 3px 8px; vertical-align: top; }
.portcast-report th { background: #eef3f8; text-align: left; }
.portcast-report td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.portcast-report code, .portcast-report pre { font-family: ui-monospace, Menlo, Consolas, monospace;
  font-size: 0.92em; }
.portcast-report .headline { font-size: 1.15em; background: #f3f8f1; border-left: 5px solid #2ca02c;
  padding: 8px 12px; }
.portcast-report .headline.none { background: #fbf3ea; border-left-color: #ff7f0e; }
.portcast-report .note { color: #8a5a00; }
.portcast-report .dim { color: #666; font-size: 0.9em; }
.portcast-report tr.bound td { font-weight: bold; background: #fff7e6; }
.portcast-report td.outside { color: #b00; }
.portcast-report .plots { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.portcast-report .plots svg { max-width: 100%; height: auto; }
"""


def _e(x) -> str:
    """Text for the page: HTML-escaped, control characters written out (:func:`portcast.safe_text.visible`)."""
    return html.escape(visible(x, lines=True))


def _seconds(t) -> str:
    if t is None:
        return "-"
    from portcast.bounds_report import format_seconds

    return format_seconds(t)


def _printed_time(t) -> str:
    """A predicted time as the terminal prints it (:func:`portcast.gpu_prediction.format_time`)."""
    from portcast.gpu_prediction import format_time

    return format_time(t)


def _num(v, fmt: str = "{:.4g}") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return fmt.format(v)


def _table(headers, rows, num=()) -> str:
    """An HTML table; ``num``: indices of right-aligned numeric columns; a row may be ``(cells, css class)``."""
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr>"]
    for row in rows:
        cls = ""
        if isinstance(row, tuple) and len(row) == 2 and isinstance(row[0], list):
            row, cls = row
        cells = "".join(f"<td class=\"num\">{c}</td>" if k in num else f"<td>{c}</td>" for k, c in enumerate(row))
        out.append(f"<tr class=\"{cls}\">{cells}</tr>" if cls else f"<tr>{cells}</tr>")
    out.append("</table>")
    return "".join(out)


def render_html(report: ProfileReport, full: bool = True) -> str:
    """The report as HTML (see :meth:`ProfileReport.to_html`)."""
    parts = [f"<div class=\"portcast-report\"><h1>Portcast profile of <code>{_e(report.target)}</code></h1>"]
    gpu = f"target: <b>{_e(report.gpu_label)}</b>; " if report.gpu_label else ""
    parts.append(f"<p class=\"dim\">{gpu}Portcast {_e(report.portcast_version)}; {_e(report.created)}</p>")
    if report.error:
        parts.append(f"<p class=\"note\">The script raised <code>{_e(report.error)}</code>: the report covers what "
                     "ran before it (regions open at that moment are marked incomplete).</p>")
    elif report.exit_code:
        parts.append(f"<p class=\"note\">The script exited with status {report.exit_code}.</p>")
    if not report.regions:
        parts.append("<p>No marked region was executed.</p>")
    else:
        parts.append("<h2>Traced regions</h2>")
        rows = []
        for r in report.regions:
            p = r.prediction or {}
            speedup = _speedup(p, "speedup") if p.get("speedup") else "-"
            sm = r.speedup_model or {}
            if sm.get("predicted_speedup") is not None:
                speedup = f"{sm['predicted_speedup']:.3g}x ({_e(sm['label'])})"
            rows.append([f"<a href=\"#{_anchor(r)}\">{_e(r.name)}</a>", str(r.invocation), _num(r.records),
                         *(f"{r.mix[k]:.3f}" for k in r.mix), _num(r.threads), _seconds(r.wall_time_s),
                         _seconds(r.cpu_time_s), _printed_time(p.get("kernel_s")), speedup, _e(r.mode),
                         "yes" if r.complete else f"no ({_e(r.error)})", "<br>".join(_e(f) for f in r.trace_files)])
        first = report.regions[0]
        gpu_col = f"GPU time ({report.gpu})" if report.gpu and report.model_kind == "gputime" else "GPU time"
        parts.append(_table(["region", "inv", "records", *first.mix.keys(), "threads", "traced time",
                             "CPU time", gpu_col, "speedup",
                             "mode", "complete", "trace files"], rows,
                            num=set(range(1, 3 + len(first.mix) + 5))))
        points = _training_points()
        for r in report.regions:
            parts.append(_region_html(r, report, points))
    if report.model_file:
        parts.append(f"<p class=\"dim\">Model: <code>{_e(report.model_file)}</code>"
                     + (f"; trained on {_e(report.trained_on)}" if report.trained_on else "")
                     + (". Its held-out errors are in docs/gputime.md of Portcast.</p>"
                        if report.model_kind == "gputime" else " (an XAPP speedup model: docs/predictor.md).</p>"))
    parts.append("</div>")
    body = "\n".join(parts)
    if not full:
        return f"<style>{CSS}</style>\n{body}"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Portcast profile of {_e(report.target)}</title><style>{CSS}</style></head>\n"
            f"<body>\n{body}\n</body></html>\n")


def _anchor(r: RegionReport) -> str:
    """The id of a region's section (letters, digits, - and _ only)."""
    import re

    return "region-" + re.sub(r"[^A-Za-z0-9_-]+", "_", r.name) + f"-{r.invocation}"


def _region_html(r: RegionReport, report: ProfileReport, points) -> str:
    from portcast import report_plots as plots

    out = [f"<h2 id=\"{_anchor(r)}\">Region {_e(r.label)}</h2>"]
    out.append(f"<p class=\"dim\">{_e(r.source)}</p>")
    p = r.prediction
    for n in r.notes:
        out.append(f"<p class=\"note\">{_e(n)}</p>")
    if p:
        sp = ""
        if p.get("speedup"):
            what = p.get("cpu_baseline") or r.cpu_how
            how = f" ({_e(what)})" if what else ""
            sp = (f"<br>CPU time here{how}: {_printed_time(p['cpu_s'])} &rarr; "
                  f"<b>speedup {_speedup(p, 'speedup')}</b>; "
                  f"with the copies over the host link ({_bytes(p['read_bytes'])} in, {_bytes(p['written_bytes'])} "
                  f"out: {_printed_time(p['transfer_s'])}): speedup {_speedup(p, 'speedup_with_transfers')}")
        else:
            why = r.cpu_not_measured or p.get("cpu_why")
            why = f" ({_e(why)})" if why else ""
            sp = (f"<br>No speedup: the region's CPU time was not measured{why}; copies over the host link would "
                  f"take {_printed_time(p['transfer_s'])}")
        out.append(f"<p class=\"headline\">Predicted kernel time on {_e(p['gpu_label'])}: "
                   f"<b>{_printed_time(p['kernel_s'])}</b>{sp}</p>")
        out.append(f"<p class=\"dim\">Model: <code>{_e(p['model_file'])}</code></p>")
        if r.sample and r.sample.get("plan"):
            from portcast.sampled import sample_line

            out.append(f"<p class=\"note\">{_e(sample_line(r.sample))}.</p>")
        if p.get("extrapolated"):
            out.append(f"<p class=\"note\">No GPU of the {_e(p['generation'])} generation has measured points: the "
                       "prediction for it is extrapolated from older generations.</p>")
        if p.get("out_of_range"):
            out.append(f"<p class=\"note\">Outside the training range in {_e(', '.join(p['out_of_range']))}: treat "
                       "the time as a rough guide.</p>")
    elif r.speedup_model and r.speedup_model.get("predicted_speedup") is not None:
        sm = r.speedup_model
        out.append(f"<p class=\"headline\">{_e(sm['label'])}: predicted speedup "
                   f"<b>{sm['predicted_speedup']:.3g}x</b> (no GPU time: this model predicts a speedup only)</p>")
        if sm.get("provisional"):
            out.append(f"<p class=\"note\">{_e(sm['label'])}: {_e(sm['provisional'])}</p>")
    elif r.no_prediction:
        what = "speedup" if report.model_kind == "xapp" else "GPU time"
        out.append(f"<p class=\"headline none\">No {what} predicted: {_e(r.no_prediction)}.</p>")
    if r.bounds:
        b = r.bounds
        out.append(f"<h3>What bounds the GPU time on {_e(b['gpu'])}</h3>")
        rows = [([_e(x["title"]) + (" *" if x["resource"] == b["bound"] else ""), _seconds(x["time_s"]),
                  f"{x['share']:.0%}", _e(x["meaning"])], "bound" if x["resource"] == b["bound"] else "")
                for x in b["resources"]]
        out.append(_table(["resource", "time", "share of largest", "what it counts"], rows, num={1, 2}))
        ratio = p["kernel_s"] / b["lower_bound_s"] if p and b["lower_bound_s"] else None
        out.append(f"<p>* bound: no kernel doing this work runs faster than {_seconds(b['lower_bound_s'])}"
                   + (f"; the predicted time is {ratio:.3g}x that." if ratio else ".") + "</p>")
        if b["lines"]:
            out.append(_table(["what", "share", "line", "source"],
                              [[_e(x["what"]), f"{x['share']:.0%}", _e(x["location"]), f"<code>{_e(x['text'])}</code>"]
                               for x in b["lines"]], num={1}))
    if r.contributions:
        out.append("<h3>The prediction's terms</h3><p class=\"dim\">The gradient-boosted model's prediction, split "
                   "into what each input adds to the log of the time (each tree's path credits every split to its "
                   "input): the base time times every factor (exp of the contribution) is the prediction. Values "
                   "and training ranges are the model's inputs (natural logs of seconds and counts, or rates).</p>")
        rows = []
        for c in sorted(r.contributions, key=lambda c: (c["column"] != "start", -abs(c["contribution"] or 0))):
            factor = f"{_seconds(c['factor'])} (base)" if c["column"] == "start" else f"{c['factor']:.3g}x"
            rows.append([_e(c["column"]), _num(c["value"]), _num(c["training_min"]), _num(c["training_max"]),
                         f"{c['contribution']:+.3f}", factor, "outside the training range" if c["outside"] else ""])
        tbl = _table(["input", "value", "training min", "training max", "contribution (log s)", "factor", ""],
                     rows, num={1, 2, 3, 4, 5})
        svg = plots.contributions_svg(r.contributions)
        out.append(f"<div class=\"plots\"><div>{tbl}</div>{svg or ''}</div>")
    if p and points is not None:
        out.append("<h3>Where the region sits against the training data</h3>")
        out.append(plots.position_svg(points, p["gpu"], p["roofline_s"], p["kernel_s"],
                                      r.features.get("warp_simdEfficiency"), r.features.get("warp_coalescing"),
                                      r.label))
    if r.key_features:
        out.append("<h3>GPU-relevant features</h3>")
        rows = []
        for k in r.key_features:
            rng = "" if k["training_min"] is None else f"{_num(k['training_min'])} &ndash; {_num(k['training_max'])}"
            rows.append([f"<code>{_e(k['name'])}</code>", _num(k["value"]), rng, _e(k["meaning"])])
        out.append(_table(["feature", "value", "training range", "meaning"], rows, num={1, 2}))
    if r.hot_lines:
        out.append("<h3>Hot lines</h3>")
        out.append(_table(["line", "records", "share", "source"],
                          [[_e(_short(h["location"])), _num(h["records"]), f"{h['share']:.1%}",
                            f"<code>{_e(h['text'])}</code>"] for h in r.hot_lines], num={1, 2}))
    if r.weak_spots:
        out.append("<h3>Lines behind the weak spots</h3>")
        out.append(_table(["what", "why", "share", "line", "source"],
                          [[_e(w["what"]), _e(w["why"]), f"{w['share']:.0%}", _e(_short(w["location"])),
                            f"<code>{_e(w['text'])}</code>"] for w in r.weak_spots], num={2}))
    ts = r.thread_space
    if ts is not None:
        out.append("<h3>GPU thread space</h3>")
        loops = ts.get("loops") or []
        if ts.get("how", "none") == "none" or not loops:
            out.append("<p>None: no loop of the region can run its iterations as independent GPU threads.</p>")
        else:
            from portcast.report import _verdict_text

            out.append(_table(["loop", "where", "dims", "launches", "threads", "verdict"],
                              [[f"<code>{_e(lp.get('header', ''))}</code>", _e(_short(lp.get("location", ""))),
                                _e(lp.get("dims", "")), _num(lp.get("launches")), _num(lp.get("threads")),
                                _e(_verdict_text(lp))] for lp in loops], num={3, 4}))
            for lp in loops:
                if lp.get("sunk"):
                    out.append(f"<p>Imperfect nest {_e(_short(lp.get('location', '')))}: sunk into the inner loop "
                               "(each thread recomputes them from its indices): " + "; ".join(
                                   f"{_e(_short(st['location']))} <code>{_e(st['text'])}</code>"
                                   for st in lp["sunk"]) + "</p>")
    if r.library_calls:
        out.append("<h3>Library calls not traced element by element (work estimated)</h3>")
        out.append(_table(["call", "location", "calls", "estimated flops", "bytes"],
                          [[_e(w.get("call")), _e(w.get("location")), _num(w.get("calls")),
                            _num(w.get("flops"), "{:.3g}"), _bytes(w.get("bytes") or 0)] for w in r.library_calls],
                          num={2, 3, 4}))
    figs = [plots.mix_svg(r.op_counts)]
    if r.features:
        figs += [plots.reuse_svg(r.features), plots.stride_svg(r.features)]
    out.append("<h3>Instruction mix and memory behaviour</h3><div class=\"plots\">"
               + "".join(f for f in figs if f) + "</div>")
    return "\n".join(out)


def _speedup(p: dict, name: str) -> str:
    """``5.1x (4.8&ndash;5.4)``: a prediction's speedup and its interval from the CPU time's quartiles."""
    from portcast.gpu_prediction import speedup_number

    low, high = p.get(f"{name}_low"), p.get(f"{name}_high")
    interval = f" ({speedup_number(low)}&ndash;{speedup_number(high)})" if low is not None and high is not None else ""
    return f"{speedup_number(p[name])}x{interval}"


def _short(loc: str) -> str:
    from portcast.report import _short as short

    return short(loc)


def _bytes(n) -> str:
    from portcast.bounds_report import format_bytes

    return format_bytes(n)
