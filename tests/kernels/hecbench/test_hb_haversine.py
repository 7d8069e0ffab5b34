"""The haversine port (kernels/measured/hecbench/haversine.py) against the spherical law of cosines in NumPy and
hand-worked distances."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import haversine

REGION = numba.njit(haversine.compute_haversine_distance)


@pytest.mark.parametrize("nc,seed", [(200, 0), (1000, 5)])
def test_region_equals_law_of_cosines(nc, seed):
    p, d, n, nt = haversine.make_inputs({"num_cities": nc}, seed)
    got = REGION(p, d, n, nt)
    a_lat, a_lon, b_lat, b_lon = np.radians(p.T)
    central = np.arccos(np.clip(np.sin(a_lat) * np.sin(b_lat)
                                + np.cos(a_lat) * np.cos(b_lat) * np.cos(b_lon - a_lon), -1, 1))
    np.testing.assert_allclose(got, 6371.0 * central, rtol=1e-6, atol=1e-3)
    # each reference city is at distance 0 from itself, once per block of cities
    assert (got == 0.0).sum() >= haversine.NUM_REF_CITIES
    assert got.max() <= np.pi * 6371.0 + 1e-6


def test_hand_worked_distances():
    p = np.array([[0.0, 0.0, 0.0, 90.0],  # a quarter of the equator
                  [90.0, 0.0, -90.0, 0.0],  # pole to pole
                  [51.5, -0.1, 51.5, -0.1]])
    d = haversine.compute_haversine_distance(p, np.zeros(3), 3, 256)
    assert d[0] == pytest.approx(6371.0 * np.pi / 2, rel=1e-12)
    assert d[1] == pytest.approx(6371.0 * np.pi, rel=1e-12)
    assert d[2] == 0.0


def test_pairs_and_work():
    p = haversine.make_inputs({"num_cities": 1000}, 0)[0]
    # block c holds the city list paired with reference city (index_map[c] - 1) mod num_cities
    for c, idx in enumerate(haversine.INDEX_MAP):
        blk = p[c * 1000:(c + 1) * 1000]
        assert np.all(blk[:, 2:] == blk[(idx - 1) % 1000, :2])
    assert haversine.work(haversine.POINTS["../geodesic-cuda/locations.txt 100"]) == (49152 * 256, 256)
