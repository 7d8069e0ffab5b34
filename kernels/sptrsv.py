"""Sparse lower-triangular solve ``L x = b`` by level scheduling (serial dependence chains).

Row ``i`` needs ``x[j]`` for every off-diagonal ``j < i`` in its row. The inputs carry a level schedule
(the analysis phase, as cuSPARSE's csrsv2_analysis): rows grouped so every row's dependencies lie in
earlier levels. CPU region: the serial loop walks the levels, the parallel loop covers one level's rows.
GPU port: one launch per level, thread per row. The matrix mixes short-range dependencies (chains) with
long-range ones, so there are many narrow levels: little parallelism per launch.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

TPB = 128


def sptrsv(indptr, indices, data, diag, b, level_ptr, level_rows):
    """Solve ``L x = b`` for lower-triangular ``L`` = strictly-lower CSR part + ``diag``.

    Parameters
    ----------
    indptr, indices, data : CSR of the strictly lower part (every ``indices[k] < row``).
    diag : float64 non-zero diagonal.
    b : float64 right-hand side.
    level_ptr, level_rows : the rows of level ``l`` are ``level_rows[level_ptr[l]:level_ptr[l+1]]``.

    Returns
    -------
    float64 solution ``x``.
    """
    n = b.shape[0]
    x = np.zeros(n, dtype=np.float64)
    for lev in range(level_ptr.shape[0] - 1):
        start = level_ptr[lev]
        count = level_ptr[lev + 1] - start
        for t in numba.prange(count):
            i = level_rows[start + t]
            acc = b[i]
            for k in range(indptr[i], indptr[i + 1]):
                acc -= data[k] * x[indices[k]]
            x[i] = acc / diag[i]
    return x


@cuda.jit
def _level(indptr, indices, data, diag, b, level_rows, start, count, x):
    t = cuda.grid(1)
    if t < count:
        i = level_rows[start + t]
        acc = b[i]
        for k in range(indptr[i], indptr[i + 1]):
            acc -= data[k] * x[indices[k]]
        x[i] = acc / diag[i]


def _to_device(indptr, indices, data, diag, b, level_ptr, level_rows):
    names = ("indptr", "indices", "data", "diag", "b", "level_rows")
    state = {k: cuda.to_device(v) for k, v in zip(names, (indptr, indices, data, diag, b, level_rows))}
    state["level_ptr"] = [int(v) for v in level_ptr]
    state["x"] = cuda.to_device(np.zeros(b.shape[0]))
    return state


def _launch(s):
    lp = s["level_ptr"]
    for lev in range(len(lp) - 1):
        start, count = lp[lev], lp[lev + 1] - lp[lev]
        tpb = min(TPB, 32 * ((count + 31) // 32))
        _level[(count + tpb - 1) // tpb, tpb](s["indptr"], s["indices"], s["data"], s["diag"], s["b"],
                                               s["level_rows"], start, count, s["x"])


def _from_device(s):
    return s["x"].copy_to_host()


@numba.njit(cache=True)
def _levels(indptr, indices, n):
    level = np.zeros(n, dtype=np.int64)
    for i in range(n):
        lv = 0
        for k in range(indptr[i], indptr[i + 1]):
            if level[indices[k]] + 1 > lv:
                lv = level[indices[k]] + 1
        level[i] = lv
    return level


def make_inputs(n, seed):
    """An ``n x n`` lower-triangular matrix: each row ``i > 0`` has 1..4 off-diagonal entries, one of them
    within the previous 16 rows with probability 0.95 (the chains), the rest uniform in ``[0, i)``; a
    dominant diagonal; a random right-hand side; and the level schedule."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 5, size=n)
    counts[0] = 0
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    cols = (rng.random(rows.shape[0]) * rows).astype(np.int64)
    first = indptr[1:-1][counts[1:] > 0]
    near = rng.random(first.shape[0]) < 0.95
    back = rng.integers(1, 17, size=first.shape[0])
    cols[first[near]] = np.maximum(rows[first[near]] - back[near], 0)
    data = rng.uniform(-1.0, 1.0, size=rows.shape[0])
    absrow = np.zeros(n)
    np.add.at(absrow, rows, np.abs(data))
    diag = absrow + rng.uniform(1.0, 2.0, size=n)
    b = rng.uniform(-1.0, 1.0, size=n)
    level = _levels(indptr, cols, n)
    level_rows = np.argsort(level, kind="stable").astype(np.int64)
    level_ptr = np.zeros(int(level.max()) + 2, dtype=np.int64)
    np.cumsum(np.bincount(level), out=level_ptr[1:])
    return indptr, cols, data, diag, b, level_ptr, level_rows


KERNEL = KernelSpec(
    name="sptrsv",
    category="serial",
    description="level-scheduled sparse lower-triangular solve; GPU: one launch per level, thread per row",
    cpu=sptrsv,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 48, "small": 20_000, "medium": 500_000, "large": 4_000_000},
    rtol=1e-10,
    atol=1e-12,
    expect_gpu_faster=False,
)
