"""HeCBench ``bwt``: the kernels ``generate_table``, ``bitonic_sort_step`` and ``reconstruct_sequence`` of a
Burrows-Wheeler transform by bitonic sort of the rotations, as timed on an RTX 3080.

The program draws a genome of ``N`` letters from ``ATCG`` (``alphabet[rand() % 4]`` after ``srand(123)``;
the ETX terminator it appends ends the C string, so the transformed sequence has ``n = N`` letters). The
table of rotations is padded to ``table_size``, the next power of two (2^24 for ``N = 10^7``):

* ``generate_table`` (grid-stride loop, one element per thread here): ``table[i] = i < n ? i : -1``;
* ``bitonic_sort_step(j, k)``: thread ``i`` with partner ``ixj = i ^ j > i`` compares the rotations at
  ``table[i]`` and ``table[ixj]`` (ascending when ``i & k == 0``) character by character (``genome[(a + c) %
  n]``, stopping at the first difference; a ``-1`` entry sorts after every rotation) and swaps them when out
  of order; the host runs the ``(k, j)`` network, ``k = 2, 4, ..., table_size``, ``j = k / 2, ..., 1``;
* ``reconstruct_sequence`` (grid-stride loop, one element per thread): the transform's letter ``i`` is the
  letter before the ``i``-th smallest rotation, ``sequence[(n + table[i] - 1) % n]``.

Launch: ``table_size / 256`` blocks of 256 for the first two (65536 blocks, 16.8 M threads), ``ceil(n /
256)`` for the last (39063 blocks, 10,000,128 threads). The timed launches are the first of each kernel:
``generate_table`` on the ``cudaMalloc``'d table (zeros here; all written), ``bitonic_sort_step`` with ``k =
2, j = 1`` on the fresh table, and ``reconstruct_sequence`` on the fully sorted table (``make_inputs``
computes the sorted rotations with NumPy prefix doubling: the rotations of a random genome are distinct, so
the order is the bitonic sort's).

Inputs: glibc's ``rand()`` after ``srand(123 + seed)`` (seed 0: the original's genome). CPU regions: one
``prange`` over the launched threads each. ``block`` is a parameter (the original fixes 256). Precision:
int32 table, int8 letters (``char``), as the original. Measured sizes: ``generate_table`` 2.0e8,
``bitonic_sort_step`` 3.6e8, ``reconstruct_sequence`` 1.4e8 records; each kernel has a ``feature_point`` (N =
100000, table 2^17).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
ALPHABET = np.frombuffer(b"ATCG", dtype=np.int8)

POINTS = {"10000000": {"n": 10_000_000, "block": BLOCK}}
#: 1000 letters, table 1024, blocks of 64: 16 blocks
TEST_POINT = {"n": 1000, "block": 64}
FEATURE_POINT = {"n": 100_000, "block": BLOCK}


def table_size_of(n):
    """The host's power of two at or above ``n``."""
    t = 1
    while t < n:
        t <<= 1
    return t


def generate_table(table, table_size, n, block):
    """CPU region: one ``generate_table`` launch (``table_size / block`` blocks); fills ``table`` (int32) and
    returns it."""
    n_threads = (table_size + block - 1) // block * block
    for index in numba.prange(n_threads):
        i = index
        while i < table_size:
            table[i] = i if i < n else -1
            i += n_threads
    return table


def bitonic_sort_step(table, table_size, j, k, genome, n, block):
    """CPU region: one compare-exchange step ``(j, k)`` of the bitonic network over the rotations of
    ``genome`` (int8 ``n``); updates ``table`` (int32 ``table_size``) in place and returns it."""
    n_threads = (table_size + block - 1) // block * block
    for i in numba.prange(n_threads):
        ixj = i ^ j
        if i < table_size and ixj > i:
            f = (i & k) == 0
            t1 = table[i]
            t2 = table[ixj]
            a = t2 if f else t1
            b = t1 if f else t2
            # compare_rotations(a, b): is rotation a before rotation b?
            less = False
            if a >= 0:
                if b < 0:
                    less = True
                else:
                    c = 0
                    while c < n:
                        ga = genome[(a + c) % n]
                        gb = genome[(b + c) % n]
                        if ga != gb:
                            less = ga < gb
                            break
                        c += 1
            if less:
                table[i] = t2
                table[ixj] = t1
    return table


def reconstruct_sequence(table, sequence, transformed, n, block):
    """CPU region: one ``reconstruct_sequence`` launch (``ceil(n / block)`` blocks); writes ``transformed``
    (int8 ``n``) and returns it."""
    n_threads = (n + block - 1) // block * block
    for index in numba.prange(n_threads):
        i = index
        while i < n:
            transformed[i] = sequence[(n + table[i] - 1) % n]
            i += n_threads
    return transformed


@cuda.jit
def _generate_gpu(table, table_size, n):
    index = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.blockDim.x * cuda.gridDim.x
    i = index
    while i < table_size:
        table[i] = i if i < n else -1
        i += stride


@cuda.jit(device=True)
def _compare_rotations(a, b, genome, n):
    if a < 0:
        return False
    if b < 0:
        return True
    for c in range(n):
        ga = genome[(a + c) % n]
        gb = genome[(b + c) % n]
        if ga != gb:
            return ga < gb
    return False


@cuda.jit
def _bitonic_gpu(table, table_size, j, k, genome, n):
    i = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
    ixj = i ^ j
    if i < table_size and ixj > i:
        f = (i & k) == 0
        t1 = table[i]
        t2 = table[ixj]
        if _compare_rotations(t2 if f else t1, t1 if f else t2, genome, n):
            table[i] = t2
            table[ixj] = t1


@cuda.jit
def _reconstruct_gpu(table, sequence, transformed, n):
    index = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.blockDim.x * cuda.gridDim.x
    i = index
    while i < n:
        transformed[i] = sequence[(n + table[i] - 1) % n]
        i += stride


def _generate_port():
    def to_device(table, table_size, n, block):
        return {"t": cuda.to_device(table), "args": (int(table_size), int(n)), "block": int(block)}

    def launch(s):
        bs = s["block"]
        _generate_gpu[(s["args"][0] + bs - 1) // bs, bs](s["t"], *s["args"])

    return GpuPort(to_device, launch, lambda s: s["t"].copy_to_host())


def _bitonic_port():
    def to_device(table, table_size, j, k, genome, n, block):
        return {"t": cuda.to_device(table), "g": cuda.to_device(genome),
                "args": (int(table_size), int(j), int(k)), "n": int(n), "block": int(block)}

    def launch(s):
        bs = s["block"]
        _bitonic_gpu[(s["args"][0] + bs - 1) // bs, bs](s["t"], *s["args"], s["g"], s["n"])

    return GpuPort(to_device, launch, lambda s: s["t"].copy_to_host())


def _reconstruct_port():
    def to_device(table, sequence, transformed, n, block):
        return {"arrays": tuple(cuda.to_device(a) for a in (table, sequence, transformed)), "n": int(n),
                "block": int(block)}

    def launch(s):
        bs = s["block"]
        _reconstruct_gpu[(s["n"] + bs - 1) // bs, bs](*s["arrays"], s["n"])

    return GpuPort(to_device, launch, lambda s: s["arrays"][2].copy_to_host())


def work_table(params):
    bs = int(params["block"])
    return (table_size_of(int(params["n"])) + bs - 1) // bs * bs, bs


def work_reconstruct(params):
    n, bs = int(params["n"]), int(params["block"])
    return (n + bs - 1) // bs * bs, bs


def genome(n, seed):
    """The program's sequence: ``"ATCG"[rand() % 4]`` after ``srand(123 + seed)``, int8 (ASCII)."""
    return ALPHABET[glibc_rand(123 + seed, n) % 4]


def sorted_rotations(seq):
    """The rotations of ``seq`` in ascending order (their start indices, int32), by prefix doubling: ranks
    of 16-letter prefixes (two bits a letter, letters ranked as their ASCII codes), then of 32, 64, ...
    letters until all differ (a cyclic sequence with equal rotations keeps them in index order)."""
    n = seq.size
    code = np.searchsorted(np.sort(np.unique(seq)), seq).astype(np.int64)  # ranks of the letters, 0..3
    width = 16 if np.unique(seq).size <= 4 else 1
    bits = 2 if width == 16 else 8
    key = np.zeros(n, dtype=np.int64)
    for c in range(width):
        key = (key << bits) | np.roll(code, -c)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.concatenate([[0], np.cumsum(ks[1:] != ks[:-1])])
    length = width
    while rank.max() < n - 1 and length < n:
        second = np.roll(rank, -length)
        key = rank * n + second
        order = np.argsort(key, kind="stable")
        ks = key[order]
        rank[order] = np.concatenate([[0], np.cumsum(ks[1:] != ks[:-1])])
        length *= 2
    return order.astype(np.int32)


def make_generate_inputs(params, seed):
    """``(table, table_size, n, block)``: the table before its fill (zeros)."""
    n = int(params["n"])
    ts = table_size_of(n)
    return np.zeros(ts, dtype=np.int32), ts, n, int(params["block"])


def make_bitonic_inputs(params, seed):
    """``(table, table_size, 1, 2, genome, n, block)``: the first step of the network on the fresh table."""
    n = int(params["n"])
    ts = table_size_of(n)
    table = np.full(ts, -1, dtype=np.int32)
    table[:n] = np.arange(n, dtype=np.int32)
    return table, ts, 1, 2, genome(n, seed), n, int(params["block"])


def make_reconstruct_inputs(params, seed):
    """``(table, sequence, transformed, n, block)``: the sorted table (its first ``n`` entries are read)."""
    n = int(params["n"])
    seq = genome(n, seed)
    table = np.full(table_size_of(n), -1, dtype=np.int32)
    table[:n] = sorted_rotations(seq)
    return table, seq, np.zeros(n, dtype=np.int8), n, int(params["block"])


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="bwt",
        kernel=name,
        description=f"HeCBench bwt: {name} of the Burrows-Wheeler transform of a 10^7-letter genome ({what})",
        cpu=region,
        gpu=port,
        make_inputs=inputs,
        points=POINTS,
        work=wk,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0.0,
        atol=0.0,
    )
    for name, region, port, inputs, wk, what in (
        ("generate_table", generate_table, _generate_port(), make_generate_inputs, work_table,
         "fill the padded rotation table"),
        ("bitonic_sort_step", bitonic_sort_step, _bitonic_port(), make_bitonic_inputs, work_table,
         "first compare-exchange step: rotations compared letter by letter"),
        ("reconstruct_sequence", reconstruct_sequence, _reconstruct_port(), make_reconstruct_inputs,
         work_reconstruct, "gather the letter before each sorted rotation"),
    )
]
