"""hecbench/fluidSim/lbm: one launch equals a vectorised NumPy D2Q9 BGK step (bounce-back ring, push streaming
from interior cells), mass is conserved on the interior, the initial lattice is the program's, and the
launch geometry is the data's."""

from __future__ import annotations

import gzip
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench.fluidSim import KERNELS, OMEGA, E, W, make_inputs, work

SPEC = KERNELS[0]
DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _numpy_step(f, typ, width, height):
    """``f``: (cells, 9) distributions; returns the output buffers (cells, 9) after one step, starting from a
    copy of ``f`` (the host copies input to output)."""
    rho = f.sum(axis=1)
    u = (f @ E) / rho[:, None]
    eu = u @ E.T
    u2 = (u ** 2).sum(axis=1)[:, None]
    feq = rho[:, None] * W[None, :] * (1.0 + 3.0 * eu + 4.5 * eu ** 2 - 1.5 * u2)
    post = (1.0 - OMEGA) * f + OMEGA * feq
    bounce = f[:, [0, 3, 4, 1, 2, 7, 8, 5, 6]]
    post = np.where(typ[:, None], bounce, post)
    out = f.copy()
    y, x = np.divmod(np.arange(width * height), width)
    interior = (x > 0) & (x < width - 1) & (y > 0) & (y < height - 1)
    for i in range(9):
        dst = (y + int(E[i, 1])) * width + x + int(E[i, 0])
        out[dst[interior], i] = post[interior, i]
    return out


@pytest.mark.parametrize("params", [SPEC.test_point, {"width": 24, "height": 10, "iterations": 1}])
def test_one_launch_is_a_numpy_bgk_step(params):
    args = make_inputs(params, 2)
    width, height = args[-2], args[-1]
    f = np.concatenate([args[0][:, None], args[2], args[4]], axis=1)
    of0, of1234, of5678 = numba.njit(SPEC.cpu)(*args)
    got = np.concatenate([of0[:, None], of1234, of5678], axis=1)
    want = _numpy_step(f, args[6], width, height)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert np.abs(got - f).max() > 1e-3  # the step moved something
    # streaming only moves mass: the total of the written distributions equals the total post-collision mass
    # of the interior cells, which equals their density (BGK conserves it)
    y, x = np.divmod(np.arange(width * height), width)
    interior = (x > 0) & (x < width - 1) & (y > 0) & (y < height - 1)
    assert np.isclose(f[interior].sum(), sum(
        got[(y[interior] + int(E[i, 1])) * width + x[interior] + int(E[i, 0]), i].sum() for i in range(9)))


def test_initial_lattice_by_hand():
    args = make_inputs({"width": 4, "height": 4, "iterations": 1}, 0)
    f = np.concatenate([args[0][:, None], args[2], args[4]], axis=1)
    rho = f.sum(axis=1)
    # densities rand() % 10 + 1 are whole numbers 1..10 (the equilibrium keeps the density)
    assert np.allclose(rho, np.round(rho)) and np.round(rho).min() >= 1 and np.round(rho).max() <= 10
    # glibc rand after srand(123) (kernels.measured._glibc): first value 128959393 -> 128959393 % 10 + 1 = 4
    assert np.isclose(rho[0], 4.0)
    assert np.isclose(f[0, 0], 4.0 * 4.0 / 9.0 * (1.0 - 1.5 * 2e-4))
    assert args[6].sum() == 12  # the ring of a 4 x 4 lattice


def test_launch_geometry_is_the_datas_first_launch():
    with gzip.open(DATA) as fh:
        d = pd.read_csv(fh)
    row = d[(d.targetName == "fluidSim-cuda") & (d.kernelName == "lbm")].iloc[0]
    assert list(SPEC.points) == [row.exeArgs]
    gx, gy, gz = (int(v) for v in row["Grid Size"].strip("()").split(","))
    bx, by, bz = (int(v) for v in row["Block Size"].strip("()").split(","))
    assert work(SPEC.points[row.exeArgs]) == (gx * gy * gz * bx * by * bz, bx * by * bz)
