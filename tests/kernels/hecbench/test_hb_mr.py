"""The mr port (kernels/measured/hecbench/mr.py) against trial division, a strong pseudoprime worked by hand,
the host's xorshift sequence written independently, and the data's launch geometry."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import mr

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"
SPEC = {k.kernel: k for k in mr.KERNELS}


def _prime(n):
    return n > 1 and all(n % f for f in range(2, int(n**0.5) + 1))


def _run(kernel, ns):
    ns = np.asarray(ns, dtype=np.int64)
    threads = (len(ns) + 255) // 256 * 256
    val = np.zeros(1, np.int64)
    if kernel == "mr32_sf":
        return numba.njit(mr.mr32_sf)(mr.BASES, ns, val, len(ns), threads)[0]
    return numba.njit(mr.mr32_eff)(mr.BASES, ns, val, mr.MASK, len(ns), threads)[0]


@pytest.mark.parametrize("kernel", ["mr32_sf", "mr32_eff"])
def test_verdicts_equal_trial_division(kernel):
    # below 2047 (the least strong pseudoprime to base 2) every base count is exact: 3 verdicts per prime
    ns = [n for n in range(5, 2047, 2)]
    assert _run(kernel, ns) == 3 * sum(_prime(n) for n in ns)
    inputs = SPEC[kernel].make_inputs(mr.TEST_POINT, 0)
    assert numba.njit(SPEC[kernel].cpu)(*copy.deepcopy(inputs))[0] == 3 * 1000  # all primes


@pytest.mark.parametrize("kernel", ["mr32_sf", "mr32_eff"])
def test_strong_pseudoprimes(kernel):
    # 2047 = 23 * 89 passes base 2 only; 1373653 = 829 * 1657 passes bases 2 and 3 but not 7
    assert _run(kernel, [2047]) == 1
    assert _run(kernel, [1373653]) == 1
    assert _run(kernel, [1000003]) == 3  # a prime above 2^19


def test_primes_from_the_hosts_xorshift():
    x, y, z, w = 123456789, 362436069, 521288629, 88675123
    first = []
    for _ in range(3):
        t = (x ^ (x << 11)) % 2**32
        x, y, z = y, z, w
        w = (w ^ (w >> 19) ^ (t ^ (t >> 8))) % 2**32
        first.append(w)
    assert mr._xorshift(3).tolist() == first
    primes = mr.random_primes(500, 8)
    assert all(_prime(int(p)) for p in primes) and primes.max() < 2**9
    n = (first[0] & 0xFF) | 1
    n += int(mr.DISTANCE[(n >> 1) % 105])
    assert primes[0] >= max(n, 5) and all(not _prime(k) for k in range(max(n, 5), int(primes[0])) if k % 2)


def test_montgomery_inverse():
    for n in (5, 97, 239, 65537, 2**31 - 1):
        npi = int(mr.MASK[(n >> 1) & 127])
        npi = npi * ((2 + n * npi) % 2**32) % 2**32
        npi = npi * ((2 + n * npi) % 2**32) % 2**32
        assert (n * npi) % 2**32 == 2**32 - 1  # n * npi = -1 mod 2^32


def test_work_equals_the_datas_first_launch():
    import pandas as pd

    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "exeArgs", "Block Size", "Grid Size"])
    for spec in mr.KERNELS:
        row = df[(df.targetName == "mr-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        assert row["exeArgs"] != row["exeArgs"]  # NaN: the label "default"
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["default"]) == (grid * block, block)
