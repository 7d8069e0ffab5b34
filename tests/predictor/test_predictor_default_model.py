"""The shipped provisional default model (predictor/models/default.json), its label wherever a prediction is
printed, ``portcast train --calibration --cv`` and the leave-one-group-out cross-validation."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import predictor.model_io as model_io
from portcast.cli import app
from portcast.report import provisional_line
from predictor import InteractionSearchRegressor, load_model
from predictor.cross_validation import grouped_cross_validation, summarize_cv
from predictor.model_io import default_model_path, is_provisional

ROOT = Path(__file__).resolve().parents[2]
SAXPY = str(ROOT / "examples" / "saxpy.py")
LINE = ("model: provisional — trained on simulated H100 times, not GPU measurements; run `portcast calibrate` + "
        "`portcast train` on your GPU for a measured model")
runner = CliRunner()


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_default_model_ships_and_is_labelled_provisional():
    path = default_model_path()
    assert path == ROOT / "predictor" / "models" / "default.json"
    model = load_model(path)
    meta = model.metadata_
    assert is_provisional(model) and meta["provisional"] is True
    assert meta["gpu_times"] == "simulated (Portcast SIMT model, h100 preset)"
    assert meta["calibration"] == "predictor/data/simulated_h100/calibration.csv"
    assert meta["features_table"] == "kernels/data/corpus_features.parquet"
    assert meta["target"] == "speedup_kernel"
    cv = meta["cross_validation"]
    assert cv["protocol"].startswith("leave one kernel out") and cv["n_groups"] >= 40
    assert 0 < cv["mean_abs_relative_error"] < 1e6 and 0 <= cv["decision_accuracy"] <= 1
    assert cv["n_points"] == model.n_train_ == meta["n_points"]
    # every chosen feature is one the profiler computes for a user region (no corpus key columns)
    assert not set(model.subset_) & {"kernel", "size", "n", "category"}
    # the training data it names ship too, with a README saying how they were made
    data = ROOT / "predictor" / "data" / "simulated_h100"
    assert (data / "calibration.csv").is_file() and (data / "calibration.json").is_file()
    assert "simulated" in (data / "README.md").read_text().lower()
    cal = pd.read_csv(data / "calibration.csv")
    assert set(cal["gpu_name"]) == {"simulated: h100"}
    assert meta["excluded_points"] == ["crc32 small", "crc32 medium"]  # serial loop not charged by the model
    assert len(cal) - len(meta["excluded_points"]) == cv["n_points"]


def test_provisional_line_text():
    assert provisional_line({"provisional": True, "gpu_preset": "h100",
                             "gpu_times": "simulated (Portcast SIMT model, h100 preset)"}) == LINE
    assert provisional_line({"platform": "i7 -> 1080ti"}) is None
    assert provisional_line({"provisional": "yes"}) is None  # only a JSON true counts


def test_profile_with_the_provisional_model_prints_prediction_and_label():
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--model", "provisional", "--", "3000"])
    assert res.exit_code == 0, res.output
    out = _squash(res.output)
    assert re.search(r"saxpy #0: predicted speedup [0-9.e+]+x \((port|do not port)\)", out), res.output
    assert LINE in out
    # every line of its prediction names it (docs/profiler.md, "One prediction")
    label = "provisional model (simulated H100): "
    assert f"{label}{default_model_path()}; it predicts a speedup, not a GPU time" in out
    assert re.search(rf"{re.escape(label)}saxpy #0: predicted speedup", out) and f"{label}{LINE}" in out


def test_a_model_without_the_flag_prints_no_label(tmp_path):
    doc = json.loads(default_model_path().read_text())
    for key in ("provisional", "gpu_times", "gpu_preset"):
        doc["metadata"].pop(key, None)
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps(doc))
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--model", str(measured), "--", "3000"])
    assert res.exit_code == 0, res.output
    assert "predicted speedup" in res.output and "provisional" not in res.output


def test_predict_command_prints_the_label(tmp_path):
    table = pd.read_parquet(ROOT / "kernels" / "data" / "corpus_features.parquet")
    rows = table[(table["kernel"] == "saxpy") & (table["size"] == "small")]
    path = tmp_path / "saxpy.csv"
    rows.to_csv(path, index=False)
    res = runner.invoke(app, ["predict", str(path), "--model", str(default_model_path())])
    assert res.exit_code == 0, res.output
    assert "saxpy: predicted speedup" in res.output and LINE in _squash(res.output)
    res = runner.invoke(app, ["predict", str(path), "--model", str(default_model_path()), "--quiet"])
    assert res.exit_code == 0 and _squash(res.output).count(LINE) == 1


def test_without_a_default_model_profile_says_none_ships(monkeypatch, tmp_path):
    import predictor.gputime

    monkeypatch.setattr(model_io, "DEFAULT_MODEL_FILE", tmp_path / "absent.json")
    monkeypatch.setattr(predictor.gputime, "DEFAULT_GPUTIME_MODEL", tmp_path / "absent-gputime.json")
    # no silent switch to another model: one clear error naming the missing file, before the script runs
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--", "640"])
    assert res.exit_code == 2 and "saxpy n=640" not in res.output
    assert _squash(res.output).startswith(f"error: the shipped GPU-time model {tmp_path / 'absent-gputime.json'} "
                                          "is missing from this installation")
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--model", "provisional", "--", "640"])
    assert res.exit_code == 2 and "the provisional speedup model is not shipped" in res.output


# ------------------------------------------------------------------------------------ cross-validation
def _law_data():
    """8 groups of 3 points on the exact law log(speedup) = 0.5 + 0.8 f1 (f2 is noise)."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"f1": rng.uniform(0, 3, 24), "f2": rng.uniform(0, 1, 24)})
    y = np.exp(0.5 + 0.8 * X["f1"].to_numpy())
    groups = np.repeat([f"g{i}" for i in range(8)], 3)
    return X, y, groups


def test_grouped_cross_validation_recovers_an_exact_law():
    X, y, groups = _law_data()
    seen = []
    cv = grouped_cross_validation(lambda: InteractionSearchRegressor(k=1, transform="log", n_splits=5,
                                                                     validation_size=6, random_state=0),
                                  X, y, groups, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(i, 8) for i in range(1, 9)]
    assert cv["group"].tolist() == groups.tolist() and set(cv["subset"]) == {"f1"}
    np.testing.assert_allclose(cv["predicted"], y, rtol=1e-9)
    s = summarize_cv(cv)
    assert s["n_points"] == 24 and s["n_groups"] == 8 and s["n_clipped"] == 0 and s["n_nonpositive"] == 0
    assert s["mean_abs_relative_error"] < 1e-9 and s["decision_accuracy"] == 1.0


def test_summarize_cv_worked_example():
    cv = pd.DataFrame({"group": ["a", "a", "b", "c"], "actual": [2.0, 0.5, 40.0, 4.0],
                       "predicted": [3.0, 2.0, 20.0, np.nan], "clipped": [False, False, True, False],
                       "subset": ["f"] * 4})
    s = summarize_cv(cv)
    # |rel| = 0.5, 3.0, 0.5 (the NaN row, a non-positive linear prediction, is left out)
    assert s["mean_abs_relative_error"] == pytest.approx(4.0 / 3)
    assert s["median_abs_relative_error"] == pytest.approx(0.5)
    # weights 1, 1, 0.75 (40 is in 30..100)
    assert s["weighted_error"] == pytest.approx((0.5 + 3.0 + 0.75 * 0.5) / 3)
    assert s["decision_accuracy"] == pytest.approx(2 / 3)  # 0.5 -> 2.0 crosses 1
    assert (s["n_points"], s["n_groups"], s["n_clipped"], s["n_nonpositive"]) == (4, 3, 1, 1)


def test_train_with_calibration_and_cv(tmp_path):
    X, y, groups = _law_data()
    feats = X.copy()
    feats.insert(0, "kernel", groups)
    feats.insert(1, "size", np.tile(["tiny", "small", "medium"], 8))
    feats.insert(2, "n", np.arange(24) * 1000)  # a key column: never a feature
    feats.insert(3, "category", "dense")
    fpath = tmp_path / "features.csv"
    feats.to_csv(fpath, index=False)
    calib = pd.DataFrame({"schema_version": 1, "kernel": groups, "size": feats["size"], "speedup_kernel": y,
                          "speedup_total": y / 2, "gpu_name": "simulated: h100", "cpu_model": "Test CPU"})
    cpath = tmp_path / "cal.csv"
    calib.iloc[:-1].to_csv(cpath, index=False)  # one point without a speedup
    model = tmp_path / "m.json"
    cvout = tmp_path / "cv.csv"
    res = runner.invoke(app, ["train", "--data", str(fpath), "--calibration", str(cpath), "--k", "1",
                              "--transform", "log", "--n-splits", "5", "--validation-size", "6", "--cv", "kernel",
                              "--cv-out", str(cvout), "--out", str(model), "--no-clip"])  # exact off the data too
    assert res.exit_code == 0, res.output
    doc = json.loads(model.read_text())
    meta = doc["metadata"]
    assert doc["subset"] == ["f1"] and doc["n_train"] == 23 and "n" not in doc["feature_names"]
    assert meta["target"] == "speedup_kernel" and meta["provisional"] is True and meta["gpu_preset"] == "h100"
    assert meta["gpu_times"] == "simulated (Portcast SIMT model, h100 preset)"
    assert meta["platform"] == "Test CPU -> simulated: h100"
    assert meta["data"] == [str(fpath), str(cpath)] and meta["n_points"] == 23
    assert meta["cross_validation"]["n_groups"] == 8
    assert meta["cross_validation"]["mean_abs_relative_error"] < 1e-9
    assert "model marked PROVISIONAL" in res.output and "leave-one-kernel-out" in res.output
    assert pd.read_csv(cvout).shape[0] == 23
    # a measured calibration gives an unflagged model
    calib.assign(gpu_name="NVIDIA H100").to_csv(cpath, index=False)
    res = runner.invoke(app, ["train", "--data", str(fpath), "--calibration", str(cpath), "--k", "1",
                              "--transform", "log", "--n-splits", "5", "--validation-size", "6", "--out", str(model),
                              "--force"])
    assert res.exit_code == 0, res.output
    assert "provisional" not in json.loads(model.read_text())["metadata"]
    bad = runner.invoke(app, ["train", "--data", str(fpath), "--calibration", str(tmp_path / "no.csv"),
                              "--out", str(tmp_path / "other.json")])
    assert bad.exit_code == 2 and "no such calibration file" in bad.output
