"""The engine's fast paths against the reference: register tokens indexed directly and through the hash
index (switching mid-trace), and the cheap families run together on the synthetic trace."""

import math

import numpy as np
from featref import all_features, ilp_cycles, records, regs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.trace_schema import Op
from features import FeatureEngine, IlpAnalyzer, RegisterTrafficAnalyzer
from features.ilp import DIRECT_TOKENS
from features.synthetic_trace import synthetic_trace
from profiler.native.importers import TEMP_TOKEN_BASE
from profiler.trace import TraceChunk

COUNT_FEATURES = {
    "mica_instructions", "mica_branches", "mica_staticBranches", "mica_loadBlockRefs", "mica_dataBlocks",
    "mica_dataPages", "mica_instrFootprint", "warp_threads",
}
OPS = [int(o) for o in Op] + [Op.LOAD] * 6 + [Op.STORE] * 3 + [Op.BRANCH] * 5
# small tokens (direct table) and tokens beyond it (hash index): a trace may switch in the middle
TOKENS = st.one_of(st.integers(0, 6), st.integers(0, 6), st.sampled_from([DIRECT_TOKENS - 1, DIRECT_TOKENS,
                                                                           DIRECT_TOKENS + 3, (1 << 31) - 1]))


@st.composite
def record(draw):
    op = draw(st.sampled_from(OPS))
    pc = 1 + 3 * op + draw(st.integers(0, 2))
    mem = op in (Op.LOAD, Op.STORE)
    addr = draw(st.one_of(st.integers(0, 300), st.integers(0, 1 << 40))) if mem else 0
    size = draw(st.sampled_from([1, 8, 64, 100])) if mem else 0
    taken = draw(st.integers(0, 1)) if op == Op.BRANCH else 0
    regs_ = [draw(TOKENS) for _ in range(4)]
    tid = draw(st.integers(-1, 80))
    return (pc, op, taken, *regs_, addr, size, tid)


traces = st.lists(record(), min_size=0, max_size=120).map(TraceChunk.from_records)


def _assert_matches(ref, got):
    for name, want in ref.items():
        v = float(got[name])
        assert not math.isnan(v), name
        if name in COUNT_FEATURES:
            assert v == want, (name, v, want)
        else:
            assert abs(v - want) <= 1e-12 * max(1.0, abs(want)), (name, v, want)


def _run(chunk, chunk_records, families=None):
    e = FeatureEngine(families)
    for c in (chunk.split(chunk_records) if chunk_records and len(chunk) else [chunk]):
        e.consume(c)
    return e.result()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces)
def test_large_register_tokens_match_reference_at_every_chunk_size(chunk):
    ref = all_features(chunk)
    whole = _run(chunk, None)
    _assert_matches(ref, whole)
    for cr in (1, 7):
        got = _run(chunk, cr)
        assert np.array_equal(got.to_numpy(), whole.to_numpy()), cr


def _ilp_and_regs_match_reference(toks, rng, split):
    """INT_ALU/LOAD/STORE records with the register tokens ``toks`` (4 x n: src1, src2, src3, dst), fed to ILP
    and register traffic in chunks of ``split`` records; both must give the reference's values. Returns the
    two analyzers."""
    n = toks.shape[1]
    chunk = TraceChunk.from_columns(
        pc=np.ones(n, np.int32), op=rng.choice([Op.INT_ALU, Op.LOAD, Op.STORE], size=n),
        src1=toks[0], src2=toks[1], src3=toks[2], dst=toks[3],
        addr=rng.integers(0, 4096, size=n), size=np.full(n, 8),
    )
    recs = records(chunk)
    ilp = IlpAnalyzer((4, 32, 256))
    rt = RegisterTrafficAnalyzer()
    for c in chunk.split(split):
        ilp.consume(c)
        rt.consume(c)
    assert ilp.cycles() == {w: ilp_cycles(recs, w) for w in (4, 32, 256)}
    want = regs(recs)
    got = rt.result()
    for k, v in want.items():
        assert got[k] == v, k
    return ilp, rt


def test_ilp_and_regs_switch_from_direct_tokens_to_hash_mid_trace():
    """Small tokens first (direct tables), then a token >= DIRECT_TOKENS: the state moves to the hash index."""
    n = 3000
    rng = np.random.default_rng(3)
    small = rng.integers(0, 40, size=(4, n))
    big = small.copy()
    big[:, n // 2:] += np.where(rng.random((4, n - n // 2)) < 0.3, DIRECT_TOKENS, 0) * (small[:, n // 2:] > 0)
    for toks in (small, big):
        ilp, _ = _ilp_and_regs_match_reference(toks, rng, 500)
        assert ilp.direct == (toks is small)


def test_native_recorder_tokens_stay_in_the_direct_tables():
    """The native recorder's tokens: guest-state offsets (below 1,000 on amd64) and its load and compute
    temporaries at TEMP_TOKEN_BASE + 0..4 (65536..65540). ILP and register traffic keep them in the direct
    tables (the hash index cost ILP 2.5x on native traces) with the reference's values."""
    n = 4000
    rng = np.random.default_rng(5)
    toks = np.where(rng.random((4, n)) < 0.4, TEMP_TOKEN_BASE + rng.integers(0, 5, size=(4, n)),
                    8 * rng.integers(2, 120, size=(4, n)))
    ilp, rt = _ilp_and_regs_match_reference(toks, rng, 700)
    assert ilp.direct and rt.direct


def test_fast_families_equal_separate_analyzers_on_synthetic_trace():
    """mix + stride + bdiv in one engine give exactly what each analyzer gives alone, and the reference's values."""
    chunk = synthetic_trace(50_000, seed=3)
    fused = _run(chunk, 4093, ["mix", "stride", "bdiv"])
    alone = [_run(chunk, 4093, [f]) for f in ("mix", "stride", "bdiv")]
    for s in alone:
        for name, v in s.items():
            assert fused[name] == v, name
    ref = all_features(chunk.slice(0, 6000), ilp_windows=(32,), bdiv_windows=(16, 32, 64, 128, 256, 512, 1024))
    got = _run(chunk.slice(0, 6000), 1000, ["mix", "stride", "bdiv"])
    _assert_matches({k: v for k, v in ref.items() if k in got.index}, got)
