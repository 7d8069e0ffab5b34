"""LU decomposition without pivoting by 16 x 16 tiles (``lud`` of Extended OpenDwarfs and of Rodinia): its
kernels, each at the first launch of the application's host loop.

The host loop walks down the diagonal in steps of ``BS`` = 16. At ``offset`` it factors the diagonal tile in
place (``lud_diagonal``), then solves the row of tiles to its right for U and the column of tiles below it for
L (``lud_perimeter``), then subtracts their product from the trailing matrix (``lud_internal``); one more
``lud_diagonal`` factors the last tile. The matrix ends holding U on and above the diagonal and L (unit diagonal,
not stored) below it.

Two builds of this algorithm were timed:

* AIWC (Extended OpenDwarfs, OpenCL; ``lud_diagonal``, ``lud_perimeter``, ``lud_internal``): every kernel works
  on the matrix in global memory. Sizes ``-s N``: tiny 80, small 240, medium 1440, large 4096; the host fills
  the matrix with ``rand() / RAND_MAX``, uniform in [0, 1].
* Amaris (Rodinia 3.x CUDA under nvprof on 9 NVIDIA GPUs; ``lud_diagonal`` on all 9, ``lud_perimeter`` on 7):
  the same arithmetic, but each block first copies the tiles it needs into shared memory, works there and
  copies its results back ("staged"). The nvprof counts of every row agree with that: per block 256 global
  loads and 240 stores (16 x 16 in, rows 1-15 out) for the diagonal kernel, 768 and 496 for the perimeter
  kernel (24 loads per thread; 15 stores per U-column thread, 16 per L-row thread). The sweep is ``-s N`` for
  N = 256, 512, ..., 8192, the matrix from Rodinia's own generator, ``10 * exp(-0.001 * |i - j|)``. (Rodinia's
  source is not among this project's references: its staging and its generator are written here as Rodinia
  3.x has them; the launch geometry and the load/store counts above are checked against the data.)

The work of one work item is written once, as plain functions compiled both by ``numba.njit`` (called by the CPU
regions) and as CUDA device functions (called by the GPU ports), and applied to a tile wherever it lives: in the
matrix (AIWC) or in a staging copy (Amaris). Where the GPU stages in shared memory, the CPU region stages in
arrays that hold one staging tile per work group, stacked by rows (group ``b`` at rows ``16 b`` to ``16 b + 15``).

Launch geometry at ``offset`` of an ``N`` x ``N`` matrix, with ``nb = (N - offset) / 16 - 1`` tiles after the
diagonal one:

* ``lud_diagonal``: one work group of 16 items; item ``t`` computes row ``t`` of the tile's L and column ``t``
  of its U, one elimination step after another with a barrier between the L part and the U part of each
  step; the region runs every such phase as a parallel loop over the 16 items (16 steps AIWC, 15 Amaris,
  whose kernel skips the last, empty one), the Amaris region with a loop to stage in before them and one to
  stage out after.
* ``lud_perimeter``: ``nb`` groups of 32; in group ``b`` items 0-15 solve column ``t`` of the ``b``-th tile to
  the right of the diagonal (U), items 16-31 row ``t - 16`` of the ``b``-th tile below it (L). AIWC: no
  barrier, one parallel loop over the ``32 nb`` items; Amaris: three (stage in, solve, stage out), one per
  stretch between the kernel's two barriers.
* ``lud_internal`` (AIWC only): a 2-D range of ``16 nb`` x ``16 nb`` items in 16 x 16 groups, one per element of
  the trailing matrix, which it decreases by the 16-term product of its L row and U column; one parallel loop
  over the flattened id (dimension 0, the column, fastest).

A measured point is the FIRST launch of a run (offset 0): AIWC records one invocation per kernel (the first);
the Amaris files hold every launch of a run, one row each, in launch order (the perimeter's ``grid.x`` falls
from ``N / 16 - 1`` to 1), and the points here are each size's first row. The other launches of a run are left
for later: a point's params carry ``offset``, which ``make_inputs`` and ``work`` already honour. The state
before the launch (the generated matrix, the earlier steps of the host loop, and at this offset the diagonal
step before ``lud_perimeter``, diagonal and perimeter steps before ``lud_internal``) is made by a plain NumPy
blocked LU in ``make_inputs``.

Deliberate differences from the originals:

* The matrix is a 2-D float32 array indexed ``[row, column]`` instead of a pointer with a row stride: the
  same elements in the same order.
* AIWC inputs come from NumPy's generator (``seed``), not glibc ``rand()``: the same distribution, and the values
  change no trip count or branch of these kernels. Amaris inputs are Rodinia's deterministic matrix
  (the seed is not used).
* The region returns the matrix (updated in place, as the kernel leaves it); the GPU ports copy it back.

Precision: single (float32 matrix and sums, as both originals' ``float``); every floating-point record is FP_*
(FP64 share 0).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

#: tile edge (``BLOCK_SIZE`` of both builds)
BS = 16

AIWC_SIZES = {"tiny": 80, "small": 240, "medium": 1440, "large": 4096}
#: the Amaris sweep: ``-s N`` for N = 256, 512, ..., 8192
AMARIS_SIZES = tuple(range(256, 8192 + 1, 256))


def _cpu_and_gpu(fn):
    """``fn`` compiled for the CPU regions (``numba.njit``) and as a CUDA device function (the GPU ports)."""
    return numba.njit(cache=True)(fn), cuda.jit(device=True)(fn)


# ------------------------------------------------------------------------------------------------------------
# the work of one work item, written once


def _diag_lower(a, o, t, i):
    """Diagonal tile at ``a[o:o+16, o:o+16]``, elimination step ``i``, item ``t`` (> i): L's element (t, i)."""
    for j in range(i):
        a[o + t, o + i] -= a[o + t, o + j] * a[o + j, o + i]
    a[o + t, o + i] /= a[o + i, o + i]


def _diag_upper(a, o, t, i):
    """Diagonal tile at ``a[o:o+16, o:o+16]``, step ``i``, item ``t`` (> i): U's element (i + 1, t)."""
    for j in range(i + 1):
        a[o + i + 1, o + t] -= a[o + i + 1, o + j] * a[o + j, o + t]


def _diag_stage_in(m, o, t, tile):
    """Item ``t`` copies column ``t`` of the diagonal tile at (o, o) of ``m`` into ``tile``."""
    for i in range(BS):
        tile[i, t] = m[o + i, o + t]


def _diag_stage_out(m, o, t, tile):
    """Item ``t`` writes column ``t`` of ``tile``, rows 1-15 (row 0 of U is the input's), back into ``m``."""
    for i in range(1, BS):
        m[o + i, o + t] = tile[i, t]


def _peri_upper(d, dr, dc, u, ur, uc, t):
    """Column ``t`` of a tile right of the diagonal becomes U: forward substitution with the unit lower
    triangle of the factored diagonal tile (element (i, j) at ``d[dr + i, dc + j]``); the tile's element (i, t)
    is ``u[ur + i, uc + t]``."""
    for i in range(1, BS):
        for j in range(i):
            u[ur + i, uc + t] -= d[dr + i, dc + j] * u[ur + j, uc + t]


def _peri_lower(d, dr, dc, c, cr, cc, t):
    """Row ``t`` of a tile below the diagonal becomes L: solves ``x U = row`` with the diagonal tile's U; the
    tile's element (t, i) is ``c[cr + t, cc + i]``."""
    for i in range(BS):
        for j in range(i):
            c[cr + t, cc + i] -= c[cr + t, cc + j] * d[dr + j, dc + i]
        c[cr + t, cc + i] /= d[dr + i, dc + i]


def _peri_stage_in(m, o, b, t, dia, row, col, s):
    """Item ``t`` of group ``b`` copies its share into the staging tiles (their rows ``s`` to ``s + 15``): items
    0-15 the upper half of the diagonal tile and column ``t`` of the ``b``-th tile to its right, items 16-31 the
    lower half and column ``t - 16`` of the ``b``-th tile below it."""
    e = o + (b + 1) * BS
    if t < BS:
        for i in range(BS // 2):
            dia[s + i, t] = m[o + i, o + t]
        for i in range(BS):
            row[s + i, t] = m[o + i, e + t]
    else:
        k = t - BS
        for i in range(BS // 2, BS):
            dia[s + i, k] = m[o + i, o + k]
        for i in range(BS):
            col[s + i, k] = m[e + i, o + k]


def _peri_stage_out(m, o, b, t, row, col, s):
    """Item ``t`` of group ``b`` writes back the column it staged in: rows 1-15 of the U tile (row 0 is
    unchanged), all 16 rows of the L tile."""
    e = o + (b + 1) * BS
    if t < BS:
        for i in range(1, BS):
            m[o + i, e + t] = row[s + i, t]
    else:
        k = t - BS
        for i in range(BS):
            m[e + i, o + k] = col[s + i, k]


def _internal_item(m, o, r, c):
    """Element (r, c) of the trailing matrix less the product of row ``r`` of L and column ``c`` of U over the
    16 columns/rows of step ``o``."""
    s = np.float32(0.0)
    for i in range(BS):
        s += m[r, o + i] * m[o + i, c]
    m[r, c] -= s


_diag_lower_cpu, _diag_lower_gpu = _cpu_and_gpu(_diag_lower)
_diag_upper_cpu, _diag_upper_gpu = _cpu_and_gpu(_diag_upper)
_diag_stage_in_cpu, _diag_stage_in_gpu = _cpu_and_gpu(_diag_stage_in)
_diag_stage_out_cpu, _diag_stage_out_gpu = _cpu_and_gpu(_diag_stage_out)
_peri_upper_cpu, _peri_upper_gpu = _cpu_and_gpu(_peri_upper)
_peri_lower_cpu, _peri_lower_gpu = _cpu_and_gpu(_peri_lower)
_peri_stage_in_cpu, _peri_stage_in_gpu = _cpu_and_gpu(_peri_stage_in)
_peri_stage_out_cpu, _peri_stage_out_gpu = _cpu_and_gpu(_peri_stage_out)
_internal_item_cpu, _internal_item_gpu = _cpu_and_gpu(_internal_item)


# ------------------------------------------------------------------------------------------------------------
# CPU regions


def lud_diagonal(m, offset):
    """CPU region of AIWC's ``lud_diagonal``: LU of the 16 x 16 tile at (offset, offset), in the matrix.

    Parameters
    ----------
    m : numpy.ndarray
        float32 ``(N, N)`` matrix, the host loop's state before this launch; updated in place.
    offset : int
        The launch's diagonal offset (a multiple of 16).

    Returns
    -------
    numpy.ndarray
        ``m``: the tile holds its L (below the diagonal) and U.
    """
    for i in range(BS):
        for t in numba.prange(BS):
            if t > i:
                _diag_lower_cpu(m, offset, t, i)
        for t in numba.prange(BS):
            if t > i:
                _diag_upper_cpu(m, offset, t, i)
    return m


def lud_diagonal_staged(m, offset):
    """CPU region of Rodinia's (Amaris) ``lud_diagonal``: as :func:`lud_diagonal`, on a staged copy of the tile.

    Parameters and result as :func:`lud_diagonal`.
    """
    tile = np.empty((BS, BS), dtype=m.dtype)
    for t in numba.prange(BS):
        _diag_stage_in_cpu(m, offset, t, tile)
    for i in range(BS - 1):
        for t in numba.prange(BS):
            if t > i:
                _diag_lower_cpu(tile, 0, t, i)
        for t in numba.prange(BS):
            if t > i:
                _diag_upper_cpu(tile, 0, t, i)
    for t in numba.prange(BS):
        _diag_stage_out_cpu(m, offset, t, tile)
    return m


def lud_perimeter(m, offset):
    """CPU region of AIWC's ``lud_perimeter``: U of the tiles right of the diagonal tile, L of those below it.

    Parameters
    ----------
    m : numpy.ndarray
        float32 ``(N, N)`` matrix whose diagonal tile at ``offset`` is factored; updated in place.
    offset : int
        The launch's diagonal offset (a multiple of 16, below ``N - 16``).

    Returns
    -------
    numpy.ndarray
        ``m`` with the perimeter tiles of this step solved.
    """
    nb = (m.shape[0] - offset) // BS - 1
    for gid in numba.prange(nb * 2 * BS):
        b = gid // (2 * BS)
        t = gid % (2 * BS)
        e = offset + (b + 1) * BS
        if t < BS:
            _peri_upper_cpu(m, offset, offset, m, offset, e, t)
        else:
            _peri_lower_cpu(m, offset, offset, m, e, offset, t - BS)
    return m


def lud_perimeter_staged(m, offset):
    """CPU region of Rodinia's (Amaris) ``lud_perimeter``: as :func:`lud_perimeter`, on staged copies of the
    tiles (one diagonal, U and L staging tile per work group).

    Parameters and result as :func:`lud_perimeter`.
    """
    nb = (m.shape[0] - offset) // BS - 1
    dia = np.empty((nb * BS, BS), dtype=m.dtype)
    row = np.empty((nb * BS, BS), dtype=m.dtype)
    col = np.empty((nb * BS, BS), dtype=m.dtype)
    for gid in numba.prange(nb * 2 * BS):
        b = gid // (2 * BS)
        _peri_stage_in_cpu(m, offset, b, gid % (2 * BS), dia, row, col, b * BS)
    for gid in numba.prange(nb * 2 * BS):
        b = gid // (2 * BS)
        t = gid % (2 * BS)
        if t < BS:
            _peri_upper_cpu(dia, b * BS, 0, row, b * BS, 0, t)
        else:
            _peri_lower_cpu(dia, b * BS, 0, col, b * BS, 0, t - BS)
    for gid in numba.prange(nb * 2 * BS):
        b = gid // (2 * BS)
        _peri_stage_out_cpu(m, offset, b, gid % (2 * BS), row, col, b * BS)
    return m


def lud_internal(m, offset):
    """CPU region of AIWC's ``lud_internal``: the trailing matrix less (L column tiles) x (U row tiles).

    Parameters
    ----------
    m : numpy.ndarray
        float32 ``(N, N)`` matrix whose diagonal and perimeter tiles at ``offset`` are done; updated in place.
    offset : int
        The launch's diagonal offset (a multiple of 16, below ``N - 16``).

    Returns
    -------
    numpy.ndarray
        ``m`` with its trailing ``N - offset - 16`` square updated.
    """
    g = ((m.shape[0] - offset) // BS - 1) * BS
    for gid in numba.prange(g * g):
        gx = gid % g
        gy = gid // g
        _internal_item_cpu(m, offset, offset + BS + gy, offset + BS + gx)
    return m


# ------------------------------------------------------------------------------------------------------------
# GPU ports (same global and local sizes as the originals)


@cuda.jit
def _diagonal_kernel(m, offset):
    t = cuda.threadIdx.x
    for i in range(BS):
        if t > i:
            _diag_lower_gpu(m, offset, t, i)
        cuda.syncthreads()
        if t > i:
            _diag_upper_gpu(m, offset, t, i)
        cuda.syncthreads()


@cuda.jit
def _diagonal_staged_kernel(m, offset):
    tile = cuda.shared.array((BS, BS), dtype=numba.float32)
    t = cuda.threadIdx.x
    _diag_stage_in_gpu(m, offset, t, tile)
    cuda.syncthreads()
    for i in range(BS - 1):
        if t > i:
            _diag_lower_gpu(tile, 0, t, i)
        cuda.syncthreads()
        if t > i:
            _diag_upper_gpu(tile, 0, t, i)
        cuda.syncthreads()
    _diag_stage_out_gpu(m, offset, t, tile)


@cuda.jit
def _perimeter_kernel(m, offset):
    t = cuda.threadIdx.x
    e = offset + (cuda.blockIdx.x + 1) * BS
    if t < BS:
        _peri_upper_gpu(m, offset, offset, m, offset, e, t)
    else:
        _peri_lower_gpu(m, offset, offset, m, e, offset, t - BS)


@cuda.jit
def _perimeter_staged_kernel(m, offset):
    dia = cuda.shared.array((BS, BS), dtype=numba.float32)
    row = cuda.shared.array((BS, BS), dtype=numba.float32)
    col = cuda.shared.array((BS, BS), dtype=numba.float32)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    _peri_stage_in_gpu(m, offset, b, t, dia, row, col, 0)
    cuda.syncthreads()
    if t < BS:
        _peri_upper_gpu(dia, 0, 0, row, 0, 0, t)
    else:
        _peri_lower_gpu(dia, 0, 0, col, 0, 0, t - BS)
    cuda.syncthreads()
    _peri_stage_out_gpu(m, offset, b, t, row, col, 0)


@cuda.jit
def _internal_kernel(m, offset):
    r = offset + (cuda.blockIdx.y + 1) * BS + cuda.threadIdx.y
    c = offset + (cuda.blockIdx.x + 1) * BS + cuda.threadIdx.x
    _internal_item_gpu(m, offset, r, c)


def _tiles_after(n, offset):
    return (n - offset) // BS - 1


def _to_device(m, offset):
    return {"m": cuda.to_device(np.ascontiguousarray(m, dtype=np.float32)), "offset": int(offset)}


def _from_device(s):
    return s["m"].copy_to_host()


def _launch_diagonal(s):
    _diagonal_kernel[1, BS](s["m"], s["offset"])


def _launch_diagonal_staged(s):
    _diagonal_staged_kernel[1, BS](s["m"], s["offset"])


def _launch_perimeter(s):
    _perimeter_kernel[_tiles_after(s["m"].shape[0], s["offset"]), 2 * BS](s["m"], s["offset"])


def _launch_perimeter_staged(s):
    _perimeter_staged_kernel[_tiles_after(s["m"].shape[0], s["offset"]), 2 * BS](s["m"], s["offset"])


def _launch_internal(s):
    nb = _tiles_after(s["m"].shape[0], s["offset"])
    _internal_kernel[(nb, nb), (BS, BS)](s["m"], s["offset"])


# ------------------------------------------------------------------------------------------------------------
# inputs: the generated matrix and the host loop's earlier steps, in plain NumPy


def aiwc_matrix(n, seed):
    """The OpenDwarfs ``-s N`` matrix: every entry uniform in [0, 1) (the host's ``rand() / RAND_MAX``)."""
    return np.random.default_rng(int(seed)).random((n, n), dtype=np.float32)


def rodinia_matrix(n):
    """Rodinia's ``-s N`` matrix: entry (i, j) is ``10 exp(-0.001 |i - j|)`` (the exponent's product in float,
    the exponential in double, the entry stored as float, as its generator does)."""
    k = np.arange(n)
    coe = (10.0 * np.exp((np.float32(-0.001) * k.astype(np.float32)).astype(np.float64))).astype(np.float32)
    return coe[np.abs(k[:, None] - k[None, :])]


def numpy_diagonal_step(m, o):
    """In place: LU without pivoting of the tile at (o, o), by right-looking elimination."""
    a = m[o:o + BS, o:o + BS]
    for k in range(BS - 1):
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])


def numpy_perimeter_step(m, o):
    """In place: the tiles right of the factored diagonal tile at (o, o) become U, those below it L."""
    e = o + BS
    a = m[o:e, o:e]
    for k in range(BS - 1):
        m[k + 1 + o:e, e:] -= np.outer(a[k + 1:, k], m[o + k, e:])
    for k in range(BS):
        m[e:, o + k] /= a[k, k]
        m[e:, o + k + 1:e] -= np.outer(m[e:, o + k], a[k, k + 1:])


def numpy_internal_step(m, o):
    """In place: the trailing matrix after step ``o`` less the product of its L and U tiles."""
    e = o + BS
    m[e:, e:] -= m[e:, o:e] @ m[o:e, e:]


_BEFORE = {"lud_diagonal": (), "lud_perimeter": (numpy_diagonal_step,),
           "lud_internal": (numpy_diagonal_step, numpy_perimeter_step)}


def _state(m, offset, kernel):
    """The matrix as the launch of ``kernel`` at ``offset`` finds it: the host loop's steps before ``offset``,
    then this step's kernels before ``kernel``."""
    n = m.shape[0]
    last = n - BS if kernel == "lud_diagonal" else n - 2 * BS
    if n % BS or offset % BS or not 0 <= offset <= last:
        raise ValueError(f"lud {kernel}: size {n} and offset {offset} must be multiples of {BS}, offset <= {last}")
    for o in range(0, offset, BS):
        numpy_diagonal_step(m, o)
        numpy_perimeter_step(m, o)
        numpy_internal_step(m, o)
    for step in _BEFORE[kernel]:
        step(m, offset)
    return m, int(offset)


def _inputs(kernel, source):
    def make_inputs(params, seed):
        n, offset = int(params["n"]), int(params.get("offset", 0))
        m = aiwc_matrix(n, seed) if source == "aiwc" else rodinia_matrix(n)
        return _state(m, offset, kernel)

    return make_inputs


def _work(kernel):
    def work(params):
        n, offset = int(params["n"]), int(params.get("offset", 0))
        if kernel == "lud_diagonal":
            return BS, BS
        if kernel == "lud_perimeter":
            return _tiles_after(n, offset) * 2 * BS, 2 * BS
        return (_tiles_after(n, offset) * BS) ** 2, BS * BS

    return work


_AIWC_POINTS = {label: {"n": n, "offset": 0} for label, n in AIWC_SIZES.items()}
_AMARIS_POINTS = {str(n): {"n": n, "offset": 0} for n in AMARIS_SIZES}

_DESCRIPTIONS = {
    "lud_diagonal": "LU (no pivoting) of the 16x16 diagonal tile by one work group of 16, a barrier per phase",
    "lud_perimeter": "forward/back substitution of the tiles right of and below the diagonal tile, 32 per tile",
    "lud_internal": "trailing-matrix update, one item per element: 16-term dot product subtracted",
}


#: result tolerances of a real GPU against the CPU (the simulator matches exactly): the GPU may contract a product
#: and a difference into one fused multiply-add, rounding differently. AIWC's uniform random tiles, factored
#: without pivoting, can have tiny pivots that magnify such differences (float32 and float64 runs of the same
#: first launch differ by up to 0.2% relative, 0.16 absolute on entries of magnitude up to ~800); Rodinia's
#: matrix is symmetric positive definite (float32 and float64 first launches agree to 1e-4 relative).
_TOLERANCE = {"aiwc": (1e-2, 1e-3), "amaris": (1e-3, 1e-4)}


def _kernel(source, kernel, cpu, launch, points, test_point):
    staged = source == "amaris"
    how = "; tiles staged in shared memory (Rodinia CUDA)" if staged else "; in global memory (OpenDwarfs OpenCL)"
    rtol, atol = _TOLERANCE[source]
    return MeasuredKernel(
        source=source,
        application="lud",
        kernel=kernel,
        description=_DESCRIPTIONS[kernel] + how + ", first launch (offset 0)",
        cpu=cpu,
        gpu=GpuPort(_to_device, launch, _from_device),
        make_inputs=_inputs(kernel, source),
        points=points,
        work=_work(kernel),
        test_point=test_point,
        rtol=rtol,
        atol=atol,
        data_sizes=(lambda p: (p["n"], 0)) if staged else None,
    )


KERNELS = [
    _kernel("aiwc", "lud_diagonal", lud_diagonal, _launch_diagonal, _AIWC_POINTS, {"n": 80, "offset": 0}),
    _kernel("aiwc", "lud_perimeter", lud_perimeter, _launch_perimeter, _AIWC_POINTS, {"n": 80, "offset": 0}),
    _kernel("aiwc", "lud_internal", lud_internal, _launch_internal, _AIWC_POINTS, {"n": 32, "offset": 0}),
    _kernel("amaris", "lud_diagonal", lud_diagonal_staged, _launch_diagonal_staged, _AMARIS_POINTS,
            {"n": 32, "offset": 0}),
    _kernel("amaris", "lud_perimeter", lud_perimeter_staged, _launch_perimeter_staged, _AMARIS_POINTS,
            {"n": 48, "offset": 0}),
]
