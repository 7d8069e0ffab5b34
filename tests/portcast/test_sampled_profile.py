"""Sampled profiles end to end (features/sample_estimator.py, features/sampled.py): a plan that keeps everything gives
the exact profile's every number; a real sample gives the exact counts exactly and states its intervals; the
command line's --sample and --exact."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from features.sample_estimator import interval, t975
from features.sampled import how_estimated, reuse_histogram, whole_region
from portcast.cli import app
from portcast.pipeline import profile
from profiler.sampling import SamplePlan

HERE = Path(__file__).resolve().parent


@numba.njit
def blur_rows(a, out):
    n, m = a.shape
    for k in numba.prange((n - 2) * m):
        i = 1 + k // m
        j = k % m
        out[i, j] = 0.25 * a[i - 1, j] + 0.5 * a[i, j] + 0.25 * a[i + 1, j]


def _inputs(n=160, m=256):
    a = np.linspace(0.0, 1.0, n * m).reshape(n, m)
    return a, np.zeros_like(a)


def _profile(sample):
    return profile(blur_rows, _inputs(), sample=sample, baseline=False, mode="compiled").regions[0]


@pytest.fixture(scope="module")
def exact():
    return _profile("exact")


def test_a_plan_that_keeps_everything_gives_the_exact_profile(exact):
    full = _profile(SamplePlan(1.0, 1.0))
    assert full.sample is not None and full.sample["kept_records"] == full.sample["records"] == exact.records
    assert full.features.keys() == exact.features.keys()
    for k, v in exact.features.items():
        assert full.features[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
    for k in ("kernel_s", "transfer_s", "read_bytes", "written_bytes"):
        assert full.prediction[k] == pytest.approx(exact.prediction[k], rel=1e-12), k
    assert full.op_counts == exact.op_counts and full.hot_lines == exact.hot_lines


def test_a_sample_counts_exactly_and_states_intervals(exact):
    s = _profile(SamplePlan.at_rate(0.25, seed=2))
    smp = s.sample
    assert smp["records"] == exact.records and smp["kept_records"] < exact.records / 2
    assert smp["thread_instances"] == 158 * 256 and smp["launches"] == 1
    assert s.op_counts == exact.op_counts  # the filter's exact counts
    for k, v in exact.features.items():
        if how_estimated(k) == "exact":
            assert s.features[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
    # every thread reads three rows: the footprint from the address sample is near the whole grid's
    assert s.features["mica_dataBlocks"] == pytest.approx(exact.features["mica_dataBlocks"], rel=0.15)
    lo, hi = smp["kernel_s_interval"]
    assert lo <= s.prediction["kernel_s"] <= hi
    assert set(smp["feature_intervals"]) <= {k for k in exact.features if how_estimated(k) != "exact"}
    assert "warp_coalescing" in smp["feature_intervals"]


def test_interval_by_random_groups():
    # replicates 1..8: mean 4.5, sd 2.449, t(7) = 2.365: half width 2.365 * 2.449 / sqrt(8) = 2.048
    lo, hi = interval(4.5, [1, 2, 3, 4, 5, 6, 7, 8])
    assert lo == pytest.approx(4.5 - 2.0478, abs=1e-3) and hi == pytest.approx(4.5 + 2.0478, abs=1e-3)
    lo, hi = interval(2.0, [1.0, 4.0], log=True)  # log scale: sd of (0, ln 4) = 0.980, t(1) = 12.706
    assert lo == pytest.approx(2.0 * math.exp(-12.706 * 0.98026 / math.sqrt(2)), rel=1e-3)
    assert hi == pytest.approx(2.0 * math.exp(12.706 * 0.98026 / math.sqrt(2)), rel=1e-3)
    assert interval(1.0, [2.0]) is None and interval(1.0, [float("nan"), 1.0]) is None
    assert t975(7) == 2.365 and t975(40) == 2.042


def test_reuse_histogram_moves_the_address_samples_distances_up_by_the_page_shift():
    blocks = np.zeros(19)
    blocks[[0, 1, 2]] = [0.5, 0.3, 0.2]
    address = np.zeros(19)
    address[[0, 1, 5, 18]] = [0.4, 0.1, 0.3, 0.2]
    h = reuse_histogram(blocks, address, 2)
    # bucket 0 of the sample is buckets 0..2 of the whole trace, shared out 5:3:2; bucket k moves to k + 2
    assert h[:3].tolist() == pytest.approx([0.2, 0.12, 0.08])
    assert h[3] == pytest.approx(0.1) and h[7] == pytest.approx(0.3) and h[18] == pytest.approx(0.2)
    assert h.sum() == pytest.approx(1.0)
    assert reuse_histogram(blocks, address, 0).tolist() == address.tolist()


def test_whole_region_scales_the_dependence_counts_and_divides_by_the_page_rate():
    from profiler.sampling import N_COUNTS, RECORDS, SampleCounts

    counts = np.zeros(N_COUNTS, np.int64)
    counts[RECORDS] = 1000
    sc = SampleCounts(SamplePlan(0.5, 0.25), counts, np.r_[np.zeros(8, np.int64), 1000, np.zeros(11, np.int64)],
                      np.zeros(20, np.int64), np.zeros(4, np.int64), np.zeros(8, np.int64))
    series = pd.Series({"ts_carriedDeps": 3.0, "memInt": 0.9, "mica_dataBlocks": 7.0, "warp_coalescing": 0.5})
    address = pd.Series({"mica_dataBlocks": 20.0})
    out = whole_region(series, sc, address, 0.25, weight=4.0)
    assert out["ts_carriedDeps"] == 12.0 and out["mica_dataBlocks"] == 80.0
    assert out["memInt"] == pytest.approx(0.08) and out["warp_coalescing"] == 0.5


SCRIPT = HERE.parent.parent / "examples" / "saxpy.py"


def _cli(*args):
    return CliRunner().invoke(app, ["profile", *args])


def test_cli_sample_options(tmp_path):
    mod = tmp_path / "k.py"
    mod.write_text("import numba, numpy as np\n"
                   "@numba.njit\n"
                   "def tri(a, b):\n"
                   "    for i in numba.prange(a.shape[0]):\n"
                   "        a[i] = 2.0 * b[i]\n"
                   "def portcast_inputs():\n"
                   "    return np.zeros(40000), np.ones(40000)\n")
    res = _cli("--function", f"{mod}:tri", "--no-progress", "--no-baseline", "--sample", "0.25")
    assert res.exit_code == 0, res.output
    assert "tri #0: sampled 25% of the thread blocks" in res.output and "95% interval" in res.output
    res = _cli("--function", f"{mod}:tri", "--no-progress", "--no-baseline", "--sample", "0.25", "--json")
    doc = json.loads(res.stdout)
    smp = doc["regions"][0]["sample"]
    assert smp["plan"]["block_rate"] == 0.25 and smp["records"] == doc["regions"][0]["records"]
    html = tmp_path / "r.html"
    res = _cli("--function", f"{mod}:tri", "--no-progress", "--no-baseline", "--sample", "0.25", "--report",
               str(html))
    assert res.exit_code == 0 and "sampled 25% of the thread blocks" in html.read_text()
    res = _cli("--function", f"{mod}:tri", "--no-progress", "--no-baseline", "--exact", "--json")
    assert json.loads(res.stdout)["regions"][0]["sample"] is None
    for bad, why in (("2", "a block rate must be in (0, 1]"), ("lots", "give auto, exact, or a block rate")):
        res = _cli("--function", f"{mod}:tri", "--no-progress", "--sample", bad)
        assert res.exit_code != 0 and why in res.output, res.output
    res = _cli("--function", f"{mod}:tri", "--no-progress", "--sample", "0.5", "--exact")
    assert res.exit_code != 0 and "either --sample or --exact" in res.output
    res = _cli("--function", f"{mod}:tri", "--no-progress", "--sample", "0.5", "--trace-dir", str(tmp_path / "t"))
    assert res.exit_code != 0 and "--trace-dir writes every record of a region" in res.output


@numba.njit
def leaky_sum(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s = 0.5 * s + x[i]
        out[i] = s


def test_a_region_without_a_thread_space_is_sampled_by_intervals_of_its_trace():
    x = np.linspace(0.0, 1.0, 300_000)
    ex = profile(leaky_sum, (x, np.zeros_like(x)), sample="exact", baseline=False, mode="compiled").regions[0]
    sm = profile(leaky_sum, (x, np.zeros_like(x)), sample=0.125, baseline=False, mode="compiled").regions[0]
    smp = sm.sample
    assert smp["plan"]["intervals"] and smp["thread_instances"] == 0
    assert smp["host_intervals"] == -(-ex.records // 16384) and smp["kept_records"] < ex.records / 3
    for k in ("mem", "fp", "mica_instructions", "mica_branches"):
        assert sm.features[k] == ex.features[k], k
    assert sm.features["ilp32"] == pytest.approx(ex.features["ilp32"], rel=1e-3)
    lo, hi = smp["feature_intervals"]["locStride8"]
    assert lo <= sm.features["locStride8"] <= hi and abs(sm.features["locStride8"] - ex.features["locStride8"]) < 1e-3


def test_a_sample_that_kept_no_thread_block_predicts_nothing_and_says_why():
    # 300 threads: two blocks of 256; at a rate of 1e-6 neither is kept
    reg = profile(blur_rows, _inputs(3, 300), sample=SamplePlan(1e-6, 1.0), baseline=False,
                  mode="compiled").regions[0]
    assert reg.prediction is None and reg.sample["kept_thread_instances"] == 0
    assert reg.no_prediction.startswith("the sample kept none of the region's 300 thread runs")


def test_the_same_region_on_the_same_inputs_gives_the_same_sampled_answer_wherever_its_arrays_lie():
    out = []
    for pad in (0, 5):
        junk = [np.empty(777 + 4099 * k) for k in range(pad)]  # moves the arrays allocated next
        reg = profile(blur_rows, _inputs(300, 256), sample=SamplePlan(0.1, 0.25, seed=3), baseline=False,
                      mode="compiled").regions[0]
        out.append((reg.features, reg.prediction["kernel_s"], reg.sample["kernel_s_interval"],
                    reg.sample["address_sample_records"]))
        del junk
    assert out[0] == out[1] and 0 < out[0][3] < 300 * 256 * 4  # a quarter of the pages: about a quarter
