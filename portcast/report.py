"""What Portcast tells a person about a region: its GPU-relevant features, the lines behind them, and a
predicted speedup with the terms that make it.

Used by ``portcast profile``, ``portcast record`` and ``portcast predict`` so the three speak alike.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

#: The features a porter reads first, with what a high or low value means on a GPU (papers/004 Table 1).
KEY_FEATURES: tuple[tuple[str, str, str], ...] = (
    ("warp_threads", "{:,.0f}", "parallel-loop iterations = GPU threads available"),
    ("warp_parallelFraction", "{:.3f}", "share of the work inside the parallel loop"),
    ("ilp32", "{:.2f}", "ILP in a 32-instruction window (per-thread latency hiding)"),
    ("ilp16384", "{:.1f}", "ILP in a 16384-instruction window (independent work overall)"),
    ("warp_coalescing", "{:.3f}", "ideal / actual 32-byte sectors per warp access (1 = fully coalesced)"),
    ("locStrideOther", "{:.3f}", "share of per-instruction strides > 128 B (memory divergence)"),
    ("warp_bdiv", "{:.3f}", "share of warp branch groups that diverge"),
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
    for c in ("what", "share", "line", "source"):
        t.add_column(c, no_wrap=c != "source")
    for feature, rows in explanation.groupby("feature", sort=False):
        if feature in series.index and float(series[feature]) < MIN_EXPLAINED:
            continue  # e.g. one divergent loop-exit group in thousands: not a weak spot worth a line
        for _, r in rows.head(top).iterrows():
            t.add_row(EXPLAIN_TITLES.get(feature, feature), f"{float(r['share']):.0%}", str(r["location"]),
                      str(r["text"]).strip())
    console.print(t)


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
                     model=None) -> None:
    """Print a predicted speedup, the model's features against their training range, and each term's share.

    Parameters
    ----------
    expl : ``predictor.explain_prediction(model, x)``
    label : what was predicted (region or row name)
    model : the model, optional: when its metadata says provisional, the label line follows the prediction
    """
    a = expl.attrs
    console.print(f"[bold]{label}[/]: predicted speedup [bold]{a['prediction']:.3g}x[/]"
                  f" ({'port' if a['prediction'] > 1 else 'do not port'})", highlight=False)
    if model is not None:
        print_model_label(console, model)
    ft = Table(title="features vs training range", title_justify="left")
    for c in ("feature", "value", "train min", "train max", ""):
        ft.add_column(c)
    for _, r in expl[expl["order"] == 1].iterrows():
        flag = "[yellow]outside: extrapolating[/]" if r["extrapolating"] else ""
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
    if a["extrapolating"]:
        err_console.print(f"[yellow]warning:[/] {label}: features outside the training range; the prediction "
                          "extrapolates and may be far off", highlight=False)
    if a["transform"] == "none" and a["prediction"] <= 0:
        err_console.print(f"[yellow]warning:[/] {label}: the linear model predicts a non-positive speedup",
                          highlight=False)


def predict_regions(console: Console, err_console: Console, model_path: Path | None, results) -> list[dict]:
    """Predict and explain the speedup of each profiled region, or say why no prediction can be made.

    Parameters
    ----------
    model_path : model file (``portcast train``); None = the shipped default model, if there is one
    results : list of (RegionInfo, feature Series), as in ``features.FeatureSink.results``

    Returns
    -------
    list of dict
        ``region``, ``invocation``, ``predicted_speedup`` per region (empty when no model is available).
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
        expl = explain_prediction(model, series[list(model.subset_)].astype(float).to_dict())
        print_prediction(console, err_console, expl, label, model=model)
        out.append({"region": info.name, "invocation": info.invocation,
                    "predicted_speedup": float(expl.attrs["prediction"])})
    return out
