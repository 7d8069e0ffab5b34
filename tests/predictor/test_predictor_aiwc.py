"""The vendored AIWC data and the evaluation protocol."""


import numpy as np
import pandas as pd
import pytest

from predictor import xapp_aiwc as aiwc


@pytest.fixture(scope="module")
def i7():
    return aiwc.load_aiwc("i7-6700k", "gtx1080ti")


def test_load_shape_and_groups(i7):
    assert i7.shape[0] == 104
    assert len(aiwc.AIWC_FEATURES) == 31
    assert i7["group"].nunique() == 34  # 37 kernels, the four FFT radix kernels as one
    assert (i7["n_cpu_runs"] >= 40).all() and (i7["speedup"] > 0).all()


def test_speedup_is_ratio_of_medians_from_the_raw_file(i7):
    raw = pd.read_csv(aiwc.DATA_PATH)
    sel = raw[(raw.application == "srad") & (raw.kernel == "srad_cuda_1") & (raw["size"] == "large")]
    cpu = np.median(sel[sel.device == "i7-6700k"].kernel_time)
    gpu = np.median(sel[sel.device == "gtx1080ti"].kernel_time)
    row = i7[(i7.kernel == "srad_cuda_1") & (i7["size"] == "large")].iloc[0]
    assert row["speedup"] == pytest.approx(cpu / gpu, rel=1e-12)
    assert row["speedup"] == pytest.approx(45.5412, rel=1e-4)


def test_unknown_device():
    with pytest.raises(ValueError, match="device 'h100' is not in the AIWC data; devices: fiji-furyx"):
        aiwc.load_aiwc("i7-6700k", "h100")


def test_log_features(i7):
    X = aiwc.aiwc_features(i7, "log")
    r = i7.index[(i7.kernel == "srad_cuda_1") & (i7["size"] == "large")][0]
    assert X.loc[r, "workitems"] == pytest.approx(np.log10(1 + i7.loc[r, "workitems"]))
    assert X.loc[r, "granularity"] == pytest.approx(np.log10(i7.loc[r, "granularity"]))
    assert X.loc[r, "local_memory_address_entropy_3"] == i7.loc[r, "local_memory_address_entropy_3"]


def test_kernel_group_of_fft():
    assert aiwc.kernel_group("fft", "fftRadix2Kernel") == aiwc.kernel_group("fft", "fftRadix16Kernel") == "fft"
    assert aiwc.kernel_group("hmm", "calc_xi_dev") == "hmm/calc_xi_dev"


def test_small_evaluation_runs_the_protocol():
    res = aiwc.evaluate_aiwc([("xeon_es-2697v2", "k40c")], n_outer=2, n_splits=3, k=2,
                             transforms=("log", "none"), random_state=0,
                             baselines=["OLS linear speedup", "LASSO linear log speedup"])
    models = set(res["model"])
    assert {aiwc.FINAL, aiwc.FINAL_RAW, "XAPP log speedup", "XAPP speedup", "LASSO linear log speedup"} <= models
    assert len(models) == 4 + 2
    rnd = res[(res.protocol == "random")]
    assert (rnd["n_train"] == 92).all()
    grp = res[(res.protocol == "kernel-grouped")]
    assert (grp["n_train"] < 92).all()
    # the final model is the fixed-transform search with the best validation score
    for (o, prot), g in res.groupby(["outer", "protocol"]):
        fixed = g[g.model.isin(["XAPP log speedup", "XAPP speedup"])]
        fin = g[g.model == aiwc.FINAL].iloc[0]
        assert fin["validation_score"] == fixed["validation_score"].min()
    for col in ("weighted_error", "mean_error", "max_error", "decision_accuracy"):
        assert np.isfinite(res[col]).all()
    md = aiwc.render_markdown(res, {"n_outer": 2, "n_splits": 3}, "portcast evaluate aiwc --n-outer 2")
    assert "## xeon_es-2697v2 -> k40c" in md and "### kernel-grouped holdout" in md
    assert "`portcast evaluate aiwc --n-outer 2`" in md
    s = aiwc.summarize(res)
    row = s[(s.model == aiwc.FINAL) & (s.protocol == "random")].iloc[0]
    vals = res[(res.model == aiwc.FINAL) & (res.protocol == "random")]["weighted_error"]
    assert row["weighted_error_mean"] == pytest.approx(vals.mean())
    assert f"{row['weighted_error_mean'] * 100:.0f}%" in md
