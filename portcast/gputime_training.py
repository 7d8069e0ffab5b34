"""The GPU-time model's data, training and evaluation on the measured kernels (docs/gputime.md).

Training rows are the measured points of :mod:`portcast.measured_ports`: one row per (port, point, GPU) with the
GPU's measured kernel time, the point's work counts and features (committed table
``kernels/measured/data/measured_points.parquet``), the GPU's description (its SIMT preset) and the SIMT model's
estimate. A point traced without features (more records than the table's feature bound) takes the rate
features of the largest point of the same port that has them (rates change little with size; its work
counts are its own); ``features_from`` says which.

Evaluation (:func:`evaluate`): leave-one-application-out (every size and GPU of the held-out application
removed from training, the feature search included), leave-one-GPU-out (a GPU model, both data sources, held
out) and older-generations -> Pascal. Errors on GPU time, and on speedup against the single-thread CPU time
of each port measured here (``kernels/measured/data/cpu_times.csv``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from gpu_models.simt.config import preset_generations
from predictor.gputime import RATE_FEATURES, WORK_KEYS, GpuTimeModel, design

#: preset -> GPU generation, for every preset (for the Pascal hold-out and the extrapolation note): the presets' own
#: ``generation`` field, read once at import (``gpu_models.simt.config.preset_generations``; their order, oldest
#: first: ``gpu_models.simt.config.GENERATION_ORDER``)
GENERATIONS = preset_generations()

#: the held-out splits of :func:`evaluate`
SPLITS = ("application", "gpu", "pascal", "generation", "largest")

#: generations the leave-one-generation-out split tests in turn (each on a model of every older generation)
NEWER_GENERATIONS = ("Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell")


def gpu_columns(preset) -> dict:
    """The GPU description numbers the tree models use (:data:`predictor.gputime.GPU_KEYS`) of a SIMT preset (a
    name or a :class:`gpu_models.simt.config.GPUConfig`)."""
    from gpu_models.simt.config import load_config

    c = load_config(preset) if isinstance(preset, str) else preset
    return {"sm_count": c.sm_count, "core_mhz": c.core_mhz, "dram_gb_s": c.dram_bytes_per_ns(),
            "l2_bytes": c.l2_bytes, "schedulers_per_sm": c.schedulers_per_sm,
            "max_warps_per_sm": c.max_warps_per_sm}


def impute_features(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` with the ``f_*`` columns of a point without features taken from the largest point (most
    records) of the same port that has them; ``features_from`` names the point they came from."""
    fcols = [c for c in points.columns if c.startswith("f_")]
    out = points.copy()
    out["features_from"] = np.where(out["f_mem"].notna(), out["point"], None)
    for port, g in out.groupby("port"):
        has = g[g["f_mem"].notna()]
        miss = g.index[g["f_mem"].isna()]
        if len(has) and len(miss):
            donor = has.loc[has["records"].idxmax()]
            out.loc[miss, fcols] = donor[fcols].to_numpy()[None, :].repeat(len(miss), 0)
            out.loc[miss, "features_from"] = donor["point"]
    return out


def training_frame(points: pd.DataFrame | None = None, times: pd.DataFrame | None = None, *,
                   keep_below_bound: bool = False) -> pd.DataFrame:
    """One row per measured (port, point, GPU) with features (and the SIMT model's time, NaN where the point was
    not simulated): the model's input columns
    (:data:`predictor.gputime.INPUT_COLUMNS`), ``measured_s``, ``gpu`` (the data's GPU name), ``preset``,
    ``generation``, ``application``, ``port``, ``point``, ``source``, ``features_from``. Rows measured below
    their own lower bound (:func:`below_bound`) are left out unless ``keep_below_bound``."""
    from kernels.measured.registry import all_measured
    from portcast import measured_ports as M

    points = M.read_points_table() if points is None else points
    times = M.measured_times(all_measured()) if times is None else times
    pts = impute_features(points)
    pairs = M.pair_times(pts, times, simulated_only=False)
    keep = ["port", "point", "source", "local_work", "features_from", *WORK_KEYS,
            *(f"f_{k}" for k in RATE_FEATURES)]
    d = pairs.merge(pts[keep], on=["port", "point"])
    d = d[d[f"f_{RATE_FEATURES[0]}"].notna()].copy()
    d = d.rename(columns={f"f_{k}": k for k in RATE_FEATURES}).rename(columns={"local_work": "block_size"})
    g = pd.DataFrame([{"preset": p, **gpu_columns(p)} for p in sorted(d["preset"].unique())])
    d = d.merge(g, on="preset")
    # AIWC times a host timer around the launch, KernelBench PyTorch's whole call: both include the launch
    d["host_timer"] = d["source"].isin(["aiwc", "kernelbench"]).astype(float)
    d["generation"] = d["preset"].map(GENERATIONS)
    d = d.sort_values(["port", "point", "gpu"]).reset_index(drop=True)
    d = _with_bounded_inputs(d, pts)
    return d if keep_below_bound else d[~below_bound(d)].reset_index(drop=True)


def below_bound(frame: pd.DataFrame) -> np.ndarray:
    """Rows whose measured time is below the lower bound of their port's traced work on their GPU
    (``bound_s``): the port's work is not the timed kernel's, or the bound holds a cost the timer leaves out (a
    device timer and the 5 us launch floor; data an earlier copy left in L2 against the DRAM floor). A model
    that never predicts below the bound cannot fit them; they are left out of training and evaluation and
    listed (:func:`below_bound_markdown`)."""
    return (frame["bound_s"] > frame["measured_s"]).to_numpy()


def below_bound_markdown(frame: pd.DataFrame) -> str:
    """The rows of :func:`below_bound` (``frame`` from ``training_frame(..., keep_below_bound=True)``), one line
    per port: GPUs, measured time, bound and the bound's largest term, as Markdown."""
    d = frame[below_bound(frame)].copy()
    if d.empty:
        return "No measured row is below its lower bound."
    from gpu_models.bounds import LAUNCH_SECONDS, RESOURCES

    terms = [f"term_{r}" for r in RESOURCES if f"term_{r}" in d.columns]  # the bounds' resources, not estimates
    d["largest"] = d[terms].idxmax(axis=1).str[5:]
    d.loc[d["bound_s"] <= 1.01 * LAUNCH_SECONDS * d["launches"], "largest"] = "launches"
    lines = ["| port | rows (GPUs) | measured | bound | bound / measured | bound set by |", "|---|---|---|---|---|---|"]
    for port, g in d.groupby("port", sort=True):
        ratio = g["bound_s"] / g["measured_s"]
        lines.append(f"| {port} | {len(g)} | {1e6 * g['measured_s'].min():.1f}-{1e6 * g['measured_s'].max():.1f} us "
                     f"| {1e6 * g['bound_s'].min():.1f}-{1e6 * g['bound_s'].max():.1f} us | "
                     f"{ratio.min():.2f}-{ratio.max():.2f} | {', '.join(sorted(set(g['largest'])))} |")
    return "\n".join(lines)


def _with_bounded_inputs(d: pd.DataFrame, pts: pd.DataFrame) -> pd.DataFrame:
    """``d`` with the bounded model's inputs of every row (``portcast.gpu_prediction.model_inputs``: the
    per-launch estimates ``term_*``, the lower bound ``bound_s``, ``launches`` and the rates), from the point's
    work counts and features on the row's GPU. A port's parallel loops are one launch (barrier phases) unless
    its spec says they are separate launches (then one launch each, or the spec's ``launches``). Rows whose point
    lacks a feature the bounds need are dropped."""
    from kernels.measured.registry import all_measured
    from portcast.gpu_prediction import model_inputs

    specs = all_measured()
    fcols = [c for c in pts.columns if c.startswith("f_")]
    point_counts = {}
    for r in pts.itertuples(index=False):
        r = r._asdict()
        c = {k: r[k] for k in r if k in ("threads", "records", "thread_records", "loads", "stores", "load_bytes",
                                         "store_bytes", "unique_bytes", "launches", "sector_bytes",
                                         "launch_sector_bytes")}
        c.update({k[2:]: r[k] for k in fcols})
        spec = specs.get(r["port"])
        launches = 1.0 if spec is None or not spec.separate_launches else (
            None if spec.launches is None else float(spec.launches))
        point_counts[(r["port"], r["point"])] = (c, launches)
    rows, keep = [], []
    for i, r in enumerate(d[["port", "point", "preset", "block_size", "host_timer"]].itertuples(index=False)):
        counts, launches = point_counts[(r.port, r.point)]
        row, _ = model_inputs(counts, r.preset, block_size=int(r.block_size), launches=launches,
                              host_timer=float(r.host_timer))
        if row is not None:
            rows.append(row)
            keep.append(i)
    extra = pd.DataFrame(rows, index=d.index[keep])
    out = d.loc[keep].drop(columns=[c for c in extra.columns if c in d.columns])
    return pd.concat([out, extra], axis=1).reset_index(drop=True)


def application_weights(frame: pd.DataFrame) -> np.ndarray:
    """One over the rows of each row's application: every application weighs the same in training."""
    return 1.0 / frame.groupby("application")["application"].transform("size").to_numpy(np.float64)


# ------------------------------------------------------------------------------------------ variants ---
def _interaction(columns):
    return lambda: GpuTimeModel("xapp", columns, k=3)


class MonotoneBoosting:
    """Gradient-boosted trees on the log of the time (scikit-learn's ``HistGradientBoostingRegressor``) over the
    tree models' inputs without the SIMT estimate, constrained to be non-decreasing in every work and
    physical-time input (issue, DRAM sectors and footprint, chain, waves, threads, records) and non-increasing
    in the GPU's SMs, clock and DRAM bandwidth: the other way to carry the physics the issue names, compared in
    the evaluation (not shipped, not saved)."""

    family = "gbm-monotone"
    needs_simt = False
    UP = ("log_issue", "log_dram_sectors", "log_dram_footprint", "log_chain", "log_waves", "log_threads",
          "log_records")
    DOWN = ("log_sms", "log_core_mhz", "log_dram_gb_s")

    def __init__(self) -> None:
        from predictor.gputime import DESIGN_COLUMNS

        self.columns = [c for c in DESIGN_COLUMNS if c != "log_simt"]

    def fit(self, frame, measured_s, *, sample_weight=None, **_):
        from sklearn.ensemble import HistGradientBoostingRegressor

        cst = [1 if c in self.UP else -1 if c in self.DOWN else 0 for c in self.columns]
        self.model_ = HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05, max_depth=4,
                                                    min_samples_leaf=20, monotonic_cst=cst, random_state=0)
        self.model_.fit(design(frame)[self.columns].to_numpy(np.float64), np.log(np.asarray(measured_s)),
                        sample_weight=sample_weight)
        return self

    def predict(self, frame, **_):
        return np.exp(self.model_.predict(design(frame)[self.columns].to_numpy(np.float64)))


#: the shipped family's name in the tables
BOUNDED_LINEAR = "bounded, linear factor on the instruction mix"


#: the variants :func:`evaluate` compares: name -> model factory (or "simt" for the SIMT estimate as it is)
def variants() -> dict[str, Callable | str]:
    from predictor.bounded import FACTOR_RATES, BoundedTimeModel
    from predictor.gputime import DESIGN_COLUMNS

    return {
        BOUNDED_LINEAR: lambda: BoundedTimeModel("linear"),
        "bounded, linear factor on every rate": lambda: BoundedTimeModel("linear", rates=FACTOR_RATES),
        "bounded, XAPP interaction factor (k=3 of every rate)": lambda: BoundedTimeModel("xapp", rates=FACTOR_RATES,
                                                                                         k=3),
        "bounded, boosted-tree factor (every rate)": lambda: BoundedTimeModel("trees", rates=FACTOR_RATES),
        "SIMT model alone": "simt",
        "SIMT, per-GPU scale + constant": lambda: GpuTimeModel("simt-calibrated"),
        "gradient boosting (all inputs)": lambda: GpuTimeModel("gbm"),
        "gradient boosting, SIMT prior + correction": lambda: GpuTimeModel("gbm-residual"),
        "gradient boosting without SIMT": lambda: GpuTimeModel("gbm", [c for c in DESIGN_COLUMNS if c != "log_simt"]),
        "gradient boosting, monotone in the work and the GPU (no SIMT)": MonotoneBoosting,
        "XAPP interaction search (k=3, log time)": _interaction(DESIGN_COLUMNS),
        "OLS linear, log time": ("baseline", "ols"),
        "LASSO linear, log time": ("baseline", "lasso"),
    }


def _baseline_predict(method: str, tr: pd.DataFrame, te: pd.DataFrame) -> np.ndarray:
    from predictor.baselines import LinearBaseline
    from predictor.gputime import DESIGN_COLUMNS

    Dtr, Dte = design(tr)[list(DESIGN_COLUMNS)], design(te)[list(DESIGN_COLUMNS)]
    m = LinearBaseline(method=method, expansion="linear", transform="log", random_state=0)
    m.fit(Dtr, tr["measured_s"].to_numpy())
    return np.asarray(m.predict(Dte), dtype=np.float64)


def fit_predict(variant, tr: pd.DataFrame, te: pd.DataFrame) -> np.ndarray:
    """Fit one variant on ``tr`` and predict the kernel time (seconds) of ``te``."""
    if variant == "simt":
        return te["simulated_s"].to_numpy(np.float64)
    m = None if isinstance(variant, tuple) else variant()
    if isinstance(variant, tuple) or _reads_simt(m):
        # a model reading the SIMT estimate is fitted on, and predicts, the simulated rows only (NaN elsewhere,
        # which the scores leave out)
        tr = tr[np.isfinite(tr["simulated_s"].to_numpy(np.float64))]
        sim = np.isfinite(te["simulated_s"].to_numpy(np.float64))
        out = np.full(len(te), np.nan)
        if sim.any():
            out[sim] = (_baseline_predict(variant[1], tr, te[sim]) if m is None else _fit(m, tr).predict(
                te[sim], gpu=te["preset"].to_numpy()[sim]))
        return out
    return _fit(m, tr).predict(te, gpu=te["preset"].to_numpy())


def _reads_simt(m) -> bool:
    """Whether a model may read the SIMT estimate (a search that may choose it counts)."""
    return bool(getattr(m, "needs_simt", False)) or "log_simt" in getattr(m, "columns", ())


def _fit(m, tr: pd.DataFrame):
    m.fit(tr, tr["measured_s"].to_numpy(), gpu=tr["preset"].to_numpy(), sample_weight=application_weights(tr))
    return m


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


# ------------------------------------------------------------------------------------------- scoring ---
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


#: families ``portcast gpu-time train --family`` fits
TRAIN_FAMILIES = ("bounded", "bounded-xapp", "bounded-trees", "gbm", "gbm-residual", "simt-calibrated")


def train_default(frame: pd.DataFrame, family: str = "bounded", *, without_simt: bool = False):
    """The shipped model: ``family`` (:data:`TRAIN_FAMILIES`; ``bounded``: the bounded model with a linear
    factor) fitted on every measured row, its metadata naming the data and GPUs (``without_simt``: a ``gbm``
    without the SIMT estimate among its inputs)."""
    from predictor.bounded import BoundedTimeModel
    from predictor.gputime import DESIGN_COLUMNS

    if family not in TRAIN_FAMILIES:
        raise ValueError(f"family must be one of {', '.join(TRAIN_FAMILIES)}, not {family!r}")
    if without_simt and family != "gbm":
        raise ValueError("--without-simt applies to the gbm family")
    if family.startswith("bounded"):
        m = BoundedTimeModel({"bounded": "linear", "bounded-xapp": "xapp", "bounded-trees": "trees"}[family])
    else:
        m = GpuTimeModel(family, [c for c in DESIGN_COLUMNS if c != "log_simt"] if without_simt else None)
    if _reads_simt(m):
        frame = frame[np.isfinite(frame["simulated_s"].to_numpy(np.float64))]
    _fit(m, frame)
    m.metadata = {
        "target": "kernel time in seconds on the described GPU (device-side; host_timer = 0)",
        "trained_on": "measured kernel times of Portcast's ports of the kernels (docs/measured.md): AIWC (OpenCL, 5 "
                      "NVIDIA GPUs; Johnston et al.), Amaris et al. (CUDA Rodinia, 9 NVIDIA GPUs), HeCBench on an "
                      "RTX 3080 (gpuFLOPBench), BabelStream (K20 to A100) and KernelBench level 1 (PyTorch eager, "
                      "T4 to B200)",
        "rows": int(len(frame)), "applications": sorted(frame["application"].unique().tolist()),
        "gpus": sorted(frame["gpu"].unique().tolist()), "presets": sorted(frame["preset"].unique().tolist()),
        "generations": sorted(frame["generation"].unique().tolist()),
        "provisional": False,
    }
    return m


#: columns of :func:`training_points` (besides the names): the time a kernel's work would take at the
#: roofline, its measured time, and the rate features a report compares a region with
POINT_COLUMNS = ("roofline_s", "measured_s", "threads", *RATE_FEATURES)
POINTS_HEADER = "# portcast.gputime-points schema_version=1"


def physical_estimate(frame: pd.DataFrame) -> np.ndarray:
    """The physical estimate of each row's time: launches x the largest per-launch estimate of the bounded model's
    default terms (``term_dram``, ``term_issue``, ``term_pipe``, ``term_waves``, ``term_latency``), or, for rows
    of the older inputs, the work-proportional roofline (:func:`predictor.gputime.roofline_log`)."""
    from predictor.bounded import BoundedTimeModel
    from predictor.gputime import roofline_log

    cols = [f"term_{t}" for t in BoundedTimeModel().terms]
    if all(c in frame.columns for c in cols):
        return frame["launches"].to_numpy(np.float64) * frame[cols].to_numpy(np.float64).max(axis=1)
    return np.exp(roofline_log(design(frame)))


def training_points(frame: pd.DataFrame) -> pd.DataFrame:
    """The training rows as a report shows them next to a region: application, GPU (``preset``), generation,
    the physical estimate of its work on its GPU (:func:`physical_estimate`), its measured time, its threads
    and rate features. Small enough to ship beside the model (a few hundred kB)."""
    out = frame[["application", "preset", "generation"]].copy()
    out["roofline_s"] = physical_estimate(frame)
    for c in POINT_COLUMNS[1:]:
        out[c] = frame[c].to_numpy(np.float64)
    return out.reset_index(drop=True)


def write_training_points(points: pd.DataFrame, path) -> Path:
    """Write :func:`training_points` as CSV (atomically) under the schema line :data:`POINTS_HEADER`."""
    from core.atomic import atomic_write_text

    text = POINTS_HEADER + "\n" + points.to_csv(index=False, float_format="%.6g")
    atomic_write_text(Path(path), text)
    return Path(path)


def read_training_points(path) -> pd.DataFrame:
    """Read a file of :func:`write_training_points`; a :class:`ValueError` names the file when it is not one."""
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        first = fh.readline().strip()
        if first != POINTS_HEADER:
            raise ValueError(f"{path}: not a Portcast training-points file (first line is not {POINTS_HEADER!r})")
        points = pd.read_csv(fh)
    missing = [c for c in ("application", "preset", *POINT_COLUMNS) if c not in points.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    return points


def default_model_file() -> Path:
    from predictor.gputime import DEFAULT_GPUTIME_MODEL

    return DEFAULT_GPUTIME_MODEL


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


# ------------------------------------------------------------------------------------------- physics ---
def count_predictor(model) -> Callable:
    """``predict(counts, cfg) -> (seconds, Bounds)`` of a fitted model on a program's work counts and features
    (:mod:`portcast.physics`): the bounded family through :func:`portcast.gpu_prediction.model_inputs`, the tree
    and linear families through their own inputs (no SIMT estimate: the generated programs have none)."""
    from portcast.gpu_prediction import BLOCK_SIZE, model_inputs
    from predictor.gputime import INPUT_COLUMNS

    def predict(counts, cfg):
        row, b = model_inputs(counts, cfg)
        if getattr(model, "family", "") == "bounded":
            return float(model.predict(pd.DataFrame([row]))[0]), b
        r = {k: float(counts.get(k, 0.0)) for k in INPUT_COLUMNS}
        r.update({k: float(counts[k]) for k in RATE_FEATURES}, block_size=float(BLOCK_SIZE), host_timer=0.0,
                 simulated_s=float("nan"), **gpu_columns(cfg))
        return float(model.predict(pd.DataFrame([r]))[0]), b

    return predict


def physics_table(frame: pd.DataFrame, names: Iterable[str], *, samples: int = 40, seed: int = 0) -> pd.DataFrame:
    """Laws of :mod:`portcast.physics` broken by each variant fitted on every row of ``frame``: one row per
    variant with the count of violations per law over ``samples`` generated programs per GPU preset (variants
    that need the SIMT estimate, which generated programs do not have, are left out)."""
    from gpu_models.simt.config import preset_names
    from portcast.physics import LAWS, violations

    table = variants()
    rows = []
    for name in names:
        v = table[name]
        if not callable(v):
            continue
        m = v()
        if _reads_simt(m) or getattr(m, "family", "") in ("gbm-residual", "simt-calibrated"):
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
    from portcast.physics import LAWS

    lines = ["| model | " + " | ".join(LAWS) + " | programs |", "|---" * (len(LAWS) + 2) + "|"]
    for r in table.itertuples(index=False):
        d = r._asdict()
        lines.append(f"| {d['variant']} | " + " | ".join(str(d[k]) for k in LAWS) + f" | {d['programs']} |")
    return "\n".join(lines)
