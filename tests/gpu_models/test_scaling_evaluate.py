"""The Sec. V evaluation pipeline on a small slice of the real Titan X data (the full run is in the docs)."""

import json

import numpy as np
import pytest

from gpu_models.scaling.dataset import load_titanx
from gpu_models.scaling.wu_evaluation import EvalSettings, dataset_counters, run_evaluation, titanx_counters


@pytest.fixture(scope="module")
def small_titanx():
    ds = load_titanx()
    groups = ds.groups()
    micro = [k for k in ds.kernels if groups[k] == "micro"][::7]     # 20 microbenchmarks
    real = [k for k in ds.kernels if groups[k] == "real"][:6]
    return ds.subset(micro + real)


def test_counter_kinds(small_titanx):
    X, names = titanx_counters(small_titanx, "classes")
    assert names == ["alu", "mul", "div", "spf", "mem", "ctrl", "other"]
    np.testing.assert_allclose(X.sum(axis=1), 1.0)
    Xp, cols = titanx_counters(small_titanx, "ptx")
    assert Xp.shape == (26, 101) and cols[0] == "ptx_add"
    i = small_titanx.kernels.index("2dconvolution")
    fp = small_titanx.frame.drop_duplicates("kernel").set_index("kernel").loc["2dconvolution", cols].to_numpy(float)
    np.testing.assert_allclose(Xp[i], fp / fp.sum())
    with pytest.raises(ValueError, match="unknown counter kind 'x'"):
        dataset_counters(small_titanx, "x", (24, 975.0, 3505.0))


def test_run_evaluation_writes_tables_and_figures(tmp_path, small_titanx):
    s = EvalSettings(n_folds=2, ks=(1, 2), heat_k=2, hist_ks=(2,), bases=((24, 975.0, 3505.0),),
                     heat_bases=((24, 975.0, 3505.0), (24, 595.0, 810.0)), extra_counters=(), fmt=("png", "svg"))
    summary = run_evaluation(tmp_path, s, ds=small_titanx)
    for name in ("errors.csv", "errors.md", "summary.json", "heatmap_time.png", "clusters_time.svg",
                 "histogram_power.png", "oracle_time.png", "clusters_power.svg"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert json.loads((tmp_path / "summary.json").read_text())["schema"] == "portcast.scaling_evaluation"
    by = {(r["target"], r["k"]): r for r in summary["by_k"]}
    # with one cluster the learned and the oracle classifier must agree exactly
    assert by[("time", 1)]["learned_pct"] == by[("time", 1)]["oracle_pct"]
    # the no-change baseline by hand: predict the base time everywhere, over the 6 real kernels
    Y = small_titanx.cube("time")
    real = [i for i, k in enumerate(small_titanx.kernels) if small_titanx.groups()[k] == "real"]
    base = Y[real][:, 0, 10, 1]  # 975 MHz core, 3505 MHz memory
    err = np.abs(base[:, None, None, None] - Y[real]) / Y[real]
    expected = 100 * err.reshape(6, -1).sum() / (6 * 31)  # the base itself has error 0 and is excluded
    assert by[("time", 0)]["no_change_pct"] == pytest.approx(expected, rel=1e-12)
    assert "| time | 2 |" in (tmp_path / "errors.md").read_text()
