"""Rodinia 3.x backprop: the two CUDA kernels of one training step of a 3-layer perceptron.

The network has ``layer_size`` input units (plus a bias unit 0), 16 hidden units and 1 output unit; weights
are float32 ``(in + 1) x (hid + 1)`` matrices stored row-major as one flat array (row ``k`` = input unit
``k``, column ``j`` = hidden unit ``j``; row 0 and column 0 are the bias row/column). One training step:

1. ``bpnn_layerforward_CUDA``: grid ``(1, in / 16)`` of ``16 x 16`` blocks; block ``by`` takes input units
   ``16 by + 1 .. 16 by + 16`` and the 16 x 16 block of weights to the 16 hidden units. Thread ``(tx, ty)``
   multiplies weight ``(16 by + ty + 1, tx + 1)`` by its input (staged in shared memory by the ``tx == 0``
   threads), then the block sums each column over its 16 rows by a tree in shared memory (4 halving steps, a
   barrier after each). The tree's intermediate values are written back over the block's weights (the
   CUDA source does; the host copies the weights again before the second kernel), and thread ``(0, ty)``
   writes column ``ty``'s sum to ``hidden_partial_sum[by * hid + ty]``.
2. The host adds the partial sums and the bias weights, squashes them (hidden units), runs the output layer,
   and computes the output and hidden deltas (plain CPU code, here plain NumPy in ``make_inputs``).
3. ``bpnn_adjust_weights_cuda``: same grid; thread ``(tx, ty)`` of block ``by`` updates weight
   ``(16 by + ty + 1, tx + 1)`` by ``ETA * delta[tx + 1] * input[16 by + ty + 1] + MOMENTUM * old`` and stores
   that change as the new "old" (momentum) weight; block 0's ``ty == 0`` threads update the bias row the same
   way with an input of 1. ETA = MOMENTUM = 0.3 are double literals in the CUDA source, so the update is
   computed in double and rounded to float when stored (nvprof counts only double flops here).

Global work items = ``in / 16`` blocks x 256 threads = ``16 in`` (the data: grid.y = in / 16, block 16 x 16,
warps_launched = in / 2). Each region is the kernel's one launch of the run (Rodinia trains one step; the data
has one row per kernel and size).

Inputs as Rodinia generates them: weights (input layer, then hidden layer) and then the input units drawn
uniform in [0, 1) (Rodinia: ``rand() / RAND_MAX`` after ``srand(7)``; here NumPy's generator seeded by
``seed``, so the values differ, the distribution does not); the previous (momentum) weights are zero (first
step); target 0.1. Unit 0 of the input (the bias unit) is set to 1; neither kernel reads it.

CPU regions: one parallel-loop iteration per GPU thread (``gid`` -> block ``by``, then ``tx``, ``ty`` as CUDA
numbers them); shared memory is an array indexed by block. ``bpnn_layerforward_CUDA``'s barriers split it
into phases, each a parallel loop over all global work items: stage the inputs; load and multiply the
weights; one phase per halving step of the tree; store the weights and the partial sums. Deliberate
differences: a thread's indices are recomputed in every phase (registers do not survive between CPU loops);
the tree's step ``2^i`` is an integer shift (``__powf(2, i)`` in the source, folded by the compiler: nvprof
counts no special-function op), and the barrier between the weight load and the multiply is not a phase
boundary (each thread touches its own element only). ``bpnn_adjust_weights_cuda`` is one loop: its barrier
separates no dependence (the bias row that block 0 updates after it is not written before it).
``output_hidden_cuda``, an argument of the first kernel that it never uses, is left out.

Precision: ``bpnn_layerforward_CUDA`` computes in single precision (float32, as the source's ``float``);
``bpnn_adjust_weights_cuda`` in double (the source's ETA and MOMENTUM are double literals: nvprof counts only
double flops there), its records FP64_* (FP64 share of the floating-point records 1 at the test point), the
float32 weights rounded when stored.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

HEIGHT = 16  # rows (input units) per block
WIDTH = 16  # columns (hidden units) per block
LOG2_HEIGHT = 4
HIDDEN = 16
OUTPUT = 1
ETA = 0.3
MOMENTUM = 0.3
TARGET = 0.1
LAYER_SIZES = tuple(range(8192, 65536 + 1, 1024))


@numba.njit
def _thread(gid):
    """Block row ``by`` and thread position ``(tx, ty)`` of global thread ``gid`` (grid (1, n), block 16 x 16)."""
    by = gid // (HEIGHT * WIDTH)
    loc = gid - by * (HEIGHT * WIDTH)
    ty = loc // WIDTH
    tx = loc - ty * WIDTH
    return by, tx, ty


def bpnn_layerforward_cuda(input_units, weights, partial_sum, n_in, hid):
    """CPU region: one launch of ``bpnn_layerforward_CUDA``.

    Parameters
    ----------
    input_units : numpy.ndarray
        float32 ``(n_in + 1,)``, unit 0 the bias unit (not read).
    weights : numpy.ndarray
        float32 flat ``(n_in + 1) * (hid + 1)`` input-to-hidden weights; overwritten with the block's
        reduction tree (as the CUDA kernel does).
    partial_sum : numpy.ndarray
        float32 ``(n_in / 16 * hid,)``: written, the per-block sums of input x weight per hidden unit.
    n_in, hid : int
        input units (a multiple of 16) and hidden units (16).

    Returns
    -------
    tuple of numpy.ndarray
        ``(partial_sum, weights)``.
    """
    n_blocks = n_in // HEIGHT
    n_threads = n_blocks * HEIGHT * WIDTH
    input_node = np.empty((n_blocks, HEIGHT), dtype=np.float32)  # shared
    weight_matrix = np.empty((n_blocks, HEIGHT, WIDTH), dtype=np.float32)  # shared
    # phase 1: the first thread of each row stages the row's input unit
    for gid in numba.prange(n_threads):
        by, tx, ty = _thread(gid)
        index_in = HEIGHT * by + ty + 1
        if tx == 0:
            input_node[by, ty] = input_units[index_in]
    # phase 2: every thread loads its weight and multiplies it by its row's input
    for gid in numba.prange(n_threads):
        by, tx, ty = _thread(gid)
        index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1)
        weight_matrix[by, ty, tx] = weights[index]
        weight_matrix[by, ty, tx] = weight_matrix[by, ty, tx] * input_node[by, ty]
    # phases 3..6: the tree halves the rows to sum, rows that are multiples of 2^i add the row 2^(i-1) below
    for i in range(1, LOG2_HEIGHT + 1):
        power_two = 1 << i
        for gid in numba.prange(n_threads):
            by, tx, ty = _thread(gid)
            if ty % power_two == 0:
                weight_matrix[by, ty, tx] = weight_matrix[by, ty, tx] + weight_matrix[by, ty + power_two // 2, tx]
    # phase 7: the tree goes back over the weights; row 0 of the tree holds the block's column sums
    for gid in numba.prange(n_threads):
        by, tx, ty = _thread(gid)
        index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1)
        weights[index] = weight_matrix[by, ty, tx]
        if tx == 0:
            partial_sum[by * hid + ty] = weight_matrix[by, tx, ty]
    return partial_sum, weights


def bpnn_adjust_weights_cuda(delta, hid, ly, n_in, w, oldw):
    """CPU region: one launch of ``bpnn_adjust_weights_cuda``.

    Parameters
    ----------
    delta : numpy.ndarray
        float32 ``(hid + 1,)`` hidden-unit deltas (0 not read).
    hid : int
        hidden units (16).
    ly : numpy.ndarray
        float32 ``(n_in + 1,)`` input units (0 not read).
    n_in : int
        input units (a multiple of 16).
    w, oldw : numpy.ndarray
        float32 flat ``(n_in + 1) * (hid + 1)`` weights and previous changes; both updated.

    Returns
    -------
    tuple of numpy.ndarray
        ``(w, oldw)``.
    """
    n_threads = n_in // HEIGHT * HEIGHT * WIDTH
    for gid in numba.prange(n_threads):
        by, tx, ty = _thread(gid)
        index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1)
        index_y = HEIGHT * by + ty + 1
        index_x = tx + 1
        w[index] += ETA * np.float64(delta[index_x]) * np.float64(ly[index_y]) + MOMENTUM * np.float64(oldw[index])
        oldw[index] = ETA * np.float64(delta[index_x]) * np.float64(ly[index_y]) + MOMENTUM * np.float64(oldw[index])
        if ty == 0 and by == 0:
            w[index_x] += ETA * np.float64(delta[index_x]) + MOMENTUM * np.float64(oldw[index_x])
            oldw[index_x] = ETA * np.float64(delta[index_x]) + MOMENTUM * np.float64(oldw[index_x])
    return w, oldw


@cuda.jit
def _layerforward_kernel(input_units, weights, partial_sum, n_in, hid):
    input_node = cuda.shared.array(HEIGHT, dtype=numba.float32)
    weight_matrix = cuda.shared.array((HEIGHT, WIDTH), dtype=numba.float32)
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1)
    index_in = HEIGHT * by + ty + 1
    if tx == 0:
        input_node[ty] = input_units[index_in]
    cuda.syncthreads()
    weight_matrix[ty, tx] = weights[index]
    cuda.syncthreads()
    weight_matrix[ty, tx] = weight_matrix[ty, tx] * input_node[ty]
    cuda.syncthreads()
    for i in range(1, LOG2_HEIGHT + 1):
        power_two = 1 << i
        if ty % power_two == 0:
            weight_matrix[ty, tx] = weight_matrix[ty, tx] + weight_matrix[ty + power_two // 2, tx]
        cuda.syncthreads()
    weights[index] = weight_matrix[ty, tx]
    cuda.syncthreads()
    if tx == 0:
        partial_sum[by * hid + ty] = weight_matrix[tx, ty]


@cuda.jit
def _adjust_weights_kernel(delta, hid, ly, n_in, w, oldw):
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1)
    index_y = HEIGHT * by + ty + 1
    index_x = tx + 1
    w[index] += ETA * np.float64(delta[index_x]) * np.float64(ly[index_y]) + MOMENTUM * np.float64(oldw[index])
    oldw[index] = ETA * np.float64(delta[index_x]) * np.float64(ly[index_y]) + MOMENTUM * np.float64(oldw[index])
    cuda.syncthreads()
    if ty == 0 and by == 0:
        w[index_x] += ETA * np.float64(delta[index_x]) + MOMENTUM * np.float64(oldw[index_x])
        oldw[index_x] = ETA * np.float64(delta[index_x]) + MOMENTUM * np.float64(oldw[index_x])


def _forward_to_device(input_units, weights, partial_sum, n_in, hid):
    return {"args": (cuda.to_device(input_units), cuda.to_device(weights), cuda.to_device(partial_sum), n_in, hid),
            "blocks": n_in // HEIGHT}


def _forward_launch(s):
    _layerforward_kernel[(1, s["blocks"]), (WIDTH, HEIGHT)](*s["args"])


def _forward_from_device(s):
    return s["args"][2].copy_to_host(), s["args"][1].copy_to_host()


def _adjust_to_device(delta, hid, ly, n_in, w, oldw):
    return {"args": (cuda.to_device(delta), hid, cuda.to_device(ly), n_in, cuda.to_device(w), cuda.to_device(oldw)),
            "blocks": n_in // HEIGHT}


def _adjust_launch(s):
    _adjust_weights_kernel[(1, s["blocks"]), (WIDTH, HEIGHT)](*s["args"])


def _adjust_from_device(s):
    return s["args"][4].copy_to_host(), s["args"][5].copy_to_host()


def network(params, seed):
    """A fresh network as Rodinia's ``bpnn_create`` + ``load`` make it (see the module docstring):
    ``(input_units, input_weights, hidden_weights)``, float32, weights as ``(rows, cols)`` matrices."""
    n_in = int(params["layer_size"])
    hid = int(params.get("hidden", HIDDEN))
    rng = np.random.default_rng(seed)
    input_weights = rng.random((n_in + 1, hid + 1), dtype=np.float32)
    hidden_weights = rng.random((hid + 1, OUTPUT + 1), dtype=np.float32)
    input_units = np.empty(n_in + 1, dtype=np.float32)
    input_units[0] = 1.0
    input_units[1:] = rng.random(n_in, dtype=np.float32)
    return input_units, input_weights, hidden_weights


def squash(x):
    """Rodinia's sigmoid ``1 / (1 + exp(-x))``."""
    return 1.0 / (1.0 + np.exp(-x))


def hidden_deltas(input_units, input_weights, hidden_weights, hidden_sums):
    """The host's part of the step after the first kernel: hidden units from their sums (the partial sums
    added up, plus the bias weights), the output layer, the output error (target 0.1) and the hidden deltas.
    Returns float32 ``(hid + 1,)``; delta 0 is 0 (Rodinia leaves it unset; never read)."""
    hid = input_weights.shape[1] - 1
    hidden = np.empty(hid + 1)
    hidden[0] = 1.0
    hidden[1:] = squash(hidden_sums.astype(np.float64) + input_weights[0, 1:])
    hidden = hidden.astype(np.float32).astype(np.float64)  # Rodinia's units are float
    who = hidden_weights.astype(np.float64)
    out = squash(hidden @ who[:, 1:]).astype(np.float32).astype(np.float64)  # the output unit(s) 1..
    out_delta = (out * (1.0 - out) * (TARGET - out)).astype(np.float32).astype(np.float64)
    delta = np.zeros(hid + 1, dtype=np.float32)
    delta[1:] = hidden[1:] * (1.0 - hidden[1:]) * (who[1:, 1:] @ out_delta)
    return delta


def make_forward_inputs(params, seed):
    """``bpnn_layerforward_CUDA``'s arguments for a fresh network."""
    n_in = int(params["layer_size"])
    hid = int(params.get("hidden", HIDDEN))
    input_units, input_weights, _ = network(params, seed)
    partial_sum = np.zeros(n_in // HEIGHT * hid, dtype=np.float32)
    return input_units, input_weights.ravel(), partial_sum, n_in, hid


def make_adjust_inputs(params, seed):
    """``bpnn_adjust_weights_cuda``'s arguments: the forward pass and the host's error computation run by
    plain NumPy (the hidden sums as one product), the original weights (the host copies them again), zero
    previous changes."""
    n_in = int(params["layer_size"])
    hid = int(params.get("hidden", HIDDEN))
    input_units, input_weights, hidden_weights = network(params, seed)
    sums = (input_units[1:].astype(np.float64) @ input_weights[1:, 1:].astype(np.float64)).astype(np.float32)
    delta = hidden_deltas(input_units, input_weights, hidden_weights, sums)
    oldw = np.zeros((n_in + 1) * (hid + 1), dtype=np.float32)
    return delta, hid, input_units, n_in, input_weights.ravel().copy(), oldw


def work(params):
    """Global work items (``in / 16`` blocks x 256 threads) and threads per block."""
    return int(params["layer_size"]) // HEIGHT * HEIGHT * WIDTH, HEIGHT * WIDTH


#: every input layer size of the data (input.size.1; input.size.2 is 0), hidden 16
POINTS = {f"in{n}": {"layer_size": n, "hidden": HIDDEN} for n in LAYER_SIZES}
TEST_POINT = {"layer_size": 16, "hidden": HIDDEN}  # one block of 256 threads

KERNELS = [
    MeasuredKernel(
        source="amaris",
        application="backprop",
        kernel="bpnn_layerforward_CUDA",
        description="Rodinia backprop forward: per 16x16 block, input x weight and a shared-memory tree sum per "
        "hidden unit",
        cpu=bpnn_layerforward_cuda,
        gpu=GpuPort(_forward_to_device, _forward_launch, _forward_from_device),
        make_inputs=make_forward_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        data_sizes=lambda p: (p["layer_size"], 0),
        rtol=1e-6,
        atol=1e-6,
    ),
    MeasuredKernel(
        source="amaris",
        application="backprop",
        kernel="bpnn_adjust_weights_cuda",
        description="Rodinia backprop weight update with momentum (ETA 0.3, MOMENTUM 0.3, double arithmetic), one "
        "thread per input-to-hidden weight",
        cpu=bpnn_adjust_weights_cuda,
        gpu=GpuPort(_adjust_to_device, _adjust_launch, _adjust_from_device),
        make_inputs=make_adjust_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        data_sizes=lambda p: (p["layer_size"], 0),
        rtol=1e-6,
        atol=1e-7,  # float32 weights near 1; a device may fuse the double mul-adds
    ),
]
