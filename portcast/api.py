"""Portcast's public Python API (profiling part; features and predictions are added as they land).

    import portcast.api as pc
    result = pc.trace_function(kernel, (x, y), sinks=[pc.TraceDirectorySink("traces")])
    result = pc.trace_function(kernel, (x, y), measure_uninstrumented=True)  # + result.info.uninstrumented_time_s
    report = pc.profile(kernel, (x, y), baseline_kind="njit", baseline_rule=pc.RepeatRule(spread=0.05, budget_s=5))
    infos = pc.profile_script("examples/saxpy.py", sinks=[...])
    report = pc.profile(kernel, (x, y), gpu="a100")   # the whole report: report.to_dict(), report.write_html(...)
    prediction, bounds = pc.predict_gpu_time(kernel, (x, y), gpu="a100")   # GPU time, speedup, what bounds it
    prediction.kernel_s, prediction.speedup, prediction.speedup_with_transfers, bounds.bound
"""

from __future__ import annotations

from portcast.pipeline import predict_function, profile  # noqa: F401
from predictor.gputime_region import GpuPrediction  # noqa: F401
from profiler.baseline import Baseline, measure_uninstrumented  # noqa: F401
from profiler.repeat_timing import RepeatRule  # noqa: F401
from profiler.session import TraceResult, profile_script, trace_function  # noqa: F401
from profiler.trace import MemorySink, RegionInfo, StaticTable, TraceChunk  # noqa: F401
from profiler.tracefile import TraceDirectorySink, TraceFile, read_trace  # noqa: F401

#: ``portcast.api.predict_gpu_time(fn, args, gpu=...)``: :func:`portcast.pipeline.predict_function`.
predict_gpu_time = predict_function

__all__ = [
    "Baseline",
    "GpuPrediction",
    "MemorySink",
    "RegionInfo",
    "RepeatRule",
    "StaticTable",
    "TraceChunk",
    "TraceDirectorySink",
    "TraceFile",
    "TraceResult",
    "measure_uninstrumented",
    "predict_gpu_time",
    "profile",
    "profile_script",
    "read_trace",
    "trace_function",
]
