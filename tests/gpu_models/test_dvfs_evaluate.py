"""Evaluation: fits of the model forms, the Titan X loader, accuracy tables and the generated report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpu_models.dvfs import crisp_evaluation as ev
from gpu_models.dvfs.models import crisp_time
from gpu_models.dvfs.synthetic_timelines import PROFILES, KernelProfile, generate, suite
from gpu_models.dvfs.timeline import COMPUTE, LOAD, STORE, Timeline


def test_fit_linear_recovers_exact_line():
    r = np.array([1.0, 1.05, 1.1, 1.2])
    t = 10.0 + 6.0 * (r - 1.0)
    assert ev.fit_linear(r, t, 10.0) == pytest.approx(6.0)
    assert ev.fit_linear(r, 10.0 + 20.0 * (r - 1.0), 10.0) == 10.0  # clipped to T0
    assert ev.fit_linear(r, 10.0 - 3.0 * (r - 1.0), 10.0) == 0.0


def test_fit_crisp_recovers_a_two_slope_curve():
    # flat until the overlapped computation (4) covers the LCP (6) at r = 1.5, then compute-bound
    t0, lcp, comp, store = 10.0, 6.0, 4.0, 0.0
    r = np.linspace(1.0, 2.5, 16)
    truth = crisp_time(t0, lcp, comp, store, r, higher_clock_variant=False)
    p = ev.fit_crisp(r, truth, t0)
    np.testing.assert_allclose(crisp_time(t0, *p, r, higher_clock_variant=False), truth, rtol=1e-4)
    assert p[0] == pytest.approx(lcp, rel=1e-3) and p[1] == pytest.approx(comp, rel=1e-3)


def test_fit_crisp_prefers_the_linear_curve_when_data_are_linear():
    r = np.array([1.0, 1.04, 1.08, 1.12])
    p = ev.fit_crisp(r, 10.0 + 4.0 * (r - 1.0), 10.0)
    # no overlap and no store stalls: the CRISP form reduces to T0 + CSP_comp (r - 1) with CSP_comp = 4
    assert p[1] == pytest.approx(0.0, abs=1e-3) and p[2] == pytest.approx(0.0, abs=1e-3)
    assert p[0] == pytest.approx(6.0, rel=1e-3)


def test_titanx_top_step_flags_the_suspect_top_clock():
    ts = ev.titanx_top_step()
    assert ts["from_mhz"].iloc[0] == 1164 and ts["to_mhz"].iloc[0] == 1126
    # pure-compute kernels: a third of the expected slowdown on the top step, nearly all of it below
    assert ts["median_pure_compute"].iloc[0] < 0.5
    assert (ts["median_pure_compute"].iloc[1:] > 0.85).all()


def test_titanx_curves_shape():
    c = ev.titanx_curves()
    assert c["kernel"].nunique() == 328  # 164 benchmarks x 2 memory clocks
    assert (c.groupby("kernel").size() == 16).all()
    assert set(c["suite"]) == {"micro", "real"}
    assert c["core_clock_mhz"].max() == 1164 and c["core_clock_mhz"].min() == 595


def test_titanx_loader_rejects_bad_time(tmp_path):
    for s in ("micro", "real"):
        (tmp_path / f"{s}_long.csv").write_text(
            "benchmark,mem_clock_mhz,core_clock_mhz,time\nk,810,595,1.0\nk,810,633,-2\n"
        )
    with pytest.raises(ev.CounterError, match="line 3: field 'time' must be positive"):
        ev.titanx_curves(tmp_path)


def _toy_curves():
    f = np.array([1164, 1126, 1088, 1050, 1013, 975, 937, 899], float)
    r = f[0] / f
    rows = []
    shapes = {
        "lin": 10 + 5 * (r - 1),
        # kink at r = 6 / 5 = 1.2, beyond the top 4 clocks (r <= 1.109)
        "two": crisp_time(10.0, 6.0, 5.0, 0.0, r, higher_clock_variant=False),
        # kink at r = 1.02, inside the top 4 clocks
        "early": crisp_time(10.0, 6.0, 6.0 / 1.02, 0.0, r, higher_clock_variant=False),
    }
    for name, t in shapes.items():
        for fi, ti in zip(f, t):
            rows.append({"suite": "real", "kernel": f"{name}@3505", "benchmark": name, "mem_clock_mhz": 3505,
                         "core_clock_mhz": fi, "time": ti})
    return pd.DataFrame(rows)


def test_titanx_accuracy_on_known_curves():
    acc = ev.titanx_accuracy(_toy_curves(), top_k=4)
    assert len(acc) == 3 * 3 * 4  # 3 curves, 3 forms, 4 predicted clocks
    lin = acc[acc["kernel"] == "lin@3505"].set_index("form")
    assert lin.loc["linear", "err_pct"].abs().max() < 1e-9
    assert lin.loc["crisp", "err_pct"].abs().max() < 1e-3
    two = acc[acc["kernel"] == "two@3505"].set_index("form")
    # the kink lies beyond the fitted clocks: nothing can see it, CRISP's fit falls back to the line, and
    # both underpredict the clocks past the kink (r = 1.24 and 1.29) by the same amount
    np.testing.assert_allclose(two.loc["crisp", "pred"], two.loc["linear", "pred"], rtol=1e-4)
    assert np.all(two.loc["crisp", "err_pct"].to_numpy()[:2] > -1e-3)
    assert np.all(two.loc["crisp", "err_pct"].to_numpy()[2:] < -1.0)
    early = acc[acc["kernel"] == "early@3505"].set_index("form")
    # kink inside the fitted clocks: CRISP's form follows the steeper slope, the line does not
    assert early.loc["crisp", "err_pct"].abs().max() < 0.1
    assert early.loc["linear", "err_pct"].abs().max() > 1.0
    with pytest.raises(ev.CounterError, match="top_k must be at least 2"):
        ev.titanx_accuracy(_toy_curves(), top_k=1)


def test_proportional_form_is_t0_times_ratio():
    acc = ev.titanx_accuracy(_toy_curves(), top_k=4)
    prop = acc[(acc["form"] == "proportional") & (acc["kernel"] == "lin@3505")]
    np.testing.assert_allclose(prop["pred"].to_numpy(), 10.0 * 1164.0 / prop["target_mhz"].to_numpy())


def _fig6():
    kinds = (
        [LOAD] + [COMPUTE] * 6 + [COMPUTE] * 4 + [LOAD, COMPUTE, LOAD] + [COMPUTE] * 8 + [LOAD, COMPUTE, STORE, STORE]
    )
    lat = [8.0] + [0.0] * 10 + [5.0, 0.0, 12.0] + [0.0] * 8 + [5.0, 0.0, 2.0, 2.0]
    deps = [[] for _ in kinds]
    deps[7] = [0]
    deps[23] = [13]
    deps[24] = [22]
    return Timeline.from_lists(kinds, lat, deps, store_queue_depth=1)


def test_synthetic_accuracy_on_fig6():
    df = ev.synthetic_accuracy([("fig6", _fig6())], base_mhz=1000.0, targets=(500.0,), miss_latency_ns=8.0)
    got = df.set_index("model")["pred"].to_dict()
    assert got == {"stall": 58.0, "miss": 38.0, "lead": 44.0, "crit": 42.0, "crisp": 54.0, "crisp-l": 52.0}
    assert df.set_index("model").loc["crisp", "err_pct"] == 0.0
    assert (df["true"] == 54.0).all()


def test_generator_is_reproducible_and_follows_profile():
    prof = KernelProfile("x", n=3000, load_frac=0.1, store_burst_every=500, store_burst_len=10)
    a, b = generate(prof, 3), generate(prof, 3)
    assert np.array_equal(a.kind, b.kind) and np.array_equal(a.dep_idx, b.dep_idx)
    assert int((a.kind == STORE).sum()) == 5 * 10
    loads = a.latency_ns[a.kind == LOAD]
    assert loads.min() >= prof.lat_lo_ns and loads.max() <= prof.lat_hi_ns
    assert abs((a.kind == LOAD).mean() - 0.1 * (1 - 50 / 3000)) < 0.03
    names = [n for n, _ in suite(1, n=200)]
    assert names == [f"{p.name}-0" for p in PROFILES]


def test_report_markdown_and_write(tmp_path):
    ks = suite(1, n=600)
    synth = ev.synthetic_accuracy(ks)
    br = ev.synthetic_breakdown(ks)
    curves = _toy_curves()
    titan = {(4, 0): ev.titanx_accuracy(curves, 4), (4, 1): ev.titanx_accuracy(curves, 3, skip_top=1)}
    shape = {0: ev.titanx_shape(curves), 1: ev.titanx_shape(curves, skip_top=1)}
    ctl = ev.control_table(ev.synthetic_program(per_phase=1, n=600), objectives=["edp"], models=["crit", "crisp"])
    assert list(ctl["model"]) == ["crit", "crisp", "oracle"]
    rep = ev.Report(synth, br, titan, shape, ctl, 4, ev.titanx_top_step(curves))
    md = rep.markdown()
    assert "Fig. 8 shape" in md and "| crisp |" in md and "two slopes" in md
    doc = tmp_path / "dvfs.md"
    doc.write_text(f"# Title\n\nhand-written\n\n{ev.BEGIN}\nold\n{ev.END}\n\ntail\n")
    ev.write_report(rep, doc)
    text = doc.read_text()
    assert text.startswith("# Title\n\nhand-written") and text.endswith("tail\n") and "old" not in text
    assert "Fig. 9 shape" in text
    s = rep.summary()
    assert set(s["synthetic_mape"]) == {"stall", "miss", "lead", "crit", "crisp", "crisp-l"}
    assert "base 1126 (1164 dropped)" in md
    assert set(s) == {"synthetic_mape", "titanx_mape", "titanx_mape_skip1"}
    sh = shape[0].set_index("kernel")
    assert sh.loc["lin@3505", "rms_linear_pct"] < 1e-9
    assert sh.loc["two@3505", "rms_crisp_pct"] < 1e-3 < sh.loc["two@3505", "rms_linear_pct"]
