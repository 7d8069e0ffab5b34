"""The pipeline by stage (portcast/pipeline/) and the RegionPredictor interface it chooses models through
(predictor/region_predictor.py): what resolve_model returns for each model, and no stage telling models apart
by their tags."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from portcast.pipeline.stage_prepare import prepare, resolve_model
from predictor.region_predictor import GpuTimePredictor, RegionPredictor, XappPredictor

PIPELINE = Path(__file__).resolve().parents[2] / "portcast" / "pipeline"


def test_the_shipped_model_is_a_gpu_time_predictor_that_needs_the_counts_and_no_simt():
    chosen = resolve_model(None)
    assert isinstance(chosen, GpuTimePredictor) and isinstance(chosen, RegionPredictor)
    assert (chosen.kind, chosen.predicts_time, chosen.needs_counts, chosen.needs_simt) == ("gputime", True, True,
                                                                                           False)
    assert chosen.target("p100") == ("p100", "NVIDIA Tesla P100 PCIe 16 GB (p100, Pascal)")
    assert chosen.model_label("anything") == ""
    assert chosen.trained_on.startswith("measured kernel times of Portcast's ports")


def test_the_provisional_model_is_an_xapp_predictor_on_its_own_gpu():
    chosen = resolve_model("provisional")
    assert isinstance(chosen, XappPredictor)
    assert (chosen.kind, chosen.predicts_time, chosen.needs_counts, chosen.needs_simt) == ("xapp", False, False,
                                                                                           False)
    # the target is the model's own GPU, whatever GPU was asked for
    assert chosen.target("p100") == ("h100", "provisional model (simulated H100)")
    assert chosen.model_label("provisional model (simulated H100)") == "provisional model (simulated H100)"
    assert chosen.provisional.startswith("model: provisional")
    # a speedup model predicts no time for a sampled region's replicates
    assert chosen.replicate_time("h100", pd.Series(dtype=float), {}, {}, 1.0) is None


def test_prepare_adds_the_prediction_sinks_only_for_a_model_that_reads_the_counts():
    gputime = prepare(model=resolve_model(None), gpu="p100")
    xapp = prepare(model="provisional", gpu="p100")
    assert gputime.psinks is not None and gputime.psinks.simt is None  # the shipped model reads no SIMT estimate
    assert [type(s).__name__ for s in gputime.psinks.sinks] == ["WorkSink", "BytesSink"]
    assert xapp.psinks is None and isinstance(xapp.chosen, XappPredictor)
    assert len(gputime.sinks) == len(xapp.sinks) + 2


def test_a_gpu_time_predictor_without_counts_says_why():
    chosen = resolve_model(None)
    assert chosen.predict("p100", pd.Series({"mem": 0.5})) == {
        "reason": "the region's work counts were not gathered (a run without the prediction's sinks)"}


@pytest.mark.parametrize("path", sorted(PIPELINE.glob("*.py")), ids=lambda p: p.name)
def test_no_stage_tells_models_apart_by_their_tag(path):
    tags = [(n.lineno, n.value) for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and n.value in ("gputime", "xapp")]
    assert tags == []
