"""Speed of the event-timeline core (the part a trace-driven SIMT model will call for every SM and interval).

Run: .venv/bin/python -m pytest benchmarks/bench_dvfs.py --benchmark-enable -p no:cacheprovider

The baselines run the same functions interpreted (``py_func`` of the Numba kernels) on a smaller stream;
compare per-instruction times (the benchmark names carry the sizes).
"""

from __future__ import annotations

import dataclasses

import pytest

from gpu_models.dvfs.synthetic_timelines import PROFILES, generate
from gpu_models.dvfs.timeline import _counters, _simulate, derive_counters, simulate

BIG = 1_000_000
SMALL = 20_000


def _stream(n):
    prof = dataclasses.replace(next(p for p in PROFILES if p.name == "mixed"), n=n)
    return generate(prof, 1)


@pytest.fixture(scope="module")
def big():
    t = _stream(BIG)
    simulate(t, 700.0)  # compile outside the timing
    return t


@pytest.fixture(scope="module")
def small():
    return _stream(SMALL)


def test_simulate_1m_instructions(benchmark, big):
    ex = benchmark(simulate, big, 700.0)
    assert ex.cycles > BIG


def test_derive_counters_1m_instructions(benchmark, big):
    ex = simulate(big, 700.0)
    derive_counters(ex, 450.0)
    rec = benchmark(derive_counters, ex, 450.0)
    assert rec.total == pytest.approx(ex.total_ns)


def test_simulate_20k_interpreted_baseline(benchmark, small):
    args = (small.kind, small.latency_ns, small.dep_ptr, small.dep_idx, small.store_queue_depth, 1000.0 / 700.0)
    state, li, lr = benchmark.pedantic(_simulate.py_func, args=args, rounds=1, iterations=1)
    assert state.shape[0] == simulate(small, 700.0).cycles


def test_derive_counters_20k_interpreted_baseline(benchmark, small):
    ex = simulate(small, 700.0)
    out = benchmark.pedantic(_counters.py_func, args=(ex.state, ex.load_issue, ex.load_ready, 450.0 / (1000.0 / 700.0)),
                             rounds=1, iterations=1)
    assert out[0] == ex.cycles
