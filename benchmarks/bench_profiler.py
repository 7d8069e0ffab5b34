"""Profiler throughput (issue 2, point 4) and memory bound (point 5).

    .venv/bin/python -m pytest benchmarks/bench_profiler.py --benchmark-enable -p no:cacheprovider -s \
        --benchmark-timer time.process_time

Each test prints its figure (records/s; the ratio to the uninstrumented njit run measured in the same test;
peak resident memory) and stores it in the benchmark's ``extra_info`` (``--benchmark-json FILE`` keeps it).
Rates and ratios use CPU time (``time.process_time``, best of the rounds) whatever ``--benchmark-timer`` says,
so that other work on the shared machine disturbs them less; the wall-clock figures are printed alongside.
Sizes: PORTCAST_BENCH_SCALE (default 1.0) multiplies the problem sizes.
"""

import os
import resource
import time

import numba
import numpy as np
import pytest

from core.trace_schema import COLUMN_NAMES
from profiler.session import trace_function

SCALE = float(os.environ.get("PORTCAST_BENCH_SCALE", "1.0"))


def saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def stencil(a, b):
    for i in range(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


class NullSink:
    """Counts records and drops them (the tracer's own throughput)."""

    def __init__(self):
        self.n = 0

    def start_region(self, info, static):
        pass

    def consume(self, chunk):
        self.n += len(chunk)

    def end_region(self, info, static):
        pass


class ColumnsSink(NullSink):
    """Counts records and reads all ten columns of every chunk (the compiled mode's chunks decode a column when
    it is first read, so this adds the full decoding a sink like the trace-file writer pays)."""

    def consume(self, chunk):
        self.n += len(chunk)
        for name in COLUMN_NAMES:
            getattr(chunk, name)


def _rate(benchmark, fn, args, mode, rounds=3, sink_type=NullSink):
    """Trace ``fn(*args)`` ``rounds`` times (after a warm-up that compiles); returns (records, best CPU s,
    records per CPU second, best wall s)."""
    sink = sink_type()
    trace_function(
        fn, tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in args), sinks=[sink_type()], mode=mode
    )
    cpu, wall = [], []

    def run():
        c0, w0 = time.process_time(), time.perf_counter()
        res = trace_function(fn, args, sinks=[sink], mode=mode)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        return res

    result = benchmark.pedantic(run, rounds=rounds, iterations=1)
    n = result.info.n_records
    best, best_wall = min(cpu), min(wall)
    rate = n / best
    benchmark.extra_info.update({"records": n, "records_per_cpu_s": rate, "cpu_s": best, "wall_s": best_wall,
                                 "mode": result.info.mode})
    return n, best, rate, best_wall


def _plain_time(fn, args, repeat=30):
    """Best CPU time (and best wall time) of the uninstrumented njit run, after a warm-up that compiles."""
    jf = numba.njit(fn)
    jf(*args)
    best, best_wall = float("inf"), float("inf")
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        jf(*args)
        best = min(best, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    return best, best_wall


def _report_compiled(benchmark, name, fn, args, sink_type=NullSink):
    rec, t, rate, tw = _rate(benchmark, fn, args, "compiled", sink_type=sink_type)
    plain, plain_w = _plain_time(fn, args)
    benchmark.extra_info.update({"uninstrumented_cpu_s": plain, "uninstrumented_wall_s": plain_w,
                                 "ratio_to_uninstrumented": t / plain, "ratio_to_uninstrumented_wall": tw / plain_w})
    what = "" if sink_type is NullSink else ", all ten columns decoded"
    print(f"\ncompiled {name}{what}: {rec:,} records in {t:.3f} s CPU = {rate / 1e6:.1f} M records/s; uninstrumented "
          f"njit {plain * 1e3:.2f} ms CPU -> {t / plain:.1f}x (wall: {tw:.3f} s / {plain_w * 1e3:.2f} ms = "
          f"{tw / plain_w:.1f}x)")


def test_interpreted_saxpy_rate(benchmark):
    n = int(50_000 * SCALE)
    x, y = np.random.default_rng(0).random(n), np.ones(n)
    rec, t, rate, _ = _rate(benchmark, saxpy, (2.0, x, y), "interpreted")
    plain = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        saxpy(2.0, x, y)
        plain = min(plain, time.process_time() - t0)
    benchmark.extra_info["slowdown_vs_plain_python"] = t / plain
    print(f"\ninterpreted saxpy: {rec:,} records in {t:.3f} s CPU = {rate / 1e6:.2f} M records/s "
          f"({t / plain:.1f}x the plain Python run, {plain:.3f} s)")


def test_interpreted_stencil_rate(benchmark):
    m = int(120 * SCALE ** 0.5)
    a, b = np.random.default_rng(0).random((m, m)), np.zeros((m, m))
    rec, t, rate, _ = _rate(benchmark, stencil, (a, b), "interpreted")
    print(f"\ninterpreted stencil: {rec:,} records in {t:.3f} s CPU = {rate / 1e6:.2f} M records/s")


def test_compiled_saxpy_rate_and_ratio(benchmark):
    n = int(4_000_000 * SCALE)
    x, y = np.random.default_rng(0).random(n), np.ones(n)
    _report_compiled(benchmark, "saxpy", saxpy, (2.0, x, y))


def test_compiled_stencil_rate_and_ratio(benchmark):
    m = int(1000 * SCALE ** 0.5)
    a, b = np.random.default_rng(0).random((m, m)), np.zeros((m, m))
    _report_compiled(benchmark, "stencil", stencil, (a, b))


def test_compiled_saxpy_all_columns(benchmark):
    n = int(4_000_000 * SCALE)
    x, y = np.random.default_rng(0).random(n), np.ones(n)
    _report_compiled(benchmark, "saxpy", saxpy, (2.0, x, y), sink_type=ColumnsSink)


def test_compiled_stencil_all_columns(benchmark):
    m = int(1000 * SCALE ** 0.5)
    a, b = np.random.default_rng(0).random((m, m)), np.zeros((m, m))
    _report_compiled(benchmark, "stencil", stencil, (a, b), sink_type=ColumnsSink)


def axpb(a, b, c):
    return a * b + c


@pytest.mark.parametrize("mode", ["compiled", "interpreted"])
def test_expanded_elementwise_rate(benchmark, mode):
    """``a * b + c`` on 10^6 elements: two NumPy operations traced as their element loops (profiler/libcalls.py;
    both modes run the same kernels), against the plain NumPy expression in the same test."""
    n = int(1_000_000 * SCALE)
    rng = np.random.default_rng(0)
    a, b, c = rng.random(n), rng.random(n), rng.random(n)
    rec, t, rate, tw = _rate(benchmark, axpb, (a, b, c), mode)
    plain = float("inf")
    for _ in range(10):
        t0 = time.process_time()
        axpb(a, b, c)
        plain = min(plain, time.process_time() - t0)
    benchmark.extra_info["ratio_to_numpy"] = t / plain
    print(f"\nexpanded a * b + c ({mode}): {rec:,} records in {t:.3f} s CPU = {rate / 1e6:.1f} M records/s; "
          f"plain NumPy {plain * 1e3:.2f} ms CPU -> {t / plain:.0f}x")


def test_baseline_measurement_saxpy(benchmark):
    """``trace_function(..., measure_uninstrumented=True, baseline_kind="njit")``: the slowdown against the
    compiled uninstrumented run (wall time; the issue's goal is about that one, not saxpy's Python loop)."""
    n = int(4_000_000 * SCALE)
    x, y = np.random.default_rng(0).random(n), np.ones(n)
    trace_function(saxpy, (2.0, x[:10], y[:10]), sinks=[NullSink()], mode="compiled")
    res = benchmark.pedantic(lambda: trace_function(saxpy, (2.0, x, y), sinks=[NullSink()], mode="compiled",
                                                    measure_uninstrumented=True, baseline_kind="njit"),
                             rounds=1, iterations=1)
    info = res.info
    benchmark.extra_info.update({"uninstrumented_s": info.uninstrumented_time_s, "traced_s": info.wall_time_s})
    print(f"\nmeasure_uninstrumented saxpy: traced {info.wall_time_s:.3f} s, uninstrumented "
          f"{info.uninstrumented_time_s * 1e3:.2f} ms ({info.extra['uninstrumented_mode']}) -> "
          f"{info.wall_time_s / info.uninstrumented_time_s:.1f}x slowdown (wall)")


def numpy_axpy(a, x, y):
    return a * x + y


@pytest.mark.parametrize("n", [1_000, 1_000_000])
@pytest.mark.parametrize("kind", ["as-written", "njit"])
def test_baseline_repetition(benchmark, kind, n):
    """``measure_uninstrumented`` under the default RepeatRule on a NumPy ``a * x + y``: how many runs it makes,
    how far they spread, whether the 10% target was reached, and the wall time the whole measurement takes
    (warm-up and compile included)."""
    from profiler.baseline import measure_uninstrumented

    rng = np.random.default_rng(0)
    x, y = rng.random(int(n * SCALE)), rng.random(int(n * SCALE))
    t0 = time.perf_counter()
    b = benchmark.pedantic(lambda: measure_uninstrumented(numpy_axpy, (2.0, x, y), kind=kind), rounds=1,
                           iterations=1)
    wall = time.perf_counter() - t0
    t = b.timing
    benchmark.extra_info.update({**t, "wall_s": wall})
    print(f"\nbaseline {kind} a*x+y n={len(x):,}: median {t['median_s'] * 1e6:.3g} us of {t['runs']:,} runs, IQR "
          f"{t['spread']:.1%}, reached {t['reached']} (stopped by {t['stopped_by']}); measurement {wall:.2f} s wall; "
          f"load average {os.getloadavg()[0]:.1f}")


@pytest.mark.slow
def test_memory_bound_1e8_records(benchmark):
    """10^8 records (saxpy, 7 records per element) through a counting sink: peak RSS stays far below 1 GB."""
    n = int(100_000_000 / 7 * min(SCALE, 1.0)) + 1
    x, y = np.ones(n), np.ones(n)
    sink = NullSink()
    trace_function(saxpy, (2.0, x[:10], y[:10]), sinks=[NullSink()], mode="compiled")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = benchmark.pedantic(
        lambda: trace_function(saxpy, (2.0, x, y), sinks=[sink], mode="compiled"), rounds=1, iterations=1
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    benchmark.extra_info.update({"records": result.info.n_records, "peak_rss_mib": peak, "rss_before_mib": before})
    print(f"\n{result.info.n_records:,} records traced; peak RSS {peak:.0f} MiB (inputs {2 * n * 8 / 2**20:.0f} MiB, "
          f"RSS before tracing {before:.0f} MiB)")
    assert result.info.n_records >= 7 * (n - 1)
