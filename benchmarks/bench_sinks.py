"""Where a profile's time goes: each sink of `portcast profile` alone behind the compiled tracer, per record and
against the uninstrumented njit run of the same region (issue 34, part 2: profile the sinks before sampling).

    .venv/bin/python -m pytest benchmarks/bench_sinks.py --benchmark-enable -p no:cacheprovider -s

For three regions (a streaming prange, a 2-D stencil prange, a gather with a data-dependent branch) it traces the
region once per sink configuration: nothing but counting (the tracer), WorkSink (work counts, distinct bytes and
sectors), BytesSink (bytes read and written for the copies), SimtSink (the SIMT model's sample of an A100),
FeatureSink with every family, FeatureSink with each family alone, and the whole set `portcast profile` uses. It
prints one table per region: CPU seconds (best of the rounds, ``time.process_time``), nanoseconds per record,
the ratio to the njit run, and the sink's own share (its time less the tracer's). Sizes: PORTCAST_BENCH_SCALE
(default 1.0) multiplies them.
"""

from __future__ import annotations

import os
import time

import numba
import numpy as np
import pytest

from features import FeatureSink
from features.engine import FAMILIES
from features.work import BytesSink, WorkSink
from gpu_models.simt.slice_sample import SimtSink
from profiler.session import trace_function

SCALE = float(os.environ.get("PORTCAST_BENCH_SCALE", "1.0"))


def stream(a, x, y, out):
    for i in numba.prange(x.shape[0]):
        out[i] = a * x[i] + y[i]


def stencil(a, b):
    for i in numba.prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def gather(idx, x, out):
    for i in numba.prange(idx.shape[0]):
        v = x[idx[i]]
        if v > 0.5:
            out[i] = v * v
        else:
            out[i] = 1.0 - v


class NullSink:
    def start_region(self, info, static):
        pass

    def consume(self, chunk):
        pass

    def end_region(self, info, static):
        pass


def _regions():
    rng = np.random.default_rng(0)
    n = int(1_000_000 * SCALE)
    m = int(1000 * SCALE ** 0.5)
    return {
        "stream": (stream, (2.0, rng.random(n), rng.random(n), np.zeros(n))),
        "stencil": (stencil, (rng.random((m, m)), np.zeros((m, m)))),
        "gather": (gather, (rng.integers(0, n, n), rng.random(n), np.zeros(n))),
    }


def _configs():
    out = {"tracer alone": lambda: [NullSink()], "WorkSink": lambda: [WorkSink()], "BytesSink": lambda: [BytesSink()],
           "SimtSink (a100)": lambda: [SimtSink("a100")], "FeatureSink (all families)": lambda: [FeatureSink()]}
    for fam in FAMILIES:
        out[f"  family {fam}"] = (lambda f=fam: [FeatureSink([f])])
    out["profile's set (features, work, bytes, SIMT)"] = lambda: [FeatureSink(), WorkSink(), BytesSink(),
                                                                  SimtSink("a100")]
    return out


def _copy(args):
    return tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in args)


def _cpu(fn, args, sinks, rounds):
    best = float("inf")
    res = None
    for _ in range(rounds):
        s = sinks()
        c0 = time.process_time()
        res = trace_function(fn, _copy(args), sinks=s, mode="compiled")
        best = min(best, time.process_time() - c0)
    return best, res.info.n_records


def _njit(fn, args, repeat=20):
    jf = numba.njit(fn)
    jf(*_copy(args))
    best = float("inf")
    for _ in range(repeat):
        a = _copy(args)
        c0 = time.process_time()
        jf(*a)
        best = min(best, time.process_time() - c0)
    return best


@pytest.mark.parametrize("region", ["stream", "stencil", "gather"])
def test_cost_of_each_sink(benchmark, region):
    fn, args = _regions()[region]
    trace_function(fn, _copy(args), sinks=[FeatureSink(), WorkSink(), BytesSink(), SimtSink("a100")],
                   mode="compiled")  # compiles everything once
    plain = _njit(fn, args)
    rows = {}

    def run():
        for name, sinks in _configs().items():
            rows[name] = _cpu(fn, args, sinks, rounds=2)

    benchmark.pedantic(run, rounds=1, iterations=1)
    base = rows["tracer alone"][0]
    print(f"\n{region}: {rows['tracer alone'][1]:,} records; njit {plain * 1e3:.2f} ms CPU")
    print(f"{'sinks':<46} {'CPU s':>8} {'ns/record':>10} {'x njit':>8} {'sink ns/record':>15}")
    for name, (t, n) in rows.items():
        own = (t - base) / n * 1e9 if name != "tracer alone" else float("nan")
        print(f"{name:<46} {t:8.3f} {t / n * 1e9:10.1f} {t / plain:8.0f} {own:15.1f}")
        benchmark.extra_info[name] = {"cpu_s": t, "records": n, "ratio_to_njit": t / plain}
    benchmark.extra_info["njit_cpu_s"] = plain
