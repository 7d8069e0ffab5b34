"""Accuracy metrics of speedup predictions (XAPP paper Sec. 5 and the footnote of Table 4).

All errors are relative: ``(predicted - actual) / actual``, reported as fractions (0.32 = 32%).
"""

from __future__ import annotations

import numpy as np

#: Speedup class boundaries and weights of the paper's weighted error: speedup below 30 ("irregular")
#: weight 1, from 30 to 100 inclusive weight 0.75, above 100 ("embarrassingly parallel") weight 0.5.
WEIGHT_BOUNDS = (30.0, 100.0)
WEIGHTS = (1.0, 0.75, 0.5)


def _pair(actual, predicted) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(actual, dtype=np.float64).reshape(-1)
    p = np.asarray(predicted, dtype=np.float64).reshape(-1)
    if a.shape != p.shape:
        raise ValueError(f"actual has {a.size} values, predicted has {p.size}")
    if a.size == 0:
        raise ValueError("no values to score")
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError("actual speedups must be finite and > 0")
    if not np.all(np.isfinite(p)):
        raise ValueError("predicted speedups must be finite")
    return a, p


def relative_errors(actual, predicted) -> np.ndarray:
    """Signed relative errors ``(predicted - actual) / actual``.

    Parameters
    ----------
    actual, predicted : array-like of shape (n,)

    Returns
    -------
    numpy.ndarray
    """
    a, p = _pair(actual, predicted)
    return (p - a) / a


def speedup_weights(actual) -> np.ndarray:
    """Weights of the paper's weighted error by class of the *actual* speedup (1, 0.75, 0.5).

    Parameters
    ----------
    actual : array-like of shape (n,)

    Returns
    -------
    numpy.ndarray
    """
    a = np.asarray(actual, dtype=np.float64).reshape(-1)
    return np.where(a < WEIGHT_BOUNDS[0], WEIGHTS[0], np.where(a <= WEIGHT_BOUNDS[1], WEIGHTS[1], WEIGHTS[2]))


def mean_relative_error(actual, predicted) -> float:
    """Mean absolute relative error ("average error" of the paper).

    Parameters
    ----------
    actual, predicted : array-like of shape (n,)

    Returns
    -------
    float
    """
    return float(np.mean(np.abs(relative_errors(actual, predicted))))


def weighted_error(actual, predicted) -> float:
    """The paper's average weighted error: mean over points of ``weight(actual) * |relative error|``.

    The mean divides by the number of points, not by the sum of weights: this reproduces Table 4 (32%).

    Parameters
    ----------
    actual, predicted : array-like of shape (n,)

    Returns
    -------
    float
    """
    a, p = _pair(actual, predicted)
    return float(np.mean(speedup_weights(a) * np.abs((p - a) / a)))


def max_relative_error(actual, predicted) -> float:
    """Largest absolute relative error.

    Parameters
    ----------
    actual, predicted : array-like of shape (n,)

    Returns
    -------
    float
    """
    return float(np.max(np.abs(relative_errors(actual, predicted))))


def decision_accuracy(actual, predicted, threshold: float = 1.0) -> float:
    """Fraction of points where the port / don't-port decision (speedup > ``threshold``) is right.

    Parameters
    ----------
    actual, predicted : array-like of shape (n,)
    threshold : float, default 1.0

    Returns
    -------
    float
    """
    a, p = _pair(actual, predicted)
    return float(np.mean((a > threshold) == (p > threshold)))


def all_metrics(actual, predicted) -> dict[str, float]:
    """``weighted_error``, ``mean_error``, ``max_error`` and ``decision_accuracy`` in one dict."""
    return {
        "weighted_error": weighted_error(actual, predicted),
        "mean_error": mean_relative_error(actual, predicted),
        "max_error": max_relative_error(actual, predicted),
        "decision_accuracy": decision_accuracy(actual, predicted),
    }
