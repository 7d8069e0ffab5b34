"""The feature engine on several threads: analyzers of a chunk run concurrently, results stay identical.

Every analyzer's Numba kernels release the GIL; :class:`FeatureEngine` hands groups of analyzers (balanced
by the CPU time each spent so far) to a thread pool and waits for all of them before ``consume`` returns.
"""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from features import FeatureEngine
from features import engine as engine_mod
from features.engine import COST_NS, FeatureSink, _groups, default_threads
from features.mix import MixAnalyzer
from features.synthetic_trace import synthetic_trace
from profiler.session import trace_function


def _features(trace, chunk_records, threads, families=None):
    e = FeatureEngine(families, threads=threads)
    e.min_parallel_records = 1  # hand every chunk to the threads, however short
    for c in trace.split(chunk_records):
        e.consume(c)
    return e.result(), e.contributions()


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 6000), seed=st.integers(0, 50), chunk=st.integers(1, 4000), threads=st.integers(2, 5))
def test_threads_give_exactly_the_serial_features(n, seed, chunk, threads):
    trace = synthetic_trace(n, seed=seed)
    serial, serial_c = _features(trace, max(chunk, 1), 1)
    par, par_c = _features(trace, max(chunk, 1), threads)
    assert par.index.tolist() == serial.index.tolist()
    assert par.to_numpy().tobytes() == serial.to_numpy().tobytes()  # bit for bit
    assert par_c == serial_c


def test_threads_with_a_subset_of_families_and_more_threads_than_analyzers():
    trace = synthetic_trace(20_000, seed=3)
    fams = ["ilp", "reuse"]
    serial, _ = _features(trace, 5000, 1, fams)
    par, _ = _features(trace, 5000, 8, fams)
    assert par.to_numpy().tobytes() == serial.to_numpy().tobytes()


def test_groups_balance_by_cost_longest_first():
    # by cost: 6.0 -> g0 (6, 0); 5.0 -> g1 (6, 5); 3.0 -> g1 (6, 8); 2.0 -> g0 (8, 8); 1.0 -> g0, the first
    # of the least loaded (9, 8)
    assert _groups([1.0, 6.0, 3.0, 5.0, 2.0], 2) == [[0, 1, 4], [2, 3]]
    assert _groups([1.0, 1.0], 4) == [[0], [1]]  # no empty groups
    assert _groups([2.0, 2.0, 2.0], 1) == [[0, 1, 2]]
    # the calling thread's group starts loaded with the block mapping (7): 6.0 -> g1 (7, 6); 5.0 -> g1 (7, 11);
    # 3.0 -> g0 (10, 11); 2.0 -> g0 (12, 11); 1.0 -> g1 (12, 12)
    assert _groups([1.0, 6.0, 3.0, 5.0, 2.0], 2, first_load=7.0) == [[2, 4], [0, 1, 3]]
    assert _groups([1.0, 1.0], 2, first_load=5.0) == [[], [0, 1]]  # the caller only maps


def test_work_is_spread_over_threads_and_balanced_by_measured_time(monkeypatch):
    seen = {}
    real = engine_mod.FeatureEngine._run

    def spy(self, which, chunk, refs):
        seen.setdefault(threading.get_ident(), set()).update(type(self.analyzers[i]).__name__ for i in which)
        return real(self, which, chunk, refs)

    monkeypatch.setattr(engine_mod.FeatureEngine, "_run", spy)
    e = FeatureEngine(threads=2)
    for c in synthetic_trace(3 * 8192, seed=1).split(8192):
        e.consume(c)
    assert len(seen) == 2  # the calling thread and one pool thread
    assert all(s > 0 for s in e._spent)  # every analyzer's time is measured, for the next split


class _Boom(MixAnalyzer):
    family = "boom"

    def consume(self, chunk):
        raise RuntimeError("analyzer failed on purpose")


def test_an_analyzer_failing_on_a_pool_thread_raises_in_the_caller():
    # first split by COST_NS (boom: the default 3.0; the caller's group starts with the block mapping, 7.0):
    # caller: nothing | warp | ilp | reuse + boom, so boom fails on a pool thread
    e = FeatureEngine([_Boom(), "ilp", "reuse", "warp"], threads=4)
    costs = [COST_NS.get(a.family, 3.0) for a in e.analyzers]
    assert _groups(costs, 4, first_load=COST_NS["blockmap"]) == [[], [3], [1], [0, 2]]
    e.min_parallel_records = 1
    with pytest.raises(RuntimeError, match="analyzer failed on purpose"):
        e.consume(synthetic_trace(5000, seed=0))


def test_threads_setting_and_its_errors(monkeypatch):
    monkeypatch.setenv("PORTCAST_FEATURE_THREADS", "3")
    assert default_threads() == 3
    assert FeatureEngine().threads == 3
    monkeypatch.setenv("PORTCAST_FEATURE_THREADS", "zero")
    with pytest.raises(ValueError, match=r"PORTCAST_FEATURE_THREADS='zero' is not an integer"):
        default_threads()
    monkeypatch.setenv("PORTCAST_FEATURE_THREADS", "0")
    with pytest.raises(ValueError, match=r"must be >= 1"):
        default_threads()
    monkeypatch.delenv("PORTCAST_FEATURE_THREADS")
    assert 1 <= default_threads() <= 4
    with pytest.raises(ValueError, match="threads must be >= 1, got 0"):
        FeatureEngine(threads=0)


def _saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def test_compiled_regions_lazy_chunks_through_the_threaded_sink():
    """Chunks of the compiled tracer decode their columns lazily, once per group under a lock, whichever
    thread reads first, so the threaded sink gets exactly the serial features."""
    x = np.random.default_rng(0).random(30_000)
    # one y for both runs: a new array may lie at another 64-byte alignment, which moves the block and sector
    # features (docs/features.md, "Placement")
    y = np.empty_like(x)
    out = []
    for threads in (1, 2):
        sink = FeatureSink(threads=threads)
        y[:] = 1.0
        res = trace_function(_saxpy, (2.0, x, y), sinks=[sink], mode="compiled", chunk_records=1 << 13)
        assert res.info.mode == "compiled"
        out.append(sink.results[0][1])
    assert out[1].to_numpy().tobytes() == out[0].to_numpy().tobytes()


def test_a_failing_block_mapping_raises_and_no_pool_thread_waits_forever(monkeypatch):
    from features.fast.blocks import BlockMap

    def broken(self, chunk):
        raise RuntimeError("block map failed on purpose")

    e = FeatureEngine(["ilp", "reuse", "footprint", "warp", "branch"], threads=3)
    e.min_parallel_records = 1
    monkeypatch.setattr(BlockMap, "map", broken)
    with pytest.raises(RuntimeError, match="block map failed on purpose"):
        e.consume(synthetic_trace(5000, seed=0))
    # the pool is free again: a fresh engine runs a chunk on it (the reuse and ILP threads did not hang)
    monkeypatch.undo()
    serial, _ = _features(synthetic_trace(9000, seed=2), 3000, 1)
    par, _ = _features(synthetic_trace(9000, seed=2), 3000, 3)
    assert par.to_numpy().tobytes() == serial.to_numpy().tobytes()
