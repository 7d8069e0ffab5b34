"""Speed of the scaling model on the GTX Titan X data (165 kernels x 32 configurations).

Goals (issue 9): training in seconds; all target predictions for one kernel in under 10 ms.
Run: .venv/bin/python -m pytest benchmarks/bench_scaling.py --benchmark-enable -p no:cacheprovider
"""

import numpy as np
import pytest

from gpu_models.scaling import ScalingModel
from gpu_models.scaling.dataset import load_titanx
from gpu_models.scaling.generator import generate
from gpu_models.scaling.wu_evaluation import titanx_counters

BASE = (24, 975.0, 3505.0)


@pytest.fixture(scope="module")
def titanx():
    ds = load_titanx()
    X, _ = titanx_counters(ds, "classes")
    return ds, X, ds.cube("time")


@pytest.mark.parametrize("k", [6, 12])
def test_train_titanx(benchmark, titanx, k):
    ds, X, Y = titanx
    grid = ds.grid()
    model = benchmark.pedantic(lambda: ScalingModel(base=BASE, n_clusters=k).fit(X, Y, grid), rounds=3, iterations=1)
    assert len(model.freq_sets_[0].centroids) == k


def test_predict_one_kernel_all_targets(benchmark, titanx):
    ds, X, Y = titanx
    model = ScalingModel(base=BASE, n_clusters=12).fit(X, Y, ds.grid())
    i = ds.kernels.index("gemm")
    out = benchmark(model.predict_surface, X[i], Y[i, 0, 10, 1])
    assert out.shape == (1, 16, 2)


def test_predict_one_kernel_448_configs_with_cu_set(benchmark):
    """SYNTHETIC: 8 CU counts x 8 core x 7 memory clocks, 9 cluster sets (the paper's grid size)."""
    ds = generate(n_per_archetype=5, random_state=0)
    base = (16, 600.0, 925.0)
    X = ds.counters_at(*base)
    model = ScalingModel(base=base, n_clusters=8, n_init=3).fit(X, ds.cube(), ds.grid())
    out = benchmark(model.predict_surface, X[0], 1.0)
    assert out.shape == (8, 8, 7) and np.isfinite(out).all()
