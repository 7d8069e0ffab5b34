"""The chemv ports: kernel0 then kernel1 give ``beta Y + alpha A X`` for the Hermitian matrix the host's ``AT``
stands for (NumPy complex128), and kernel1 alone adds exactly the upper triangle's conjugated products."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import chemv

K0 = numba.njit(chemv.kernel0)
K1 = numba.njit(chemv.kernel1)


def _complex(a):
    return a[:, 0].astype(np.float64) + 1j * a[:, 1].astype(np.float64)


@pytest.mark.parametrize("N", [70, 370, 45])
def test_both_kernels_give_the_hermitian_matvec(N):
    at, x, y, ai, ar, bi, br, n, threads = chemv.make_inputs0({"N": N}, 0)
    A = _complex(at).reshape(N, N)
    H = np.triu(np.conj(A), 1) + np.tril(A.T, -1) + np.diag(A.real.diagonal())  # row i: conj(AT[i][j]) for j > i
    alpha, beta = complex(*chemv.ALPHA), complex(*chemv.BETA)
    want = beta * _complex(y) + alpha * (H @ _complex(x))
    y0 = K0(at, x, y.copy(), ai, ar, bi, br, n, threads)
    got = _complex(K1(at, x, y0.copy(), ai, ar, n, threads))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # kernel1 alone: the strictly upper part
    up = _complex(K1(at, x, np.zeros_like(y), ai, ar, n, threads))
    np.testing.assert_allclose(up, alpha * (np.triu(np.conj(A), 1) @ _complex(x)), rtol=1e-5, atol=1e-2)


def test_kernel1_input_is_kernel0_output_and_work():
    assert chemv.work(chemv.POINTS["default"]) == (384, 32)
    a = chemv.make_inputs1({"N": 40}, 0)
    b = chemv.make_inputs0({"N": 40}, 0)
    assert np.array_equal(a[2], K0(*b))
