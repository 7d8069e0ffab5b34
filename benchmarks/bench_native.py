"""Speed of the native recorder and the importers, over several small C kernels.

Run: .venv/bin/python -m pytest benchmarks/bench_native.py --benchmark-enable -p no:cacheprovider -s

Kernels (``KERNELS_C``, gcc -O2 -g, one region each; ``PORTCAST_BENCH_NATIVE_KERNELS=dot,chase`` picks some):

* ``dot``: ``y[i] = a*x[i] + y[i]; s += y[i]*x[i]``, n = 2,000,000 (the original bench kernel; high IPC);
* ``stream``: ``y[i] = a*x[i] + y[i]`` over two 32 MB arrays (more than the 32 MiB LLC: memory-bound);
* ``chase``: ``p = next[p]``, 1,000,000 steps through one random cycle of 2^23 links (64 MiB: latency-bound);
* ``stencil``: two 5-point Jacobi sweeps over a 1024 x 1024 grid;
* ``branchy``: ``if (k & 1) s += k >> 3; else hist[k & 15]++`` over 4,000,000 random keys (half the
  branches mispredicted natively).

Figures (printed with -s, stored in the benchmark's extra_info, and summarised as one Markdown table at
the end of the module):

* native region time (the program times the region itself with clock_gettime, best of 5) and guest
  instructions per second;
* slowdown of the traced region vs native: for the tool alone (records to /dev/null, the program's own
  region time), and for ``record_program`` into a counting sink and into the feature engine (the reader's
  region time: from the region's start message to the end of its last sink call);
* CPU slowdown: CPU seconds spent during the region (the valgrind process, as the program measures it with
  CLOCK_PROCESS_CPUTIME_ID, plus this process between the region's ``start_region`` and ``end_region``
  sink calls, i.e. reader + sinks, the engine's result included) over the native region time;
  and CPU of the whole run (valgrind start-up and the program's set-up included) with the CPU of the same
  run under ``--tool=none`` (start-up + JIT without recording) stated separately;
* records per second (region records / traced region wall time);
* readers: ``serial`` (reads between sink calls; ``dot`` only), ``pipe`` (a reader thread without the GIL
  reading the FIFO beside the sinks) and ``shm`` (the default: the same thread taking record blocks from
  a shared-memory ring, see docs/native.md); the feature-engine measurement also times the engine alone on
  the same records (its floor); each figure is the minimum over ``PORTCAST_BENCH_NATIVE_REPEATS``
  (default 3) runs.
"""

import lzma
import os
import resource
import subprocess
import tempfile
import time

import numpy as np
import pytest

from profiler.native import INCLUDE_DIR
from profiler.native.build import NativeToolError, ensure_tool, find_toolchain
from profiler.native.importers import champsim_records, import_champsim
from profiler.native.record import record_program
from profiler.trace import MemorySink

KERNELS_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include "portcast.h"

/* dot: the original bench kernel (saxpy + dot product), high IPC */
__attribute__((noinline)) double kernel(int n, double a, const double* x, double* y) {
    double s = 0;
    for (int i = 0; i < n; i++) { y[i] = a * x[i] + y[i]; s += y[i] * x[i]; }
    return s;
}
/* stream: saxpy over arrays larger than the LLC (memory-bound) */
__attribute__((noinline)) void k_stream(long n, double a, const double* x, double* y) {
    for (long i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
/* chase: pointer chase through one random cycle (latency-bound) */
__attribute__((noinline)) long k_chase(long steps, const long* next) {
    long p = 0;
    for (long i = 0; i < steps; i++) p = next[p];
    return p;
}
/* stencil: 5-point Jacobi sweeps on an m x m grid */
__attribute__((noinline)) void k_stencil(int m, int sweeps, double* a, double* b) {
    for (int s = 0; s < sweeps; s++) {
        for (int i = 1; i < m - 1; i++)
            for (int j = 1; j < m - 1; j++)
                b[i * m + j] = 0.2 * (a[i * m + j] + a[(i - 1) * m + j] + a[(i + 1) * m + j]
                                      + a[i * m + j - 1] + a[i * m + j + 1]);
        double* t = a; a = b; b = t;
    }
}
/* branchy: data-dependent branches on random keys (half of them mispredicted natively) */
__attribute__((noinline)) long k_branchy(long n, const uint32_t* key, long* hist) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        uint32_t k = key[i];
        if (k & 1) s += k >> 3;
        else hist[k & 15]++;
    }
    return s;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xs(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static struct timespec t0, t1, c0, c1;
#define START(name) clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0); clock_gettime(CLOCK_MONOTONIC, &t0); \
    PORTCAST_REGION_START(name)
#define END(name) PORTCAST_REGION_END(name); clock_gettime(CLOCK_MONOTONIC, &t1); \
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1)

/* usage: k KERNEL N; prints the region's wall and CPU seconds and a result */
int main(int argc, char** argv) {
    const char* k = argv[1];
    long n = atol(argv[2]);
    double r = 0;
    if (!strcmp(k, "dot")) {
        double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
        for (long i = 0; i < n; i++) { x[i] = i % 17; y[i] = 1; }
        START("dot"); r = kernel(n, 2.0, x, y); END("dot");
    } else if (!strcmp(k, "stream")) {
        double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
        for (long i = 0; i < n; i++) { x[i] = i % 17; y[i] = 1; }
        START("stream"); k_stream(n, 2.0, x, y); END("stream");
        r = y[n / 2];
    } else if (!strcmp(k, "chase")) {
        long m = 1L << 23;
        long* next = malloc(m * sizeof(long));
        for (long i = 0; i < m; i++) next[i] = i;
        for (long i = m - 1; i > 0; i--) { long j = xs() % i; long t = next[i]; next[i] = next[j]; next[j] = t; }
        START("chase"); r = k_chase(n, next); END("chase");
    } else if (!strcmp(k, "stencil")) {
        int m = 1024;
        double *a = malloc((long)m * m * sizeof(double)), *b = malloc((long)m * m * sizeof(double));
        for (long i = 0; i < (long)m * m; i++) { a[i] = i % 13; b[i] = a[i]; }
        START("stencil"); k_stencil(m, (int)n, a, b); END("stencil");
        r = a[m * m / 2] + b[m * m / 2];
    } else if (!strcmp(k, "branchy")) {
        uint32_t* key = malloc(n * sizeof(uint32_t));
        long hist[16] = {0};
        for (long i = 0; i < n; i++) key[i] = (uint32_t)(xs() >> 17);
        START("branchy"); r = k_branchy(n, key, hist); END("branchy");
        r += hist[3];
    } else {
        fprintf(stderr, "unknown kernel %s\n", k);
        return 2;
    }
    printf("%.9f %.9f %f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec),
           (c1.tv_sec - c0.tv_sec) + 1e-9 * (c1.tv_nsec - c0.tv_nsec), r);
    return 0;
}
"""

#: kernel -> size argument (elements, steps or sweeps)
SIZES = {"dot": int(os.environ.get("PORTCAST_BENCH_NATIVE_N", "2000000")), "stream": 4_000_000,
         "chase": 1_000_000, "stencil": 2, "branchy": 4_000_000}
KERNELS = [k for k in os.environ.get("PORTCAST_BENCH_NATIVE_KERNELS", ",".join(SIZES)).split(",") if k]
REPEATS = int(os.environ.get("PORTCAST_BENCH_NATIVE_REPEATS", "3"))
#: reader -> record_program arguments
READERS = {"serial": dict(pipelined=False), "pipe": dict(pipelined=True, shm=False),
           "shm": dict(pipelined=True, shm=True)}
#: readers measured (``PORTCAST_BENCH_NATIVE_READERS=pipe,shm`` picks some)
_READERS = [r for r in os.environ.get("PORTCAST_BENCH_NATIVE_READERS", ",".join(READERS)).split(",") if r]
#: (kernel, reader) pairs measured: the serial baseline on dot only
PAIRS = [(k, r) for k in KERNELS for r in _READERS if r != "serial" or k == "dot"]

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


class CpuProbe:
    """Last sink: CPU seconds of this process from the region's start_region to its end_region calls."""

    def start_region(self, info, static):
        self.c0 = time.process_time()

    def consume(self, chunk):
        pass

    def end_region(self, info, static):
        self.cpu = time.process_time() - self.c0


@pytest.fixture(scope="module")
def bench_exe(tmp_path_factory):
    ensure_tool()
    d = tmp_path_factory.mktemp("bench_native")
    (d / "k.c").write_text(KERNELS_C)
    subprocess.run(["gcc", "-O2", "-g", f"-I{INCLUDE_DIR}", "-o", str(d / "k"), str(d / "k.c")], check=True)
    return d / "k"


#: figures per (kernel, measurement), printed as one table when the module ends
SUMMARY: dict = {}


@pytest.fixture(scope="module", autouse=True)
def summary_table():
    yield
    if not SUMMARY:
        return
    cols = ["records", "native_region_s", "native_ginstr_per_s", "slowdown_region", "cpu_slowdown_region",
            "records_per_s", "cpu_whole_run_s", "cpu_none_run_s", "cpu_engine_alone_s", "engine_slowdown_cpu"]
    print("\n\n| kernel | measurement | " + " | ".join(cols) + " |")
    print("|---|---|" + "---:|" * len(cols))
    for (kernel, what), fig in SUMMARY.items():
        cells = []
        for c in cols:
            v = fig.get(c)
            cells.append("" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:.4g}")
        print(f"| {kernel} | {what} | " + " | ".join(cells) + " |")


def _cmd(exe, kernel):
    return [str(exe), kernel, str(SIZES[kernel])]


def _parse(out):
    wall, cpu, _ = out.split()[:3]
    return float(wall), float(cpu)


_NATIVE: dict = {}


def _native_region_time(exe, kernel, reps=5):
    if kernel not in _NATIVE:
        best = float("inf")
        for _ in range(reps):
            out = subprocess.run(_cmd(exe, kernel), capture_output=True, text=True, check=True).stdout
            best = min(best, _parse(out)[0])
        _NATIVE[kernel] = best
    return _NATIVE[kernel]


def _children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _record(exe, kernel, sinks, reader):
    probe = CpuProbe()
    with tempfile.TemporaryFile("w+") as out:
        t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
        dec = record_program(_cmd(exe, kernel), [*sinks, probe], stdout=out, **READERS[reader])
        dec.cpu_reader_s = time.process_time() - c0
        dec.cpu_tool_s = _children_cpu() - k0
        total = time.perf_counter() - t0
        out.seek(0)
        _, dec.cpu_tool_region_s = _parse(out.read())
    dec.cpu_reader_region_s = probe.cpu
    return dec, total


def _report(benchmark, kernel, label, runs, native):
    """Figures of the best of ``runs`` (min of each time over the repeats: the machine is shared)."""
    dec = runs[0][0]
    info = dec.regions[0]
    region = min(d.regions[0].wall_time_s for d, _ in runs)
    cpu_region = min(d.cpu_tool_region_s + d.cpu_reader_region_s for d, _ in runs)
    ins = info.extra["guest_instructions"]
    figures = {
        "records": info.n_records,
        "guest_instructions": ins,
        "native_region_s": native,
        "native_ginstr_per_s": ins / native / 1e9,
        "traced_region_s": region,
        "slowdown_region": region / native,
        "cpu_tool_region_s": min(d.cpu_tool_region_s for d, _ in runs),
        "cpu_reader_region_s": min(d.cpu_reader_region_s for d, _ in runs),
        "cpu_region_s": cpu_region,
        "cpu_slowdown_region": cpu_region / native,
        "records_per_s": info.n_records / region,
        "whole_run_s": min(t for _, t in runs),
        # CPU of the whole run (valgrind start-up and the program's set-up included)
        "cpu_tool_s": min(d.cpu_tool_s for d, _ in runs),
        "cpu_reader_s": min(d.cpu_reader_s for d, _ in runs),
        "cpu_whole_run_s": min(d.cpu_tool_s + d.cpu_reader_s for d, _ in runs),
    }
    benchmark.extra_info.update(figures)
    SUMMARY[(kernel, label)] = figures
    print(f"\n{kernel} {label}: "
          + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))
    return figures


def _runs(benchmark, exe, kernel, make_sink, reader):
    runs = []
    for _ in range(REPEATS - 1):
        runs.append(_record(exe, kernel, [make_sink()], reader))
    sink = make_sink()
    runs.append(benchmark.pedantic(_record, args=(exe, kernel, [sink], reader), rounds=1, iterations=1))
    return runs, sink


@pytest.mark.parametrize("kernel", KERNELS)
def test_tool_alone_to_dev_null(benchmark, bench_exe, kernel):
    """The Valgrind tool writing its records to /dev/null (no Python reader): the tool's own cost."""
    folder = ensure_tool()
    env = dict(os.environ, VALGRIND_LIB=str(folder))
    cmd = ["valgrind", "-q", "--tool=portcast", "--vex-guest-chase=no", "--vex-iropt-level=0", "--out=/dev/null",
           *_cmd(bench_exe, kernel)]
    run = lambda: subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout  # noqa: E731
    traced, cpu_region, cpu = [], [], []
    for r in range(REPEATS):
        k0 = _children_cpu()
        out = benchmark.pedantic(run, rounds=1, iterations=1) if r == 0 else run()
        cpu.append(_children_cpu() - k0)  # CPU seconds of the whole valgrind run (start-up included)
        wall, c = _parse(out)  # the region as the program itself measured it under the tool
        traced.append(wall)
        cpu_region.append(c)
    traced, cpu_region, cpu = min(traced), min(cpu_region), min(cpu)
    native = _native_region_time(bench_exe, kernel)
    cpu_none = float("inf")
    for _ in range(REPEATS):
        k0 = _children_cpu()
        subprocess.run(["valgrind", "-q", "--tool=none", *_cmd(bench_exe, kernel)], capture_output=True, check=True)
        cpu_none = min(cpu_none, _children_cpu() - k0)  # Valgrind's start-up + JIT without recording
    figures = {"native_region_s": native, "tool_region_s": traced, "slowdown_region": traced / native,
               "cpu_region_s": cpu_region, "cpu_slowdown_region": cpu_region / native,
               "cpu_whole_run_s": cpu, "cpu_none_run_s": cpu_none}
    benchmark.extra_info.update(figures)
    SUMMARY[(kernel, "tool alone -> /dev/null")] = figures
    print(f"\n{kernel} tool alone: " + ", ".join(f"{k}={v:.4g}" for k, v in figures.items()))


@pytest.mark.parametrize("kernel,reader", PAIRS)
def test_record_into_counting_sink(benchmark, bench_exe, kernel, reader):
    """Tool + reader into a sink that only counts."""
    native = _native_region_time(bench_exe, kernel)
    runs, sink = _runs(benchmark, bench_exe, kernel, CountingSink, reader)
    assert sink.n == runs[-1][0].regions[0].n_records
    _report(benchmark, kernel, f"tool + reader -> counting sink ({reader})", runs, native)


@pytest.mark.parametrize("kernel", KERNELS)
def test_record_into_sampled_profile(benchmark, bench_exe, kernel):
    """``portcast profile --native --sample 0.01``'s sinks (features, work, bytes, the estimator and its
    replicates) behind the sampling filter: 1% of the trace's intervals analysed, every record counted."""
    pytest.importorskip("features.engine")
    from portcast.pipeline.stage_prepare import prepare
    from profiler.sampling import SamplingSink

    native = _native_region_time(bench_exe, kernel)

    def make():
        setup = prepare(sample=0.01)
        sampler = SamplingSink(setup.sample, setup.sinks)
        sampler.setup = setup
        return sampler

    record_program([str(bench_exe), "dot", "1000"], [make()], stdout=subprocess.DEVNULL)  # warm the kernels
    runs, sink = _runs(benchmark, bench_exe, kernel, make, "shm")
    info = runs[-1][0].regions[0]
    assert info.extra["sample"]["records"] == info.n_records
    _report(benchmark, kernel, "sampled profile, 1% of intervals (shm)", runs, native)


@pytest.mark.parametrize("kernel,reader", PAIRS)
def test_record_into_feature_engine(benchmark, bench_exe, kernel, reader):
    """The full pipeline: tool, reader and the feature engine (every feature family) on the whole trace."""
    features = pytest.importorskip("features.engine")
    native = _native_region_time(bench_exe, kernel)
    # warm the engine's compiled kernels outside the measurement
    record_program([str(bench_exe), "dot", "1000"], [features.FeatureSink()], stdout=subprocess.DEVNULL)
    runs, sink = _runs(benchmark, bench_exe, kernel, features.FeatureSink, reader)
    figures = _report(benchmark, kernel, f"full pipeline -> feature engine ({reader})", runs, native)
    assert sink.results and sink.results[0][1]["ilp32"] > 0
    if reader != "shm" and (kernel, "shm") in PAIRS:
        return  # the engine-alone floor once per kernel (with the default reader)
    # the engine alone on the same records (from memory): what the pipeline cannot go below
    mem = MemorySink()
    record_program(_cmd(bench_exe, kernel), [mem], stdout=subprocess.DEVNULL)
    info, static, chunk = mem.regions[0]
    best = float("inf")
    for _ in range(2):
        c0 = time.process_time()
        eng = features.FeatureEngine(None, static=static)
        for k in range(0, len(chunk), 1 << 20):
            eng.consume(chunk.slice(k, min(len(chunk), k + (1 << 20))))
        res = eng.result()
        best = min(best, time.process_time() - c0)
    del mem, chunk
    assert res.equals(sink.results[0][1])  # the streamed features are those of the whole trace
    extra = {"cpu_engine_alone_s": best, "engine_slowdown_cpu": best / native,
             "engine_records_per_cpu_s": info.n_records / best}
    figures.update(extra)
    benchmark.extra_info.update(extra)
    print(f"{kernel}: feature engine alone on the {len(res) and info.n_records:,} records: cpu {best:.4g} s = "
          f"{best / native:.4g}x native, {info.n_records / best:.4g} records per CPU-second")


def test_import_champsim_throughput(benchmark, tmp_path):
    rng = np.random.default_rng(0)
    n = 500_000
    instrs = []
    for i in range(2000):
        k = i % 4
        if k == 0:
            instrs.append(
                dict(ip=0x400000 + 4 * i, src_regs=[1, 2], dst_regs=[3], src_mem=[int(rng.integers(1, 1 << 30))])
            )
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
