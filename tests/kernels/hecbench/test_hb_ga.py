"""The ga port (kernels/measured/hecbench/ga.py) against a NumPy sliding-window Hamming distance, and hand-made
sequences."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import ga

REGION = numba.njit(ga.ga)


def _numpy_matches(target, query, length, cl, threshold):
    tw = np.lib.stride_tricks.sliding_window_view(target, cl)[:length]
    qw = np.lib.stride_tricks.sliding_window_view(query, cl)
    dist = (tw[:, None, :] != qw[None, :, :]).sum(axis=2)
    return (dist < threshold).any(axis=1).astype(np.uint8)


@pytest.mark.parametrize("params,seed", [(ga.TEST_POINT, 0), ({"tseq": 5000, "qseq": 60, "coarse_length": 8,
                                                               "threshold": 3}, 1)])
def test_region_equals_numpy(params, seed):
    inputs = ga.make_inputs(params, seed)
    target, query, _, length, _, cl, th, _, _ = inputs
    got = REGION(*inputs)
    want = np.zeros(ga.BATCH, dtype=np.uint8)
    want[:length] = _numpy_matches(target, query, length, cl, th)
    np.testing.assert_array_equal(got, want)
    assert 0 < got.sum() < length  # both outcomes occur


def test_hand_made_sequences():
    target = np.frombuffer(b"ACGTACGTTTTT", dtype=np.uint8)
    query = np.frombuffer(b"GTTT", dtype=np.uint8)
    # windows of 3 against GTT and TTT; threshold 1 = exact
    got = ga.ga(target, query, np.zeros(8, np.uint8), 7, 4, 3, 1, 0, 256)
    # positions 0..7: ACG CGT GTA TAC ACG CGT GTT TTT
    assert got.tolist() == [0, 0, 0, 0, 0, 0, 1, 1]


def test_host_sequences_and_work():
    t, q = ga.sequences(2, 1, 0)
    # srand(123): rand() gives 128959393, 1692901013, ...: "ACTG"[1], "ACTG"[1]
    assert t.tobytes()[:2] == b"CC" and set(q.tobytes()) <= set(b"ACTG")
    assert ga.work(ga.POINTS["1000000 1000 11 1"]) == (1024, 256)
