"""Speed of the exhaustive interaction search (issue 4 goals, 2-core machine).

Run: .venv/bin/python -m pytest benchmarks/bench_predictor.py --benchmark-enable -p no:cacheprovider

* all 82,251 4-feature subsets of 39 features x 100 splits on 104 points (goal < 60 s);
* 5-feature subsets with full interactions (575,757 subsets, 32 terms): a 10% slice is timed and the full
  search extrapolated linearly (every subset costs the same; goal < 15 min);
* the same 4-subset work done the slow way (one explicit design + np.linalg.lstsq per fit, as a scripted
  R/Python loop would) on a small slice, extrapolated, for the speed ratio.
"""

import itertools
import math
import time

import numpy as np
import pandas as pd

from predictor import InteractionSearchRegressor, _search
from predictor.interaction import random_splits, term_masks

N, P = 104, 39


def synthetic(seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0, 1, (N, P)), columns=[f"f{j}" for j in range(P)])
    y = np.exp(1 + 2 * X["f3"] - X["f7"] + 1.5 * X["f3"] * X["f11"] + rng.normal(0, 0.2, N)).to_numpy()
    return X, y


def _warm():
    X, y = synthetic()
    InteractionSearchRegressor(k=4, n_splits=2, transform="log").fit(X.iloc[:, :6], y)
    InteractionSearchRegressor(k=5, n_splits=2, transform="log", validation_size=12).fit(X.iloc[:, :6], y)


def test_search_all_4_subsets_39_features_100_splits(benchmark):
    _warm()
    X, y = synthetic()
    est = InteractionSearchRegressor(k=4, transform="log", n_splits=100, validation_size=12, random_state=0)
    c0 = time.process_time()
    benchmark.pedantic(est.fit, args=(X, y), rounds=1, iterations=1)
    benchmark.extra_info["cpu_s_all_threads"] = time.process_time() - c0
    assert len(est.scores_) == math.comb(39, 4) == 82251
    benchmark.extra_info["subsets"] = len(est.scores_)
    benchmark.extra_info["fits"] = len(est.scores_) * 100
    benchmark.extra_info["chosen"] = list(est.subset_)


def test_search_5_subsets_full_interactions_10pct_slice(benchmark):
    _warm()
    X, y = synthetic()
    Xs = ((X - X.mean()) / X.std(ddof=0)).to_numpy()
    subs = np.array(list(itertools.combinations(range(P), 5)), dtype=np.int64)
    sl = subs[: len(subs) // 10]
    test = random_splits(N, 12, 100, 0)
    w = np.ones(N)
    t0, c0 = time.perf_counter(), time.process_time()
    hat = _search.use_hat_path(N, 5, 100, 12)  # the path InteractionSearchRegressor picks for these shapes
    benchmark.pedantic(_search.score_subsets, args=(Xs, np.log(y), y, w, sl, test, 1, 1e-10, hat), rounds=1,
                       iterations=1)
    dt = time.perf_counter() - t0
    benchmark.extra_info["path"] = "leave-group-out" if hat else "downdate"
    benchmark.extra_info["slice_subsets"] = len(sl)
    benchmark.extra_info["all_subsets"] = len(subs)
    benchmark.extra_info["extrapolated_full_s"] = dt * len(subs) / len(sl)
    benchmark.extra_info["cpu_s_all_threads"] = time.process_time() - c0


def _lstsq_loop(Xs, y, subs, test):
    n = Xs.shape[0]
    yl = np.log(y)
    out = []
    for sub in subs:
        Z = np.column_stack([np.prod(Xs[:, [sub[j] for j in pos]], axis=1) if pos else np.ones(n)
                             for pos in term_masks(len(sub))])
        errs = []
        for t in test:
            tr = np.setdiff1d(np.arange(n), t)
            beta = np.linalg.lstsq(Z[tr], yl[tr], rcond=None)[0]
            errs.append(np.mean(np.abs(np.exp(Z[t] @ beta) - y[t]) / y[t]))
        out.append(len(errs) / np.sum(1 / np.array(errs)))
    return np.array(out)


def test_reference_loop_4_subsets_slice(benchmark):
    X, y = synthetic()
    Xs = ((X - X.mean()) / X.std(ddof=0)).to_numpy()
    subs = np.array(list(itertools.combinations(range(P), 4)), dtype=np.int64)[:100]
    test = random_splits(N, 12, 100, 0)
    t0 = time.perf_counter()
    ref = benchmark.pedantic(_lstsq_loop, args=(Xs, y, subs, test), rounds=1, iterations=1)
    dt = time.perf_counter() - t0
    fast = _search.score_subsets(Xs, np.log(y), y, np.ones(N), subs, test, 1, 1e-10)[0]
    np.testing.assert_allclose(fast, ref, rtol=1e-6)
    benchmark.extra_info["extrapolated_all_82251_s"] = dt * 82251 / len(subs)
