"""Speed of the native recorder and the importers.

Run: .venv/bin/python -m pytest benchmarks/bench_native.py --benchmark-enable -p no:cacheprovider -s

Figures (printed with -s and stored in the benchmark's extra_info):
* slowdown of a traced C region vs the same region run natively (the program times the region itself with
  clock_gettime; the traced time is the wall time between the region's start and end messages, which
  includes decoding and the sinks, since records are consumed while the program runs);
* records per second into a counting sink, into the feature engine, and for the ChampSim importer.
* each record measurement twice, in the same run: ``serial`` (the reader runs between sink calls, the
  baseline) and ``pipelined`` (the default: a reader thread without the GIL beside the sinks); the
  feature-engine one also times the engine alone on the same records (its floor); each figure is the
  minimum of ``PORTCAST_BENCH_NATIVE_REPEATS`` (default 3) runs;
* CPU seconds (the machine is shared, so wall time is noisy): ``cpu_tool_s`` (the valgrind child),
  ``cpu_reader_s`` (this process: reader + sinks); for the tool alone also the same run under Valgrind's
  ``--tool=none`` (``cpu_none_run_s``: Valgrind's start-up and JIT without recording).
"""

import lzma
import os
import resource
import subprocess
import time

import numpy as np
import pytest

from profiler.native import INCLUDE_DIR
from profiler.native.build import NativeToolError, ensure_tool, find_toolchain
from profiler.native.importers import champsim_records, import_champsim
from profiler.native.record import record_program
from profiler.trace import MemorySink

KERNEL = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "portcast.h"
__attribute__((noinline)) double kernel(int n, double a, const double* x, double* y) {
    double s = 0;
    for (int i = 0; i < n; i++) { y[i] = a * x[i] + y[i]; s += y[i] * x[i]; }
    return s;
}
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) { x[i] = i % 17; y[i] = 1; }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    PORTCAST_REGION_START("kernel");
    double s = kernel(n, 2.0, x, y);
    PORTCAST_REGION_END("kernel");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.9f %f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), s);
    return 0;
}
"""

N = int(os.environ.get("PORTCAST_BENCH_NATIVE_N", "2000000"))

try:
    find_toolchain()
    _missing = None
except NativeToolError as exc:  # pragma: no cover
    _missing = str(exc)

pytestmark = pytest.mark.skipif(_missing is not None, reason=f"native toolchain missing: {_missing}")


class CountingSink:
    def __init__(self):
        self.n = 0

    def start_region(self, info, static):
        pass

    def consume(self, chunk):
        self.n += len(chunk)

    def end_region(self, info, static):
        pass


@pytest.fixture(scope="module")
def kernel_exe(tmp_path_factory):
    ensure_tool()
    d = tmp_path_factory.mktemp("bench_native")
    (d / "k.c").write_text(KERNEL)
    subprocess.run(["gcc", "-O2", "-g", f"-I{INCLUDE_DIR}", "-o", str(d / "k"), str(d / "k.c")], check=True)
    return d / "k"


def _native_region_time(exe, reps=5):
    best = float("inf")
    for _ in range(reps):
        out = subprocess.run([str(exe), str(N)], capture_output=True, text=True, check=True).stdout
        best = min(best, float(out.split()[0]))
    return best


def _children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _record(exe, sinks, pipelined=True):
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    dec = record_program([str(exe), str(N)], sinks, stdout=subprocess.DEVNULL, pipelined=pipelined)
    # CPU seconds of the whole run: this (reader + sinks) process and the valgrind child (the tool)
    dec.cpu_reader_s = time.process_time() - c0
    dec.cpu_tool_s = _children_cpu() - k0
    return dec, time.perf_counter() - t0


REPEATS = int(os.environ.get("PORTCAST_BENCH_NATIVE_REPEATS", "3"))


def _report(benchmark, label, runs, native):
    """Figures of the best of ``runs`` (min of each time over the repeats: the machine is shared)."""
    dec = runs[0][0]
    info = dec.regions[0]
    region = min(d.regions[0].wall_time_s for d, _ in runs)
    total = min(t for _, t in runs)
    cpu_tool = min(d.cpu_tool_s for d, _ in runs)
    cpu_reader = min(d.cpu_reader_s for d, _ in runs)
    cpu_total = min(d.cpu_tool_s + d.cpu_reader_s for d, _ in runs)
    figures = {
        "records": info.n_records,
        "guest_instructions": info.extra["guest_instructions"],
        "native_region_s": native,
        "traced_region_s": region,
        "slowdown_region": region / native,
        "records_per_s": info.n_records / region,
        "whole_run_s": total,
        # CPU time (the machine is shared, wall time is noisy): whole run, program start-up included
        "cpu_tool_s": cpu_tool,
        "cpu_reader_s": cpu_reader,
        "cpu_total_s": cpu_total,
        "cpu_slowdown_vs_native_region": cpu_total / native,
    }
    benchmark.extra_info.update(figures)
    print(f"\n{label}: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))


def _runs(benchmark, exe, make_sink, pipelined):
    runs = []
    for _ in range(REPEATS - 1):
        runs.append(_record(exe, [make_sink()], pipelined))
    sink = make_sink()
    runs.append(benchmark.pedantic(_record, args=(exe, [sink], pipelined), rounds=1, iterations=1))
    return runs, sink


@pytest.mark.parametrize("reader", ["serial", "pipelined"])
def test_record_into_counting_sink(benchmark, kernel_exe, reader):
    """Tool + reader into a sink that only counts: ``serial`` reads between sink calls (the baseline),
    ``pipelined`` in a thread without the GIL."""
    native = _native_region_time(kernel_exe)
    runs, sink = _runs(benchmark, kernel_exe, CountingSink, reader == "pipelined")
    assert sink.n == runs[-1][0].regions[0].n_records
    _report(benchmark, f"record -> counting sink ({reader})", runs, native)


@pytest.mark.parametrize("reader", ["serial", "pipelined"])
def test_record_into_feature_engine(benchmark, kernel_exe, reader):
    """The full pipeline: tool, reader and the feature engine (every feature family) on the whole trace."""
    features = pytest.importorskip("features.engine")
    native = _native_region_time(kernel_exe)
    # warm the engine's compiled kernels outside the measurement
    record_program([str(kernel_exe), "1000"], [features.FeatureSink()], stdout=subprocess.DEVNULL)
    runs, sink = _runs(benchmark, kernel_exe, features.FeatureSink, reader == "pipelined")
    _report(benchmark, f"record -> feature engine ({reader})", runs, native)
    assert sink.results and sink.results[0][1]["ilp32"] > 0
    # the engine alone on the same records (from memory): what the pipeline cannot go below
    mem = MemorySink()
    record_program([str(kernel_exe), str(N)], [mem], stdout=subprocess.DEVNULL)
    info, static, chunk = mem.regions[0]
    best = float("inf")
    for _ in range(2):
        c0 = time.process_time()
        eng = features.FeatureEngine(None, static=static)
        for k in range(0, len(chunk), 1 << 20):
            eng.consume(chunk.slice(k, min(len(chunk), k + (1 << 20))))
        res = eng.result()
        best = min(best, time.process_time() - c0)
    assert res.equals(sink.results[0][1])  # the streamed features are those of the whole trace
    benchmark.extra_info.update({"cpu_engine_alone_s": best, "engine_slowdown_vs_native_region": best / native})
    print(f"feature engine alone on the {len(chunk):,} records: cpu {best:.4g} s = {best / native:.4g}x native")


def test_tool_alone_to_dev_null(benchmark, kernel_exe):
    """The Valgrind tool writing its records to /dev/null (no Python reader): the tool's own cost."""
    folder = ensure_tool()
    env = dict(os.environ, VALGRIND_LIB=str(folder))
    cmd = ["valgrind", "-q", "--tool=portcast", "--vex-guest-chase=no", "--vex-iropt-level=0", "--out=/dev/null",
           str(kernel_exe), str(N)]
    run = lambda: subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout  # noqa: E731
    traced, cpu = [], []
    for r in range(REPEATS):
        k0 = _children_cpu()
        out = benchmark.pedantic(run, rounds=1, iterations=1) if r == 0 else run()
        cpu.append(_children_cpu() - k0)  # CPU seconds of the whole valgrind run (start-up included)
        traced.append(float(out.split()[0]))  # region time as the program itself measured it under the tool
    traced, cpu = min(traced), min(cpu)
    native = _native_region_time(kernel_exe)
    cpu_none = float("inf")
    for _ in range(REPEATS):
        k0 = _children_cpu()
        subprocess.run(["valgrind", "-q", "--tool=none", str(kernel_exe), str(N)], capture_output=True, check=True)
        cpu_none = min(cpu_none, _children_cpu() - k0)  # Valgrind's start-up + JIT without recording
    benchmark.extra_info.update({"native_region_s": native, "tool_region_s": traced, "slowdown_region": traced / native,
                                 "cpu_tool_run_s": cpu, "cpu_none_run_s": cpu_none,
                                 "cpu_slowdown_vs_native_region": cpu / native,
                                 "cpu_slowdown_without_startup": (cpu - cpu_none) / native})
    print(f"\ntool alone: native_region_s={native:.4g}, tool_region_s={traced:.4g}, slowdown={traced / native:.4g}, "
          f"cpu_tool_run_s={cpu:.4g} ({cpu / native:.4g}x), cpu_none_run_s={cpu_none:.4g}, "
          f"cpu minus none: {(cpu - cpu_none) / native:.4g}x")


def test_import_champsim_throughput(benchmark, tmp_path):
    rng = np.random.default_rng(0)
    n = 500_000
    instrs = []
    for i in range(2000):
        k = i % 4
        if k == 0:
            instrs.append(dict(ip=0x400000 + 4 * i, src_regs=[1, 2], dst_regs=[3], src_mem=[int(rng.integers(1, 1 << 30))]))
        elif k == 1:
            instrs.append(dict(ip=0x400000 + 4 * i, src_regs=[3, 4], dst_regs=[4, 25]))
        elif k == 2:
            instrs.append(dict(ip=0x400000 + 4 * i, src_regs=[4], dst_mem=[int(rng.integers(1, 1 << 30))]))
        else:
            instrs.append(dict(ip=0x400000 + 4 * i, is_branch=1, branch_taken=int(i % 8 == 3), src_regs=[26, 25],
                               dst_regs=[26]))
    raw = champsim_records(instrs) * (n // len(instrs))
    path = tmp_path / "synthetic.champsim.xz"
    path.write_bytes(lzma.compress(raw, preset=1))
    import_champsim(path, [CountingSink()], max_instructions=1000)  # compile the Numba kernel first
    sink = CountingSink()
    t0 = time.perf_counter()
    info = benchmark.pedantic(import_champsim, args=(path, [sink]), rounds=1, iterations=1)
    dt = time.perf_counter() - t0
    benchmark.extra_info.update({"instructions": n, "records": info.n_records, "records_per_s": info.n_records / dt})
    print(f"\nimport champsim: {n} instructions, {info.n_records} records, {info.n_records / dt:.4g} records/s")


NUMBA_SCRIPT = '''
import sys
import numpy as np
import numba
from profiler.native.numba_markers import region_start, region_end, region_thread

@numba.njit(cache=True)
def saxpy(a, x, y):
    region_start("nb_saxpy")
    s = 0.0
    for i in range(x.size):
        region_thread(i)
        y[i] = a * x[i] + y[i]
        s += y[i]
    region_end("nb_saxpy")
    return s

n = int(sys.argv[1])
print(saxpy(2.0, np.arange(float(n)), np.ones(n)))
'''


def test_record_numba_script(benchmark, tmp_path, monkeypatch):
    """Markers in compiled Numba code traced end to end (Python + Numba run under Valgrind: minutes)."""
    import sys

    script = tmp_path / "nb_saxpy.py"
    script.write_text(NUMBA_SCRIPT)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba_cache"))
    subprocess.run([sys.executable, str(script), "10"], check=True, capture_output=True)  # fill Numba's cache
    sink = CountingSink()
    dec, total = benchmark.pedantic(
        lambda: _record_cmd([sys.executable, str(script), "1000"], [sink]), rounds=1, iterations=1)
    info = dec.regions[0]
    assert info.name == "nb_saxpy" and info.complete and info.n_threads == 1000
    benchmark.extra_info.update({"records": info.n_records, "whole_run_s": total})
    print(f"\nnumba script: region records={info.n_records}, threads={info.n_threads}, whole run {total:.1f} s")


def _record_cmd(cmd, sinks):
    t0 = time.perf_counter()
    dec = record_program(cmd, sinks, stdout=subprocess.DEVNULL)
    return dec, time.perf_counter() - t0
