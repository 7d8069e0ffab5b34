"""How close a sampled profile comes to the exact one (docs/sampling.md): the validation behind
``portcast sample-check``.

:func:`check_region` profiles one region exactly and then sampled at every (rate, seed), on fresh inputs each
time, and compares every feature, the predicted kernel time and kernel + transfer time, and says whether the
exact values lie in the sampled run's 95% intervals. :func:`run_corpus` does that over the kernel corpus and
returns one long-form DataFrame (one row per region, rate, seed and feature); :func:`tables` turns it into
markdown tables and :func:`goal_lines` into the headline figures. Nothing here prints.

Errors: a feature whose catalogue range is ``0..1`` (a fraction) is compared by its absolute error, within
:data:`FRACTION_TOLERANCE`; every other by its relative error ``|s - e| / max(|e|, 1e-12)``, within
:data:`RELATIVE_TOLERANCE`. A prediction's change is ``sampled / exact - 1`` for the kernel time, and for the
speedup (the CPU time over it) ``exact / sampled - 1``; the tables report its absolute value.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Optional

import numpy as np
import pandas as pd

#: block rates and seeds checked by default
DEFAULT_RATES = (1 / 8, 1 / 32)
DEFAULT_SEEDS = (0, 1, 2)
#: a fraction (catalogue range "0..1") is within tolerance when its absolute error is at most this
FRACTION_TOLERANCE = 0.02
#: any other feature when its relative error is at most this
RELATIVE_TOLERANCE = 0.02
#: a speedup change within this counts as close in the goal lines
SPEEDUP_TOLERANCE = 0.05
#: a feature meets the goal when this share of its (region, seed) pairs is within tolerance
GOAL_SHARE = 0.95
#: relative slack when asking whether an exact value lies in an interval (rounding of the interval's ends)
COVER_SLACK = 1e-9

#: the long-form table's columns (:func:`run_corpus`, ``validation.csv``)
COLUMNS = ["region", "size", "rate", "seed", "records", "kept_records", "threads", "kept_threads", "feature", "how",
           "kind", "exact", "sampled", "error", "tolerance", "within", "lo", "hi", "covered", "skipped"]
#: pseudo-features of a row that carry the prediction (``how`` = :data:`PREDICTION`): the kernel time and the
#: kernel + transfer time; their ``error`` is the |relative change of the speedup|, ``sampled / exact - 1`` of
#: the time being in ``exact``/``sampled``
KERNEL, TOTAL = "kernel_s", "kernel_transfer_s"
PREDICTION = "prediction"


def _fractions() -> set[str]:
    from features.catalogue import catalogue

    cat = catalogue()
    return set(cat.loc[cat["range"].astype(str).str.strip() == "0..1", "name"])


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def feature_error(exact: float, sampled: float, fraction: bool) -> float:
    """The error of ``sampled`` against ``exact``: absolute for a fraction, else relative (NaN when either is
    missing; 0 when both are the same non-finite value)."""
    if math.isnan(exact) or math.isnan(sampled):
        return 0.0 if math.isnan(exact) and math.isnan(sampled) else math.nan
    if not (math.isfinite(exact) and math.isfinite(sampled)):
        return 0.0 if exact == sampled else math.inf
    d = abs(sampled - exact)
    return d if fraction else d / max(abs(exact), 1e-12)


def covers(interval, value: float) -> Optional[bool]:
    """Whether ``value`` lies in ``interval`` ([lo, hi]) within :data:`COVER_SLACK` relative; None without one."""
    if interval is None or math.isnan(value):
        return None
    lo, hi = float(interval[0]), float(interval[1])
    slack = COVER_SLACK * max(abs(lo), abs(hi), abs(value))
    return bool(lo - slack <= value <= hi + slack)


def _change(exact: Optional[float], sampled: Optional[float]) -> float:
    if exact is None or sampled is None or not exact > 0 or not sampled > 0:
        return math.nan
    return sampled / exact - 1.0


def _times(prediction) -> tuple[Optional[float], Optional[float]]:
    if not prediction:
        return None, None
    k = _num(prediction.get("kernel_s"))
    t = _num(prediction.get("transfer_s"))
    if math.isnan(k):
        return None, None
    return k, (k + t if not math.isnan(t) else None)


def compare(region: str, exact, sampled, rate: float, seed: int, fractions: set[str] | None = None) -> dict:
    """One (rate, seed) row: ``exact`` and ``sampled`` are the two runs' region reports
    (:class:`portcast.profile_report.RegionReport`)."""
    from features.sampled import how_estimated

    fractions = _fractions() if fractions is None else fractions
    s = sampled.sample or {}
    intervals = s.get("feature_intervals") or {}
    feats = []
    for name in sorted(set(exact.features) | set(sampled.features)):
        e, v = _num(exact.features.get(name)), _num(sampled.features.get(name))
        frac = name in fractions
        err = feature_error(e, v, frac)
        ci = intervals.get(name)
        feats.append({"feature": name, "how": how_estimated(name), "kind": "fraction" if frac else "relative",
                      "exact": e, "sampled": v, "error": err,
                      "tolerance": FRACTION_TOLERANCE if frac else RELATIVE_TOLERANCE,
                      "within": bool(err <= (FRACTION_TOLERANCE if frac else RELATIVE_TOLERANCE)),
                      "lo": float(ci[0]) if ci else math.nan, "hi": float(ci[1]) if ci else math.nan,
                      "covered": covers(ci, e)})
    ek, et = _times(exact.prediction)
    sk, st = _times(sampled.prediction)
    kernel_change, total_change = _change(ek, sk), _change(et, st)
    k_ci = s.get("kernel_s_interval")
    return {
        "region": region, "rate": float(rate), "seed": int(seed),
        "records": int(exact.records), "kept_records": int(s.get("kept_records", sampled.records)),
        "sampled_records": int(s.get("records", sampled.records)),
        "thread_instances": int(s.get("thread_instances") or 0),
        "kept_thread_instances": int(s.get("kept_thread_instances") or 0),
        "exact_kernel_s": ek, "sampled_kernel_s": sk, "exact_total_s": et, "sampled_total_s": st,
        "kernel_change": kernel_change, "total_change": total_change,
        # speedup = CPU time / GPU time: its change is the inverse ratio
        "speedup_change": abs(1.0 / (1.0 + kernel_change) - 1.0) if math.isfinite(kernel_change) else math.nan,
        "speedup_with_transfers_change":
            abs(1.0 / (1.0 + total_change) - 1.0) if math.isfinite(total_change) else math.nan,
        "kernel_s_interval": list(k_ci) if k_ci else None,
        "kernel_covered": covers(k_ci, ek) if ek is not None else None,
        "features": feats,
    }


def check_region(fn: Callable, make_args: Callable[[], tuple], *, rates: Iterable[float] = DEFAULT_RATES,
                 seeds: Iterable[int] = DEFAULT_SEEDS, region: str = "", gpu: Optional[str] = None) -> list[dict]:
    """Profile ``fn(*make_args())`` once exactly and once per (rate, seed) sampled
    (:meth:`profiler.sampling.SamplePlan.at_rate`), fresh inputs each run, and compare (:func:`compare`): one
    dict per (rate, seed), its per-feature results long-form under ``"features"``."""
    from portcast.pipeline import profile
    from profiler.sampling import SamplePlan

    kw = {"gpu": gpu} if gpu else {}
    name = region or getattr(fn, "__name__", "region")
    exact = profile(fn, tuple(make_args()), sample="exact", baseline=False, **kw).regions[0]
    fractions = _fractions()
    rows = []
    for rate in rates:
        for seed in seeds:
            got = profile(fn, tuple(make_args()), sample=SamplePlan.at_rate(float(rate), seed=int(seed)),
                          baseline=False, **kw).regions[0]
            rows.append(compare(name, exact, got, rate, seed, fractions))
    return rows


def long_form(rows: list[dict], size: str = "") -> pd.DataFrame:
    """The rows of :func:`check_region` as one long table (:data:`COLUMNS`): a row per feature, and two per
    (rate, seed) for the prediction (feature :data:`KERNEL` and :data:`TOTAL`, ``how`` :data:`PREDICTION`,
    ``error`` the |speedup change|, ``covered`` whether the kernel-time interval holds the exact time)."""
    out = []
    for r in rows:
        head = {"region": r["region"], "size": size, "rate": r["rate"], "seed": r["seed"], "records": r["records"],
                "kept_records": r["kept_records"], "threads": r["thread_instances"],
                "kept_threads": r["kept_thread_instances"], "skipped": ""}
        for f in r["features"]:
            out.append({**head, **f})
        k_ci = r["kernel_s_interval"]
        for feat, e, s, err, ci, cov in (
                (KERNEL, r["exact_kernel_s"], r["sampled_kernel_s"], r["speedup_change"], k_ci, r["kernel_covered"]),
                (TOTAL, r["exact_total_s"], r["sampled_total_s"], r["speedup_with_transfers_change"], None, None)):
            out.append({**head, "feature": feat, "how": PREDICTION, "kind": "relative",
                        "exact": math.nan if e is None else e, "sampled": math.nan if s is None else s,
                        "error": err, "tolerance": SPEEDUP_TOLERANCE,
                        "within": bool(err <= SPEEDUP_TOLERANCE) if math.isfinite(err) else None,
                        "lo": k_ci[0] if ci else math.nan, "hi": k_ci[1] if ci else math.nan, "covered": cov})
    return pd.DataFrame(out, columns=COLUMNS)


def run_corpus(size: str = "small", kernels: Optional[Iterable[str]] = None, rates: Iterable[float] = DEFAULT_RATES,
               seeds: Iterable[int] = DEFAULT_SEEDS, progress: Optional[Callable[[str], None]] = None,
               input_seed: int = 0) -> pd.DataFrame:
    """:func:`check_region` on every corpus kernel (or those named) at ``size``: the long-form table
    (:func:`long_form`); a kernel whose region raises gives one row with ``skipped`` saying why.
    ``progress(name)`` is called after each kernel. Raises ValueError for an unknown kernel or size."""
    from kernels.registry import all_kernels

    specs = all_kernels()
    names = list(kernels) if kernels else list(specs)
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise ValueError(f"unknown kernel(s): {', '.join(unknown)} (known: {', '.join(sorted(specs))})")
    rates, seeds = [float(r) for r in rates], [int(s) for s in seeds]
    parts = []
    for name in names:
        spec = specs[name]
        if size not in spec.sizes:
            raise ValueError(f"unknown size {size!r} for {name} (sizes: {', '.join(spec.sizes)})")
        n = spec.sizes[size]
        try:
            rows = check_region(spec.cpu, lambda spec=spec, n=n: spec.make_inputs(n, input_seed), rates=rates,
                                seeds=seeds, region=name)
            parts.append(long_form(rows, size))
        except Exception as exc:  # a region that raises is recorded, not fatal
            why = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:300]
            parts.append(pd.DataFrame([{"region": name, "size": size, "skipped": why}], columns=COLUMNS))
        if progress is not None:
            progress(name)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)


# -- tables ---------------------------------------------------------------------------------------------------

def _features(df: pd.DataFrame) -> pd.DataFrame:
    return df[(df["skipped"].fillna("") == "") & (df["how"] != PREDICTION)]


def _pred(df: pd.DataFrame) -> pd.DataFrame:
    return df[(df["skipped"].fillna("") == "") & (df["feature"] == KERNEL)]


def _rate_label(rate: float) -> str:
    return f"1/{round(1 / rate)}" if rate > 0 and abs(1 / rate - round(1 / rate)) < 1e-9 else f"{rate:g}"


def _pct(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _g(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3g}"


def _share(s: pd.Series) -> float:
    s = s.dropna()
    return float(s.astype(bool).mean()) if len(s) else math.nan


def _quantile(s: pd.Series, q: float) -> float:
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(np.quantile(s, q)) if len(s) else math.nan


def markdown(frame: pd.DataFrame) -> str:
    """A DataFrame as a markdown table (every cell as its text)."""
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def per_feature(df: pd.DataFrame) -> pd.DataFrame:
    """Per feature and rate: the share of (region, seed) pairs within tolerance, the median and 95th percentile
    error, the share of intervals that hold the exact value (of the pairs with an interval)."""
    f = _features(df)
    rows = []
    for (feat, rate), g in sorted(f.groupby(["feature", "rate"]), key=lambda kv: (kv[0][0], -kv[0][1])):
        rows.append({"feature": feat, "how": g["how"].iloc[0], "kind": g["kind"].iloc[0], "rate": rate,
                     "pairs": len(g), "within": _share(g["within"]), "median_error": _quantile(g["error"], 0.5),
                     "p95_error": _quantile(g["error"], 0.95), "intervals": int(g["covered"].notna().sum()),
                     "coverage": _share(g["covered"])})
    return pd.DataFrame(rows)


def per_region(df: pd.DataFrame) -> pd.DataFrame:
    """Per region and rate: records, the share kept, the median and largest |speedup change| over the seeds, the
    share of seeds whose kernel-time interval holds the exact time, the share of features within tolerance."""
    p = _pred(df)
    f = _features(df)
    rows = []
    for (region, rate), g in p.groupby(["region", "rate"], sort=False):
        ff = f[(f["region"] == region) & (f["rate"] == rate)]
        threads = g["threads"].replace(0, np.nan)
        rows.append({"region": region, "rate": rate, "records": int(g["records"].iloc[0]),
                     "kept_share": float((g["kept_records"] / g["records"]).median()),
                     "threads": int(g["threads"].iloc[0]),
                     "kept_threads": float((g["kept_threads"] / threads).median()) if threads.notna().any()
                     else math.nan, "no_thread_runs": int(((g["threads"] > 0) & (g["kept_threads"] == 0)).sum()),
                     "median_speedup_change": _quantile(g["error"], 0.5),
                     "max_speedup_change": float(g["error"].max()) if g["error"].notna().any() else math.nan,
                     "kernel_covered": _share(g["covered"]), "features_within": _share(ff["within"])})
    return pd.DataFrame(rows)


def per_kind(df: pd.DataFrame) -> pd.DataFrame:
    """Per estimate kind (exact, address, scaled, ratio) and rate: (region, feature) pairs within tolerance,
    features meeting the goal (>= :data:`GOAL_SHARE` of their pairs within), interval coverage."""
    f = _features(df)
    pf = per_feature(df)
    rows = []
    for (how, rate), g in sorted(f.groupby(["how", "rate"]), key=lambda kv: (kv[0][0], -kv[0][1])):
        k = pf[(pf["how"] == how) & (pf["rate"] == rate)]
        rows.append({"how": how, "rate": rate, "features": len(k), "pairs": len(g), "within": _share(g["within"]),
                     "features_meeting_goal": float((k["within"] >= GOAL_SHARE).mean()) if len(k) else math.nan,
                     "coverage": _share(g["covered"])})
    return pd.DataFrame(rows)


def goal(df: pd.DataFrame) -> pd.DataFrame:
    """The headline figures per rate (:func:`goal_lines`)."""
    f = _features(df)
    p = _pred(df)
    pf = per_feature(df)
    rows = []
    for rate in sorted(f["rate"].dropna().unique(), reverse=True):
        g, k, q = f[f["rate"] == rate], pf[pf["rate"] == rate], p[p["rate"] == rate]
        frac, rel = g[g["kind"] == "fraction"], g[g["kind"] == "relative"]
        err = pd.to_numeric(q["error"], errors="coerce").dropna()
        total = df[(df["feature"] == TOTAL) & (df["rate"] == rate)]
        terr = pd.to_numeric(total["error"], errors="coerce").dropna()
        rows.append({
            "rate": rate, "regions": int(g["region"].nunique()), "pairs": len(g),
            "runs": len(q), "no_thread_runs": int(((q["threads"] > 0) & (q["kept_threads"] == 0)).sum()),
            "within": _share(g["within"]), "fractions_within": _share(frac["within"]),
            "within_when_kept": _share(g.loc[(g["threads"] == 0) | (g["kept_threads"] > 0), "within"]),
            "counts_within": _share(rel["within"]), "features": len(k),
            "features_meeting_goal": float((k["within"] >= GOAL_SHARE).mean()) if len(k) else math.nan,
            "predictions": len(err),
            "median_speedup_change": float(err.median()) if len(err) else math.nan,
            "max_speedup_change": float(err.max()) if len(err) else math.nan,
            "speedup_within_5pct": float((err <= SPEEDUP_TOLERANCE).mean()) if len(err) else math.nan,
            "median_speedup_with_transfers_change": float(terr.median()) if len(terr) else math.nan,
            "max_speedup_with_transfers_change": float(terr.max()) if len(terr) else math.nan,
            "feature_intervals": int(g["covered"].notna().sum()), "feature_coverage": _share(g["covered"]),
            "kernel_intervals": int(q["covered"].notna().sum()), "kernel_coverage": _share(q["covered"]),
        })
    return pd.DataFrame(rows)


def goal_lines(df: pd.DataFrame) -> list[str]:
    """The headline figures as sentences, one group per rate (figures as they are)."""
    out = []
    for r in goal(df).to_dict("records"):
        lab = _rate_label(r["rate"])
        out += [
            f"rate {lab}: {_pct(r['within'])} of {r['pairs']:,} (region, feature) pairs within tolerance "
            f"(fractions within {FRACTION_TOLERANCE} absolute: {_pct(r['fractions_within'])}; others within "
            f"{100 * RELATIVE_TOLERANCE:g}%: {_pct(r['counts_within'])}), {r['regions']} regions",
            f"rate {lab}: {_pct(r['features_meeting_goal'])} of {r['features']} features within tolerance in "
            f">= {100 * GOAL_SHARE:g}% of (region, seed) pairs",
            f"rate {lab}: |speedup change| median {_pct(r['median_speedup_change'])}, max "
            f"{_pct(r['max_speedup_change'])}, within {100 * SPEEDUP_TOLERANCE:g}% in "
            f"{_pct(r['speedup_within_5pct'])} of {r['predictions']} predictions (with transfers: median "
            f"{_pct(r['median_speedup_with_transfers_change'])}, max {_pct(r['max_speedup_with_transfers_change'])})",
            f"rate {lab}: 95% intervals hold the exact value for {_pct(r['feature_coverage'])} of "
            f"{r['feature_intervals']:,} feature intervals and {_pct(r['kernel_coverage'])} of "
            f"{r['kernel_intervals']} kernel-time intervals",
            f"rate {lab}: {r['no_thread_runs']} of {r['runs']} sampled runs kept no thread block (their features "
            f"come from the host records alone); in the others {_pct(r['within_when_kept'])} of the (region, "
            "feature) pairs are within tolerance",
        ]
    return out


def skipped(df: pd.DataFrame) -> pd.DataFrame:
    """The regions left out and why."""
    s = df[df["skipped"].fillna("") != ""]
    return s[["region", "skipped"]].drop_duplicates().reset_index(drop=True)


def worst_features(df: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The ``n`` features with the smallest share within tolerance at the lowest rate (ties: larger p95 error)."""
    pf = per_feature(df)
    if pf.empty:
        return pf
    low = pf[pf["rate"] == pf["rate"].min()]
    return low.sort_values(["within", "p95_error"], ascending=[True, False]).head(n).reset_index(drop=True)


def tables(df: pd.DataFrame) -> dict[str, str]:
    """Markdown tables of a :func:`run_corpus` table: ``goal`` (the headline figures per rate), ``kinds`` (per
    estimate kind), ``features`` (per feature), ``worst`` (the 10 worst features), ``regions`` (per region) and
    ``skipped`` (regions left out; empty text when none)."""
    g = goal(df)
    goal_t = pd.DataFrame({
        "rate": g["rate"].map(_rate_label), "regions": g["regions"], "pairs": g["pairs"],
        "within tolerance": g["within"].map(_pct), "fractions within 0.02": g["fractions_within"].map(_pct),
        "others within 2%": g["counts_within"].map(_pct),
        "features >= 95% within": [f"{_pct(a)} of {b}" for a, b in zip(g["features_meeting_goal"], g["features"])],
        "median abs speedup change": g["median_speedup_change"].map(_pct),
        "max abs speedup change": g["max_speedup_change"].map(_pct),
        "speedup within 5%": g["speedup_within_5pct"].map(_pct),
        "feature interval coverage": g["feature_coverage"].map(_pct),
        "kernel-time interval coverage": g["kernel_coverage"].map(_pct),
        "runs keeping no thread": [f"{a} of {b}" for a, b in zip(g["no_thread_runs"], g["runs"])]})

    def feature_frame(pf):
        return pd.DataFrame({
            "feature": pf["feature"], "how": pf["how"],
            "error": pf["kind"].map({"fraction": "abs", "relative": "rel"}), "rate": pf["rate"].map(_rate_label),
            "within tolerance": pf["within"].map(_pct), "median error": pf["median_error"].map(_g),
            "p95 error": pf["p95_error"].map(_g),
            "interval coverage": [f"{_pct(c)} of {n}" if n else "-" for c, n in zip(pf["coverage"],
                                                                                     pf["intervals"])]})

    k = per_kind(df)
    kinds_t = pd.DataFrame({"how": k["how"], "rate": k["rate"].map(_rate_label), "features": k["features"],
                            "pairs": k["pairs"], "within tolerance": k["within"].map(_pct),
                            "features >= 95% within": k["features_meeting_goal"].map(_pct),
                            "interval coverage": k["coverage"].map(_pct)})
    r = per_region(df)
    regions_t = pd.DataFrame({
        "region": r["region"], "rate": r["rate"].map(_rate_label), "records": r["records"].map("{:,}".format),
        "records kept": r["kept_share"].map(_pct), "thread runs": r["threads"].map("{:,}".format),
        "thread runs kept": r["kept_threads"].map(_pct), "runs keeping no thread": r["no_thread_runs"],
        "median abs speedup change": r["median_speedup_change"].map(_pct),
        "max abs speedup change": r["max_speedup_change"].map(_pct),
        "kernel-time interval covers exact": r["kernel_covered"].map(_pct),
        "features within tolerance": r["features_within"].map(_pct)})
    s = skipped(df)
    return {"goal": markdown(goal_t), "kinds": markdown(kinds_t), "worst": markdown(feature_frame(worst_features(df))),
            "features": markdown(feature_frame(per_feature(df))), "regions": markdown(regions_t),
            "skipped": markdown(s) if len(s) else ""}
