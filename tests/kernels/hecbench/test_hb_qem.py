"""The qem port (kernels/measured/hecbench/qem.py) against NumPy: the discriminant formulas, and the minimum as
a real critical point of the quartic that no other critical point undercuts; and the data's launch
geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import qem

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
SPEC = {k.kernel: k for k in qem.KERNELS}


@pytest.mark.parametrize("n,seed", [(1000, 0), (333, 4)])
def test_qrdel_equals_numpy(n, seed):
    inputs = SPEC["QRdel"].make_inputs({"repeat": 1, "n": n}, seed)
    b, c, d, Q, R, Qint, Rint, dl = numba.njit(qem.QRdel)(*copy.deepcopy(inputs))
    A, B, C, D = (x.astype(np.float64) for x in inputs[1:5])
    np.testing.assert_allclose(b, 0.75 * B / A, rtol=1e-6)
    np.testing.assert_allclose(d, 0.25 * D / A, rtol=1e-6)
    q = np.round(c / 3.0 - b.astype(np.float64) ** 2 / 9.0, 5)
    np.testing.assert_allclose(Q, q, atol=2e-5)
    np.testing.assert_allclose(dl, Rint + Qint, rtol=1e-6)
    assert np.all(np.abs(Q * 1e5 - np.round(Q * 1e5)) < 0.02)  # five decimals


def _random_quartics(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.integers(1, 50, n).astype(np.float32)  # A > 0: a minimum exists
    B, C, D = (rng.integers(-100, 101, n).astype(np.float32) for _ in range(3))
    return A, B, C, D


def test_solver_picks_the_kernels_critical_point_of_random_quartics():
    n = 512
    A, B, C, D = _random_quartics(n, 7)
    b, q, r, dl = qem.qrdel_numpy(A, B, C, D)
    z = lambda: np.zeros(n, np.float32)  # noqa: E731
    out = qem.QuarticSolver(n, A, B, C, D, b, q, r, dl, z(), z(), z(), z(), z(), z(), z(), n)
    mn = out[-1].astype(np.float64)
    A, B, C, D = (x.astype(np.float64) for x in (A, B, C, D))
    three = dl <= 1e-5
    assert three.sum() > 50 and (~three).sum() > 50  # both branches taken
    for k in range(n):
        roots = np.roots([4 * A[k], 3 * B[k], 2 * C[k], D[k]])  # f' of A x^4 + B x^3 + C x^2 + D x
        real = np.sort(roots[np.abs(roots.imag) < 1e-6].real)[::-1]
        if three[k] and len(real) == 3:
            x1, x3 = real[0], real[2]
            # the kernel's rule, as written: A (x1^4 - x3^4) / 4 + B (x1^3 - x3^3) / 3 + ... <= 0 picks x1
            g = A[k] * (x1**4 - x3**4) / 4 + B[k] * (x1**3 - x3**3) / 3 + C[k] * (x1**2 - x3**2) / 2 \
                + D[k] * (x1 - x3)
            if abs(g) > 1e-2:  # away from a tie that the rounding of Q and R could flip
                assert mn[k] == pytest.approx(x1 if g <= 0 else x3, abs=2e-2), k
        elif not three[k]:
            assert len(real) == 1 and mn[k] == pytest.approx(real[0], abs=2e-2), k


def test_measured_inputs_take_cardanos_branch():
    inputs = SPEC["QuarticSolver"].make_inputs(qem.TEST_POINT, 0)
    out = numba.njit(qem.QuarticSolver)(*copy.deepcopy(inputs))
    A = inputs[1]
    ok = A != 1  # B = C = D = A: f'(x) = 4A x^3 + 3A x^2 + 2A x + A, one real root near -0.6058
    np.testing.assert_allclose(out[-1][ok], -0.6058, atol=2e-3)


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in qem.KERNELS:
        row = df[(df.targetName == "qem-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["100"]) == (grid * block, block)


def test_zero_leading_coefficient_gives_nan_as_on_the_gpu():
    # A = 0 -> 1 with B = C = D = 0: Q = R = del = 0, three-root branch, acos(0 / 0) = NaN
    A, B, C, D = (np.array(v, np.float32) for v in ([1, 1], [0, 1], [0, 1], [0, 1]))
    b, q, r, dl = qem.qrdel_numpy(A, B, C, D)
    z = lambda: np.zeros(2, np.float32)  # noqa: E731
    out = numba.njit(qem.QuarticSolver)(2, A, B, C, D, b, q, r, dl, z(), z(), z(), z(), z(), z(), z(), 64)
    assert np.isnan(out[0][0]) and np.isnan(out[-1][0]) and np.isfinite(out[-1][1])
