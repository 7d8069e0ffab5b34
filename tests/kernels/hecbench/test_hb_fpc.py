"""The fpc port (kernels/measured/hecbench/fpc.py) against a vectorised NumPy classification (the host's
``FPCCompress``), hand-worked words, and the launch geometry of the data's first launches."""

from __future__ import annotations

import copy
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from kernels.measured.hecbench import fpc

DATA = Path(__file__).resolve().parents[3] / "kernels" / "measured" / "data" / "hecbench" / "profiling-data.csv.gz"


def _numpy_sizes(values):
    v = values.astype(np.int64)
    s = (v & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(np.int64)
    a = np.abs(s)
    b = [(v >> (8 * k)) & 0xFF for k in range(4)]
    rules = [(v == 0, 1), (a <= 0xFF, 1), (a <= 0xFFFF, 2), ((v & 0xFFFF) == 0, 2),
             (((v & 0xFFFF) <= 0xFF) & (((v >> 16) & 0xFFFF) <= 0xFF), 2),
             ((b[0] == b[1]) & (b[0] == b[2]) & (b[0] == b[3]), 1)]
    return np.select([r for r, _ in rules], [n for _, n in rules], default=4)


@pytest.mark.parametrize("kernel", ["fpc_kernel", "fpc2_kernel"])
@pytest.mark.parametrize("params,seed", [(fpc.TEST_POINT, 0), ({"wgs": 32, "repeat": 1}, 1)])
def test_region_equals_numpy(kernel, params, seed):
    spec = next(k for k in fpc.KERNELS if k.kernel == kernel)
    inputs = spec.make_inputs(params, seed)
    got = numba.njit(spec.cpu)(*copy.deepcopy(inputs))
    sizes = _numpy_sizes(inputs[0])
    assert got[0] == sizes.sum()
    assert len(set(sizes.tolist())) == 3  # 1, 2 and 4 bytes all occur


def test_hand_worked_words():
    # 0 -> 1; 0x7F -> 1; 0xFFFFFF80 (-128) -> 1; 0x1234 -> 2; 0x12340000 -> 2; 0x00120034 -> 2;
    # 0xABABABAB -> 1; 0x12345678 -> 4
    words = np.array([0, 0x7F, 0xFFFFFF80, 0x1234, 0x12340000, 0x00120034, 0xABABABAB, 0x12345678], np.uint64)
    for region in (fpc.fpc_kernel, fpc.fpc2_kernel):
        assert region(words, np.zeros(1, np.uint32), 8, 8)[0] == 1 + 1 + 1 + 2 + 2 + 2 + 1 + 4


def test_words_are_the_hosts_bytes():
    r = fpc.glibc_rand(2, 8)
    byte = [(0xFF << (int(k) % 256 % 32)) & 0xFF for k in r]
    want = [sum(byte[4 * i + j] << (8 * j) for j in range(4)) for i in range(2)]
    assert fpc.make_words(8, 0).tolist() == want


def test_work_equals_the_datas_first_launch():
    df = pd.read_csv(DATA, usecols=["targetName", "kernelName", "Block Size", "Grid Size"])
    for spec in fpc.KERNELS:
        row = df[(df.targetName == "fpc-cuda") & (df.kernelName == spec.kernel)].iloc[0]
        block = np.prod([int(v) for v in row["Block Size"].strip("()").split(",")])
        grid = np.prod([int(v) for v in row["Grid Size"].strip("()").split(",")])
        assert spec.work(spec.points["256 100"]) == (grid * block, block)
