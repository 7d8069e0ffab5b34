"""Instrumented compile time against the plain ``numba.njit`` compile (issue H4, point 3).

    .venv/bin/python -m pytest benchmarks/bench_compile.py --benchmark-enable -p no:cacheprovider -s

For every corpus kernel (``spec.cpu`` at its ``tiny`` size) and for a multigrid V-cycle (mg_vcycle.py), each
compile runs in a fresh process whose Numba cache directory is a new empty one (no on-disk cache): the plain
compile is ``numba.njit(fn).compile(signature)``; the instrumented one is the compiled tracing mode's path,
``profiler.session._program_for(fn, "compiled")`` (rewrite) plus ``_compile`` (Numba). Before the measured
compile, each process compiles a small warm-up function the same way, so that Numba's one-time start-up
(LLVM, the typing context, the tracer's primitives and library-call kernels, which a user's machine compiles
once and then loads from Numba's on-disk cache) is not counted. Times are CPU seconds of the process
(``time.process_time``; the machine is shared: each figure is the fastest of PORTCAST_BENCH_REPEAT, default 3,
processes) and wall seconds; the table gives the ratio instrumented / plain
per kernel and the median and maximum over the corpus, each process's peak RSS, and where the instrumented
compile spent its time (Numba's run_pass events: type inference, lowering, inlining; LLVM).

PORTCAST_BENCH_COMPARE_TREE=/path/to/other/checkout also measures that checkout's instrumented compile in the
same run (before/after figures of a change). PORTCAST_BENCH_KERNELS=a,b limits the corpus kernels.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


# ----------------------------------------------------------------------------------------------------------
# worker (a fresh process per measurement)


def _warm_up_function(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        y[i] = 2.0 * x[i] + y[i]
        if y[i] > 0.0:
            s += abs(y[i])
    # one NumPy operation of each expansion kernel (profiler.libcalls: map, copy, reduction, dot, gather,
    # mask), so their one-time compile (on disk, with cache=True, after a program's first run) is start-up
    z = np.full(x.shape[0], 1.0)
    w = (x * y + z).copy()
    s += np.sum(w) + x @ y + np.sum(x[np.arange(2)]) + np.sum(x[x > 0.0])
    return s


def _target(name):
    """(function, argument tuple) of a corpus kernel at its tiny size, or of the V-cycle."""
    if name == "vcycle":
        sys.path.insert(0, str(HERE))
        import mg_vcycle

        return mg_vcycle.vcycle, mg_vcycle.make_inputs(17, 4)
    from kernels.registry import get_kernel

    spec = get_kernel(name)
    return spec.cpu, spec.make_inputs(spec.sizes["tiny"], 0)


class _PassTimes:
    """Self time per Numba compiler pass (nested passes, e.g. a callee compiled during the caller's type
    inference, are charged to themselves) and the LLVM time, from Numba's event stream."""

    def __init__(self):
        self.self_s: dict[str, float] = {}
        self.llvm_s = 0.0
        self._stack: list = []

    def __enter__(self):
        from numba.core import event

        class Relay(event.Listener):
            def __init__(self, start, end):
                self.start, self.end = start, end

            def on_start(self, e):
                self.start(e)

            def on_end(self, e):
                self.end(e)

        self._listeners = [(event, "numba:run_pass", Relay(self._start, self._end)),
                           (event, "numba:llvm_lock", Relay(self._llvm_start, self._llvm_end))]
        for ev, kind, lst in self._listeners:
            ev.register(kind, lst)
        self._llvm_depth = 0
        return self

    def __exit__(self, *exc):
        for ev, kind, lst in self._listeners:
            ev.unregister(kind, lst)
        return False

    def _start(self, e):
        import time

        self._stack.append([e.data["name"], time.process_time(), 0.0])

    def _end(self, e):
        import time

        name, t0, child = self._stack.pop()
        total = time.process_time() - t0
        name = name.split(" [", 1)[0]  # "native_lowering [fn]": per pass, all functions together
        self.self_s[name] = self.self_s.get(name, 0.0) + total - child
        if self._stack:
            self._stack[-1][2] += total

    def _llvm_start(self, e):
        import time

        if self._llvm_depth == 0:
            self._llvm_t0 = time.process_time()
        self._llvm_depth += 1

    def _llvm_end(self, e):
        import time

        self._llvm_depth -= 1
        if self._llvm_depth == 0:
            self.llvm_s += time.process_time() - self._llvm_t0


def _worker(variant: str, name: str) -> dict:
    import resource
    import time

    import numba
    import numpy as np

    from profiler.user_code import unwrap_callable

    def plain(fn, args):
        numba.njit(unwrap_callable(fn)).compile(tuple(numba.typeof(a) for a in args))

    def instrumented(fn, args):
        from profiler.session import _compile, _program_for

        t0 = time.process_time()
        prog = _program_for(unwrap_callable(fn), "compiled")
        out["rewrite_s"] = time.process_time() - t0
        _compile(prog, list(args))
        out["record_sites"] = prog.n_sites

    run = plain if variant == "plain" else instrumented
    out: dict = {}
    run(_warm_up_function, (np.ones(4), np.ones(4)))
    fn, args = _target(name)
    with _PassTimes() as passes:
        c0, w0 = time.process_time(), time.perf_counter()
        run(fn, args)
        out["cpu_s"], out["wall_s"] = time.process_time() - c0, time.perf_counter() - w0
    out["llvm_s"] = passes.llvm_s
    out["passes"] = dict(sorted(passes.self_s.items(), key=lambda kv: -kv[1])[:6])
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


# ----------------------------------------------------------------------------------------------------------
# driver


REPEAT = int(os.environ.get("PORTCAST_BENCH_REPEAT", "3"))


def measure_once(variant: str, name: str, tree: Path = ROOT, timeout: float = 1800) -> dict:
    """Run the worker in a fresh process (``tree``'s profiler and kernels, an empty Numba cache directory)."""
    with tempfile.TemporaryDirectory(prefix="pc-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(tree))
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", variant, name], cwd=str(tree),
                              env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{variant} compile of {name} failed in {tree}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(variant: str, name: str, tree: Path = ROOT) -> dict:
    """The fastest (CPU time) of PORTCAST_BENCH_REPEAT (default 3) fresh-process measurements: the shared
    machine only ever adds time."""
    return min((measure_once(variant, name, tree) for _ in range(REPEAT)), key=lambda m: m["cpu_s"])


def _kernel_names() -> list[str]:
    from kernels.registry import all_kernels

    names = sorted(all_kernels())
    only = os.environ.get("PORTCAST_BENCH_KERNELS")
    return [n for n in names if n in only.split(",")] if only else names


def _row(name, plain, inst, other=None) -> str:
    passes = ", ".join(f"{k} {v:.1f}" for k, v in list(inst["passes"].items())[:3])
    extra = f" | before {other['cpu_s']:6.2f} s = {other['cpu_s'] / plain['cpu_s']:4.1f}x" if other else ""
    return (f"{name:20s} plain {plain['cpu_s']:6.2f} s  instrumented {inst['cpu_s']:6.2f} s = "
            f"{inst['cpu_s'] / plain['cpu_s']:4.1f}x (llvm {inst['llvm_s']:.1f} s; {passes}; "
            f"rss {plain['rss_mib']:.0f}/{inst['rss_mib']:.0f} MiB){extra}")


def _compare_tree():
    tree = os.environ.get("PORTCAST_BENCH_COMPARE_TREE")
    return Path(tree).resolve() if tree else None


def test_corpus_compile_time_ratio(benchmark):
    other_tree = _compare_tree()
    rows, ratios, before, totals = [], {}, {}, [0.0, 0.0]

    def run():
        for name in _kernel_names():
            plain, inst = measure("plain", name), measure("instrumented", name)
            other = measure("instrumented", name, other_tree) if other_tree else None
            ratios[name] = inst["cpu_s"] / plain["cpu_s"]
            totals[0] += plain["cpu_s"]
            totals[1] += inst["cpu_s"]
            if other:
                before[name] = other["cpu_s"] / plain["cpu_s"]
            rows.append(_row(name, plain, inst, other))
            print(rows[-1], flush=True)

    benchmark.pedantic(run, rounds=1, iterations=1)
    med, top = statistics.median(ratios.values()), max(ratios.values())
    worst = max(ratios, key=ratios.get)
    over = sorted((n for n, r in ratios.items() if r > 3.0), key=lambda n: -ratios[n])
    summary = (f"instrumented / plain compile (CPU): median {med:.2f}x, max {top:.2f}x ({worst}) over "
               f"{len(ratios)} kernels; corpus total {totals[1]:.1f} s / {totals[0]:.1f} s = "
               f"{totals[1] / totals[0]:.2f}x; above 3x: {', '.join(f'{n} {ratios[n]:.1f}x' for n in over) or 'none'}")
    if before:
        summary += (f"; {other_tree}: median {statistics.median(before.values()):.2f}x, "
                    f"max {max(before.values()):.2f}x")
    print("\n" + summary)
    benchmark.extra_info.update({"ratios": ratios, "median_ratio": med, "max_ratio": top, "before_ratios": before,
                                 "total_ratio": totals[1] / totals[0]})


def test_vcycle_compile_time_ratio(benchmark):
    other_tree = _compare_tree()
    got = {}

    def run():
        got["plain"], got["inst"] = measure("plain", "vcycle"), measure("instrumented", "vcycle")
        if other_tree:
            got["other"] = measure("instrumented", "vcycle", other_tree)

    benchmark.pedantic(run, rounds=1, iterations=1)
    print("\n" + _row("vcycle", got["plain"], got["inst"], got.get("other")))
    benchmark.extra_info.update({k: v for k, v in got.items()})
    assert got["inst"]["record_sites"] > 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.path.insert(0, os.getcwd())
        print(json.dumps(_worker(sys.argv[2], sys.argv[3])))
    else:
        pytest.main([__file__, "--benchmark-enable", "-p", "no:cacheprovider", "-s"])
