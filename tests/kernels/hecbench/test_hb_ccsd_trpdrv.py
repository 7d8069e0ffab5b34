"""The ccsd-trpdrv port (kernels/measured/hecbench/ccsd_trpdrv.py) against the energy sums written as NumPy
array expressions over all (b, c) pairs, the drand48 generator against hand-computed values, and the data's
launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import ccsd_trpdrv as cc

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def test_drand48_hand_worked():
    # srand48(0): X0 = 0x330E; X1 = (0x5DEECE66D * 0x330E + 11) mod 2^48
    x1 = (0x5DEECE66D * 0x330E + 11) % 2**48
    x2 = (0x5DEECE66D * x1 + 11) % 2**48
    assert cc.drand48(0, 2).tolist() == [x1 / 2**48, x2 / 2**48]
    assert cc.drand48(0, 1)[0] == pytest.approx(0.170828036106, abs=1e-12)  # glibc's first drand48() after srand48(0)


@pytest.mark.parametrize("nocc,nvir,seed", [(4, 40, 0), (3, 23, 1)])
def test_energies_equal_numpy(nocc, nvir, seed):
    inputs = cc.make_inputs({"nocc": nocc, "nvir": nvir, "maxiter": 1}, seed)
    got = numba.njit(cc.ccsd_kernel)(*copy.deepcopy(inputs))
    f1n, f1t, f2n, f2t, f3n, f3t, f4n, f4t = (a.reshape(nvir, nvir).T for a in inputs[:8])  # [b, c] = a[b + c nvir]
    dintc1, dintx1, t1v1, dintc2, dintx2, t1v2 = (a[:nvir] for a in inputs[8:14])
    eorb, eaijk = inputs[14], inputs[15]
    e = eorb[nocc:nocc + nvir]
    d = -1.0 / (e[:, None] + e[None, :] + eaijk)
    T = lambda m: m.T  # noqa: E731  (the cb element of [b, c])
    emp4i = (d * (f1t + T(f1n) + T(f2t) + f3n + T(f4n)) * (f1t - 2 * f2t - 2 * f3t + f4t)
             - d * (f1n + T(f1t) + T(f2n) + T(f3n)) * (2 * f1t - f2t - f3t + 2 * f4t)
             + 3 * d * (f1n * (f1n + T(f3n) + 2 * T(f4t)) + f2n * T(f2t) + f3n * f4t)).sum()
    emp5k = (d * t1v2[:, None] * dintx2[None, :] * (f1n + f2t + T(f4t) - 2 * (f3n + f4t + T(f2t) + f1t + f2n
                                                                              + T(f3t)) + 4 * (f3t + f4n + T(f1t)))
             + d * t1v2[:, None] * dintc2[None, :] * (f1t + f4t + T(f1n) - 2 * (f2t + f3t + T(f2n)))).sum()
    assert got[0][0] == pytest.approx(emp4i, rel=1e-10)
    assert got[3][0] == pytest.approx(emp5k, rel=1e-10)


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    row = df[(df.targetName == "ccsd-trpdrv-cuda") & (df.kernelName == "ccsd_kernel")].iloc[0]
    block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
    grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
    assert cc.work(cc.POINTS["40 200 100"]) == (grid * block, block)
