"""Needleman-Wunsch global alignment score matrix (wavefront dependences, divergent max).

Cell ``H[i, j]`` needs ``H[i-1, j-1]``, ``H[i-1, j]`` and ``H[i, j-1]``, so only cells on one
anti-diagonal are independent. CPU region: the serial loop walks the anti-diagonals, the parallel loop
covers the cells of one diagonal. GPU port (as Rodinia's needle): the matrix is cut into 16x16 tiles;
one launch per diagonal of tiles, one block per tile, the tile's border is staged in shared memory and
the block sweeps the tile's 31 internal anti-diagonals with a barrier between them.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TILE = 16
MATCH = 2
MISMATCH = -1
GAP = -2


def needleman_wunsch(a, b):
    """Score matrix of the global alignment of sequences ``a`` and ``b`` (match +2, mismatch -1, gap -2).

    Parameters
    ----------
    a, b : int8 sequences over a small alphabet, of equal length ``n``.

    Returns
    -------
    int32 matrix ``H`` of shape ``(n + 1, n + 1)``; ``H[n, n]`` is the optimal score.
    """
    n = a.shape[0]
    H = np.empty((n + 1, n + 1), dtype=np.int32)
    for i in range(n + 1):
        H[i, 0] = GAP * i
        H[0, i] = GAP * i
    for d in range(2, 2 * n + 1):
        lo = max(1, d - n)
        hi = min(n, d - 1)
        for t in numba.prange(hi - lo + 1):
            i = lo + t
            j = d - i
            s = MATCH if a[i - 1] == b[j - 1] else MISMATCH
            best = H[i - 1, j - 1] + s
            up = H[i - 1, j] + GAP
            if up > best:
                best = up
            left = H[i, j - 1] + GAP
            if left > best:
                best = left
            H[i, j] = best
    return H


@cuda.jit
def _nw_tiles(H, a, b, bd, nb):
    sm = cuda.shared.array((TILE + 1, TILE + 1), dtype=numba.int32)
    sa = cuda.shared.array(TILE, dtype=numba.int8)
    sb = cuda.shared.array(TILE, dtype=numba.int8)
    t = cuda.threadIdx.x
    bi = max(0, bd - nb + 1) + cuda.blockIdx.x
    bj = bd - bi
    r0 = bi * TILE
    c0 = bj * TILE
    sm[0, t + 1] = H[r0, c0 + t + 1]
    sm[t + 1, 0] = H[r0 + t + 1, c0]
    if t == 0:
        sm[0, 0] = H[r0, c0]
    sa[t] = a[r0 + t]
    sb[t] = b[c0 + t]
    cuda.syncthreads()
    i = t + 1
    for step in range(2 * TILE - 1):
        j = step - t + 1
        if j >= 1 and j <= TILE:
            s = MATCH if sa[i - 1] == sb[j - 1] else MISMATCH
            best = sm[i - 1, j - 1] + s
            up = sm[i - 1, j] + GAP
            if up > best:
                best = up
            left = sm[i, j - 1] + GAP
            if left > best:
                best = left
            sm[i, j] = best
        cuda.syncthreads()
    for j in range(1, TILE + 1):
        H[r0 + t + 1, c0 + j] = sm[t + 1, j]


def _to_device(a, b):
    n = a.shape[0]
    if n % TILE:
        raise ValueError(f"needleman_wunsch GPU port needs a length that is a multiple of {TILE}, got {n}")
    H = np.zeros((n + 1, n + 1), dtype=np.int32)
    H[:, 0] = GAP * np.arange(n + 1)
    H[0, :] = GAP * np.arange(n + 1)
    return {"H": cuda.to_device(H), "a": cuda.to_device(a), "b": cuda.to_device(b), "nb": n // TILE}


def _launch(s):
    nb = s["nb"]
    for bd in range(2 * nb - 1):
        blocks = min(bd, 2 * nb - 2 - bd) + 1
        _nw_tiles[blocks, TILE](s["H"], s["a"], s["b"], bd, nb)


def _from_device(s):
    return s["H"].copy_to_host()


def make_inputs(n, seed):
    """Two random DNA-like sequences (alphabet of 4) of length ``n`` rounded up to a multiple of 16,
    the second a mutated copy of the first so the alignment is meaningful."""
    rng = np.random.default_rng(seed)
    n = TILE * ((n + TILE - 1) // TILE)
    a = rng.integers(0, 4, size=n).astype(np.int8)
    b = a.copy()
    mutate = rng.random(n) < 0.3
    b[mutate] = rng.integers(0, 4, size=int(mutate.sum())).astype(np.int8)
    return a, b


KERNEL = KernelSpec(
    name="needleman_wunsch",
    category="divergent",
    description="Needleman-Wunsch score matrix by anti-diagonals; GPU: 16x16 shared-memory tiles, "
    "one launch per tile diagonal",
    cpu=needleman_wunsch,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 32, "small": 512, "medium": 2048, "large": 8192},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=True,
)
