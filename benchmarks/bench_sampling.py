"""End-to-end cost of a profile (trace + every feature + the GPU-time prediction), sampled and exact, against the
uninstrumented njit run of the same region in the same process (issue 34, part 6).

    .venv/bin/python -m pytest benchmarks/bench_sampling.py --benchmark-enable -p no:cacheprovider -s

Regions of at least 10^8 records (PORTCAST_BENCH_SCALE, default 1.0, multiplies the sizes): a streaming prange
(saxpy), a 2-D five-point stencil collapsed into one prange, Black-Scholes (transcendentals), and a gather with a
data-dependent branch; and one region of 10^10 records (Horner's rule on a polynomial of degree 800 over two
million points: long threads, little memory) profiled sampled only. Each is profiled by
``portcast.pipeline.profile`` with ``baseline=False`` (the uninstrumented run is timed here, apart) and the
plan ``--sample auto`` would choose for its record count (:func:`profiler.sampling.SamplePlan.auto`), and, for
the 10^8 regions, exactly (PORTCAST_BENCH_EXACT=0 skips those: several minutes). Then four corpus kernels
(`kernels/`) at their ``large`` size as a user profiles them: ``--sample auto`` sized from the njit baseline,
whose timing runs are part of the time. Prints one table: records, njit seconds (best of 3), profile seconds,
the ratio, and the predicted kernel time both ways.
"""

from __future__ import annotations

import math
import os
import time

import numba
import numpy as np
import pytest

from portcast.pipeline import profile
from profiler.sampling import SamplePlan

SCALE = float(os.environ.get("PORTCAST_BENCH_SCALE", "1.0"))
EXACT = os.environ.get("PORTCAST_BENCH_EXACT", "1") != "0"


@numba.njit
def saxpy(a, x, y, out):
    for i in numba.prange(x.shape[0]):
        out[i] = a * x[i] + y[i]


@numba.njit
def stencil5(a, b):
    n, m = a.shape
    for k in numba.prange((n - 2) * (m - 2)):
        i = 1 + k // (m - 2)
        j = 1 + k % (m - 2)
        b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@numba.njit
def black_scholes(s, k, t, r, v, call):
    for i in numba.prange(s.shape[0]):
        sq = v * math.sqrt(t[i])
        d1 = (math.log(s[i] / k[i]) + (r + 0.5 * v * v) * t[i]) / sq
        d2 = d1 - sq
        n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
        n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
        call[i] = s[i] * n1 - k[i] * math.exp(-r * t[i]) * n2


@numba.njit
def gather(idx, x, out):
    for i in numba.prange(idx.shape[0]):
        v = x[idx[i]]
        if v > 0.5:
            out[i] = v * v
        else:
            out[i] = 1.0 - v


@numba.njit
def horner(x, coef, out):
    for i in numba.prange(x.shape[0]):
        acc = 0.0
        for c in range(coef.shape[0]):
            acc = acc * x[i] + coef[c]
        out[i] = acc


def _size(n, frac=1.0):
    return max(64, int(n * SCALE * frac))


def _saxpy(frac=1.0):
    n = _size(15_000_000, frac)
    rng = np.random.default_rng(0)
    return saxpy, (2.0, rng.random(n), rng.random(n), np.empty(n))


def _stencil(frac=1.0):
    n = _size(3_000, frac)
    a = np.random.default_rng(1).random((n, 3_000))
    return stencil5, (a, np.zeros_like(a))


def _black_scholes(frac=1.0):
    n = _size(2_000_000, frac)
    rng = np.random.default_rng(2)
    return black_scholes, (rng.uniform(10, 100, n), rng.uniform(10, 100, n), rng.uniform(0.1, 2, n), 0.02, 0.3,
                           np.empty(n))


def _gather(frac=1.0):
    n = _size(12_000_000, frac)
    rng = np.random.default_rng(3)
    return gather, (rng.integers(0, n, n), rng.random(n), np.empty(n))


def _horner(frac=1.0):
    n = _size(2_000_000, frac)
    rng = np.random.default_rng(4)
    return horner, (rng.random(n), rng.random(800) / 800, np.empty(n))


def _njit_seconds(fn, args) -> float:
    serial = numba.njit(fn.py_func)  # the profile's CPU side: single-threaded, as portcast times it
    serial(*args)
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        serial(*args)
        best = min(best, time.perf_counter() - t0)
    return best


ROWS: list = []


def _report(benchmark, row: dict) -> None:
    """Keep ``row`` with the benchmark's figures and print the table of every region so far."""
    ROWS.append(row)
    benchmark.extra_info.update({k: v for k, v in row.items() if isinstance(v, (int, float, str))})
    print()
    print(f"{'region':<22}{'records':>15}{'njit s':>10}{'rate':>9}{'sampled s':>11}{'x njit':>9}"
          f"{'exact s':>10}{'x njit':>9}{'kernel (sampled / exact)':>30}")
    for r in ROWS:
        ex = f"{r['exact_s']:>10.2f}{r['exact_x']:>9.0f}" if "exact_s" in r else f"{'-':>10}{'-':>9}"
        ke = f"{r['kernel_sampled']:.4g} / {r['kernel_exact']:.4g}" if "kernel_exact" in r else \
            f"{r['kernel_sampled']:.4g}"
        print(f"{r['region']:<22}{r['records']:>15,}{r['njit_s']:>10.4f}{r['block_rate']:>9.2g}"
              f"{r['sampled_s']:>11.2f}{r['sampled_x']:>9.0f}{ex}{ke:>30}")


def _profile_seconds(fn, args, sample):
    t0 = time.perf_counter()
    rep = profile(fn, args, sample=sample, baseline=False, mode="compiled")
    return time.perf_counter() - t0, rep.regions[0]


@pytest.mark.parametrize("make", [_saxpy, _stencil, _black_scholes, _gather, _horner],
                         ids=["saxpy", "stencil5", "black_scholes", "gather", "horner_1e10"])
def test_profile_end_to_end(benchmark, make):
    fn, args = make()
    njit_s = _njit_seconds(fn, args)
    # a 1/64 instance compiles everything once and sizes the plan (as --sample auto does from the uninstrumented
    # run): the plan for 64 times its records
    _, small = _profile_seconds(fn, make(1 / 64)[1], "exact")
    plan = SamplePlan.auto(64 * small.records) or SamplePlan(1.0, 1.0)
    sampled_s, reg = benchmark.pedantic(_profile_seconds, args=(fn, args, plan), rounds=1, iterations=1)
    row = {"region": fn.__name__, "records": reg.records, "njit_s": njit_s, "block_rate": plan.block_rate,
           "sampled_s": sampled_s, "sampled_x": sampled_s / njit_s, "kernel_sampled": reg.prediction["kernel_s"],
           "interval": (reg.sample or {}).get("kernel_s_interval")}
    if EXACT and reg.records < 5e8:
        exact_s, ex = _profile_seconds(fn, args, "exact")
        row.update(exact_s=exact_s, exact_x=exact_s / njit_s, kernel_exact=ex.prediction["kernel_s"])
    _report(benchmark, row)


CORPUS = ["saxpy", "stencil2d", "black_scholes", "gather"]


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_kernel_end_to_end(benchmark, name):
    """A corpus kernel at its ``large`` size, the way a user runs it: ``portcast.profile(cpu, args,
    baseline_kind="njit")`` with ``--sample auto`` (the uninstrumented njit runs that size the sample are part of
    the time), against the region's njit run; and, with PORTCAST_BENCH_EXACT, the exact profile."""
    from kernels.registry import all_kernels

    spec = all_kernels()[name]
    n = spec.sizes["large"]
    if SCALE != 1.0:
        n = max(spec.sizes["tiny"], int(n * SCALE))
    njit_s = _njit_seconds(numba.njit(spec.cpu), spec.make_inputs(n, 0))
    profile(spec.cpu, spec.make_inputs(spec.sizes["small"], 0), sample="exact", baseline=False)  # compile once

    def run(sample):
        args = spec.make_inputs(n, 0)
        t0 = time.perf_counter()
        rep = profile(spec.cpu, args, sample=sample, baseline=True, baseline_kind="njit")
        return time.perf_counter() - t0, rep.regions[0]

    sampled_s, reg = benchmark.pedantic(run, args=("auto",), rounds=1, iterations=1)
    row = {"region": f"corpus {name}", "records": reg.records, "njit_s": njit_s,
           "block_rate": (reg.sample or {}).get("plan", {}).get("block_rate", 1.0), "sampled_s": sampled_s,
           "sampled_x": sampled_s / njit_s, "kernel_sampled": reg.prediction["kernel_s"],
           "interval": (reg.sample or {}).get("kernel_s_interval")}
    if EXACT:
        exact_s, ex = run("exact")
        row.update(exact_s=exact_s, exact_x=exact_s / njit_s, kernel_exact=ex.prediction["kernel_s"])
    _report(benchmark, row)
