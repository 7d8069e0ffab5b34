"""Taxonomy (Greathouse & Loh): normalised performance, PCA, Spearman/Ward clustering, behaviour names."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from gpu_models.scaling.dataset import Grid
from gpu_models.scaling.generator import generate
from gpu_models.scaling.taxonomy import (
    behaviour_name,
    build_taxonomy,
    elasticities,
    pca_scores,
    performance_matrix,
    plot_dendrogram,
    spearman_distance,
)


def test_performance_matrix_worked_example():
    cube = np.array([[[[2.0, 1.0]]], [[[4.0, 8.0]]]])  # two kernels, two configurations
    np.testing.assert_allclose(performance_matrix(cube), [[0.5, 1.0], [1.0, 0.5]])


def test_pca_keeps_components_for_variance():
    rng = np.random.default_rng(0)
    P = np.outer(rng.normal(size=20), [1.0, 2.0, 3.0]) + 1e-6 * rng.normal(size=(20, 3))
    scores, ratio = pca_scores(P, variance=0.95, min_components=1)
    assert scores.shape == (20, 1) and ratio[0] > 0.999
    assert pca_scores(P, variance=0.95, min_components=2)[0].shape == (20, 2)


def test_spearman_distance_worked_example():
    S = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [3.0, 2.0, 1.0], [1.0, 3.0, 2.0]])
    D = spearman_distance(S)
    assert D[0, 1] == 0.0 and D[0, 2] == 2.0
    # ranks (1,2,3) vs (1,3,2): rho = 1 - 6*(0+1+1)/(3*(9-1)) = 0.5
    assert D[0, 3] == pytest.approx(0.5)
    np.testing.assert_array_equal(D, D.T)


def test_elasticities_and_names():
    grid = Grid((4, 8), (500.0, 1000.0), (400.0, 800.0))
    c = np.array(grid.core_mhz)[None, :, None]
    n = np.array(grid.sm_counts, float)[:, None, None]
    m = np.array(grid.mem_mhz)[None, None, :]
    compute = 1.0 / (n * c) + 0 * m
    bandwidth = 1.0 / m + 0 * n * c
    el = elasticities(np.stack([compute, bandwidth]), grid)
    np.testing.assert_allclose(el, [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], atol=1e-12)
    assert behaviour_name(1.0, 0.0, 1.0, True) == "compute-bound"
    assert behaviour_name(1.0, 0.0, 0.2, True) == "parallelism-limited"
    assert behaviour_name(0.0, 1.0, 0.0, True) == "bandwidth-bound"
    assert behaviour_name(0.5, 0.5, 0.5, True) == "balanced"
    assert behaviour_name(0.05, 0.0, 0.1, True) == "insensitive"
    assert behaviour_name(0.0, 0.9, -0.8, True) == "cache-thrashing"
    assert behaviour_name(0.2, 0.05, 0.0, False) == "weakly-sensitive"


def test_recovers_the_synthetic_archetypes(tmp_path):
    """SYNTHETIC data: six archetypes, each cluster named by its behaviour."""
    ds = generate(n_per_archetype=6, sm_counts=(4, 8, 16, 32), core_mhz=(300, 500, 700, 1000),
                  mem_mhz=(475, 925, 1375), random_state=3)
    groups = ds.groups()
    tax = build_taxonomy(ds.cube(), ds.grid(), ds.kernels, n_clusters=6)
    truth = [groups[k] for k in ds.kernels]
    assert adjusted_rand_score(truth, tax.labels) == 1.0
    named = {groups[k].split(":")[1]: tax.names[c] for k, c in zip(ds.kernels, tax.labels)}
    assert named == {"compute": "compute-bound", "bandwidth": "bandwidth-bound", "balanced": "balanced",
                     "cache_thrash": "cache-thrashing", "limited_parallelism": "parallelism-limited",
                     "insensitive": "insensitive"}
    plot_dendrogram(tax, tmp_path / "d.svg", title="SYNTHETIC")
    assert (tmp_path / "d.svg").read_text().startswith("<?xml")
    t = tax.table()
    assert list(t.columns) == ["kernel", "cluster", "behaviour", "e_core", "e_mem", "e_cu"] and len(t) == 36
