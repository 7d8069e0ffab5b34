"""predictor.gputime: the design's physical terms, the tree model's JSON round trip, validation, calibration."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predictor.gputime import (
    DESIGN_COLUMNS,
    INPUT_COLUMNS,
    GpuTimeModel,
    GpuTimeModelError,
    design,
    gputime_model_from_dict,
    load_gputime_model,
    save_gputime_model,
)


def row(**over):
    r = {"threads": 4096, "records": 50_000, "thread_records": 40_960, "loads": 8192, "stores": 4096,
         "load_bytes": 65536, "store_bytes": 32768, "unique_bytes": 98304, "block_size": 256,
         "warp_simdEfficiency": 0.5, "warp_coalescing": 0.25, "warp_sectorsPerGroup": 8.0, "mem": 0.3, "fp": 0.2,
         "ctrl": 0.1, "ilp32": 2.0, "sm_count": 8, "core_mhz": 1000.0, "dram_gb_s": 200.0, "l2_bytes": 1 << 20,
         "schedulers_per_sm": 4, "max_warps_per_sm": 64, "simulated_s": 2e-5, "host_timer": 0.0}
    r.update(over)
    return r


def test_design_terms_by_hand():
    d = design(pd.DataFrame([row()])).iloc[0]
    # 40960 thread records / 32 / 0.5 = 2560 warp instructions on min(8, 4096/256 = 16) = 8 SMs x 4 x 1 GHz
    assert d["log_issue"] == pytest.approx(math.log(2560 / (8 * 4 * 1e9)), rel=1e-12)
    # (8192 + 4096) / 32 / 0.5 = 768 warp memory instructions x 8 sectors x 32 B at 200 GB/s
    assert d["log_dram_sectors"] == pytest.approx(math.log(768 * 8 * 32 / 200e9), rel=1e-12)
    assert d["log_dram_footprint"] == pytest.approx(math.log(98304 / 200e9), rel=1e-12)
    assert d["log_chain"] == pytest.approx(math.log(10 * 4 / 1e9), rel=1e-12)
    assert d["log_waves"] == pytest.approx(math.log(4096 / (8 * 64 * 32)), rel=1e-12)
    assert d["log_simt"] == pytest.approx(math.log(2e-5))
    assert list(d.index) == list(DESIGN_COLUMNS)


def test_design_grid_smaller_than_gpu_uses_fewer_sms():
    one = design(pd.DataFrame([row(threads=256)])).iloc[0]
    # one block: one SM issues the same 2560 warp instructions
    assert one["log_issue"] == pytest.approx(math.log(2560 / (1 * 4 * 1e9)), rel=1e-12)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        t = int(rng.integers(256, 1 << 20))
        rows.append(row(threads=t, thread_records=t * int(rng.integers(5, 200)), records=t * 250,
                        loads=t * 4, stores=t, unique_bytes=t * 24, sm_count=int(rng.choice([8, 16, 56])),
                        simulated_s=float(rng.uniform(1e-6, 1e-3))))
    frame = pd.DataFrame(rows)
    D = design(frame)
    measured = np.exp(0.7 * D["log_issue"] + 0.3 * D["log_dram_footprint"]) + 5e-6
    return frame, measured.to_numpy()


def test_tree_model_json_round_trip_predicts_as_fitted(tmp_path):
    frame, y = _data()
    m = GpuTimeModel("gbm", n_estimators=40).fit(frame, y)
    before = m.predict(frame)
    path = save_gputime_model(m, tmp_path / "m.json", {"trained_on": "synthetic"})
    back = load_gputime_model(path)
    np.testing.assert_allclose(back.predict(frame), before, rtol=1e-12)
    assert back.metadata["trained_on"] == "synthetic" and "created" in back.metadata
    # and what scikit-learn itself predicts
    from sklearn.ensemble import GradientBoostingRegressor

    g = GradientBoostingRegressor(n_estimators=40, learning_rate=0.05, max_depth=4, min_samples_leaf=20,
                                  subsample=0.8, random_state=0)
    g.fit(design(frame).to_numpy(), np.log(y), sample_weight=np.ones(len(y)))
    np.testing.assert_allclose(np.log(before), g.predict(design(frame).to_numpy()), rtol=1e-10)


def test_fitted_model_is_within_a_few_percent_on_its_training_data():
    frame, y = _data()
    m = GpuTimeModel("gbm").fit(frame, y)
    assert np.median(np.abs(m.predict(frame) / y - 1)) < 0.05


def test_residual_model_needs_the_simt_estimate():
    frame, y = _data(120)
    m = GpuTimeModel("gbm-residual", n_estimators=10).fit(frame, y)
    assert m.needs_simt
    with pytest.raises(GpuTimeModelError, match="column 'simulated_s' is not finite in row 0"):
        m.predict(frame.assign(simulated_s=np.nan))
    nosim = GpuTimeModel("gbm", [c for c in DESIGN_COLUMNS if c != "log_simt"], n_estimators=10).fit(frame, y)
    assert not nosim.needs_simt
    assert np.isfinite(nosim.predict(frame.drop(columns="simulated_s"))).all()


def test_calibration_recovers_scale_and_constant():
    frame, _ = _data(200)
    y = 2.0 * frame["simulated_s"].to_numpy() + 1e-5
    m = GpuTimeModel("simt-calibrated").fit(frame, y, gpu=["a"] * 200)
    k, f = m.calibration_["a"]
    assert k == pytest.approx(2.0, rel=0.02) and f == pytest.approx(1e-5, rel=0.02)
    assert m.calibration_["*"] == m.calibration_["a"]
    # an unseen GPU gets the fit on all
    np.testing.assert_allclose(m.predict(frame.iloc[:3], gpu=["b"] * 3), k * frame["simulated_s"][:3] + f)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format="other"), "not a Portcast GPU-time model"),
    (lambda d: d.update(schema_version=99), "schema_version 99 is not supported"),
    (lambda d: d.update(family="xapp"), "field 'family'"),
    (lambda d: d.update(columns=["nope"]), "field 'columns'"),
    (lambda d: d["trees"]["trees"][0].update(left=[5] + d["trees"]["trees"][0]["left"][1:]), "tree 0: a node points"),
    (lambda d: d["trees"]["trees"][1].update(value=[float("nan")] * len(d["trees"]["trees"][1]["value"])),
     "tree 1: non-finite leaf value"),
    (lambda d: d["trees"].update(init="x"), "trees.init"),
])
def test_bad_model_documents_name_the_field(tmp_path, edit, message):
    frame, y = _data(100)
    m = GpuTimeModel("gbm", n_estimators=3).fit(frame, y)
    doc = json.loads(json.dumps(m.to_dict()))
    edit(doc)
    with pytest.raises(GpuTimeModelError, match=message):
        gputime_model_from_dict(doc, "bad.json")


def test_invalid_json_and_deep_nesting_name_the_file(tmp_path):
    p = tmp_path / "m.json"
    p.write_text("{not json")
    with pytest.raises(GpuTimeModelError, match="m.json: not a Portcast GPU-time model"):
        load_gputime_model(p)
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(GpuTimeModelError, match="m.json"):
        load_gputime_model(p)


def test_missing_input_column_is_named():
    frame, y = _data(50)
    m = GpuTimeModel("gbm", n_estimators=3).fit(frame, y)
    with pytest.raises(GpuTimeModelError, match=r"missing column\(s\) \['warp_coalescing'\]"):
        m.predict(frame.drop(columns="warp_coalescing"))


def test_out_of_range_names_the_columns():
    frame, y = _data(100)
    m = GpuTimeModel("gbm", n_estimators=3).fit(frame, y)
    far = frame.iloc[[0]].assign(threads=1 << 34, thread_records=1 << 40)
    assert {"log_threads", "log_issue"} <= set(m.out_of_range(far))
    assert m.out_of_range(frame.iloc[[0]]) == []


@settings(max_examples=40, deadline=None)
@given(st.floats(1.0, 1e4), st.floats(1.0, 1e4))
def test_issue_and_dram_terms_grow_with_work(a, b):
    lo, hi = sorted((a, b))
    d = design(pd.DataFrame([row(thread_records=40_960 * lo, unique_bytes=1000 * lo),
                             row(thread_records=40_960 * hi, unique_bytes=1000 * hi)]))
    assert d["log_issue"][0] <= d["log_issue"][1] and d["log_dram_footprint"][0] <= d["log_dram_footprint"][1]


def test_input_columns_cover_the_design():
    frame, _ = _data(5)
    assert set(INPUT_COLUMNS) <= set(frame.columns)


def test_beyond_the_training_range_time_grows_with_the_roofline():
    frame, y = _data()
    m = GpuTimeModel("gbm", n_estimators=40).fit(frame, y)
    edge = frame.loc[[frame["thread_records"].idxmax()]]

    def scaled(k):
        return edge.assign(**{c: edge[c] * k for c in ("thread_records", "records", "loads", "stores", "unique_bytes",
                                                       "threads")})

    t10, t100, t1000 = (float(m.predict(scaled(k))[0]) for k in (10, 100, 1000))
    # far outside the range every work column is clipped alike, so the time is the roofline's: 10x per 10x work
    assert t1000 / t100 == pytest.approx(10.0, rel=1e-9)
    assert t100 / t10 == pytest.approx(10.0, rel=0.05)
    assert m.out_of_range(scaled(1000))


@pytest.mark.parametrize("family", ["gbm", "gbm-residual"])
def test_contributions_sum_to_the_predicted_log_time(family):
    frame, y = _data()
    m = GpuTimeModel(family, n_estimators=30).fit(frame, y)
    probe = pd.concat([frame.iloc[:5], pd.DataFrame([row(threads=1 << 26, thread_records=1 << 33,
                                                          unique_bytes=1 << 34)])], ignore_index=True)
    for i in range(len(probe)):
        c = m.contributions(probe.iloc[[i]])
        assert c["contribution"].sum() == pytest.approx(m.predict_log(probe.iloc[[i]])[0], abs=1e-9)
        assert list(c["column"])[:len(m.columns)] == list(m.columns)
    beyond = m.contributions(probe.iloc[[5]]).set_index("column")["contribution"]
    if family == "gbm":
        assert beyond["beyond training range"] > 1.0  # the roofline grows past the clipped inputs
    else:
        assert beyond["SIMT estimate"] == pytest.approx(math.log(2e-5))


def test_contributions_of_one_stump_by_hand():
    frame, y = _data()
    m = GpuTimeModel("gbm", n_estimators=1, max_depth=1, min_samples_leaf=1).fit(frame, y)
    left, right, feat, thr, val = m.trees_["_arrays"][0]
    lr = m.trees_["learning_rate"]
    x = design(frame.iloc[[0]])[list(m.columns)].to_numpy()[0]
    leaf = left[0] if x[feat[0]] <= thr[0] else right[0]
    c = m.contributions(frame.iloc[[0]]).set_index("column")["contribution"]
    assert c[m.columns[feat[0]]] == pytest.approx(lr * (val[leaf] - val[0]))
    assert c["start"] == pytest.approx(m.trees_["init"] + lr * val[0])
    others = [col for k, col in enumerate(m.columns) if k != feat[0]]
    assert (c[others] == 0).all()


def test_contributions_refused_for_the_calibrated_family():
    frame, y = _data(60)
    m = GpuTimeModel("simt-calibrated").fit(frame, y)
    with pytest.raises(GpuTimeModelError, match="tree families"):
        m.contributions(frame)
