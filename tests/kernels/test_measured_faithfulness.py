"""portcast.measured: the work counted on a port's trace, the union of touched byte ranges, the faithfulness
ratios against AIWC's and Amaris's counts, the points table's file, and the ``portcast measured`` commands."""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kernels.measured.registry import all_measured
from portcast.cli import app
from portcast.measured import (AIWC_DATA, AIWC_GPUS, AMARIS_GPUS, FLOOR_GRID, WorkSink, amaris_first_launches,
                               correlation, faithfulness, fit_floors, measured_times, read_points_table,
                               simulated_times, split_applications, summarize, trace_point, union_length,
                               wave_blocks, write_points_table)
from profiler.session import trace_function
from profiler.trace import Op


@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 16)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_union_length_equals_the_set_of_bytes(ranges):
    want = len({a + k for a, s in ranges for k in range(s)})
    arr = np.array(ranges, dtype=np.int64).reshape(-1, 2)
    assert union_length([arr[: len(arr) // 2], arr[len(arr) // 2:]]) == want


def scale(x, y):
    for i in numba.prange(x.shape[0]):
        y[i] = 2.0 * x[i]
    return y


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_work_sink_counts_a_small_region(mode):
    sink = WorkSink()
    x, y = np.arange(4.0), np.zeros(4)
    trace_function(scale, (x, y), sinks=[sink], mode=mode)
    got = sink.results[0]
    assert (got["threads"], got["loads"], got["stores"]) == (4, 4, 4)
    assert got["load_bytes"] == got["store_bytes"] == 32 and got["unique_bytes"] == 64
    assert got["thread_records"] <= got["records"]


def test_trace_point_of_a_port_counts_its_transpose():
    spec = all_measured()["aiwc/kmeans/invert_mapping"]
    row = trace_point(spec, "test", features=False)
    n, f = spec.test_point["npoints"], spec.test_point["nfeatures"]
    assert row["threads"] == row["global_work"] == n
    assert row["loads"] == row["stores"] == n * f
    assert row["unique_bytes"] == 2 * n * f * 4  # float32 points in, their transpose out


def _points_frame():
    return pd.DataFrame([
        {"port": "aiwc/kmeans/kmeansPoint", "source": "aiwc", "application": "kmeans", "kernel": "kmeansPoint",
         "point": "tiny", "global_work": 256, "local_work": 16, "threads": 256, "records": 1000,
         "thread_records": 990, "loads": 300, "stores": 20, "load_bytes": 1200, "store_bytes": 80,
         "unique_bytes": 4000},
        {"port": "amaris/lud/lud_diagonal", "source": "amaris", "application": "lud", "kernel": "lud_diagonal",
         "point": "256", "global_work": 16, "local_work": 16, "threads": 16, "records": 6500,
         "thread_records": 6400, "loads": 512, "stores": 480, "load_bytes": 2048, "store_bytes": 1920,
         "unique_bytes": 2048, "f_warp_simdEfficiency": 0.25},
    ])


def test_faithfulness_ratios_against_both_data_sources():
    aiwc = pd.DataFrame([{"application": "kmeans", "kernel": "kmeansPoint", "size": "tiny", "workitems": 256,
                          "total_instruction_count": 2000, "total_memory_footprint": 500}])
    amaris = pd.DataFrame([{"kernel": "lud_diagonal", "input.size.1": 256, "input.size.2": 0, "threads": 16,
                            "inst_executed": v, "gld_inst_32bit": 256, "gst_inst_32bit": 240}
                           for v in (700, 800, 900)])
    f = faithfulness(_points_frame(), all_measured(), aiwc=aiwc, amaris=amaris).set_index("port")
    k = f.loc["aiwc/kmeans/kmeansPoint"]
    assert (k.threads, k.data_threads, k.work_ratio, k.footprint_ratio) == (256, 256.0, 0.5, 8.0)
    d = f.loc["amaris/lud/lud_diagonal"]
    # 6400 thread records at a quarter of the lanes active: 800 warp instructions; median inst_executed 800
    assert (d.work_ratio, d.load_ratio, d.store_ratio) == (1.0, 2.0, 2.0)


def test_points_table_round_trip_and_refusals(tmp_path):
    out = write_points_table(_points_frame(), tmp_path / "p.parquet", extra={"command": "x"})
    pd.testing.assert_frame_equal(read_points_table(out), _points_frame())
    with pytest.raises(ValueError, match="give a path ending in .parquet"):
        write_points_table(_points_frame(), tmp_path / "p.csv")
    _points_frame().to_parquet(tmp_path / "plain.parquet")
    with pytest.raises(ValueError, match="not a measured points table"):
        read_points_table(tmp_path / "plain.parquet")


def test_cli_trace_and_report(tmp_path):
    runner = CliRunner()
    out = tmp_path / "t.parquet"
    res = runner.invoke(app, ["measured", "trace", "--ports", "aiwc/kmeans/invert_mapping", "--points", "tiny",
                              "--no-features", "--out", str(out)])
    assert res.exit_code == 0, res.output
    table = read_points_table(out)
    assert table[["port", "point", "threads", "unique_bytes"]].values.tolist() == [
        ["aiwc/kmeans/invert_mapping", "tiny", 256, 2 * 256 * 30 * 4]]
    res = runner.invoke(app, ["measured", "report", "--table", str(out), "--csv", str(tmp_path / "f.csv")])
    assert res.exit_code == 0, res.output
    f = pd.read_csv(tmp_path / "f.csv")
    # AIWC's footprint of the tiny transpose is 5760 units against 61440 bytes touched
    assert f.footprint_ratio.round(4).tolist() == [round(61440 / 5760, 4)]


def test_cli_refuses_an_unknown_port(tmp_path):
    res = CliRunner().invoke(app, ["measured", "trace", "--ports", "nope", "--out", str(tmp_path / "t.parquet")])
    assert res.exit_code == 2 and "unknown port(s) nope" in res.output


def test_measured_times_of_both_sources():
    specs = all_measured()
    t = measured_times(specs).set_index(["port", "point", "gpu"])
    aiwc = pd.read_csv(AIWC_DATA, usecols=["application", "kernel", "size", "device", "kernel_time"])
    k = aiwc[(aiwc.kernel == "kmeansPoint") & (aiwc["size"] == "tiny") & (aiwc.device == "k40c")]
    assert t.loc[("aiwc/kmeans/kmeansPoint", "tiny", "k40c"), "measured_s"] == k.kernel_time.median() * 1e-6
    # the FFT region stands for its radix rows, each a copy of the whole transform's time
    assert ("aiwc/fft/fft", "large", "gtx1080") in t.index
    first = amaris_first_launches()
    row = first[(first.kernel == "lud_perimeter") & (first["input.size.1"] == 512) & (first.gpu == "Tesla-K40")]
    assert t.loc[("amaris/lud/lud_perimeter", "512", "Tesla-K40"), "measured_s"] == float(row.duration.iloc[0])
    assert set(t.reset_index().gpu) == set(AIWC_GPUS) | set(AMARIS_GPUS)


def _sim_points():
    return pd.DataFrame({"port": ["a", "b", "c", "d"], "point": ["p"] * 4,
                         "sim_k40": [1e-5, 2e-5, 4e-5, 8e-5], "sim_p100": [1e-5, np.nan, 1e-5, 1e-5]})


def test_correlation_statistics_are_exact_on_a_small_case():
    times = pd.DataFrame({"port": ["a", "b", "c", "d", "a", "c", "d"], "point": ["p"] * 7,
                          "gpu": ["Tesla-K40"] * 4 + ["Tesla-P100"] * 3, "preset": ["k40"] * 4 + ["p100"] * 3,
                          "measured_s": [2e-5, 4e-5, 8e-5, 16e-5, 1e-5, 2e-5, 4e-5]})
    pairs, summary = correlation(_sim_points(), times)
    s = summary.set_index("gpu")
    # K40: the model is half of every time: 50% error, perfectly correlated
    assert s.loc["Tesla-K40", "pairs"] == 4 and s.loc["Tesla-K40", "mape"] == pytest.approx(0.5)
    assert s.loc["Tesla-K40", "pearson_log"] == pytest.approx(1.0) and s.loc["Tesla-K40", "spearman"] == 1.0
    # P100: errors 0, 0.5, 0.75
    assert s.loc["Tesla-P100", "mape"] == pytest.approx(1.25 / 3) and s.loc["all", "pairs"] == 7
    assert np.isnan(s.loc["Tesla-P100", "spearman"])  # the model's P100 times are all equal: no rank to compare


def test_cli_correlate_writes_pairs_and_plot(tmp_path, monkeypatch):
    import portcast.measured as m

    pts = _sim_points().assign(source="amaris")
    write_points_table(pts, tmp_path / "s.parquet")
    times = pd.DataFrame({"port": ["a", "b", "c", "d"], "point": ["p"] * 4, "gpu": ["Tesla-K40"] * 4,
                          "preset": ["k40"] * 4, "measured_s": [1e-5, 2e-5, 4e-5, 8e-5]})
    monkeypatch.setattr(m, "measured_times", lambda specs: times)
    res = CliRunner().invoke(app, ["measured", "correlate", "--table", str(tmp_path / "s.parquet"),
                                   "--csv", str(tmp_path / "pairs.csv"), "--plot", str(tmp_path / "c.png")])
    assert res.exit_code == 0, res.output
    assert pd.read_csv(tmp_path / "pairs.csv").ape.tolist() == [0.0] * 4
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    res = CliRunner().invoke(app, ["measured", "correlate", "--floor", "--table", str(tmp_path / "s.parquet"),
                                   "--csv", str(tmp_path / "pairs2.csv")])
    assert res.exit_code == 0 and "fitted launch floors: Tesla-K40 0.0 us" in res.output
    assert "held-out" in res.output
    # ports a..d are applications of their own here: a, c train, b, d are held out; the CSV has both halves
    assert sorted(pd.read_csv(tmp_path / "pairs2.csv").application) == ["a", "b", "c", "d"]
    write_points_table(_points_frame(), tmp_path / "nosim.parquet")
    res = CliRunner().invoke(app, ["measured", "correlate", "--table", str(tmp_path / "nosim.parquet")])
    assert res.exit_code == 2 and "no simulated times" in res.output


def test_the_fft_region_is_compared_with_its_passes_rows():
    # 2048 points: two radix-16 passes (128 work items each) and one radix-8 pass (256)
    aiwc = pd.DataFrame([{"application": "fft", "kernel": "fftRadix16Kernel", "size": "tiny", "workitems": 128,
                          "total_instruction_count": 1000, "total_memory_footprint": 300},
                         {"application": "fft", "kernel": "fftRadix8Kernel", "size": "tiny", "workitems": 256,
                          "total_instruction_count": 600, "total_memory_footprint": 400}])
    pts = pd.DataFrame([{"port": "aiwc/fft/fft", "source": "aiwc", "application": "fft", "kernel": "fft",
                         "point": "tiny", "global_work": 256, "threads": 256, "records": 5200,
                         "unique_bytes": 3200}])
    f = faithfulness(pts, all_measured(), aiwc=aiwc).iloc[0]
    assert (f.data_threads, f.data_instructions, f.work_ratio, f.footprint_ratio) == (256, 2600, 2.0, 8.0)


def test_applications_split_alternately_into_training_and_held_out():
    ports = ["aiwc/lud/a", "aiwc/bfs/b", "amaris/lud/c", "aiwc/crc/d", "aiwc/bfs/e"]
    assert split_applications(ports) == (["aiwc/bfs", "aiwc/lud"], ["aiwc/crc", "amaris/lud"])


def test_fit_floors_recovers_a_constant_launch_time():
    sim = np.array([0.1e-6, 1e-6, 10e-6, 100e-6])
    pairs = pd.DataFrame({"gpu": ["g"] * 4, "simulated_s": sim, "measured_s": sim + 12e-6})
    f = fit_floors(pairs)["g"]
    assert f in FLOOR_GRID and abs(f - 12e-6) <= 0.02 * 12e-6
    fitted, summary = summarize(pairs, {"g": f})
    assert summary.set_index("gpu").loc["g", "mape"] < 0.02
    assert fit_floors(pairs.assign(measured_s=sim))["g"] == 0.0  # nothing to add when the model is right


def test_two_wave_extrapolation_follows_its_formula(monkeypatch):
    # a stand-in model whose time is 50 ns of start plus 10 ns per block: two waves predict every block
    import gpu_models.simt.model as model
    from gpu_models.simt.config import load_config

    class Result:
        def __init__(self, t):
            self.time_ns = t

    monkeypatch.setattr(model, "simulate", lambda streams, cfg, crisp, name: Result(50.0 + 10.0 * streams.n_blocks))
    block, threads = 256, 256 * 1000
    tid = np.repeat(np.arange(threads, dtype=np.int64), 2)
    from profiler.trace import TraceChunk

    n = len(tid)
    chunk = TraceChunk(pc=np.zeros(n, np.int32), op=np.full(n, int(Op.INT_ALU), np.int8),
                       taken=np.zeros(n, np.int8), src1=np.zeros(n, np.int32), src2=np.zeros(n, np.int32),
                       src3=np.zeros(n, np.int32), dst=np.zeros(n, np.int32), addr=np.zeros(n, np.int64),
                       size=np.zeros(n, np.int32), tid=tid)
    c = wave_blocks(load_config("k40"), block)
    assert c == 120  # 15 SMs x 8 blocks of 8 warps
    est = simulated_times(chunk, threads, block, ["k40"], complete=False)["k40"]
    whole = simulated_times(chunk, threads, block, ["k40"], complete=True)["k40"]
    assert whole == pytest.approx((50.0 + 10.0 * 1000) * 1e-9)
    assert est == pytest.approx(whole)  # t1 + (B/c - 1)(t2 - t1) is exact for a time linear in blocks


def test_points_can_name_one_ports_label():
    specs = all_measured()
    calls = []

    def fake(spec, label, **kw):
        calls.append((spec.name, label))
        return {"port": spec.name, "point": label}

    import portcast.measured as m

    orig = m.trace_point
    m.trace_point = fake
    try:
        m.trace_points([specs["aiwc/csr/csr"], specs["aiwc/crc/crc32_slice8"]], ["tiny", "aiwc/csr/csr@medium"])
    finally:
        m.trace_point = orig
    assert calls == [("aiwc/csr/csr", "tiny"), ("aiwc/csr/csr", "medium"), ("aiwc/crc/crc32_slice8", "tiny")]
