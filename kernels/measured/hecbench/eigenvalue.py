"""Eigenvalues of a symmetric tridiagonal matrix by bisection (Sturm counts), HeCBench ``eigenvalue`` (AMD's
sample): kernels ``calNumEigenValueInterval`` and ``recalculateEigenIntervals``.

``calNumEigenValuesLessThan(x)`` counts the negative pivots of the ``LDL^T`` factorisation of ``T - x I``
(``d_0 = a_0 - x``, ``d_i = (a_i - x) - b_{i-1}^2 / d_{i-1}``), the number of eigenvalues below ``x``.

* ``calNumEigenValueInterval``: thread ``g`` counts the eigenvalues in its interval ``[l_g, u_g)`` (two Sturm
  counts over the whole matrix).
* ``recalculateEigenIntervals``: thread ``g`` finds the interval its index falls in (walking the counts:
  ``g`` minus the counts of the intervals before it), and either bisects that interval if it holds one
  eigenvalue (keeping the half with the eigenvalue, or the interval once it is narrower than the tolerance)
  or takes the ``currentIndex``-th of its equal-width subintervals.

Launch: ``length / 256`` blocks of 256, one thread per interval, no guard. Measured point ``2048 10000``
(matrix order, repeat): 8 blocks. The timed launches are the first of each: the warm-up's first pass on the
initial intervals, ``[lower, upper)`` (the Gerschgorin bounds) for thread 0 and the empty ``[upper, upper)``
for every other, so thread 0's interval holds all 2048 eigenvalues and the first recalculation splits it
into 2048 equal parts.

Inputs: the host's ``fillRandom``: ``srand(123)``, ``diagonal[i] = (float)(256.0 rand() / (RAND_MAX + 1.0))``,
then ``srand(133)`` likewise for the off-diagonal (glibc ``rand`` seeded with ``123 + seed`` and ``133 +
seed``; seed 0 gives the original's matrix); the Gerschgorin interval as the host's
``computeGerschgorinInterval`` (float). ``recalculateEigenIntervals``'s counts are the first kernel's,
computed here with NumPy.

The device function ``calNumEigenValuesLessThan`` is a helper (``@numba.njit``) called twice per thread, a
device function in the GPU port; it returns the count as a float, as the original. Precision: single.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from .._glibc import RAND_MAX, glibc_rand
from ..spec import MeasuredKernel

BLOCK = 256
TOLERANCE = np.float32(0.001)
TWO = np.float32(2.0)

POINTS = {"2048 10000": {"length": 2048, "repeat": 10000}}
#: the program's smallest order, 256: one block
TEST_POINT = {"length": 256, "repeat": 1}
#: order 512 (about 4e6 records for the counts; the measured point has 2048)
FEATURE_POINT = {"length": 512, "repeat": 10000}


def _count_py(x, width, diagonal, off_diagonal):
    """``calNumEigenValuesLessThan``: the number of eigenvalues below ``x`` (as a float)."""
    count = 0
    prev_diff = diagonal[0] - x
    count += 1 if prev_diff < 0 else 0
    for i in range(1, width):
        diff = (diagonal[i] - x) - ((off_diagonal[i - 1] * off_diagonal[i - 1]) / prev_diff)
        count += 1 if diff < 0 else 0
        prev_diff = diff
    return np.float32(count)


_count = numba.njit(cache=True)(_count_py)


def calNumEigenValueInterval(num_eigen_intervals, eigen_intervals, diagonal, off_diagonal, width, n_threads):
    """The number of eigenvalues in every interval."""
    for gid in numba.prange(n_threads):
        lower_id = 2 * gid
        upper_id = lower_id + 1
        lower_limit = eigen_intervals[lower_id]
        upper_limit = eigen_intervals[upper_id]
        lower = np.uint32(_count(lower_limit, width, diagonal, off_diagonal))
        upper = np.uint32(_count(upper_limit, width, diagonal, off_diagonal))
        num_eigen_intervals[gid] = upper - lower
    return num_eigen_intervals


def recalculateEigenIntervals(new_eigen_intervals, eigen_intervals, num_eigen_intervals, diagonal, off_diagonal,
                              width, tolerance, n_threads):
    """Bisect or split every interval into ``new_eigen_intervals``."""
    for gid in numba.prange(n_threads):
        lower_id = 2 * gid
        upper_id = lower_id + 1
        current_index = gid
        index = 0
        while current_index >= num_eigen_intervals[index]:
            current_index -= num_eigen_intervals[index]
            index += 1
        l_id = 2 * index
        u_id = l_id + 1
        if num_eigen_intervals[index] == 1:
            mid_value = (eigen_intervals[u_id] + eigen_intervals[l_id]) / TWO
            n = _count(mid_value, width, diagonal, off_diagonal)
            n -= _count(eigen_intervals[l_id], width, diagonal, off_diagonal)
            if eigen_intervals[u_id] - eigen_intervals[l_id] < tolerance:
                new_eigen_intervals[lower_id] = eigen_intervals[l_id]
                new_eigen_intervals[upper_id] = eigen_intervals[u_id]
            elif n == 0:
                new_eigen_intervals[lower_id] = mid_value
                new_eigen_intervals[upper_id] = eigen_intervals[u_id]
            else:
                new_eigen_intervals[lower_id] = eigen_intervals[l_id]
                new_eigen_intervals[upper_id] = mid_value
        else:
            division_width = (eigen_intervals[u_id] - eigen_intervals[l_id]) / np.float32(num_eigen_intervals[index])
            lo = eigen_intervals[l_id] + division_width * np.float32(current_index)
            new_eigen_intervals[lower_id] = lo
            new_eigen_intervals[upper_id] = lo + division_width
    return new_eigen_intervals


@cuda.jit(device=True)
def _count_dev(x, width, diagonal, off_diagonal):
    count = 0
    prev_diff = diagonal[0] - x
    count += 1 if prev_diff < 0 else 0
    for i in range(1, width):
        diff = (diagonal[i] - x) - ((off_diagonal[i - 1] * off_diagonal[i - 1]) / prev_diff)
        count += 1 if diff < 0 else 0
        prev_diff = diff
    return numba.float32(count)


@cuda.jit
def _cal_gpu(num_eigen_intervals, eigen_intervals, diagonal, off_diagonal, width):
    gid = cuda.grid(1)
    lower = numba.uint32(_count_dev(eigen_intervals[2 * gid], width, diagonal, off_diagonal))
    upper = numba.uint32(_count_dev(eigen_intervals[2 * gid + 1], width, diagonal, off_diagonal))
    num_eigen_intervals[gid] = upper - lower


@cuda.jit
def _recalc_gpu(new_eigen_intervals, eigen_intervals, num_eigen_intervals, diagonal, off_diagonal, width,
                tolerance):
    gid = cuda.grid(1)
    current_index = gid
    index = 0
    while current_index >= num_eigen_intervals[index]:
        current_index -= num_eigen_intervals[index]
        index += 1
    el = eigen_intervals[2 * index]
    eu = eigen_intervals[2 * index + 1]
    if num_eigen_intervals[index] == 1:
        mid_value = (eu + el) / TWO
        n = _count_dev(mid_value, width, diagonal, off_diagonal) - _count_dev(el, width, diagonal, off_diagonal)
        if eu - el < tolerance:
            new_eigen_intervals[2 * gid] = el
            new_eigen_intervals[2 * gid + 1] = eu
        elif n == 0:
            new_eigen_intervals[2 * gid] = mid_value
            new_eigen_intervals[2 * gid + 1] = eu
        else:
            new_eigen_intervals[2 * gid] = el
            new_eigen_intervals[2 * gid + 1] = mid_value
    else:
        dw = (eu - el) / numba.float32(num_eigen_intervals[index])
        lo = el + dw * numba.float32(current_index)
        new_eigen_intervals[2 * gid] = lo
        new_eigen_intervals[2 * gid + 1] = lo + dw


def _to_device_cal(num, intervals, diagonal, off_diagonal, width, n_threads):
    return {"arrays": [cuda.to_device(a) for a in (num, intervals, diagonal, off_diagonal)], "width": int(width),
            "n": int(n_threads)}


def _launch_cal(s):
    _cal_gpu[s["n"] // BLOCK, BLOCK](*s["arrays"], s["width"])


def _to_device_recalc(new, intervals, num, diagonal, off_diagonal, width, tolerance, n_threads):
    return {"arrays": [cuda.to_device(a) for a in (new, intervals, num, diagonal, off_diagonal)],
            "width": int(width), "tol": np.float32(tolerance), "n": int(n_threads)}


def _launch_recalc(s):
    _recalc_gpu[s["n"] // BLOCK, BLOCK](*s["arrays"], s["width"], s["tol"])


def _from_device(s):
    return s["arrays"][0].copy_to_host()


def matrix(length, seed):
    """The host's diagonal and off-diagonal (``fillRandom`` with seeds 123 and 133)."""
    scale = 256.0 / (RAND_MAX + 1.0)
    diagonal = (scale * glibc_rand(123 + seed, length).astype(np.float64)).astype(np.float32)
    off = (scale * glibc_rand(133 + seed, length - 1).astype(np.float64)).astype(np.float32)
    return diagonal, off


def gerschgorin(diagonal, off):
    """The host's ``computeGerschgorinInterval`` (float)."""
    n = diagonal.size
    lo = diagonal[0] - abs(off[0])
    hi = diagonal[0] + abs(off[0])
    for i in range(1, n - 1):
        r = abs(off[i - 1]) + abs(off[i])
        lo = diagonal[i] - r if lo > diagonal[i] - r else lo
        hi = diagonal[i] + r if hi < diagonal[i] + r else hi
    last_lo = diagonal[n - 1] - abs(off[n - 2])
    last_hi = diagonal[n - 1] + abs(off[n - 2])
    return (last_lo if lo > last_lo else lo), (last_hi if hi < last_hi else hi)


def initial_intervals(diagonal, off):
    lo, hi = gerschgorin(diagonal, off)
    intervals = np.full(2 * diagonal.size, hi, dtype=np.float32)
    intervals[0] = lo
    return intervals


def sturm_counts(xs, diagonal, off):
    """``calNumEigenValuesLessThan`` for several ``x`` at once (NumPy, the same float operations)."""
    xs = np.asarray(xs, dtype=np.float32)
    prev = diagonal[0] - xs
    count = (prev < 0).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(1, diagonal.size):
            diff = (diagonal[i] - xs) - ((off[i - 1] * off[i - 1]) / prev)
            count += diff < 0
            prev = diff
    return count


def make_inputs_cal(params, seed):
    """The first ``calNumEigenValueInterval``: the initial intervals."""
    n = int(params["length"])
    diagonal, off = matrix(n, seed)
    return np.zeros(n, np.uint32), initial_intervals(diagonal, off), diagonal, off, n, work(params)[0]


def make_inputs_recalc(params, seed):
    """The first ``recalculateEigenIntervals``: the initial intervals and their counts."""
    n = int(params["length"])
    diagonal, off = matrix(n, seed)
    intervals = initial_intervals(diagonal, off)
    c = sturm_counts(intervals, diagonal, off)
    num = (c[1::2] - c[0::2]).astype(np.uint32)
    return np.zeros(2 * n, np.float32), intervals, num, diagonal, off, n, TOLERANCE, work(params)[0]


def work(params):
    return int(params["length"]) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="eigenvalue",
        kernel="calNumEigenValueInterval",
        description="HeCBench eigenvalue: Sturm-sequence eigenvalue counts of a 2048 x 2048 tridiagonal matrix "
        "for every interval, one thread per interval",
        cpu=calNumEigenValueInterval,
        gpu=GpuPort(_to_device_cal, _launch_cal, _from_device),
        make_inputs=make_inputs_cal,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        feature_point=FEATURE_POINT,
        rtol=0,
        atol=0,
    ),
    MeasuredKernel(
        source="hecbench",
        application="eigenvalue",
        kernel="recalculateEigenIntervals",
        description="HeCBench eigenvalue: bisection or equal splitting of the eigenvalue intervals, one thread "
        "per new interval",
        cpu=recalculateEigenIntervals,
        gpu=GpuPort(_to_device_recalc, _launch_recalc, _from_device),
        make_inputs=make_inputs_recalc,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-6,
        atol=1e-5,
    ),
]
