"""The three-layer sigmoid network: forward pass, gradient, normalisation, learning, persistence."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_models.scaling.classifier import SigmoidMLPClassifier, minmax_normalise


def _slow_forward(x, W1, b1, W2, b2):
    """Obviously-correct reference: explicit loops and math.exp."""
    import math

    hid = []
    for j in range(W1.shape[1]):
        z = b1[j] + sum(x[i] * W1[i, j] for i in range(len(x)))
        hid.append(1.0 / (1.0 + math.exp(-z)))
    out = []
    for k in range(W2.shape[1]):
        z = b2[k] + sum(hid[j] * W2[j, k] for j in range(len(hid)))
        out.append(1.0 / (1.0 + math.exp(-z)))
    return out


def test_minmax_worked_example():
    X = np.array([[0.0, 5.0, 2.0], [10.0, 5.0, 4.0]])
    out = minmax_normalise(np.array([[5.0, 5.0, 5.0]]), X.min(0), X.max(0))
    np.testing.assert_allclose(out, [[0.5, 0.0, 1.5]])  # constant column -> 0; no clipping outside range


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 10_000))
def test_forward_matches_loop_reference(n_in, n_hid, n_out, seed):
    rng = np.random.default_rng(seed)
    W1, b1 = rng.normal(size=(n_in, n_hid)), rng.normal(size=n_hid)
    W2, b2 = rng.normal(size=(n_hid, n_out)), rng.normal(size=n_out)
    X = rng.uniform(-1, 2, size=(3, n_in))
    _, P = SigmoidMLPClassifier.forward(X, W1, b1, W2, b2)
    for r in range(3):
        np.testing.assert_allclose(P[r], _slow_forward(X[r], W1, b1, W2, b2), rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(2, 4), st.integers(0, 10_000))
def test_gradient_matches_finite_differences(n_in, n_hid, n_out, seed):
    rng = np.random.default_rng(seed)
    clf = SigmoidMLPClassifier(alpha=0.3)
    n = 5
    Xn = rng.uniform(0, 1, size=(n, n_in))
    Y = np.eye(n_out)[rng.integers(0, n_out, n)]
    size = n_in * n_hid + n_hid + n_hid * n_out + n_out
    theta = rng.normal(size=size)
    _, g = clf._loss_grad(theta, Xn, Y, n_hid)
    h = 1e-6
    for i in range(size):
        e = np.zeros(size)
        e[i] = h
        num = (clf._loss_grad(theta + e, Xn, Y, n_hid)[0] - clf._loss_grad(theta - e, Xn, Y, n_hid)[0]) / (2 * h)
        assert abs(num - g[i]) < 1e-6 * max(1.0, abs(num))


def _blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 100.0]])
    X = np.vstack([c + rng.normal(scale=[0.5, 5.0], size=(15, 2)) for c in centres])
    y = np.repeat([3, 7, 9], 15)
    return X, y


def test_learns_separable_clusters_and_stores_ranges():
    X, y = _blobs()
    clf = SigmoidMLPClassifier(random_state=0).fit(X, y)
    assert clf.n_hidden_ == 3                        # as many hidden nodes as classes
    assert clf.coefs_[0].shape == (2, 3) and clf.coefs_[2].shape == (3, 3)
    np.testing.assert_array_equal(clf.feature_min_, X.min(0))
    np.testing.assert_array_equal(clf.feature_max_, X.max(0))
    assert (clf.predict(X) == y).all()
    P = clf.predict_proba(X)
    assert P.shape == (45, 3) and ((P > 0) & (P < 1)).all()
    np.testing.assert_array_equal(clf.predict([[10.0, 0.0], [0.0, 100.0]]), [7, 9])


def test_json_round_trip_and_reproducibility():
    X, y = _blobs()
    a = SigmoidMLPClassifier(random_state=4).fit(X, y)
    b = SigmoidMLPClassifier.from_json(json.loads(json.dumps(a.to_json())))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = SigmoidMLPClassifier(random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), c.predict_proba(X))
    with pytest.raises(ValueError, match="not a portcast.sigmoid_mlp"):
        SigmoidMLPClassifier.from_json({"schema": "other"})


def test_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        SigmoidMLPClassifier().fit([[np.nan], [1.0]], [0, 1])
    clf = SigmoidMLPClassifier().fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="expected 1 features, got 2"):
        clf.predict([[1.0, 2.0]])
