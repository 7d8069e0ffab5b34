"""The AIWC benchmark: XAPP's protocol on real measurements nobody on this team took.

Data: ``predictor/data/aiwc/full_dat.csv.gz`` (Johnston and Milthorpe's AIWC OpenCL dataset, MIT; see
``PROVENANCE.md`` there): 104 kernel x problem-size points of 37 kernels (11 OpenDwarfs applications), 31
architecture-independent AIWC features per point, and kernel times of many runs on 15 devices.

Speedup of a point on a (CPU, GPU) pair = median CPU kernel time / median GPU kernel time over the runs.

Protocol (paper Sec. 3.3): for each of ``n_outer`` random outer splits, 12 test points are set aside and
never seen by the search; the model (subset search with internal random sub-sampling validation) is
chosen and fitted on the rest; test weighted / mean / max relative error and port decision accuracy are
recorded. The *kernel-grouped* protocol uses the same test points but also removes from training every
other size of each test kernel, so the model never sees the test kernel at all.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .baselines import LOG_CLIP, paper_baselines
from .interaction import InteractionSearchRegressor, inverse_transform
from .metrics import all_metrics

DATA_PATH = Path(__file__).parent / "data" / "aiwc" / "full_dat.csv.gz"

#: The 31 AIWC feature columns, in file order.
AIWC_FEATURES = [
    "opcode", "granularity", "barriers_per_instruction", "instructions_per_operand", "total_instruction_count",
    "workitems", "operand_sum", "total_barriers_hit", "min_instructions_to_barrier", "max_instructions_to_barrier",
    "median_instructions_to_barrier", "max_simd_width", "mean_simd_width", "stddev_simd_width",
    "total_memory_footprint", "ninety_percent_memory_footprint", "global_memory_address_entropy",
    *[f"local_memory_address_entropy_{i}" for i in range(1, 11)],
    "total_unique_branch_instructions", "ninety_percent_branch_instructions", "branch_entropy_yokota",
    "branch_entropy_average_linear",
]

#: Features rescaled by ``log10`` for the default evaluation: counts spanning up to seven orders of magnitude
#: (``log10(1 + x)``, they can be 0) and two tiny positive ratios (``log10(x)``). The memory and branch
#: entropies are already logarithms and stay as they are.
LOG1P_FEATURES = [
    "total_instruction_count", "workitems", "operand_sum", "total_barriers_hit", "min_instructions_to_barrier",
    "max_instructions_to_barrier", "median_instructions_to_barrier", "total_memory_footprint",
    "ninety_percent_memory_footprint", "branch_entropy_yokota",
]
LOG_FEATURES = ["granularity", "barriers_per_instruction"]

#: CPU -> GPU pairs evaluated by default.
DEFAULT_PLATFORMS = (("i7-6700k", "gtx1080ti"), ("xeon_es-2697v2", "k40c"))

KEY = ["application", "kernel", "size"]


def _read_raw(path=DATA_PATH) -> pd.DataFrame:
    df = pd.read_csv(path)
    need = set(KEY) | set(AIWC_FEATURES) | {"device", "kernel_time"}
    missing = sorted(need - set(df.columns))
    if missing:
        raise ValueError(f"{path}: AIWC file lacks columns {missing}")
    return df


def kernel_group(application: str, kernel: str) -> str:
    """Group of a point for the kernel-grouped holdout: ``application/kernel``.

    The four FFT kernels (fftRadix2/4/8/16Kernel) are one group ``fft``: the dataset names the FFT kernel
    by its radix, which changes with the problem size, and fftRadix2/4/8 points repeat fftRadix16 points
    of the same size (near-identical times).
    """
    if application == "fft":
        return "fft"
    return f"{application}/{kernel}"


def load_aiwc(cpu: str = "i7-6700k", gpu: str = "gtx1080ti", path=DATA_PATH) -> pd.DataFrame:
    """One row per kernel x size point: AIWC features, median kernel times and speedup on ``cpu -> gpu``.

    Parameters
    ----------
    cpu, gpu : str
        Device names as in the dataset's ``device`` column.
    path : path, optional
        The AIWC CSV (default: the vendored file).

    Returns
    -------
    pandas.DataFrame
        Columns ``application``, ``kernel``, ``size``, ``group``, the 31 features of
        :data:`AIWC_FEATURES`, ``cpu_time``, ``gpu_time`` (medians, the file's unit, apparently
        microseconds), ``n_cpu_runs``, ``n_gpu_runs`` and ``speedup``; sorted by application, kernel, size.
    """
    raw = _read_raw(path)
    devices = sorted(raw["device"].unique())
    for d in (cpu, gpu):
        if d not in devices:
            raise ValueError(f"device {d!r} is not in the AIWC data; devices: {', '.join(devices)}")
    feats = raw.groupby(KEY, sort=True)[AIWC_FEATURES].first()
    varying = raw.groupby(KEY)[AIWC_FEATURES].nunique().max()
    if (varying > 1).any():
        raise ValueError(f"AIWC features vary across runs of a point: {list(varying[varying > 1].index)}")
    times = raw[raw["device"].isin([cpu, gpu])].groupby(KEY + ["device"])["kernel_time"].agg(["median", "size"])
    med = times["median"].unstack("device")
    cnt = times["size"].unstack("device")
    out = feats.copy()
    out["cpu_time"] = med[cpu]
    out["gpu_time"] = med[gpu]
    out["n_cpu_runs"] = cnt[cpu].astype(int)
    out["n_gpu_runs"] = cnt[gpu].astype(int)
    out = out.reset_index()
    if out[["cpu_time", "gpu_time"]].isna().any().any() or (out[["cpu_time", "gpu_time"]] <= 0).any().any():
        raise ValueError(f"missing or non-positive kernel times for {cpu} or {gpu}")
    out["speedup"] = out["cpu_time"] / out["gpu_time"]
    out.insert(3, "group", [kernel_group(a, k) for a, k in zip(out["application"], out["kernel"])])
    return out


def aiwc_features(data: pd.DataFrame, scale: str = "log") -> pd.DataFrame:
    """The 31 feature columns of :func:`load_aiwc` output, raw (``scale="raw"``) or with the heavy-tailed
    columns on a log10 scale (``scale="log"``: :data:`LOG1P_FEATURES` as ``log10(1 + x)``,
    :data:`LOG_FEATURES` as ``log10(x)``).

    Parameters
    ----------
    data : DataFrame from :func:`load_aiwc`
    scale : {"log", "raw"}

    Returns
    -------
    pandas.DataFrame
    """
    X = data[AIWC_FEATURES].astype(np.float64).copy()
    if scale == "raw":
        return X
    if scale != "log":
        raise ValueError(f"scale must be 'log' or 'raw', got {scale!r}")
    for c in LOG1P_FEATURES:
        X[c] = np.log10(1.0 + X[c])
    for c in LOG_FEATURES:
        X[c] = np.log10(X[c])
    return X


def outer_test_sets(n: int, n_test: int, n_outer: int, random_state) -> list[np.ndarray]:
    """``n_outer`` random test sets of ``n_test`` point indices (simple random sampling)."""
    rng = check_random_state(random_state)
    return [np.sort(rng.permutation(n)[:n_test]) for _ in range(n_outer)]


FINAL = "XAPP (transform chosen by validation)"
FINAL_RAW = "XAPP log speedup, raw features"


def _clipped_predict(est: InteractionSearchRegressor, X) -> tuple[np.ndarray, int]:
    """Predictions with log-scale values clipped to ``LOG_CLIP`` (so an overflowing extrapolation scores a
    huge but finite error instead of aborting the evaluation), and how many were clipped."""
    v = est.predict_transformed(X)
    n = 0
    if est.transform == "log":
        n = int(np.sum(np.abs(v) > LOG_CLIP))
        v = np.clip(v, -LOG_CLIP, LOG_CLIP)
    return inverse_transform(v, est.transform), n


def _xapp_variants(k: int, n_splits: int, seed: int, transforms) -> dict[str, InteractionSearchRegressor]:
    return {
        tr: InteractionSearchRegressor(k=k, transform=tr, n_splits=n_splits, validation_size=12, random_state=seed)
        for tr in transforms
    }


def evaluate_aiwc(
    platforms: Sequence[tuple[str, str]] = DEFAULT_PLATFORMS,
    n_outer: int = 20,
    n_test: int = 12,
    n_splits: int = 20,
    k: int = 4,
    random_state: int = 0,
    baselines: bool | Sequence[str] = True,
    transforms: Sequence[str] = ("log", "none", "sqrt"),
    raw_features: bool = True,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Run the protocol; one row per (platform, protocol, outer split, model) with the test metrics.

    Models: ``XAPP`` (the transform among ``transforms`` with the best validation score, chosen on
    the training points only), the fixed-transform XAPP searches, and every baseline of
    :func:`predictor.baselines.paper_baselines`.

    Parameters
    ----------
    platforms : sequence of (cpu, gpu)
    n_outer : int
        Random outer splits.
    n_test : int
        Held-out test points per outer split.
    n_splits : int
        Internal validation splits of each subset search (the paper uses 100).
    k : int
        Features per XAPP model.
    random_state : int
    baselines : bool or sequence of str
        Evaluate the baselines (all, or those with these labels of
        :func:`predictor.baselines.paper_baselines`).
    transforms : sequence of {"log", "none", "sqrt"}
        Response transforms searched by XAPP.
    raw_features : bool
        Also run XAPP (log speedup) on the raw (not log-scaled) features.
    progress : callable(str), optional
        Called once per finished (platform, protocol, outer split).

    Returns
    -------
    pandas.DataFrame
        Columns ``platform``, ``protocol`` (``random`` or ``kernel-grouped``), ``outer``, ``model``,
        ``n_train``, ``weighted_error``, ``mean_error``, ``max_error``, ``decision_accuracy``, ``subset``
        (XAPP rows), ``seconds``.
    """
    import warnings

    rows = []
    for cpu, gpu in platforms:
        data = load_aiwc(cpu, gpu)
        plat = f"{cpu} -> {gpu}"
        feats = {"log": aiwc_features(data, "log"), "raw": aiwc_features(data, "raw")}
        y = data["speedup"].to_numpy()
        groups = data["group"].to_numpy()
        tests = outer_test_sets(len(data), n_test, n_outer, random_state)
        for o, test in enumerate(tests):
            for protocol in ("random", "kernel-grouped"):
                if protocol == "random":
                    train = np.setdiff1d(np.arange(len(data)), test)
                else:
                    train = np.flatnonzero(~np.isin(groups, groups[test]))
                ytr, yte = y[train], y[test]
                base = dict(platform=plat, protocol=protocol, outer=o, n_train=len(train))
                for scale in ("log", "raw") if raw_features else ("log",):
                    Xtr, Xte = feats[scale].iloc[train], feats[scale].iloc[test]
                    best = None
                    trs = transforms if scale == "log" else ("log",)
                    for tr, est in _xapp_variants(k, n_splits, random_state + o, trs).items():
                        t0 = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", UserWarning)
                            est.fit(Xtr, ytr)
                        pred, n_clip = _clipped_predict(est, Xte)
                        label = {"log": "XAPP log speedup", "none": "XAPP speedup", "sqrt": "XAPP sqrt speedup"}[tr]
                        row = dict(base, model=label, **all_metrics(yte, pred), n_clipped=n_clip,
                                   subset=" ".join(est.subset_), validation_score=est.best_score_,
                                   seconds=time.perf_counter() - t0)
                        if scale == "log":
                            rows.append(row)
                        if best is None or est.best_score_ < best["validation_score"]:
                            best = row
                    chosen = dict(best)
                    chosen["model"] = FINAL if scale == "log" else FINAL_RAW
                    if scale == "log":
                        chosen["subset"] = f"{best['model'].removeprefix('XAPP ')}: {best['subset']}"
                    rows.append(chosen)
                if baselines:
                    Xtr, Xte = feats["log"].iloc[train], feats["log"].iloc[test]
                    for label, est in paper_baselines(random_state=random_state + o).items():
                        if baselines is not True and label not in baselines:
                            continue
                        t0 = time.perf_counter()
                        est.fit(Xtr, ytr)
                        pred = est.predict(Xte)
                        rows.append(dict(base, model=label, **all_metrics(yte, pred),
                                         n_clipped=int(np.sum(pred >= np.exp(LOG_CLIP) * 0.999)),
                                         subset="", validation_score=np.nan, seconds=time.perf_counter() - t0))
                if progress is not None:
                    progress(f"{plat} {protocol} split {o + 1}/{n_outer}")
    return pd.DataFrame(rows)


def summarize(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and median over outer splits of every metric, per platform/protocol/model."""
    metrics = ["weighted_error", "mean_error", "max_error", "decision_accuracy", "n_train"]
    g = results.groupby(["platform", "protocol", "model"], sort=False)[metrics]
    out = g.agg(["mean", "std", "median"])
    out.columns = [f"{m}_{s}" for m, s in out.columns]
    return out.reset_index()


def _fmt_pct(mean: float, sd: float, med: float) -> str:
    def f(v):
        if np.isnan(v):
            return "n/a"
        if not np.isfinite(v):
            return "inf"
        if abs(v) >= 100:  # > 10,000 %
            return f"{v * 100:.1e}%"
        return f"{v * 100:.0f}%"

    return f"{f(mean)} ± {f(sd)} ({f(med)})"


def _fmt1(v: float) -> str:
    return f"{v * 100:.0f}%" if abs(v) < 100 else f"{v * 100:.1e}%"


def render_markdown(results: pd.DataFrame, settings: dict, command: str) -> str:
    """The docs page ``docs/aiwc-evaluation.md`` for evaluation ``results``.

    Parameters
    ----------
    results : DataFrame from :func:`evaluate_aiwc`
    settings : dict
        The evaluation settings, listed on the page.
    command : str
        The command that regenerates the page.

    Returns
    -------
    str
    """
    s = summarize(results)
    lines = [
        "# XAPP on the AIWC dataset",
        "",
        f"Generated by `{command}` (do not edit by hand; rerun the command).",
        "",
        "Data: the AIWC OpenCL dataset vendored in `predictor/data/aiwc/` (MIT; provenance there): 104 kernel x "
        "size points of 37 kernels with 31 architecture-independent features. Speedup = median CPU kernel "
        "time / median GPU kernel time over the dataset's runs.",
        "",
        "Protocol (XAPP paper Sec. 3.3): per outer split, 12 test points drawn at random are set aside; every "
        "model is chosen and fitted on the remaining points only. *random*: the other 92 points train. "
        "*kernel-grouped*: the same 12 test points, and every other size of a test kernel is also removed from "
        "training (the four FFT radix kernels count as one kernel).",
        "",
        "Features: the heavy-tailed AIWC counts (" + ", ".join(f"`{c}`" for c in LOG1P_FEATURES) + ") enter as "
        "log10(1 + x) and `granularity`, `barriers_per_instruction` as log10(x); all models see these. The row "
        f"`{FINAL_RAW}` runs XAPP on the raw values instead: products of raw counts spanning seven "
        "orders of magnitude extrapolate wildly on unseen kernels.",
        "",
        "Settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()) + ".",
        "",
        "Cells: mean ± standard deviation over the outer splits (median in parentheses). Weighted error: the "
        "paper's Table 4 footnote (weight 1 below speedup 30, 0.75 up to 100, 0.5 above), averaged over all 12 "
        "test points (the paper's 32% excludes its one outlier). Decision: port/don't-port accuracy "
        "(speedup > 1). `XAPP (transform chosen by validation)` is the final model: the response transform "
        "with the best internal validation score. The validation inside each search uses "
        f"{settings.get('n_splits')} random splits (the paper uses 100) to keep regeneration short; "
        "`--n-splits 100` runs the paper's setting.",
        "",
    ]
    for plat in s["platform"].unique():
        sp = s[s["platform"] == plat]
        lines.append(f"## {plat}")
        lines.append("")
        for protocol in ("random", "kernel-grouped"):
            sq = sp[sp["protocol"] == protocol]
            if sq.empty:
                continue
            ntr = sq["n_train_mean"].iloc[0]
            lines.append(f"### {protocol} holdout (mean training points: {ntr:.1f})")
            lines.append("")
            lines.append("| model | weighted error | mean error | max error | decision accuracy |")
            lines.append("|---|---|---|---|---|")
            for _, r in sq.iterrows():
                cells = [_fmt_pct(r[f"{m}_mean"], r[f"{m}_std"], r[f"{m}_median"])
                         for m in ("weighted_error", "mean_error", "max_error", "decision_accuracy")]
                lines.append(f"| {r['model']} | " + " | ".join(cells) + " |")
            lines.append("")
        fin = results[(results["platform"] == plat) & (results["model"] == FINAL)]
        a = fin[fin["protocol"] == "random"]["weighted_error"]
        b = fin[fin["protocol"] == "kernel-grouped"]["weighted_error"]
        if len(a) and len(b):
            worse = int((b.to_numpy() > a.to_numpy()).sum())
            lines.append(
                f"Kernel grouping (mean {fin[fin['protocol'] == 'kernel-grouped']['n_train'].mean():.1f} instead of "
                f"92 training points) moves the final model's weighted error from mean {_fmt1(a.mean())} / median "
                f"{_fmt1(a.median())} to mean {_fmt1(b.mean())} / median {_fmt1(b.median())} on the same test points; "
                f"it is worse in {worse} of {len(a)} outer splits."
            )
            lines.append("")
        clipped = results[(results["platform"] == plat) & (results["n_clipped"] > 0)]
        if len(clipped):
            per = clipped.groupby("model")["n_clipped"].sum()
            lines.append(
                "Predictions clipped at exp(700) (log-scale models extrapolating to overflow; counted as huge "
                "errors): " + ", ".join(f"{m}: {int(c)}" for m, c in per.items()) + "."
            )
            lines.append("")
        top = fin[fin["protocol"] == "random"]["subset"].value_counts().head(5)
        lines.append("Most frequently chosen final models (random holdout, transform: features):")
        lines.append("")
        for subset, cnt in top.items():
            lines.append(f"- {cnt} of {len(a)} splits: `{subset}`")
        data = load_aiwc(*plat.split(" -> "))
        sp_ = data["speedup"]
        lines.append("")
        lines.append(
            f"Speedups on this pair: min {sp_.min():.3g}, median {sp_.median():.3g}, max {sp_.max():.3g}; "
            f"{int((sp_ > 1).sum())} of {len(sp_)} points above 1."
        )
        lines.append("")
    lines.append(
        "For reference, the paper reports 32% weighted error on its 12 test kernels (26.9% on 24 kernels in the "
        "published version), on its own Pin/MICA features and CUDA ports with speedups of 5.9x to 276x. The AIWC "
        "speedups are mostly near 1 (OpenCL on both sides), where relative errors, and the 0.5/0.75 weights "
        "that reward large speedups, behave differently; the numbers are not directly comparable."
    )
    lines.append("")
    return "\n".join(lines)
