"""Needleman-Wunsch, Extended OpenDwarfs ``nw`` (``needle``): its two kernels, as AIWC timed them.

The score matrix ``H`` of two sequences of length ``n`` (a multiple of 16) has ``(n + 1)^2`` cells; row 0
and column 0 hold the gap penalties ``-k * penalty``, and every other cell is
``max(H[r-1, c-1] + ref[r, c], H[r, c-1] - penalty, H[r-1, c] - penalty)`` with ``ref`` the BLOSUM62 score
of the two residues. The interior is cut into 16 x 16 tiles (``block_width = n / 16`` across); one work
group of 16 work items computes one tile, sweeping its 31 anti-diagonals with a barrier after each:
work item ``tx`` computes column ``tx`` of the tile top-down during the first 16 steps (``tx <= m``), then
row ``15 - tx`` left to right during the last 15 (AIWC counts 31 barriers per work item: 496 for kernel
1's 16). All reads and writes go to global memory (the kernel names say "shared", but this version has no
local memory).

* ``needle_opencl_shared_1`` computes the tiles of one tile anti-diagonal of the upper-left triangle: launch
  ``i = 1 .. block_width`` has ``i`` work groups (``16 i`` work items). Its first invocation (the one AIWC
  records) is ``i = 1``: the top-left tile, 16 work items at every size.
* ``needle_opencl_shared_2`` does the same for the lower-right triangle, ``i = block_width - 1 .. 1``. Its
  first invocation is ``i = block_width - 1``, after all of kernel 1's launches, which ``make_inputs``
  runs first (a plain NumPy DP over the upper-left triangle of tiles): ``16 (block_width - 1)`` work items.

Sizes: AIWC's ``N 10`` arguments (length ``N``, penalty 10). Inputs as the host makes them (glibc
``srand(7)``; ``seed`` is added to the 7, so seed 0 is the original's data): the residues of the first
sequence (column 0, rows 1..n) and then of the second (row 0) are ``rand() % 10 + 1``, i.e. BLOSUM62 indices
1..10; ``ref`` is 0 in row and column 0 (the host leaves them unset and the kernels never read them). The
BLOSUM62 table is the public NCBI matrix, written here in its usual text layout.

The region: a work item's 31 barrier-separated steps are 31 ``prange`` loops one after another (each over
all of the launch's work items, with the original's guard ``tx <= m`` inside), since the steps depend on
each other across work items of a group. A work item's tile offset, computed once before the steps in the
original and kept in a register, is recomputed at the start of each step here (a few integer operations).
The matrices are flat int32 arrays, as in the original.

Precision: integer only (no floating-point operation), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from ._glibc import glibc_rand
from .spec import MeasuredKernel

BS = 16  # tile side and work-group size (BLOCK_SIZE)

#: BLOSUM62 (NCBI); rows and columns in the order of the header
_BLOSUM62_TEXT = """
   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V  B  Z  X  *
A  4 -1 -2 -2  0 -1 -1  0 -2 -1 -1 -1 -1 -2 -1  1  0 -3 -2  0 -2 -1  0 -4
R -1  5  0 -2 -3  1  0 -2  0 -3 -2  2 -1 -3 -2 -1 -1 -3 -2 -3 -1  0 -1 -4
N -2  0  6  1 -3  0  0  0  1 -3 -3  0 -2 -3 -2  1  0 -4 -2 -3  3  0 -1 -4
D -2 -2  1  6 -3  0  2 -1 -1 -3 -4 -1 -3 -3 -1  0 -1 -4 -3 -3  4  1 -1 -4
C  0 -3 -3 -3  9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1 -3 -3 -2 -4
Q -1  1  0  0 -3  5  2 -2  0 -3 -2  1  0 -3 -1  0 -1 -2 -1 -2  0  3 -1 -4
E -1  0  0  2 -4  2  5 -2  0 -3 -3  1 -2 -3 -1  0 -1 -3 -2 -2  1  4 -1 -4
G  0 -2  0 -1 -3 -2 -2  6 -2 -4 -4 -2 -3 -3 -2  0 -2 -2 -3 -3 -1 -2 -1 -4
H -2  0  1 -1 -3  0  0 -2  8 -3 -3 -1 -2 -1 -2 -1 -2 -2  2 -3  0  0 -1 -4
I -1 -3 -3 -3 -1 -3 -3 -4 -3  4  2 -3  1  0 -3 -2 -1 -3 -1  3 -3 -3 -1 -4
L -1 -2 -3 -4 -1 -2 -3 -4 -3  2  4 -2  2  0 -3 -2 -1 -2 -1  1 -4 -3 -1 -4
K -1  2  0 -1 -3  1  1 -2 -1 -3 -2  5 -1 -3 -1  0 -1 -3 -2 -2  0  1 -1 -4
M -1 -1 -2 -3 -1  0 -2 -3 -2  1  2 -1  5  0 -2 -1 -1 -1 -1  1 -3 -1 -1 -4
F -2 -3 -3 -3 -2 -3 -3 -3 -1  0  0 -3  0  6 -4 -2 -2  1  3 -1 -3 -3 -1 -4
P -1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4  7 -1 -1 -4 -3 -2 -2 -1 -2 -4
S  1 -1  1  0 -1  0  0  0 -1 -2 -2  0 -1 -2 -1  4  1 -3 -2 -2  0  0  0 -4
T  0 -1  0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1  1  5 -2 -2  0 -1 -1  0 -4
W -3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1  1 -4 -3 -2 11  2 -3 -4 -3 -2 -4
Y -2 -2 -2 -3 -2 -1 -2 -3  2 -1 -1 -2 -1  3 -3 -2 -2  2  7 -1 -3 -2 -1 -4
V  0 -3 -3 -3 -1 -2 -2 -3 -3  3  1 -2  1 -1 -2 -2  0 -3 -1  4 -3 -2 -1 -4
B -2 -1  3  4 -3  0  1 -1  0 -3 -4  0 -3 -3 -2  0 -1 -4 -3 -3  4  1 -1 -4
Z -1  0  0  1 -3  3  4 -2  0 -3 -3  1 -1 -3 -1  0 -1 -3 -2 -2  1  4 -1 -4
X  0 -1 -1 -1 -2 -1 -1 -1 -1 -1 -1 -1 -1 -1 -2  0  0 -2 -1 -1 -1 -1 -1 -4
* -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4  1
"""


def _parse_blosum(text):
    lines = text.strip().splitlines()
    letters = lines[0].split()
    table = np.array([[int(v) for v in line.split()[1:]] for line in lines[1:]], dtype=np.int32)
    assert [line.split()[0] for line in lines[1:]] == letters and table.shape == (len(letters),) * 2
    return "".join(letters), table


BLOSUM62_LETTERS, BLOSUM62 = _parse_blosum(_BLOSUM62_TEXT)

#: AIWC sizes: sequence length N, penalty 10
POINTS = {
    "tiny": {"n": 48, "penalty": 10},
    "small": {"n": 176, "penalty": 10},
    "medium": {"n": 1008, "penalty": 10},
    "large": {"n": 4096, "penalty": 10},
}


def _max3(a, b, c):
    # the kernel's maximum(): the larger of a and b (b on ties), then c if that is not smaller
    if a <= b:
        k = b
    else:
        k = a
    if k <= c:
        return c
    return k


_max3_cpu = numba.njit(_max3)
_max3_gpu = cuda.jit(device=True)(_max3)


def needle_opencl_shared_1(reference, matrix, cols, penalty, i, block_width):
    """Kernel 1, launch ``i``: the ``i`` tiles of tile anti-diagonal ``i - 1`` (upper-left triangle).

    Parameters
    ----------
    reference : int32, ``cols * cols``, the BLOSUM62 score of each cell's residue pair.
    matrix : int32, ``cols * cols``, the score matrix, updated in place.
    cols : ``n + 1``. penalty : gap penalty. i : launch number (work groups). block_width : ``n / 16``.

    Returns
    -------
    ``matrix``.
    """
    for m in range(BS):
        for gid in numba.prange(i * BS):
            bx = gid // BS
            tx = gid % BS
            b_index_x = bx
            b_index_y = i - 1 - bx
            index = cols * BS * b_index_y + BS * b_index_x + tx + (cols + 1)
            if tx <= m:
                ref_x = index + (m - tx) * cols
                matrix[ref_x] = _max3_cpu(matrix[ref_x - (cols + 1)] + reference[ref_x],
                                          matrix[ref_x - 1] - penalty,
                                          matrix[ref_x - cols] - penalty)
    for m in range(BS - 2, -1, -1):
        for gid in numba.prange(i * BS):
            bx = gid // BS
            tx = gid % BS
            b_index_x = bx
            b_index_y = i - 1 - bx
            index = cols * BS * b_index_y + BS * b_index_x + tx + (cols + 1)
            if tx <= m:
                ref_x = index + (m - tx) * cols + (cols + 1) * (BS - 1 - m)
                matrix[ref_x] = _max3_cpu(matrix[ref_x - (cols + 1)] + reference[ref_x],
                                          matrix[ref_x - 1] - penalty,
                                          matrix[ref_x - cols] - penalty)
    return matrix


def needle_opencl_shared_2(reference, matrix, cols, penalty, i, block_width):
    """Kernel 2, launch ``i``: the ``i`` tiles of the lower-right triangle's tile anti-diagonal
    ``2 block_width - 1 - i`` (same arguments and result as kernel 1)."""
    for m in range(BS):
        for gid in numba.prange(i * BS):
            bx = gid // BS
            tx = gid % BS
            b_index_x = bx + block_width - i
            b_index_y = block_width - bx - 1
            index = cols * BS * b_index_y + BS * b_index_x + tx + (cols + 1)
            if tx <= m:
                ref_x = index + (m - tx) * cols
                matrix[ref_x] = _max3_cpu(matrix[ref_x - (cols + 1)] + reference[ref_x],
                                          matrix[ref_x - 1] - penalty,
                                          matrix[ref_x - cols] - penalty)
    for m in range(BS - 2, -1, -1):
        for gid in numba.prange(i * BS):
            bx = gid // BS
            tx = gid % BS
            b_index_x = bx + block_width - i
            b_index_y = block_width - bx - 1
            index = cols * BS * b_index_y + BS * b_index_x + tx + (cols + 1)
            if tx <= m:
                ref_x = index + (m - tx) * cols + (cols + 1) * (BS - 1 - m)
                matrix[ref_x] = _max3_cpu(matrix[ref_x - (cols + 1)] + reference[ref_x],
                                          matrix[ref_x - 1] - penalty,
                                          matrix[ref_x - cols] - penalty)
    return matrix


# ---------------------------------------------------------------------------------------------- GPU ports


@cuda.jit(device=True)
def _tile_sweep(reference, matrix, cols, penalty, index, tx):
    for m in range(BS):
        if tx <= m:
            ref_x = index + (m - tx) * cols
            matrix[ref_x] = _max3_gpu(matrix[ref_x - (cols + 1)] + reference[ref_x],
                                      matrix[ref_x - 1] - penalty,
                                      matrix[ref_x - cols] - penalty)
        cuda.syncthreads()
    for m in range(BS - 2, -1, -1):
        if tx <= m:
            ref_x = index + (m - tx) * cols + (cols + 1) * (BS - 1 - m)
            matrix[ref_x] = _max3_gpu(matrix[ref_x - (cols + 1)] + reference[ref_x],
                                      matrix[ref_x - 1] - penalty,
                                      matrix[ref_x - cols] - penalty)
        cuda.syncthreads()


@cuda.jit
def _needle1_gpu(reference, matrix, cols, penalty, i, block_width):
    bx = cuda.blockIdx.x
    tx = cuda.threadIdx.x
    index = cols * BS * (i - 1 - bx) + BS * bx + tx + (cols + 1)
    _tile_sweep(reference, matrix, cols, penalty, index, tx)


@cuda.jit
def _needle2_gpu(reference, matrix, cols, penalty, i, block_width):
    bx = cuda.blockIdx.x
    tx = cuda.threadIdx.x
    index = cols * BS * (block_width - bx - 1) + BS * (bx + block_width - i) + tx + (cols + 1)
    _tile_sweep(reference, matrix, cols, penalty, index, tx)


def _to_device(reference, matrix, cols, penalty, i, block_width):
    return {"reference": cuda.to_device(reference), "matrix": cuda.to_device(matrix),
            "args": (int(cols), int(penalty), int(i), int(block_width))}


def _launch_1(s):
    _needle1_gpu[s["args"][2], BS](s["reference"], s["matrix"], *s["args"])


def _launch_2(s):
    _needle2_gpu[s["args"][2], BS](s["reference"], s["matrix"], *s["args"])


def _from_device(s):
    return s["matrix"].copy_to_host()


# ----------------------------------------------------------------------------------- inputs (host code)


def host_setup(n, penalty, seed):
    """The host's ``(reference, matrix, cols)`` before any kernel: flat int32 ``(n + 1)^2`` arrays."""
    if n % BS or n < BS:
        raise ValueError(f"nw: the sequence length must be a positive multiple of {BS}, got {n}")
    cols = n + 1
    r = glibc_rand(7 + seed, 2 * n)
    seq_rows = r[:n] % 10 + 1  # drawn first: column 0, rows 1..n
    seq_cols = r[n:] % 10 + 1  # then row 0, columns 1..n
    reference = np.zeros((cols, cols), dtype=np.int32)
    reference[1:, 1:] = BLOSUM62[seq_rows[:, None], seq_cols[None, :]]
    matrix = np.zeros((cols, cols), dtype=np.int32)
    matrix[1:, 0] = -np.arange(1, cols) * penalty
    matrix[0, 1:] = -np.arange(1, cols) * penalty
    return reference.ravel(), matrix.ravel(), cols


def upper_left_numpy(reference, matrix, cols, penalty):
    """What all of kernel 1's launches leave: the recurrence over every cell of the upper-left triangle of
    tiles, one cell anti-diagonal at a time (NumPy), other cells untouched. Returns a new flat matrix."""
    n = cols - 1
    bw = n // BS
    H = matrix.reshape(cols, cols).copy()
    R = reference.reshape(cols, cols)
    for d in range(2, n + BS + 1):  # the triangle's cells have r + c <= n + 16
        r = np.arange(max(1, d - n), min(n, d - 1) + 1)
        c = d - r
        keep = (r - 1) // BS + (c - 1) // BS <= bw - 1
        r, c = r[keep], c[keep]
        H[r, c] = np.maximum(np.maximum(H[r - 1, c - 1] + R[r, c], H[r, c - 1] - penalty), H[r - 1, c] - penalty)
    return H.ravel()


def make_inputs_1(params, seed):
    """Kernel 1's first invocation (``i = 1``): the host's initial matrices."""
    n, penalty = int(params["n"]), int(params["penalty"])
    reference, matrix, cols = host_setup(n, penalty, seed)
    return reference, matrix, cols, penalty, 1, n // BS


def make_inputs_2(params, seed):
    """Kernel 2's first invocation (``i = block_width - 1``): the matrix after all of kernel 1's launches."""
    n, penalty = int(params["n"]), int(params["penalty"])
    if n < 2 * BS:
        raise ValueError(f"nw: kernel 2 runs only when the length is at least {2 * BS}, got {n}")
    reference, matrix, cols = host_setup(n, penalty, seed)
    matrix = upper_left_numpy(reference, matrix, cols, penalty)
    return reference, matrix, cols, penalty, n // BS - 1, n // BS


def work_1(params):
    return BS, BS


def work_2(params):
    return BS * (int(params["n"]) // BS - 1), BS


_DOC = "Extended OpenDwarfs needle (AIWC), first invocation; 16x16 tiles, one 16-item work group per tile"

KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="nw",
        kernel="needle_opencl_shared_1",
        description=f"{_DOC}: upper-left triangle, first launch (the top-left tile)",
        cpu=needle_opencl_shared_1,
        gpu=GpuPort(_to_device, _launch_1, _from_device),
        make_inputs=make_inputs_1,
        points=POINTS,
        work=work_1,
        test_point=POINTS["tiny"],
        rtol=0.0,
        atol=0.0,
    ),
    MeasuredKernel(
        source="aiwc",
        application="nw",
        kernel="needle_opencl_shared_2",
        description=f"{_DOC}: lower-right triangle, first launch (the tile diagonal below the main one)",
        cpu=needle_opencl_shared_2,
        gpu=GpuPort(_to_device, _launch_2, _from_device),
        make_inputs=make_inputs_2,
        points=POINTS,
        work=work_2,
        test_point=POINTS["tiny"],
        rtol=0.0,
        atol=0.0,
    ),
]
