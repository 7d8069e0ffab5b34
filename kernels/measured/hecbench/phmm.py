"""One cell of the pair-HMM forward algorithm, HeCBench ``phmm``: the kernel ``pair_HMM_forward``.

Dimensions (the program's constants): ``x_dim = 11``, ``y_dim = 40``, ``batch = 4`` sequence pairs, ``states =
3`` (two emitting states). One block per batch entry, one thread per state. For the cell ``(cur_i, cur_j)``
with both indices positive (the only case the program launches: its loops start at 1), each thread stores
its state's emission probability in shared memory (``e``), loads the 2 x 2 transition blocks of rows
``cur_i - 1`` and ``cur_i`` into registers, and the four neighbouring forward values (``(i-1, j-1)``,
``(i-1, j)``, ``(i, j-1)``, ``(i, j)``; barrier); it forms the four sums ``s_n = sum_k f_n[k] t_n[k][state]``
scaled by the likelihoods ``likelihood[.][.][batch][state]`` into shared ``mul_4d`` (barrier); then every
thread of the block sums the four contributions for both states, scales by the emission and writes both
entries of ``forward_out[cur_i][cur_j][batch]`` (the two threads write the same values).

Launch: 4 blocks of 2 threads. Measured point ``1000`` (repeat); the timed launch is the first, cell (1, 1),
reading the initial (random) forward matrix.

Inputs: the host's ``std::default_random_engine(123)`` with ``uniform_real_distribution<double>(0, 1)``
fills the forward matrix and the emissions (interleaved), the transitions, the start transitions and the
likelihoods, in that order; here NumPy's ``default_rng(seed)`` draws the same uniform doubles in the same
order (not the same values). The output matrix (``cudaMalloc``, never initialised) starts at zero here.

Deliberate differences: the kernel's ``cur_j == 0`` branch is never launched by the program and is not
ported. The per-thread register arrays ``t`` and ``f`` that live across the barriers are arrays indexed by
thread; the shared arrays hold one tile per block. Precision: double, as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

X_DIM, Y_DIM, BATCH, STATES = 11, 40, 4, 3
S = STATES - 1

POINTS = {"1000": {"repeat": 1000, "cur_i": 1, "cur_j": 1}}
TEST_POINT = {"repeat": 1, "cur_i": 3, "cur_j": 5}


def pair_HMM_forward(cur_i, cur_j, forward_in, transitions, emissions, likelihood, start_transitions,
                     forward_out, n_threads):
    """The forward value of cell ``(cur_i, cur_j)`` (``cur_i, cur_j > 0``) of every batch entry."""
    n_blocks = n_threads // S
    e = np.zeros((n_blocks, BATCH, S))  # shared, one tile per block
    mul_4d = np.zeros((n_blocks, 4, BATCH, 1, S))
    t = np.zeros((n_threads, 4, 2, 2))  # registers t[0][0], t[0][1], t[1][0], t[1][1] of the thread's batch
    f = np.zeros((n_threads, 4, 2))
    for gid in numba.prange(n_threads):
        batch_id = gid // S
        states_id = gid % S
        e[batch_id, batch_id, states_id] = emissions[cur_i, cur_j, batch_id, states_id]
        for k in range(2):
            for m in range(2):
                t[gid, 0, k, m] = transitions[cur_i - 1, batch_id, k, m]
                t[gid, 1, k, m] = transitions[cur_i - 1, batch_id, k, m]
                t[gid, 2, k, m] = transitions[cur_i, batch_id, k, m]
                t[gid, 3, k, m] = transitions[cur_i, batch_id, k, m]
        for m in range(2):
            f[gid, 0, m] = forward_in[cur_i - 1, cur_j - 1, batch_id, m]
            f[gid, 1, m] = forward_in[cur_i - 1, cur_j, batch_id, m]
            f[gid, 2, m] = forward_in[cur_i, cur_j - 1, batch_id, m]
            f[gid, 3, m] = forward_in[cur_i, cur_j, batch_id, m]
    # __syncthreads
    for gid in numba.prange(n_threads):
        batch_id = gid // S
        states_id = gid % S
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for k in range(2):
            s0 += f[gid, 0, k] * t[gid, 0, k, states_id]
            s1 += f[gid, 1, k] * t[gid, 1, k, states_id]
            s2 += f[gid, 2, k] * t[gid, 2, k, states_id]
            s3 += f[gid, 3, k] * t[gid, 3, k, states_id]
        s0 *= likelihood[0, 0, batch_id, states_id]
        s1 *= likelihood[0, 1, batch_id, states_id]
        s2 *= likelihood[1, 0, batch_id, states_id]
        s3 *= likelihood[1, 1, batch_id, states_id]
        mul_4d[batch_id, 0, batch_id, 0, states_id] = s0
        mul_4d[batch_id, 1, batch_id, 0, states_id] = s1
        mul_4d[batch_id, 2, batch_id, 0, states_id] = s2
        mul_4d[batch_id, 3, batch_id, 0, states_id] = s3
    # __syncthreads
    for gid in numba.prange(n_threads):
        batch_id = gid // S
        for j in range(2):
            summation = (mul_4d[batch_id, 0, batch_id, 0, j] + mul_4d[batch_id, 1, batch_id, 0, j]
                         + mul_4d[batch_id, 2, batch_id, 0, j] + mul_4d[batch_id, 3, batch_id, 0, j])
            summation *= e[batch_id, batch_id, j]
            forward_out[cur_i, cur_j, batch_id, j] = summation
    return forward_out


@cuda.jit
def _phmm_gpu(cur_i, cur_j, forward_in, transitions, emissions, likelihood, start_transitions, forward_out):
    batch_id = cuda.blockIdx.x
    states_id = cuda.threadIdx.x
    e = cuda.shared.array((BATCH, S), dtype=numba.float64)
    mul_4d = cuda.shared.array((4, BATCH, 1, S), dtype=numba.float64)
    e[batch_id, states_id] = emissions[cur_i, cur_j, batch_id, states_id]
    t = cuda.local.array((4, 2, 2), dtype=numba.float64)
    for k in range(2):
        for m in range(2):
            t[0, k, m] = transitions[cur_i - 1, batch_id, k, m]
            t[1, k, m] = transitions[cur_i - 1, batch_id, k, m]
            t[2, k, m] = transitions[cur_i, batch_id, k, m]
            t[3, k, m] = transitions[cur_i, batch_id, k, m]
    cuda.syncthreads()
    f = cuda.local.array((4, 2), dtype=numba.float64)
    for m in range(2):
        f[0, m] = forward_in[cur_i - 1, cur_j - 1, batch_id, m]
        f[1, m] = forward_in[cur_i - 1, cur_j, batch_id, m]
        f[2, m] = forward_in[cur_i, cur_j - 1, batch_id, m]
        f[3, m] = forward_in[cur_i, cur_j, batch_id, m]
    cuda.syncthreads()
    for n in range(4):
        s = 0.0
        for k in range(2):
            s += f[n, k] * t[n, k, states_id]
        s *= likelihood[n // 2, n % 2, batch_id, states_id]
        mul_4d[n, batch_id, 0, states_id] = s
    cuda.syncthreads()
    for j in range(2):
        summation = mul_4d[0, batch_id, 0, j] + mul_4d[1, batch_id, 0, j] + mul_4d[2, batch_id, 0, j] \
            + mul_4d[3, batch_id, 0, j]
        forward_out[cur_i, cur_j, batch_id, j] = summation * e[batch_id, j]


def _to_device(cur_i, cur_j, *rest):
    *arrays, n_threads = rest
    return {"ij": (int(cur_i), int(cur_j)), "arrays": [cuda.to_device(a) for a in arrays]}


def _launch(s):
    _phmm_gpu[BATCH, S](*s["ij"], *s["arrays"])


def _from_device(s):
    return s["arrays"][-1].copy_to_host()


def host_arrays(seed):
    """The host's random matrices: forward, emissions, transitions, start transitions, likelihoods."""
    rng = np.random.default_rng(seed)
    fe = rng.random((X_DIM + 1, Y_DIM + 1, BATCH, S, 2))  # forward and emission drawn in turn
    forward, emissions = fe[..., 0].copy(), fe[..., 1].copy()
    transitions = rng.random((X_DIM + 1, BATCH, S, STATES))
    start = rng.random((BATCH, S))
    likelihood = rng.random((2, 2, BATCH, S))
    return forward, emissions, transitions, start, likelihood


def make_inputs(params, seed):
    """The region's arguments at the launch of cell ``(cur_i, cur_j)`` on the initial forward matrix."""
    forward, emissions, transitions, start, likelihood = host_arrays(seed)
    return (int(params["cur_i"]), int(params["cur_j"]), forward, transitions, emissions, likelihood, start,
            np.zeros_like(forward), work(params)[0])


def work(params):
    return BATCH * S, S


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="phmm",
        kernel="pair_HMM_forward",
        description="HeCBench phmm: one cell of the pair-HMM forward recursion, one block per batch entry, one "
        "thread per state, shared-memory exchange",
        cpu=pair_HMM_forward,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-12,
        atol=1e-14,
    ),
]
