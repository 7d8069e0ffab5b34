"""The csr port (kernels/measured/csr.py) against a dense matrix-vector product, plus the generator's
distributions (createcsr's), the host's vectors and work-group size, and a hand-computed example."""

from __future__ import annotations

import copy

import numba
import numpy as np
import pytest

from kernels.measured import csr

REGION = numba.njit(csr.csr)


def _dense(n, Ap, Aj, Ax):
    A = np.zeros((n, n))
    for row in range(n):
        A[row, Aj[Ap[row] : Ap[row + 1]]] = Ax[Ap[row] : Ap[row + 1]]
    return A


@pytest.mark.parametrize(
    "params,seed", [(csr.TEST_POINT, 0), (csr.POINTS["tiny"], 1), ({"n": 400, "density": 20000}, 2)]
)
def test_region_equals_dense_matvec_plus_y(params, seed):
    n, Ap, Aj, Ax, x, y = csr.make_inputs(params, seed)
    want = _dense(n, Ap, Aj, Ax) @ x.astype(np.float64) + y.astype(np.float64)
    got = REGION(n, Ap, Aj, Ax, x, y.copy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_worked_example():
    # rows: [1 0 2], [0 0 0], [0 -1 0]; x = (1, 2, 3); y = (10, 20, 30) -> (10 + 1 + 6, 20, 30 - 2)
    Ap = np.array([0, 2, 2, 3], dtype=np.uint32)
    Aj = np.array([0, 2, 1], dtype=np.uint32)
    Ax = np.array([1, 2, -1], dtype=np.float32)
    x = np.array([1, 2, 3], dtype=np.float32)
    y = np.array([10, 20, 30], dtype=np.float32)
    assert csr.csr(3, Ap, Aj, Ax, x, y.copy()).tolist() == [17.0, 20.0, 28.0]


def test_gpu_port_over_several_work_groups():
    params = {"n": 48, "density": 50000}
    assert csr.work(params) == (48, 16)
    inputs = csr.make_inputs(params, 5)
    got = csr.KERNELS[0].gpu.run(*copy.deepcopy(inputs))
    np.testing.assert_allclose(got, REGION(*copy.deepcopy(inputs)), rtol=1e-6)


def test_work_group_sizes_follow_the_host_rule():
    assert [csr.work(p) for p in csr.POINTS.values()] == [(736, 32), (2416, 16), (14336, 1024), (16384, 1024)]
    assert csr.work_group_size(14336, max_wg=256) == 256 and csr.work_group_size(736, max_wg=256) == 32


def test_generator_distributions():
    n = 14336
    Ap, Aj, Ax = csr.random_csr(n, 5000, 0)
    counts = np.diff(Ap.astype(np.int64))
    mean = n * 5000 / 1e6  # 71.68 non-zeros per row, standard deviation 1% of that
    assert abs(counts.mean() - mean) < 0.05 and 0.6 < counts.std() < 0.85
    assert Ap[0] == 0 and Ap[-1] == Aj.size == Ax.size
    for row in range(0, n, 997):
        cols = Aj[Ap[row] : Ap[row + 1]].astype(np.int64)
        assert np.all(np.diff(cols) > 0) and cols.max() < n  # distinct and sorted
    assert Aj.min() == 0 and Aj.max() == n - 1  # every column can be drawn
    assert np.all(np.abs(Ax) <= 1) and np.allclose(Ax, np.round(Ax.astype(np.float64), 6), atol=1e-7)
    assert abs(float(Ax.mean())) < 0.01 and abs(float(np.abs(Ax).mean()) - 0.5) < 0.01  # uniform on (-1, 1]
    # the tiny size's 3.68 +- 0.04 rounds to 4 in every row
    assert np.all(np.diff(csr.random_csr(736, 5000, 0)[0].astype(np.int64)) == 4)


def test_host_vectors_are_the_unseeded_rand_stream():
    x, y = csr.host_vectors(4, 0)
    # glibc rand() without srand: 1804289383, 846930886, ... ; x uses the first n values, y the next n
    assert x[0] == np.float32(1804289383 / 2147483648.0) and x[1] == np.float32(846930886 / 2147483648.0)
    assert np.all((x >= 0) & (x < 1)) and np.all((y >= 0) & (y < 1))
    assert not np.array_equal(csr.host_vectors(4, 1)[0], x)
