"""Model files: round trip, and clear errors on corrupt or foreign files."""

import json

import numpy as np
import pandas as pd
import pytest

from predictor import InteractionSearchRegressor, ModelFileError, explain_prediction, load_model, save_model


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(1, 3, (50, 5)), columns=list("abcde"))
    y = np.exp(0.2 + 0.4 * X["b"] - 0.3 * X["d"] + 0.1 * X["b"] * X["d"] + rng.normal(0, 0.02, 50)).to_numpy()
    return InteractionSearchRegressor(k=2, transform="log", n_splits=5, validation_size=8, random_state=1).fit(X, y), X


def test_round_trip(tmp_path, fitted):
    est, X = fitted
    path = save_model(est, tmp_path / "m.json", metadata={"platform": "i7 -> gtx"})
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == 1 and doc["format"] == "portcast.xapp-model"
    assert doc["subset"] == list(est.subset_)
    assert doc["training_ranges"]["a"] == [X["a"].min(), X["a"].max()]
    assert doc["metadata"]["platform"] == "i7 -> gtx"
    m = load_model(path)
    np.testing.assert_array_equal(m.predict(X), est.predict(X))
    assert m.metadata_["platform"] == "i7 -> gtx"
    assert not list(tmp_path.glob(".*tmp"))  # atomic write left no temporary file


def _write(tmp_path, doc):
    p = tmp_path / "bad.json"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: "{not json", "invalid JSON"),
        (lambda d: [1, 2], "top level is not a JSON object"),
        (lambda d: {**d, "format": "sklearn"}, "not a Portcast model file"),
        (lambda d: {**d, "schema_version": 99}, "unsupported schema_version 99"),
        (lambda d: {**d, "coef": d["coef"][:-1]}, "'coef' has 3 values, expected 4"),
        (lambda d: {**d, "coef": [1, "x", 2, 3]}, "'coef' must be a list of numbers"),
        (lambda d: {**d, "subset": ["zz", "b"]}, "not in 'feature_names'"),
        (lambda d: {**d, "transform": "exp"}, "'transform' must be one of"),
        (lambda d: {**d, "terms": ["(intercept)", "b", "d", "d*b"]}, "'terms' does not match"),
        (lambda d: {**d, "standardization": {"mean": [0, 0], "scale": [1, 0]}}, "scale' values must be > 0"),
        (lambda d: {**d, "training_ranges": {"a": [0, 1]}}, "'training_ranges' must give"),
        (lambda d: {k: v for k, v in d.items() if k != "n_train"}, "'n_train' must be a positive integer"),
    ],
)
def test_corrupt_files(tmp_path, fitted, edit, match):
    est, _ = fitted
    good = json.loads(save_model(est, tmp_path / "good.json").read_text())
    p = _write(tmp_path, edit(good))
    with pytest.raises(ModelFileError, match=match) as info:
        load_model(p)
    assert str(p) in str(info.value)


def test_binary_garbage_and_missing(tmp_path):
    p = tmp_path / "x.json"
    p.write_bytes(b"\x80\x81\x00PK")
    with pytest.raises(ModelFileError, match=r"x.json: not a Portcast model file \(not UTF-8 text"):
        load_model(p)
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "none.json")


def test_explain_prediction_sums_to_prediction(fitted):
    est, X = fitted
    row = X.iloc[[3]]
    ex = explain_prediction(est, row)
    assert list(ex["term"]) == ["(intercept)", "b", "d", "b*d"]
    assert ex.attrs["prediction"] == pytest.approx(est.predict(row)[0], rel=1e-12)
    assert np.exp(ex["contribution"].sum()) == pytest.approx(ex.attrs["prediction"], rel=1e-12)
    z_b = (row["b"].iloc[0] - est.mean_[0]) / est.scale_[0]
    z_d = (row["d"].iloc[0] - est.mean_[1]) / est.scale_[1]
    np.testing.assert_allclose(ex["z_value"], [1.0, z_b, z_d, z_b * z_d])
    assert not ex["extrapolating"].any() and ex.attrs["extrapolating"] is False
    b = ex.set_index("term").loc["b"]
    assert b["value"] == row["b"].iloc[0] and b["train_min"] == X["b"].min() and b["train_max"] == X["b"].max()
    out = explain_prediction(est, {"b": 10.0, "d": 2.0})
    assert out.set_index("term")["extrapolating"].to_dict() == {"(intercept)": False, "b": True, "d": False,
                                                                 "b*d": True}
    assert out.attrs["extrapolating"] is True
    with pytest.raises(ValueError, match="one row"):
        explain_prediction(est, X.iloc[:2])
