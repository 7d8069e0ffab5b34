"""HeCBench reverse2D (kernels/measured/hecbench/reverse2D.py) against NumPy's flip of the rows."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import reverse2D

REGION = numba.njit(reverse2D.reverse_kernel)


@pytest.mark.parametrize("nrows,ncols", [(64, 496), (7, 32), (1024, 16)])
def test_rows_reversed(nrows, ncols):
    p = {"nrows": nrows, "ncols": ncols, "repeat": 1}
    out, inp, r, c, n = reverse2D.make_inputs(p, 1)
    got = REGION(out, inp, r, c, n).view(np.uint8).reshape(nrows, ncols)
    m = inp.view(np.uint8).reshape(nrows, ncols)
    assert np.array_equal(got, m[::-1])


def test_measured_launch_geometry():
    # 8192 x 8192 bytes: 4096 * 8192 / 16 vector pairs, 8192 blocks of 256
    assert reverse2D.work(reverse2D.POINTS["8192 8192 100"]) == (8192 * 256, 256)
    assert reverse2D.work({"nrows": 7, "ncols": 32}) == (256, 256)  # 4 * 32 / 16 = 8 threads do work
