"""The public Python API over the pipeline: portcast.features, portcast.predict, portcast.simulate (portcast.profile
has its own tests in test_profile_report.py). Each is checked against the lower-level pieces it stands for."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import portcast
from features import FeatureSink, compute_features
from gpu_models.simt.config import load_config
from gpu_models.simt.model import simulate as simt_simulate
from gpu_models.simt.trace_input import StreamsSink
from portcast.errors import UserError
from profiler.session import trace_function
from profiler.tracefile import TraceDirectorySink

ROOT = Path(__file__).resolve().parents[2]


def axpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def _inputs(n=2048):
    return 2.0, np.arange(n, dtype=np.float64), np.ones(n)


def test_features_of_a_call_equal_the_feature_sink_of_the_same_trace():
    a, x, y = _inputs()
    got = portcast.features(axpy, (a, x, y))  # the same arrays below: coalescing depends on where they lie
    (label,) = got.index  # "axpy #k": k counts the process's earlier calls of the region
    assert label.startswith("axpy #")
    sink = FeatureSink()
    trace_function(axpy, (a, x, y), sinks=[sink])
    (_, expected), = sink.results
    pd.testing.assert_series_equal(got.iloc[0], expected.rename(label), check_dtype=False)
    assert got.loc[label, "warp_threads"] == 2048
    assert got.loc[label, "warp_arithIntensity"] == pytest.approx(2 / 24)


def test_features_of_a_trace_file_are_its_computed_features(tmp_path):
    a, x, y = _inputs(512)
    trace_function(axpy, (a, x, y), sinks=[TraceDirectorySink(tmp_path)])
    (trace,) = sorted(tmp_path.glob("*.parquet"))
    got = portcast.features(trace)
    assert len(got) == 1
    expected = compute_features(trace)
    assert got.iloc[0]["warp_threads"] == expected["warp_threads"] == 512
    np.testing.assert_allclose(got.iloc[0][expected.index].to_numpy(float), expected.to_numpy(float))


def test_features_of_a_script_has_one_row_per_region_invocation():
    got = portcast.features(ROOT / "examples" / "saxpy.py", script_args=("640",))
    assert list(got.index) == ["saxpy #0"]
    assert got.loc["saxpy #0", "warp_threads"] == 640


def test_predict_gives_each_region_its_gpu_time_and_speedup():
    a, x, y = _inputs(4096)
    (rp,) = portcast.predict(axpy, (a, x, y), gpu="p100")
    assert rp.label.startswith("axpy #") and rp.reason is None
    p = rp.prediction
    assert p.kernel_s > 0 and p.speedup == pytest.approx(p.cpu_s / p.kernel_s)
    # the terms of the model add up to its prediction of the log time
    assert rp.contributions is not None and len(rp.contributions) > 0
    # the same call through portcast.profile predicts the same time (the same arrays: the SIMT estimate the
    # model reads depends on where they lie)
    report = portcast.profile(axpy, (a, x, y), gpu="p100")
    assert report.regions[0].prediction["kernel_s"] == pytest.approx(p.kernel_s)


def test_simulate_equals_the_simt_model_on_the_streams_of_the_same_call():
    a, x, y = _inputs(4096)
    # the same arrays in both runs: the simulated caches see their addresses
    got = portcast.simulate(axpy, (a, x, y), gpu="h100")
    assert list(got) == ["axpy"]
    sink = StreamsSink(256)
    trace_function(axpy, (a, x, y), sinks=[sink])
    ((_, streams),) = sink.regions
    expected = simt_simulate(streams, load_config("h100"), name="axpy")
    assert got["axpy"].cycles == expected.cycles and got["axpy"].stats == expected.stats
    # configuration overrides reach the model
    half = portcast.simulate(axpy, (a, x, y), gpu="h100", sm_count=4, core_mhz=900.0)
    assert half["axpy"].sm_count == 4 and half["axpy"].core_mhz == 900.0


def test_api_errors_are_user_errors():
    with pytest.raises(UserError, match="no such script"):
        portcast.features(ROOT / "examples" / "no_such_script.py")
    with pytest.raises(UserError, match="no-such-gpu"):
        portcast.simulate(axpy, _inputs(64), gpu="no-such-gpu")
