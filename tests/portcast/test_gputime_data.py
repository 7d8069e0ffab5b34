"""predictor.gputime_training: the measured training rows, the splits, the scores; features.work's BytesSink."""

import numpy as np
import pandas as pd
import pytest

import predictor.gputime_evaluation as E
import predictor.gputime_training as G


@pytest.fixture(scope="module")
def frame():
    return G.training_frame()


def test_training_frame_has_every_measured_pair_not_below_its_bound(frame):
    # 2603 measured (port, point, GPU) pairs of traced points, 31 of them below their own lower bound (left out,
    # G.below_bound); every row with features (imputed where the point was traced without)
    assert len(frame) == 2572
    assert frame["application"].nunique() == 103 and frame["preset"].nunique() == 23
    assert frame["gpu"].nunique() == 29
    assert frame[list(G.RATE_FEATURES)].notna().all().all()
    assert (frame["host_timer"] == frame["source"].isin(["aiwc", "kernelbench"])).all()
    assert frame.groupby("source").size().to_dict() == {"aiwc": 470, "amaris": 1718, "babelstream": 30,
                                                          "hecbench": 76, "kernelbench": 278}
    imputed = frame[frame["features_from"] != frame["point"]]
    assert set(imputed["port"]) >= {"aiwc/lud/lud_internal", "amaris/backprop/bpnn_adjust_weights_cuda",
                                    "babelstream/babelstream/copy", "hecbench/lif/lif"}
    assert set(imputed.loc[imputed["source"] != "aiwc", "features_from"]) - {"features"} <= set(
        frame.loc[frame["source"] == "amaris", "point"])
    assert frame.groupby("generation").size().to_dict() == {
        "Ada Lovelace": 68, "Ampere": 186, "Blackwell": 35, "Hopper": 35, "Kepler": 1188, "Maxwell": 624,
        "Pascal": 391, "Turing": 40, "Volta": 5}
    # points the SIMT model did not simulate stay (NaN): the bounded model does not read its estimate
    assert frame["simulated_s"].isna().sum() == len(frame) - np.isfinite(frame["simulated_s"]).sum() > 0
    assert frame.groupby("preset").size().to_dict() == {
        "a100": 40, "a100_80gb": 35, "a10g": 35, "b200": 35, "gtx1080": 94, "gtx1080ti": 94, "gtx680": 198,
        "gtx970": 166, "gtx980": 198, "gtxtitan": 198, "h100_sxm": 35, "k20": 297, "k20x": 5, "k40": 292, "l4": 34,
        "l40s": 34, "p100": 203, "quadro_k5200": 198, "rtx2080ti": 5, "rtx3080": 76, "t4": 35, "titanx": 260,
        "v100": 5}


def test_rows_below_their_bound_are_left_out_and_listed():
    every = G.training_frame(keep_below_bound=True)
    low = G.below_bound(every)
    assert int(low.sum()) == 31 and len(every) == 2603
    assert (every.loc[low, "bound_s"] > every.loc[low, "measured_s"]).all()
    # a device timer below the 5 us launch floor, and ports whose own work outruns the measured time
    assert {"hecbench/reverse/reverse", "kernelbench/89_cumsum/forward"} <= set(every.loc[low, "port"])
    text = G.below_bound_markdown(every)
    assert "| hecbench/reverse/reverse | 1 | 2.5-2.5 us | 5.0-5.0 us | 2.03-2.03 | launches |" in text


def test_impute_takes_the_largest_featured_point_of_the_port():
    pts = pd.DataFrame({"port": ["a", "a", "a", "b"], "point": ["s", "m", "l", "s"], "records": [10, 100, 1000, 5],
                        "f_mem": [0.1, 0.2, np.nan, np.nan], "f_fp": [1.0, 2.0, np.nan, np.nan]})
    out = G.impute_features(pts)
    assert out.loc[2, "f_mem"] == 0.2 and out.loc[2, "f_fp"] == 2.0 and out.loc[2, "features_from"] == "m"
    assert np.isnan(out.loc[3, "f_mem"]) and pd.isna(out.loc[3, "features_from"])
    assert out.loc[0, "features_from"] == "s"


def test_folds(frame):
    apps = E.folds(frame, "application")
    assert len(apps) == 103
    for name, tr, te in apps:
        assert set(frame["application"].iloc[te]) == {name} and name not in set(frame["application"].iloc[tr])
        assert len(tr) + len(te) == len(frame)
    gpus = E.folds(frame, "gpu")
    assert [n for n, _, _ in gpus] == sorted(frame["preset"].unique())
    (name, tr, te), = E.folds(frame, "pascal")
    assert set(frame["generation"].iloc[te]) == {"Pascal"} and set(frame["generation"].iloc[tr]) == {
        "Kepler",
        "Maxwell",
    }
    gens = E.folds(frame, "generation")
    assert [n for n, _, _ in gens] == ["Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell"]
    order = ["Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell"]
    for name, tr, te in gens:
        assert set(frame["generation"].iloc[te]) == {name}
        assert set(frame["generation"].iloc[tr]) == set(order[:order.index(name)])
    (name, tr, te), = E.folds(frame, "largest")
    # every port measured at more than one size is tested at its largest (by trace records), trained on the rest
    test_points = set(zip(frame["port"].iloc[te], frame["point"].iloc[te]))
    assert len(test_points) == frame.groupby("port")["point"].nunique().gt(1).sum()
    for port, point in test_points:
        rows = frame[frame["port"] == port]
        assert rows.loc[rows["point"] == point, "records"].iloc[0] == rows["records"].max()
    assert not test_points & set(zip(frame["port"].iloc[tr], frame["point"].iloc[tr]))
    assert len(tr) + len(te) == len(frame)
    with pytest.raises(ValueError, match="split must be one of"):
        E.folds(frame, "kernel")


def test_training_rows_carry_the_bounded_models_inputs(frame):
    """Every row has the per-launch estimates, the lower bound, one launch (a port's barrier phases are one
    kernel; the FFT's passes are launches of their own) and the kernel's instruction mix."""
    from predictor.bounded import FACTOR_RATES, TERM_NAMES

    cols = [f"term_{t}" for t in TERM_NAMES] + ["bound_s", "launches", *FACTOR_RATES]
    assert frame[cols].notna().all().all() and (frame[cols] >= 0).all().all()
    several = {"aiwc/fft/fft"} | {p for p in frame["port"] if p.startswith("kernelbench/")}
    assert (frame.loc[~frame["port"].isin(several), "launches"] == 1).all()
    # a PyTorch operation of several kernels: its launches (PyTorch's, not the region's parallel loops)
    kb = frame[frame["port"].str.startswith("kernelbench/")].groupby("port")["launches"].first()
    assert kb["kernelbench/97_CosineSimilarityLoss/forward"] == 12 and kb["kernelbench/25_Swish/forward"] == 2
    assert kb["kernelbench/91_cumsum_reverse/forward"] == 3 and kb["kernelbench/19_ReLU/forward"] == 1
    # its passes: 2048 = 16 x 16 x 8 points in 3, 16384 = 16^3 x 4 in 4, 524288 = 16^4 x 8 in 5, 2097152 =
    # 16^5 x 2 in 6 (not simulated: its rows have no SIMT estimate)
    assert set(frame.loc[frame["port"] == "aiwc/fft/fft", "launches"]) == {3.0, 4.0, 5.0, 6.0}
    # the lower bound never exceeds a measured time: the bounds are bounds of the ports' real kernels
    assert (frame["bound_s"] <= frame["measured_s"]).all()
    # FP64: backprop's weight update computes in double, hotspot half of its floating point; the AIWC kernels none
    fp64 = frame.groupby("port")["fp64"].max()
    assert fp64["amaris/backprop/bpnn_adjust_weights_cuda"] == 1.0
    assert 0.4 < fp64["amaris/hotspot/calculate_temp"] < 0.6
    assert (fp64[[p for p in fp64.index if p.startswith("aiwc/")]] == 0).all()
    # the factor's FP64 input: that share x log2 of the GPU's FP32:FP64 lane ratio (P100 32:16, GTX 980 32:1)
    bp = frame[frame["port"] == "amaris/backprop/bpnn_adjust_weights_cuda"].groupby("preset")["fp64_slowdown"].max()
    assert (bp["p100"], bp["gtx980"], bp["k40"]) == (1.0, 5.0, 1.0)


def test_score_by_hand():
    pred = pd.DataFrame({"port": ["p", "p", "q", "q"], "point": ["a", "b", "a", "a"], "gpu": ["g"] * 4,
                         "preset": ["g"] * 4, "application": ["x", "x", "y", "y"],
                         "measured_s": [1.0, 2.0, 4.0, 4.0], "predicted_s": [1.5, 1.0, 4.0, 8.0],
                         "variant": ["v"] * 4, "split": ["application"] * 4, "fold": ["x", "x", "y", "y"]})
    cpu = pd.DataFrame({"port": ["p", "p", "q"], "point": ["a", "b", "a"], "cpu_s": [3.0, 1.0, 2.0]})
    s = E.score(pred, cpu).iloc[0]
    # relative errors 0.5, 0.5, 0, 1
    assert s["median_error"] == 0.5 and s["mean_error"] == 0.5
    assert s["median_of_applications"] == 0.5  # medians 0.5 (x) and 0.5 (y)
    # speedups actual 3, 0.5, 0.5, 0.5; predicted 2, 1, 0.5, 0.25: relative -1/3, 1, 0, -0.5
    assert s["speedup_median_error"] == pytest.approx((1 / 3 + 0.5) / 2)
    assert s["speedup_mean_error"] == pytest.approx((1 / 3 + 1 + 0 + 0.5) / 4)
    # port/don't-port: (3 > 1) == (2 > 1), (0.5) vs (1 > 1 is False), agree, agree
    assert s["port_accuracy"] == 1.0 and s["ported_fraction"] == 0.25
    # XAPP weights: actual speedup 3 -> 0.75 (1 < s <= 3.5? see predictor.metrics), < 1 -> 1
    from predictor.metrics import speedup_weights

    w = speedup_weights(np.array([3.0, 0.5, 0.5, 0.5]))
    assert s["speedup_weighted_error"] == pytest.approx(np.mean(w * np.array([1 / 3, 1, 0, 0.5])))


def test_bytes_sink_counts_distinct_bytes_read_and_written():
    from features.work import BytesSink
    from profiler.session import trace_function

    def region(x, y):
        for i in range(x.shape[0]):
            y[i] = x[i] + x[i]
        for i in range(4):
            y[i] = 0.0
        return y

    sink = BytesSink()
    trace_function(region, (np.ones(100), np.zeros(100)), sinks=[sink], mode="interpreted")
    assert sink.results == [{"read_bytes": 800, "written_bytes": 800}]


def test_evaluate_holds_out_each_fold(frame):
    small = frame[frame["application"].isin(["aiwc/nw", "aiwc/kmeans", "aiwc/bfs"])].reset_index(drop=True)
    pred = E.evaluate(small, ["SIMT model alone", "SIMT, per-GPU scale + constant"], splits=["application"])
    assert len(pred) == 2 * len(small)
    alone = pred[pred["variant"] == "SIMT model alone"]
    np.testing.assert_array_equal(alone["predicted_s"].to_numpy(), small["simulated_s"].to_numpy())
    # the calibrated variant for nw was fitted on kmeans and bfs only: refit it by hand and compare
    from predictor.gputime import GpuTimeModel

    tr = small[small["application"] != "aiwc/nw"]
    te = small[small["application"] == "aiwc/nw"]
    m = GpuTimeModel("simt-calibrated").fit(tr, tr["measured_s"].to_numpy(), gpu=tr["preset"].to_numpy())
    got = pred[(pred["variant"] == "SIMT, per-GPU scale + constant") & (pred["fold"] == "aiwc/nw")]
    np.testing.assert_allclose(got["predicted_s"].to_numpy(), m.predict(te, gpu=te["preset"].to_numpy()), rtol=1e-12)
    scores = E.score(pred)
    assert list(scores["variant"]) == ["SIMT model alone", "SIMT, per-GPU scale + constant"]
    md = E.evaluation_markdown(scores, small)
    assert "**Leave one application out**" in md and "| SIMT model alone | 100 |" in md


def test_gpu_time_train_cli_writes_a_loadable_model_and_never_overwrites(tmp_path):
    from typer.testing import CliRunner

    from portcast.cli import app
    from predictor.bounded import DEFAULT_TERMS, MIX_RATES
    from predictor.gputime import DEFAULT_GPUTIME_MODEL, load_gputime_model

    out = tmp_path / "m.json"
    res = CliRunner().invoke(app, ["gpu-time", "train", "--out", str(out), "--family", "simt-calibrated"])
    assert res.exit_code == 0, res.output
    m = load_gputime_model(out)
    assert m.family == "simt-calibrated" and set(m.calibration_) >= {"p100", "k40", "*"}
    assert m.metadata["rows"] == 2531  # the rows with a SIMT estimate
    res = CliRunner().invoke(app, ["gpu-time", "train", "--out", str(out)])
    assert res.exit_code == 2 and "exists: pass --force to replace it" in res.output
    res = CliRunner().invoke(app, ["gpu-time", "train", "--out", str(out), "--force", "--family", "xapp"])
    assert res.exit_code == 2 and "--family must be one of bounded, bounded-xapp, bounded-trees, gbm" in res.output
    res = CliRunner().invoke(app, ["gpu-time", "train", "--out", str(out), "--force"])
    assert res.exit_code == 0, res.output
    m = load_gputime_model(out)  # the default family is the shipped one
    assert (m.family, m.factor, m.terms, m.rates) == ("bounded", "linear", DEFAULT_TERMS, MIX_RATES)
    assert m.to_dict()["coef"] == load_gputime_model(DEFAULT_GPUTIME_MODEL).to_dict()["coef"]  # deterministic


def test_shipped_training_points_are_the_training_frame(frame, tmp_path):
    """predictor/models/gputime-points.csv (what a report plots) is training_points of the current data."""
    from predictor.bounded import DEFAULT_TERMS
    from predictor.gputime import DEFAULT_TRAINING_POINTS

    shipped = G.read_training_points(DEFAULT_TRAINING_POINTS)
    fresh = G.training_points(frame)
    assert len(shipped) == len(fresh) == len(frame)
    assert list(shipped["application"]) == list(fresh["application"])
    for c in G.POINT_COLUMNS:
        np.testing.assert_allclose(shipped[c].to_numpy(), fresh[c].to_numpy(), rtol=1e-5)
    # the physical estimate is the launches x the largest per-launch estimate the shipped model scales, in seconds
    est = frame["launches"] * frame[[f"term_{t}" for t in DEFAULT_TERMS]].max(axis=1)
    np.testing.assert_allclose(fresh["roofline_s"], est, rtol=1e-12)
    back = G.read_training_points(G.write_training_points(fresh, tmp_path / "p.csv"))
    np.testing.assert_allclose(back["measured_s"], fresh["measured_s"], rtol=1e-5)
    (tmp_path / "bad.csv").write_text("application,preset\n")
    with pytest.raises(ValueError, match="bad.csv: not a Portcast training-points file"):
        G.read_training_points(tmp_path / "bad.csv")


def test_models_reading_the_simt_estimate_predict_only_the_simulated_rows(frame):
    variants = G.variants()
    test = frame[frame["application"].isin(["hecbench/ga", "hecbench/lif", "kernelbench/89_cumsum"])]
    train = frame.drop(test.index)
    assert test["simulated_s"].isna().any() and test["simulated_s"].notna().any()
    pred = G.fit_predict(variants["SIMT, per-GPU scale + constant"], train, test)
    assert np.array_equal(np.isnan(pred), test["simulated_s"].isna().to_numpy())
    bounded = G.fit_predict(variants[G.BOUNDED_LINEAR], train, test)
    assert np.isfinite(bounded).all() and (bounded >= test["bound_s"].to_numpy() * (1 - 1e-12)).all()


def test_source_table_counts_rows_and_applications_per_split():
    pred = pd.DataFrame({"variant": ["m"] * 5, "split": ["application"] * 3 + ["gpu"] * 2,
                         "source": ["aiwc", "aiwc", "hecbench", "aiwc", "hecbench"],
                         "application": ["aiwc/a", "aiwc/b", "hecbench/c", "aiwc/a", "hecbench/c"],
                         "measured_s": [1.0, 1.0, 2.0, 1.0, 2.0], "predicted_s": [1.5, 0.8, 3.0, np.nan, 1.0]})
    lines = E.source_markdown(pred, "m").splitlines()
    assert lines[2] == "| Leave one application out | aiwc | 2 | 2 | 35% | 35% |"
    assert lines[3] == "| Leave one application out | hecbench | 1 | 1 | 50% | 50% |"
    # a row without a prediction (a SIMT-reading model on an unsimulated point) is left out
    assert lines[4] == "| Leave one GPU out | hecbench | 1 | 1 | 50% | 50% |" and len(lines) == 5
