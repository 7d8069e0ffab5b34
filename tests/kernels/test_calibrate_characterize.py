"""The calibration and characterisation harness (the portcast/calibration/ package and the
``portcast calibrate`` / ``portcast characterize`` commands), tested with injected fakes where a GPU or
the full tracer would be needed, plus the real no-GPU exit path and one real trace."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from kernels.registry import all_kernels
from portcast import calibration as cal
from portcast.calibration import characterization as chz
from portcast.cli import app
from profiler.trace import RegionInfo

MACHINE = {
    "cpu_model": "Test CPU 9000", "cpu_count": 8, "gpu_name": "Fake GPU X", "gpu_compute_capability": "9.0",
    "gpu_sm_count": 132, "gpu_driver": "550.54.15", "cuda_driver_api": "12.4", "gpu_sm_clock_mhz": 1980.0,
    "gpu_mem_clock_mhz": 2619.0, "gpu_max_sm_clock_mhz": 1980.0, "gpu_max_mem_clock_mhz": 2619.0,
    "numba_version": "0.68.1", "numba_cuda_version": "0.20.0", "numpy_version": "2.2.0",
    "python_version": "3.11.9", "numba_num_threads": 1, "hostname": "testhost", "date_utc": "2026-11-22T04:00:00Z",
}


class FakeBackend:
    """Runs the real CPU region and GPU port (CUDA simulator) but reports scripted timings."""

    def __init__(self, cpu_times, kernel_times, total_times, corrupt_gpu=False):
        self.cpu_times, self.kernel_times, self.total_times = cpu_times, kernel_times, total_times
        self.corrupt_gpu = corrupt_gpu
        self.calls = []

    def machine(self):
        return dict(MACHINE)

    def time_cpu(self, fn, inputs, warmup, repeats):
        self.calls.append(("cpu", warmup, repeats))
        return fn(*inputs), list(self.cpu_times)

    def time_gpu(self, port, inputs, warmup, repeats):
        self.calls.append(("gpu", warmup, repeats))
        result = port.run(*inputs)
        if self.corrupt_gpu:
            result = np.asarray(result) + 1
        return result, list(self.kernel_times), list(self.total_times)


def test_summarize_exact_values():
    s = cal.summarize([4.0, 1.0, 100.0, 3.0, 2.0])
    assert s == {"median": 3.0, "q1": 2.0, "q3": 4.0, "min": 1.0, "max": 100.0}
    # even count: linear interpolation, q1 at position 0.75, q3 at 2.25 of the sorted [1, 2, 3, 5]
    assert cal.summarize([5.0, 1.0, 2.0, 3.0]) == {"median": 2.5, "q1": 1.75, "q3": 3.5, "min": 1.0, "max": 5.0}
    with pytest.raises(ValueError):
        cal.summarize([])


def test_select_validates_names_and_sizes():
    corpus = all_kernels()
    pts = cal.select(corpus, ["crc32", "gather"], ["tiny", "small"])
    assert [(s.name, z) for s, z in pts] == [("crc32", "tiny"), ("crc32", "small"), ("gather", "tiny"),
                                            ("gather", "small")]
    assert [z for _, z in cal.select(corpus, ["crc32"], None)] == ["small", "medium", "large"]
    with pytest.raises(ValueError, match="unknown kernel.*nope"):
        cal.select(corpus, ["nope"], None)
    with pytest.raises(ValueError, match="no size.*huge"):
        cal.select(corpus, ["crc32"], ["huge"])


def test_calibrate_table_and_files(tmp_path):
    corpus = all_kernels()
    points = cal.select(corpus, ["collatz_lengths", "crc32"], ["tiny"])
    backend = FakeBackend(cpu_times=[0.5, 0.1, 0.2, 0.3, 0.4], kernel_times=[0.01, 0.02, 0.03, 0.04, 0.05],
                          total_times=[0.2, 0.2, 0.25, 0.3, 0.9])
    seen = []
    table, machine = cal.calibrate(points, backend, repeats=5, warmup=3, compile_cpu=lambda f: f,
                                   progress=lambda k, s: seen.append((k, s)))
    assert seen == [("collatz_lengths", "tiny"), ("crc32", "tiny")]
    assert backend.calls == [("cpu", 3, 5), ("gpu", 3, 5)] * 2
    assert list(table.columns) == list(cal.COLUMNS)
    row = table.iloc[1]
    assert (row["kernel"], row["category"], row["size"], row["n"]) == ("crc32", "serial", "tiny", 200)
    assert row["cpu_median_s"] == 0.3 and row["cpu_q1_s"] == 0.2 and row["cpu_q3_s"] == 0.4
    assert row["cpu_min_s"] == 0.1 and row["cpu_max_s"] == 0.5
    assert row["gpu_kernel_median_s"] == 0.03 and row["gpu_total_median_s"] == 0.25
    assert row["gpu_total_max_s"] == 0.9
    assert row["speedup_kernel"] == pytest.approx(10.0) and row["speedup_total"] == pytest.approx(1.2)
    assert bool(row["check_ok"]) and row["check_message"] == ""
    assert not row["expect_gpu_faster"] and table.iloc[0]["expect_gpu_faster"]  # crc32 no, collatz yes
    assert row["gpu_name"] == "Fake GPU X" and row["cpu_model"] == "Test CPU 9000"
    assert row["schema_version"] == cal.CALIBRATION_SCHEMA_VERSION

    csv_path, json_path = cal.write_calibration(table, machine, tmp_path / "h100.csv",
                                                kernels=["collatz_lengths", "crc32"], sizes=["tiny"],
                                                repeats=5, warmup=3)
    assert json_path == tmp_path / "h100.json"
    back = pd.read_csv(csv_path)
    assert back.shape == (2, len(cal.COLUMNS))
    assert back["kernel"].tolist() == ["collatz_lengths", "crc32"]
    assert back["cpu_median_s"].tolist() == [0.3, 0.3]
    assert back["gpu_driver"].tolist() == ["550.54.15"] * 2
    assert back["gpu_sm_clock_mhz"].tolist() == [1980.0, 1980.0]
    meta = json.loads(json_path.read_text())
    assert meta["schema_version"] == 1 and meta["kind"] == "portcast.calibration"
    assert meta["machine"] == MACHINE
    assert meta["csv"] == "h100.csv" and meta["n_rows"] == 2 and meta["n_check_failed"] == 0
    assert meta["repeats"] == 5 and meta["warmup"] == 3 and meta["sizes"] == ["tiny"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_calibrate_records_a_failed_check(tmp_path):
    points = cal.select(all_kernels(), ["collatz_lengths"], ["tiny"])
    backend = FakeBackend([1.0], [0.5], [2.0], corrupt_gpu=True)
    table, machine = cal.calibrate(points, backend, repeats=1, warmup=0, compile_cpu=lambda f: f)
    assert not bool(table.loc[0, "check_ok"])
    assert "collatz_lengths: result 0 differs, max abs difference 1" in table.loc[0, "check_message"]
    assert table.loc[0, "speedup_kernel"] == 2.0 and table.loc[0, "speedup_total"] == 0.5
    _, json_path = cal.write_calibration(table, machine, tmp_path / "p.csv", kernels=["collatz_lengths"],
                                         sizes=["tiny"], repeats=1, warmup=0)
    assert json.loads(json_path.read_text())["n_check_failed"] == 1


def test_calibrate_rejects_bad_settings(tmp_path):
    points = cal.select(all_kernels(), ["crc32"], ["tiny"])
    with pytest.raises(ValueError, match="repeats"):
        cal.calibrate(points, FakeBackend([1], [1], [1]), repeats=0)
    table, machine = cal.calibrate(points, FakeBackend([1], [1], [1]), repeats=1, compile_cpu=lambda f: f)
    with pytest.raises(ValueError, match=r"\.csv"):
        cal.write_calibration(table, machine, tmp_path / "p.txt", kernels=["crc32"], sizes=["tiny"],
                              repeats=1, warmup=0)


def test_host_machine_fields():
    info = cal.host_machine()
    assert set(info) == set(cal.MACHINE_FIELDS)
    import numba

    assert info["numba_version"] == numba.__version__ and info["numpy_version"] == np.__version__
    assert info["cpu_model"] and info["date_utc"].endswith("Z")


def test_no_gpu_reason_under_simulator(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert "CUDA simulator" in cal.gpu_unavailable_reason()
    with pytest.raises(cal.NoGpuError, match="simulator"):
        cal.CudaBackend()


def test_cli_calibrate_without_gpu_exits_nonzero(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    out = tmp_path / "p.csv"
    result = CliRunner().invoke(app, ["calibrate", "--kernels", "crc32", "--sizes", "tiny", "--out", str(out)])
    assert result.exit_code == 3
    assert "no GPU" in result.output and "simulator" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_cli_bad_input_is_one_error_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["calibrate", "--kernels", "nope", "--out", str(tmp_path / "p.csv")])
    assert result.exit_code == 2 and "unknown kernel(s) nope" in result.output
    result = runner.invoke(app, ["characterize", "--kernels", "crc32", "--sizes", "huge",
                                 "--out", str(tmp_path / "f.parquet")])
    assert result.exit_code == 2 and "no size(s) huge" in result.output
    result = runner.invoke(app, ["characterize", "--kernels", "crc32", "--out", str(tmp_path / "f.csv")])
    assert result.exit_code == 2 and ".parquet" in result.output
    result = runner.invoke(app, ["calibrate", "--out", str(tmp_path / "missing" / "p.csv")])
    assert result.exit_code == 2 and "does not exist" in result.output


class FakeSink:
    def __init__(self):
        self.results = []


def fake_tracer(fn, inputs, *, region, sinks):
    """Stands in for profiler.trace_function: 'features' computed directly from the inputs."""
    value = fn(*inputs)
    feats = pd.Series({"n_args": float(len(inputs)), "first_len": float(np.asarray(inputs[0]).size)})
    if region == "crc32":
        feats["crc"] = float(value)
    for sink in sinks:
        sink.results.append((RegionInfo(name=region, n_records=7), feats))


def test_characterize_table_assembly_with_injected_tracer(tmp_path):
    points = cal.select(all_kernels(), ["collatz_lengths", "crc32"], ["tiny", "small"])
    seen = []
    table = chz.characterize(points, tracer=fake_tracer, sink_factory=FakeSink,
                             progress=lambda k, s: seen.append((k, s)))
    assert len(seen) == 4
    assert list(table.columns) == ["kernel", "size", "n", "category", "n_args", "first_len", "crc"]
    assert table["kernel"].tolist() == ["collatz_lengths"] * 2 + ["crc32"] * 2
    assert table["n"].tolist() == [64, 50_000, 200, 100_000]
    assert table["first_len"].tolist() == [64.0, 50_000.0, 200.0, 100_000.0]
    assert table["category"].tolist() == ["divergent"] * 2 + ["serial"] * 2
    assert table["crc"].isna().tolist() == [True, True, False, False]
    import zlib

    buf = all_kernels()["crc32"].make_inputs(200, 0)[0]
    assert table.loc[2, "crc"] == float(zlib.crc32(buf.tobytes()))

    path = chz.write_feature_table(table, tmp_path / "features.parquet", seed=0)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, table)
    meta = chz.read_feature_table_metadata(path)
    assert meta["schema_version"] == chz.FEATURE_TABLE_SCHEMA_VERSION and meta["n_rows"] == 4
    with pytest.raises(ValueError, match="parquet"):
        chz.write_feature_table(table, tmp_path / "features.csv")


def test_characterize_reports_a_sink_without_results():
    points = cal.select(all_kernels(), ["crc32"], ["tiny"])
    with pytest.raises(RuntimeError, match="crc32.*no result"):
        chz.characterize(points, tracer=lambda fn, inputs, region, sinks: None, sink_factory=FakeSink)


def test_characterize_with_the_real_profiler_and_feature_engine(tmp_path):
    """One real point end to end: `portcast characterize` traces scatter at the tiny size."""
    out = tmp_path / "f.parquet"
    result = CliRunner().invoke(app, ["characterize", "--kernels", "scatter", "--sizes", "tiny", "--out", str(out)])
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(out)
    assert table.shape[0] == 1
    assert table.loc[0, "kernel"] == "scatter" and table.loc[0, "n"] == 256
    assert table.shape[1] > 4 + 20  # the feature engine's features follow the key columns
    extra = chz.read_feature_table_metadata(out)["extra"]  # how the table was made, for regenerating it
    assert extra["sizes"] == ["tiny"]
    assert extra["command"] == f"portcast characterize --sizes tiny --kernels scatter --out {out}"
    assert extra["date"] == __import__("datetime").date.today().isoformat()
