"""What Portcast tells a person about a region: its GPU-relevant features, the lines behind them, and a
predicted speedup with the terms that make it.

Used by ``portcast profile``, ``portcast record`` and ``portcast predict`` so the three speak alike. The weak
spots (:func:`weak_spots`) are chosen here, for the terminal and the JSON and HTML report alike.
"""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from portcast.formatting import (
    format_bytes,
    format_count,
    format_seconds,
    format_time,
    short_location,
    short_reason,
    speedup_text,
)
from portcast.safe_text import as_text, escape

#: The features a porter reads first, with what a high or low value means on a GPU (papers/004 Table 1).
#: The warp-level ones (``warp_*``) are what a GPU sees; ``locStrideOther`` and ``Lbdiv_32`` look at one static
#: instruction's successive executions in the sequential trace, and say so.
KEY_FEATURES: tuple[tuple[str, str, str], ...] = (
    ("warp_threads", "{:,.0f}", "parallel-loop iterations = GPU threads available"),
    ("warp_parallelFraction", "{:.3f}", "share of the work inside the parallel loop"),
    ("ilp32", "{:.2f}", "ILP in a 32-instruction window (per-thread latency hiding)"),
    ("ilp16384", "{:.1f}", "ILP in a 16384-instruction window (independent work overall)"),
    ("warp_coalescing", "{:.3f}", "ideal / actual 32-byte sectors per warp access (1 = fully coalesced)"),
    ("locStrideOther", "{:.3f}", "share of one instruction's successive strides > 128 B (sequential trace; "
                                 "a GPU's is warp_coalescing)"),
    ("warp_bdiv", "{:.3f}", "share of warp branches whose threads diverge (lockstep warps)"),
    ("warp_simdEfficiency", "{:.3f}", "active lanes / threads per warp instruction (1 = no lane idle)"),
    ("Lbdiv_32", "{:.3f}", "share of one branch's 32-outcome groups that mix outcomes (sequential trace: a loop "
                           "exit counts; a GPU's is warp_bdiv)"),
    ("warp_arithIntensity", "{:.3f}", "FP operations per byte moved (compute vs bandwidth bound)"),
    ("spf", "{:.3f}", "share of special-function operations (fast on GPU SFUs)"),
    ("mem", "{:.3f}", "share of loads and stores"),
    ("coldRef", "{:.3f}", "share of first-touch (cold) load references"),
)

#: warp_bdiv below this is not a weak spot (one divergent loop exit in a hundred warp branches)
MIN_EXPLAINED = 0.01
#: warp_simdEfficiency at or above this is not a weak spot: fewer than 5% of the lanes idle make the issue
#: time less than 1.05x the converged one (a launch's last thread running the region's closing records is
#: about 1% in a 1000-thread region traced natively)
MAX_SIMD_EFFICIENCY = 0.95
#: warp_coalescing below this is a weak spot: unit-stride accesses to elements of 4 bytes or more cost at
#: most one sector beyond the ideal per warp access when the array is not 32-byte aligned (4/5 = 0.8 for
#: 4-byte elements, 8/9 for 8-byte ones), so a lower value means accesses that are not unit-stride
MIN_COALESCING = 0.75

#: The weak spots: the explanation feature whose rows are their lines (``features.FeatureEngine.explain``),
#: their title, and the bound resources (``gpu_models.bounds.RESOURCES``) whose time they make larger.
#: When each one is listed: :func:`weak_spot_why`.
WEAK_SPOTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("warp_bdiv", "branch divergence (warp branches whose lanes split)", ("issue", "pipe", "waves")),
    ("warp_coalescing", "uncoalesced access (32-B sectors beyond the ideal)", ("dram", "pipe")),
    ("footprint", "footprint (first-touched 64-B blocks)", ("dram",)),
)

#: the bound table's names (``gpu_models.bounds.Bounds.details``) of the features the weak spots read
_DETAILS = {"warp_simdEfficiency": "simd_efficiency", "warp_coalescing": "coalescing"}


def _feature(name: str, series: pd.Series | None, bounds=None) -> float | None:
    """The region's value of a feature: from its features, else from the bound table's details (the same
    number: the bounds are computed from the same features), else None."""
    if series is not None and name in series.index and series[name] == series[name]:
        return float(series[name])
    if bounds is not None and _DETAILS.get(name) in bounds.details:
        return float(bounds.details[_DETAILS[name]])
    return None


def weak_spot_why(feature: str, series: pd.Series | None, bounds=None) -> str | None:
    """Why ``feature``'s lines are a weak spot of the region, in the words of the table that shows the value
    (None: they are not). Each rule reads the feature the feature table and the bound table print:

    * ``warp_bdiv`` (branch divergence): ``warp_bdiv`` >= :data:`MIN_EXPLAINED` and ``warp_simdEfficiency`` <
      :data:`MAX_SIMD_EFFICIENCY` (the bound table's "SIMD efficiency"; at 1 it says "no divergence": no lane
      waits, whatever the branches);
    * ``warp_coalescing`` (uncoalesced access): 0 < ``warp_coalescing`` < :data:`MIN_COALESCING`;
    * ``footprint``: the DRAM bound is the largest of the bound table (its bytes are at least the footprint).

    Parameters
    ----------
    feature : an explanation feature of :data:`WEAK_SPOTS`
    series : the region's features (None: read from ``bounds``)
    bounds : the region's :class:`gpu_models.bounds.Bounds`, optional (no prediction: no footprint weak spot)
    """
    if feature == "warp_bdiv":
        bdiv, simd = _feature("warp_bdiv", series, bounds), _feature("warp_simdEfficiency", series, bounds)
        if simd is None or simd >= MAX_SIMD_EFFICIENCY or (bdiv is not None and bdiv < MIN_EXPLAINED):
            return None
        share = "" if bdiv is None else f"warp_bdiv {bdiv:.3f}, "
        return f"{share}SIMD efficiency {simd:.2f}: {1 - simd:.0%} of lanes idle"
    if feature == "warp_coalescing":
        c = _feature("warp_coalescing", series, bounds)
        if c is None or not 0.0 < c < MIN_COALESCING:
            return None
        return f"warp_coalescing {c:.3f}: {1 / c:.3g}x the sectors a coalesced access needs"
    if feature == "footprint":
        if bounds is None or bounds.bound != "dram":
            return None
        return "DRAM bounds the GPU time"
    return None


def weak_spots(series: pd.Series | None, explanation: pd.DataFrame | None, bounds=None, top: int = 3,
               resource: str | None = None) -> list[dict]:
    """The lines behind the region's weak spots: ``{"feature", "what", "why", "share", "location", "text"}`` each,
    the ``top`` rows of each weak spot (:data:`WEAK_SPOTS`) that :func:`weak_spot_why` lists. With ``resource``,
    only the weak spots that make that resource's bound larger (the lines behind the bound; for ``pipe``, the
    busiest pipeline decides: sectors for the load/store unit, warp instructions for the others).

    What the terminal prints and what the JSON and HTML report hold come from here, so they agree."""
    if explanation is None or explanation.empty:
        return []
    out = []
    for feature, title, resources in WEAK_SPOTS:
        if resource is not None:
            if resource not in resources:
                continue
            if resource == "pipe" and bounds is not None:
                lsu = bounds.details.get("busiest_pipe") == "lsu"
                if lsu != (feature == "warp_coalescing"):
                    continue
        why = weak_spot_why(feature, series, bounds)
        if why is None:
            continue
        for _, r in explanation[explanation["feature"] == feature].head(top).iterrows():
            out.append({"feature": feature, "what": title, "why": why, "share": float(r["share"]),
                        "location": str(r["location"]), "text": str(r["text"]).strip()})
    return out


def key_features(series: pd.Series) -> list[dict]:
    """The region's :data:`KEY_FEATURES` it has, ``{"name", "value", "meaning"}`` each: the rows of the feature
    table (the report adds the training data's range to them)."""
    return [{"name": name, "value": series[name], "meaning": meaning} for name, _, meaning in KEY_FEATURES
            if name in series.index]


def print_features(console: Console, label: str, features: list[dict], weak: list[dict] = ()) -> None:
    """Print the key features of one region and the source lines behind its weak spots.

    Parameters
    ----------
    console : where to print
    label : region name shown in the titles
    features : the region's key features (``RegionReport.key_features``, :func:`key_features`)
    weak : the lines behind its weak spots (``RegionReport.weak_spots``, :func:`weak_spots`)
    """
    formats = {name: fmt for name, fmt, _ in KEY_FEATURES}
    t = Table(title=f"GPU-relevant features of {escape(label)}", title_justify="left")
    for c in ("feature", "value", "meaning"):
        t.add_column(c, no_wrap=c != "meaning")
    for k in features:
        value = float("nan") if k["value"] is None else float(k["value"])  # the report writes NaN as null
        t.add_row(k["name"], formats[k["name"]].format(value), k["meaning"])
    console.print(t)
    if not weak:
        return
    t = Table(title=f"lines behind the weak spots of {escape(label)}", title_justify="left")
    for c in ("what", "why", "share", "line", "source"):  # numbers and file:line never cut; the text wraps
        t.add_column(c, no_wrap=c in ("share", "line"), overflow="fold")
    for r in weak:
        t.add_row(escape(r["what"]), escape(r["why"]), f"{r['share']:.0%}", as_text(short_location(r["location"])),
                  as_text(r["text"]))
    console.print(t)


def verdict_text(loop: dict) -> str:
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
        console.print(f"[bold]thread space of {escape(label)}:[/] none: no loop of the region can run its iterations "
                      "as independent GPU threads", highlight=False, soft_wrap=True)
    else:
        why = {"marked": "the loops marked with numba.prange / portcast.parallel",
               "inferred": "no loop is marked: the outermost loops without a dependence between iterations",
               "library": "no loop: the NumPy operations, each call a launch"}.get(how, how)
        t = Table(title=f"thread space of {escape(label)}: {why}", title_justify="left")
        for c in ("loop", "where", "dims", "launches", "threads", "verdict"):
            t.add_column(c, no_wrap=c in ("where", "dims", "launches", "threads"), overflow="fold")
        for loop in loops:
            t.add_row(as_text(loop.get("header", "")), as_text(short_location(loop.get("location", ""))),
                      str(loop.get("dims", "")),
                      "" if loop.get("launches") is None else f"{loop['launches']:,}",
                      "" if loop.get("threads") is None else f"{loop['threads']:,}", escape(verdict_text(loop)))
        console.print(t)
    for loop in loops:
        if loop.get("sunk"):
            sunk = "; ".join(f"{short_location(st['location'])} `{st['text']}`" for st in loop["sunk"])
            console.print(escape(f"  imperfect nest {short_location(loop.get('location', ''))}: sunk into the inner "
                                 f"loop (each thread recomputes them from its indices): {sunk}"),
                          highlight=False, soft_wrap=True)
    for r in report.get("rejected", [])[:6]:
        reason = "; ".join(short_reason(w) for w in (r.get("why") or [])[:2])
        console.print(escape(f"  host loop {short_location(r.get('location', ''))} `{r.get('header', '')}`: {reason}"),
                      highlight=False, soft_wrap=True)
    for note in report.get("notes", []):
        console.print(escape(f"  note: {short_reason(note)}"), highlight=False, soft_wrap=True)
    for loop in loops:
        if loop.get("private"):
            console.print(escape(f"  private: {short_location(loop.get('location', ''))} `{loop.get('header', '')}`: "
                                 f"{_private_text(loop)}"), highlight=False, soft_wrap=True)
    for loop in loops:
        if loop.get("verdict") != "sequential":
            continue
        found = "; ".join(f"{short_location(e['location'])} `{e['text']}`: {_dependence_text(e)}"
                          for e in loop.get("examples", [])[:3])
        if not found:
            found = "; ".join(short_reason(x) for x in loop.get("reasons", [])[:2])
        marked = "marked parallel" if loop.get("how") == "marked" else "chosen as thread space"
        err_console.print("[bold yellow]warning:[/] " + escape(f"{label}: {short_location(loop.get('location', ''))} "
                          f"`{loop.get('header', '')}` is {marked} but its iterations depend on each other: {found}. "
                          "A GPU cannot run them as independent threads; the prediction leaves this loop's work out "
                          "of the parallel fraction."), highlight=False, soft_wrap=True)
    if report.get("memory_unchecked_launches"):
        err_console.print(f"[yellow]note:[/] {escape(label)}: memory dependences were not checked in "
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


def _private_text(loop: dict) -> str:
    """The arrays a kernel loop privatises (``private``: "`u1` (file:line)"), as per-thread buffers, those
    whose values are seen after the loop marked (the loop's note on them says why)."""
    out = []
    for entry in loop.get("private") or []:
        name, _, loc = entry.partition(" (")
        loc = loc.rstrip(")")
        last = any(r.startswith(f"{loc}: {name} ") for r in loop.get("reasons") or [])
        out.append(f"{name} ({short_location(loc)}{', last value kept' if last else ''})")
    return "per-thread buffers " + ", ".join(out)


def print_library_calls(console: Console, label: str, info) -> bool:
    """Print the region's library calls that were not traced element by element, with their estimated work.

    Parameters
    ----------
    console : where to print
    label : region name shown in the title
    info : the region's library calls (``RegionReport.library_calls``), or its RegionInfo
        (``info.extra["library_work"]``, see docs/profiler.md "Library calls")

    Returns
    -------
    bool
        Whether a table was printed (not when every library call of the region was expanded).
    """
    work = info if isinstance(info, list) else (getattr(info, "extra", None) or {}).get("library_work") or []
    if not work:
        return False
    t = Table(title=f"library calls not traced element by element in {escape(label)} (their work is estimated)",
              title_justify="left")
    for c in ("call", "location", "calls", "estimated flops", "bytes"):
        t.add_column(c, no_wrap=True, justify="right" if c in ("calls", "estimated flops", "bytes") else "left")
    for w in sorted(work, key=lambda w: -int(w["flops"])):
        t.add_row(as_text(w["call"]), as_text(w["location"]), f"{int(w['calls']):,}",
                  format_count(w["flops"], sep=" ", small=".0f"), format_count(w["bytes"], sep=" ", small=".0f") + "B")
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
        console.print(as_text(line, style="bold yellow"), highlight=False, soft_wrap=True)


def print_prediction(console: Console, err_console: Console, expl: pd.DataFrame, label: str,
                     model=None, terms: bool = True, title_prefix: str = "") -> None:
    """Print a predicted speedup, the model's features against their training range, and each term's share.

    Parameters
    ----------
    expl : ``predictor.explain_prediction(model, x)``
    label : what was predicted (region or row name)
    model : the model, optional: when its metadata says provisional, the label line follows the prediction
    terms : print the term table (the features against their range, each term's contribution)
    title_prefix : put before the tables' titles (the model's label, so that every line names the model)
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
                      f" ({'port' if pred > 1 else 'do not port'})", highlight=False, soft_wrap=True)
    if model is not None:
        print_model_label(console, model)
    if not terms:
        _print_range_warnings(err_console, a, label)
        return
    ft = Table(title=escape(f"{title_prefix}features vs training range"), title_justify="left")
    for c in ("feature", "value", "train min", "train max", ""):
        ft.add_column(c)
    clipped = {c for c, _, _ in a.get("clipped", [])}
    for _, r in expl[expl["order"] == 1].iterrows():
        flag = "[yellow]outside: clipped to the range[/]" if r["term"] in clipped else \
            "[yellow]outside: extrapolating[/]" if r["extrapolating"] else ""
        ft.add_row(as_text(r["term"]), f"{r['value']:.6g}", f"{r['train_min']:.6g}", f"{r['train_max']:.6g}", flag)
    console.print(ft)
    scale = {"log": "log speedup (each adds to log; exp(sum) = speedup)", "sqrt": "sqrt speedup",
             "none": "speedup"}[a["transform"]]
    tt = Table(title=escape(f"{title_prefix}term contributions to {scale}"), title_justify="left")
    for c in ("term", "coefficient", "z value", "contribution"):
        tt.add_column(c)
    for _, r in expl.iterrows():
        tt.add_row(as_text(r["term"]), f"{r['coefficient']:.4g}", f"{r['z_value']:.4g}", f"{r['contribution']:+.4g}")
    tt.add_row("[bold]sum[/]", "", "", f"{a['prediction_transformed']:+.4g}")
    console.print(tt)
    _print_range_warnings(err_console, a, label)


def _print_range_warnings(err_console: Console, a: dict, label: str) -> None:
    """The warnings of a prediction outside the model's training data (features clipped or extrapolated)."""
    label = escape(label)
    if a.get("clipped"):
        what = ", ".join(f"{c} = {v:.4g} (used {b:.4g})" for c, v, b in a["clipped"])
        err_console.print(f"[yellow]warning:[/] {label}: outside the training data, so clipped to its range: "
                          f"{escape(what)}; the region is unlike every training point in these respects",
                          highlight=False, soft_wrap=True)
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


def _prediction_dict(p) -> dict:
    """A prediction as the report holds it (``RegionReport.prediction``): a :class:`GpuPrediction`'s
    ``to_dict()``, or that dict already."""
    return p if isinstance(p, dict) else p.to_dict()


def _interval(p: dict, name: str) -> tuple[float, float] | None:
    low, high = p.get(f"{name}_low"), p.get(f"{name}_high")
    return None if low is None or high is None else (low, high)


def print_gpu_prediction(console: Console, label: str, p, *, cpu_how: str = "", cpu_why: str = "") -> None:
    """Print one region's predicted GPU time, its speedups and what the prediction rests on. ``p``: the
    prediction (``RegionReport.prediction``, or a :class:`predictor.gputime_region.GpuPrediction`); ``cpu_how``:
    what was timed on the CPU when ``p["cpu_baseline"]`` does not say; ``cpu_why``: why there is no CPU time."""
    p = _prediction_dict(p)
    gpu = f"{p['gpu_name']} ({p['gpu']}, {p['generation']})"
    transfer, moved_in, moved_out = format_time(p["transfer_s"]), format_bytes(p["read_bytes"]), \
        format_bytes(p["written_bytes"])
    console.print(f"[bold]GPU time of {escape(label)}[/] on {escape(gpu)}: predicted kernel time "
                  f"[bold]{format_time(p['kernel_s'])}[/]", highlight=False, soft_wrap=True)
    if p.get("cpu_s"):
        cpu_how = p.get("cpu_baseline") or cpu_how
        how = f" ({cpu_how})" if cpu_how else ""
        console.print(f"  CPU time of the region here{escape(how)}: {format_time(p['cpu_s'])} -> "
                      f"[bold]speedup {speedup_text(p['speedup'], _interval(p, 'speedup'))}[/]", highlight=False,
                      soft_wrap=True)
        with_copies = speedup_text(p["speedup_with_transfers"], _interval(p, "speedup_with_transfers"))
        console.print(f"  with the copies over the host link ({moved_in} in, {moved_out} out: {transfer}): speedup "
                      f"{with_copies}", highlight=False, soft_wrap=True)
    else:
        console.print(f"  no speedup: the region's CPU time was not measured ({escape(cpu_why or 'not asked for')}); "
                      f"copies over the host link would take {transfer} ({moved_in} in, {moved_out} out)",
                      highlight=False, soft_wrap=True)
    notes = []
    if p.get("extrapolated"):
        notes.append(f"no GPU of the {p['generation']} generation has measured points: the prediction for it is "
                     "extrapolated from older generations")
    if p.get("out_of_range"):
        notes.append(f"outside the training range in {', '.join(p['out_of_range'])}: treat the time as a rough guide")
    if p.get("simulated_s") is None and p.get("uses_simt"):
        notes.append("the SIMT model's estimate was not available (incomplete region or sample too large)")
    for n in notes:
        console.print(f"  [yellow]note:[/] {escape(n)}", highlight=False, soft_wrap=True)


def print_model_line(console: Console, p, bounds: dict | None = None) -> None:
    """How the prediction stands to the largest physical bound, and what it rests on: the model file and the
    measured data it was trained on. ``p`` as for :func:`print_gpu_prediction`; ``bounds``: the region's bounds as
    the report holds them (``RegionReport.bounds``: ``bound``, ``lower_bound_s``), optional."""
    p = _prediction_dict(p)
    e = p.get("explanation")
    if e is not None:
        fs = format_seconds
        launches = f"{e['launches']:g} launches x " if e["launches"] != 1 else ""
        how = (f"  how: {launches}({fs(e['launch_s'])} per launch + factor {e['factor']:.3g} x the {e['term']} "
               f"estimate {fs(e['term_s'])}) = {fs(e['estimate_s'])}")
        if e["floor_decides"]:
            how += f"; below the lower bound {fs(e['bound_s'])}, which is the prediction"
        console.print(escape(how), highlight=False, soft_wrap=True)
    lower = bounds.get("lower_bound_s") if bounds is not None else None
    if lower and lower > 0 and e is not None:
        r = p["kernel_s"] / lower
        console.print(f"  the predicted time is {r:.3g}x the largest bound ({bounds['bound']}); the model never "
                      "predicts less (docs/gputime.md)", highlight=False, soft_wrap=True)
    elif lower and lower > 0:
        r = p["kernel_s"] / lower
        how = ("above it: the measured kernels of this shape ran that far above their bounds (latencies, "
               "scheduling and launch costs the bounds do not count)") if r >= 1 else \
              "below it: the model is off here, read the bound as the better figure"
        console.print(f"  the predicted time is {r:.3g}x the largest bound ({bounds['bound']}); {how}",
                      highlight=False, soft_wrap=True)

    console.print(f"  model: {escape(p['model_file'])}; trained on {escape(p['trained_on'])} (docs/gputime.md "
                  "gives its held-out errors)", highlight=False, soft_wrap=True, style="dim")
