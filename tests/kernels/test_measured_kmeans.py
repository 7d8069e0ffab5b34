"""The kmeans ports (kernels/measured/kmeans.py): ``invert_mapping`` against NumPy's transpose,
``kmeansPoint`` against a NumPy nearest-centre search, a hand-checked example (ties go to the first centre), the
host's drawing of the initial centres, and the launch geometry."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured import kmeans
from kernels.measured.registry import get_measured

INVERT = get_measured("aiwc/kmeans/invert_mapping")
POINT = get_measured("aiwc/kmeans/kmeansPoint")
SMALL = {"npoints": 48, "nfeatures": 7, "nclusters": 3}


def _nearest_reference(points, centres):
    d = ((points.astype(np.float64)[:, None, :] - centres.astype(np.float64)[None, :, :]) ** 2).sum(axis=2)
    return d.argmin(axis=1)


@pytest.mark.parametrize("params", [INVERT.test_point, SMALL])
def test_invert_mapping_is_the_transpose(params):
    (points,) = INVERT.make_inputs(params, 4)
    assert points.shape == (params["npoints"], params["nfeatures"])
    for out in (kmeans.invert_mapping(points), numba.njit(kmeans.invert_mapping)(points)):
        assert out.dtype == np.float32
        assert np.array_equal(out, points.T)


@pytest.mark.parametrize("params", [POINT.test_point, SMALL])
def test_kmeans_point_finds_the_nearest_centre(params):
    features, membership, centres = POINT.make_inputs(params, 4)
    assert np.all(membership == -1)  # the first launch: no point has a cluster yet
    want = _nearest_reference(features.T, centres)
    got = numba.njit(kmeans.kmeans_point)(features, membership.copy(), centres)
    assert np.array_equal(got, want)
    assert len(np.unique(got)) == params["nclusters"]  # each initial centre is a point, nearest to itself
    assert np.array_equal(kmeans.kmeans_point(features, membership.copy(), centres), want)


def test_worked_example():
    # centres (0, 0) and (2, 0); points: (1, 0) is 1 from both (tie: the first centre), (3, 1) is 10 from the
    # first and 2 from the second, (0.5, 4) is 16.25 from the first and 18.25 from the second, and (2, 0) is
    # the second centre itself
    points = np.array([[1, 0], [3, 1], [0.5, 4], [2, 0]], dtype=np.float32)
    centres = np.array([[0, 0], [2, 0]], dtype=np.float32)
    features = np.ascontiguousarray(points.T)
    membership = np.full(4, -1, dtype=np.int32)
    assert np.array_equal(numba.njit(kmeans.kmeans_point)(features, membership, centres), [0, 1, 0, 1])
    assert np.array_equal(membership, [0, 1, 0, 1])  # updated in place, as the kernel writes the device buffer
    assert np.array_equal(kmeans.invert_mapping(points), [[1, 3, 0.5, 2], [0, 1, 4, 0]])


class _Draws:
    """Stands in for the generator: hands out the given draws in order."""

    def __init__(self, draws):
        self.draws = list(draws)

    def integers(self, high):
        k = self.draws.pop(0)
        assert 0 <= k < high
        return k


def test_initial_centres_follow_the_host_procedure():
    points = np.arange(10 * 2, dtype=np.float32).reshape(10, 2)
    # draw 0 of 10 takes point 0 and swaps it to the end of the pool (pool 9 1 2 ... 8 | 0); draw 0 of 9 takes
    # point 9 (pool 8 1 2 ... 7 | 9 0); draw 0 of 8 takes point 8; draw 3 of 7 takes point 3
    centres = kmeans.initial_centres(points, 4, _Draws([0, 0, 0, 3]))
    assert np.array_equal(centres, points[[0, 9, 8, 3]])
    # with the real generator: distinct points, deterministic for a seed
    (p,) = INVERT.make_inputs(POINT.test_point, 9)
    c1 = kmeans.initial_centres(p, 5, np.random.default_rng(1))
    c2 = kmeans.initial_centres(p, 5, np.random.default_rng(1))
    assert np.array_equal(c1, c2)
    rows = [int(np.flatnonzero((p == c).all(axis=1))[0]) for c in c1]
    assert len(set(rows)) == 5


def test_points_and_launch_geometry():
    sizes = {"tiny": 256, "small": 2048, "medium": 65600, "large": 131072}
    for spec in (INVERT, POINT):
        assert {k: v["npoints"] for k, v in spec.points.items()} == sizes
        assert all(v["nfeatures"] == 30 and v["nclusters"] == 5 for v in spec.points.values())
        assert all(spec.work(v) == (v["npoints"], 16) for v in spec.points.values())
        with pytest.raises(ValueError):
            spec.work({"npoints": 100, "nfeatures": 30, "nclusters": 5})  # the host refuses a partial group
    features, membership, centres = POINT.make_inputs(POINT.points["small"], 0)
    assert features.shape == (30, 2048) and membership.shape == (2048,) and centres.shape == (5, 30)
    assert features.dtype == centres.dtype == np.float32 and membership.dtype == np.int32
