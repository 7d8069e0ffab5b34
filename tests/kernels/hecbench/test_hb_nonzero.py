"""HeCBench nonzero (kernels/measured/hecbench/nonzero.py) against ``numpy.nonzero``."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import nonzero

REGION = numba.njit(nonzero.write_indices)


@pytest.mark.parametrize("nrows,ncols,nzero", [(24, 40, 640), (7, 300, 1000), (1, 5, 5)])
def test_coordinates_equal_numpy_nonzero(nrows, ncols, nzero):
    p = {"nrows": nrows, "ncols": ncols, "repeat": 1, "nzero": nzero}
    t = nonzero.make_tensor(p, 3)
    assert np.count_nonzero(t) == nzero
    got = REGION(*nonzero.make_inputs(p, 3))
    rows, cols = np.nonzero(t)
    assert got[:nzero].tolist() == rows.tolist()
    assert got[nzero:].tolist() == cols.tolist()


def test_hand_worked_and_measured_grid():
    # a 3 x 4 tensor with non-zeros at flat 1, 6, 11: (0, 1), (1, 2), (2, 3)
    inp = np.array([1, 6, 11, 0, 0, 0], dtype=np.int64)
    got = REGION(inp, np.array([3, 4], dtype=np.int64), 2, 3, 256)
    assert got.tolist() == [0, 1, 2, 1, 2, 3]
    assert nonzero.work(nonzero.POINTS["2048 2048 100"]) == (10920 * 256, 256)
