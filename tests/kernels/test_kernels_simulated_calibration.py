"""``portcast calibrate --simulate``: the simulated timing backend (SIMT model + PCIe transfer model), its
table and sidecar, reading calibration tables back, and joining them with the feature table."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import profiler.session as session
from gpu_models.simt.trace_input import trace_simulate
from kernels.registry import all_kernels
from portcast import calibration as cal
from portcast.cli import app
from profiler.trace import TraceChunk


class _RawChunks:
    """A second sink on the same trace: keeps the raw records for an independent simulation."""

    def __init__(self):
        self.chunks = []

    def start_region(self, info, static):
        self.chunks = []

    def consume(self, chunk):
        self.chunks.append(TraceChunk(**{k: v.copy() for k, v in chunk.columns().items()}))

    def end_region(self, info, static):
        pass


@pytest.fixture(scope="module")
def simulated_run():
    """saxpy and reduce_sum at tiny size through calibrate() with the simulated backend, with the raw records of
    each traced region captured on the side."""
    captured = {}
    original = session.trace_function

    def spy(fn, args=(), kwargs=None, *, region=None, sinks=(), **kw):
        raw = _RawChunks()
        out = original(fn, args, kwargs, region=region, sinks=list(sinks) + [raw], **kw)
        captured[region] = TraceChunk.concat(raw.chunks)
        return out

    session.trace_function = spy
    try:
        points = cal.select(all_kernels(), ["saxpy", "reduce_sum"], ["tiny"])
        backend = cal.SimulatedBackend("h100")
        table, machine = cal.calibrate(points, backend, repeats=3, warmup=0, compile_cpu=lambda f: f)
    finally:
        session.trace_function = original
    return table, machine, backend, captured


def test_kernel_time_is_exactly_the_simt_models_time(simulated_run):
    table, _, backend, captured = simulated_run
    for name in ("saxpy", "reduce_sum"):
        row = table.set_index("kernel").loc[name]
        direct = trace_simulate(captured[name], "h100", block_size=256)  # trace -> streams -> model, separately
        expected = direct.time_ns * 1e-9
        assert expected > 0
        for stat in cal.STATS:
            assert row[f"gpu_kernel_{stat}_s"] == expected
        assert row["speedup_kernel"] == row["cpu_median_s"] / expected
    # saxpy tiny = 300 threads = 10 warps in 2 blocks of 256 threads
    p = backend.points[0]
    assert (p["kernel"], p["size"], p["threads"], p["warps"]) == ("saxpy", "tiny", 300, 10)


def test_total_time_adds_the_pcie_transfer_formula(simulated_run):
    table, _, backend, _ = simulated_run
    t = table.set_index("kernel")
    # saxpy tiny: x, y (300 float32 = 1200 B each) in, out (1200 B) back; the scalar a is a kernel argument
    saxpy = 3 * 10e-6 + 3600 / 50e9
    assert saxpy == pytest.approx(3.0072e-05, rel=1e-12)
    assert t.loc["saxpy", "gpu_total_median_s"] == pytest.approx(t.loc["saxpy", "gpu_kernel_median_s"] + saxpy,
                                                                  rel=1e-12)
    # reduce_sum tiny: 500 float64 = 4000 B in, one float64 sum (8 B) back
    red = 2 * 10e-6 + 4008 / 50e9
    assert t.loc["reduce_sum", "gpu_total_median_s"] == pytest.approx(
        t.loc["reduce_sum", "gpu_kernel_median_s"] + red, rel=1e-12)
    assert backend.points[0]["h2d_bytes"] == [1200, 1200] and backend.points[0]["d2h_bytes"] == [1200]
    assert backend.points[1]["h2d_bytes"] == [4000] and backend.points[1]["d2h_bytes"] == [8]
    assert t.loc["saxpy", "speedup_total"] == t.loc["saxpy", "cpu_median_s"] / t.loc["saxpy", "gpu_total_median_s"]


def test_transfer_helpers_worked_examples():
    a = np.zeros(1000, dtype=np.float64)
    b = np.zeros((10, 10), dtype=np.int32)
    h2d, d2h = cal.transfer_copies((np.float32(2.0), a, (b, 3)), (a, np.float64(1.0)))
    assert h2d == [8000, 400] and d2h == [8000, 8]
    assert cal.transfer_time([8000, 400], [8000, 8]) == pytest.approx(4 * 10e-6 + 16408 / 50e9, rel=1e-15)
    assert cal.transfer_time([1_000_000], [], bandwidth=1e9, latency=0.0) == pytest.approx(1e-3)
    assert cal.transfer_time([], []) == 0.0


def test_rows_and_sidecar_say_simulated(simulated_run, tmp_path):
    table, machine, _, _ = simulated_run
    assert set(table["gpu_name"]) == {"simulated: h100"}
    assert set(table["gpu_sm_count"]) == {132} and set(table["gpu_sm_clock_mhz"]) == {1755.0}
    assert table["check_ok"].all()  # the traced run computed what the plain one did
    assert cal.is_simulated(table)
    csv_path, json_path = cal.write_calibration(table, machine, tmp_path / "sim.csv", kernels=["reduce_sum", "saxpy"],
                                                sizes=["tiny"], repeats=3, warmup=0)
    meta = json.loads(json_path.read_text())
    assert meta["gpu_source"] == "simulated" and meta["machine"]["gpu_name"] == "simulated: h100"
    sim = meta["simulation"]
    assert sim["preset"] == "h100" and sim["pcie_bandwidth_bytes_per_s"] == 50e9
    assert sim["pcie_latency_s_per_copy"] == 10e-6 and sim["block_size"] == 256
    assert [(p["kernel"], p["size"]) for p in sim["points"]] == [("saxpy", "tiny"), ("reduce_sum", "tiny")]
    assert meta["timing"]["gpu_kernel"].startswith("simulated: Portcast SIMT timing model")
    back = cal.read_calibration(csv_path)
    assert back.attrs["simulated"] and back.attrs["sidecar"]["gpu_source"] == "simulated"
    assert back["gpu_kernel_median_s"].tolist() == table["gpu_kernel_median_s"].tolist()


def test_read_calibration_old_and_bad_files(tmp_path):
    # a version-1 table measured on a GPU (no sidecar) reads back as measured
    cols = {c: [None] for c in cal.COLUMNS}
    cols.update({"schema_version": [1], "kernel": ["saxpy"], "size": ["small"], "speedup_kernel": [3.0],
                 "speedup_total": [0.5], "gpu_name": ["NVIDIA H100 80GB HBM3"]})
    p = tmp_path / "old.csv"
    pd.DataFrame(cols).to_csv(p, index=False)
    t = cal.read_calibration(p)
    assert not t.attrs["simulated"] and t.attrs["sidecar"] is None and t["speedup_kernel"].tolist() == [3.0]
    cols["schema_version"] = [7]
    pd.DataFrame(cols).to_csv(p, index=False)
    with pytest.raises(ValueError, match=r"old.csv: calibration schema version 7; this Portcast reads 1"):
        cal.read_calibration(p)
    pd.DataFrame({"kernel": ["a"], "size": ["s"]}).to_csv(p, index=False)
    with pytest.raises(ValueError, match=r"not a Portcast calibration table \(missing column\(s\) schema_version"):
        cal.read_calibration(p)
    with pytest.raises(FileNotFoundError, match="no such calibration file"):
        cal.read_calibration(tmp_path / "none.csv")


def test_training_table_joins_on_kernel_and_size():
    feats = pd.DataFrame({"kernel": ["a", "a", "b", "c"], "size": ["small", "medium", "small", "small"],
                          "n": [1, 2, 1, 1], "category": ["dense"] * 4, "f1": [0.1, 0.2, 0.3, 0.4]})
    calib = pd.DataFrame({"kernel": ["a", "b", "a", "d"], "size": ["medium", "small", "small", "small"],
                          "speedup_kernel": [5.0, 0.5, 2.0, 9.0]})
    joined, unmatched = cal.training_table(feats, calib, "speedup_kernel")
    assert joined[["kernel", "size", "f1", "speedup_kernel"]].values.tolist() == [
        ["a", "small", 0.1, 2.0], ["a", "medium", 0.2, 5.0], ["b", "small", 0.3, 0.5]]
    assert unmatched == [("d", "small")]
    bad = calib.assign(speedup_kernel=[5.0, 0.0, 2.0, 9.0])
    with pytest.raises(ValueError, match=r"cal.csv: speedup_kernel of b small is 0.0 \(row 3\)"):
        cal.training_table(feats, bad, "speedup_kernel", source="cal.csv")
    with pytest.raises(ValueError, match="point a small appears twice"):
        cal.training_table(pd.concat([feats, feats.iloc[[0]]]), calib, "speedup_kernel")
    with pytest.raises(ValueError, match="no column"):
        cal.training_table(feats, calib, "speedup_total")
    with pytest.raises(ValueError, match="no \\(kernel, size\\) point matches"):
        cal.training_table(feats, calib.iloc[[3]], "speedup_kernel")


def test_limit_by_records():
    corpus = all_kernels()
    points = cal.select(corpus, ["saxpy", "nbody"], ["small", "medium"])
    counts = {("saxpy", "small"): 10, ("saxpy", "medium"): 100, ("nbody", "small"): 50}
    kept, skipped = cal.limit_by_records(points, counts, 50)
    assert [(s.name, z) for s, z in kept] == [("saxpy", "small"), ("nbody", "small"), ("nbody", "medium")]
    assert skipped == [("saxpy", "medium", 100.0)]


def test_cli_calibrate_simulate(tmp_path):
    runner = CliRunner()
    out = tmp_path / "sim.csv"
    res = runner.invoke(app, ["calibrate", "--simulate", "h100", "--kernels", "saxpy", "--sizes", "tiny",
                              "--repeats", "2", "--warmup", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "GPU times are SIMULATED (simulated: h100)" in res.output
    t = pd.read_csv(out)
    assert t["kernel"].tolist() == ["saxpy"] and t["gpu_name"].tolist() == ["simulated: h100"]
    assert t["repeats"].tolist() == [2]
    out = out.with_name("other.csv")  # a new file: an existing one is refused before the input is looked at
    res = runner.invoke(app, ["calibrate", "--simulate", "h999", "--kernels", "saxpy", "--out", str(out)])
    assert res.exit_code == 2 and "unknown GPU preset 'h999'" in res.output
    res = runner.invoke(app, ["calibrate", "--simulate", "h100", "--kernels", "saxpy", "--sizes", "small",
                              "--max-records", "10", "--out", str(out)])
    assert res.exit_code == 2 and "skipped saxpy small" in res.output and "leaves no point to run" in res.output
