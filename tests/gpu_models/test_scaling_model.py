"""The cluster-and-classify model: worked examples, the oracle, the CU path (SYNTHETIC data), power, files."""

import json

import numpy as np
import pytest

from gpu_models.scaling import ScalingModel, ScalingModelError, prediction_errors
from gpu_models.scaling.dataset import DatasetError, Grid
from gpu_models.scaling.generator import generate
from gpu_models.scaling.surfaces import cu_scaling

GRID_KW = dict(sm_counts=(4, 8, 16, 32), core_mhz=(300, 500, 700, 1000), mem_mhz=(475, 925, 1375))
BASE = (16, 700.0, 925.0)


@pytest.fixture(scope="module")
def synthetic_split():
    """SYNTHETIC train/test kernels from the analytic generator (independent seeds)."""
    return generate(n_per_archetype=5, random_state=0, **GRID_KW), generate(
        n_per_archetype=3, random_state=11, **GRID_KW
    )


def test_single_cluster_worked_example():
    # grid: 1 SM count x 2 core clocks x 1 memory clock; two kernels with engine values 0.5 and 0.8
    grid = Grid((8,), (500.0, 1000.0), (800.0,))
    Y = np.array([[[[10.0], [5.0]]], [[[10.0], [8.0]]]])
    X = np.array([[0.0], [1.0]])
    m = ScalingModel(base=(8, 500.0, 800.0), n_clusters=1).fit(X, Y, grid)
    np.testing.assert_allclose(m.freq_sets_[0].centroids, [[0.65]])  # mean of the two scaling values
    out = m.predict_surface([0.5], 20.0)
    np.testing.assert_allclose(out[0, :, 0], [20.0, 13.0])
    m2 = ScalingModel(base=(8, 1000.0, 800.0), n_clusters=1).fit(X, Y, grid)
    np.testing.assert_allclose(m2.predict_surface([0.5], 13.0)[0, :, 0], [20.0, 13.0])  # reciprocal going down
    assert m.cu_set_ is None


def test_two_clusters_pick_by_counter():
    grid = Grid((8,), (500.0, 1000.0), (800.0,))
    Y = np.array([[[[10.0], [5.0]]], [[[10.0], [5.2]]], [[[10.0], [9.0]]], [[[10.0], [9.4]]]])
    X = np.array([[0.0], [0.1], [0.9], [1.0]])
    m = ScalingModel(base=(8, 500.0, 800.0), n_clusters=2, random_state=0).fit(X, Y, grid)
    out = m.predict_surface([[0.05], [0.95]], [100.0, 100.0])
    np.testing.assert_allclose(out[:, 0, 1, 0], [51.0, 92.0])  # centroids 0.51 and 0.92


def test_oracle_with_one_cluster_per_kernel_reproduces_training_data(synthetic_split):
    train, _ = synthetic_split
    kernels = train.kernels[::3]  # 10 kernels, each its own cluster
    Y = train.cube(kernels=kernels)
    X = train.counters_at(*BASE, kernels=kernels)
    m = ScalingModel(base=BASE, n_clusters=len(kernels), n_init=3).fit(X, Y, train.grid())
    bi = m.base_index_
    # k is capped at the number of distinct surfaces (e.g. all bandwidth-bound kernels ignore CUs)
    n_distinct = len(np.unique(np.round(cu_scaling(Y, bi[1], bi[2]), 12), axis=0))
    assert len(m.cu_set_.centroids) == n_distinct < len(kernels) and len(m.freq_sets_) == 4
    pred = m.predict_surface(X, Y[:, bi[0], bi[1], bi[2]], clusters=m.oracle_clusters(Y))
    np.testing.assert_allclose(pred, Y, rtol=1e-10)
    # training labels of k-means are the nearest centroids
    for s, cs in enumerate(m.freq_sets_):
        np.testing.assert_array_equal(m.oracle_clusters(Y)[0][s], cs.labels)


def test_cu_path_generalises_on_synthetic_kernels(synthetic_split):
    """SYNTHETIC: held-out kernels (another seed), across CU counts, core and memory clocks."""
    train, test = synthetic_split
    Xtr, Xte = train.counters_at(*BASE), test.counters_at(*BASE)
    Ytr, Yte = train.cube(), test.cube()
    errs = {}
    for k in (1, 6):
        m = ScalingModel(base=BASE, n_clusters=k, n_init=5).fit(Xtr, Ytr, train.grid())
        bi = m.base_index_
        b = Yte[:, bi[0], bi[1], bi[2]]
        errs[k] = prediction_errors(m.predict_surface(Xte, b), Yte, bi).mean()
        errs[(k, "oracle")] = prediction_errors(
            m.predict_surface(Xte, b, clusters=m.oracle_clusters(Yte)), Yte, bi
        ).mean()
    assert errs[1] > 0.5            # one mean surface cannot describe six behaviours
    assert errs[6] < 0.06           # the learned classifier picks the right behaviour from the counters
    assert abs(errs[6] - errs[(6, "oracle")]) < 0.005


def test_power_model_and_json_round_trip(tmp_path, synthetic_split):
    train, test = synthetic_split
    X = train.counters_at(*BASE)
    m = ScalingModel(base=BASE, n_clusters=4, target="power", n_init=3).fit(
        X, train.cube("power"), train.grid(), counter_names=list(train.counter_columns), meta={"counters": "columns"})
    path = m.save(tmp_path / "m.json")
    data = json.loads(path.read_text())
    assert data["schema"] == "portcast.scaling_model" and data["version"] == 1
    assert data["params"]["target"] == "power" and data["meta"] == {"counters": "columns"}
    back = ScalingModel.load(path)
    Xte = test.counters_at(*BASE)
    b = test.cube("power")[:, 2, 2, 1]
    np.testing.assert_array_equal(m.predict_surface(Xte, b), back.predict_surface(Xte, b))
    assert back.counter_names_ == list(train.counter_columns)


def test_bad_inputs(tmp_path):
    grid = Grid((8,), (500.0, 1000.0), (800.0,))
    Y = np.array([[[[10.0], [5.0]]], [[[10.0], [8.0]]]])
    with pytest.raises(DatasetError, match="core_mhz=700 is not on the grid"):
        ScalingModel(base=(8, 700.0, 800.0)).fit([[0.0], [1.0]], Y, grid)
    with pytest.raises(ValueError, match="positive and finite"):
        ScalingModel(base=(8, 500.0, 800.0)).fit([[0.0], [1.0]], -Y, grid)
    with pytest.raises(ValueError, match="target must be 'time' or 'power'"):
        ScalingModel(base=(8, 500.0, 800.0), target="energy").fit([[0.0], [1.0]], Y, grid)
    m = ScalingModel(base=(8, 500.0, 800.0), n_clusters=2).fit([[0.0], [1.0]], Y, grid, counter_names=["c"])
    with pytest.raises(ValueError, match=r"expected 1 counters \(c\), got 2"):
        m.predict_surface([[1.0, 2.0]], 3.0)
    (tmp_path / "x.json").write_text("{nope")
    with pytest.raises(ScalingModelError, match=r"x.json: not a scaling model file \(invalid JSON"):
        ScalingModel.load(tmp_path / "x.json")
    (tmp_path / "y.json").write_text(json.dumps(dict(m.to_json(), version=7)))
    with pytest.raises(ScalingModelError, match="version 7 is newer"):
        ScalingModel.load(tmp_path / "y.json")
    (tmp_path / "z.json").write_text(json.dumps({"schema": "other"}))
    with pytest.raises(ScalingModelError, match="not a portcast.scaling_model file"):
        ScalingModel.load(tmp_path / "z.json")
