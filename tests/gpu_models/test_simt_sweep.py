"""Configuration sweeps in the scaling-surface dataset format, the trace pipeline, and CRISP's accuracy."""

import numpy as np
import pytest

from gpu_models.scaling.dataset import KEY_COLUMNS, read_dataset
from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config
from gpu_models.simt.dvfs_truth import crisp_errors, summary
from gpu_models.simt.model import simulate
from gpu_models.simt.sweep import SweepGrid, sweep, sweep_stats
from gpu_models.simt.threads import build_streams
from gpu_models.simt.trace_input import trace_counters, trace_sweep

GTX = load_config("gtx480")


def test_default_grid_is_448():
    g = SweepGrid.default(GTX)
    assert g.size == 448 and len(g.configs()) == 448
    assert g.configs()[0] == (2, 100.0, 462.0) and g.configs()[-1] == (15, 800.0, 1386.0)


def test_grid_parse():
    g = SweepGrid.parse("4,8;default;924", GTX)
    assert g.sm_counts == (4, 8) and g.core_mhz == tuple(float(v) for v in GTX.sweep["core_mhz"])
    assert g.mem_mhz == (924.0,)
    with pytest.raises(ValueError, match="SM_COUNTS;CORE_MHZ;MEM_MHZ"):
        SweepGrid.parse("4,8", GTX)
    with pytest.raises(ValueError, match="core clocks must be a comma-separated list"):
        SweepGrid.parse("4;fast;924", GTX)
    with pytest.raises(ValueError, match="repeated"):
        SweepGrid.parse("4,4;;", GTX)


def test_sweep_rows_equal_single_runs_and_follow_the_format(tmp_path):
    s = build_streams(sy.stream_kernel(2048, flops=4), 256)
    grid = SweepGrid((2, 15), (350.0, 700.0), (462.0, 924.0))
    ds = sweep(s, GTX, grid, kernel="stream4", batch=3)
    f = ds.frame
    assert len(f) == 8 and list(f.columns[:6]) == ["kernel", "sm_count", "core_mhz", "mem_mhz", "time", "power"]
    assert "cache_hit" in ds.counter_columns and "occupancy" in ds.counter_columns
    for _, row in f.iterrows():
        one = simulate(s, GTX, sm_count=int(row.sm_count), core_mhz=row.core_mhz, mem_mhz=row.mem_mhz, crisp=False)
        assert row.time == pytest.approx(one.time_ns * 1e-9, rel=1e-12)
        assert row.power == pytest.approx(one.power_w, rel=1e-12)
    # threads give the same numbers as one thread
    np.testing.assert_array_equal(sweep_stats(s, GTX, grid, threads=1), sweep_stats(s, GTX, grid, threads=2))
    out = ds.write(tmp_path / "sweep.csv")
    back = read_dataset(out)
    assert back.grid().shape == (2, 2, 2)
    assert back.cube("time").shape == (1, 2, 2, 2)


def test_trace_to_counters_and_sweep(tmp_path):
    from profiler.trace import RegionInfo, StaticTable
    from profiler.tracefile import write_trace

    path = write_trace(tmp_path / "r.parquet", RegionInfo(name="stream"), StaticTable(), sy.stream_kernel(1024, 2))
    rec = trace_counters(path, "gtx480")
    assert rec.name == "stream" and rec.base_mhz == 700.0 and rec.lcp > 0
    ds = trace_sweep(path, "gtx480", "2,4;700;924")
    assert ds.kernels == ["stream"] and len(ds.frame) == 2
    assert set(KEY_COLUMNS) <= set(ds.frame.columns)


def test_crisp_beats_crit_and_lead_on_synthetic_regions():
    regions = {
        "stream": build_streams(sy.stream_kernel(4096, flops=1), 256),
        "gather": build_streams(sy.gather_kernel(2048, loads=4, flops=8), 256),
        "compute": build_streams(sy.compute_kernel(1024, 32), 256),
        # 16,384 threads storing 1 MiB of scattered sectors into the 768 KB L2: dirty evictions make the
        # stores wait for the DRAM (store stalls that do not scale with the core clock)
        "scatter": build_streams(sy.scatter_store_kernel(16384, stores=2, flops=16), 256),
    }
    err = crisp_errors(regions, GTX, targets_mhz=(100.0, 400.0, 600.0), models=("lead", "crit", "crisp"))
    assert len(err) == 4 * 3 * 3
    # the compute-bound region is predicted exactly by every model
    comp = err[err.kernel == "compute"]
    assert comp.error_pct.abs().max() < 1e-6
    s = summary(err)
    # CRISP: 21% here, CRIT 35%, LEAD 48% (the store-stalled and streaming regions defeat the linear models)
    assert s.loc["all", "crisp"] < 0.7 * s.loc["all", "crit"]
    assert s.loc["all", "crisp"] < 0.5 * s.loc["all", "lead"]
    worst = err.groupby(["kernel", "model"]).error_pct.apply(lambda e: e.abs().max())
    assert worst["stream", "crisp"] < 20.0 < worst["stream", "lead"]
    assert worst["scatter", "crisp"] < 0.6 * worst["scatter", "crit"]


def test_evaluate_main_prints_tables(capsys, tmp_path):
    from gpu_models.simt.dvfs_truth import main
    from profiler.trace import RegionInfo, StaticTable
    from profiler.tracefile import write_trace

    p = write_trace(tmp_path / "c.parquet", RegionInfo(name="comp"), StaticTable(), sy.compute_kernel(256, 8))
    main([str(p)])
    out = capsys.readouterr().out
    assert "| target_mhz | stall | miss | lead | crit | crisp | crisp-l |" in out
    assert "| comp | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |" in out


def test_is_trace_file(tmp_path):
    from gpu_models.simt.trace_input import is_trace_file
    from profiler.trace import RegionInfo, StaticTable
    from profiler.tracefile import write_trace

    t = write_trace(tmp_path / "t.parquet", RegionInfo(name="c"), StaticTable(), sy.compute_kernel(64, 2))
    ds = sweep(build_streams(sy.compute_kernel(64, 2), 256), GTX, SweepGrid((2,), (700.0,), (924.0,)))
    d = ds.write(tmp_path / "d.parquet")
    assert is_trace_file(t) and not is_trace_file(d) and not is_trace_file(tmp_path / "missing.parquet")
