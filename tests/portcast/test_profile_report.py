"""`portcast profile` end to end: trace, features while the region runs, weak-spot lines, speedup prediction."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from portcast.cli import app
from predictor import InteractionSearchRegressor
from predictor.model_io import save_model

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _table_value(output: str, name: str) -> str:
    m = re.search(rf"│ {re.escape(name)}\s+│ ([^│]+?)\s+│", output)
    assert m, f"no row {name!r} in:\n{output}"
    return m.group(1)


def test_profile_prints_features_lines_and_says_no_model_ships():
    res = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--no-progress", "--", "6400"])
    assert res.exit_code == 0, res.output
    # saxpy: 6400 iterations = 6400 threads, unit-stride float64 accesses
    assert _table_value(res.output, "warp_threads") == "6,400"
    # 32 float64 accesses = 256 B = 8 ideal sectors; the trace starts every allocation at a page boundary
    # (docs/trace-format.md, "Addresses"), so x (1 load) and y (load + store) span 8 sectors per warp, wherever
    # the CPU's allocator put them (on the CPU's addresses: 8 or 9 each, 24/(24+0..3))
    assert _table_value(res.output, "warp_coalescing") == "1.000"
    assert _table_value(res.output, "locStrideOther") == "0.000"
    # 2 loads (x, y) of 8 B and 1 store per iteration: FP ops (mul + add = 2) per 24 bytes
    assert _table_value(res.output, "warp_arithIntensity") == f"{2 / 24:.3f}"
    # the sequential measure sees the loop's single exit (one mixed 32-group in 200: Lbdiv_32 = 0.005); the
    # warps see no divergence (the kernel loop's own latch is no instruction of a GPU thread)
    assert _table_value(res.output, "Lbdiv_32") == "0.005"
    assert _table_value(res.output, "warp_bdiv") == "0.000"
    assert _table_value(res.output, "warp_simdEfficiency") == "1.000"
    # no weak spot: nothing diverges, the accesses are unit-stride, and the launch (not DRAM) bounds the time,
    # so the footprint's lines are not one either
    assert "lines behind the weak spots" not in res.output and "launch *" in res.output
    # the shipped default model predicts the kernel time on the A100 from measured GPU times, the speedup
    # against the region's own CPU time (its Python loop as written) with the interval of the CPU runs'
    # quartiles, and the copies: x and y read (2 x 51,200 B), y written
    out = " ".join(res.output.split())
    assert re.search(r"GPU time of saxpy #0 on NVIDIA A100 SXM4 40 GB \(a100, Ampere\): predicted kernel "
                     r"time [0-9.]+ us", out), out
    assert re.search(r"CPU time of the region here \(Python as written, median of [0-9,]+ runs?, IQR [0-9.]+%[^)]*\): "
                     r"[0-9.]+ (us|ms) -> speedup [0-9.,]+x \([0-9.,]+-[0-9.,]+\)", out), out
    assert "with the copies over the host link (102 kB in, 51.2 kB out:" in out
    assert "What bounds the GPU time of saxpy #0 on a100" in out
    assert "model: provisional" not in out and "predictor/models/gputime.json" in out


def test_profile_with_a_model_predicts_and_explains(tmp_path):
    # a model on two of the features the profiler computes, trained on a synthetic law speedup = 2 + 40*coalescing
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"warp_coalescing": rng.uniform(0.05, 1.0, 40), "ilp32": rng.uniform(1, 6, 40)})
    # saxpy's coalescing is 1 when the allocator put its arrays on 32-byte boundaries: the training range must
    # reach past 1, or such a run's prediction lies above every training target and is printed as a bound
    X.loc[0, "warp_coalescing"] = 1.2
    y = 2 + 40 * X["warp_coalescing"].to_numpy()
    model = InteractionSearchRegressor(k=1, n_splits=5, validation_size=8, random_state=0).fit(X, y)
    assert tuple(model.subset_) == ("warp_coalescing",)
    path = save_model(model, tmp_path / "m.json", metadata={"platform": "synthetic test law"})
    res = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--no-progress",
                              "--model", str(path), "--verbose", "--", "640"])
    assert res.exit_code == 0, res.output
    # every line of the speedup model's prediction names it, and none gives a GPU time
    assert f"speedup model m.json (synthetic test law): {path}; it predicts a speedup, not a GPU time" in res.output
    assert "GPU time of" not in res.output and "What bounds" not in res.output
    # the law gives 2 + 40 * coalescing, whatever the arrays' alignment made the coalescing
    coalescing = float(_table_value(res.output, "warp_coalescing"))
    m = re.search(r"speedup model m.json \(synthetic test law\): saxpy #0: predicted speedup ([0-9.]+)x \(port\)",
                  res.output)
    assert m and float(m.group(1)) == pytest.approx(2 + 40 * coalescing, rel=2e-3)
    assert "term contributions" in res.output
    # the term table is behind --verbose
    res = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--no-progress",
                              "--model", str(path), "--", "640"])
    assert res.exit_code == 0 and "predicted speedup" in res.output and "term contributions" not in res.output


def test_profile_rejects_a_corrupt_model(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = runner.invoke(app, ["profile", str(ROOT / "examples" / "saxpy.py"), "--no-progress",
                              "--model", str(bad), "--", "64"])
    assert res.exit_code == 2
    assert "bad.json: not a Portcast model file (invalid JSON" in res.output
    assert "traced regions" not in res.output  # the model is checked before the script runs


def test_provisional_model_only_by_name_and_every_line_says_so():
    res = runner.invoke(app, ["profile", "--function", f"{ROOT / 'examples' / 'saxpy.py'}:saxpy", "--no-progress",
                              "--model", "provisional", "--verbose"])
    assert res.exit_code == 0, res.output
    out = res.output
    label = "provisional model (simulated H100): "
    # what the model printed: its file, the speedup, the provisional line and the term tables' titles
    after = out[out.index(label):]
    printed = [line for line in after.splitlines() if line and not line.startswith(("┏", "┃", "┡", "│", "└"))]
    assert printed and all(line.startswith((label, "warning: " + label)) for line in printed), printed
    assert re.search(rf"{re.escape(label)}saxpy #\d+: predicted speedup [0-9.]+x \((port|do not port)\)", out)
    assert f"{label}model: provisional — trained on simulated H100 times" in out
    assert f"{label}term contributions to log speedup" in out
    # no GPU time, no bound table, no a100 label: the model is not a GPU-time model
    assert "GPU time of" not in out and "What bounds" not in out and "a100" not in out
    # without --model, the GPU-time model; the provisional one is never used in its place
    res = runner.invoke(app, ["profile", "--function", f"{ROOT / 'examples' / 'saxpy.py'}:saxpy", "--no-progress"])
    # (the invocation number counts the region's earlier calls in this process)
    assert res.exit_code == 0 and re.search(r"GPU time of saxpy #\d+ on NVIDIA A100", res.output)
    assert "provisional" not in res.output, [line for line in res.output.splitlines() if "provisional" in line]


def test_a_missing_shipped_model_is_an_error_not_the_provisional_one(monkeypatch, tmp_path):
    import predictor.gputime as gputime

    monkeypatch.setattr(gputime, "DEFAULT_GPUTIME_MODEL", tmp_path / "gputime.json")
    res = runner.invoke(app, ["profile", "--function", f"{ROOT / 'examples' / 'saxpy.py'}:saxpy", "--no-progress"])
    assert res.exit_code == 2
    assert " ".join(res.output.split()) == (
        f"error: the shipped GPU-time model {tmp_path / 'gputime.json'} is missing from this installation; give "
        "a model file with --model (portcast gpu-time train), or --model provisional for the older speedup model")
