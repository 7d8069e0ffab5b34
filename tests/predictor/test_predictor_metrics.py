"""Metrics, checked against the paper's Table 4 (final model on 12 test kernels)."""

import numpy as np
import pytest

from predictor.metrics import (
    all_metrics,
    decision_accuracy,
    max_relative_error,
    mean_relative_error,
    relative_errors,
    speedup_weights,
    weighted_error,
)

# Table 4: benchmark, actual, predicted, error %, weight
TABLE4 = [
    ("bfs1", 5.86, 7.73, 32, 1.0),
    ("lavaMD1", 5.9, 35.16, 496, 1.0),
    ("needle2", 11.26, 4.45, -60, 1.0),
    ("hotspot1", 20.96, 29.59, 41, 1.0),
    ("nn1", 20.99, 31.7, 51, 1.0),
    ("mri-gridding1", 29.63, 30.58, 3, 1.0),
    ("sgemm1", 29.81, 33.29, 12, 1.0),
    ("srad_v13", 39.07, 29.27, -25, 0.75),
    ("raycasting", 54.87, 34.34, -37, 0.75),
    ("sad1", 62.49, 35.52, -43, 0.75),
    ("montecarlo1", 272.98, 71.57, -74, 0.5),
    ("srad_v11", 276.64, 74.65, -73, 0.5),
]
ACT = np.array([r[1] for r in TABLE4])
PRED = np.array([r[2] for r in TABLE4])


def test_table4_errors_and_weights():
    np.testing.assert_allclose(relative_errors(ACT, PRED) * 100, [r[3] for r in TABLE4], atol=0.6)
    np.testing.assert_array_equal(speedup_weights(ACT), [r[4] for r in TABLE4])


def test_table4_averages_exclude_the_outlier():
    # The paper's "Average 41 / 32" are over the 11 kernels without lavaMD (its discussed outlier).
    keep = np.array([r[0] != "lavaMD1" for r in TABLE4])
    assert mean_relative_error(ACT[keep], PRED[keep]) == pytest.approx(0.41, abs=0.005)
    assert weighted_error(ACT[keep], PRED[keep]) == pytest.approx(0.32, abs=0.005)
    # exact value: sum of w|e| over the 11 kernels / 11
    e = np.abs(PRED[keep] - ACT[keep]) / ACT[keep]
    assert weighted_error(ACT[keep], PRED[keep]) == pytest.approx(np.sum(speedup_weights(ACT[keep]) * e) / 11)
    # with lavaMD, on all 12
    assert weighted_error(ACT, PRED) == pytest.approx(0.7065, abs=0.001)
    assert max_relative_error(ACT, PRED) == pytest.approx((35.16 - 5.9) / 5.9)


def test_weight_boundaries():
    np.testing.assert_array_equal(speedup_weights([29.99, 30.0, 100.0, 100.01, 0.5]), [1, 0.75, 0.75, 0.5, 1])


def test_decision_accuracy_and_all_metrics():
    act = [0.5, 2.0, 3.0, 0.9]
    pred = [1.5, 2.5, 0.8, 0.7]  # wrong, right, wrong, right
    assert decision_accuracy(act, pred) == 0.5
    m = all_metrics(act, pred)
    assert m["mean_error"] == pytest.approx(np.mean([2.0, 0.25, 2.2 / 3, 0.2 / 0.9]))
    assert m["decision_accuracy"] == 0.5
    assert set(m) == {"weighted_error", "mean_error", "max_error", "decision_accuracy"}


def test_metric_input_errors():
    with pytest.raises(ValueError, match="actual has 2 values, predicted has 1"):
        mean_relative_error([1, 2], [1])
    with pytest.raises(ValueError, match="> 0"):
        weighted_error([0.0], [1.0])
    with pytest.raises(ValueError, match="predicted speedups must be finite"):
        max_relative_error([1.0], [np.nan])
