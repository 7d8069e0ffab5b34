"""The bounded GPU-time model (predictor/bounded.py): its form (never below the bound, L launches, a size-free
factor clipped to its training range), its fit on data made by that form with known parameters, its
contributions and its JSON file."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from predictor.bounded import (
    DEFAULT_TERMS,
    FACTOR_RATES,
    MIX_RATES,
    TERM_NAMES,
    BoundedModelError,
    BoundedTimeModel,
    rate_matrix,
)
from predictor.gputime import GpuTimeModelError, gputime_model_from_dict, load_gputime_model, save_gputime_model

T0, HOST = 3e-6, 12e-6


def synthetic(n=600, seed=0):
    """Rows made by the model's form: time = HOST x host + max(bound, L (T0 + f K)), log f linear in two rates."""
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({f"term_{t}": 10 ** rng.uniform(-8, -3, n) for t in TERM_NAMES})
    d["launches"] = rng.integers(1, 5, n).astype(float)
    d["host_timer"] = (rng.random(n) < 0.5).astype(float)
    d["warp_simdEfficiency"] = rng.uniform(0.3, 1, n)
    d["warp_coalescing"] = rng.uniform(0.2, 1, n)
    d["warp_sectorsPerGroup"] = rng.uniform(1, 32, n)
    for r in ("mem", "fp", "ctrl"):
        d[r] = rng.uniform(0, 0.5, n)
    d["ilp32"] = rng.uniform(1, 8, n)
    d["fp64"] = (rng.random(n) < 0.3).astype(float)
    K = d[[f"term_{t}" for t in DEFAULT_TERMS]].max(axis=1).to_numpy()
    logf = 0.4 - 0.8 * (d["warp_coalescing"].to_numpy() - 0.6) + 0.5 * d["fp64"].to_numpy()
    est = d["launches"].to_numpy() * (T0 + np.exp(logf) * K)
    d["bound_s"] = est * rng.choice([0.2, 1.5], n, p=[0.8, 0.2])  # the floor decides for a fifth of the rows
    t = HOST * d["host_timer"].to_numpy() + np.maximum(d["bound_s"].to_numpy(), est)
    return d, t


def test_fit_recovers_the_fixed_costs_and_the_factor_of_data_made_by_its_form():
    d, t = synthetic()
    m = BoundedTimeModel("linear", rates=FACTOR_RATES, ridge=0.0).fit(d, t)
    assert m.launch_s_ == pytest.approx(T0, rel=0.02) and m.host_s_ == pytest.approx(HOST, rel=0.02)
    assert np.max(np.abs(m.predict(d) / t - 1)) < 1e-3
    # the factor's coefficients on the standardised rates: coalescing -0.8 per unit, fp64 +0.5 per unit
    co = dict(zip([m.rates[i] for i in m.factor_inputs_], m.coef_[1:]))
    assert co["warp_coalescing"] / m.scale_[m.rates.index("warp_coalescing")] == pytest.approx(-0.8, abs=0.01)
    assert co["fp64"] / m.scale_[m.rates.index("fp64")] == pytest.approx(0.5, abs=0.01)
    assert abs(co["mem"]) < 0.01


@pytest.mark.parametrize("factor", ["linear", "xapp", "trees"])
def test_never_below_the_bound_launches_add_and_the_factor_is_bounded(factor):
    d, t = synthetic(300, seed=1)
    m = BoundedTimeModel(factor, rates=FACTOR_RATES, k=2, n_trees=30).fit(d, t)
    p = m.predict(d)
    assert np.all(p >= d["bound_s"].to_numpy())
    one = d.iloc[:1].assign(bound_s=0.0, host_timer=0.0, launches=1.0)
    three = one.assign(launches=3.0)
    assert m.predict(three)[0] == pytest.approx(3 * m.predict(one)[0], rel=1e-12)
    # rates far outside anything seen: the factor stays within its training range
    wild = one.assign(warp_coalescing=-50.0, ilp32=1e6, mem=40.0, fp64=9.0)
    lo, hi = m.log_factor_range_
    assert lo - 1e-12 <= m.log_factor(wild)[0] <= hi + 1e-12
    assert set(m.out_of_range(wild)) >= {"warp_coalescing", "ilp32", "mem", "fp64"}
    # more of every term never gives less time
    more = one.assign(**{f"term_{x}": one[f"term_{x}"] * 2 for x in TERM_NAMES})
    assert m.predict(more)[0] >= m.predict(one)[0]


@pytest.mark.parametrize("factor", ["linear", "xapp", "trees"])
def test_the_file_gives_the_same_predictions(tmp_path, factor):
    d, t = synthetic(300, seed=2)
    m = BoundedTimeModel(factor, rates=FACTOR_RATES if factor != "linear" else MIX_RATES, k=2, n_trees=20).fit(d, t)
    path = save_gputime_model(m, tmp_path / "m.json", {"trained_on": "synthetic"})
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["schema_version"], doc["family"], doc["factor"]) == (
        "portcast.gputime-model", 2, "bounded", factor)
    back = load_gputime_model(path)
    assert np.array_equal(back.predict(d), m.predict(d))
    assert back.metadata["trained_on"] == "synthetic"


def test_contributions_sum_to_the_log_of_the_prediction():
    d, t = synthetic(300, seed=3)
    m = BoundedTimeModel("linear", rates=FACTOR_RATES).fit(d, t)
    for i in range(20):
        row = d.iloc[i:i + 1]
        c = m.contributions(row)
        assert c["contribution"].sum() == pytest.approx(math.log(m.predict(row)[0]), abs=1e-9)
        e = m.explain(row)
        assert e["floor_decides"] == (row["bound_s"].iloc[0] >= e["estimate_s"])
        floor = float(c.loc[c["column"] == "lower bound", "contribution"].iloc[0])
        assert (floor > 0) == e["floor_decides"]


def test_bad_inputs_and_files_are_refused_by_name():
    d, t = synthetic(200, seed=4)
    m = BoundedTimeModel("linear", rates=FACTOR_RATES).fit(d, t)
    with pytest.raises(BoundedModelError, match=r"missing column\(s\) \['term_pipe'\]"):
        m.predict(d.drop(columns=["term_pipe"]))
    with pytest.raises(BoundedModelError, match="column 'bound_s' is not finite in row 3"):
        m.predict(d.assign(bound_s=[np.nan if i == 3 else 1.0 for i in range(len(d))]))
    with pytest.raises(BoundedModelError, match="column 'term_dram' is negative in row 0"):
        m.predict(d.assign(term_dram=-1.0))
    doc = {"format": "portcast.gputime-model", "schema_version": 2, **m.to_dict()}
    for field, bad, message in (("coef", [1.0], "'coef' must be"), ("launch_s", -1, "'launch_s' must be"),
                                ("factor_inputs", [99], "'factor_inputs' must list rate positions"),
                                ("scale", [0.0] * len(FACTOR_RATES), "'scale' must")):
        with pytest.raises(GpuTimeModelError, match=message):
            gputime_model_from_dict({**doc, field: bad}, "m.json")
    with pytest.raises(GpuTimeModelError, match="m.json: field 'terms'"):
        gputime_model_from_dict({k: v for k, v in doc.items() if k != "terms"}, "m.json")
    assert rate_matrix(d.drop(columns=["fp64"]), FACTOR_RATES)[:, -1].tolist() == [0.0] * len(d)  # an older table
