"""The scaling-surface model of Wu et al. (HPCA 2015, Sec. III) for performance or power.

For a fixed base configuration the model holds one k-means cluster set per CU count (clustering the
kernels' engine and memory clock scaling values at that CU count) and, when the grid has more than one
CU count, one cluster set of CU scaling values (taken at the base core and memory clocks). One
:class:`~gpu_models.scaling.classifier.SigmoidMLPClassifier` per cluster set maps the counters measured
at the base configuration to a cluster. A new kernel's value at any target is its base value times the
chosen centroids' scaling values chained along the path of Eq. 1 (:mod:`gpu_models.scaling.surfaces`).

The same machinery models power: ``target="power"`` only labels what the value arrays hold.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from core.atomic import atomic_write_json
from core.jsonfile import JsonFileError, read_json
from gpu_models.scaling.classifier import SigmoidMLPClassifier
from gpu_models.scaling.dataset import Grid
from gpu_models.scaling.surfaces import chain_surface, cu_scaling, frequency_features, split_frequency_features

SCHEMA_NAME = "portcast.scaling_model"
SCHEMA_VERSION = 1


class ScalingModelError(ValueError):
    """A model file cannot be read (wrong schema, version or content)."""


def _kmeans(F: np.ndarray, k: int, n_init: int, random_state) -> tuple[np.ndarray, np.ndarray]:
    """k-means with k capped at the number of distinct rows; returns (centroids, labels)."""
    if F.shape[1] == 0:
        return np.zeros((1, 0)), np.zeros(len(F), dtype=int)
    k_eff = int(min(k, len(np.unique(np.round(F, 12), axis=0))))
    if k_eff <= 1:
        return F.mean(axis=0, keepdims=True), np.zeros(len(F), dtype=int)
    km = KMeans(n_clusters=k_eff, n_init=n_init, random_state=random_state).fit(F)
    labels = km.labels_.astype(int)
    # centroid = mean scaling values of the members (what k-means converged to, recomputed exactly)
    cents = np.vstack([F[labels == j].mean(axis=0) for j in range(k_eff)])
    return cents, labels


class _ClusterSet:
    """Centroids of one cluster set, the training labels and the classifier that picks a cluster."""

    def __init__(self, centroids: np.ndarray, labels: np.ndarray, classifier: SigmoidMLPClassifier | None):
        self.centroids = centroids
        self.labels = labels
        self.classifier = classifier

    def choose(self, X: np.ndarray) -> np.ndarray:
        if self.classifier is None:
            return np.zeros(len(X), dtype=int)
        return self.classifier.predict(X).astype(int)

    def nearest(self, F: np.ndarray) -> np.ndarray:
        d = ((F[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)
        return np.argmin(d, axis=1)

    def to_json(self) -> dict:
        return {"centroids": self.centroids.tolist(), "labels": self.labels.tolist(),
                "classifier": None if self.classifier is None else self.classifier.to_json()}

    @classmethod
    def from_json(cls, d: dict) -> "_ClusterSet":
        cents = np.asarray(d["centroids"], dtype=float)
        if cents.ndim == 1:
            cents = cents.reshape(len(cents), 0)
        clf = None if d["classifier"] is None else SigmoidMLPClassifier.from_json(d["classifier"])
        return cls(cents, np.asarray(d["labels"], dtype=int), clf)


class ScalingModel:
    """Cluster-and-classify scaling model (performance or power) for one base configuration.

    Parameters
    ----------
    base:
        The base configuration ``(sm_count, core_mhz, mem_mhz)`` at which new kernels are measured.
    n_clusters:
        Clusters per cluster set (capped at the number of distinct training surfaces).
    target:
        ``"time"`` or ``"power"``: what the value arrays hold (kept in the model file).
    n_hidden:
        Hidden nodes of each classifier; ``None`` = number of clusters of that set (the paper's choice).
    alpha, max_iter:
        Classifier L2 penalty and L-BFGS iteration limit.
    n_init:
        k-means restarts.
    random_state:
        Seed for k-means and the classifiers.
    """

    def __init__(self, base: tuple[int, float, float], n_clusters: int = 12, target: str = "time",
                 n_hidden: int | None = None, alpha: float = 1e-3, max_iter: int = 500, n_init: int = 10,
                 random_state: int | None = 0) -> None:
        self.base = base
        self.n_clusters = n_clusters
        self.target = target
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.max_iter = max_iter
        self.n_init = n_init
        self.random_state = random_state

    def get_params(self) -> dict:
        return {"base": list(self.base), "n_clusters": self.n_clusters, "target": self.target,
                "n_hidden": self.n_hidden, "alpha": self.alpha, "max_iter": self.max_iter,
                "n_init": self.n_init, "random_state": self.random_state}

    # -- training ---------------------------------------------------------------------------------
    def fit(self, X, Y, grid: Grid, counter_names=None, meta: dict | None = None) -> "ScalingModel":
        """Cluster the training surfaces and train one classifier per cluster set.

        Parameters
        ----------
        X:
            Counters measured at the base configuration, (n_kernels, n_features).
        Y:
            Values (time or power) over the grid, (n_kernels, n_cu, n_core, n_mem), all positive.
        grid:
            The grid that ``Y`` is laid out on; must contain :attr:`base`.
        counter_names:
            Optional names of the counter columns (stored in the model file).
        meta:
            Optional JSON-ready notes stored in the model file (e.g. how counters were computed).

        Returns
        -------
        self
        """
        if self.target not in ("time", "power"):
            raise ValueError(f"target must be 'time' or 'power', got {self.target!r}")
        if int(self.n_clusters) < 1:
            raise ValueError(f"n_clusters must be >= 1, got {self.n_clusters}")
        X = np.asarray(X, dtype=float)
        Y = np.asarray(Y, dtype=float)
        if Y.ndim != 4 or Y.shape[1:] != grid.shape:
            raise ValueError(f"Y must have shape (n_kernels, {grid.shape}), got {Y.shape}")
        if X.ndim != 2 or len(X) != len(Y):
            raise ValueError(f"X must be (n_kernels={len(Y)}, n_features), got {X.shape}")
        if not np.all(np.isfinite(Y)) or np.any(Y <= 0):
            raise ValueError("Y must be positive and finite everywhere")
        self.grid_ = grid
        self.meta_ = dict(meta or {})
        self.base_index_ = grid.index(*self.base)
        self.n_features_in_ = X.shape[1]
        self.counter_names_ = list(counter_names) if counter_names is not None else [f"x{i}" for i in range(X.shape[1])]
        seed = self.random_state
        # tiny problems: BLAS/OpenMP threads only add overhead (3x slower on a busy 2-core machine)
        with threadpool_limits(limits=1):
            self.freq_sets_ = [self._fit_set(X, frequency_features(Y, s), seed) for s in range(grid.shape[0])]
            if grid.shape[0] > 1:
                _, cb, mb = self.base_index_
                self.cu_set_ = self._fit_set(X, cu_scaling(Y, cb, mb), seed)
            else:
                self.cu_set_ = None
        return self

    def _fit_set(self, X, F, seed) -> _ClusterSet:
        cents, labels = _kmeans(F, int(self.n_clusters), int(self.n_init), seed)
        clf = None
        if len(cents) > 1:
            clf = SigmoidMLPClassifier(n_hidden=self.n_hidden, alpha=self.alpha, max_iter=self.max_iter,
                                       random_state=seed).fit(X, labels)
        return _ClusterSet(cents, labels, clf)

    # -- prediction -------------------------------------------------------------------------------
    def _assemble(self, freq_labels: list[np.ndarray], cu_labels: np.ndarray | None):
        n_cu, n_core, n_mem = self.grid_.shape
        n = len(freq_labels[0])
        E = np.ones((n, n_cu, n_core - 1, n_mem))
        M = np.ones((n, n_cu, n_core, n_mem - 1))
        for s, (cs, lab) in enumerate(zip(self.freq_sets_, freq_labels)):
            if cs.centroids.shape[1] == 0:
                continue
            for j in np.unique(lab):
                e, m = split_frequency_features(cs.centroids[j], n_core, n_mem)
                E[lab == j, s] = e
                M[lab == j, s] = m
        C = np.ones((n, n_cu - 1))
        if self.cu_set_ is not None:
            C = self.cu_set_.centroids[cu_labels]
        return E, M, C

    def choose_clusters(self, X) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Cluster chosen by each classifier: (one label array per CU count, CU-set labels or None)."""
        X = self._check_X(X)
        return ([cs.choose(X) for cs in self.freq_sets_],
                None if self.cu_set_ is None else self.cu_set_.choose(X))

    def oracle_clusters(self, Y) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Oracle assignment: the nearest centroid to each kernel's true scaling values.

        For training kernels this is the cluster k-means put them in (converged k-means labels are the
        nearest centroids); for other kernels it is the best a perfect classifier could pick.
        """
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 3:
            Y = Y[None]
        fl = [cs.nearest(frequency_features(Y, s)) if cs.centroids.shape[1] else np.zeros(len(Y), dtype=int)
              for s, cs in enumerate(self.freq_sets_)]
        cl = None
        if self.cu_set_ is not None:
            _, cb, mb = self.base_index_
            cl = self.cu_set_.nearest(cu_scaling(Y, cb, mb))
        return fl, cl

    def predict_surface(self, X, base_values, clusters=None) -> np.ndarray:
        """Predicted value at every grid configuration.

        Parameters
        ----------
        X:
            Counters at the base configuration, (n, n_features) or (n_features,).
        base_values:
            Measured value at the base configuration, (n,) or scalar.
        clusters:
            Optional cluster choice from :meth:`oracle_clusters` (default: the classifiers').

        Returns
        -------
        numpy.ndarray
            (n, n_cu, n_core, n_mem); the base configuration holds the base value itself.
        """
        single = np.ndim(base_values) == 0
        b = np.atleast_1d(np.asarray(base_values, dtype=float))
        if not np.all(np.isfinite(b)) or np.any(b <= 0):
            raise ValueError("base values must be positive and finite")
        if clusters is None:
            clusters = self.choose_clusters(np.atleast_2d(X))
        E, M, C = self._assemble(*clusters)
        out = chain_surface(b, self.base_index_, E, M, C)
        return out[0] if single else out

    def _check_X(self, X) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} counters ({', '.join(self.counter_names_)}), "
                             f"got {X.shape[1]}")
        if not np.all(np.isfinite(X)):
            raise ValueError("counters contain NaN or infinite values")
        return X

    # -- persistence ------------------------------------------------------------------------------
    def to_json(self) -> dict:
        """A JSON-ready dict of the fitted model (schema ``portcast.scaling_model`` v1)."""
        return {
            "schema": SCHEMA_NAME, "version": SCHEMA_VERSION,
            "params": self.get_params(), "grid": self.grid_.to_json(),
            "counter_names": self.counter_names_, "meta": self.meta_,
            "freq_sets": [cs.to_json() for cs in self.freq_sets_],
            "cu_set": None if self.cu_set_ is None else self.cu_set_.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict) -> "ScalingModel":
        """Rebuild a fitted model from :meth:`to_json` output."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_NAME:
            raise ScalingModelError(f"not a {SCHEMA_NAME} file")
        if int(data.get("version", 0)) > SCHEMA_VERSION:
            raise ScalingModelError(f"model file version {data['version']} is newer than this Portcast "
                                 f"reads ({SCHEMA_VERSION})")
        try:
            p = dict(data["params"])
            p["base"] = (int(p["base"][0]), float(p["base"][1]), float(p["base"][2]))
            self = cls(**p)
            self.grid_ = Grid.from_json(data["grid"])
            self.base_index_ = self.grid_.index(*self.base)
            self.counter_names_ = list(data["counter_names"])
            self.meta_ = dict(data.get("meta") or {})
            self.n_features_in_ = len(self.counter_names_)
            self.freq_sets_ = [_ClusterSet.from_json(d) for d in data["freq_sets"]]
            self.cu_set_ = None if data["cu_set"] is None else _ClusterSet.from_json(data["cu_set"])
        except (KeyError, TypeError, IndexError) as exc:
            raise ScalingModelError(f"model file is missing or has a malformed field: {exc}") from None
        return self

    def save(self, path) -> Path:
        """Write the model as JSON atomically; returns the path."""
        return write_json_atomic(path, self.to_json())

    @classmethod
    def load(cls, path) -> "ScalingModel":
        """Read a model written by :meth:`save`."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file")
        try:
            data = read_json(path, what="scaling model file")
        except JsonFileError as exc:
            raise ScalingModelError(str(exc)) from None
        try:
            return cls.from_json(data)
        except ScalingModelError as exc:
            raise ScalingModelError(f"{path}: {exc}") from None


def write_json_atomic(path, obj) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (see :mod:`core.atomic`)."""
    return atomic_write_json(path, obj, indent=1)


def prediction_errors(pred: np.ndarray, true: np.ndarray, base_index) -> np.ndarray:
    """Absolute relative errors |pred - true| / true at every configuration except the base.

    Parameters
    ----------
    pred, true:
        (n, n_cu, n_core, n_mem).
    base_index:
        Indices of the base configuration (excluded, as in the paper).

    Returns
    -------
    numpy.ndarray
        (n, n_configs - 1) errors as fractions (0.15 = 15 %).
    """
    err = np.abs(pred - true) / true
    mask = np.ones(true.shape[1:], dtype=bool)
    mask[tuple(base_index)] = False
    return err[:, mask]
