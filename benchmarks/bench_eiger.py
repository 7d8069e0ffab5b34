"""Eiger benchmarks: fit/predict on AIWC, Algorithm 1 (Gram-Schmidt) vs. a literal least-squares loop, and
database import.

Run: .venv/bin/python -m pytest benchmarks/bench_eiger.py --benchmark-enable -p no:cacheprovider
"""

import math

import numpy as np
import pytest

from predictor.eiger.db import TrialsDB
from predictor.eiger.experiments import BASE, aiwc_matrix
from predictor.eiger.synthesis import EigerRegressor, adjusted_r2, forward_stepwise
from predictor.eiger.trials_import import import_aiwc


@pytest.fixture(scope="module")
def aiwc():
    X, y, _, _ = aiwc_matrix()
    return X.to_numpy(float), y


def _stepwise_problem():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(600, 80))
    y = F[:, :12] @ rng.normal(size=12) + rng.normal(size=600)
    return F, y


def _reference(F, y, threshold):
    m, q = F.shape
    final, pool, current = [], list(range(q)), -math.inf
    tss = np.sum((y - y.mean()) ** 2)
    while True:
        maximum, new = -math.inf, None
        for f in pool:
            A = np.column_stack([np.ones(m)] + [F[:, c] for c in final + [f]])
            beta = np.linalg.lstsq(A, y, rcond=None)[0]
            adj = adjusted_r2(1 - np.sum((y - A @ beta) ** 2) / tss, m, len(final) + 1)
            if adj > maximum:
                maximum, new = adj, f
        if new is not None and maximum - current > threshold:
            final.append(new)
            pool.remove(new)
            current = maximum
        else:
            return final


def test_stepwise_gram_schmidt(benchmark):
    F, y = _stepwise_problem()
    sel = benchmark(forward_stepwise, F, y, 1e-4)[0]
    assert sel == _reference(F, y, 1e-4)


def test_stepwise_reference_lstsq(benchmark):
    F, y = _stepwise_problem()
    benchmark.pedantic(_reference, args=(F, y, 1e-4), rounds=2, iterations=1)


def test_fit_aiwc_base_config(benchmark, aiwc):
    X, y = aiwc
    est = benchmark(lambda: EigerRegressor(**BASE).fit(X, y))
    assert len(est.models_) == BASE["n_clusters"]


def test_predict_aiwc(benchmark, aiwc):
    X, y = aiwc
    est = EigerRegressor(**BASE).fit(X, y)
    assert benchmark(est.predict, X).shape == y.shape


def test_import_aiwc_sqlite(benchmark, tmp_path):
    counter = iter(range(1000))

    def run():
        db = TrialsDB(f"sqlite:///{tmp_path}/b{next(counter)}.sqlite")
        n = import_aiwc(db)
        db.close()
        return n

    assert benchmark.pedantic(run, rounds=3, iterations=1) == 1560
