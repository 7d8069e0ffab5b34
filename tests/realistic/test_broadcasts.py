"""Broadcasts and element-wise NumPy expressions (issue 31, item 4): each NumPy operation at host level is a
launch of independent element threads, in both tracing modes, with the same records in both. The RBF kernel
map (realistic_programs.py) and its negative twin, whose step loop carries the centres."""

from __future__ import annotations

import numpy as np
import pytest
import realistic_programs as P
from test_realistic_programs import MODES, library_of, line_of, profile

from portcast.report import no_prediction_reason
from profiler.runtime import device_address as _dev


def rbf_1d(xs, centers, gamma):
    d = xs[:, None] - centers[None, :]
    return np.exp(-gamma * d * d)


def broadcast_sums(X, C):
    diff = X[:, None, :] - C[None, :, :]
    sq = diff ** 2
    return sq.sum(axis=0), np.sum(sq), sq.sum(axis=-1), X[:, None, :] ** C[None, :, :]


def rbf_inputs(n, m, d):
    rng = np.random.default_rng(31)
    return rng.random((n, d)), rng.random((m, d))


@pytest.mark.parametrize("mode", MODES)
def test_rbf_kernel_map_every_operation_is_a_parallel_launch(mode):
    X, C = rbf_inputs(50, 30, 3)
    res, f, ts, chunk = profile(P.rbf_kernel_map, (X, C, 0.5), mode)
    np.testing.assert_allclose(res.value, np.exp(-0.5 * ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)))
    assert ts["how"] == "library" and ts["rejected"] == []
    # the broadcast and the product: n*m*d threads; the sum over the last axis: a thread per (i, j) summing
    # its d products in its own accumulator (parallel, no reduction across threads); then n*m threads
    assert library_of(ts) == [("X[:, None, :] - C[None, :, :]", "parallel", 1, 4500),
                              ("diff * diff", "parallel", 1, 4500),
                              ("(diff * diff).sum(axis=-1)", "parallel", 1, 1500),
                              ("-gamma * d2", "parallel", 1, 1500),
                              ("np.exp(-gamma * d2)", "parallel", 1, 1500)]
    assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == 0 and f["ts_atomicDeps"] == 0
    assert f["ts_kernels"] == 5 and f["warp_launches"] == 5 and f["warp_threads"] == 4500
    # the host's records: the two views (OTHER) and -gamma
    assert (chunk.tid < 0).sum() == 3 and f["ts_parallelFraction"] == 1 - 3 / len(chunk)
    assert no_prediction_reason(f) is None


@pytest.mark.parametrize("mode", MODES)
def test_rbf_refine_step_loop_is_rejected_its_operations_are_the_thread_space(mode):
    X, C = rbf_inputs(50, 30, 3)
    res, f, ts, _ = profile(P.rbf_refine, (X, C, 0.5, 3), mode)
    want = C
    for _ in range(3):
        w = np.exp(-0.5 * ((X[:, None, :] - want[None, :, :]) ** 2).sum(-1))
        want = (w.T @ X) / w.sum(axis=0)[:, None]
    np.testing.assert_allclose(res.value, want)
    assert ts["how"] == "library"
    assert [r["location"] for r in ts["rejected"]] == [line_of("rbfr.steps")]
    assert "`C` is read before it is assigned" in ts["rejected"][0]["why"][0]
    # three steps: each operation launches once per step; the division by the broadcast column of sums is
    # 30 x 3 threads, each loading its own sum
    b = "X[:, None, :] - C[None, :, :]"
    assert library_of(ts) == [(b, "parallel", 3, 4500),
                              (f"({b}) ** 2", "parallel", 3, 4500),
                              (f"(({b}) ** 2).sum(axis=-1)", "parallel", 3, 1500),
                              (f"-gamma * (({b}) ** 2).sum(axis=-1)", "parallel", 3, 1500),
                              (f"np.exp(-gamma * (({b}) ** 2).sum(axis=-1))", "parallel", 3, 1500),
                              ("w.T @ X", "parallel", 3, 90),
                              ("w.sum(axis=0)", "parallel", 3, 30),
                              ("w.T @ X / w.sum(axis=0)[:, None]", "parallel", 3, 90)]
    assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == 0
    assert f["ts_kernels"] == 8 and f["warp_launches"] == 24


@pytest.mark.parametrize("mode", MODES)
def test_the_issue_example_a_1d_outer_difference_is_parallel(mode):
    # xs[:, None] - centers[None, :]: xs[i] is the same along row i, and every thread of the row loads it
    xs, centers = (v[:, 0] for v in rbf_inputs(50, 30, 1))
    res, f, ts, chunk = profile(rbf_1d, (xs, centers, 0.5), mode)
    np.testing.assert_allclose(res.value, np.exp(-0.5 * (xs[:, None] - centers[None, :]) ** 2))
    assert library_of(ts) == [("xs[:, None] - centers[None, :]", "parallel", 1, 1500),
                              ("-gamma * d", "parallel", 1, 1500), ("-gamma * d * d", "parallel", 1, 1500),
                              ("np.exp(-gamma * d * d)", "parallel", 1, 1500)]
    assert f["ts_carriedDeps"] == 0 and (chunk.tid < 0).sum() == 3  # the host's: the two views and -gamma
    assert f["ts_parallelFraction"] == 1 - 3 / len(chunk)
    assert no_prediction_reason(f) is None


@pytest.mark.parametrize("mode", MODES)
def test_kernel_map_with_one_feature_is_parallel(mode):
    # d = 1: X[:, None, :] repeats X[i, 0] along the middle axis, consecutive elements of the broadcast
    X, C = rbf_inputs(50, 30, 1)
    res, f, ts, _ = profile(P.rbf_kernel_map, (X, C, 0.5), mode)
    np.testing.assert_allclose(res.value, np.exp(-0.5 * (X - C[:, 0]) ** 2))
    assert library_of(ts) == [("X[:, None, :] - C[None, :, :]", "parallel", 1, 1500),
                              ("diff * diff", "parallel", 1, 1500),
                              ("(diff * diff).sum(axis=-1)", "parallel", 1, 1500),
                              ("-gamma * d2", "parallel", 1, 1500),
                              ("np.exp(-gamma * d2)", "parallel", 1, 1500)]
    assert f["ts_carriedDeps"] == 0 and no_prediction_reason(f) is None


@pytest.mark.parametrize("mode", MODES)
def test_reductions_of_a_broadcast_result_and_powers(mode):
    # a GPU port of a sum along an axis runs a thread per output element, summing in its own register: a
    # parallel launch; a full sum runs a thread per element, the accumulator a reduction across them
    X, C = rbf_inputs(8, 5, 3)
    res, f, ts, _ = profile(broadcast_sums, (X, C), mode)
    sq = (X[:, None, :] - C[None, :, :]) ** 2
    for got, want in zip(res.value, (sq.sum(axis=0), sq.sum(), sq.sum(axis=-1), X[:, None, :] ** C[None, :, :])):
        np.testing.assert_allclose(got, want)
    assert library_of(ts) == [("X[:, None, :] - C[None, :, :]", "parallel", 1, 120),
                              ("diff ** 2", "parallel", 1, 120),
                              ("sq.sum(axis=0)", "parallel", 1, 15),
                              ("np.sum(sq)", "reduction", 1, 120),
                              ("sq.sum(axis=-1)", "parallel", 1, 40),
                              ("X[:, None, :] ** C[None, :, :]", "parallel", 1, 120)]
    assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == 119


@pytest.mark.parametrize("fn, args", [(P.rbf_kernel_map, (*rbf_inputs(7, 5, 3), 0.5)),
                                      (P.rbf_refine, (*rbf_inputs(7, 5, 2), 0.5, 2)),
                                      (rbf_1d, (np.arange(6.0), np.arange(4.0), 0.5))])
def test_broadcast_records_are_the_same_in_both_modes(fn, args):
    chunks = [profile(fn, args, m)[3] for m in MODES]
    a, b = (c.columns() for c in chunks)
    assert len(chunks[0]) == len(chunks[1]) > 0
    for k in ("pc", "op", "taken", "src1", "src2", "src3", "dst", "size", "tid"):
        assert np.array_equal(a[k], b[k]), k
    for arr in (x for x in args if isinstance(x, np.ndarray)):  # the inputs' addresses; temporaries may differ
        lo, hi = _dev(arr), _dev(arr) + arr.nbytes
        ina, inb = (a["addr"] >= lo) & (a["addr"] < hi), (b["addr"] >= lo) & (b["addr"] < hi)
        assert np.array_equal(ina, inb) and np.array_equal(a["addr"][ina], b["addr"][inb])
