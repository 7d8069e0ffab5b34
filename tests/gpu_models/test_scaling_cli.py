"""``portcast scale``: train / predict / taxonomy / synthetic, and clean errors on bad input."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpu_models.scaling.generator import generate
from portcast.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def syn_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("d") / "syn.csv"
    generate(n_per_archetype=2, sm_counts=(4, 8, 16), core_mhz=(300, 600, 900), mem_mhz=(475, 925, 1375),
             random_state=0).write(path)
    return path


def test_train_and_predict(tmp_path, syn_csv):
    model = tmp_path / "m.json"
    r = runner.invoke(app, ["scale", "train", str(syn_csv), "-o", str(model), "--base", "8,600,925",
                            "--clusters", "3"])
    assert r.exit_code == 0, r.output
    data = json.loads(model.read_text())
    assert data["params"]["base"] == [8, 600.0, 925.0] and data["meta"]["counters"] == "columns"
    assert data["cu_set"] is not None and len(data["freq_sets"]) == 3
    out = tmp_path / "p.csv"
    r = runner.invoke(app, ["scale", "predict", str(model), str(syn_csv), "-k", "syn_compute_00", "-o", str(out)])
    assert r.exit_code == 0, r.output
    p = pd.read_csv(out)
    assert len(p) == 27
    at_base = p[(p.sm_count == 8) & (p.core_mhz == 600) & (p.mem_mhz == 925)]
    assert at_base.predicted_time.iloc[0] == pytest.approx(at_base.measured_time.iloc[0], rel=1e-12)


def test_power_model_via_cli(tmp_path, syn_csv):
    r = runner.invoke(app, ["scale", "train", str(syn_csv), "-o", str(tmp_path / "p.json"), "--target", "power",
                            "--clusters", "2"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "p.json").read_text())["params"]["target"] == "power"


def test_taxonomy_and_synthetic_commands(tmp_path, syn_csv):
    r = runner.invoke(
        app, ["scale", "taxonomy", str(syn_csv), "--clusters", "3", "-o", str(tmp_path), "--format", "svg"]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "taxonomy_syn_time.svg").exists()
    t = pd.read_csv(tmp_path / "taxonomy_syn_time.csv")
    assert len(t) == 12 and t.cluster.nunique() == 3
    r = runner.invoke(app, ["scale", "synthetic", "-o", str(tmp_path / "s.parquet"), "--per-archetype", "1"])
    assert r.exit_code == 0 and "SYNTHETIC" in r.output


@pytest.mark.parametrize("args,msg", [
    (["scale", "train", "nope.csv", "-o", "m.json"], "nope.csv: no such file"),
    (["scale", "train", "{syn}", "-o", "m.json", "--base", "8,601,925"], "core_mhz=601 is not on the grid"),
    (["scale", "train", "{syn}", "-o", "m.json", "--base", "8;600"], "--base must be SM_COUNT,CORE_MHZ,MEM_MHZ"),
    (["scale", "train", "{bad}", "-o", "m.json"], "row 1 (line 3), column 'time'"),
    (["scale", "predict", "{bad}", "{syn}"], "not a scaling model file (invalid JSON"),
    (["scale", "evaluate", "-o", "{out}", "--format", "gif"], "--format must be png, svg or png,svg"),
])
def test_bad_input_is_one_clean_error(tmp_path, syn_csv, args, msg):
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,sm_count,core_mhz,mem_mhz,time,power\nk,4,500,800,1.0,3\nk,4,600,800,-2,3\n")
    args = [a.replace("{syn}", str(syn_csv)).replace("{bad}", str(bad)).replace("{out}", str(tmp_path / "figs"))
            for a in args]
    args = [str(tmp_path / a) if a == "m.json" else a for a in args]
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert "error:" in r.output and msg in " ".join(r.output.split()), r.output
    assert "Traceback" not in r.output


def test_place_a_trace_on_a_titanx_surface(tmp_path):
    """The hand-off end to end: a trace's op mix -> class counters -> a Titan X model's surface."""
    import numpy as np

    from core.trace_schema import Op
    from profiler.trace import RegionInfo, StaticTable, TraceChunk
    from profiler.tracefile import write_trace

    model = tmp_path / "t.json"
    r = runner.invoke(app, ["scale", "train", "titanx", "-o", str(model), "--base", "24,975,3505",
                            "--clusters", "4"])
    assert r.exit_code == 0, r.output
    ops = np.array([Op.FP_MUL, Op.FP_ALU, Op.LOAD, Op.LOAD, Op.STORE, Op.BRANCH, Op.INT_ALU, Op.MOVE] * 4,
                   dtype=np.uint8)
    trace = write_trace(tmp_path / "r.parquet", RegionInfo(name="saxpy"), StaticTable(),
                        TraceChunk.from_columns(op=ops))
    out = tmp_path / "s.csv"
    r = runner.invoke(app, ["scale", "place", str(model), str(trace), "--base-value", "2.0", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "mix alu 0.25, mul 0.12, div 0.00, spf 0.00, mem 0.38, ctrl 0.12, other 0.12" in " ".join(r.output.split())
    s = pd.read_csv(out)
    assert len(s) == 32
    assert s[(s.core_mhz == 975) & (s.mem_mhz == 3505)].predicted_time.iloc[0] == pytest.approx(2.0)
    r = runner.invoke(app, ["scale", "place", str(model), str(tmp_path / "none.parquet"), "--base-value", "1"])
    assert r.exit_code == 2 and "no such trace file" in " ".join(r.output.split())
