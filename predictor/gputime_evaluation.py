"""The GPU-time model's evaluation on the measured kernels (docs/gputime.md, docs/gputime/evaluation.md).

:func:`evaluate`: leave-one-application-out (every size and GPU of the held-out application removed from
training, the feature search included), leave-one-GPU-out (a GPU model, both data sources, held out),
older-generations -> Pascal, leave-one-generation-out and the largest size. Errors on GPU time, and on speedup
against the single-thread CPU time of each port measured here (``kernels/measured/data/cpu_times.csv``)
(:func:`score`), as Markdown and a plot; and the physical laws (:mod:`predictor.physics`) each variant breaks
(:func:`physics_table`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from predictor.gputime_training import application_weights, fit_predict, impute_features, reads_simt, variants

#: the held-out splits of :func:`evaluate`
SPLITS = ("application", "gpu", "pascal", "generation", "largest")


#: generations the leave-one-generation-out split tests in turn (each on a model of every older generation)
NEWER_GENERATIONS = ("Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell")


def folds(frame: pd.DataFrame, split: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, training rows, test rows) of a split: ``application`` (leave one out), ``gpu`` (one SIMT preset,
    i.e. GPU model, out; both data sources), ``pascal`` (train on Kepler and Maxwell, test on Pascal) or
    ``generation`` (for each of :data:`NEWER_GENERATIONS` with rows: train on every strictly older generation,
    test on that one) or ``largest`` (extrapolation in size: every port's largest point, by trace records, is
    tested on a model trained on every smaller point of every port; ports measured at one size only are left
    out)."""
    if split == "largest":
        size = frame.groupby(["port", "point"])["records"].first().reset_index()
        top = size.loc[size.groupby("port")["records"].idxmax()]
        several = size.groupby("port")["point"].nunique()
        top = top[top["port"].map(several) > 1]
        largest = set(zip(top["port"], top["point"]))
        te_mask = np.array([k in largest for k in zip(frame["port"], frame["point"])], dtype=bool)
        return [("largest size", np.nonzero(~te_mask)[0], np.nonzero(te_mask)[0])]
    if split == "generation":
        from gpu_models.simt.config import GENERATION_ORDER

        rank = {g: i for i, g in enumerate(GENERATION_ORDER)}
        gen_rank = frame["generation"].map(rank).to_numpy()
        out = []
        for g in NEWER_GENERATIONS:
            te = np.nonzero((frame["generation"] == g).to_numpy())[0]
            tr = np.nonzero(gen_rank < rank[g])[0]
            if len(te) and len(tr):
                out.append((g, tr, te))
        return out
    if split == "application":
        keys = frame["application"]
    elif split == "gpu":
        keys = frame["preset"]
    elif split == "pascal":
        te = np.nonzero((frame["generation"] == "Pascal").to_numpy())[0]
        tr = np.nonzero(frame["generation"].isin(["Kepler", "Maxwell"]).to_numpy())[0]
        return [("Pascal", tr, te)]
    else:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    out = []
    for k in sorted(keys.unique()):
        mask = (keys == k).to_numpy()
        out.append((str(k), np.nonzero(~mask)[0], np.nonzero(mask)[0]))
    return out


def evaluate(frame: pd.DataFrame, names: Iterable[str] | None = None, splits: Iterable[str] = SPLITS,
             progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Held-out predictions: one row per (variant, split, frame row) with ``predicted_s`` beside the row's
    keys and ``measured_s``; every prediction comes from a model that never saw the row's fold."""
    table = variants()
    names = list(table) if names is None else list(names)
    parts = []
    for split in splits:
        for fold, tr, te in folds(frame, split):
            for name in names:
                if progress:
                    progress(f"{split}: {fold}: {name}")
                pred = fit_predict(table[name], frame.iloc[tr], frame.iloc[te])
                part = frame.iloc[te][["port", "point", "gpu", "preset", "application", "source", "generation",
                                       "measured_s"]].copy()
                part["variant"], part["split"], part["fold"], part["predicted_s"] = name, split, fold, pred
                parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _weighted(actual_speedup: np.ndarray, rel: np.ndarray) -> float:
    from predictor.metrics import speedup_weights

    return float(np.mean(speedup_weights(actual_speedup) * np.abs(rel)))


def score(pred: pd.DataFrame, cpu: pd.DataFrame | None = None, by: Iterable[str] = ()) -> pd.DataFrame:
    """Per (split, variant, and each of ``by``, e.g. ``source`` or ``fold``): pairs, median / mean absolute
    relative error of the GPU time, the median over applications of each application's median error; with ``cpu``
    (columns port, point, cpu_s): the errors of the speedup (CPU time / GPU time), XAPP's weighted error (weights
    by the measured speedup's class) and the port / don't-port accuracy (speedup > 1)."""
    p = pred.copy()
    p["rel"] = p["predicted_s"] / p["measured_s"] - 1.0
    if cpu is not None:
        p = p.merge(cpu[["port", "point", "cpu_s"]], on=["port", "point"], how="left")
    rows = []
    keys = ["split", "variant", *by]
    for key, g in p.groupby(keys, sort=False):
        ok = np.isfinite(g["predicted_s"].to_numpy()) & (g["predicted_s"].to_numpy() > 0)
        g = g[ok]
        if g.empty:
            continue
        e = np.abs(g["rel"].to_numpy())
        row = {**dict(zip(keys, key)), "pairs": len(g), "median_error": float(np.median(e)),
               "mean_error": float(np.mean(e)),
               "median_of_applications": float(g.assign(e=e).groupby("application")["e"].median().median())}
        if cpu is not None and g["cpu_s"].notna().any():
            h = g[g["cpu_s"].notna()]
            actual = h["cpu_s"].to_numpy() / h["measured_s"].to_numpy()
            predicted = h["cpu_s"].to_numpy() / h["predicted_s"].to_numpy()
            srel = predicted / actual - 1.0
            row.update({"speedup_pairs": len(h), "speedup_median_error": float(np.median(np.abs(srel))),
                        "speedup_mean_error": float(np.mean(np.abs(srel))),
                        "speedup_weighted_error": _weighted(actual, srel),
                        "time_weighted_error": _weighted(actual, h["rel"].to_numpy()),
                        "port_accuracy": float(np.mean((actual > 1) == (predicted > 1))),
                        "ported_fraction": float(np.mean(actual > 1))})
        rows.append(row)
    return pd.DataFrame(rows)


PROVISIONAL = "provisional speedup model (simulated H100)"


def provisional_predictions(frame: pd.DataFrame, points: pd.DataFrame, cpu: pd.DataFrame,
                            splits: Iterable[str] = SPLITS) -> pd.DataFrame:
    """The old default speedup model's predictions turned into GPU times (CPU time here / its predicted
    speedup) for every row with a CPU time, repeated under each split (it was trained on the corpus, so every
    measured application is held out from it)."""
    from predictor import load_model
    from predictor.model_io import DEFAULT_MODEL_FILE

    m = load_model(DEFAULT_MODEL_FILE)
    feats = impute_features(points)
    x = feats[["port", "point", *(f"f_{c}" for c in m.subset_)]].rename(columns={f"f_{c}": c for c in m.subset_})
    x = x.dropna()
    x["speedup"] = m.predict(x[list(m.subset_)])
    rows = frame.merge(x[["port", "point", "speedup"]], on=["port", "point"]).merge(
        cpu[["port", "point", "cpu_s"]], on=["port", "point"])
    rows["predicted_s"] = rows["cpu_s"] / rows["speedup"]
    parts = []
    for split in splits:
        keep = (rows[rows["generation"] == "Pascal"] if split == "pascal"
                else rows[rows["generation"].isin(NEWER_GENERATIONS)] if split == "generation" else rows)
        part = keep[["port", "point", "gpu", "preset", "application", "source", "generation", "measured_s",
                     "predicted_s"]].copy()
        part["variant"], part["split"], part["fold"] = PROVISIONAL, split, "all"
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


SPLIT_TITLES = {"application": "Leave one application out", "gpu": "Leave one GPU out",
                "pascal": "Trained on Kepler and Maxwell, tested on Pascal",
                "generation": "Leave one generation out: trained on every older generation, tested on each newer one",
                "largest": "Trained on the smaller sizes, tested on every port's largest size"}


def evaluation_markdown(scores: pd.DataFrame, frame: pd.DataFrame) -> str:
    """The evaluation tables (one per split) as Markdown."""
    def pct(v):
        return "-" if v != v else f"{100 * v:.0f}%"

    lines = [f"{len(frame)} measured (port, point, GPU) rows; {frame['application'].nunique()} applications, "
             f"{frame['preset'].nunique()} GPU models ({frame['gpu'].nunique()} GPU x data-source pairs).", ""]
    for split, g in scores.groupby("split", sort=False):
        lines += [f"**{SPLIT_TITLES.get(split, split)}**", "",
                  "| model | pairs | median error | mean error | median of per-application medians | "
                  "speedup median error | speedup mean error | speedup weighted error | port/don't-port "
                  "(measured speedup > 1 in " + pct(float(g["ported_fraction"].iloc[0]) if "ported_fraction" in g
                                                    else float("nan")) + ") |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in g.sort_values("median_error").itertuples(index=False):
            d = r._asdict()
            lines.append(f"| {r.variant} | {r.pairs} | {pct(r.median_error)} | {pct(r.mean_error)} | "
                         f"{pct(r.median_of_applications)} | {pct(d.get('speedup_median_error', float('nan')))} | "
                         f"{pct(d.get('speedup_mean_error', float('nan')))} | "
                         f"{pct(d.get('speedup_weighted_error', float('nan')))} | "
                         f"{pct(d.get('port_accuracy', float('nan')))} |")
        lines.append("")
    return "\n".join(lines)


def per_fold_markdown(pred: pd.DataFrame, variant: str, split: str, by: str = "fold") -> str:
    """Median error of one variant per held-out fold (application or GPU; ``by="application"``: per application
    within the split's held-out rows) as Markdown."""
    p = pred[(pred["variant"] == variant) & (pred["split"] == split)].copy()
    p = p[np.isfinite(p["predicted_s"].to_numpy(np.float64))]  # rows a SIMT-reading model could not predict
    p["e"] = (p["predicted_s"] / p["measured_s"] - 1.0).abs()
    t = p.groupby(by).agg(pairs=("e", "size"), median=("e", "median"), mean=("e", "mean")).reset_index()
    lines = ["| held out | pairs | median error | mean error |", "|---|---|---|---|"]
    for r in t.itertuples(index=False):
        lines.append(f"| {getattr(r, by)} | {r.pairs} | {100 * r.median:.0f}% | {100 * r.mean:.0f}% |")
    return "\n".join(lines)


def source_markdown(pred: pd.DataFrame, variant: str) -> str:
    """Median and mean error of one variant per data source, under each split, as Markdown (one row per split
    and source)."""
    p = pred[pred["variant"] == variant].copy()
    p = p[np.isfinite(p["predicted_s"].to_numpy(np.float64))]
    p["e"] = (p["predicted_s"] / p["measured_s"] - 1.0).abs()
    lines = ["| split | source | pairs | applications | median error | mean error |", "|---|---|---|---|---|---|"]
    for (split, source), g in p.groupby(["split", "source"], sort=False):
        lines.append(f"| {SPLIT_TITLES.get(split, split)} | {source} | {len(g)} | {g['application'].nunique()} | "
                     f"{100 * g['e'].median():.0f}% | {100 * g['e'].mean():.0f}% |")
    return "\n".join(lines)


def evaluation_plot(pred: pd.DataFrame, variants_shown: Iterable[str], out) -> Path:
    """Predicted against measured kernel time, leave-one-application-out, one panel per variant (log axes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from core.atomic import atomic_path

    shown = list(variants_shown)
    fig, axes = plt.subplots(1, len(shown), figsize=(4.2 * len(shown), 4.2), squeeze=False)
    p = pred[pred["split"] == "application"]
    for ax, v in zip(axes[0], shown):
        g = p[p["variant"] == v]
        for app, h in g.groupby("application"):
            ax.scatter(h["measured_s"] * 1e6, h["predicted_s"] * 1e6, s=6, label=app, alpha=0.7)
        lo, hi = 1.0, 1e5
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.set_xscale("log"), ax.set_yscale("log"), ax.set_xlim(lo, hi), ax.set_ylim(lo, hi)
        ax.set_xlabel("measured kernel time (us)"), ax.set_ylabel("predicted (us)"), ax.set_title(v, fontsize=9)
    if p["application"].nunique() <= 20:  # beyond that a legend hides the points
        axes[0][-1].legend(fontsize=6, loc="lower right", ncol=2)
    fig.tight_layout()
    out = Path(out)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return out


def count_predictor(model) -> Callable:
    """``predict(counts, cfg) -> (seconds, Bounds)`` of a fitted model on a program's work counts and features
    (:mod:`predictor.physics`), through the one input row of every prediction
    (:func:`predictor.gputime_inputs.region_inputs`; no SIMT estimate: the generated programs have none)."""
    from predictor.gputime_inputs import region_inputs

    def predict(counts, cfg):
        row, b = region_inputs(model, counts, cfg)
        return float(model.predict(pd.DataFrame([row]))[0]), b

    return predict


def physics_table(frame: pd.DataFrame, names: Iterable[str], *, samples: int = 40, seed: int = 0) -> pd.DataFrame:
    """Laws of :mod:`predictor.physics` broken by each variant fitted on every row of ``frame``: one row per
    variant with the count of violations per law over ``samples`` generated programs per GPU preset (variants
    that need the SIMT estimate, which generated programs do not have, are left out)."""
    from gpu_models.simt.config import preset_names
    from predictor.physics import LAWS, violations

    table = variants()
    rows = []
    for name in names:
        v = table[name]
        if not callable(v):
            continue
        m = v()
        if reads_simt(m) or getattr(m, "family", "") in ("gbm-residual", "simt-calibrated"):
            continue
        m.fit(frame, frame["measured_s"].to_numpy(), gpu=frame["preset"].to_numpy(),
              sample_weight=application_weights(frame))
        if getattr(m, "needs_simt", False):
            continue
        got = violations(count_predictor(m), preset_names(), samples=samples, seed=seed)
        rows.append({"variant": name, **got, "programs": samples * len(preset_names())})
    return pd.DataFrame(rows, columns=["variant", *LAWS, "programs"])


def physics_markdown(table: pd.DataFrame) -> str:
    """:func:`physics_table` as Markdown."""
    from predictor.physics import LAWS

    lines = ["| model | " + " | ".join(LAWS) + " | programs |", "|---" * (len(LAWS) + 2) + "|"]
    for r in table.itertuples(index=False):
        d = r._asdict()
        lines.append(f"| {d['variant']} | " + " | ".join(str(d[k]) for k in LAWS) + f" | {d['programs']} |")
    return "\n".join(lines)
