"""AIWC ``hmm``: the sixteen OpenCL kernels of OpenDwarfs' Baum-Welch training of a hidden Markov model.

The application (OpenDwarfs ``graphical-models/hmm``, ``bwa_hmm -s S -v s``) runs one Baum-Welch iteration of
an HMM with ``N = 60`` states and ``S`` symbols on ``T = 1000`` observations (AIWC sizes: tiny ``S = 8``, small
``S = 900``). The host keeps every quantity in flat float32 device buffers: ``a`` (``N x N``, row = from-state),
``b`` (``S x N``, row = symbol), ``pi`` (``N``), ``alpha`` and ``beta`` (``T x N``, row = time), ``gamma_sum``
(``N``), ``xi_sum`` (``N x N``), ``c`` (``N``) and the ones vectors ``ones_n`` and ``ones_s``. Its sequence of
launches, all reproduced by :func:`_bwa_host`:

1. ``init_ones_dev`` (``ones_s``); forward pass: ``init_alpha_dev``, then per step ``mvm_non_kernel_naive``
   (``alpha[t] = A @ alpha[t-1]``), ``calc_alpha_dev``, a dot product (``s_dot_kernel_naive`` writes the
   products, the host adds them) giving the scale factor ``c_t``, ``scale_alpha_dev``.
2. Backward pass: ``init_beta_dev`` (``1 / c_{T-1}``), then per step ``calc_beta_dev``
   (``beta[t+1] * b[o_{t+1}] / c_t``) and an in-place ``mvm_non_kernel_naive`` (``beta[t] = A @ beta[t]``).
3. ``calc_gamma_dev`` for every ``t`` (``gamma_sum += alpha[t] * beta[t]``); ``calc_xi_dev`` for every
   ``t < T-1``, each after a dot product ``alpha[t] . beta[t]``.
4. ``est_a_dev``, ``mvm_trans_kernel_naive`` (``c = A^T @ ones``: column sums), ``scale_a_dev``; ``b`` zeroed,
   ``acc_b_dev`` for every ``t``, ``est_b_dev``, ``scale_b_dev``; ``est_pi_dev``. Each of ``est_a``, ``acc_b``
   and ``est_pi`` follows a dot product.

The original's quirks are kept, since they decide what each timed invocation reads and writes: the forward
step multiplies by ``A`` and not ``A^T``; ``gamma_sum`` is not normalised; ``scale_a_dev`` divides row ``i``
of ``A`` by the column sum ``c[i]``; the host asks for B's row sums with the letter ``'N'``, which its
``mat_vec_mul`` ignores (it launches only for ``'n'`` and ``'t'``), so ``scale_b_dev`` divides by the stale
column sums of ``A``; ``init_ones_dev`` is launched with the state count's geometry (256 work items), so at
``S = 900`` only the first 256 ones are written (the vector is never read). The result is therefore not a
textbook Baum-Welch update in general (``tests/kernels/test_measured_hmm.py`` states what it is).

Every region is the FIRST invocation of its kernel, as AIWC recorded it (``s_dot_kernel_naive``: the scale
factor of ``alpha[0]``; ``mvm_non_kernel_naive``: ``alpha[1] = A @ alpha[0]``; ``calc_alpha_dev``: ``t = 1``;
``calc_beta_dev``: ``t = T-2``; ``calc_gamma_dev``, ``calc_xi_dev`` and ``acc_b_dev``: ``t = 0``). The state
before it comes from an ordinary run of the host program in plain NumPy (:func:`_bwa_host` with the
vectorised kernel effects of :data:`_EFFECTS`). Inputs: the original's model, ``A = 1/N``, ``B = 1/S``,
``pi = 1/N``, observations all 0 (``make_inputs`` ignores the seed there); a params dict with
``"model": "random"`` (the test point) draws a random stochastic model and observation sequence from the
seed instead, so that the checks see states that differ (the uniform model makes all states alike).

Launch geometry as the host sets it: state vectors 1-D, work groups of 256, ``ceil(N/256)*256`` work items;
``N x N`` kernels 2-D, 16x16 groups, ``ceil(N/16)*16`` per side; ``S x N`` kernels 2-D, 16x16 groups,
``ceil(N/16)*16 x ceil(S/16)*16``; ``s_dot_kernel_naive`` ``min(n, 80)`` groups of 128; the two matrix-vector
kernels 64 groups of 128 (8192 work items whatever the size). Every region's ``numba.prange`` runs over
exactly these global work items (2-D ranges flattened, x fastest: ``idy = gid // gx``), each iteration doing
its work item's loads, arithmetic, loops and guards; the CUDA ports launch the same grids and blocks. (The
grid-strided kernels compute their first element from the group and local id, as the originals do; a prange
body that is only the strided loop would also be read by Portcast's profiler as a collapsible loop nest.)

Deliberate differences from the original:

- ``est_a_dev`` reads ``alpha`` and ``beta`` at row ``length - 1``; the original indexes row ``length``, one
  row past the end of both buffers (undefined values). Row ``length - 1`` is the one its ``sum_ab`` argument
  is the dot product of, and it keeps the region inside its arrays; the loads and arithmetic are the same.
- Buffers the original leaves uninitialised (``alpha``, ``beta``, ``c``, ``ones_n``, ``ones_s``, the
  partial-sum buffer) start as zeros.
- The backward pass's in-place ``A @ beta[t]`` races on the device (work items read rows that others
  overwrite); the NumPy host reads the whole vector before writing it (the intended product). It only feeds
  later state (the timed ``mvm_non_kernel_naive`` is the forward one, without overlap), and with the
  original's uniform model all entries are equal, so every order gives the same values.
- Host reductions (the sums of the dot-product partials) are sequential float32 sums, as the host loop does.

Precision: single (float32 buffers, constants and accumulators, as the original's ``float`` with f-suffixed
literals); every floating-point record is FP_* (FP64 share 0).
"""

from __future__ import annotations

import copy

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

#: work-group size of the host's 1-D launches over the states (``MAX_THREADS_PER_BLOCK``)
BLOCK_1D = 256
#: side of the host's 2-D work groups (``BLOCK_DIM``)
BLOCK_DIM = 16
#: ``s_dot_kernel_naive``: work-group size and most work groups (``SDOT_BLOCK_SIZE``, ``SDOT_BLOCK_NUM``)
SDOT_BLOCK_SIZE = 128
SDOT_BLOCK_NUM = 80
#: matrix-vector kernels: work-group size and work groups (``MVMUL_BLOCK_SIZE``, ``MVMUL_BLOCK_NUM``)
MVM_BLOCK_SIZE = 128
MVM_BLOCK_NUM = 64
#: what ``scale_b_dev`` stores for an output probability that is exactly zero
B_FLOOR = 1e-10

POINTS = {
    "tiny": {"nstates": 60, "nsymbols": 8, "length": 1000},
    "small": {"nstates": 60, "nsymbols": 900, "length": 1000},
}
TEST_POINT = {"nstates": 5, "nsymbols": 4, "length": 8, "model": "random"}


@numba.njit(cache=True)
def _round_up(n, block):
    """``n`` rounded up to a multiple of ``block`` (the host's ``nblocks * block``)."""
    return ((n + block - 1) // block) * block


# ----------------------------------------------------------------------------------------------------------
# CPU regions: one prange iteration per global work item of the kernel's first invocation
# ----------------------------------------------------------------------------------------------------------


def init_ones_dev(ones_s, nsymbols, nstates):
    """``ones_s[idx] = 1`` for ``idx < nsymbols``.

    1-D, groups of 256, ``ceil(nstates/256)*256`` work items: the host sizes this launch by the number of
    states, not symbols (``nstates`` is the launch size, not a kernel argument), so at ``S = 900`` only 256
    entries are written. Returns ``ones_s``.
    """
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nsymbols:
            ones_s[idx] = 1.0
    return ones_s


def init_alpha_dev(b, pi, nstates, alpha, ones_n, obs_t):
    """``alpha[0] = pi * b[obs_t]`` and ``ones_n = 1`` (states; 1-D, groups of 256). Returns ``(alpha, ones_n)``."""
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nstates:
            alpha[idx] = pi[idx] * b[obs_t * nstates + idx]
            ones_n[idx] = 1.0
    return alpha, ones_n


def calc_alpha_dev(nstates, alpha, offset, b, obs_t):
    """``alpha[offset:offset+N] *= b[obs_t]`` (first invocation: ``t = 1``; 1-D, groups of 256). Returns ``alpha``."""
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nstates:
            alpha[offset + idx] = alpha[offset + idx] * b[obs_t * nstates + idx]
    return alpha


def scale_alpha_dev(nstates, alpha, offset, scale):
    """``alpha[offset:offset+N] /= scale`` (first invocation: ``t = 0``; 1-D, groups of 256). Returns ``alpha``."""
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nstates:
            alpha[offset + idx] = alpha[offset + idx] / scale
    return alpha


def init_beta_dev(nstates, beta, offset, scale):
    """``beta[T-1] = 1 / c_{T-1}`` (``offset = (T-1)*N``; 1-D, groups of 256). Returns ``beta``."""
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nstates:
            beta[offset + idx] = np.float32(1.0) / scale
    return beta


def calc_beta_dev(beta, b, scale_t, nstates, obs_t, t):
    """``beta[t] = beta[t+1] * b[obs_t] / scale_t`` (first invocation: ``t = T-2``, ``obs_t = o_{T-1}``;
    1-D, groups of 256). Returns ``beta``."""
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nstates:
            beta[t * nstates + idx] = beta[(t + 1) * nstates + idx] * b[obs_t * nstates + idx] / scale_t
    return beta


def calc_gamma_dev(gamma_sum, alpha, beta, nstates, t):
    """``gamma_sum += alpha[t] * beta[t]`` (first invocation: ``t = 0``, ``gamma_sum`` zero; 1-D, groups of 256).
    Returns ``gamma_sum``."""
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nstates:
            gamma_sum[idx] += alpha[t * nstates + idx] * beta[t * nstates + idx]
    return gamma_sum


def calc_xi_dev(xi_sum, a, b, alpha, beta, sum_ab, nstates, obs_t, t):
    """``xi_sum[i, j] += alpha[t, i] * a[i, j] * b[obs_t, j] * beta[t+1, j] / sum_ab``.

    First invocation: ``t = 0``, ``obs_t = o_1``, ``xi_sum`` zero, ``sum_ab = alpha[0] . beta[0]``. 2-D over
    ``(j, i)``, 16x16 groups, ``ceil(N/16)*16`` per side (4096 work items at ``N = 60``). Returns ``xi_sum``.
    """
    gx = _round_up(nstates, BLOCK_DIM)
    for gid in numba.prange(gx * gx):
        idy = gid // gx
        idx = gid - idy * gx
        if idx < nstates and idy < nstates:
            xi_sum[idy * nstates + idx] += (
                alpha[t * nstates + idy]
                * a[idy * nstates + idx]
                * b[obs_t * nstates + idx]
                * beta[(t + 1) * nstates + idx]
                / sum_ab
            )
    return xi_sum


def est_a_dev(a, alpha, beta, xi_sum, gamma_sum, sum_ab, nstates, length):
    """``a[i, j] = xi_sum[i, j] / (gamma_sum[i] - alpha[T-1, i] * beta[T-1, i] / sum_ab)``.

    ``sum_ab = alpha[T-1] . beta[T-1]``. 2-D over ``(j, i)``, 16x16 groups, ``ceil(N/16)*16`` per side. The
    original reads row ``length`` (past the end of ``alpha`` and ``beta``); this reads row ``length - 1``
    (see the module docstring). Returns ``a``.
    """
    gx = _round_up(nstates, BLOCK_DIM)
    last = (length - 1) * nstates
    for gid in numba.prange(gx * gx):
        idy = gid // gx
        idx = gid - idy * gx
        if idx < nstates and idy < nstates:
            a[idy * nstates + idx] = xi_sum[idy * nstates + idx] / (
                gamma_sum[idy] - alpha[last + idy] * beta[last + idy] / sum_ab
            )
    return a


def scale_a_dev(a, c, nstates):
    """``a[i, j] /= c[i]`` with ``c`` the column sums of ``a`` (2-D over ``(j, i)``, 16x16 groups). Returns ``a``."""
    gx = _round_up(nstates, BLOCK_DIM)
    for gid in numba.prange(gx * gx):
        idy = gid // gx
        idx = gid - idy * gx
        if idx < nstates and idy < nstates:
            a[idy * nstates + idx] = a[idy * nstates + idx] / c[idy]
    return a


def acc_b_dev(b, alpha, beta, sum_ab, nstates, nsymbols, obs_t, t):
    """``b[obs_t, i] += alpha[t, i] * beta[t, i] / sum_ab``: only the work items of row ``obs_t`` write.

    First invocation: ``t = 0``, ``b`` zeroed by the host, ``sum_ab = alpha[0] . beta[0]``. 2-D over
    ``(state, symbol)``, 16x16 groups, ``ceil(N/16)*16 x ceil(S/16)*16`` work items (1024 tiny, 58368 small).
    Returns ``b``.
    """
    gx = _round_up(nstates, BLOCK_DIM)
    gy = _round_up(nsymbols, BLOCK_DIM)
    for gid in numba.prange(gx * gy):
        idy = gid // gx
        idx = gid - idy * gx
        if idy < nsymbols and idx < nstates and obs_t == idy:
            b[idy * nstates + idx] += alpha[t * nstates + idx] * beta[t * nstates + idx] / sum_ab
    return b


def est_b_dev(b, gamma_sum, nstates, nsymbols):
    """``b[s, i] /= gamma_sum[i]`` (2-D over ``(state, symbol)``, 16x16 groups). Returns ``b``."""
    gx = _round_up(nstates, BLOCK_DIM)
    gy = _round_up(nsymbols, BLOCK_DIM)
    for gid in numba.prange(gx * gy):
        idy = gid // gx
        idx = gid - idy * gx
        if idy < nsymbols and idx < nstates:
            b[idy * nstates + idx] = b[idy * nstates + idx] / gamma_sum[idx]
    return b


def scale_b_dev(b, c, nstates, nsymbols):
    """``b[s, i] = 1e-10`` where it is 0, else ``b[s, i] / c[i]`` (2-D over ``(state, symbol)``, 16x16 groups).

    ``c`` holds the column sums of the re-estimated ``A`` (the host's request for B's row sums launches
    nothing; see the module docstring). Returns ``b``.
    """
    gx = _round_up(nstates, BLOCK_DIM)
    gy = _round_up(nsymbols, BLOCK_DIM)
    for gid in numba.prange(gx * gy):
        idy = gid // gx
        idx = gid - idy * gx
        if idx < nstates and idy < nsymbols:
            if b[idy * nstates + idx] == 0:
                b[idy * nstates + idx] = B_FLOOR
            else:
                b[idy * nstates + idx] = b[idy * nstates + idx] / c[idx]
    return b


def est_pi_dev(pi, alpha, beta, sum_ab, nstates):
    """``pi = alpha[0] * beta[0] / sum_ab`` (1-D, groups of 256). Returns ``pi``."""
    for idx in numba.prange(_round_up(nstates, BLOCK_1D)):
        if idx < nstates:
            pi[idx] = alpha[idx] * beta[idx] / sum_ab
    return pi


def s_dot_kernel_naive(n, param_a, offset_a, param_b, offset_b, partial_sum):
    """``partial_sum[i] = param_a[offset_a + i] * param_b[offset_b + i]`` for ``i < n``, grid-strided; the host
    adds the partials.

    ``min(n, 80)`` groups of 128 work items (7680 at ``n = 60``: only the first ``n`` have an element); each
    starts at its group's offset plus its local id, as the kernel computes it. First invocation:
    ``alpha[0] . ones_n`` (the first scale factor). Returns ``partial_sum``.
    """
    total = min(n, SDOT_BLOCK_NUM) * SDOT_BLOCK_SIZE
    for gid in numba.prange(total):
        group = gid // SDOT_BLOCK_SIZE
        tid = gid - group * SDOT_BLOCK_SIZE
        for i in range(SDOT_BLOCK_SIZE * group + tid, n, total):
            partial_sum[i] = param_a[offset_a + i] * param_b[offset_b + i]
    return partial_sum


def mvm_non_kernel_naive(m, n, mat, lda, x, offset_x, y, offset_y):
    """``y[offset_y + i] = sum_j mat[i * n + j] * x[offset_x + j]`` (row-major product), grid-strided.

    64 groups of 128 work items (8192 whatever the size; the first ``m`` have a row), each starting at its
    group's offset plus its local id. The dimensions swap when ``lda != m``, as the kernel's own test does
    (per work item). First invocation: ``alpha[1] = A @ alpha[0]`` (``x`` and ``y`` are the same buffer,
    rows 0 and 1). Returns ``y``.
    """
    total = MVM_BLOCK_NUM * MVM_BLOCK_SIZE
    for gid in numba.prange(total):
        group = gid // MVM_BLOCK_SIZE
        tid = gid - group * MVM_BLOCK_SIZE
        if lda == m:
            n_size = n
            m_size = m
        else:
            n_size = m
            m_size = n
        for i in range(MVM_BLOCK_SIZE * group + tid, m_size, total):
            acc = np.float32(0.0)
            for j in range(n_size):
                acc += mat[i * n_size + j] * x[j + offset_x]
            y[i + offset_y] = acc
    return y


def mvm_trans_kernel_naive(m, n, mat, lda, x, offset_x, y, offset_y):
    """``y[offset_y + i] = sum_j mat[j * n + i] * x[offset_x + j]`` (transposed product), grid-strided.

    64 groups of 128 work items (8192), as :func:`mvm_non_kernel_naive`. First (and only) invocation:
    ``c = A^T @ ones_n``, the column sums of the re-estimated ``A``. Returns ``y``.
    """
    total = MVM_BLOCK_NUM * MVM_BLOCK_SIZE
    for gid in numba.prange(total):
        group = gid // MVM_BLOCK_SIZE
        tid = gid - group * MVM_BLOCK_SIZE
        if lda == m:
            n_size = n
            m_size = m
        else:
            n_size = m
            m_size = n
        for i in range(MVM_BLOCK_SIZE * group + tid, m_size, total):
            acc = np.float32(0.0)
            for j in range(n_size):
                acc += mat[j * n_size + i] * x[j + offset_x]
            y[i + offset_y] = acc
    return y


# ----------------------------------------------------------------------------------------------------------
# GPU ports: the same grids and blocks as the OpenCL launches
# ----------------------------------------------------------------------------------------------------------


@cuda.jit
def _init_ones_gpu(ones_s, nsymbols, nstates):
    idx = cuda.grid(1)
    if idx < nsymbols:
        ones_s[idx] = 1.0


@cuda.jit
def _init_alpha_gpu(b, pi, nstates, alpha, ones_n, obs_t):
    idx = cuda.grid(1)
    if idx < nstates:
        alpha[idx] = pi[idx] * b[obs_t * nstates + idx]
        ones_n[idx] = 1.0


@cuda.jit
def _calc_alpha_gpu(nstates, alpha, offset, b, obs_t):
    idx = cuda.grid(1)
    if idx < nstates:
        alpha[offset + idx] = alpha[offset + idx] * b[obs_t * nstates + idx]


@cuda.jit
def _scale_alpha_gpu(nstates, alpha, offset, scale):
    idx = cuda.grid(1)
    if idx < nstates:
        alpha[offset + idx] = alpha[offset + idx] / scale


@cuda.jit
def _init_beta_gpu(nstates, beta, offset, scale):
    idx = cuda.grid(1)
    if idx < nstates:
        beta[offset + idx] = np.float32(1.0) / scale


@cuda.jit
def _calc_beta_gpu(beta, b, scale_t, nstates, obs_t, t):
    idx = cuda.grid(1)
    if idx < nstates:
        beta[t * nstates + idx] = beta[(t + 1) * nstates + idx] * b[obs_t * nstates + idx] / scale_t


@cuda.jit
def _calc_gamma_gpu(gamma_sum, alpha, beta, nstates, t):
    idx = cuda.grid(1)
    if idx < nstates:
        gamma_sum[idx] += alpha[t * nstates + idx] * beta[t * nstates + idx]


@cuda.jit
def _calc_xi_gpu(xi_sum, a, b, alpha, beta, sum_ab, nstates, obs_t, t):
    idx, idy = cuda.grid(2)
    if idx < nstates and idy < nstates:
        xi_sum[idy * nstates + idx] += (
            alpha[t * nstates + idy]
            * a[idy * nstates + idx]
            * b[obs_t * nstates + idx]
            * beta[(t + 1) * nstates + idx]
            / sum_ab
        )


@cuda.jit
def _est_a_gpu(a, alpha, beta, xi_sum, gamma_sum, sum_ab, nstates, length):
    idx, idy = cuda.grid(2)
    last = (length - 1) * nstates
    if idx < nstates and idy < nstates:
        a[idy * nstates + idx] = xi_sum[idy * nstates + idx] / (
            gamma_sum[idy] - alpha[last + idy] * beta[last + idy] / sum_ab
        )


@cuda.jit
def _scale_a_gpu(a, c, nstates):
    idx, idy = cuda.grid(2)
    if idx < nstates and idy < nstates:
        a[idy * nstates + idx] = a[idy * nstates + idx] / c[idy]


@cuda.jit
def _acc_b_gpu(b, alpha, beta, sum_ab, nstates, nsymbols, obs_t, t):
    idx, idy = cuda.grid(2)
    if idy < nsymbols and idx < nstates and obs_t == idy:
        b[idy * nstates + idx] += alpha[t * nstates + idx] * beta[t * nstates + idx] / sum_ab


@cuda.jit
def _est_b_gpu(b, gamma_sum, nstates, nsymbols):
    idx, idy = cuda.grid(2)
    if idy < nsymbols and idx < nstates:
        b[idy * nstates + idx] = b[idy * nstates + idx] / gamma_sum[idx]


@cuda.jit
def _scale_b_gpu(b, c, nstates, nsymbols):
    idx, idy = cuda.grid(2)
    if idx < nstates and idy < nsymbols:
        if b[idy * nstates + idx] == 0:
            b[idy * nstates + idx] = B_FLOOR
        else:
            b[idy * nstates + idx] = b[idy * nstates + idx] / c[idx]


@cuda.jit
def _est_pi_gpu(pi, alpha, beta, sum_ab, nstates):
    idx = cuda.grid(1)
    if idx < nstates:
        pi[idx] = alpha[idx] * beta[idx] / sum_ab


@cuda.jit
def _s_dot_gpu(n, param_a, offset_a, param_b, offset_b, partial_sum):
    total = cuda.gridDim.x * SDOT_BLOCK_SIZE
    i = cuda.blockIdx.x * SDOT_BLOCK_SIZE + cuda.threadIdx.x
    while i < n:
        partial_sum[i] = param_a[offset_a + i] * param_b[offset_b + i]
        i += total


@cuda.jit
def _mvm_non_gpu(m, n, mat, lda, x, offset_x, y, offset_y):
    total = cuda.gridDim.x * MVM_BLOCK_SIZE
    if lda == m:
        n_size = n
        m_size = m
    else:
        n_size = m
        m_size = n
    i = cuda.blockIdx.x * MVM_BLOCK_SIZE + cuda.threadIdx.x
    while i < m_size:
        acc = np.float32(0.0)
        for j in range(n_size):
            acc += mat[i * n_size + j] * x[j + offset_x]
        y[i + offset_y] = acc
        i += total


@cuda.jit
def _mvm_trans_gpu(m, n, mat, lda, x, offset_x, y, offset_y):
    total = cuda.gridDim.x * MVM_BLOCK_SIZE
    if lda == m:
        n_size = n
        m_size = m
    else:
        n_size = m
        m_size = n
    i = cuda.blockIdx.x * MVM_BLOCK_SIZE + cuda.threadIdx.x
    while i < m_size:
        acc = np.float32(0.0)
        for j in range(n_size):
            acc += mat[j * n_size + i] * x[j + offset_x]
        y[i + offset_y] = acc
        i += total


# ----------------------------------------------------------------------------------------------------------
# Launch geometry
# ----------------------------------------------------------------------------------------------------------


def _geometry(shape: str, nstates: int, nsymbols: int | None = None):
    """The host's ``(global, local)`` work sizes (tuples, x first) of a launch of the given shape.

    ``"states"``: 1-D over the states; ``"states2"``: ``N x N``; ``"symbols2"``: states x symbols; ``"sdot"``:
    the dot product of two ``nstates`` vectors; ``"mvm"``: the matrix-vector kernels.
    """
    if shape == "states":
        return (_round_up(nstates, BLOCK_1D),), (BLOCK_1D,)
    if shape == "states2":
        side = _round_up(nstates, BLOCK_DIM)
        return (side, side), (BLOCK_DIM, BLOCK_DIM)
    if shape == "symbols2":
        return (_round_up(nstates, BLOCK_DIM), _round_up(nsymbols, BLOCK_DIM)), (BLOCK_DIM, BLOCK_DIM)
    if shape == "sdot":
        return (min(nstates, SDOT_BLOCK_NUM) * SDOT_BLOCK_SIZE,), (SDOT_BLOCK_SIZE,)
    if shape == "mvm":
        return (MVM_BLOCK_NUM * MVM_BLOCK_SIZE,), (MVM_BLOCK_SIZE,)
    raise ValueError(f"unknown launch shape {shape!r}")


def _gpu_port(kernel, shape: str, nstates_at: int, nsymbols_at: int | None, outputs: tuple[int, ...]) -> GpuPort:
    """GPU port of one kernel: arrays copied in (an array passed twice becomes one device buffer, as the
    original passes ``alpha_d`` twice to the forward matrix-vector product), the launch with the host's grid
    and block (sizes read from the arguments at ``nstates_at``/``nsymbols_at``), the ``outputs`` arguments
    copied back."""

    def to_device(*args):
        on_device: dict[int, object] = {}
        dev = []
        for x in args:
            if isinstance(x, np.ndarray):
                if id(x) not in on_device:
                    on_device[id(x)] = cuda.to_device(x)
                dev.append(on_device[id(x)])
            else:
                dev.append(x)
        nsym = None if nsymbols_at is None else args[nsymbols_at]
        glob, loc = _geometry(shape, args[nstates_at], nsym)
        grid = tuple(g // w for g, w in zip(glob, loc))
        return {"args": dev, "grid": grid, "block": loc}

    def launch(state):
        kernel[state["grid"], state["block"]](*state["args"])

    def from_device(state):
        out = tuple(state["args"][i].copy_to_host() for i in outputs)
        return out[0] if len(out) == 1 else out

    return GpuPort(to_device, launch, from_device)


# ----------------------------------------------------------------------------------------------------------
# The host program in plain NumPy (the state before each first invocation, and the tests' reference)
# ----------------------------------------------------------------------------------------------------------


def make_model(params, seed):
    """``(a, b, pi, obs)`` as flat float32 buffers and an int32 observation sequence.

    The original's model (the default): ``a = 1/N``, ``b = 1/S``, ``pi = 1/N``, all observations 0 (the seed
    is not used). ``params["model"] == "random"``: rows of ``a``, columns of ``b`` (per state) and ``pi``
    drawn uniform in ``[0.1, 1)`` and normalised, observations uniform over the symbols.
    """
    n, s, t = int(params["nstates"]), int(params["nsymbols"]), int(params["length"])
    kind = params.get("model", "uniform")
    if kind == "uniform":
        a = np.full(n * n, np.float32(1.0) / np.float32(n), dtype=np.float32)
        b = np.full(s * n, np.float32(1.0) / np.float32(s), dtype=np.float32)
        pi = np.full(n, np.float32(1.0) / np.float32(n), dtype=np.float32)
        return a, b, pi, np.zeros(t, dtype=np.int32)
    if kind != "random":
        raise ValueError(f"unknown hmm model {kind!r}")
    rng = np.random.default_rng(int(seed))
    a = rng.uniform(0.1, 1.0, (n, n))
    b = rng.uniform(0.1, 1.0, (s, n))
    pi = rng.uniform(0.1, 1.0, n)
    a /= a.sum(axis=1, keepdims=True)
    b /= b.sum(axis=0, keepdims=True)
    pi /= pi.sum()
    obs = rng.integers(0, s, t).astype(np.int32)
    return a.astype(np.float32).ravel(), b.astype(np.float32).ravel(), pi.astype(np.float32), obs


def _dot(n, vec_a, offset_a, vec_b, offset_b):
    """The host's ``dot_production``: one ``s_dot_kernel_naive`` launch, then a sequential float32 sum."""
    partial = np.zeros(n, dtype=np.float32)
    yield "s_dot_kernel_naive", (n, vec_a, offset_a, vec_b, offset_b, partial)
    return np.cumsum(partial, dtype=np.float32)[-1]


def _mat_vec_mul(trans, m, n, mat, lda, x, offset_x, y, offset_y):
    """The host's ``mat_vec_mul``: launches only for ``'n'`` and ``'t'`` (any other letter does nothing)."""
    if trans == "n":
        yield "mvm_non_kernel_naive", (m, n, mat, lda, x, offset_x, y, offset_y)
    elif trans == "t":
        yield "mvm_trans_kernel_naive", (m, n, mat, lda, x, offset_x, y, offset_y)


def _bwa_host(a, b, pi, obs):
    """One Baum-Welch iteration of the original host program, as a generator.

    Yields ``(kernel name, argument tuple)`` before every kernel launch; the arguments hold the live device
    buffers, which the caller updates in place (the launch) before resuming. Returns ``(a, b, pi, log_lik)``:
    the re-estimated model and the log10 likelihood the host computes from the scale factors.
    """
    n_st = pi.shape[0]
    n_sym = b.shape[0] // n_st
    length = obs.shape[0]
    a_d, b_d, pi_d = a.copy(), b.copy(), pi.copy()
    alpha_d = np.zeros(length * n_st, dtype=np.float32)
    beta_d = np.zeros(length * n_st, dtype=np.float32)
    gamma_sum_d = np.zeros(n_st, dtype=np.float32)
    xi_sum_d = np.zeros(n_st * n_st, dtype=np.float32)
    c_d = np.zeros(n_st, dtype=np.float32)
    ones_n_d = np.zeros(n_st, dtype=np.float32)
    ones_s_d = np.zeros(n_sym, dtype=np.float32)
    scale = np.zeros(length, dtype=np.float32)

    yield "init_ones_dev", (ones_s_d, n_sym, n_st)

    # forward pass
    yield "init_alpha_dev", (b_d, pi_d, n_st, alpha_d, ones_n_d, int(obs[0]))
    scale[0] = yield from _dot(n_st, alpha_d, 0, ones_n_d, 0)
    yield "scale_alpha_dev", (n_st, alpha_d, 0, scale[0])
    log_lik = np.log10(np.float64(scale[0]))
    for t in range(1, length):
        yield from _mat_vec_mul("n", n_st, n_st, a_d, n_st, alpha_d, (t - 1) * n_st, alpha_d, t * n_st)
        yield "calc_alpha_dev", (n_st, alpha_d, t * n_st, b_d, int(obs[t]))
        scale[t] = yield from _dot(n_st, alpha_d, t * n_st, ones_n_d, 0)
        yield "scale_alpha_dev", (n_st, alpha_d, t * n_st, scale[t])
        log_lik += np.log10(np.float64(scale[t]))

    # backward pass
    yield "init_beta_dev", (n_st, beta_d, (length - 1) * n_st, scale[length - 1])
    for t in range(length - 2, -1, -1):
        yield "calc_beta_dev", (beta_d, b_d, scale[t], n_st, int(obs[t + 1]), t)
        yield from _mat_vec_mul("n", n_st, n_st, a_d, n_st, beta_d, t * n_st, beta_d, t * n_st)

    # gamma and xi sums
    gamma_sum_d[:] = 0
    for t in range(length):
        yield "calc_gamma_dev", (gamma_sum_d, alpha_d, beta_d, n_st, t)
    xi_sum_d[:] = 0
    for t in range(length - 1):
        sum_ab = yield from _dot(n_st, alpha_d, t * n_st, beta_d, t * n_st)
        yield "calc_xi_dev", (xi_sum_d, a_d, b_d, alpha_d, beta_d, sum_ab, n_st, int(obs[t + 1]), t)

    # re-estimate A
    sum_ab = yield from _dot(n_st, alpha_d, (length - 1) * n_st, beta_d, (length - 1) * n_st)
    yield "est_a_dev", (a_d, alpha_d, beta_d, xi_sum_d, gamma_sum_d, sum_ab, n_st, length)
    yield from _mat_vec_mul("t", n_st, n_st, a_d, n_st, ones_n_d, 0, c_d, 0)
    yield "scale_a_dev", (a_d, c_d, n_st)

    # re-estimate B
    b_d[:] = 0
    for t in range(length):
        sum_ab = yield from _dot(n_st, alpha_d, t * n_st, beta_d, t * n_st)
        yield "acc_b_dev", (b_d, alpha_d, beta_d, sum_ab, n_st, n_sym, int(obs[t]), t)
    yield "est_b_dev", (b_d, gamma_sum_d, n_st, n_sym)
    yield from _mat_vec_mul("N", n_st, n_sym, b_d, n_st, ones_s_d, 0, c_d, 0)
    yield "scale_b_dev", (b_d, c_d, n_st, n_sym)

    # re-estimate pi
    sum_ab = yield from _dot(n_st, alpha_d, 0, beta_d, 0)
    yield "est_pi_dev", (pi_d, alpha_d, beta_d, sum_ab, n_st)
    return a_d, b_d, pi_d, log_lik


def run_iteration(a, b, pi, obs, execute):
    """Run :func:`_bwa_host` to the end, each launch done by ``execute(name, args)`` (which must update the
    argument buffers in place); returns the host's ``(a, b, pi, log_lik)``."""
    host = _bwa_host(a, b, pi, obs)
    try:
        while True:
            name, args = next(host)
            execute(name, args)
    except StopIteration as done:
        return done.value


def _rows(vec, n):
    """Row view of a flat buffer whose rows have ``n`` entries."""
    return vec.reshape(-1, n)


def _np_init_ones(ones_s, nsymbols, nstates):
    ones_s[: min(nsymbols, _round_up(nstates, BLOCK_1D))] = 1.0


def _np_init_alpha(b, pi, nstates, alpha, ones_n, obs_t):
    alpha[:nstates] = pi * _rows(b, nstates)[obs_t]
    ones_n[:] = 1.0


def _np_calc_alpha(nstates, alpha, offset, b, obs_t):
    alpha[offset : offset + nstates] *= _rows(b, nstates)[obs_t]


def _np_scale_alpha(nstates, alpha, offset, scale):
    alpha[offset : offset + nstates] /= scale


def _np_init_beta(nstates, beta, offset, scale):
    beta[offset : offset + nstates] = np.float32(1.0) / scale


def _np_calc_beta(beta, b, scale_t, nstates, obs_t, t):
    rows = _rows(beta, nstates)
    rows[t] = rows[t + 1] * _rows(b, nstates)[obs_t] / scale_t


def _np_calc_gamma(gamma_sum, alpha, beta, nstates, t):
    gamma_sum += _rows(alpha, nstates)[t] * _rows(beta, nstates)[t]


def _np_calc_xi(xi_sum, a, b, alpha, beta, sum_ab, nstates, obs_t, t):
    al, be = _rows(alpha, nstates)[t], _rows(beta, nstates)[t + 1]
    xi_sum += (al[:, None] * _rows(a, nstates) * _rows(b, nstates)[obs_t][None, :] * be[None, :] / sum_ab).ravel()


def _np_est_a(a, alpha, beta, xi_sum, gamma_sum, sum_ab, nstates, length):
    last = _rows(alpha, nstates)[length - 1] * _rows(beta, nstates)[length - 1] / sum_ab
    a[:] = (_rows(xi_sum, nstates) / (gamma_sum - last)[:, None]).ravel()


def _np_scale_a(a, c, nstates):
    a[:] = (_rows(a, nstates) / c[:, None]).ravel()


def _np_acc_b(b, alpha, beta, sum_ab, nstates, nsymbols, obs_t, t):
    if 0 <= obs_t < nsymbols:
        _rows(b, nstates)[obs_t] += _rows(alpha, nstates)[t] * _rows(beta, nstates)[t] / sum_ab


def _np_est_b(b, gamma_sum, nstates, nsymbols):
    b[:] = (_rows(b, nstates) / gamma_sum[None, :]).ravel()


def _np_scale_b(b, c, nstates, nsymbols):
    rows = _rows(b, nstates)
    b[:] = np.where(rows == 0, np.float32(B_FLOOR), rows / c[None, :]).ravel()


def _np_est_pi(pi, alpha, beta, sum_ab, nstates):
    pi[:] = alpha[:nstates] * beta[:nstates] / sum_ab


def _np_s_dot(n, param_a, offset_a, param_b, offset_b, partial_sum):
    partial_sum[:n] = param_a[offset_a : offset_a + n] * param_b[offset_b : offset_b + n]


def _np_square(m, n, lda):
    if not (m == n == lda):
        raise ValueError("the host only multiplies square N x N matrices")


def _np_mvm_non(m, n, mat, lda, x, offset_x, y, offset_y):
    _np_square(m, n, lda)
    y[offset_y : offset_y + m] = _rows(mat, n) @ x[offset_x : offset_x + n]


def _np_mvm_trans(m, n, mat, lda, x, offset_x, y, offset_y):
    _np_square(m, n, lda)
    y[offset_y : offset_y + m] = _rows(mat, n).T @ x[offset_x : offset_x + n]


#: each kernel's effect on its arguments, vectorised NumPy (the ordinary run before the timed invocation)
_EFFECTS = {
    "init_ones_dev": _np_init_ones,
    "init_alpha_dev": _np_init_alpha,
    "calc_alpha_dev": _np_calc_alpha,
    "scale_alpha_dev": _np_scale_alpha,
    "init_beta_dev": _np_init_beta,
    "calc_beta_dev": _np_calc_beta,
    "calc_gamma_dev": _np_calc_gamma,
    "calc_xi_dev": _np_calc_xi,
    "est_a_dev": _np_est_a,
    "scale_a_dev": _np_scale_a,
    "acc_b_dev": _np_acc_b,
    "est_b_dev": _np_est_b,
    "scale_b_dev": _np_scale_b,
    "est_pi_dev": _np_est_pi,
    "s_dot_kernel_naive": _np_s_dot,
    "mvm_non_kernel_naive": _np_mvm_non,
    "mvm_trans_kernel_naive": _np_mvm_trans,
}


def numpy_launch(name, args):
    """Do one launch of the host program with the kernel's vectorised NumPy effect."""
    _EFFECTS[name](*args)


def first_invocation(kernel: str, params, seed: int) -> tuple:
    """The arguments of the first launch of ``kernel`` (copies), after an ordinary NumPy run up to it."""
    host = _bwa_host(*make_model(params, seed))
    for name, args in host:
        if name == kernel:
            return copy.deepcopy(args)
        numpy_launch(name, args)
    raise ValueError(f"the hmm host program never launches {kernel!r}")


# ----------------------------------------------------------------------------------------------------------
# The ports
# ----------------------------------------------------------------------------------------------------------


def _measured(cpu, gpu_kernel, shape, nstates_at, nsymbols_at, outputs, description):
    """One :class:`MeasuredKernel` of this application (``cpu.__name__`` is the AIWC kernel name)."""
    kernel = cpu.__name__

    def make_inputs(params, seed):
        return first_invocation(kernel, params, seed)

    def work(params):
        glob, loc = _geometry(shape, int(params["nstates"]), int(params["nsymbols"]))
        return int(np.prod(glob)), int(np.prod(loc))

    return MeasuredKernel(
        source="aiwc",
        application="hmm",
        kernel=kernel,
        description=description,
        cpu=cpu,
        gpu=_gpu_port(gpu_kernel, shape, nstates_at, nsymbols_at, outputs),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-7,
    )


KERNELS = [
    _measured(acc_b_dev, _acc_b_gpu, "symbols2", 4, 5, (0,), "hmm: accumulate alpha*beta/sum into B's row of "
              "the observed symbol (t = 0); 2-D over states x symbols, only one symbol row works"),
    _measured(est_b_dev, _est_b_gpu, "symbols2", 2, 3, (0,), "hmm: divide B by the gamma sums; 2-D over "
              "states x symbols"),
    _measured(scale_b_dev, _scale_b_gpu, "symbols2", 2, 3, (0,), "hmm: floor zeros of B at 1e-10, divide the "
              "rest by c; 2-D over states x symbols"),
    _measured(mvm_non_kernel_naive, _mvm_non_gpu, "mvm", 0, None, (6,), "hmm: alpha[1] = A @ alpha[0], one "
              "row per work item, 8192 work items grid-strided"),
    _measured(mvm_trans_kernel_naive, _mvm_trans_gpu, "mvm", 0, None, (6,), "hmm: column sums of A "
              "(A^T @ ones), one column per work item, 8192 work items grid-strided"),
    _measured(s_dot_kernel_naive, _s_dot_gpu, "sdot", 0, None, (5,), "hmm: element products of alpha[0] and "
              "ones for the first scale factor, min(N, 80) groups of 128 grid-strided"),
    _measured(calc_xi_dev, _calc_xi_gpu, "states2", 6, None, (0,), "hmm: accumulate xi at t = 0; 2-D N x N"),
    _measured(est_a_dev, _est_a_gpu, "states2", 6, None, (0,), "hmm: re-estimate A from the xi and gamma "
              "sums; 2-D N x N"),
    _measured(scale_a_dev, _scale_a_gpu, "states2", 2, None, (0,), "hmm: divide A's rows by c; 2-D N x N"),
    _measured(calc_alpha_dev, _calc_alpha_gpu, "states", 0, None, (1,), "hmm: alpha[1] *= B[o_1]; 1-D over "
              "the states"),
    _measured(calc_beta_dev, _calc_beta_gpu, "states", 3, None, (0,), "hmm: beta[T-2] = beta[T-1] * B[o_{T-1}] "
              "/ c_{T-2}; 1-D over the states"),
    _measured(calc_gamma_dev, _calc_gamma_gpu, "states", 3, None, (0,), "hmm: gamma_sum += alpha[0] * "
              "beta[0]; 1-D over the states"),
    _measured(init_alpha_dev, _init_alpha_gpu, "states", 2, None, (3, 4), "hmm: alpha[0] = pi * B[o_0], "
              "ones_n = 1; 1-D over the states"),
    _measured(scale_alpha_dev, _scale_alpha_gpu, "states", 0, None, (1,), "hmm: alpha[0] /= c_0; 1-D over "
              "the states"),
    _measured(init_beta_dev, _init_beta_gpu, "states", 0, None, (1,), "hmm: beta[T-1] = 1 / c_{T-1}; 1-D over "
              "the states"),
    _measured(est_pi_dev, _est_pi_gpu, "states", 4, None, (0,), "hmm: pi = alpha[0] * beta[0] / sum; 1-D "
              "over the states"),
    _measured(init_ones_dev, _init_ones_gpu, "states", 2, None, (0,), "hmm: ones_s = 1 with the states' "
              "launch size; 1-D"),
]
