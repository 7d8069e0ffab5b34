"""A GPU-time model: the kernel time of a region on a described GPU, learned from measured GPU times.

Inputs of one prediction (one region on one GPU), as columns of a frame (:func:`design` turns them into the
model's inputs):

* the region's **work**, which grows with the input size (:data:`WORK_KEYS`: logical threads, trace records,
  records inside threads, loads, stores, their bytes, distinct bytes touched) and the thread block size
  ``block_size`` of the launch;
* the region's **rate features** (:data:`RATE_FEATURES`, the feature engine's names: SIMD efficiency,
  coalescing, sectors per warp memory instruction, instruction mix, ILP);
* the **GPU's description** (:data:`GPU_KEYS`: SMs, clocks, DRAM bandwidth, L2, schedulers, resident warps);
* the **SIMT model's** estimate ``simulated_s`` (seconds; NaN where it was not run);
* outside the training range of its inputs a tree model is flat; there the trees see the inputs clipped to the
  range and the prediction grows with the work as :func:`roofline_log` (``gbm``) or the SIMT estimate
  (``gbm-residual``) does;
* ``host_timer``: 1 where the time was taken by a host timer around one launch (it then includes the launch
  and the synchronisation, AIWC's ``kernel_time``), 0 for device-side kernel time (nvprof's duration, what
  the model predicts for a user).

:func:`design` derives from them physical lower bounds in seconds (issue time of the warp instructions on the
SMs the grid occupies, DRAM time of the sectors moved after coalescing and of the distinct footprint, one
thread's dependent chain, waves) and takes logarithms of every magnitude. Model families
(:data:`FAMILIES`), all fitted on the log of the measured time:

``gbm``            gradient-boosted regression trees (scikit-learn) on every design column;
``gbm-residual``   the same on log(measured / SIMT estimate): the SIMT model as an analytic prior with a
                   learned correction;
``xapp``           XAPP's exhaustive-search interaction regressor (:mod:`predictor.interaction`) on log time;
``simt-calibrated`` the SIMT estimate times a per-GPU scale plus a per-GPU constant, fitted by least median
                   log error (a GPU not seen in training gets the scale and constant fitted on all GPUs).

A fitted model is saved as versioned JSON (:func:`save_gputime_model`; trees as arrays, never pickle) and
validated on load (:func:`load_gputime_model`).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from core.atomic import atomic_write_text
from core.jsonfile import JsonFileError, read_json

FORMAT = "portcast.gputime-model"
#: 2: the ``bounded`` family (:mod:`predictor.bounded`); files of schema 1 (the tree families) still load
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)

#: per-region work counts (features.work.WorkSink's keys)
WORK_KEYS = ("threads", "records", "thread_records", "loads", "stores", "load_bytes", "store_bytes",
             "unique_bytes")
#: rate features used (the feature engine's names)
RATE_FEATURES = ("warp_simdEfficiency", "warp_coalescing", "warp_sectorsPerGroup", "mem", "fp", "ctrl", "ilp32")
#: numbers of a GPU description used (gpu_models.simt GPUConfig; dram_gb_s = its DRAM bandwidth in GB/s)
GPU_KEYS = ("sm_count", "core_mhz", "dram_gb_s", "l2_bytes", "schedulers_per_sm", "max_warps_per_sm")
#: every column :func:`design` needs
INPUT_COLUMNS = WORK_KEYS + ("block_size",) + RATE_FEATURES + GPU_KEYS + ("simulated_s", "host_timer")

#: columns of :func:`design`, in order
DESIGN_COLUMNS = ("log_simt", "log_issue", "log_dram_sectors", "log_dram_footprint", "log_chain", "log_waves",
                  "log_threads", "log_records", "log_block", "simd_efficiency", "coalescing", "frac_mem",
                  "frac_fp", "frac_ctrl", "ilp32", "log_sms", "log_core_mhz", "log_dram_gb_s", "log_l2",
                  "host_timer")
FAMILIES = ("gbm", "gbm-residual", "xapp", "simt-calibrated")
WARP = 32
#: cycles per dependent instruction in :func:`design`'s ``log_chain`` (a floor: a simple integer latency)
CHAIN_CYCLES = 4.0
_TINY = 1e-12


class GpuTimeModelError(ValueError):
    """A GPU-time model file or input that cannot be used; the message names the file or the column."""


def _log(x) -> np.ndarray:
    return np.log(np.maximum(np.asarray(x, dtype=np.float64), _TINY))


def check_inputs(frame: pd.DataFrame, *, need_simt: bool = False, where: str = "input") -> None:
    """Raise :class:`GpuTimeModelError` naming the missing or non-finite columns of ``frame``."""
    cols = [c for c in INPUT_COLUMNS if c != "simulated_s" or need_simt]
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise GpuTimeModelError(f"{where}: missing column(s) {missing}")
    vals = frame[cols].to_numpy(np.float64)
    bad = ~np.isfinite(vals)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise GpuTimeModelError(f"{where}: column {cols[c]!r} is not finite in row {r}")


def design(frame: pd.DataFrame) -> pd.DataFrame:
    """The model's inputs (:data:`DESIGN_COLUMNS`) from the columns :data:`INPUT_COLUMNS` of ``frame``.

    Physical terms (seconds, before the logarithm):

    * ``issue`` = warp instructions / (SMs with work x schedulers per SM x core clock), where warp instructions
      = thread records / 32 / SIMD efficiency and SMs with work = min(SMs, blocks);
    * ``dram_sectors`` = bytes of the sectors moved after coalescing / DRAM bandwidth, the sectors being
      warp memory instructions ((loads + stores) / 32 / SIMD efficiency) x sectors per warp memory instruction
      x 32 bytes; ``dram_footprint`` = distinct bytes touched / DRAM bandwidth;
    * ``chain`` = records per thread x :data:`CHAIN_CYCLES` / core clock (one thread's instructions back to back);
    * ``waves`` = threads / (SMs x resident warps per SM x 32).
    """
    f = frame
    simd = np.clip(f["warp_simdEfficiency"].to_numpy(np.float64), 1.0 / WARP, 1.0)
    threads = np.maximum(f["threads"].to_numpy(np.float64), 1.0)
    block = np.maximum(f["block_size"].to_numpy(np.float64), 1.0)
    sms = f["sm_count"].to_numpy(np.float64)
    hz = f["core_mhz"].to_numpy(np.float64) * 1e6
    bw = f["dram_gb_s"].to_numpy(np.float64) * 1e9
    active = np.minimum(sms, np.ceil(threads / block))
    warp_instr = f["thread_records"].to_numpy(np.float64) / WARP / simd
    mem_warp = (f["loads"].to_numpy(np.float64) + f["stores"].to_numpy(np.float64)) / WARP / simd
    sector_bytes = mem_warp * np.maximum(f["warp_sectorsPerGroup"].to_numpy(np.float64), 0.0) * 32.0
    sim = f["simulated_s"].to_numpy(np.float64) if "simulated_s" in f else np.full(len(f), np.nan)
    out = {
        "log_simt": _log(sim),
        "log_issue": _log(warp_instr / (active * f["schedulers_per_sm"].to_numpy(np.float64) * hz)),
        "log_dram_sectors": _log(sector_bytes / bw),
        "log_dram_footprint": _log(f["unique_bytes"].to_numpy(np.float64) / bw),
        "log_chain": _log(f["thread_records"].to_numpy(np.float64) / threads * CHAIN_CYCLES / hz),
        "log_waves": _log(threads / (sms * f["max_warps_per_sm"].to_numpy(np.float64) * WARP)),
        "log_threads": _log(threads),
        "log_records": _log(f["records"]),
        "log_block": _log(block),
        "simd_efficiency": simd,
        "coalescing": f["warp_coalescing"].to_numpy(np.float64),
        "frac_mem": f["mem"].to_numpy(np.float64),
        "frac_fp": f["fp"].to_numpy(np.float64),
        "frac_ctrl": f["ctrl"].to_numpy(np.float64),
        "ilp32": f["ilp32"].to_numpy(np.float64),
        "log_sms": _log(sms),
        "log_core_mhz": _log(hz / 1e6),
        "log_dram_gb_s": _log(bw / 1e9),
        "log_l2": _log(f["l2_bytes"]),
        "host_timer": f["host_timer"].to_numpy(np.float64),
    }
    return pd.DataFrame(out, index=frame.index)[list(DESIGN_COLUMNS)]


def roofline_log(D: pd.DataFrame) -> np.ndarray:
    """Log of the work-proportional time of a design: issue time + DRAM time of the sectors + DRAM time of the
    footprint (seconds). Beyond the training range a ``gbm`` prediction scales with it."""
    return np.log(np.exp(D["log_issue"].to_numpy()) + np.exp(D["log_dram_sectors"].to_numpy())
                  + np.exp(D["log_dram_footprint"].to_numpy()))


# ---------------------------------------------------------------------------------------------- trees ---
def _trees_to_dict(gbr) -> dict:
    """A fitted ``GradientBoostingRegressor`` (squared error) as arrays: its constant start, learning rate and
    every tree's node arrays (children, feature, threshold, leaf value)."""
    trees = []
    for est in gbr.estimators_[:, 0]:
        t = est.tree_
        trees.append({"left": t.children_left.tolist(), "right": t.children_right.tolist(),
                      "feature": t.feature.tolist(), "threshold": t.threshold.tolist(),
                      "value": t.value[:, 0, 0].tolist()})
    return {"init": float(np.ravel(gbr.init_.constant_)[0]), "learning_rate": float(gbr.learning_rate),
            "trees": trees}


def _trees_predict(doc: dict, X: np.ndarray) -> np.ndarray:
    """Evaluate :func:`_trees_to_dict`'s trees on ``X`` (rows x design columns)."""
    out = np.full(len(X), doc["init"], dtype=np.float64)
    rows = np.arange(len(X))
    for t in doc["_arrays"]:
        left, right, feat, thr, val = t
        node = np.zeros(len(X), dtype=np.int64)
        while True:
            inner = left[node] >= 0
            if not inner.any():
                break
            n = node[inner]
            go_left = X[rows[inner], feat[n]] <= thr[n]
            node[inner] = np.where(go_left, left[n], right[n])
        out += doc["learning_rate"] * val[node]
    return out


def _tree_arrays(doc: dict, source: str, n_columns: int) -> list:
    arrays = []
    for i, t in enumerate(doc.get("trees", [])):
        try:
            left = np.asarray(t["left"], np.int64)
            right = np.asarray(t["right"], np.int64)
            feat = np.asarray(t["feature"], np.int64)
            thr = np.asarray(t["threshold"], np.float64)
            val = np.asarray(t["value"], np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise GpuTimeModelError(f"{source}: tree {i}: {exc}") from None
        n = len(left)
        if not (n and len(right) == n and len(feat) == n and len(thr) == n and len(val) == n):
            raise GpuTimeModelError(f"{source}: tree {i}: node arrays of different lengths")
        inner = left >= 0
        if (np.any(left[inner] >= n) or np.any(right[inner] >= n) or np.any(right[inner] < 0)
                or np.any(left[inner] <= np.nonzero(inner)[0]) or np.any(feat[inner] < 0)
                or np.any(feat[inner] >= n_columns)):
            raise GpuTimeModelError(f"{source}: tree {i}: a node points outside the tree or the design")
        if not np.all(np.isfinite(val)):
            raise GpuTimeModelError(f"{source}: tree {i}: non-finite leaf value")
        arrays.append((left, right, feat, thr, val))
    return arrays


# ---------------------------------------------------------------------------------------------- model ---
class GpuTimeModel:
    """Predicts kernel time in seconds from the columns :data:`INPUT_COLUMNS` of a frame.

    Parameters
    ----------
    family : one of :data:`FAMILIES`
    columns : design columns the model uses (default: all of :data:`DESIGN_COLUMNS` for ``gbm``/``gbm-residual``;
        all but ``log_simt`` for ``xapp``, which is free to pick it)
    n_estimators, learning_rate, max_depth, min_samples_leaf : the trees (``gbm*``)
    k : features of the ``xapp`` model
    random_state : seed
    """

    def __init__(self, family: str = "gbm", columns: Sequence[str] | None = None, *, n_estimators: int = 300,
                 learning_rate: float = 0.05, max_depth: int = 4, min_samples_leaf: int = 20, k: int = 3,
                 random_state: int = 0) -> None:
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
        self.family = family
        self.columns = tuple(columns) if columns is not None else DESIGN_COLUMNS
        unknown = [c for c in self.columns if c not in DESIGN_COLUMNS]
        if unknown:
            raise ValueError(f"unknown design column(s) {unknown}; known: {DESIGN_COLUMNS}")
        self.n_estimators, self.learning_rate, self.max_depth = n_estimators, learning_rate, max_depth
        self.min_samples_leaf, self.k, self.random_state = min_samples_leaf, k, random_state
        self.metadata: dict[str, Any] = {}
        self.training_ranges: dict[str, list[float]] = {}

    @property
    def needs_simt(self) -> bool:
        """Whether predictions need the SIMT model's estimate (``simulated_s``)."""
        if self.family in ("gbm-residual", "simt-calibrated"):
            return True
        if self.family == "xapp":
            return "log_simt" in getattr(self, "xapp_subset_", ())
        return "log_simt" in self.columns

    # -- fit
    def fit(self, frame: pd.DataFrame, measured_s, *, gpu: Sequence[str] | None = None,
            sample_weight=None) -> "GpuTimeModel":
        """Fit on ``frame`` (columns :data:`INPUT_COLUMNS`) and the measured kernel times in seconds.
        ``gpu``: each row's GPU name (``simt-calibrated`` fits per GPU). ``sample_weight``: per row (e.g. one
        over the rows of its application, so that no application dominates)."""
        check_inputs(frame, need_simt=self.family in ("gbm-residual", "simt-calibrated")
                     or "log_simt" in self.columns, where="training data")
        y = _log(measured_s)
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, np.float64)
        D = design(frame)
        self.training_ranges = {c: [float(D[c].min()), float(D[c].max())] for c in D.columns}
        if self.family == "simt-calibrated":
            self._fit_calibration(frame["simulated_s"].to_numpy(np.float64), np.exp(y),
                                  np.asarray(gpu if gpu is not None else ["all"] * len(y)))
            return self
        X = D[list(self.columns)].to_numpy(np.float64)
        if self.family == "xapp":
            from .interaction import InteractionSearchRegressor

            m = InteractionSearchRegressor(k=self.k, transform="log", n_splits=50, validation_size=0.2,
                                           random_state=self.random_state, clip_features=True)
            m.fit(pd.DataFrame(X, columns=list(self.columns)), np.exp(y))
            self.xapp_ = m
            self.xapp_subset_ = tuple(m.subset_)
            return self
        from sklearn.ensemble import GradientBoostingRegressor

        target = y - (D["log_simt"].to_numpy() if self.family == "gbm-residual" else 0.0)
        g = GradientBoostingRegressor(n_estimators=self.n_estimators, learning_rate=self.learning_rate,
                                      max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                                      subsample=0.8, random_state=self.random_state)
        g.fit(X, target, sample_weight=w)
        self.trees_ = _trees_to_dict(g)
        self.trees_["_arrays"] = _tree_arrays(self.trees_, "<fitted>", len(self.columns))
        return self

    def _fit_calibration(self, sim: np.ndarray, meas: np.ndarray, gpu: np.ndarray) -> None:
        scales = 0.25 * 1.02 ** np.arange(0, 141)
        floors = np.concatenate([[0.0], 0.25e-6 * 1.02 ** np.arange(0, 340)])

        def best(s, m):
            pred = scales[:, None, None] * s[None, None, :] + floors[None, :, None]
            err = np.median(np.abs(np.log(pred) - np.log(m)[None, None, :]), axis=2)
            i, j = np.unravel_index(int(np.argmin(err)), err.shape)
            return [float(scales[i]), float(floors[j])]

        self.calibration_ = {str(g): best(sim[gpu == g], meas[gpu == g]) for g in np.unique(gpu)}
        self.calibration_["*"] = best(sim, meas)

    # -- predict
    def predict_log(self, frame: pd.DataFrame, *, gpu: Sequence[str] | None = None) -> np.ndarray:
        """Natural log of the predicted kernel time (seconds) of each row."""
        check_inputs(frame, need_simt=self.needs_simt, where="prediction input")
        D = design(frame)
        if self.family == "simt-calibrated":
            names = np.asarray(gpu if gpu is not None else ["*"] * len(frame))
            ks = np.array([self.calibration_.get(str(g), self.calibration_["*"]) for g in names])
            return _log(ks[:, 0] * frame["simulated_s"].to_numpy(np.float64) + ks[:, 1])
        if self.family == "xapp":
            return _log(self.xapp_.predict(D[list(self.columns)]))
        # outside the training range the trees are flat: they see the input clipped to the range, and the time
        # grows beyond it as the work-proportional roofline (gbm) or the SIMT estimate (gbm-residual) does
        lo = np.array([self.training_ranges.get(c, [-np.inf, np.inf])[0] for c in D.columns])
        hi = np.array([self.training_ranges.get(c, [-np.inf, np.inf])[1] for c in D.columns])
        Dc = pd.DataFrame(np.clip(D.to_numpy(np.float64), lo, hi), columns=D.columns, index=D.index)
        X = Dc[list(self.columns)].to_numpy(np.float64)
        if self.family == "gbm-residual":
            return _trees_predict(self.trees_, X) + D["log_simt"].to_numpy()
        return _trees_predict(self.trees_, X) + roofline_log(D) - roofline_log(Dc)

    def predict(self, frame: pd.DataFrame, *, gpu: Sequence[str] | None = None) -> np.ndarray:
        """Predicted kernel time in seconds of each row."""
        return np.exp(self.predict_log(frame, gpu=gpu))

    def contributions(self, frame: pd.DataFrame) -> pd.DataFrame:
        """What each design column adds to the log time of one row (``frame``'s first), for the tree families.

        Each tree's path is followed from its root to the row's leaf; every step changes the node value, and
        the change is credited to the column the step split on (so the columns' shares plus the trees'
        common start sum to the tree part exactly). Rows: one per design column the model uses (``column``,
        ``value`` as the trees saw it after clipping to the training range, ``contribution`` in natural-log
        seconds), then ``start`` (the value every prediction begins from), ``beyond training range``
        (the roofline's growth past the clipped inputs; ``gbm``) or ``SIMT estimate`` (``gbm-residual``).
        The ``contribution`` column sums to :meth:`predict_log` of the row.
        """
        if self.family not in ("gbm", "gbm-residual"):
            raise GpuTimeModelError(f"contributions are defined for the tree families, not {self.family!r}")
        check_inputs(frame.iloc[:1], need_simt=self.needs_simt, where="prediction input")
        D = design(frame.iloc[:1])
        lo = np.array([self.training_ranges.get(c, [-np.inf, np.inf])[0] for c in D.columns])
        hi = np.array([self.training_ranges.get(c, [-np.inf, np.inf])[1] for c in D.columns])
        Dc = pd.DataFrame(np.clip(D.to_numpy(np.float64), lo, hi), columns=D.columns, index=D.index)
        x = Dc[list(self.columns)].to_numpy(np.float64)[0]
        share = np.zeros(len(self.columns))
        lr = self.trees_["learning_rate"]
        start = float(self.trees_["init"])
        for left, right, feat, thr, val in self.trees_["_arrays"]:
            node = 0
            start += lr * val[0]
            while left[node] >= 0:
                nxt = left[node] if x[feat[node]] <= thr[node] else right[node]
                share[feat[node]] += lr * (val[nxt] - val[node])
                node = nxt
        rows = [(c, float(x[i]), float(share[i])) for i, c in enumerate(self.columns)]
        rows.append(("start", float("nan"), start))
        if self.family == "gbm-residual":
            rows.append(("SIMT estimate", float(D["log_simt"].iloc[0]), float(D["log_simt"].iloc[0])))
        else:
            rows.append(("beyond training range", float("nan"), float(roofline_log(D)[0] - roofline_log(Dc)[0])))
        return pd.DataFrame(rows, columns=["column", "value", "contribution"])

    def out_of_range(self, frame: pd.DataFrame) -> list[str]:
        """Design columns of ``frame`` (one row) outside the training range (the prediction extrapolates)."""
        D = design(frame).iloc[0]
        cols = self.columns if self.family != "xapp" else self.xapp_subset_
        return [c for c in cols if c in self.training_ranges and c in D.index and np.isfinite(D[c])
                and not (self.training_ranges[c][0] <= D[c] <= self.training_ranges[c][1])]

    # -- files
    def to_dict(self) -> dict:
        if self.family == "xapp":
            raise GpuTimeModelError("the xapp family is saved with predictor.model_io (portcast.xapp-model)")
        doc = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "family": self.family,
               "columns": list(self.columns), "input_columns": list(INPUT_COLUMNS),
               "training_ranges": self.training_ranges, "metadata": self.metadata}
        if self.family == "simt-calibrated":
            doc["calibration"] = self.calibration_
        else:
            doc["trees"] = {k: v for k, v in self.trees_.items() if k != "_arrays"}
        return doc


def save_gputime_model(model, path, metadata: Mapping[str, Any] | None = None) -> Path:
    """Write ``model`` (a :class:`GpuTimeModel` or a :class:`predictor.bounded.BoundedTimeModel`) as JSON
    (atomically); ``metadata`` is merged into its metadata (plus ``created``)."""
    model.metadata = {**model.metadata, **(metadata or {}),
                      "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    doc = model.to_dict()
    doc = {"format": FORMAT, "schema_version": SCHEMA_VERSION, **{k: v for k, v in doc.items()
                                                                  if k not in ("format", "schema_version")}}
    path = Path(path)
    atomic_write_text(path, json.dumps(doc, separators=(",", ":")) + "\n")
    return path


def gputime_model_from_dict(doc: Any, source: str = "<model>"):
    """Validate a decoded model document and rebuild the model; errors name ``source`` and the field."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise GpuTimeModelError(f"{source}: not a Portcast GPU-time model (format is not {FORMAT!r})")
    if doc.get("schema_version") not in READABLE_VERSIONS:
        raise GpuTimeModelError(f"{source}: schema_version {doc.get('schema_version')!r} is not supported "
                                f"(this Portcast reads {', '.join(map(str, READABLE_VERSIONS))})")
    family = doc.get("family")
    if family == "bounded":
        from .bounded import BoundedModelError, BoundedTimeModel

        try:
            return BoundedTimeModel.from_dict(doc, source)
        except BoundedModelError as exc:
            raise GpuTimeModelError(str(exc)) from None
    if family not in ("gbm", "gbm-residual", "simt-calibrated"):
        raise GpuTimeModelError(f"{source}: field 'family': {family!r} is not a saved model family")
    cols = doc.get("columns")
    if not isinstance(cols, list) or not cols or any(c not in DESIGN_COLUMNS for c in cols):
        raise GpuTimeModelError(f"{source}: field 'columns' must list design columns of {DESIGN_COLUMNS}")
    m = GpuTimeModel(family, cols)
    ranges = doc.get("training_ranges", {})
    if not isinstance(ranges, dict) or any(not (isinstance(v, list) and len(v) == 2) for v in ranges.values()):
        raise GpuTimeModelError(f"{source}: field 'training_ranges' must map columns to [min, max]")
    m.training_ranges = {str(k): [float(a), float(b)] for k, (a, b) in ranges.items()}
    m.metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    if family == "simt-calibrated":
        cal = doc.get("calibration")
        if (not isinstance(cal, dict) or "*" not in cal
                or any(not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) and
                                                                       math.isfinite(x) and x >= 0 for x in v))
                       for v in cal.values())):
            raise GpuTimeModelError(f"{source}: field 'calibration' must map GPUs (and '*') to [scale, constant]")
        m.calibration_ = {str(k): [float(a), float(b)] for k, (a, b) in cal.items()}
        return m
    trees = doc.get("trees")
    if not isinstance(trees, dict) or not isinstance(trees.get("trees"), list) or not trees["trees"]:
        raise GpuTimeModelError(f"{source}: field 'trees' must hold the fitted trees")
    for key in ("init", "learning_rate"):
        if not isinstance(trees.get(key), (int, float)) or not math.isfinite(trees[key]):
            raise GpuTimeModelError(f"{source}: field 'trees.{key}' must be a finite number")
    m.trees_ = dict(trees)
    m.trees_["_arrays"] = _tree_arrays(trees, source, len(cols))
    return m


def load_gputime_model(path):
    """Read and validate a model file written by :func:`save_gputime_model` (a :class:`GpuTimeModel`, or a
    :class:`predictor.bounded.BoundedTimeModel` for the ``bounded`` family)."""
    path = Path(path)
    try:
        doc = read_json(path, what="Portcast GPU-time model")
    except JsonFileError as exc:
        raise GpuTimeModelError(str(exc)) from None
    return gputime_model_from_dict(doc, str(path))


#: where the default GPU-time model ships
DEFAULT_GPUTIME_MODEL = Path(__file__).resolve().parent / "models" / "gputime.json"
#: the shipped model's training rows as a report plots them (``predictor.gputime_training.training_points``)
DEFAULT_TRAINING_POINTS = DEFAULT_GPUTIME_MODEL.with_name("gputime-points.csv")
