"""SRAD (speckle reducing anisotropic diffusion), Extended OpenDwarfs ``srad``: its two kernels, as AIWC timed them.

One SRAD iteration over a ``rows x cols`` single-precision image ``J`` runs two kernels over the same
NDRange, one work item per pixel (global ``cols x rows``, work groups of 16 x 16):

* ``srad_cuda_1``: each pixel's differences to its four neighbours (north, south, west, east; the image
  border reuses the pixel itself), the instantaneous coefficient of variation from them and the diffusion
  coefficient ``c = 1 / (1 + (q^2 - q0^2) / (q0^2 (1 + q0^2)))`` saturated to [0, 1], where ``q0^2`` comes
  from the mean and variance of a region of interest (ROI) the host computes before the kernels. It writes
  the four differences and ``c``.
* ``srad_cuda_2``: the divergence ``c_N dN + c_S dS + c_W dW + c_E dE`` (north and west use the pixel's own
  coefficient, south and east the neighbour's) and the update ``J += lambda / 4 * divergence``.

Each kernel indexes its neighbours the way the original does: per work item, by its work group and local
id, with the neighbour in the next work group for pixels on a group's edge and the pixel itself on the
image border. Two quirks of that indexing are kept: with a single work group across (``cols == 16``, the
AIWC tiny size) the east neighbour of the last column is the next row's first pixel, and of the very last
pixel the element after the image, which is why ``J`` holds ``rows * cols + 1`` elements (the original
allocates one more too and never writes it; here it is 0). With a single work group down (``rows == 16``)
the original reads past the image, so that is refused.

The region is the first invocation (iteration 0) of each kernel. Inputs as the host makes them: the image
``I`` is ``rand() / RAND_MAX`` (glibc, ``srand(7)``; ``seed`` is added to the 7, so seed 0 is the
original's image), ``J = exp(I)``; the host sums ``J`` and ``J^2`` in single precision over the ROI rows
``y1..y2`` and columns ``x1..x2`` at the flat index ``i * cols + j`` (mean, variance, then ``q0^2 =
variance / mean^2``). The AIWC arguments ``0 127 0 127`` reach past the image at the tiny and small sizes
(80 x 16 and 128 x 80): the original reads beyond the end of ``J`` there; those elements count as 0 here,
what the untouched buffer allocated after ``J`` most likely holds. ``srad_cuda_2``'s inputs are
``srad_cuda_1``'s outputs, computed in ``make_inputs`` by a plain NumPy step.

The parallel loop is one ``prange`` over the global work items, numbered work group by work group (16 x 16
items each, ``tx`` fastest), so consecutive iterations are the work items a GPU puts in one warp. Arithmetic
is single precision as in the original (constants are ``float32``). ``srad_cuda_2`` takes no ``q0sqr``:
the original passes it but never reads it.

Precision: single, as the original (its literals carry the f suffix); every floating-point record is FP_* (FP64
share 0).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from ._glibc import RAND_MAX, glibc_rand
from .spec import MeasuredKernel

BS = 16  # work-group side (BLOCK_SIZE)
ZERO = np.float32(0.0)
ONE = np.float32(1.0)
HALF = np.float32(0.5)
QUARTER = np.float32(0.25)
SIXTEENTH = np.float32(1.0 / 16.0)

#: the AIWC sizes: ``rows cols y1 y2 x1 x2 lambda iterations``
_ROI = {"y1": 0, "y2": 127, "x1": 0, "x2": 127, "lam": 0.5, "niter": 1}
POINTS = {
    "tiny": {"rows": 80, "cols": 16, **_ROI},
    "small": {"rows": 128, "cols": 80, **_ROI},
    "medium": {"rows": 1024, "cols": 336, **_ROI},
    "large": {"rows": 2048, "cols": 1024, **_ROI},
}
#: two work groups down, one across (512 work items): the smallest image the original indexes in bounds,
#: with the tiny size's single-group-across quirk; its ROI is the whole image (with the AIWC ROI, mostly past
#: so small an image, q0^2 is so large that every coefficient saturates)
TEST_POINT = {"rows": 32, "cols": 16, **_ROI, "y2": 31, "x2": 15}


def srad_cuda_1(E_C, W_C, N_C, S_C, J_cuda, C_cuda, cols, rows, q0sqr):
    """First SRAD kernel: neighbour differences and saturated diffusion coefficient of every pixel.

    Parameters
    ----------
    E_C, W_C, N_C, S_C, C_cuda : float32 arrays of ``rows * cols`` elements, overwritten.
    J_cuda : float32 image, ``rows * cols + 1`` elements (row-major, one spare element at the end).
    cols, rows : image size, multiples of 16; rows at least 32.
    q0sqr : float32, the ROI's squared coefficient of variation.

    Returns
    -------
    ``(E_C, W_C, N_C, S_C, C_cuda)``.
    """
    nbx = cols // BS
    nby = rows // BS
    for gid in numba.prange(nbx * nby * BS * BS):
        group = gid // (BS * BS)
        lid = gid % (BS * BS)
        bx = group % nbx
        by = group // nbx
        tx = lid % BS
        ty = lid // BS
        base = cols * BS * by + BS * bx
        index = base + cols * ty + tx
        index_n = base + tx - cols
        index_s = base + cols * BS + tx
        index_w = base + cols * ty - 1
        index_e = base + cols * ty + BS
        if by == 0:
            index_n = BS * bx + tx
        elif by == nby - 1:
            index_s = base + cols * (BS - 1) + tx
        if bx == 0:
            index_w = cols * BS * by + cols * ty
        elif bx == nbx - 1:
            index_e = base + cols * ty + BS - 1
        index_yp1_x = base + cols * (ty + 1) + tx
        index_ym1_x = base + cols * (ty - 1) + tx
        index_y_xp1 = base + cols * ty + tx + 1
        index_y_xm1 = base + cols * ty + tx - 1

        jc = J_cuda[index]
        if ty == 0 and tx == 0:
            n = J_cuda[index_n] - jc
            s = J_cuda[index_yp1_x] - jc
            w = J_cuda[index_w] - jc
            e = J_cuda[index_y_xp1] - jc
        elif ty == 0 and tx == BS - 1:
            n = J_cuda[index_n] - jc
            s = J_cuda[index_yp1_x] - jc
            w = J_cuda[index_y_xm1] - jc
            e = J_cuda[index_e] - jc
        elif ty == BS - 1 and tx == BS - 1:
            n = J_cuda[index_ym1_x] - jc
            s = J_cuda[index_s] - jc
            w = J_cuda[index_y_xm1] - jc
            e = J_cuda[index_e] - jc
        elif ty == BS - 1 and tx == 0:
            n = J_cuda[index_ym1_x] - jc
            s = J_cuda[index_s] - jc
            w = J_cuda[index_w] - jc
            e = J_cuda[index_y_xp1] - jc
        elif ty == 0:
            n = J_cuda[index_n] - jc
            s = J_cuda[index_yp1_x] - jc
            w = J_cuda[index_y_xm1] - jc
            e = J_cuda[index_y_xp1] - jc
        elif tx == BS - 1:
            n = J_cuda[index_ym1_x] - jc
            s = J_cuda[index_yp1_x] - jc
            w = J_cuda[index_y_xm1] - jc
            e = J_cuda[index_e] - jc
        elif ty == BS - 1:
            n = J_cuda[index_ym1_x] - jc
            s = J_cuda[index_s] - jc
            w = J_cuda[index_y_xm1] - jc
            e = J_cuda[index_y_xp1] - jc
        elif tx == 0:
            n = J_cuda[index_ym1_x] - jc
            s = J_cuda[index_yp1_x] - jc
            w = J_cuda[index_w] - jc
            e = J_cuda[index_y_xp1] - jc
        else:
            n = J_cuda[index_ym1_x] - jc
            s = J_cuda[index_yp1_x] - jc
            w = J_cuda[index_y_xm1] - jc
            e = J_cuda[index_y_xp1] - jc

        g2 = (n * n + s * s + w * w + e * e) / (jc * jc)
        lap = (n + s + w + e) / jc
        num = HALF * g2 - SIXTEENTH * (lap * lap)
        den = ONE + QUARTER * lap
        qsqr = num / (den * den)
        den = (qsqr - q0sqr) / (q0sqr * (ONE + q0sqr))
        c = ONE / (ONE + den)
        if c < ZERO:
            C_cuda[index] = ZERO
        elif c > ONE:
            C_cuda[index] = ONE
        else:
            C_cuda[index] = c
        E_C[index] = e
        W_C[index] = w
        S_C[index] = s
        N_C[index] = n
    return E_C, W_C, N_C, S_C, C_cuda


def srad_cuda_2(E_C, W_C, N_C, S_C, J_cuda, C_cuda, cols, rows, lam):
    """Second SRAD kernel: divergence of the diffused gradient and the image update, in place.

    Parameters
    ----------
    E_C, W_C, N_C, S_C, C_cuda : float32, ``rows * cols`` elements (``srad_cuda_1``'s outputs).
    J_cuda : float32 image, ``rows * cols + 1`` elements, updated.
    cols, rows : image size, multiples of 16.
    lam : float32, the update's lambda.

    Returns
    -------
    ``J_cuda``.
    """
    nbx = cols // BS
    nby = rows // BS
    for gid in numba.prange(nbx * nby * BS * BS):
        group = gid // (BS * BS)
        lid = gid % (BS * BS)
        bx = group % nbx
        by = group // nbx
        tx = lid % BS
        ty = lid // BS
        base = cols * BS * by + BS * bx
        index = base + cols * ty + tx
        index_s = base + cols * BS + tx
        index_e = base + cols * ty + BS
        index_yp1_x = base + cols * (ty + 1) + tx
        index_y_xp1 = base + cols * ty + tx + 1

        cc = C_cuda[index]
        cn = cc
        cw = cc
        if ty == BS - 1 and tx == BS - 1:
            if by == nby - 1:
                cs = C_cuda[base + cols * ty + tx]
            else:
                cs = C_cuda[index_s]
            if bx == nbx - 1:
                ce = C_cuda[base + cols * ty + tx]
            else:
                ce = C_cuda[index_e]
        elif tx == BS - 1:
            cs = C_cuda[index_yp1_x]
            if bx == nbx - 1:
                ce = C_cuda[base + cols * ty + tx]
            else:
                ce = C_cuda[index_e]
        elif ty == BS - 1:
            if by == nby - 1:
                cs = C_cuda[base + cols * ty + tx]
            else:
                cs = C_cuda[index_s]
            ce = C_cuda[index_y_xp1]
        else:
            cs = C_cuda[index_yp1_x]
            ce = C_cuda[index_y_xp1]

        d_sum = cn * N_C[index] + cs * S_C[index] + cw * W_C[index] + ce * E_C[index]
        J_cuda[index] = J_cuda[index] + QUARTER * lam * d_sum
    return J_cuda


# ---------------------------------------------------------------------------------------------- GPU ports


@cuda.jit
def _srad1_gpu(E_C, W_C, N_C, S_C, J_cuda, C_cuda, cols, rows, q0sqr):
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    nbx = cuda.gridDim.x
    nby = cuda.gridDim.y
    base = cols * BS * by + BS * bx
    index = base + cols * ty + tx
    index_n = base + tx - cols
    index_s = base + cols * BS + tx
    index_w = base + cols * ty - 1
    index_e = base + cols * ty + BS
    if by == 0:
        index_n = BS * bx + tx
    elif by == nby - 1:
        index_s = base + cols * (BS - 1) + tx
    if bx == 0:
        index_w = cols * BS * by + cols * ty
    elif bx == nbx - 1:
        index_e = base + cols * ty + BS - 1
    index_yp1_x = base + cols * (ty + 1) + tx
    index_ym1_x = base + cols * (ty - 1) + tx
    index_y_xp1 = base + cols * ty + tx + 1
    index_y_xm1 = base + cols * ty + tx - 1

    jc = J_cuda[index]
    if ty == 0 and tx == 0:
        n = J_cuda[index_n] - jc
        s = J_cuda[index_yp1_x] - jc
        w = J_cuda[index_w] - jc
        e = J_cuda[index_y_xp1] - jc
    elif ty == 0 and tx == BS - 1:
        n = J_cuda[index_n] - jc
        s = J_cuda[index_yp1_x] - jc
        w = J_cuda[index_y_xm1] - jc
        e = J_cuda[index_e] - jc
    elif ty == BS - 1 and tx == BS - 1:
        n = J_cuda[index_ym1_x] - jc
        s = J_cuda[index_s] - jc
        w = J_cuda[index_y_xm1] - jc
        e = J_cuda[index_e] - jc
    elif ty == BS - 1 and tx == 0:
        n = J_cuda[index_ym1_x] - jc
        s = J_cuda[index_s] - jc
        w = J_cuda[index_w] - jc
        e = J_cuda[index_y_xp1] - jc
    elif ty == 0:
        n = J_cuda[index_n] - jc
        s = J_cuda[index_yp1_x] - jc
        w = J_cuda[index_y_xm1] - jc
        e = J_cuda[index_y_xp1] - jc
    elif tx == BS - 1:
        n = J_cuda[index_ym1_x] - jc
        s = J_cuda[index_yp1_x] - jc
        w = J_cuda[index_y_xm1] - jc
        e = J_cuda[index_e] - jc
    elif ty == BS - 1:
        n = J_cuda[index_ym1_x] - jc
        s = J_cuda[index_s] - jc
        w = J_cuda[index_y_xm1] - jc
        e = J_cuda[index_y_xp1] - jc
    elif tx == 0:
        n = J_cuda[index_ym1_x] - jc
        s = J_cuda[index_yp1_x] - jc
        w = J_cuda[index_w] - jc
        e = J_cuda[index_y_xp1] - jc
    else:
        n = J_cuda[index_ym1_x] - jc
        s = J_cuda[index_yp1_x] - jc
        w = J_cuda[index_y_xm1] - jc
        e = J_cuda[index_y_xp1] - jc

    g2 = (n * n + s * s + w * w + e * e) / (jc * jc)
    lap = (n + s + w + e) / jc
    num = HALF * g2 - SIXTEENTH * (lap * lap)
    den = ONE + QUARTER * lap
    qsqr = num / (den * den)
    den = (qsqr - q0sqr) / (q0sqr * (ONE + q0sqr))
    c = ONE / (ONE + den)
    if c < ZERO:
        C_cuda[index] = ZERO
    elif c > ONE:
        C_cuda[index] = ONE
    else:
        C_cuda[index] = c
    E_C[index] = e
    W_C[index] = w
    S_C[index] = s
    N_C[index] = n


@cuda.jit
def _srad2_gpu(E_C, W_C, N_C, S_C, J_cuda, C_cuda, cols, rows, lam):
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    nbx = cuda.gridDim.x
    nby = cuda.gridDim.y
    base = cols * BS * by + BS * bx
    index = base + cols * ty + tx
    index_s = base + cols * BS + tx
    index_e = base + cols * ty + BS
    index_yp1_x = base + cols * (ty + 1) + tx
    index_y_xp1 = base + cols * ty + tx + 1

    cc = C_cuda[index]
    cn = cc
    cw = cc
    if ty == BS - 1 and tx == BS - 1:
        if by == nby - 1:
            cs = C_cuda[base + cols * ty + tx]
        else:
            cs = C_cuda[index_s]
        if bx == nbx - 1:
            ce = C_cuda[base + cols * ty + tx]
        else:
            ce = C_cuda[index_e]
    elif tx == BS - 1:
        cs = C_cuda[index_yp1_x]
        if bx == nbx - 1:
            ce = C_cuda[base + cols * ty + tx]
        else:
            ce = C_cuda[index_e]
    elif ty == BS - 1:
        if by == nby - 1:
            cs = C_cuda[base + cols * ty + tx]
        else:
            cs = C_cuda[index_s]
        ce = C_cuda[index_y_xp1]
    else:
        cs = C_cuda[index_yp1_x]
        ce = C_cuda[index_y_xp1]

    d_sum = cn * N_C[index] + cs * S_C[index] + cw * W_C[index] + ce * E_C[index]
    J_cuda[index] = J_cuda[index] + QUARTER * lam * d_sum


_ARRAYS = ("E_C", "W_C", "N_C", "S_C", "J_cuda", "C_cuda")


def _to_device(E_C, W_C, N_C, S_C, J_cuda, C_cuda, cols, rows, scalar):
    s = {k: cuda.to_device(a) for k, a in zip(_ARRAYS, (E_C, W_C, N_C, S_C, J_cuda, C_cuda))}
    s.update(cols=int(cols), rows=int(rows), scalar=np.float32(scalar))
    return s


def _grid(s):
    return (s["cols"] // BS, s["rows"] // BS), (BS, BS)


def _launch_1(s):
    grid, block = _grid(s)
    _srad1_gpu[grid, block](*(s[k] for k in _ARRAYS), s["cols"], s["rows"], s["scalar"])


def _launch_2(s):
    grid, block = _grid(s)
    _srad2_gpu[grid, block](*(s[k] for k in _ARRAYS), s["cols"], s["rows"], s["scalar"])


def _from_device_1(s):
    return tuple(s[k].copy_to_host() for k in ("E_C", "W_C", "N_C", "S_C", "C_cuda"))


def _from_device_2(s):
    return s["J_cuda"].copy_to_host()


# ----------------------------------------------------------------------------------- inputs (host code)


def _check_size(rows, cols):
    if rows % BS or cols % BS:
        raise ValueError(f"srad: rows and cols must be multiples of {BS}, got {rows} x {cols}")
    if rows < 2 * BS:
        raise ValueError(f"srad: rows must be at least {2 * BS} (with one work group down the kernel reads "
                         f"past the image), got {rows}")


def image(rows, cols, seed):
    """The host's image ``J = exp(I)``, ``I = rand() / RAND_MAX`` after ``srand(7 + seed)``, float32,
    ``rows * cols + 1`` elements (the last one, never written by the host, 0)."""
    r = glibc_rand(7 + seed, rows * cols)
    img = r.astype(np.float32) / np.float32(RAND_MAX)
    J = np.zeros(rows * cols + 1, dtype=np.float32)
    J[:-1] = np.exp(img.astype(np.float64)).astype(np.float32)
    return J


def roi_q0sqr(J, rows, cols, y1, y2, x1, x2):
    """The host's ``q0sqr`` before iteration 0: single-precision running sums of ``J`` and ``J^2`` over the
    ROI at flat indices ``i * cols + j`` (rows ``y1..y2`` outer, columns ``x1..x2`` inner); elements past
    the image count as 0."""
    size = rows * cols
    flat = (np.arange(y1, y2 + 1)[:, None] * cols + np.arange(x1, x2 + 1)[None, :]).ravel()
    vals = np.where(flat < size, J[np.minimum(flat, size - 1)], np.float32(0.0)).astype(np.float32)
    total = np.add.accumulate(vals, dtype=np.float32)[-1]  # accumulate: strictly left to right, in float32
    total2 = np.add.accumulate(vals * vals, dtype=np.float32)[-1]
    size_r = np.float32(flat.size)
    mean = total / size_r
    var = total2 / size_r - mean * mean
    return np.float32(var / (mean * mean))


def srad1_numpy(J, rows, cols, q0sqr):
    """``srad_cuda_1`` as whole-image NumPy operations (neighbour differences with the original's border
    rules): ``(E, W, N, S, C)``, float32."""
    size = rows * cols
    img = J[:size].reshape(rows, cols)
    up = np.r_[0, 0 : rows - 1]
    down = np.r_[1:rows, rows - 1]
    left = np.r_[0, 0 : cols - 1]
    right = np.r_[1:cols, cols - 1]
    north = img[up, :] - img
    south = img[down, :] - img
    west = img[:, left] - img
    east = img[:, right] - img
    if cols == BS:  # one work group across: the last column's east neighbour is the next flat element
        east[:, -1] = J[1 : size + 1].reshape(rows, cols)[:, -1] - img[:, -1]
    g2 = (north * north + south * south + west * west + east * east) / (img * img)
    lap = (north + south + west + east) / img
    num = HALF * g2 - SIXTEENTH * (lap * lap)
    den = ONE + QUARTER * lap
    qsqr = num / (den * den)
    den = (qsqr - q0sqr) / (q0sqr * (ONE + q0sqr))
    c = np.clip(ONE / (ONE + den), ZERO, ONE)
    return tuple(a.ravel().astype(np.float32) for a in (east, west, north, south, c))


def _state(params, seed):
    rows, cols = int(params["rows"]), int(params["cols"])
    _check_size(rows, cols)
    J = image(rows, cols, seed)
    q0sqr = roi_q0sqr(J, rows, cols, params["y1"], params["y2"], params["x1"], params["x2"])
    return rows, cols, J, q0sqr


def make_inputs_1(params, seed):
    """``srad_cuda_1``'s arguments at its first invocation: zeroed outputs, the image, its size, ``q0sqr``."""
    rows, cols, J, q0sqr = _state(params, seed)
    out = [np.zeros(rows * cols, dtype=np.float32) for _ in range(5)]
    return out[0], out[1], out[2], out[3], J, out[4], cols, rows, q0sqr


def make_inputs_2(params, seed):
    """``srad_cuda_2``'s arguments at its first invocation: ``srad_cuda_1``'s outputs (plain NumPy step),
    the image, its size, lambda."""
    rows, cols, J, q0sqr = _state(params, seed)
    E, W, N, S, C = srad1_numpy(J, rows, cols, q0sqr)
    return E, W, N, S, J, C, cols, rows, np.float32(params["lam"])


def work(params):
    return int(params["rows"]) * int(params["cols"]), BS * BS


_DOC = "Extended OpenDwarfs srad (AIWC), first iteration; one work item per pixel, 16x16 work groups"

KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="srad",
        kernel="srad_cuda_1",
        description=f"{_DOC}: neighbour differences and saturated diffusion coefficient",
        cpu=srad_cuda_1,
        gpu=GpuPort(_to_device, _launch_1, _from_device_1),
        make_inputs=make_inputs_1,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-6,
    ),
    MeasuredKernel(
        source="aiwc",
        application="srad",
        kernel="srad_cuda_2",
        description=f"{_DOC}: divergence and image update",
        cpu=srad_cuda_2,
        gpu=GpuPort(_to_device, _launch_2, _from_device_2),
        make_inputs=make_inputs_2,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-6,
    ),
]
