"""The experiments of papers/001 Sec. III-C, run on the vendored AIWC dataset with the device table.

``run_aiwc_experiments()`` computes every table; ``render_markdown()`` writes them as the page
docs/eiger-experiments.md (``portcast eiger evaluate aiwc --out docs/eiger-experiments.md``).

Trials: 1560 (application, kernel, size, device) points, median kernel time over the runs; metrics: the
31 AIWC metrics and the 9 machine metrics of :mod:`predictor.eiger.devices`.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np
import pandas as pd

from predictor.eiger.aiwc_trials import AIWC_METRICS, aiwc_trials
from predictor.eiger.devices import MACHINE_METRICS
from predictor.eiger.synthesis import EigerRegressor, error_metrics, kfold_predict, leave_one_group_out_predict

#: The configuration every experiment starts from (one parameter is varied at a time).
BASE = dict(n_components=10, n_clusters=4, threshold=0.01, rotation=None, input_transform="slog",
            target_transform="log2", random_state=0)
DIMENSIONS = (1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 40)
CLUSTERS = (1, 2, 3, 4, 5, 6, 8, 10, 12)
THRESHOLDS = (0.1, 0.05, 0.01, 0.005, 0.001, 0.0001)
#: Paper analogue of "GTX 480 from GTX 560Ti and C2070": one device from two of its siblings.
SIBLINGS = (("gtx1080", ("gtx1080ti", "titanx")), ("hawaii-r9-290x", ("firepro-s9150", "hawaii-r9-295x2")))
N_SPLITS = 5

Progress = Callable[[str, int, int], None]


def aiwc_matrix() -> tuple[pd.DataFrame, np.ndarray, np.ndarray, pd.DataFrame]:
    """(X, y, columns used, trial table) for the AIWC experiments; y = median kernel time."""
    df = aiwc_trials(with_devices=True)
    cols = list(AIWC_METRICS) + list(MACHINE_METRICS)
    return df[cols], df["kernel_time"].to_numpy(float), np.asarray(cols), df


def _est(**over) -> EigerRegressor:
    return EigerRegressor(**{**BASE, **over})


def _row(label: Any, y, pred, extra: dict | None = None) -> dict:
    e = error_metrics(y, pred)
    return {"setting": label, **(extra or {}), "mape": e["mape"], "median_ape": e["median_ape"],
            "mse_log10": e["mse_log10"], "n": e["n"]}


def run_aiwc_experiments(progress: Progress | None = None, dimensions=DIMENSIONS, clusters=CLUSTERS,
                         thresholds=THRESHOLDS) -> dict[str, Any]:
    """Run all experiments.

    Parameters
    ----------
    progress : optional ``progress(stage, done, total)`` callback.
    dimensions, clusters, thresholds : the swept values.

    Returns
    -------
    dict of DataFrames (``dimensions``, ``clusters``, ``thresholds``, ``rotation``, ``applications``,
    ``devices``, ``siblings``) and facts (``base``, ``n_trials``, ``baseline``, ``model``, ``seconds``).
    """
    t0 = time.perf_counter()
    X, y, cols, df = aiwc_matrix()
    Xa = X.to_numpy(float)
    plan = len(dimensions) + len(clusters) + len(thresholds) + 2 + 1 + 1 + len(SIBLINGS) + 1
    done = 0

    def tick(stage: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(stage, done, plan)

    out: dict[str, Any] = {"base": dict(BASE), "n_trials": int(len(y)), "n_metrics": int(len(cols))}

    # geometric-mean baseline under the same folds
    from sklearn.model_selection import KFold

    base_pred = np.empty_like(y)
    for tr, te in KFold(N_SPLITS, shuffle=True, random_state=0).split(Xa):
        base_pred[te] = 2.0 ** np.mean(np.log2(y[tr]))
    out["baseline"] = _row("geometric mean of training times", y, base_pred)

    def kf(label, extra=None, **over):
        pred = kfold_predict(_est(**over), Xa, y, N_SPLITS, random_state=0)
        return _row(label, y, pred, extra)

    rows = []
    for p in dimensions:
        evr = float(np.sum(_explained(Xa, p)))
        rows.append(kf(p, {"variance_kept": evr}, n_components=p))
        tick("dimensions")
    out["dimensions"] = pd.DataFrame(rows)
    rows = []
    for k in clusters:
        rows.append(kf(k, n_clusters=k))
        tick("clusters")
    out["clusters"] = pd.DataFrame(rows)
    rows = []
    for t in thresholds:
        est = _est(threshold=t).fit(Xa, y)
        rows.append(kf(t, {"terms_full_fit": sum(len(m.terms) for m in est.models_)}, threshold=t))
        tick("thresholds")
    out["thresholds"] = pd.DataFrame(rows)
    rows = []
    for rot in (None, "varimax"):
        rows.append(kf(rot or "none", rotation=rot))
        tick("rotation")
    out["rotation"] = pd.DataFrame(rows)

    apps = df["application"].to_numpy()
    pred = leave_one_group_out_predict(_est(), Xa, y, apps)
    out["applications"] = pd.DataFrame(
        [_row(a, y[apps == a], pred[apps == a]) for a in sorted(set(apps))] + [_row("all", y, pred)])
    tick("applications")
    devs = df["device"].to_numpy()
    pred = leave_one_group_out_predict(_est(), Xa, y, devs)
    out["devices"] = pd.DataFrame(
        [_row(d, y[devs == d], pred[devs == d]) for d in sorted(set(devs))] + [_row("all", y, pred)])
    tick("devices")
    rows = []
    for target, sources in SIBLINGS:
        tr = np.isin(devs, sources)
        te = devs == target
        est = _est().fit(Xa[tr], y[tr])
        rows.append(_row(target, y[te], est.predict(Xa[te]), {"trained_on": " + ".join(sources)}))
        tick("siblings")
    out["siblings"] = pd.DataFrame(rows)
    full = _est().fit(X, y)
    out["model"] = full.describe()
    out["model_r2"] = [m.r2 for m in full.models_]
    tick("full model")
    out["seconds"] = time.perf_counter() - t0
    return out


def _explained(Xa: np.ndarray, p: int) -> np.ndarray:
    est = EigerRegressor(n_components=p, input_transform=BASE["input_transform"])
    Z = est._input(Xa)
    Z = (Z - Z.mean(0)) / np.where(Z.std(0) > 0, Z.std(0), 1.0)
    s = np.linalg.svd(Z, compute_uv=False) ** 2
    return s[:p] / s.sum()


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return "n/a"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:.4g}" if abs(v) < 1 else f"{v:.1f}" if abs(v) >= 100 else f"{v:.2f}"
    return str(v)


def table_markdown(df: pd.DataFrame, headers: dict[str, str]) -> str:
    """A Markdown table of ``df``'s columns named in ``headers`` (column -> header text)."""
    cols = [c for c in headers if c in df.columns]
    lines = ["| " + " | ".join(headers[c] for c in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for i in range(len(df)):  # column by column: iterrows would turn integer columns into floats
        lines.append("| " + " | ".join(_fmt(df[c].iloc[i]) for c in cols) + " |")
    return "\n".join(lines)


ERR = {"mape": "MAPE %", "median_ape": "median APE %", "mse_log10": "MSE of log10 time", "n": "trials"}


def render_markdown(res: dict[str, Any], command: str = "portcast eiger evaluate aiwc --out docs/eiger-experiments.md"
                    ) -> str:
    """The experiments page.

    Parameters
    ----------
    res : output of :func:`run_aiwc_experiments`.
    command : the command that regenerates the page (quoted at the top).

    Returns
    -------
    Markdown text.
    """
    b = res["base"]
    base_txt = (f"{b['n_components']} principal components, {b['n_clusters']} k-means clusters, threshold "
                f"{b['threshold']}, no rotation, inputs through sign(x)*ln(1+|x|), model fitted to log2(kernel "
                f"time)")
    bl = res["baseline"]
    parts = [
        "# Eiger experiments on AIWC (generated)",
        "",
        f"Generated by `{command}` (took {res['seconds']:.0f} s). Do not edit by hand.",
        "",
        f"Data: the vendored AIWC dataset (`predictor/data/aiwc`, MIT): {res['n_trials']} trials = (application, "
        f"kernel, problem size, device) points of 11 OpenDwarfs applications on 15 devices, result = median "
        f"kernel time over the runs (the source's unit, apparently microseconds). Metrics: {res['n_metrics']} "
        "= the 31 AIWC application metrics + 9 machine metrics from `predictor/eiger/devices.csv`.",
        "",
        f"Every experiment starts from the base configuration ({base_txt}) and varies one thing. Unless "
        f"stated otherwise errors are from {N_SPLITS}-fold cross-validation (shuffled, seed 0): every trial is "
        "predicted by a model that did not see it. MAPE = mean absolute percentage error; APE = absolute "
        "percentage error; MSE of log10 time = mean squared error of log10(predicted) - log10(actual) "
        "(0.01 is a typical factor of 10^0.1 = 1.26).",
        "",
        f"Baseline (predict every trial by the geometric mean of the training times): MAPE {_fmt(bl['mape'])} %, "
        f"median APE {_fmt(bl['median_ape'])} %, MSE of log10 time {_fmt(bl['mse_log10'])}.",
        "",
        "## Varying dimensionality (retained principal components)",
        "",
        table_markdown(res["dimensions"], {"setting": "components", "variance_kept": "variance kept", **ERR}),
        "",
        "## Varying cluster count",
        "",
        table_markdown(res["clusters"], {"setting": "clusters", **ERR}),
        "",
        "## Varying the new-function threshold (adjusted R^2 gain)",
        "",
        table_markdown(res["thresholds"], {"setting": "threshold", "terms_full_fit": "terms (all data)", **ERR}),
        "",
        "## Varimax rotation",
        "",
        table_markdown(res["rotation"], {"setting": "rotation", **ERR}),
        "",
        "## Varying applications (leave one application out)",
        "",
        "Each application's trials are predicted by a model trained on the other 10 applications.",
        "",
        table_markdown(res["applications"], {"setting": "held-out application", **ERR}),
        "",
        "## Varying machine parameters (leave one device out)",
        "",
        "Each device's trials are predicted by a model trained on the other 14 devices: only the machine "
        "metrics tell the model about the held-out device.",
        "",
        table_markdown(res["devices"], {"setting": "held-out device", **ERR}),
        "",
        "The paper's setting (one GPU predicted from two others): trained on two sibling devices only.",
        "",
        table_markdown(res["siblings"], {"setting": "predicted device", "trained_on": "trained on", **ERR}),
        "",
        "## The base model fitted on all trials",
        "",
        "```",
        *res["model"],
        "```",
        "",
    ]
    return "\n".join(parts)
