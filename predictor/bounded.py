"""The GPU-time model whose form carries the physics: a region's time is never below its lower bounds, grows with
its work as the work's physical cost does, and scales with a learned, size-free factor.

A region of L kernel launches on a GPU is predicted as

    time = h x host_timer + max(bound, L x (t0 + f(rates) x max_k term_k))

where

* ``bound`` is the region's largest lower bound (``gpu_models.bounds.Bounds.total_lower``: DRAM sectors, issue,
  pipelines, the chains of the waves, L launches): the prediction never falls below it;
* ``term_k`` are the per-launch estimates of ``gpu_models.bounds.Bounds.terms`` (seconds of DRAM traffic, issue,
  the busiest pipeline, dependent latency ...) the model was fitted with (:attr:`BoundedTimeModel.terms`); they
  grow with the work, so the time does;
* ``f(rates)`` is the learned factor: how far above its physical estimate a kernel with these rate features
  (the shipped model: the kernel's instruction mix and its FP64 share weighted by how slowly the GPU runs
  FP64, :data:`MIX_RATES`; any of :data:`FACTOR_RATES`) runs on real GPUs. It depends on no size and on no
  number of the GPU's but its FP64 rate, through an input whose coefficient is held >= 0
  (:data:`NONNEGATIVE`), so the time is proportional to the estimate once it dominates, a GPU with more
  bandwidth (smaller terms and bound) is never slower and one with a lower FP64 rate never faster. ``log f``
  is a polynomial of the standardised rates (``linear``: each rate, no products; ``xapp``: XAPP's exhaustive
  search picks ``k`` rates and keeps all their products) or a sum of regression trees (``trees``), and is
  clipped to the range it took on the training rows (a bounded factor);
* ``t0`` is a fixed cost per launch the bounds do not count (the ramp of a grid, a DRAM round trip), ``h`` the
  overhead of a host timer around one launch (the AIWC times; 0 for the device-side time the model predicts
  for a user): both learned, both >= 0.

Every parameter is fitted on the log of measured kernel times (each application weighted equally) by least
squares with a soft-L1 loss. Saved as versioned JSON (``portcast.gputime-model`` schema 2, family
``bounded``); never pickle.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

#: per-launch estimates a model may use (``gpu_models.bounds.TERMS``; input columns ``term_<name>``)
TERM_NAMES = ("dram", "traffic", "issue", "pipe", "waves", "latency", "latency_l2", "latency_cached")
#: the estimates the shipped model scales: each launch's distinct DRAM sectors, every warp access's sectors (no
#: cache reuse), issue, the busiest pipeline, the waves' chains, and the latency of a warp's dependent steps
#: with its loads at DRAM latency for a first touch and at the L2's after
DEFAULT_TERMS = ("dram", "traffic", "issue", "pipe", "waves", "latency_l2")
#: rate features the factor may use (the feature engine's names; ``fp64``: 0 when a table lacks it)
FACTOR_RATES = ("warp_simdEfficiency", "warp_coalescing", "warp_sectorsPerGroup", "mem", "fp", "ctrl", "ilp32",
                "fp64", "fp64_slowdown")
#: rates whose coefficient in a linear or XAPP factor is held >= 0: ``fp64_slowdown`` is the FP64 share times
#: log2 of the GPU's FP32:FP64 lane ratio, so a GPU with a lower FP64 rate can only make double-precision code
#: slower through it (the law of docs/gputime.md)
NONNEGATIVE = ("fp64_slowdown",)
#: the rates the shipped factor reads: the kernel's instruction mix (loads and stores, floating point, control),
#: counted inside the threads, which does not drift with the input size or with where the arrays lie (as
#: coalescing and ILP do), and the double-precision share of the floating point weighted by how much slower
#: the GPU runs FP64 than FP32 (log2 of its FP32:FP64 lane ratio: 1 on a P100, 5 on a GTX 1080)
MIX_RATES = ("mem", "fp", "ctrl", "fp64_slowdown")
#: columns every prediction needs besides the terms
BASE_COLUMNS = ("bound_s", "launches", "host_timer")
FACTORS = ("linear", "xapp", "trees")
_TINY = 1e-15


class BoundedModelError(ValueError):
    """A bounded model file or input that cannot be used; the message names the file or the column."""


def rate_matrix(frame: pd.DataFrame, rates: Sequence[str]) -> np.ndarray:
    """The factor's inputs: the rates of ``frame`` (``ilp32`` and ``warp_sectorsPerGroup`` as logarithms, the
    rest as they are; a missing ``fp64`` or ``fp64_slowdown`` column reads as 0: a table from before the FP64
    classes has no double-precision records)."""
    cols = []
    for r in rates:
        if r not in frame.columns:
            if r in ("fp64", "fp64_slowdown"):
                cols.append(np.zeros(len(frame)))
                continue
            raise BoundedModelError(f"missing column {r!r}")
        v = frame[r].to_numpy(np.float64)
        if r in ("ilp32", "warp_sectorsPerGroup"):
            v = np.log(np.maximum(v, 1.0 if r == "ilp32" else 1e-3))
        cols.append(v)
    return np.column_stack(cols) if cols else np.zeros((len(frame), 0))


def all_products(k: int) -> list[tuple[int, ...]]:
    """Every product of ``k`` inputs, the empty one (intercept) first, in XAPP's term order."""
    return [tuple(j for j in range(k) if (t >> j) & 1) for t in range(1 << k)]


def _design(Z: np.ndarray, terms: Sequence[tuple[int, ...]]) -> np.ndarray:
    out = np.ones((Z.shape[0], len(terms)))
    for i, t in enumerate(terms):
        for j in t:
            out[:, i] *= Z[:, j]
    return out


class BoundedTimeModel:
    """Predicts a region's kernel time in seconds (module docstring) from the columns ``term_<name>``,
    ``bound_s``, ``launches``, ``host_timer`` and the rate features of a frame.

    Parameters
    ----------
    factor : one of :data:`FACTORS`
    terms : estimates the time scales (default: :data:`DEFAULT_TERMS`)
    rates : rate features of the factor (default: :data:`MIX_RATES`; any of :data:`FACTOR_RATES`)
    k : rates the ``xapp`` factor keeps (with all their products)
    ridge : weight of the penalty on the factor's coefficients (not its intercept), on the log scale
    n_trees, depth, min_leaf, learning_rate : the ``trees`` factor
    random_state : seed (the ``xapp`` search's validation splits, the trees)
    """

    family = "bounded"

    def __init__(self, factor: str = "linear", terms: Sequence[str] | None = None,
                 rates: Sequence[str] | None = None, *, k: int = 3, ridge: float = 0.05, n_trees: int = 150,
                 depth: int = 3, min_leaf: int = 40, learning_rate: float = 0.1, random_state: int = 0) -> None:
        if factor not in FACTORS:
            raise ValueError(f"factor must be one of {FACTORS}, got {factor!r}")
        self.factor = factor
        self.terms = tuple(terms) if terms is not None else DEFAULT_TERMS
        self.rates = tuple(rates) if rates is not None else MIX_RATES
        bad = [t for t in self.terms if t not in TERM_NAMES] + [r for r in self.rates if r not in FACTOR_RATES]
        if bad or not self.terms:
            raise ValueError(f"unknown or missing terms/rates {bad}; terms: {TERM_NAMES}, rates: {FACTOR_RATES}")
        self.k, self.ridge = k, ridge
        self.n_trees, self.depth, self.min_leaf, self.learning_rate = n_trees, depth, min_leaf, learning_rate
        self.random_state = random_state
        self.metadata: dict[str, Any] = {}
        self.needs_simt = False

    # ------------------------------------------------------------------------------------------ inputs
    @property
    def input_columns(self) -> tuple[str, ...]:
        return tuple(f"term_{t}" for t in self.terms) + BASE_COLUMNS + tuple(
            r for r in self.rates if r not in ("fp64", "fp64_slowdown"))

    def check_inputs(self, frame: pd.DataFrame, where: str = "prediction input") -> None:
        """Raise :class:`BoundedModelError` naming a missing, negative or non-finite column of ``frame``."""
        missing = [c for c in self.input_columns if c not in frame.columns]
        if missing:
            raise BoundedModelError(f"{where}: missing column(s) {missing}")
        cols = list(self.input_columns) + [r for r in ("fp64", "fp64_slowdown") if r in self.rates and r in frame]
        vals = frame[cols].to_numpy(np.float64)
        bad = ~np.isfinite(vals)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise BoundedModelError(f"{where}: column {cols[c]!r} is not finite in row {r}")
        n_terms = len(self.terms) + 2  # the terms, the bound and the launches are >= 0
        neg = vals[:, :n_terms] < 0
        if neg.any():
            r, c = np.argwhere(neg)[0]
            raise BoundedModelError(f"{where}: column {cols[c]!r} is negative in row {r}")

    def _parts(self, frame: pd.DataFrame):
        K = np.max(frame[[f"term_{t}" for t in self.terms]].to_numpy(np.float64), axis=1)
        return (np.maximum(K, _TINY), frame["bound_s"].to_numpy(np.float64),
                np.maximum(frame["launches"].to_numpy(np.float64), 1.0), frame["host_timer"].to_numpy(np.float64))

    # ------------------------------------------------------------------------------------------ factor
    def _z(self, frame: pd.DataFrame) -> np.ndarray:
        X = rate_matrix(frame, self.rates)
        return (X - self.mean_) / self.scale_

    def log_factor(self, frame: pd.DataFrame) -> np.ndarray:
        """log f(rates) of each row, clipped to the range it took on the training rows."""
        Z = self._z(frame)
        if self.factor == "trees":
            g = np.full(len(frame), self.trees_["init"])
            for t in self.trees_["_arrays"]:
                g += self.trees_["learning_rate"] * _tree_eval(t, Z)
        else:
            Zc = Z[:, list(self.factor_inputs_)]
            Zc = np.clip(Zc, self.z_lo_, self.z_hi_)
            g = _design(Zc, self.factor_terms_) @ self.coef_
        return np.clip(g, self.log_factor_range_[0], self.log_factor_range_[1])

    def predict(self, frame: pd.DataFrame, **_) -> np.ndarray:
        """Predicted kernel time in seconds of each row."""
        self.check_inputs(frame)
        K, B, L, H = self._parts(frame)
        return self.host_s_ * H + np.maximum(B, L * (self.launch_s_ + np.exp(self.log_factor(frame)) * K))

    def predict_log(self, frame: pd.DataFrame, **_) -> np.ndarray:
        return np.log(self.predict(frame))

    def explain(self, frame: pd.DataFrame) -> dict:
        """How the first row's time is made: the estimate term that dominates, the factor, the fixed cost,
        the floor and whether the floor decided (seconds)."""
        K, B, L, H = self._parts(frame.iloc[:1])
        terms = {t: float(frame[f"term_{t}"].iloc[0]) for t in self.terms}
        top = max(terms, key=terms.get)
        f = float(np.exp(self.log_factor(frame.iloc[:1]))[0])
        core = float(L[0] * (self.launch_s_ + f * K[0]))
        return {"term": top, "term_s": terms[top], "factor": f, "launches": float(L[0]),
                "launch_s": float(self.launch_s_), "estimate_s": core, "bound_s": float(B[0]),
                "floor_decides": bool(B[0] >= core), "host_s": float(self.host_s_ * H[0])}

    @property
    def training_ranges(self) -> dict[str, list[float]]:
        """``{rate: [min, max]}`` on the training rows (``ilp32`` and ``warp_sectorsPerGroup`` as logarithms)."""
        return {r: [float(self.x_lo_[i]), float(self.x_hi_[i])] for i, r in enumerate(self.rates)}

    def contributions(self, frame: pd.DataFrame) -> pd.DataFrame:
        """What makes the log of the first row's predicted time, as rows that sum to it exactly (``column``,
        ``value``, ``contribution`` in natural-log seconds): ``launches`` (log L), ``estimate: <term>`` (the
        log of the largest per-launch estimate), the factor as ``start`` (its intercept, or the trees' start)
        and one row per rate it reads (the linear factor: coefficient x standardised rate; for the other
        factors one row ``rates`` for all of them), ``factor held to its training range`` when the clip moved
        it, ``fixed cost per launch`` (log((t0 + f K) / (f K))), ``lower bound`` (what the floor adds when it
        decides) and ``host timer`` (0 for a device-side time)."""
        one = frame.iloc[:1]
        K, B, L, H = self._parts(one)
        terms = {t: float(one[f"term_{t}"].iloc[0]) for t in self.terms}
        top = max(terms, key=terms.get)
        g = float(self.log_factor(one)[0])
        rows = [("launches", float(L[0]), math.log(L[0])), (f"estimate: {top}", float(K[0]), math.log(K[0]))]
        X = rate_matrix(one, self.rates)[0]
        if self.factor == "linear":
            z = np.clip(self._z(one)[0, list(self.factor_inputs_)], self.z_lo_, self.z_hi_)
            rows.append(("start", float("nan"), float(self.coef_[0])))
            parts = 0.0
            for (j,), c in zip(self.factor_terms_[1:], self.coef_[1:]):
                rows.append((self.rates[self.factor_inputs_[j]], float(X[self.factor_inputs_[j]]), float(c * z[j])))
                parts += float(c * z[j])
            raw = float(self.coef_[0]) + parts
        else:
            rows.append(("rates", float("nan"), g))
            raw = g
        if abs(raw - g) > 0:
            rows.append(("factor held to its training range", float("nan"), g - raw))
        core = self.launch_s_ + math.exp(g) * K[0]
        rows.append(("fixed cost per launch", float(self.launch_s_), math.log(core / (math.exp(g) * K[0]))))
        est = L[0] * core
        rows.append(("lower bound", float(B[0]), math.log(max(B[0], est) / est)))
        total = self.host_s_ * H[0] + max(B[0], est)
        rows.append(("host timer", float(H[0]), math.log(total / max(B[0], est))))
        return pd.DataFrame(rows, columns=["column", "value", "contribution"])

    def out_of_range(self, frame: pd.DataFrame) -> list[str]:
        """Rates of ``frame``'s first row outside their training range (the factor holds them at the edge)."""
        X = rate_matrix(frame.iloc[:1], self.rates)[0]
        return [r for i, r in enumerate(self.rates) if not (self.x_lo_[i] - 1e-12 <= X[i] <= self.x_hi_[i] + 1e-12)]

    # ------------------------------------------------------------------------------------------ fitting
    def fit(self, frame: pd.DataFrame, measured_s, *, sample_weight=None, **_) -> "BoundedTimeModel":
        """Fit on ``frame`` (the input columns) and the measured kernel times in seconds; ``sample_weight``
        per row (e.g. one over the rows of its application)."""
        from scipy.optimize import least_squares

        self.check_inputs(frame, "training data")
        y = np.log(np.maximum(np.asarray(measured_s, np.float64), _TINY))
        n = len(y)
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
        w = w / w.mean()
        X = rate_matrix(frame, self.rates)
        self.x_lo_, self.x_hi_ = X.min(axis=0), X.max(axis=0)
        self.mean_ = X.mean(axis=0)
        self.scale_ = np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        Z = (X - self.mean_) / self.scale_
        K, B, L, H = self._parts(frame)
        sw = np.sqrt(w)

        def fixed_costs(g, p0):
            def res(p):
                return sw * (np.log(np.exp(p[1]) * H + np.maximum(B, L * (np.exp(p[0]) + np.exp(g) * K))) - y)
            return least_squares(res, p0, loss="soft_l1", f_scale=0.3).x

        if self.factor in ("linear", "xapp"):
            if self.factor == "linear":
                inputs = tuple(range(Z.shape[1]))
                terms = [()] + [(j,) for j in range(len(inputs))]
            else:
                inputs = self._xapp_subset(Z, K, B, L, H, y, w)
                terms = all_products(len(inputs))
            D = _design(Z[:, list(inputs)], terms)

            def residuals(p):
                g = D @ p[2:]
                fit = sw * (np.log(np.exp(p[1]) * H + np.maximum(B, L * (np.exp(p[0]) + np.exp(g) * K))) - y)
                return np.concatenate([fit, math.sqrt(n) * self.ridge * p[3:]])

            p0 = np.zeros(2 + len(terms))
            p0[0], p0[1] = math.log(3e-6), math.log(1e-5)
            lower = np.full(len(p0), -np.inf)
            for i, t in enumerate(terms):  # the products of the nonnegative rates alone (a single rate) stay >= 0
                if len(t) == 1 and self.rates[inputs[t[0]]] in NONNEGATIVE:
                    lower[2 + i] = 0.0
            p = least_squares(residuals, p0, loss="soft_l1", f_scale=0.3, max_nfev=4000, bounds=(lower, np.inf)).x
            self.factor_inputs_, self.factor_terms_ = tuple(int(i) for i in inputs), [tuple(t) for t in terms]
            self.coef_ = p[2:]
            self.z_lo_, self.z_hi_ = Z[:, list(inputs)].min(axis=0), Z[:, list(inputs)].max(axis=0)
            g = D @ self.coef_
            self.launch_s_, self.host_s_ = math.exp(p[0]), math.exp(p[1])
        else:
            g, p = self._fit_trees(Z, K, B, L, H, y, w, fixed_costs)
            self.launch_s_, self.host_s_ = math.exp(p[0]), math.exp(p[1])
        self.log_factor_range_ = (float(g.min()), float(g.max()))
        return self

    def _xapp_subset(self, Z, K, B, L, H, y, w) -> tuple[int, ...]:
        """XAPP's search for the factor: the ``k`` rates whose interaction polynomial best predicts the factor
        implied by the measured times (with a first linear fit's fixed costs), scored by its random
        sub-sampling validation (``predictor.interaction``)."""
        import warnings

        from .interaction import InteractionSearchRegressor

        first = BoundedTimeModel("linear", self.terms, self.rates, ridge=self.ridge)
        frame = pd.DataFrame({f"term_{t}": K for t in self.terms})
        frame["bound_s"], frame["launches"], frame["host_timer"] = B, L, H
        Xr = Z * self.scale_ + self.mean_
        for i, r in enumerate(self.rates):
            frame[r] = np.exp(Xr[:, i]) if r in ("ilp32", "warp_sectorsPerGroup") else Xr[:, i]
        first.fit(frame, np.exp(y), sample_weight=w)
        core = (np.exp(y) - first.host_s_ * H) / L - first.launch_s_
        informative = core > 0.5 * (np.exp(y) - first.host_s_ * H) / L
        implied = core[informative] / K[informative]
        reg = InteractionSearchRegressor(k=min(self.k, Z.shape[1]), transform="log", n_splits=50,
                                         validation_size=0.2, random_state=self.random_state)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reg.fit(pd.DataFrame(Z[informative], columns=list(self.rates)), implied)
        return tuple(int(i) for i in reg.subset_indices_)

    def _fit_trees(self, Z, K, B, L, H, y, w, fixed_costs):
        """Gradient boosting of log f on the joint loss: each round fits a regression tree to the Gauss-Newton
        step of every row's log-time error with respect to its log factor (rows where the floor decides get
        none), and the fixed costs are refitted every ten rounds."""
        from sklearn.tree import DecisionTreeRegressor

        p = np.array([math.log(3e-6), math.log(1e-5)])
        g0 = float(np.median(np.log(np.maximum(np.exp(y) / L - math.exp(p[0]), 0.2 * np.exp(y) / L) / K)))
        g = np.full(len(y), g0)
        arrays, docs = [], []
        for it in range(self.n_trees):
            t0, h = math.exp(p[0]), math.exp(p[1])
            core = L * (t0 + np.exp(g) * K)
            act = core > B
            tot = h * H + np.where(act, core, B)
            J = np.where(act, L * np.exp(g) * K / tot, 0.0)
            ok = J > 1e-3
            if not ok.any():
                break
            step = np.clip(-(np.log(tot[ok]) - y[ok]) / J[ok], -3.0, 3.0)
            tree = DecisionTreeRegressor(max_depth=self.depth, min_samples_leaf=self.min_leaf,
                                         random_state=self.random_state + it)
            tree.fit(Z[ok], step, sample_weight=(w * J * J)[ok])
            doc = {"left": tree.tree_.children_left.tolist(), "right": tree.tree_.children_right.tolist(),
                   "feature": tree.tree_.feature.tolist(), "threshold": tree.tree_.threshold.tolist(),
                   "value": tree.tree_.value[:, 0, 0].tolist()}
            arr = _tree_arrays_of(doc)
            g = g + self.learning_rate * _tree_eval(arr, Z)
            docs.append(doc)
            arrays.append(arr)
            if it % 10 == 9:
                p = fixed_costs(g, p)
        p = fixed_costs(g, p)
        self.trees_ = {"init": g0, "learning_rate": self.learning_rate, "trees": docs, "_arrays": arrays}
        return g, p

    # ------------------------------------------------------------------------------------------ files
    def to_dict(self) -> dict:
        doc = {"family": self.family, "factor": self.factor, "terms": list(self.terms), "rates": list(self.rates),
               "launch_s": self.launch_s_, "host_s": self.host_s_, "mean": self.mean_.tolist(),
               "scale": self.scale_.tolist(), "rate_min": self.x_lo_.tolist(), "rate_max": self.x_hi_.tolist(),
               "log_factor_range": list(self.log_factor_range_), "metadata": self.metadata}
        if self.factor == "trees":
            doc["trees"] = {k: v for k, v in self.trees_.items() if k != "_arrays"}
        else:
            doc.update(factor_inputs=list(self.factor_inputs_), factor_terms=[list(t) for t in self.factor_terms_],
                       coef=self.coef_.tolist(), z_min=self.z_lo_.tolist(), z_max=self.z_hi_.tolist())
        return doc

    @classmethod
    def from_dict(cls, doc: dict, source: str = "<model>") -> "BoundedTimeModel":
        """Rebuild a model from :meth:`to_dict`'s document; errors name ``source`` and the field."""
        def field(name, kind=None):
            if name not in doc:
                raise BoundedModelError(f"{source}: field {name!r} is missing")
            return doc[name]

        def numbers(name, length=None):
            v = field(name)
            try:
                a = np.asarray(v, np.float64)
            except (TypeError, ValueError):
                raise BoundedModelError(f"{source}: field {name!r} must be a list of numbers") from None
            if a.ndim != 1 or not np.all(np.isfinite(a)) or (length is not None and len(a) != length):
                raise BoundedModelError(f"{source}: field {name!r} must be {length or 'a list of'} finite numbers")
            return a

        try:
            m = cls(field("factor"), field("terms"), field("rates"))
        except (ValueError, TypeError) as exc:
            raise BoundedModelError(f"{source}: {exc}") from None
        p = len(m.rates)
        for name in ("launch_s", "host_s"):
            v = field(name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise BoundedModelError(f"{source}: field {name!r} must be a finite number >= 0")
        m.launch_s_, m.host_s_ = float(doc["launch_s"]), float(doc["host_s"])
        m.mean_, m.scale_ = numbers("mean", p), numbers("scale", p)
        if np.any(m.scale_ <= 0):
            raise BoundedModelError(f"{source}: field 'scale' must be positive")
        m.x_lo_, m.x_hi_ = numbers("rate_min", p), numbers("rate_max", p)
        lr = numbers("log_factor_range", 2)
        if lr[0] > lr[1]:
            raise BoundedModelError(f"{source}: field 'log_factor_range' must be [min, max]")
        m.log_factor_range_ = (float(lr[0]), float(lr[1]))
        m.metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        if m.factor == "trees":
            trees = field("trees")
            if not isinstance(trees, dict) or not isinstance(trees.get("trees"), list):
                raise BoundedModelError(f"{source}: field 'trees' must hold the fitted trees")
            for key in ("init", "learning_rate"):
                if not isinstance(trees.get(key), (int, float)) or not math.isfinite(trees[key]):
                    raise BoundedModelError(f"{source}: field 'trees.{key}' must be a finite number")
            arrays = []
            for i, t in enumerate(trees["trees"]):
                try:
                    arrays.append(_tree_arrays_of(t, p))
                except (KeyError, TypeError, ValueError) as exc:
                    raise BoundedModelError(f"{source}: tree {i}: {exc}") from None
            m.trees_ = {**trees, "_arrays": arrays}
            return m
        inputs = field("factor_inputs")
        if not isinstance(inputs, list) or any(not isinstance(i, int) or not 0 <= i < p for i in inputs):
            raise BoundedModelError(f"{source}: field 'factor_inputs' must list rate positions 0..{p - 1}")
        terms = field("factor_terms")
        if not isinstance(terms, list) or any(not isinstance(t, list) or any(not isinstance(j, int) or
                                                                           not 0 <= j < len(inputs) for j in t)
                                              for t in terms):
            raise BoundedModelError(f"{source}: field 'factor_terms' must list products of factor inputs")
        m.factor_inputs_, m.factor_terms_ = tuple(inputs), [tuple(t) for t in terms]
        m.coef_ = numbers("coef", len(terms))
        m.z_lo_, m.z_hi_ = numbers("z_min", len(inputs)), numbers("z_max", len(inputs))
        return m


def _tree_arrays_of(t: dict, n_columns: int | None = None):
    left = np.asarray(t["left"], np.int64)
    right = np.asarray(t["right"], np.int64)
    feat = np.asarray(t["feature"], np.int64)
    thr = np.asarray(t["threshold"], np.float64)
    val = np.asarray(t["value"], np.float64)
    n = len(left)
    if not (n and len(right) == n and len(feat) == n and len(thr) == n and len(val) == n):
        raise ValueError("node arrays of different lengths")
    inner = left >= 0
    if (np.any(left[inner] >= n) or np.any(right[inner] >= n) or np.any(right[inner] < 0)
            or np.any(left[inner] <= np.nonzero(inner)[0]) or np.any(feat[inner] < 0)
            or (n_columns is not None and np.any(feat[inner] >= n_columns))):
        raise ValueError("a node points outside the tree or the inputs")
    if not np.all(np.isfinite(val)):
        raise ValueError("non-finite leaf value")
    return left, right, feat, thr, val


def _tree_eval(arrays, X: np.ndarray) -> np.ndarray:
    left, right, feat, thr, val = arrays
    node = np.zeros(len(X), dtype=np.int64)
    rows = np.arange(len(X))
    while True:
        inner = left[node] >= 0
        if not inner.any():
            return val[node]
        nd = node[inner]
        go_left = X[rows[inner], feat[nd]] <= thr[nd]
        node[inner] = np.where(go_left, left[nd], right[nd])
