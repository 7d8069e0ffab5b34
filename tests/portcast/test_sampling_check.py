"""Sampled against exact profiles (portcast.sampling_check, ``portcast sample-check``) on corpus kernels."""

import dataclasses
import math

import pandas as pd
import pytest
from typer.testing import CliRunner

from features.catalogue import catalogue
from features.sampled import how_estimated
from kernels.registry import all_kernels
from portcast import sampling_check as S
from portcast.cli import app

runner = CliRunner()
RATES = (1 / 8, 1 / 32)
SEEDS = (0, 1)


@pytest.fixture(scope="module")
def saxpy_rows():
    spec = all_kernels()["saxpy"]
    n = spec.sizes["small"]
    return S.check_region(spec.cpu, lambda: spec.make_inputs(n, 0), rates=RATES, seeds=SEEDS, region="saxpy")


@pytest.fixture(scope="module")
def saxpy_frame(saxpy_rows):
    return S.long_form(saxpy_rows, "small")


def test_one_row_per_rate_and_seed_with_every_catalogue_feature(saxpy_rows):
    assert [(r["rate"], r["seed"]) for r in saxpy_rows] == [(a, b) for a in RATES for b in SEEDS]
    names = set(catalogue()["name"])
    for r in saxpy_rows:
        assert r["region"] == "saxpy"
        assert r["records"] > 0 and 0 < r["kept_records"] < r["records"]
        assert 0 < r["kept_thread_instances"] < r["thread_instances"] == 65536
        assert {f["feature"] for f in r["features"]} == names
        assert all({"feature", "how", "exact", "sampled", "error", "within", "covered"} <= f.keys()
                   for f in r["features"])
    # a lower rate keeps fewer records
    assert saxpy_rows[-1]["kept_records"] < saxpy_rows[0]["kept_records"]


def test_exactly_estimated_features_have_no_error(saxpy_rows):
    for r in saxpy_rows:
        feats = {f["feature"]: f for f in r["features"]}
        for name in ("mem", "mica_instructions", "warp_threads", "mica_branches"):
            assert feats[name]["how"] == "exact"
            assert feats[name]["error"] == 0.0 and feats[name]["within"]
            assert feats[name]["exact"] == feats[name]["sampled"] > 0 or name == "mica_branches"
        exact = [f for f in r["features"] if f["how"] == "exact"]
        assert len(exact) > 20 and all(f["error"] == 0.0 for f in exact)
        assert all(f["covered"] is None for f in exact)  # an exact feature has no interval


def test_errors_tolerances_and_kinds_agree(saxpy_frame):
    f = saxpy_frame[saxpy_frame["how"] != S.PREDICTION]
    cat = catalogue().set_index("name")["range"]
    assert (f["kind"] == f["feature"].map(lambda n: "fraction" if cat[n] == "0..1" else "relative")).all()
    assert (f["how"] == f["feature"].map(how_estimated)).all()
    for row in f.itertuples():
        e, s = row.exact, row.sampled
        want = abs(s - e) if row.kind == "fraction" else abs(s - e) / max(abs(e), 1e-12)
        assert row.error == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert row.tolerance == 0.02
        assert bool(row.within) == (row.error <= 0.02)
        if isinstance(row.covered, bool):
            slack = 1e-9 * max(abs(row.lo), abs(row.hi), abs(e))
            assert row.covered == (row.lo - slack <= e <= row.hi + slack)
        else:
            assert row.covered is None and math.isnan(row.lo)
    # something is estimated, with intervals, and the exact values are not all inside them trivially
    assert f["covered"].notna().sum() > 100


def test_speedup_change_is_the_inverse_ratio_of_kernel_times(saxpy_rows):
    for r in saxpy_rows:
        assert r["exact_kernel_s"] > 0 and r["sampled_kernel_s"] > 0
        assert r["kernel_change"] == pytest.approx(r["sampled_kernel_s"] / r["exact_kernel_s"] - 1)
        assert r["speedup_change"] == pytest.approx(abs(r["exact_kernel_s"] / r["sampled_kernel_s"] - 1))
        lo, hi = r["kernel_s_interval"]
        assert r["kernel_covered"] == (lo * (1 - 1e-9) <= r["exact_kernel_s"] <= hi * (1 + 1e-9))


def test_tables_and_goal_lines_come_from_the_long_table(saxpy_frame):
    t = S.tables(saxpy_frame)
    assert set(t) == {"goal", "kinds", "worst", "features", "regions", "skipped"} and t["skipped"] == ""
    g = S.goal(saxpy_frame)
    assert list(g["rate"]) == [1 / 8, 1 / 32] and (g["regions"] == 1).all()
    f = saxpy_frame[(saxpy_frame["how"] != S.PREDICTION) & (saxpy_frame["rate"] == 1 / 8)]
    assert g["within"].iloc[0] == pytest.approx(f["within"].mean())
    assert g["predictions"].iloc[0] == len(SEEDS)
    pf = S.per_feature(saxpy_frame)
    assert len(pf) == 2 * len(catalogue())
    exact = pf[pf["how"] == "exact"]
    assert (exact["within"] == 1.0).all() and (exact["median_error"] == 0.0).all()
    assert t["regions"].count("| saxpy |") == 2
    lines = S.goal_lines(saxpy_frame)
    assert len(lines) == 10 and lines[0].startswith("rate 1/8: ") and "(region, feature) pairs" in lines[0]


def test_a_region_that_raises_is_recorded_and_skipped(monkeypatch):
    import kernels.registry as reg

    good = reg.all_kernels()["dot"]

    def boom(x, y):
        raise RuntimeError("no such luck")

    fake = {"dot": good, "broken": dataclasses.replace(good, name="broken", cpu=boom)}
    monkeypatch.setattr(reg, "all_kernels", lambda: fake)
    df = S.run_corpus("tiny", ["broken", "dot"], rates=(0.5,), seeds=(0,))
    skipped = S.skipped(df)
    assert list(skipped["region"]) == ["broken"] and "RuntimeError: no such luck" in skipped["skipped"].iloc[0]
    assert set(df.loc[df["skipped"].fillna("") == "", "region"]) == {"dot"}
    assert "broken" in S.tables(df)["skipped"]


def test_command_writes_its_files_and_refuses_to_overwrite_without_force(tmp_path):
    out = tmp_path / "sampling"
    args = ["sample-check", "--size", "small", "--kernel", "dot", "--rates", "0.125", "--seeds", "1",
            "--out-dir", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "rate 1/8: " in res.output and "pairs within tolerance" in res.output
    csv, md = out / "validation.csv", out / "validation.md"
    assert csv.read_text().splitlines()[0] == "# portcast.sampling-validation schema_version=1"
    df = pd.read_csv(csv, comment="#")
    assert list(df.columns) == S.COLUMNS
    assert set(df["region"]) == {"dot"} and set(df["rate"]) == {0.125} and set(df["seed"]) == {0}
    assert (df.loc[df["how"] == "exact", "error"] == 0).all()
    text = md.read_text()
    assert "portcast sample-check --size small --kernel dot --rates 0.125 --seeds 1" in text
    assert "## Goal lines" in text and "## Per feature" in text
    before = csv.read_bytes()
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert f"--out-dir {out / 'validation.csv'} exists: pass --force to replace it" in " ".join(res.output.split())
    assert csv.read_bytes() == before
    res = runner.invoke(app, args + ["--force"])
    assert res.exit_code == 0, res.output


def test_command_refuses_an_unknown_kernel_or_rate_before_any_work(tmp_path):
    res = runner.invoke(app, ["sample-check", "--kernel", "no_such", "--out-dir", str(tmp_path / "o")])
    assert res.exit_code == 2 and "unknown kernel no_such" in res.output
    res = runner.invoke(app, ["sample-check", "--kernel", "dot", "--rates", "2", "--out-dir", str(tmp_path / "o")])
    assert res.exit_code == 2 and "not in (0, 1]" in res.output
    assert not (tmp_path / "o").exists()

