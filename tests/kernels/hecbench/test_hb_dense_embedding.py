"""HeCBench dense-embedding ports against NumPy: each segment of the jagged input plus its dense row, tiled
over the segment's embedding-sized rows; the host's offsets (glibc rand after srand(123)) by hand."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import dense_embedding as D
from kernels.measured.registry import get_measured


def _reference(inp, dense, dim, offset):
    out = np.empty_like(inp)
    for b in range(len(offset) - 1):
        seg = inp[offset[b]:offset[b + 1]].reshape(-1, dim)
        out[offset[b]:offset[b + 1]] = (seg + dense[b * dim:(b + 1) * dim]).ravel()
    return out


@pytest.mark.parametrize("kernel", ["dense_esuhm", "dense_esuhm2"])
@pytest.mark.parametrize("params", [D.TEST_POINT, {"nrows": 900, "batch_size": 5, "dim": 24, "block": 8}])
def test_region_adds_each_segments_dense_row(kernel, params):
    spec = get_measured(f"hecbench/dense-embedding/{kernel}")
    inp, dense, out, dim, off, block, n = spec.make_inputs(params, 2)
    got = numba.njit(spec.cpu)(inp, dense, out, dim, off, block, n)
    np.testing.assert_array_equal(got, _reference(inp, dense, dim, off))


def test_offsets_are_whole_rows_of_one_to_batch_size_embeddings():
    off = D.offsets(256, 768, 0).astype(np.int64)
    rows = np.diff(off) // 768
    assert off[0] == 0 and (np.diff(off) % 768 == 0).all()
    assert rows.min() >= 1 and rows.max() <= 256
    # the measured run's 256 segments hold 26,898,432 floats (35,024 rows of 768)
    assert off[-1] == 26898432
