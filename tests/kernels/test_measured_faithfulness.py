"""kernels.measured.harness and features.work: the work counted on a port's trace, the union of touched byte
ranges, the faithfulness ratios against AIWC's and Amaris's counts, the points table's file, and the
``portcast measured`` commands."""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from core.trace_schema import Op
from features.work import BoundedSink, ThreadRecordsSink, WorkSink, union_length
from gpu_models.simt.slice_sample import sample_threads, simulated_times, slice_config, wave_blocks
from kernels.measured.harness.correlation import (
    FLOOR_GRID,
    NOT_KERNEL_TIME,
    calibration_text,
    correlation,
    fit_calibration,
    fit_floors,
    pair_times,
    split_applications,
    summarize,
)
from kernels.measured.harness.faithfulness import faithfulness
from kernels.measured.harness.points import points_table_extra, read_points_table, trace_point, write_points_table
from kernels.measured.harness.sources import AIWC_DATA, AIWC_GPUS, AMARIS_GPUS, amaris_first_launches, measured_times
from kernels.measured.registry import all_measured
from portcast.cli import app
from profiler.session import trace_function


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


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 300), st.integers(1, 16)), min_size=1, max_size=20),
                min_size=1, max_size=12), st.integers(1, 8))
def test_work_sink_bytes_equal_the_set_of_bytes_over_chunks(chunks, batch):
    from profiler.trace import TraceChunk

    sink = WorkSink()
    sink.merge_batch = batch  # merge after every few chunks
    sink.start_region(None, None)
    want = set()
    for accesses in chunks:
        rows = [(1, Op.LOAD if k % 2 else Op.STORE, 0, 0, 0, 0, 0, 4096 + a, n, 0) for k, (a, n) in enumerate(accesses)]
        want |= {4096 + a + i for a, n in accesses for i in range(n)}
        sink.consume(TraceChunk.from_records(rows))
    sink.end_region(None, None)
    assert sink.results[0]["unique_bytes"] == len(want)


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


def test_features_only_for_regions_within_the_record_bound():
    spec = all_measured()["aiwc/kmeans/invert_mapping"]
    full = trace_point(spec, "test")
    records = full["records"]
    assert full["f_warp_simdEfficiency"] == 1.0
    within = trace_point(spec, "test", feature_records=records)
    assert set(within) == set(full)  # (page counts follow the arrays' addresses, which differ between runs)
    assert (within["f_mem"], within["f_warp_simdEfficiency"]) == (full["f_mem"], 1.0)
    over = trace_point(spec, "test", feature_records=records - 1)
    assert not any(k.startswith("f_") for k in over)
    assert over["records"] == records and over["unique_bytes"] == full["unique_bytes"]


def test_bounded_sink_drops_its_inner_sink_past_the_limit():
    seen = []

    class Inner:
        def start_region(self, info, static):
            seen.append("start")

        def consume(self, chunk):
            seen.append(len(chunk.op))

        def end_region(self, info, static):
            seen.append("end")

    chunk = _stand_in_chunk(2)  # 4 records
    b = BoundedSink(Inner(), 5)
    b.start_region(None, None)
    b.consume(chunk)
    b.consume(chunk)
    b.end_region(None, None)
    assert seen == ["start", 4] and b.dropped and b.inner is None
    seen.clear()
    b = BoundedSink(Inner(), 8)
    b.start_region(None, None)
    b.consume(chunk)
    b.consume(chunk)
    b.end_region(None, None)
    assert seen == ["start", 4, 4, "end"] and not b.dropped


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


def test_cli_merge_joins_tables_in_registry_order(tmp_path):
    frame = _points_frame()  # kmeansPoint tiny, amaris lud_diagonal 256
    write_points_table(frame.iloc[[1]], tmp_path / "b.parquet", extra={"command": "trace b"})
    write_points_table(frame.iloc[[0]], tmp_path / "a.parquet", extra={"command": "trace a"})
    res = CliRunner().invoke(app, ["measured", "merge", str(tmp_path / "b.parquet"), str(tmp_path / "a.parquet"),
                                   "--out", str(tmp_path / "all.parquet")])
    assert res.exit_code == 0, res.output
    pd.testing.assert_frame_equal(read_points_table(tmp_path / "all.parquet"), frame)
    extra = points_table_extra(tmp_path / "all.parquet")
    assert extra["parts"] == ["trace b", "trace a"] and extra["command"].startswith("portcast measured merge")
    res = CliRunner().invoke(app, ["measured", "merge", str(tmp_path / "a.parquet"), str(tmp_path / "all.parquet"),
                                   "--out", str(tmp_path / "x.parquet")])
    assert res.exit_code == 2 and "aiwc/kmeans/kmeansPoint at tiny is in more than one table" in res.output


def test_cli_refuses_an_unknown_port(tmp_path):
    res = CliRunner().invoke(app, ["measured", "trace", "--ports", "nope", "--out", str(tmp_path / "t.parquet")])
    assert res.exit_code == 2 and "unknown port(s) nope" in res.output


def test_measured_times_of_aiwc_and_amaris():
    specs = {n: s for n, s in all_measured().items() if s.source in ("aiwc", "amaris")}
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


def test_ports_whose_time_is_not_the_kernels_are_left_out():
    pts = pd.DataFrame({"port": ["aiwc/kmeans/invert_mapping", "aiwc/kmeans/kmeansPoint"], "point": ["tiny"] * 2,
                        "sim_k40": [1e-5, 2e-5]})
    times = pd.DataFrame({"port": ["aiwc/kmeans/invert_mapping", "aiwc/kmeans/kmeansPoint"], "point": ["tiny"] * 2,
                          "gpu": ["k40c"] * 2, "preset": ["k40"] * 2, "measured_s": [9e-4, 3e-5]})
    assert pair_times(pts, times).port.tolist() == ["aiwc/kmeans/kmeansPoint"]
    assert pair_times(pts, times, kernel_only=False).port.tolist() == list(pts.port)
    assert "host-to-device copy" in NOT_KERNEL_TIME["aiwc/kmeans/invert_mapping"]


def test_cli_correlate_writes_pairs_and_plot(tmp_path, monkeypatch):
    import kernels.measured.harness.sources as m

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
    assert res.exit_code == 0 and "fitted per GPU: Tesla K40 0.0 us" in res.output
    res = CliRunner().invoke(
        app, ["measured", "correlate", "--floor", "--scale", "--table", str(tmp_path / "s.parquet")]
    )
    assert res.exit_code == 0 and "fitted per GPU: Tesla K40 x1.00 + 0.0 us" in res.output
    assert "held-out" in res.output
    # ports a..d are applications of their own here: a, c train, b, d are held out; the CSV has both halves
    assert sorted(pd.read_csv(tmp_path / "pairs2.csv").application) == ["a", "b", "c", "d"]
    write_points_table(_points_frame(), tmp_path / "nosim.parquet")
    res = CliRunner().invoke(app, ["measured", "correlate", "--table", str(tmp_path / "nosim.parquet")])
    assert res.exit_code == 2 and "no simulated times" in res.output


def test_cli_tables_writes_every_table_and_the_plot(tmp_path, monkeypatch):
    import kernels.measured.harness.sources as m

    pts = _points_frame().assign(sim_k40=[2e-5, 4e-5])
    write_points_table(pts, tmp_path / "s.parquet")
    times = pd.DataFrame({"port": list(pts.port), "point": list(pts.point), "gpu": ["k40c", "Tesla-K40"],
                          "preset": ["k40"] * 2, "measured_s": [1e-5, 4e-5]})
    monkeypatch.setattr(m, "measured_times", lambda specs: times)
    out = tmp_path / "tables"
    res = CliRunner().invoke(app, ["measured", "tables", "--table", str(tmp_path / "s.parquet"), "--out-dir", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["correlation.md", "correlation.png", "faithfulness.csv",
                                                     "faithfulness.md", "pairs.csv"]
    fmd = (out / "faithfulness.md").read_text().splitlines()
    assert fmd[0] == "| application | points | threads = data | work ratio | footprint ratio / loads, stores |"
    # lud_diagonal at 256: 6400 records at a quarter of the lanes against inst_executed (as in faithfulness())
    assert fmd[2].startswith("| aiwc/kmeans | 1 | all |") and fmd[3].startswith("| amaris/lud | 1 | all |")
    cmd = (out / "correlation.md").read_text()
    # kmeansPoint: 2x the measured time (100% off); lud_diagonal exact; kmeans trains, lud is held out
    assert "| K20c (AIWC) |" not in cmd and "| K40c (AIWC) | 1 | 100% |" in cmd and "| Tesla K40 | 1 | 0% |" in cmd
    assert "**Training half (aiwc/kmeans), floor fitted there**" in cmd
    assert "**Held-out half (amaris/lud), never fitted on**" in cmd
    assert "Left out: aiwc/kmeans/invert_mapping" in cmd
    assert len(pd.read_csv(out / "pairs.csv")) == 2


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


def test_fit_calibration_recovers_a_scale_and_a_floor():
    sim = np.array([1e-6, 3e-6, 1e-5, 4e-5, 2e-4])
    meas = 2.0 * sim + 5e-6  # a model half as slow as the GPU, plus a 5 us launch
    pairs = pd.DataFrame({"gpu": ["k40c"] * 5, "simulated_s": sim, "measured_s": meas})
    (k, f), = fit_calibration(pairs).values()
    assert k == pytest.approx(2.0, rel=0.02) and f == pytest.approx(5e-6, rel=0.02)
    _, summary = summarize(pairs, {"k40c": (k, f)})
    assert summary.mape.iloc[0] < 0.02
    assert calibration_text({"k40c": (2.0, 5e-6), "Tesla-K40": 1e-6}) == "K40c (AIWC) x2.00 + 5.0 us, Tesla K40 1.0 us"


def test_fit_floors_recovers_a_constant_launch_time():
    sim = np.array([0.1e-6, 1e-6, 10e-6, 100e-6])
    pairs = pd.DataFrame({"gpu": ["g"] * 4, "simulated_s": sim, "measured_s": sim + 12e-6})
    f = fit_floors(pairs)["g"]
    assert f in FLOOR_GRID and abs(f - 12e-6) <= 0.02 * 12e-6
    fitted, summary = summarize(pairs, {"g": f})
    assert summary.set_index("gpu").loc["g", "mape"] < 0.02
    assert fit_floors(pairs.assign(measured_s=sim))["g"] == 0.0  # nothing to add when the model is right


def _stand_in_chunk(threads):
    from profiler.trace import TraceChunk

    tid = np.repeat(np.arange(threads, dtype=np.int64), 2)
    n = len(tid)
    return TraceChunk(pc=np.zeros(n, np.int32), op=np.full(n, int(Op.INT_ALU), np.int8),
                      taken=np.zeros(n, np.int8), src1=np.zeros(n, np.int32), src2=np.zeros(n, np.int32),
                      src3=np.zeros(n, np.int32), dst=np.zeros(n, np.int32), addr=np.zeros(n, np.int64),
                      size=np.zeros(n, np.int32), tid=tid)


def test_sampled_time_follows_its_formula(monkeypatch):
    # a stand-in model whose time is 50 ns of start plus 10 ns per block an SM runs: the slice's two waves
    # predict the whole grid exactly
    import gpu_models.simt.model as model
    from gpu_models.simt.config import load_config

    class Result:
        def __init__(self, t):
            self.time_ns = t

    runs = []

    def stand_in(streams, cfg, crisp, name):
        runs.append((cfg.sm_count, streams.n_blocks))
        return Result(50.0 + 10.0 * streams.n_blocks / cfg.sm_count)

    monkeypatch.setattr(model, "simulate", stand_in)
    block, threads = 256, 256 * 1500
    chunk = _stand_in_chunk(threads)
    assert wave_blocks(load_config("k40"), block) == 120  # 15 SMs x 8 blocks of 8 warps
    assert wave_blocks(slice_config(load_config("k40"), 4), block) == 32
    est = simulated_times(chunk, threads, block, ["k40"], complete=False)["k40"]
    whole = simulated_times(chunk, threads, block, ["k40"], complete=True)["k40"]
    assert runs == [(4, 32), (4, 64), (15, 1500)]
    assert whole == pytest.approx((50.0 + 10.0 * 100) * 1e-9)
    # 1500 x 4 / 15 = 400 blocks on the slice: t1 + (400 / 32 - 1) (t2 - t1), exact for a linear time
    assert est == pytest.approx(whole)
    # on all 15 SMs: 120-block waves
    runs.clear()
    alone = simulated_times(chunk, threads, block, ["k40"], complete=False, slice_sms=None)["k40"]
    assert alone == pytest.approx(whole)
    assert runs == [(15, 120), (15, 240)]
    # a grid whose share is at most two of the slice's waves is simulated, not extrapolated: 90 blocks -> 24
    runs.clear()
    small = simulated_times(_stand_in_chunk(256 * 90), 256 * 90, block, ["k40"], complete=False)["k40"]
    assert runs == [(4, 24)] and small == pytest.approx((50.0 + 10.0 * 24 / 4) * 1e-9)
    with pytest.raises(ValueError, match="needs the records of 16384 threads, the sample holds 1000"):
        simulated_times(_stand_in_chunk(1000), threads, block, ["k40"], complete=False)


def test_slice_config_shares_the_l2_and_the_dram():
    from gpu_models.simt.config import load_config

    cfg = load_config("gtx1080ti")  # 28 SMs, 2816 KB L2 in 16 ways, 484 GB/s
    part = slice_config(cfg, 4)
    assert part.sm_count == 4 and part.core_mhz == cfg.core_mhz and part.l2_latency_ns == cfg.l2_latency_ns
    assert part.dram_bytes_per_ns() == pytest.approx(cfg.dram_bytes_per_ns() / 7)
    assert part.l2_bytes_per_ns == pytest.approx(cfg.l2_bytes_per_ns / 7)
    assert part.l2_bytes == round(2816 * 1024 / 7 / 512) * 512 == 412160  # whole 16-way sets of 32 B
    assert slice_config(cfg, 40) is cfg
    # two waves of the largest slice of the AIWC GPUs, 256-thread blocks: 4 SMs x 8 blocks
    assert sample_threads(["k20", "gtx1080ti"], 256) == 2 * 32 * 256
    assert sample_threads(["k20", "gtx1080ti"], 256, slice_sms=None) == 2 * 28 * 8 * 256


def test_points_can_name_one_ports_label():
    specs = all_measured()
    calls = []

    def fake(spec, label, **kw):
        calls.append((spec.name, label))
        return {"port": spec.name, "point": label}

    import kernels.measured.harness.points as m

    orig = m.trace_point
    m.trace_point = fake
    try:
        m.trace_points([specs["aiwc/csr/csr"], specs["aiwc/crc/crc32_slice8"]], ["tiny", "aiwc/csr/csr@medium"])
    finally:
        m.trace_point = orig
    assert calls == [("aiwc/csr/csr", "tiny"), ("aiwc/csr/csr", "medium"), ("aiwc/crc/crc32_slice8", "tiny")]


def test_thread_records_sink_keeps_the_first_threads_within_a_record_bound():
    from profiler.trace import RegionInfo

    chunk = _stand_in_chunk(10)  # threads 0-9, 2 records each
    sink = ThreadRecordsSink(limit=4)
    sink.start_region(None, None)
    sink.consume(chunk)
    sink.end_region(RegionInfo(name="r"), None)
    assert sink.chunk.tid.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert (sink.threads, sink.kept, sink.total) == (10, 8, 20)
    bounded = ThreadRecordsSink(limit=4, max_records=7)
    bounded.start_region(None, None)
    bounded.consume(chunk)
    bounded.end_region(RegionInfo(name="r"), None)
    assert bounded.overflow and bounded.chunk is None and bounded.threads == 10


def test_thread_records_sink_falls_back_to_fewer_threads():
    from profiler.trace import RegionInfo

    sink = ThreadRecordsSink(limit=4, max_records=8, fallback=2)
    sink.start_region(None, None)
    sink.consume(_stand_in_chunk(3))  # threads 0-2: 6 records, within the bound
    sink.consume(_stand_in_chunk(10))  # threads 0-3 again would make 14: falls back to threads 0-1, 8
    sink.end_region(RegionInfo(name="r"), None)
    assert sink.fell_back and not sink.overflow and sink.limit == 2
    assert sink.chunk.tid.tolist() == [0, 0, 1, 1, 0, 0, 1, 1] and sink.kept == 8


def test_the_shipped_table_covers_every_point_of_the_data():
    t = read_points_table()
    specs = all_measured()
    want = [(n, label) for n, s in specs.items() for label in [*s.points] + (["features"] if s.feature_point else [])]
    assert sorted(zip(t.port, t.point)) == sorted(want)
    assert (t.threads == t.global_work).all()
    sims = t[[c for c in t.columns if c.startswith("sim_")]].select_dtypes("number")
    left = t[sims.isna().all(axis=1)]
    # regions whose sample (a slice of two waves of blocks) would hold more than 30 M records: few threads with
    # long loops (the HeCBench ones), the scans' 875 barrier phases, dwt and the FFT at their largest
    assert sorted(zip(left.port, left.point)) == sorted(
        [("aiwc/dwt/cl_fdwt53Kernel", "large"), ("aiwc/fft/fft", "large"),
         ("hecbench/eigenvalue/calNumEigenValueInterval", "2048 10000"), ("hecbench/ga/ga", "1000000 1000 11 1"),
         ("hecbench/haccmk/haccmk_kernel", "1000"), ("hecbench/layout/AoSKernel", "1000"),
         ("hecbench/layout/SoAKernel", "1000"), ("hecbench/matrix-rotate/rotate_matrix_parallel", "5000 100"),
         ("hecbench/romberg/romberg", "128 64 1000")]
        + [(f"kernelbench/{p}/forward", "before_2025-07") for p in
           ("89_cumsum", "90_cumprod", "91_cumsum_reverse", "92_cumsum_exclusive", "93_masked_cumsum")])
    assert left.not_simulated.str.contains("more than 30000000 records").all()


def _launch_reference(records):
    """Launches, distinct sectors and per-launch distinct sectors summed, record by record (the rule of
    ``warp_launches``: a launch starts at tid >= 0 after a record outside the thread space, or below the tid
    of the record before it)."""
    prev, launches, per_launch, region = -1, [], [], set()
    for tid, op, addr, size in records:
        if tid >= 0 and (prev < 0 or tid < prev):
            per_launch.append(set())
            launches.append(tid)
        prev = tid
        if tid >= 0 and op in (Op.LOAD, Op.STORE) and size > 0:
            secs = set(range(addr // 32, (addr + size - 1) // 32 + 1))
            per_launch[-1] |= secs
            region |= secs
    return len(launches), 32 * len(region), 32 * sum(len(s) for s in per_launch)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(-1, 6), st.sampled_from([Op.LOAD, Op.STORE, Op.INT_ALU]),
                                   st.integers(0, 200), st.integers(0, 40)), max_size=25), min_size=1, max_size=8),
       st.integers(1, 4))
def test_work_sink_launches_and_sectors_equal_a_record_by_record_reference(chunks, batch):
    from profiler.trace import TraceChunk

    sink = WorkSink()
    sink.merge_batch = batch
    sink.start_region(None, None)
    flat = []
    for recs in chunks:
        rows = [(1, op, 0, 0, 0, 0, 0, 4096 + a if op != Op.INT_ALU else 0, n if op != Op.INT_ALU else 0, t)
                for t, op, a, n in recs]
        flat += [(t, op, r[7], r[8]) for (t, op, a, n), r in zip(recs, rows)]
        sink.consume(TraceChunk.from_records(rows) if rows else TraceChunk.empty(0))
    sink.end_region(None, None)
    got = sink.results[0]
    assert (got["launches"], got["sector_bytes"], got["launch_sector_bytes"]) == _launch_reference(flat)


def test_work_sink_counts_launches_and_sectors_of_a_two_step_region():
    from profiler.trace import TraceChunk

    # two launches of 3 threads, each thread loads 8 bytes at 4096 + 8 t; an access outside the threads between
    rows = []
    for _ in range(2):
        rows += [(1, Op.LOAD, 0, 0, 0, 0, 0, 4096 + 8 * t, 8, t) for t in range(3)]
        rows.append((2, Op.STORE, 0, 0, 0, 0, 0, 9000, 8, -1))
    sink = WorkSink()
    sink.start_region(None, None)
    sink.consume(TraceChunk.from_records(rows))
    sink.end_region(None, None)
    got = sink.results[0]
    # 24 bytes at 4096..4119 lie in one sector (4096 // 32 = 128); each launch touches it once
    assert (got["launches"], got["sector_bytes"], got["launch_sector_bytes"]) == (2, 32, 64)
