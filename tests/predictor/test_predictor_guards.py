"""What keeps a speedup model from saying nonsense: required features, clipping to the training range, the
training speedup range, novelty, and their round trip through model files."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from predictor import InteractionSearchRegressor, ModelFileError, explain_prediction, load_model, save_model


def planted(n=60, p=6, seed=0):
    """y = exp(0.4 + 0.5 f2 - 0.3 f5 + 0.2 f2*f5) exactly on [0, 2]^p; f0 carries nothing."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0.0, 2.0, (n, p)), columns=[f"f{j}" for j in range(p)])
    y = np.exp(0.4 + 0.5 * X["f2"] - 0.3 * X["f5"] + 0.2 * X["f2"] * X["f5"]).to_numpy()
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = planted()
    est = InteractionSearchRegressor(k=2, transform="log", n_splits=5, validation_size=10, random_state=0,
                                     clip_features=True).fit(X, y)
    return est, X, y


def test_required_features_are_in_every_subset():
    X, y = planted()
    est = InteractionSearchRegressor(k=2, transform="log", n_splits=5, validation_size=10, random_state=0,
                                     required=("f0",)).fit(X, y)
    assert "f0" in est.subset_
    assert len(est.scores_) == math.comb(5, 1)
    assert all("f0" in feats for feats in est.scores_["features"])
    with pytest.raises(ValueError, match="required feature 'nope' is not an input column"):
        InteractionSearchRegressor(k=2, n_splits=2, validation_size=10, required=("nope",)).fit(X, y)
    with pytest.raises(ValueError, match="at most k=1"):
        InteractionSearchRegressor(k=1, required=("f0", "f1")).fit(X, y)


def test_two_stage_search_keeps_required_features():
    X, y = planted()
    est = InteractionSearchRegressor(k=2, transform="log", n_splits=5, validation_size=10, random_state=0,
                                     search="two-stage", sample_fraction=0.5, n_stage2_features=3,
                                     required=("f0",)).fit(X, y)
    assert "f0" in est.subset_ and "f0" in est.stage2_features_
    assert all("f0" in feats for feats in est.scores_["features"])


def test_clipped_features_predict_as_at_the_edge_of_the_data(fitted):
    est, X, y = fitted
    assert est.subset_ == ("f2", "f5")
    hi2 = float(X["f2"].max())
    far = pd.DataFrame({"f2": [50.0], "f5": [1.0]})
    edge = pd.DataFrame({"f2": [hi2], "f5": [1.0]})
    np.testing.assert_allclose(est.predict(far), est.predict(edge), rtol=1e-12)
    e = explain_prediction(est, far)
    assert e.attrs["clipped"] == [("f2", 50.0, hi2)]
    assert e.attrs["prediction"] == pytest.approx(float(est.predict(edge)[0]), rel=1e-12)
    raw = InteractionSearchRegressor(**{**est.get_params(), "clip_features": False})
    raw.fit(X, y)
    assert float(raw.predict(far)[0]) > 1e3 * float(est.predict(far)[0])  # unclipped, the interaction runs away


def test_training_speedup_range_and_novelty(fitted):
    est, X, y = fitted
    assert (est.target_min_, est.target_max_) == (float(y.min()), float(y.max()))
    inside = explain_prediction(est, X.iloc[[3]])
    assert not inside.attrs["outside_targets"] and inside.attrs["novelty"] == 0.0
    # a reference: nearest training point in standardised (f2, f5), over the largest nearest-other distance
    Z = (X[["f2", "f5"]].to_numpy() - est.mean_) / est.scale_
    D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    spread = D.min(axis=1).max()
    q = pd.DataFrame({"f2": [1.9], "f5": [0.05]})
    zq = (q.to_numpy() - est.mean_) / est.scale_
    expect = np.sqrt(((Z - zq) ** 2).sum(-1)).min() / spread
    assert est.novelty(q)[0] == pytest.approx(expect, rel=1e-12)
    far = explain_prediction(InteractionSearchRegressor(**{**est.get_params(), "clip_features": False}).fit(X, y),
                             pd.DataFrame({"f2": [9.0], "f5": [-6.0]}))
    assert far.attrs["outside_targets"] and far.attrs["novelty"] > 1


def test_guards_survive_the_model_file(tmp_path, fitted):
    est, X, y = fitted
    path = save_model(est, tmp_path / "m.json")
    m = load_model(path)
    assert m.clip_features is True and m.required == ()
    assert (m.target_min_, m.target_max_) == (est.target_min_, est.target_max_)
    np.testing.assert_array_equal(m.train_points_, est.train_points_)
    q = pd.DataFrame({"f2": [50.0, 0.3], "f5": [1.0, 1.7]})
    np.testing.assert_allclose(m.predict(q), est.predict(q), rtol=1e-12)
    np.testing.assert_allclose(m.novelty(q), est.novelty(q), rtol=1e-12)
    # a model file from before these fields: no clipping, unknown range and novelty
    doc = json.loads(path.read_text())
    for k in ("target_range", "clip_features", "required", "training_points"):
        doc.pop(k)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    m = load_model(old)
    assert m.clip_features is False and math.isnan(m.target_min_) and math.isnan(m.novelty(q)[0])
    assert not explain_prediction(m, q.iloc[[0]]).attrs["outside_targets"]


@pytest.mark.parametrize("field, value, match", [
    ("training_points", [[1.0]], "must be finite rows of 2 values"),
    ("training_points", "x", "must be a list of rows of numbers"),
    ("clip_features", "yes", "must be true or false"),
    ("required", ["f9"], "must be a list of the model's feature names"),
])
def test_bad_guard_fields_are_named(tmp_path, fitted, field, value, match):
    est, _, _ = fitted
    path = save_model(est, tmp_path / "m.json")
    doc = json.loads(path.read_text())
    doc[field] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match=match):
        load_model(path)
