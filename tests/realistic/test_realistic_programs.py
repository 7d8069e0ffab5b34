"""Realistic programs (realistic_programs.py): the thread space, the dependence verdicts and the features each
must get, in both tracing modes, and what `portcast profile` may say about them."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import realistic_programs as P

import features
from portcast.report import no_prediction_reason
from profiler.session import trace_function
from profiler.trace import MemorySink

MODES = ("interpreted", "compiled")
SRC = inspect.getsource(P).splitlines()


def line_of(tag: str) -> str:
    """``file:line`` of the loop tagged ``# <- tag`` in realistic_programs.py."""
    hits = [i + 1 for i, text in enumerate(SRC) if text.rstrip().endswith(f"# <- {tag}")]
    assert len(hits) == 1, tag
    return f"{P.__file__}:{hits[0]}"


def profile(fn, args, mode):
    fsink, msink = features.FeatureSink(), MemorySink()
    res = trace_function(fn, args, sinks=[fsink, msink], mode=mode)
    info, series = fsink.results[0]
    assert info.mode == mode, f"{fn.__name__} did not run in {mode} mode"
    return res, series, fsink.thread_spaces[0], msink.regions[0][2]


def loops_of(report):
    """The kernel loops of the source: (file:line, dims, verdict, launches, threads)."""
    return [(lp["location"], lp["dims"], lp["verdict"], lp["launches"], lp["threads"]) for lp in report["loops"]
            if lp["how"] != "library"]


def library_of(report):
    """The NumPy operations that launched: (call, verdict, launches, threads)."""
    return [(lp["header"], lp["verdict"], lp["launches"], lp["threads"]) for lp in report["loops"]
            if lp["how"] == "library"]


@pytest.mark.parametrize("mode", MODES)
def test_conjugate_gradient_kernels_live_in_the_helpers_under_a_host_loop(mode):
    res, f, ts, _ = profile(P.cg_solve, (*P.cg_inputs(64), 3), mode)
    assert ts["how"] == "inferred"
    assert loops_of(ts) == [
        (line_of("cg.dot"), 1, "reduction", 7, 64),  # once before the loop, twice per iteration
        (line_of("cg.spmv"), 1, "parallel", 3, 64),
        (line_of("cg.axpy"), 1, "parallel", 6, 64),
        (line_of("cg.update_p"), 1, "parallel", 3, 64),
    ]
    assert library_of(ts) == [("b.copy()", "parallel", 1, 64), ("b.copy()", "parallel", 1, 64),
                              ("np.zeros(n)", "parallel", 1, 64)]
    assert [r["location"] for r in ts["rejected"]] == [line_of("cg.iterations")]
    assert "`rho` is read before it is assigned" in ts["rejected"][0]["why"][0]
    assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == 7 * 63 and f["ts_atomicDeps"] == 0
    assert f["warp_threads"] == 64 and f["ts_kernels"] == 7 and f["warp_launches"] == 19 + 3
    assert f["ts_parallelFraction"] == pytest.approx(f["warp_parallelFraction"])
    assert 0.98 < f["ts_parallelFraction"] < 1
    assert no_prediction_reason(f) is None


@pytest.mark.parametrize("mode", ["interpreted"])  # a list of arrays per level: Python lists run interpreted
def test_multigrid_vcycle_smoother_and_restriction_are_3d_kernels(mode):
    rng = np.random.default_rng(1)
    u = [rng.random((s, s, s)) for s in (10, 6)]
    res, f, ts, _ = profile(P.mg_vcycle, ([x.copy() for x in u], [np.zeros_like(x) for x in u],
                                          [np.zeros_like(x) for x in u], 2), mode)
    assert loops_of(ts) == [(line_of("mg.smooth"), 3, "parallel", 4, 8 ** 3),
                            (line_of("mg.restrict"), 3, "parallel", 1, 4 ** 3)]
    why = {r["location"]: r["why"] for r in ts["rejected"]}
    assert set(why) == {line_of("mg.down"), line_of("mg.sweeps")}
    assert "reads `levels_f[lev]` (as `f[i, j, k]` in smooth3d) while the loop stores `levels_f[lev + 1]` (as " \
           "`coarse[i, j, k]` in restrict3d)" in why[line_of("mg.down")][0]
    assert "every iteration stores `levels_tmp[lev]` (as `out[i, j, k]` in smooth3d)" in why[line_of("mg.sweeps")][0]
    assert f["ts_carriedDeps"] == 0 and f["warp_threads"] == 512
    # branch-free 3-D nests: lockstep warps never diverge and run full (the nests' own latches and bounds are
    # index arithmetic, not thread instructions)
    assert f["warp_bdiv"] == 0 and f["warp_simdEfficiency"] == 1.0 and 0 < f["warp_coalescing"] <= 1


@pytest.mark.parametrize("mode", MODES)
def test_radix2_fft_bit_reversal_and_butterfly_stages(mode):
    rng = np.random.default_rng(2)
    x = rng.random(16) + 1j * rng.random(16)
    a = x.copy()
    res, f, ts, _ = profile(P.fft_radix2, (a, P.bit_reversal(16)), mode)
    np.testing.assert_allclose(a, np.fft.fft(x), rtol=1e-12, atol=1e-12)
    assert loops_of(ts) == [(line_of("fft.bitrev"), 1, "parallel", 1, 16),
                            (line_of("fft.butterflies"), 2, "parallel", 4, 8)]  # log2(16) stages of n/2 threads
    assert [r["location"] for r in ts["rejected"]] == [line_of("fft.stages")]
    assert any("scatters through loaded indices" in r for r in ts["loops"][0]["reasons"])
    assert f["ts_carriedDeps"] == 0


def test_fft_records_are_the_same_in_both_modes():
    x = np.random.default_rng(3).random(8) + 0j
    chunks = [profile(P.fft_radix2, (x.copy(), P.bit_reversal(8)), m)[3] for m in MODES]
    a, b = (c.columns() for c in chunks)
    for k in ("pc", "op", "taken", "src1", "src2", "src3", "dst", "size", "tid"):
        assert np.array_equal(a[k], b[k]), k


@pytest.mark.parametrize("mode", MODES)
def test_bucket_sort_count_is_atomic_scan_is_a_scan_scatter_is_sequential(mode):
    keys = np.random.default_rng(4).integers(0, 1 << 10, 200)
    out = np.zeros(200, np.int64)
    res, f, ts, _ = profile(P.bucket_sort, (keys, 16, 6, out), mode)
    assert np.array_equal(out, np.sort(keys, kind="stable")) or np.array_equal(np.sort(out), np.sort(keys))
    got = {lp["location"]: (lp["static"], lp["verdict"]) for lp in ts["loops"] if lp["how"] != "library"}
    assert [call for call, *_ in library_of(ts)] == ["np.zeros(nbuckets, np.int64)", "np.zeros(nbuckets, np.int64)"]
    assert got == {line_of("is.count"): ("atomic", "atomic"), line_of("is.scan"): ("scan", "reduction"),
                   line_of("is.scatter"): ("atomic", "sequential")}
    scatter = [lp for lp in ts["loops"] if lp["location"] == line_of("is.scatter")][0]
    assert {e["kind"] for e in scatter["examples"]} >= {"read_after_write"}
    assert f["ts_atomicDeps"] > 0 and f["ts_carriedDeps"] > 0
    assert f["ts_parallelFraction"] < 0.5
    assert no_prediction_reason(f).startswith("only ")


@pytest.mark.parametrize("mode", MODES)
def test_random_number_recurrence_is_no_thread_space(mode):
    out = np.zeros(50)
    res, f, ts, chunk = profile(P.lcg_fill, (out, 7), mode)
    assert ts["how"] == "none" and ts["loops"] == []
    assert ts["rejected"][0]["location"] == line_of("lcg.loop")
    assert "`x` is read before it is assigned" in ts["rejected"][0]["why"][0]
    assert (chunk.tid == -1).all() and f["warp_threads"] == 0
    assert no_prediction_reason(f).startswith("it has no parallel thread space")


@pytest.mark.parametrize("mode", MODES)
def test_kmeans_with_prange_in_helpers(mode):
    rng = np.random.default_rng(5)
    pts, cen = rng.random((64, 4)), rng.random((5, 4))
    res, f, ts, _ = profile(P.kmeans_fit, (pts, cen, np.zeros(64, np.int64), np.zeros(5, np.int64), 2), mode)
    assert ts["how"] == "marked"
    assert loops_of(ts) == [(line_of("km.assign"), 1, "parallel", 2, 64),
                            (line_of("km.update"), 1, "atomic", 2, 64)]
    assert f["ts_atomicDeps"] > 0 and f["ts_carriedDeps"] == 0


@pytest.mark.parametrize("mode", MODES)
def test_l2_norm_loop_is_a_reduction(mode):
    x = np.random.default_rng(6).random(100)
    res, f, ts, _ = profile(P.l2_norm_loop, (x,), mode)
    assert res.value == pytest.approx(math.sqrt(float(x @ x)))
    assert loops_of(ts) == [(line_of("l2.loop"), 1, "reduction", 1, 100)]
    assert ts["loops"][0]["reductions"] == ["s (+)"] and f["ts_reductionDeps"] == 99


@pytest.mark.parametrize("mode", MODES)
def test_l2_norm_with_numpy_calls_is_two_launches_like_the_loop(mode):
    x = np.random.default_rng(6).random(100)
    res, f, ts, chunk = profile(P.l2_norm_numpy, (x,), mode)
    assert res.value == pytest.approx(math.sqrt(float(x @ x)))
    assert ts["how"] == "library" and loops_of(ts) == []
    assert library_of(ts) == [("x * x", "parallel", 1, 100), ("np.sum(x * x)", "reduction", 1, 100)]
    assert f["ts_reductionDeps"] == 99 and f["ts_carriedDeps"] == 0 and f["warp_launches"] == 2
    # the explicit loops' work is in the trace: per element x * x loads both operands, multiplies, stores,
    # counts (6 records), the sum loads, adds, counts (4); then the accumulator's set-up, result and sqrt
    assert len(chunk) == 10 * 100 + 3
    assert f["fp"] == 201 / 1003 and f["mem"] == 400 / 1003
    assert no_prediction_reason(f) is None


@pytest.mark.parametrize("mode", MODES)
def test_black_scholes_options_are_threads(mode):
    rng = np.random.default_rng(7)
    S = rng.random(64) * 50 + 25
    call, put = np.zeros(64), np.zeros(64)
    res, f, ts, _ = profile(P.black_scholes, (S, S * 1.1, rng.random(64) + 0.1, 0.02, 0.3, call, put), mode)
    assert loops_of(ts) == [(line_of("bs.options"), 1, "parallel", 1, 64)]
    assert f["ts_parallelFraction"] == 1.0 and f["spf"] > 0.05
    assert f["warp_bdiv"] == 0 and f["warp_simdEfficiency"] == 1.0 and f["warp_launches"] == 1
    assert no_prediction_reason(f) is None


@pytest.mark.parametrize("mode", MODES)
def test_pairwise_distances_is_a_2d_thread_space(mode):
    X = np.random.default_rng(8).random((20, 3))
    D = np.zeros((20, 20))
    res, f, ts, _ = profile(P.pairwise_distances, (X, D), mode)
    assert loops_of(ts) == [(line_of("pd.pairs"), 2, "parallel", 1, 400)]
    assert f["warp_bdiv"] == 0 and f["warp_simdEfficiency"] == 1.0
    np.testing.assert_allclose(D, np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)))


@pytest.mark.parametrize("mode", MODES)
def test_crc_over_bytes_is_sequential(mode):
    data = np.random.default_rng(9).integers(0, 256, 100).astype(np.uint8)
    res, f, ts, _ = profile(P.crc32, (data, P.crc_table()), mode)
    import zlib

    assert res.value == zlib.crc32(data.tobytes())
    assert ts["how"] == "none" and ts["rejected"][0]["location"] == line_of("crc.bytes")
    assert "`crc` is read before it is assigned" in ts["rejected"][0]["why"][0]


@pytest.mark.parametrize("mode", MODES)
def test_mandelbrot_pixels_are_a_2d_thread_space_with_sequential_escape_loops(mode):
    out = np.zeros((8, 10), np.int64)
    res, f, ts, _ = profile(P.mandelbrot, (out, -2.0, -1.0, 0.3, 0.25, 30), mode)
    assert loops_of(ts) == [(line_of("mb.rows"), 2, "parallel", 1, 80)]
    assert f["ts_parallelFraction"] > 0.999 and out.max() == 30 and out.min() >= 1
    # escape loops of different lengths: threads of a warp leave at different times
    assert f["warp_bdiv"] > 0.05 and f["warp_simdEfficiency"] < 0.8
