"""predictor.gputime_region and `portcast profile`'s GPU time: it grows with the input, --at-size agrees with
a direct trace at the size, --gpu chooses the target and says when it is extrapolated."""

import re
from pathlib import Path

import numpy as np
import pytest
from numba import prange
from typer.testing import CliRunner

from features.work import BytesSink
from gpu_models.simt.slice_sample import SimtSink
from portcast.cli import app
from predictor.gputime import DEFAULT_GPUTIME_MODEL, WORK_KEYS, load_gputime_model
from predictor.gputime_region import predict_region

ROOT = Path(__file__).resolve().parents[2]
SAXPY = str(ROOT / "examples" / "saxpy.py")
runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _direct(fn, args, gpu="p100", model=None, simulate=False, full=False):
    """Trace once and predict (the profile path without the CLI); ``full``: also the work counts and features."""
    from features import FeatureSink
    from features.work import WorkSink
    from profiler.session import trace_function

    work, feats, rw = WorkSink(), FeatureSink(), BytesSink()
    sinks = [work, feats, rw]
    simt = SimtSink(gpu) if simulate else None
    if simt is not None:
        sinks.append(simt)
    trace_function(fn, args, sinks=sinks)
    model = model or load_gputime_model(DEFAULT_GPUTIME_MODEL)
    sim = simt.results[-1] if simt is not None else float("nan")
    p = predict_region(model, gpu, work.results[-1], feats.results[-1][1], rw.results[-1], sim, cpu_s=1e-3)
    return (p, work.results[-1], feats.results[-1][1], rw.results[-1]) if full else p


def test_the_shipped_model_names_the_measured_data_and_needs_no_simt_estimate():
    m = load_gputime_model(DEFAULT_GPUTIME_MODEL)
    meta = m.metadata
    assert m.family == "bounded" and m.factor == "linear" and not m.needs_simt
    assert meta["provisional"] is False and meta["rows"] == 2572
    assert all(s in meta["trained_on"] for s in ("AIWC", "Amaris", "HeCBench", "BabelStream", "KernelBench"))
    assert meta["generations"] == sorted(["Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace",
                                          "Hopper", "Blackwell"])
    assert {"p100", "rtx3080", "a100", "h100_sxm", "b200"} <= set(meta["presets"]) and "h100" not in meta["presets"]
    assert not DEFAULT_GPUTIME_MODEL.with_name("gputime-nosimt.json").exists()  # one model for every path
    # a profile with the shipped model keeps no SIMT sample
    from portcast.pipeline.stage_prepare import prediction_sinks

    assert prediction_sinks("p100", simulate=m.needs_simt).simt is None


def test_gpu_time_grows_with_the_input_and_the_speedup_with_it():
    from kernels.registry import get_kernel

    spec = get_kernel("saxpy")
    small = _direct(spec.cpu, spec.make_inputs(2_000, 0))
    large, work, series, rw = _direct(spec.cpu, spec.make_inputs(200_000, 0), full=True)
    assert large.kernel_s > small.kernel_s
    # the same region's work scaled 100x (2e7 elements): far above the launch floor, the estimate in proportion
    # to its bytes, or the DRAM bound (2e7 x 12 bytes at 732 GB/s: 328 us) where that is more
    scaled = {k: (v * 100 if k not in ("launches",) else v) for k, v in work.items()}
    huge = predict_region(load_gputime_model(DEFAULT_GPUTIME_MODEL), "p100", scaled, series, rw, float("nan"),
                          cpu_s=None)
    t0 = large.explanation["launch_s"]
    assert huge.kernel_s == pytest.approx(max(huge.explanation["bound_s"], 100 * (large.kernel_s - t0) + t0),
                                          rel=0.05)
    assert huge.explanation["bound_s"] == pytest.approx(2e7 * 12 / 732e9, rel=0.01)
    assert work["threads"] == 200_000 and huge.inputs["launches"] == 1
    # the corpus saxpy (float32) reads x and y and writes y: 8 and 4 bytes per element cross the link
    assert (large.read_bytes, large.written_bytes) == (8 * 200_000, 4 * 200_000)
    assert large.speedup == pytest.approx(1e-3 / large.kernel_s)
    assert large.speedup_with_transfers < large.speedup
    # never below the bounds of the same work
    for p in (small, large, huge):
        assert p.kernel_s >= p.bounds.total_lower


def nearest_sum(points, cents, out):
    for i in prange(points.shape[0]):
        best = np.inf
        s = 0.0
        for c in range(cents.shape[0]):
            d = abs(points[i] - cents[c])
            if d < best:
                best = d
                s += d * d
        out[i] = s
    return out


def test_the_simt_input_follows_the_regions_loops():
    """The SIMT time of a profile is that of warps laid out by the trace's loop table (an if inside the loop
    re-converges at each iteration's end), not by static ids alone."""
    from gpu_models.simt.slice_sample import BLOCK_SIZE, simulated_times
    from gpu_models.simt.threads import build_streams
    from profiler.session import trace_function
    from profiler.trace import MemorySink

    rng = np.random.default_rng(1)
    args = (rng.random(512), rng.random(8), np.zeros(512))
    simt, mem = SimtSink("p100"), MemorySink()
    trace_function(nearest_sum, args, sinks=[simt, mem])
    _, static, chunk = mem.regions[0]
    laid = simulated_times(chunk, 512, BLOCK_SIZE, ["p100"], static=static)["p100"]
    by_id = simulated_times(chunk, 512, BLOCK_SIZE, ["p100"])["p100"]
    assert simt.results == [laid] and laid != by_id
    assert build_streams(chunk, BLOCK_SIZE, static=static).n < build_streams(chunk, BLOCK_SIZE).n


@pytest.mark.parametrize("name, sizes, target, count_rtol", [
    ("saxpy", (500, 1000, 2000, 4000), 64_000, 1e-9),   # every count extrapolates exactly (linear)
    ("stencil2d", (16, 24, 32, 48), 192, 1e-9),         # exact with four sizes (features.at_size's docs)
    ("matmul_naive", (8, 12, 16, 24), 96, 1e-9),
    ("bfs", (500, 1000, 2000, 4000), 16_000, 0.02),     # data-dependent: within 2% (tests/portcast/test_at_size.py)
])
def test_at_size_prediction_matches_a_direct_trace_at_the_size(name, sizes, target, count_rtol):
    from features.at_size import extrapolate
    from kernels.registry import get_kernel
    from portcast.pipeline.stage_predict import predict_at_size
    from portcast.pipeline.stage_prepare import resolve_model

    spec = get_kernel(name)
    at = extrapolate(spec.cpu, lambda n: spec.make_inputs(n, 0), sizes, target, extra_sinks=lambda: [BytesSink()])
    res = predict_at_size(spec.cpu, lambda n: spec.make_inputs(n, 0), target, list(sizes),
                          chosen=resolve_model(None), gpu="p100", baseline=False)
    via = res.region.prediction
    work = {k: float(v) for k, v in at.counts.items() if k not in ("read_bytes", "written_bytes")}
    direct, dwork, _, _ = _direct(spec.cpu, spec.make_inputs(target, 0), full=True)
    for k in (*WORK_KEYS, "launches"):
        assert work[k] == pytest.approx(dwork[k], rel=count_rtol), k
    # the distinct sectors depend on where each size's arrays start (up to a sector per array): --at-size takes
    # the distinct bytes at the size times the largest traced size's sectors per byte
    b, db = via.bounds.details, direct.bounds.details
    sector_rtol = max(5 * count_rtol, 0.01)  # (bfs: which nodes a level touches is data-dependent)
    assert b["dram_bytes"] == pytest.approx(db["dram_bytes"], rel=sector_rtol)
    assert b["launch_dram_bytes"] == pytest.approx(db["launch_dram_bytes"], rel=sector_rtol)
    assert (via.read_bytes, via.written_bytes) == pytest.approx((direct.read_bytes, direct.written_bytes),
                                                                rel=count_rtol)
    # the instruction mix follows from the extrapolated counts; the rates of the estimates (sectors per warp
    # access, the ILP and first-touch share of the latency estimate) come from the largest traced size: matmul's
    # first touches fall as its rows are reused more at 96 than at 24 (12% on the time)
    assert via.kernel_s == pytest.approx(direct.kernel_s, rel=0.15)


def test_profile_at_size_cli_prints_the_extrapolated_work_and_prediction():
    res = runner.invoke(app, ["profile", "--function", f"{SAXPY}:saxpy", "--at-size", "64000",
                              "--sizes", "500,1000,2000,4000", "--no-progress"])
    assert res.exit_code == 0, res.output
    out = _flat(res.output)
    assert "tracing saxpy at sizes 500, 1000, 2000, 4000 to extrapolate to 64,000" in out
    assert "work of saxpy at n = 64,000 (extrapolated)" in out
    assert re.search(r"│ threads\s+│ 1 n\s+│\s+4,000 │\s+6\.4e\+04 │", res.output), res.output
    assert re.search(r"GPU time of saxpy at n = 64,000 on NVIDIA A100 SXM4 40 GB \(a100, Ampere\): "
                     r"predicted kernel time [0-9.]+ us", out), out
    # saxpy is a Python loop: timed as written, at the size itself
    assert re.search(r"CPU time of the region here \(Python as written at n = 64,000 \(not traced\), median of "
                     r"[0-9,]+ runs?, IQR [0-9.]+%[^)]*\): [0-9.]+ (us|ms) -> speedup [0-9.,]+x \([0-9.,]+-[0-9.,]+\)",
                     out), out
    assert "gputime.json" in out and "nosimt" not in out


@pytest.mark.parametrize("args, message", [
    (["--at-size", "1000", SAXPY], "--at-size needs --function"),
    (["--sizes", "10,20", "--function", f"{SAXPY}:saxpy"], "--sizes needs --at-size N"),
    (["--at-size", "1000", "--sizes", "10,x", "--function", f"{SAXPY}:saxpy"], "--sizes must be integers"),
    (["--at-size", "1000", "--sizes", "10,2000", "--function", f"{SAXPY}:saxpy"], "smaller than the target size"),
    (["--gpu", "b300", SAXPY], "--gpu 'b300': not a described GPU; choose one of"),
    (["--model", "nope.json", SAXPY], "--model nope.json: no such file"),
])
def test_profile_gpu_time_errors_are_one_line(args, message):
    res = runner.invoke(app, ["profile", "--no-progress", *args])
    assert res.exit_code == 2, res.output
    assert message in _flat(res.output)
    assert "Traceback" not in res.output


def test_a_gpu_of_a_generation_without_measured_points_is_extrapolated():
    # Fermi is the one generation without measured points
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--gpu", "gtx480", "--", "3000"])
    assert res.exit_code == 0, res.output
    out = _flat(res.output)
    assert "(gtx480, Fermi)" in out
    assert "no GPU of the Fermi generation has measured points: the prediction for it is extrapolated" in out
    # Hopper has (KernelBench on an H100 SXM): the h100 design is not called extrapolated
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--gpu", "h100", "--", "3000"])
    assert res.exit_code == 0, res.output
    assert "(h100, Hopper)" in _flat(res.output) and "extrapolated" not in _flat(res.output)


def test_verbose_prints_the_model_inputs():
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--verbose", "--", "3000"])
    assert res.exit_code == 0, res.output
    assert "model inputs" in res.output, res.output
    # saxpy's kernel: 2 loads and a store of 7 records (0.429), 2 floating-point records (0.286) in double, on the
    # default A100 whose FP64 rate is half its FP32 rate: FP64 share 1 x log2(2) = 1 (training range 0 to 6: the
    # 1/64-rate consumer Ampere and Ada boards)
    assert re.search(r"│ launches\s+│\s+1 │", res.output) and re.search(r"│ mem\s+│\s+0\.429 │", res.output)
    assert re.search(r"│ fp64_slowdown\s+│\s+1 │\s+0 │\s+6 │", res.output), res.output


def test_a_serial_region_gets_no_gpu_time(tmp_path):
    script = tmp_path / "serial.py"
    script.write_text(
        "import numpy as np\nimport portcast\n\n"
        "@portcast.region('prefix')\n"
        "def prefix(x):\n"
        "    for i in range(1, x.shape[0]):\n"
        "        x[i] = x[i] + x[i - 1]\n"
        "    return x\n\n"
        "prefix(np.ones(2000))\n")
    res = runner.invoke(app, ["profile", str(script), "--no-progress"])
    assert res.exit_code == 0, res.output
    out = _flat(res.output)
    assert "prefix #0: no GPU time predicted:" in out
    assert "GPU time of prefix" not in out


def test_a_region_of_any_size_is_predicted_by_the_one_shipped_model(monkeypatch):
    import gpu_models.simt.slice_sample as gp

    monkeypatch.setattr(gp, "PROFILE_SAMPLE_RECORDS", 10)  # (the shipped model keeps no SIMT sample anyway)
    res = runner.invoke(app, ["profile", SAXPY, "--no-progress", "--", "3000"])
    assert res.exit_code == 0, res.output
    out = _flat(res.output)
    assert "predicted kernel time" in out and "SIMT" not in out
    assert f"model: {DEFAULT_GPUTIME_MODEL}" in out


def test_python_api_predicts_gpu_time_speedup_and_bounds():
    import portcast.api as pc
    from kernels.registry import get_kernel

    spec = get_kernel("saxpy")
    p, b = pc.predict_gpu_time(spec.cpu, spec.make_inputs(50_000, 0), gpu="k40")
    assert isinstance(p, pc.GpuPrediction) and p.gpu == "k40" and p.generation == "Kepler" and not p.extrapolated
    assert p.cpu_s and p.speedup == pytest.approx(p.cpu_s / p.kernel_s)
    assert p.read_bytes == 8 * 50_000 and p.written_bytes == 4 * 50_000
    assert b.bound in ("dram", "launch") and b.total_lower <= p.kernel_s * 10
    d = p.to_dict()
    assert d["speedup"] == p.speedup and d["inputs"]["launches"] == 1 and d["inputs"]["fp64"] == 0.0  # float32
    assert b.details["threads"] == 50_000 and p.kernel_s >= b.total_lower

    def serial(x):
        for i in range(1, x.shape[0]):
            x[i] = x[i] + x[i - 1]
        return x

    with pytest.raises(ValueError, match="no GPU time predicted: it has no parallel thread space"):
        pc.predict_gpu_time(serial, (np.ones(100),))
