"""The Sec. III-C experiments on AIWC (reduced sweeps; the full page is docs/eiger-experiments.md)."""

import numpy as np
import pytest

from predictor.eiger.experiments import render_markdown, run_aiwc_experiments


@pytest.fixture(scope="module")
def res():
    return run_aiwc_experiments(dimensions=(2, 10), clusters=(1, 4), thresholds=(0.05,))


def test_experiment_tables(res):
    assert res["n_trials"] == 1560 and res["n_metrics"] == 40
    assert res["dimensions"]["setting"].tolist() == [2, 10]
    assert res["clusters"]["setting"].tolist() == [1, 4]
    assert res["thresholds"]["setting"].tolist() == [0.05]
    assert res["applications"]["setting"].tolist()[-1] == "all"
    assert len(res["applications"]) == 12 and res["applications"]["n"].iloc[:-1].sum() == 1560
    assert len(res["devices"]) == 16 and set(res["devices"]["n"].iloc[:-1]) == {104}
    # more variance kept with more components; the model beats the geometric-mean baseline in CV
    v = res["dimensions"]["variance_kept"].tolist()
    assert 0 < v[0] < v[1] < 1
    base = res["dimensions"].set_index("setting").loc[10]
    assert base["mse_log10"] < res["baseline"]["mse_log10"]
    assert base["median_ape"] < res["baseline"]["median_ape"]
    # the row of the base configuration is the same fit in every sweep that contains it
    assert res["clusters"].set_index("setting").loc[4, "mape"] == base["mape"]
    assert np.isfinite(res["devices"]["mse_log10"]).all()


def test_markdown_page(res):
    text = render_markdown(res, command="portcast eiger evaluate aiwc --out x.md")
    assert text.startswith("# Eiger experiments on AIWC (generated)")
    assert "`portcast eiger evaluate aiwc --out x.md`" in text
    for title in ("Varying dimensionality", "Varying cluster count", "Varying the new-function threshold",
                  "leave one application out", "leave one device out", "The base model fitted on all trials"):
        assert title in text
    assert "| gtx1080 | gtx1080ti + titanx |" in text
