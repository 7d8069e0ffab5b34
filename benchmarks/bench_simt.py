"""Speed of the SIMT timing model.

Run: .venv/bin/python -m pytest benchmarks/bench_simt.py --benchmark-enable -p no:cacheprovider

Goals (issue 8): >= 5 M warp instructions per second per core for one configuration, and a 448-configuration
sweep of a 10^6-instruction region in under a minute. The region is a mix of the synthetic kernels (streaming
with computation, random gathers, a divergent branch), about 10^6 thread instructions. Each benchmark stores
its rate in ``extra_info`` (warp instructions per second, single thread unless stated);
``test_one_configuration_part`` times the region's three parts alone (where the time goes).

Before/after a kernel change, in one process with interleaved rounds (CPU time):
``python benchmarks/bench_simt.py OLD_MODEL.py [ROUNDS]`` (:func:`compare_kernels`).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpu_models.simt import synthetic_kernels as sy
from gpu_models.simt.config import load_config
from gpu_models.simt.model import _kernel_args, _run, simulate
from gpu_models.simt.sweep import SweepGrid, sweep_stats
from gpu_models.simt.threads import build_streams
from profiler.trace import TraceChunk


def _region_1m() -> TraceChunk:
    parts = [sy.stream_kernel(16384, flops=32), sy.gather_kernel(4096, loads=4, flops=16),
             sy.divergent_kernel(2048, 24)]
    # give every part its own thread ids so the region is one parallel loop
    off = 0
    out = []
    for p in parts:
        p.tid[:] += off
        off = int(p.tid.max()) + 1
        out.append(p)
    return TraceChunk.concat(out)


@pytest.fixture(scope="module")
def region():
    ch = _region_1m()
    s = build_streams(ch, 256)
    simulate(s, load_config("gtx480"), crisp=False)  # compile outside the timing
    return ch, s


def _single(streams, cfg):
    return _run(*_kernel_args(streams, cfg, cfg.sm_count, cfg.core_mhz, cfg.mem_mhz), -1)[0]


@pytest.mark.parametrize("gpu", ["gtx480", "h100"])
def test_one_configuration(benchmark, region, gpu):
    ch, s = region
    cfg = load_config(gpu)
    _single(s, cfg)
    benchmark.pedantic(_single, args=(s, cfg), rounds=21, iterations=1)
    benchmark.extra_info.update(thread_instructions=len(ch), warp_instructions=s.n,
                                warp_instructions_per_s=s.n / benchmark.stats.stats.median)


_PARTS = {
    "stream": lambda: sy.stream_kernel(16384, flops=32),
    "gather": lambda: sy.gather_kernel(4096, loads=4, flops=16),
    "divergent": lambda: sy.divergent_kernel(2048, 24),
}


@pytest.mark.parametrize("part", sorted(_PARTS))
@pytest.mark.parametrize("gpu", ["gtx480", "h100"])
def test_one_configuration_part(benchmark, gpu, part):
    """Each part of the benchmark region alone: where the time of one configuration goes."""
    s = build_streams(_PARTS[part](), 256)
    cfg = load_config(gpu)
    _single(s, cfg)
    benchmark.pedantic(_single, args=(s, cfg), rounds=7, iterations=1)
    benchmark.extra_info.update(warp_instructions=s.n, sectors=int(s.sectors.shape[0]),
                                warp_instructions_per_s=s.n / benchmark.stats.stats.median)


def test_build_streams(benchmark, region):
    ch, s = region
    benchmark.pedantic(build_streams, args=(ch, 256), rounds=3, iterations=1)
    benchmark.extra_info.update(thread_instructions=len(ch),
                                thread_instructions_per_s=len(ch) / benchmark.stats.stats.median)


def test_sweep_448(benchmark, region):
    ch, s = region
    cfg = load_config("gtx480")
    grid = SweepGrid.default(cfg)
    out = benchmark.pedantic(sweep_stats, args=(s, cfg, grid), rounds=1, iterations=1)
    assert out.shape[0] == 448 and np.all(out[:, 0] > 0)
    benchmark.extra_info.update(configurations=448, warp_instructions=s.n, thread_instructions=len(ch),
                                warp_instructions_per_s_all_threads=448 * s.n / benchmark.stats.stats.median)


def compare_kernels(old_model: str, rounds: int = 31) -> list[dict]:
    """Time a previous revision of ``gpu_models/simt/model.py`` against the current one in one process.

    Both kernels run the benchmark region and its parts on the two presets, rounds interleaved (the order
    alternates), timed with ``time.process_time``; every simulated statistic and ``sm_end`` are compared first.

    Parameters
    ----------
    old_model : str
        Path of the previous model.py (e.g. ``git show REV:gpu_models/simt/model.py > /tmp/old_model.py``).
    rounds : int
        Rounds per kernel.

    Returns
    -------
    list of dict
        Per GPU and part: warp instructions, median and minimum CPU time of each kernel (s).
    """
    import importlib.util
    import statistics
    import sys
    import time

    from gpu_models.simt import model as new

    spec = importlib.util.spec_from_file_location("_simt_old_model", old_model)
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old  # its dataclasses look their module up while the module runs
    spec.loader.exec_module(old)
    cases = {"region": build_streams(_region_1m(), 256)}
    cases.update({p: build_streams(make(), 256) for p, make in sorted(_PARTS.items())})
    rows = []
    for gpu in ("gtx480", "h100"):
        cfg = load_config(gpu)
        for part, s in cases.items():
            runs = {k: (lambda m=m: m._run(*m._kernel_args(s, cfg, cfg.sm_count, cfg.core_mhz, cfg.mem_mhz), -1))
                    for k, m in (("old", old), ("new", new))}
            a, b = runs["old"](), runs["new"]()
            if not (np.array_equal(a[0][:25], b[0][:25]) and np.array_equal(a[1], b[1])):
                raise AssertionError(f"{gpu} {part}: the kernels disagree")
            times = {"old": [], "new": []}
            for r in range(rounds):
                for k in (("old", "new") if r % 2 == 0 else ("new", "old")):
                    t0 = time.process_time()
                    runs[k]()
                    times[k].append(time.process_time() - t0)
            rows.append({"gpu": gpu, "part": part, "warp_instructions": s.n,
                         **{f"{k}_median_s": statistics.median(v) for k, v in times.items()},
                         **{f"{k}_min_s": min(v) for k, v in times.items()}})
    return rows


if __name__ == "__main__":  # python benchmarks/bench_simt.py OLD_MODEL.py [ROUNDS]
    import sys

    for row in compare_kernels(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 31):
        n, old_s, new_s = row["warp_instructions"], row["old_median_s"], row["new_median_s"]
        print(f"{row['gpu']:7s} {row['part']:10s} old {old_s * 1e3:6.2f} ms (min {row['old_min_s'] * 1e3:6.2f})"
              f"  new {new_s * 1e3:6.2f} ms (min {row['new_min_s'] * 1e3:6.2f})"
              f"  x{old_s / new_s:.2f}  new {n / new_s / 1e6:.2f} M warp instr/s")
