"""The fused PPM update (features/branch.py: four organisations per pass over the orders, branch-free
saturating counters) against the reference's independent predictors, at odd history sets."""

import numpy as np
from featref import ppm, records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features import BranchAnalyzer
from profiler.trace import TraceChunk


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 1)), min_size=0, max_size=300),
       st.lists(st.integers(0, 7), min_size=1, max_size=4, unique=True), st.sampled_from([1, 5, 4096]))
def test_ppm_matches_reference_at_odd_histories(branches, histories, chunk_records):
    n = len(branches)
    pcs = np.array([p for p, _ in branches], np.int64)
    taken = np.array([t for _, t in branches], np.uint8)
    chunk = TraceChunk.from_columns(pc=pcs, op=np.full(n, Op.BRANCH), taken=taken)
    a = BranchAnalyzer(histories)
    for c in chunk.split(chunk_records) if n else [chunk]:
        a.consume(c)
    want = ppm(records(chunk), tuple(sorted(histories)))
    got = a.result()
    for name, v in want.items():
        assert got[name] == v, name


def test_ppm_worked_example_alternating_branch():
    """One branch alternating T, N, T, N, ... (8 outcomes) at history 0 and 1.

    h = 0 (one counter): predicts T (unseen), then T (1 T), T (1-1 tie -> T), T, ...: wrong at every N, 4
    misses. h = 1: first T predicted (unseen context: no miss); N after T: the order-1 context "T" is unseen,
    order 0 has 1 T -> predicts T, miss; T after N: context "N" unseen, order 0 tie -> T, hit; N after T:
    context "T" saw N once -> predicts N, hit; from then on every order-1 context has seen only its
    successor: hits. 1 miss.
    """
    chunk = TraceChunk.from_columns(pc=np.full(8, 3), op=np.full(8, Op.BRANCH),
                                    taken=np.array([1, 0] * 4, np.uint8))
    for kind in ("GAg", "PAg", "GAs", "PAs"):
        a = BranchAnalyzer((0, 1))
        a.consume(chunk)
        got = a.result()
        assert got[f"mica_ppm_{kind}_h0"] == 4 / 8
        assert got[f"mica_ppm_{kind}_h1"] == 1 / 8
