"""hecbench/bwt: the table fill, the whole bitonic network (the region run for every ``(k, j)``) against
Python's sort of the rotation strings, the prefix-doubling order, and the transform of a hand-worked word."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench.bwt import (
    KERNELS,
    genome,
    make_bitonic_inputs,
    make_reconstruct_inputs,
    sorted_rotations,
    table_size_of,
)

GENERATE, BITONIC, RECONSTRUCT = (numba.njit(k.cpu) for k in KERNELS)


def _rotation_order(seq):
    s = seq.tobytes()
    return sorted(range(len(s)), key=lambda a: s[a:] + s[:a])


def test_generate_table():
    table = GENERATE(np.zeros(16, dtype=np.int32), 16, 11, 4)
    assert table.tolist() == list(range(11)) + [-1] * 5


@pytest.mark.parametrize("n,block", [(1000, 64), (300, 32)])
def test_bitonic_network_sorts_the_rotations(n, block):
    table, ts, j, k, g, _, _ = make_bitonic_inputs({"n": n, "block": block}, 0)
    assert (j, k) == (1, 2) and ts == table_size_of(n)
    first = BITONIC(table.copy(), ts, 1, 2, g, n, block)
    # the first step orders pairs (2m, 2m + 1) ascending when m is even, descending when odd
    s = g.tobytes()
    for i in (0, 2, 4, 6):
        a, b = first[i], first[i + 1]
        ra, rb = s[a:] + s[:a], s[b:] + s[:b]
        assert (ra < rb) if i % 4 == 0 else (ra > rb)
    k = 2
    while k <= ts:
        j = k >> 1
        while j > 0:
            table = BITONIC(table, ts, j, k, g, n, block)
            j >>= 1
        k <<= 1
    assert table[:n].tolist() == _rotation_order(g)
    assert (table[n:] == -1).all()
    assert sorted_rotations(g).tolist() == _rotation_order(g)


def test_reconstruct_gives_the_transform():
    table, seq, out, n, block = make_reconstruct_inputs(KERNELS[2].test_point, 3)
    got = RECONSTRUCT(table, seq, out, n, block)
    order = _rotation_order(seq)
    assert got.tobytes() == bytes(seq[(a - 1) % n] for a in order)
    word = np.frombuffer(b"CAT", dtype=np.int8)  # rotations ATC, CAT, TCA -> letters before: C, T, A
    t = np.array([1, 0, 2, -1], dtype=np.int32)
    assert sorted_rotations(word).tolist() == [1, 0, 2]
    assert RECONSTRUCT(t, word, np.zeros(3, dtype=np.int8), 3, 32).tobytes() == b"CTA"


def test_genome_letters_are_glibc():
    # glibc after srand(123): 128959393 % 4 = 1, 1692901013 % 4 = 1, 436085873 % 4 = 1 -> "TTT"
    assert genome(3, 0).tobytes() == b"TTT"
    assert set(genome(2000, 0).tobytes()) == set(b"ATCG")


def test_measured_grids():
    p = KERNELS[0].points["10000000"]
    assert [k.work(p) for k in KERNELS] == [(65536 * 256, 256)] * 2 + [(39063 * 256, 256)]
