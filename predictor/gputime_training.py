"""The GPU-time model's training data and training on the measured kernels (docs/gputime.md).

Training rows are the measured points of :mod:`kernels.measured.harness`: one row per (port, point, GPU) with the
GPU's measured kernel time, the point's work counts and features (committed table
``kernels/measured/data/measured_points.parquet``), the GPU's description (its SIMT preset) and the SIMT model's
estimate, and the bounded family's inputs (:func:`predictor.gputime_inputs.model_inputs`, the row every
prediction uses too). A point traced without features (more records than the table's feature bound) takes the
rate features of the largest point of the same port that has them (rates change little with size; its work
counts are its own); ``features_from`` says which. :func:`variants` are the model families compared,
:func:`train_default` fits the shipped one, :func:`training_points` are its rows as a report plots them (CSV
``portcast.gputime-points``). Their evaluation: :mod:`predictor.gputime_evaluation`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from predictor.gputime import RATE_FEATURES, WORK_KEYS, GpuTimeModel, design
from predictor.gputime_inputs import GENERATIONS, gpu_columns


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
    from kernels.measured.harness.correlation import pair_times
    from kernels.measured.harness.points import read_points_table
    from kernels.measured.harness.sources import measured_times
    from kernels.measured.registry import all_measured

    points = read_points_table() if points is None else points
    times = measured_times(all_measured()) if times is None else times
    pts = impute_features(points)
    pairs = pair_times(pts, times, simulated_only=False)
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
    """``d`` with the bounded model's inputs of every row (``predictor.gputime_inputs.model_inputs``: the
    per-launch estimates ``term_*``, the lower bound ``bound_s``, ``launches`` and the rates), from the point's
    work counts and features on the row's GPU. A port's parallel loops are one launch (barrier phases) unless
    its spec says they are separate launches (then one launch each, or the spec's ``launches``). Rows whose point
    lacks a feature the bounds need are dropped."""
    from kernels.measured.registry import all_measured
    from predictor.gputime_inputs import model_inputs

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
    if isinstance(variant, tuple) or reads_simt(m):
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


def reads_simt(m) -> bool:
    """Whether a model may read the SIMT estimate (a search that may choose it counts)."""
    return bool(getattr(m, "needs_simt", False)) or "log_simt" in getattr(m, "columns", ())


def _fit(m, tr: pd.DataFrame):
    m.fit(tr, tr["measured_s"].to_numpy(), gpu=tr["preset"].to_numpy(), sample_weight=application_weights(tr))
    return m


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
    if reads_simt(m):
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
