"""What Portcast tells a person about a region: its GPU-relevant features, the lines behind them, and a
predicted speedup with the terms that make it.

Used by ``portcast profile``, ``portcast record`` and ``portcast predict`` so the three speak alike.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

#: The features a porter reads first, with what a high or low value means on a GPU (papers/004 Table 1).
KEY_FEATURES: tuple[tuple[str, str, str], ...] = (
    ("warp_threads", "{:,.0f}", "parallel-loop iterations = GPU threads available"),
    ("warp_parallelFraction", "{:.3f}", "share of the work inside the parallel loop"),
    ("ilp32", "{:.2f}", "ILP in a 32-instruction window (per-thread latency hiding)"),
    ("ilp16384", "{:.1f}", "ILP in a 16384-instruction window (independent work overall)"),
    ("warp_coalescing", "{:.3f}", "ideal / actual 32-byte sectors per warp access (1 = fully coalesced)"),
    ("locStrideOther", "{:.3f}", "share of per-instruction strides > 128 B (memory divergence)"),
    ("warp_bdiv", "{:.3f}", "share of warp branches whose threads diverge (lockstep warps)"),
    ("Lbdiv_32", "{:.3f}", "share of per-branch 32-outcome groups that diverge"),
    ("warp_arithIntensity", "{:.3f}", "FP operations per byte moved (compute vs bandwidth bound)"),
    ("spf", "{:.3f}", "share of special-function operations (fast on GPU SFUs)"),
    ("mem", "{:.3f}", "share of loads and stores"),
    ("coldRef", "{:.3f}", "share of first-touch (cold) load references"),
)

#: Divergence features below this value are not weak spots; their lines are not listed.
MIN_EXPLAINED = 0.01

EXPLAIN_TITLES = {
    "locStrideOther": "memory divergence (strides > 128 B)",
    "Lbdiv_32": "branch divergence (32-outcome groups)",
    "footprint": "footprint (first-touched 64-B blocks)",
}


def print_features(console: Console, label: str, series: pd.Series, explanation: pd.DataFrame | None = None,
                   top: int = 3) -> None:
    """Print the key features of one region and the source lines that contribute most to its weak spots.

    Parameters
    ----------
    console : where to print
    label : region name shown in the titles
    series : the region's features (``features.FeatureEngine.result()``)
    explanation : ``features.FeatureEngine.explain()`` table, optional
    top : lines shown per explained feature
    """
    t = Table(title=f"GPU-relevant features of {label}", title_justify="left")
    for c in ("feature", "value", "meaning"):
        t.add_column(c, no_wrap=c != "meaning")
    for name, fmt, meaning in KEY_FEATURES:
        if name in series.index:
            t.add_row(name, fmt.format(float(series[name])), meaning)
    console.print(t)
    if explanation is None or explanation.empty:
        return
    t = Table(title=f"lines behind the weak spots of {label}", title_justify="left")
    for c in ("what", "share", "line", "source"):  # numbers and file:line never cut; the text wraps
        t.add_column(c, no_wrap=c in ("share", "line"), overflow="fold")
    for feature, rows in explanation.groupby("feature", sort=False):
        if feature in series.index and float(series[feature]) < MIN_EXPLAINED:
            continue  # e.g. one divergent loop-exit group in thousands: not a weak spot worth a line
        for _, r in rows.head(top).iterrows():
            t.add_row(EXPLAIN_TITLES.get(feature, feature), f"{float(r['share']):.0%}", _short(str(r["location"])),
                      escape(str(r["text"]).strip()))
    console.print(t)


def _short(loc: str) -> str:
    """``file:line`` with the file's base name only (tables stay narrow)."""
    import os

    if not loc or ":" not in loc:
        return loc
    file, line = loc.rsplit(":", 1)
    return f"{os.path.basename(file)}:{line}"


def _verdict_text(loop: dict) -> str:
    v = loop.get("verdict") or ""
    if v in ("reduction", "scan"):
        reds = loop.get("reductions") or []
        if any("scan" in r for r in reds):
            return f"scan over {', '.join(r.replace(' scan', '').replace(' (running value,)', '') for r in reds)} " \
                   "(GPU: parallel scan)"
        return f"reduction over {', '.join(reds)} (GPU: tree reduction)" if reds else "reduction"
    if v == "atomic":
        what = ", ".join(a.split(" (")[0] for a in loop.get("atomics") or []) or "shared elements"
        return f"atomic updates of {what}"
    if v == "parallel" and (loop.get("counts") or {}).get("same_value_race"):
        return "parallel (benign races: every writer stores the same value)"
    return v


def print_thread_space(console: Console, err_console: Console, label: str, report: dict | None) -> None:
    """Print the region's GPU thread space: each kernel loop (where, dimensions, launches, threads) with its
    verdict, why loops around it were left on the host, and a loud warning for every loop whose iterations
    depend on each other (file:line of the dependence found on the trace).

    Parameters
    ----------
    console : where the table goes
    err_console : where warnings go
    label : region name and invocation
    report : ``features.FeatureSink.thread_spaces`` entry (None: the trace had no thread-space metadata)
    """
    if report is None:
        return
    how = report.get("how", "none")
    loops = report.get("loops", [])
    if how == "none" or not loops:
        console.print(f"[bold]thread space of {label}:[/] none: no loop of the region can run its iterations as "
                      "independent GPU threads", highlight=False, soft_wrap=True)
    else:
        why = {"marked": "the loops marked with numba.prange / portcast.parallel",
               "inferred": "no loop is marked: the outermost loops without a dependence between iterations",
               "library": "no loop: the NumPy operations, each call a launch"}.get(how, how)
        t = Table(title=f"thread space of {label}: {why}", title_justify="left")
        for c in ("loop", "where", "dims", "launches", "threads", "verdict"):
            t.add_column(c, no_wrap=c in ("where", "dims", "launches", "threads"), overflow="fold")
        for loop in loops:
            t.add_row(escape(loop.get("header", "")), _short(loop.get("location", "")), str(loop.get("dims", "")),
                      "" if loop.get("launches") is None else f"{loop['launches']:,}",
                      "" if loop.get("threads") is None else f"{loop['threads']:,}", escape(_verdict_text(loop)))
        console.print(t)
    for r in report.get("rejected", [])[:6]:
        reason = "; ".join(_short_reason(w) for w in (r.get("why") or [])[:2])
        console.print(escape(f"  host loop {_short(r.get('location', ''))} `{r.get('header', '')}`: {reason}"),
                      highlight=False, soft_wrap=True)
    for note in report.get("notes", []):
        console.print(escape(f"  note: {_short_reason(note)}"), highlight=False, soft_wrap=True)
    for loop in loops:
        if loop.get("verdict") != "sequential":
            continue
        found = "; ".join(f"{_short(e['location'])} `{e['text']}`: {_dependence_text(e)}"
                          for e in loop.get("examples", [])[:3])
        if not found:
            found = "; ".join(_short_reason(x) for x in loop.get("reasons", [])[:2])
        marked = "marked parallel" if loop.get("how") == "marked" else "chosen as thread space"
        err_console.print("[bold yellow]warning:[/] " + escape(f"{label}: {_short(loop.get('location', ''))} "
                          f"`{loop.get('header', '')}` is {marked} but its iterations depend on each other: {found}. "
                          "A GPU cannot run them as independent threads; the prediction leaves this loop's work out "
                          "of the parallel fraction."), highlight=False, soft_wrap=True)
    if report.get("memory_unchecked_launches"):
        err_console.print(f"[yellow]note:[/] {label}: memory dependences were not checked in "
                          f"{report['memory_unchecked_launches']} launch(es) (shadow memory budget; "
                          "PORTCAST_SHADOW_MB raises it)", highlight=False, soft_wrap=True)


_DEPENDENCE = {
    "carried_register": "thread {0} reads a value thread {1} computed",
    "reduction": "thread {0} reads the reduction value thread {1} left",
    "read_after_write": "thread {0} reads bytes thread {1} wrote",
    "write_after_read": "thread {0} overwrites bytes thread {1} read",
    "write_after_write": "thread {0} overwrites bytes thread {1} wrote",
    "atomic": "threads {0} and {1} update the same element",
    "same_value_race": "threads {0} and {1} store the same value to the same element",
}


def _dependence_text(example: dict) -> str:
    """One dependence found on the trace, in words (``features.thread_dependences`` report example)."""
    t, other = example["threads"]
    text = _DEPENDENCE.get(example["kind"], example["kind"]).format(t, other)
    return f"{text} ({example['count']:,} such records)"


def _short_reason(text: str) -> str:
    """A reason with its leading ``/long/path/file.py:line`` shortened to ``file.py:line``."""
    head, sep, rest = text.partition(": ")
    if sep and ":" in head and "/" in head:
        return f"{_short(head)}: {rest}"
    return text

def _si(v: float) -> str:
    """1.2e9 -> "1.2 G": compact magnitudes for the library-call table."""
    for div, unit in ((1e12, " T"), (1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(v) >= div:
            return f"{v / div:.3g}{unit}"
    return f"{v:.0f}"


def print_library_calls(console: Console, label: str, info) -> bool:
    """Print the region's library calls that were not traced element by element, with their estimated work.

    Parameters
    ----------
    console : where to print
    label : region name shown in the title
    info : the region's RegionInfo (``info.extra["library_work"]``, see docs/profiler.md "Library calls")

    Returns
    -------
    bool
        Whether a table was printed (not when every library call of the region was expanded).
    """
    work = (getattr(info, "extra", None) or {}).get("library_work") or []
    if not work:
        return False
    t = Table(title=f"library calls not traced element by element in {label} (their work is estimated)",
              title_justify="left")
    for c in ("call", "location", "calls", "estimated flops", "bytes"):
        t.add_column(c, no_wrap=True, justify="right" if c in ("calls", "estimated flops", "bytes") else "left")
    for w in sorted(work, key=lambda w: -int(w["flops"])):
        t.add_row(str(w["call"]), str(w["location"]), f"{int(w['calls']):,}", _si(float(w["flops"])),
                  _si(float(w["bytes"])) + "B")
    console.print(t)
    return True


#: Printed with every prediction of a model whose metadata says ``"provisional": true``.
PROVISIONAL_LINE = ("model: provisional — trained on {what}, not GPU measurements; run `portcast calibrate` + "
                    "`portcast train` on your GPU for a measured model")


def provisional_line(model) -> str | None:
    """The label line of a provisional model, or None for a model without the flag.

    Parameters
    ----------
    model : a loaded model (``metadata_``) or its metadata dict.

    Returns
    -------
    str or None
    """
    from predictor.model_io import is_provisional

    if not is_provisional(model):
        return None
    meta = model if isinstance(model, dict) else model.metadata_
    preset = meta.get("gpu_preset")
    if str(meta.get("gpu_times") or "").startswith("simulated"):
        what = f"simulated {str(preset).upper()} times" if preset else "simulated GPU times"
    else:
        what = str(meta.get("gpu_times") or "data that are not GPU measurements")
    return PROVISIONAL_LINE.format(what=what)


def print_model_label(console: Console, model) -> None:
    """Print the provisional-model line (bold yellow) when the model's metadata says provisional.

    Parameters
    ----------
    console : where to print
    model : the loaded model
    """
    line = provisional_line(model)
    if line is not None:
        console.print(f"[bold yellow]{line}[/]", highlight=False, soft_wrap=True)


def print_prediction(console: Console, err_console: Console, expl: pd.DataFrame, label: str,
                     model=None, terms: bool = True) -> None:
    """Print a predicted speedup, the model's features against their training range, and each term's share.

    Parameters
    ----------
    expl : ``predictor.explain_prediction(model, x)``
    label : what was predicted (region or row name)
    model : the model, optional: when its metadata says provisional, the label line follows the prediction
    terms : print the term table (the features against their range, each term's contribution)
    """
    a = expl.attrs
    pred = a["prediction"]
    if a.get("outside_targets"):
        lo, hi = a["target_range"]
        side, bound = ("below", lo) if pred < lo else ("above", hi)
        console.print(f"[bold]{escape(label)}[/]: predicted speedup [bold]{side} {bound:.3g}x[/], the "
                      f"{'lowest' if side == 'below' else 'highest'} speedup in the model's training data (its own "
                      f"value, {pred:.3g}x, lies outside what it was trained on) "
                      f"({'port' if side == 'above' and bound > 1 else 'do not port' if bound <= 1 else 'unclear'})",
                      highlight=False, soft_wrap=True)
    else:
        console.print(f"[bold]{escape(label)}[/]: predicted speedup [bold]{pred:.3g}x[/]"
                      f" ({'port' if pred > 1 else 'do not port'})", highlight=False)
    if model is not None:
        print_model_label(console, model)
    if not terms:
        _print_range_warnings(err_console, a, label)
        return
    ft = Table(title="features vs training range", title_justify="left")
    for c in ("feature", "value", "train min", "train max", ""):
        ft.add_column(c)
    clipped = {c for c, _, _ in a.get("clipped", [])}
    for _, r in expl[expl["order"] == 1].iterrows():
        flag = "[yellow]outside: clipped to the range[/]" if r["term"] in clipped else \
            "[yellow]outside: extrapolating[/]" if r["extrapolating"] else ""
        ft.add_row(r["term"], f"{r['value']:.6g}", f"{r['train_min']:.6g}", f"{r['train_max']:.6g}", flag)
    console.print(ft)
    scale = {"log": "log speedup (each adds to log; exp(sum) = speedup)", "sqrt": "sqrt speedup",
             "none": "speedup"}[a["transform"]]
    tt = Table(title=f"term contributions to {scale}", title_justify="left")
    for c in ("term", "coefficient", "z value", "contribution"):
        tt.add_column(c)
    for _, r in expl.iterrows():
        tt.add_row(r["term"], f"{r['coefficient']:.4g}", f"{r['z_value']:.4g}", f"{r['contribution']:+.4g}")
    tt.add_row("[bold]sum[/]", "", "", f"{a['prediction_transformed']:+.4g}")
    console.print(tt)
    _print_range_warnings(err_console, a, label)


def _print_range_warnings(err_console: Console, a: dict, label: str) -> None:
    """The warnings of a prediction outside the model's training data (features clipped or extrapolated)."""
    if a.get("clipped"):
        what = ", ".join(f"{c} = {v:.4g} (used {b:.4g})" for c, v, b in a["clipped"])
        err_console.print(f"[yellow]warning:[/] {label}: outside the training data, so clipped to its range: {what}; "
                          "the region is unlike every training point in these respects", highlight=False,
                          soft_wrap=True)
    elif a["extrapolating"]:
        err_console.print(f"[yellow]warning:[/] {label}: features outside the training range; the prediction "
                          "extrapolates and may be far off", highlight=False)
    if a.get("outside_targets"):
        lo, hi = a["target_range"]
        err_console.print(f"[yellow]warning:[/] {label}: the model's value {a['prediction']:.3g}x lies outside the "
                          f"speedups it was trained on ({lo:.3g}x to {hi:.3g}x): read it as a bound, not a value",
                          highlight=False, soft_wrap=True)
    nov = a.get("novelty", float("nan"))
    if nov == nov and nov > 1:
        err_console.print(f"[yellow]warning:[/] {label}: unlike every training point (novelty {nov:.2g}: farther from "
                          "the training data, in the model's features, than any training point is from the rest); "
                          "the interaction terms were never fitted near it, so the number is a guess",
                          highlight=False, soft_wrap=True)
    if a["transform"] == "none" and a["prediction"] <= 0:
        err_console.print(f"[yellow]warning:[/] {label}: the linear model predicts a non-positive speedup",
                          highlight=False)


#: below this share of its records in launches of parallel loops without a carried dependence, a region gets
#: no predicted speedup (Amdahl's law bounds it, and the model was trained on parallel kernels)
MIN_PARALLEL_FRACTION = 0.5
#: above this share of its estimated work in library calls that were not traced element by element, a
#: region gets no predicted speedup (its features describe the rest only)
MAX_OPAQUE_FRACTION = 0.5


def no_prediction_reason(series: pd.Series) -> str | None:
    """Why a region's speedup should not be predicted, or None when it may be.

    A region without a parallel thread space, with less than :data:`MIN_PARALLEL_FRACTION` of its work in
    parallel loops (a loop whose iterations depend on each other does not count), or with more than
    :data:`MAX_OPAQUE_FRACTION` of its work in library calls traced as one record each is unlike anything a
    speedup model can speak for: it gets an explanation instead of a number.

    Parameters
    ----------
    series : the region's features

    Returns
    -------
    str or None
    """
    def get(name, default=None):
        return float(series[name]) if name in series.index else default

    threads = get("warp_threads", 0.0)
    pf = get("ts_parallelFraction", get("warp_parallelFraction", 0.0))
    opaque = get("lib_opaqueFraction", 0.0)
    if opaque > MAX_OPAQUE_FRACTION:
        return (f"{opaque:.0%} of its estimated work is in library calls that were not traced element by element "
                "(see the table of library calls): its features do not describe that work")
    if threads == 0:
        return ("it has no parallel thread space: no loop of the region runs iterations a GPU could give to "
                "independent threads (mark one with numba.prange or portcast.parallel if the analysis missed it)")
    if pf < MIN_PARALLEL_FRACTION:
        bound = f"; by Amdahl's law no GPU makes it more than {1 / (1 - pf):.3g}x faster" if pf < 1 else ""
        return (f"only {pf:.1%} of its work runs in parallel loops without a dependence between iterations "
                f"(below {MIN_PARALLEL_FRACTION:.0%}){bound}")
    return None


def predict_regions(console: Console, err_console: Console, model_path: Path | None, results,
                    terms: bool = True) -> list[dict]:
    """Predict and explain the speedup of each profiled region, or say why no prediction can be made.

    Parameters
    ----------
    model_path : model file (``portcast train``); None = the shipped default model, if there is one
    results : list of (RegionInfo, feature Series), as in ``features.FeatureSink.results``
    terms : print each prediction's term table (``portcast profile --verbose``)

    Returns
    -------
    list of dict
        ``region``, ``invocation``, ``predicted_speedup`` per region (None, with a ``reason``, when the region
        gets no prediction: :func:`no_prediction_reason`); empty when no model is available.
    """
    from predictor import explain_prediction, load_model
    from predictor.model_io import default_model_path

    path = model_path if model_path is not None else default_model_path()
    if path is None:
        console.print(
            "[bold]speedup:[/] no speedup model is shipped for a platform yet: the default model is trained on "
            "the kernel corpus measured on a real GPU, which has not been done (see docs/predictor.md). Measure "
            "your own with `portcast calibrate`, train with `portcast train`, and pass --model MODEL.json.",
            highlight=False)
        return []
    model = load_model(path)
    platform = model.metadata_.get("platform")
    console.print(f"speedup model: {path}" + (f" ({platform})" if platform else ""), highlight=False)
    out = []
    for info, series in results:
        missing = [f for f in model.subset_ if f not in series.index]
        label = f"{info.name} #{info.invocation}"
        if missing:
            err_console.print(f"[yellow]warning:[/] {label}: the model needs feature(s) {missing} that were not "
                              "computed; no prediction", highlight=False)
            continue
        why = no_prediction_reason(series)
        if why is not None:
            console.print(escape(f"{label}: no speedup predicted: {why}."), highlight=False, soft_wrap=True)
            out.append({"region": info.name, "invocation": info.invocation, "predicted_speedup": None,
                        "reason": why})
            continue
        expl = explain_prediction(model, series[list(model.subset_)].astype(float).to_dict())
        print_prediction(console, err_console, expl, label, model=model, terms=terms)
        out.append({"region": info.name, "invocation": info.invocation,
                    "predicted_speedup": float(expl.attrs["prediction"])})
    return out
