"""The cluster classifier of Wu et al. (HPCA 2015, Sec. III-D): a three-layer sigmoid network in NumPy.

Input layer linear (the min-max normalised counters), one hidden layer of sigmoid units, one sigmoid output
per cluster; the cluster with the highest output wins. By default the hidden layer has as many nodes as
there are clusters, as in the paper. The minimum and maximum of every input seen in training are stored
in the model and reused for every prediction.

scikit-learn's ``MLPClassifier`` is not used because its output layer is a softmax (or a single logistic
unit for two classes), not one independent sigmoid per cluster. The network is small enough to train by
full-batch L-BFGS (SciPy) on the summed binary cross-entropy of the outputs against one-hot targets plus
an L2 penalty ``alpha``; the paper does not name its loss, this choice is recorded in docs/scaling.md.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from threadpoolctl import threadpool_limits

SCHEMA_NAME = "portcast.sigmoid_mlp"
SCHEMA_VERSION = 1


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return expit(z)


def minmax_normalise(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Map each column to [0, 1] by the training range; a constant column maps to 0.

    Parameters
    ----------
    X:
        Array (n_samples, n_features).
    lo, hi:
        Training minimum and maximum per feature.

    Returns
    -------
    numpy.ndarray
        ``(X - lo) / (hi - lo)``, with ``hi - lo`` replaced by 1 where it is 0.
    """
    span = np.where(hi > lo, hi - lo, 1.0)
    return (np.asarray(X, dtype=float) - lo) / span


class SigmoidMLPClassifier:
    """Three-layer network: linear inputs, sigmoid hidden layer, one sigmoid output per class.

    Parameters
    ----------
    n_hidden:
        Hidden nodes; ``None`` means as many as classes (the paper's choice).
    alpha:
        L2 penalty on the weights (not the biases), scaled by 1/n_samples.
    max_iter:
        L-BFGS iteration limit.
    tol:
        L-BFGS tolerance on the loss.
    random_state:
        Seed of the initial weights (Glorot-uniform).
    """

    def __init__(self, n_hidden: int | None = None, alpha: float = 1e-3, max_iter: int = 500,
                 tol: float = 1e-7, random_state: int | None = 0) -> None:
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    # -- the network ------------------------------------------------------------------------------
    def _shapes(self, n_in: int, n_hid: int, n_out: int):
        return [(n_in, n_hid), (n_hid,), (n_hid, n_out), (n_out,)]

    def _unpack(self, theta: np.ndarray, n_in: int, n_hid: int, n_out: int):
        out, i = [], 0
        for shp in self._shapes(n_in, n_hid, n_out):
            size = int(np.prod(shp))
            out.append(theta[i:i + size].reshape(shp))
            i += size
        return out

    @staticmethod
    def forward(Xn: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray):
        """Hidden and output activations for normalised inputs ``Xn`` (n_samples, n_in)."""
        H = _sigmoid(Xn @ W1 + b1)
        return H, _sigmoid(H @ W2 + b2)

    def _loss_grad(self, theta, Xn, Y, n_hid):
        n, n_in = Xn.shape
        n_out = Y.shape[1]
        W1, b1, W2, b2 = self._unpack(theta, n_in, n_hid, n_out)
        H, P = self.forward(Xn, W1, b1, W2, b2)
        eps = 1e-12
        loss = -np.sum(Y * np.log(P + eps) + (1 - Y) * np.log(1 - P + eps)) / n
        loss += 0.5 * self.alpha / n * (np.sum(W1 * W1) + np.sum(W2 * W2))
        dZ2 = (P - Y) / n                       # d loss / d pre-activation of the sigmoid outputs
        gW2 = H.T @ dZ2 + self.alpha / n * W2
        gb2 = dZ2.sum(axis=0)
        dZ1 = (dZ2 @ W2.T) * H * (1 - H)
        gW1 = Xn.T @ dZ1 + self.alpha / n * W1
        gb1 = dZ1.sum(axis=0)
        return loss, np.concatenate([gW1.ravel(), gb1, gW2.ravel(), gb2])

    # -- estimator API ----------------------------------------------------------------------------
    def fit(self, X, y) -> "SigmoidMLPClassifier":
        """Learn the weights.

        Parameters
        ----------
        X:
            Counters, shape (n_samples, n_features).
        y:
            Class labels (any sortable values), length n_samples.

        Returns
        -------
        self
        """
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        if X.ndim != 2 or len(X) != len(y) or len(X) == 0:
            raise ValueError(f"X must be (n_samples, n_features) with one label per row; got {X.shape}, {y.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values")
        self.classes_ = np.unique(y)
        self.n_features_in_ = X.shape[1]
        self.feature_min_ = X.min(axis=0)
        self.feature_max_ = X.max(axis=0)
        n_out = len(self.classes_)
        n_hid = int(self.n_hidden) if self.n_hidden is not None else n_out
        self.n_hidden_ = n_hid
        Xn = minmax_normalise(X, self.feature_min_, self.feature_max_)
        Y = (y[:, None] == self.classes_[None, :]).astype(float)
        rng = np.random.default_rng(self.random_state)
        parts = []
        for shp in self._shapes(X.shape[1], n_hid, n_out):
            if len(shp) == 2:
                lim = np.sqrt(6.0 / (shp[0] + shp[1]))
                parts.append(rng.uniform(-lim, lim, size=shp).ravel())
            else:
                parts.append(np.zeros(shp))
        theta0 = np.concatenate(parts)
        # the problem is tiny: BLAS threads only add overhead (3-5x slower on a busy 2-core machine)
        with threadpool_limits(limits=1):
            res = minimize(self._loss_grad, theta0, args=(Xn, Y, n_hid), jac=True, method="L-BFGS-B",
                           options={"maxiter": int(self.max_iter), "ftol": float(self.tol), "gtol": 1e-10})
        self.coefs_ = self._unpack(res.x, X.shape[1], n_hid, n_out)
        self.loss_ = float(res.fun)
        self.n_iter_ = int(res.nit)
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Sigmoid output per class (independent values in (0, 1), not normalised), (n_samples, n_classes)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got {X.shape[1]}")
        Xn = minmax_normalise(X, self.feature_min_, self.feature_max_)
        return self.forward(Xn, *self.coefs_)[1]

    def predict(self, X) -> np.ndarray:
        """The class with the highest output for each row."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    # -- persistence ------------------------------------------------------------------------------
    def to_json(self) -> dict:
        """A JSON-ready dict holding hyper-parameters, normalisation ranges and weights."""
        return {
            "schema": SCHEMA_NAME, "version": SCHEMA_VERSION,
            "params": {"n_hidden": self.n_hidden, "alpha": self.alpha, "max_iter": self.max_iter,
                       "tol": self.tol, "random_state": self.random_state},
            "classes": self.classes_.tolist(),
            "feature_min": self.feature_min_.tolist(), "feature_max": self.feature_max_.tolist(),
            "weights": [w.tolist() for w in self.coefs_],
            "loss": self.loss_, "n_iter": self.n_iter_,
        }

    @classmethod
    def from_json(cls, data: dict) -> "SigmoidMLPClassifier":
        """Rebuild a fitted classifier from :meth:`to_json` output."""
        if data.get("schema") != SCHEMA_NAME or int(data.get("version", 0)) > SCHEMA_VERSION:
            raise ValueError(f"not a {SCHEMA_NAME} v<={SCHEMA_VERSION} object: {data.get('schema')!r} "
                             f"v{data.get('version')!r}")
        self = cls(**data["params"])
        self.classes_ = np.asarray(data["classes"])
        self.feature_min_ = np.asarray(data["feature_min"], dtype=float)
        self.feature_max_ = np.asarray(data["feature_max"], dtype=float)
        self.n_features_in_ = len(self.feature_min_)
        self.coefs_ = [np.asarray(w, dtype=float) for w in data["weights"]]
        self.n_hidden_ = self.coefs_[0].shape[1]
        self.loss_ = float(data["loss"])
        self.n_iter_ = int(data["n_iter"])
        return self
