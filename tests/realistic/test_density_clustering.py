"""Density clustering (DBSCAN, realistic_programs.py): the neighbourhood counts are one kernel, the cluster
growth a host loop whose neighbour scan is a kernel appending to the stack through an atomic counter, and the
full algorithm is predicted slower than its neighbourhood pass alone (two regions with different work never
share one prediction by accident)."""

from __future__ import annotations

import numpy as np
import pytest
import realistic_programs as P
from test_realistic_programs import MODES, library_of, line_of, loops_of, profile

from portcast.pipeline import predict


def blobs(per_blob=50):
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(c, 0.3, (per_blob, 2)) for c in (0.0, 3.0, 6.0)])


@pytest.mark.parametrize("mode", MODES)
def test_dbscan_neighbour_scan_is_a_kernel_appending_through_an_atomic_counter(mode):
    X = blobs()
    labels = np.zeros(150, np.int64)
    res, f, ts, _ = profile(P.dbscan, (X, 0.3, 5, labels), mode)
    assert res.value == 3 and np.bincount(labels + 1).tolist() == [12, 47, 49, 42]
    pops = 132  # stack pops of core points: one launch of the neighbour scan each
    assert loops_of(ts) == [(line_of("db.counts"), 1, "parallel", 1, 150),
                            (line_of("db.neighbours"), 1, "atomic", pops, 150)]
    scan = ts["loops"][1]
    assert scan["reductions"] == ["top (append counter)"]
    assert "appended through the counter `top`" in scan["atomics"][0]
    assert library_of(ts) == [("np.zeros(n, np.int64)", "parallel", 1, 150), ("labels[:]", "parallel", 1, 150)]
    why = {r["location"]: r["why"] for r in ts["rejected"]}
    assert "every iteration stores `labels[j]` (the element does not depend on i)" in " ".join(why[line_of("db.grow")])
    assert f["ts_carriedDeps"] == 0 and f["ts_reductionDeps"] == scan["counts"]["reduction"] > 0


def test_full_dbscan_is_predicted_slower_than_its_neighbourhood_pass():
    X = blobs()
    full = predict(P.dbscan, (X, 0.3, 5, np.zeros(150, np.int64)), gpu="p100", mode="compiled", baseline=False)[-1]
    counts = predict(P.region_count, (X, 0.3, np.zeros(150, np.int64)), gpu="p100", mode="compiled",
                     baseline=False)[-1]
    # the neighbourhood pass is one launch; the full algorithm adds two NumPy fills and 132 launches of the
    # neighbour scan, so it
    # takes at least 132 more launch overheads
    assert counts.bounds.launches == 1 and full.bounds.launches == 1 + 132 + 2
    assert full.prediction.kernel_s > counts.prediction.kernel_s + 132 * 5e-6


def test_numpy_dbscan_and_its_neighbourhood_pass_run_their_points_as_threads():
    """The NumPy way: each point's distances are temporaries (private to its iteration whatever address they
    get) and the neighbour lists grow by one entry per point (a map). Before, the neighbourhood pass was
    refused (the reused temporaries looked like conflicts) and the full algorithm was 3,001 launches of
    600-element NumPy kernels, predicted at the launch floor whatever its work."""
    X = blobs()
    res, f, ts, _ = profile(P.neighbourhoods_numpy, (X, 0.3), "interpreted")
    assert list(res.value) == list(P.neighbourhoods_numpy(X, 0.3))
    assert loops_of(ts) == [(line_of("dbn.counts"), 1, "parallel", 1, 150)]
    assert f["ts_carriedDeps"] == 0
    res, f, ts, _ = profile(P.dbscan_numpy, (X, 0.3, 5), "interpreted")
    assert np.bincount(res.value + 1).tolist() == [12, 47, 49, 42]
    assert loops_of(ts) == [(line_of("dbn.neighbours"), 1, "parallel", 1, 150)]
    assert "`neighbours.append()` adds one entry per iteration" in ts["loops"][0]["reasons"][0]
    why = {r["location"]: r["why"] for r in ts["rejected"]}
    assert ".append() grows a container in iteration order" in " ".join(why[line_of("dbn.grow")])
    assert f["ts_carriedDeps"] == 0
    full = predict(P.dbscan_numpy, (X, 0.3, 5), gpu="p100", mode="interpreted", baseline=False)[-1]
    counts = predict(P.neighbourhoods_numpy, (X, 0.3), gpu="p100", mode="interpreted", baseline=False)[-1]
    assert full.bounds.launches == 2 and counts.bounds.launches == 1  # np.full, then the points
    assert full.prediction.kernel_s != counts.prediction.kernel_s
