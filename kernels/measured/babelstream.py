"""BabelStream 3.3 / 3.4, CUDA implementation: the five kernels of one iteration (copy, mul, add, triad, dot).

BabelStream measures sustainable memory bandwidth with three double-precision arrays ``a``, ``b``, ``c`` of
``N`` elements (``-s N``; the data's "Array size: 268.4 MB" is ``N = 2^25``). The arrays are set to
``a = 0.1``, ``b = 0.2``, ``c = 0.0`` by an initialisation kernel, then each of ``num_times`` (100) iterations
runs, in this order:

* ``copy``:  ``c[i] = a[i]``
* ``mul``:   ``b[i] = scalar * c[i]``
* ``add``:   ``c[i] = a[i] + b[i]``
* ``triad``: ``a[i] = b[i] + scalar * c[i]``
* ``dot``:   ``sum = sum_i a[i] * b[i]``

with ``scalar = 0.4`` (``startScalar``, a compile-time constant of the kernels). Launch geometry of the CUDA
version: ``TBSIZE = 1024`` threads per block; copy, mul, add and triad launch ``N / TBSIZE`` blocks, one
thread per element and no bounds check (the program refuses an ``N`` that is not a multiple of ``TBSIZE``).
``dot`` launches ``DOT_NUM_BLOCKS = 256`` blocks of ``TBSIZE`` threads (a fixed constant in 3.3 and 3.4;
BabelStream 4.0 changed it to four blocks per SM): each thread accumulates ``a[i] * b[i]`` over a grid-stride
loop (start ``blockIdx.x * blockDim.x + threadIdx.x``, stride ``blockDim.x * gridDim.x``) into its slot of a
shared array ``tb_sum[TBSIZE]``, then the block halves it in a shared-memory tree (offsets 512, 256, ..., 1,
``__syncthreads()`` before each step) and thread 0 writes the block's sum to ``sum[blockIdx.x]``. The host
copies the 256 partial sums back and adds them.

Regions: one per kernel. copy/mul/add/triad: ``for i in numba.prange(N)``, one iteration per GPU thread.
dot: ``DOT_NUM_BLOCKS * TBSIZE`` work items (262144), in phases as the barriers split them: the grid-stride
accumulation (``tb_sum`` is an array holding one ``TBSIZE`` tile per block), one phase per step of the tree,
and the store of each block's sum. The region's result is the kernel's output, the 256 partial sums: the
host's copy and sum of the partials is left OUT of the region (BabelStream's timer, around the whole
``dot()`` call, includes them: a 2 KB device-to-host copy and 256 additions).

Measured point: ``"2^25"`` (``N = 33554432``, 268.4 MB per array), which every 268.4 MB file of the data has
(the "large" files hold only 2^29). The larger sizes of the data (2^28, 2^29 and 2^30 elements: 2.1, 4.3 and
8.6 GB per array) are left out: their regions have 8 to 32 times the records of the 2^25 one, too many to
trace. ``feature_point``: ``N = 2^20`` (same blocks) for copy, mul, add and triad; for dot ``N = 2^19`` over 8
blocks of 1024 (64 grid-stride steps per thread where the measured launch has 128; with its 256 blocks at
2^20 the region would have 3e7 records, 4 steps per thread).

The state before each kernel is the one its first launch finds (iteration 1, after the initialisation and
the iteration's earlier kernels; ``make_inputs`` computes it with NumPy). BabelStream's min / max / average
skip the first iteration, so the timed launches are those of iterations 2 to 100; they read and write the
same arrays, only the constant values differ (no branch depends on them). There is no random input (the
seed is ignored). Each region gets only the arrays its kernel reads or writes.

Deliberate differences: in dot, each thread accumulates its grid-stride sum in a local variable and stores
it into ``tb_sum`` once, where the source writes ``tb_sum[local_i] += a[i] * b[i]`` in the loop (a load and a
store of shared memory per step unless the compiler keeps the slot in a register; not known here). The
tile size and the dot's block count are parameters of a point (``tbsize``, ``dot_blocks``; 1024 and 256 at
the measured and feature points) so that the test point's dot fits the CUDA simulator.

Precision: double (float64 arrays, scalar and accumulators, as without the ``--float`` option; the
files say "Precision: double"): every floating-point record is FP64.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

TBSIZE = 1024
DOT_NUM_BLOCKS = 256
SCALAR = 0.4
START_A, START_B, START_C = 0.1, 0.2, 0.0
KERNEL_ORDER = ("copy", "mul", "add", "triad", "dot")

#: the data's array size (the 268.4 MB files); larger sizes are too large to trace (module docstring)
POINTS = {"2^25": {"n": 1 << 25, "tbsize": TBSIZE, "dot_blocks": DOT_NUM_BLOCKS}}
FEATURE_POINT = {"n": 1 << 20, "tbsize": TBSIZE, "dot_blocks": DOT_NUM_BLOCKS}
#: dot at 2^20 with its 256 blocks has 3e7 records (4 steps per thread, then the tree): 8 blocks of 1024
#: threads over 2^19 elements keep the block size and give 64 grid-stride steps per thread (128 measured)
DOT_FEATURE_POINT = {"n": 1 << 19, "tbsize": TBSIZE, "dot_blocks": 8}
#: small enough for the CUDA simulator: 2 blocks of 1024 (copy ... triad), 4 blocks of 128 (dot)
TEST_POINT = {"n": 2048, "tbsize": 128, "dot_blocks": 4}


# ----------------------------------------------------------------------------------------------- regions


def copy(a, c):
    """``c = a``, one work item per element. Returns ``c``."""
    for i in numba.prange(c.shape[0]):
        c[i] = a[i]
    return c


def mul(b, c):
    """``b = scalar * c``, one work item per element. Returns ``b``."""
    for i in numba.prange(b.shape[0]):
        b[i] = SCALAR * c[i]
    return b


def add(a, b, c):
    """``c = a + b``, one work item per element. Returns ``c``."""
    for i in numba.prange(c.shape[0]):
        c[i] = a[i] + b[i]
    return c


def triad(a, b, c):
    """``a = b + scalar * c``, one work item per element. Returns ``a``."""
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + SCALAR * c[i]
    return a


def dot(a, b, partial, tbsize):
    """The dot kernel: ``partial[k]`` = block ``k``'s share of ``sum a * b`` (``partial.shape[0]`` blocks of
    ``tbsize`` threads, grid-strided), reduced per block in shared memory. Returns ``partial``; the host adds
    the partials (not part of the region)."""
    n = a.shape[0]
    nblocks = partial.shape[0]
    nthreads = nblocks * tbsize
    tb_sum = np.empty((nblocks, tbsize), dtype=np.float64)  # shared: one tile per block
    # phase 1: each thread's grid-stride sum into its slot
    for gid in numba.prange(nthreads):
        blk = gid // tbsize
        loc = gid - blk * tbsize
        acc = 0.0
        for i in range(gid, n, nthreads):
            acc += a[i] * b[i]
        tb_sum[blk, loc] = acc
    # one phase per step of the tree (a barrier before each)
    offset = tbsize // 2
    while offset > 0:
        for gid in numba.prange(nthreads):
            blk = gid // tbsize
            loc = gid - blk * tbsize
            if loc < offset:
                tb_sum[blk, loc] = tb_sum[blk, loc] + tb_sum[blk, loc + offset]
        offset //= 2
    # thread 0 of each block writes the block's sum
    for gid in numba.prange(nthreads):
        blk = gid // tbsize
        loc = gid - blk * tbsize
        if loc == 0:
            partial[blk] = tb_sum[blk, 0]
    return partial


# ----------------------------------------------------------------------------------------------- GPU ports


@cuda.jit
def _copy_gpu(a, c):
    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    c[i] = a[i]


@cuda.jit
def _mul_gpu(b, c):
    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    b[i] = SCALAR * c[i]


@cuda.jit
def _add_gpu(a, b, c):
    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    c[i] = a[i] + b[i]


@cuda.jit
def _triad_gpu(a, b, c):
    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    a[i] = b[i] + SCALAR * c[i]


@cuda.jit
def _dot_gpu(a, b, partial, n):
    tb_sum = cuda.shared.array(TBSIZE, dtype=numba.float64)  # the block uses its first blockDim.x slots
    i = cuda.blockDim.x * cuda.blockIdx.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    acc = 0.0
    while i < n:
        acc += a[i] * b[i]
        i += cuda.blockDim.x * cuda.gridDim.x
    tb_sum[local_i] = acc
    offset = cuda.blockDim.x // 2
    while offset > 0:
        cuda.syncthreads()
        if local_i < offset:
            tb_sum[local_i] += tb_sum[local_i + offset]
        offset //= 2
    if local_i == 0:
        partial[cuda.blockIdx.x] = tb_sum[0]


def _stream_port(kernel, names, result):
    """GpuPort of a one-thread-per-element kernel over the arrays ``names`` (in argument order); ``result``:
    the array it writes."""

    def to_device(*arrays):
        return {k: cuda.to_device(x) for k, x in zip(names, arrays)}

    def launch(s):
        n = s[names[0]].shape[0]
        kernel[n // TBSIZE, TBSIZE](*(s[k] for k in names))

    def from_device(s):
        return s[result].copy_to_host()

    return GpuPort(to_device, launch, from_device)


def _dot_to_device(a, b, partial, tbsize):
    if tbsize > TBSIZE or tbsize & (tbsize - 1):
        raise ValueError(f"babelstream dot GPU port: tbsize must be a power of two <= {TBSIZE}, got {tbsize}")
    return {"a": cuda.to_device(a), "b": cuda.to_device(b), "partial": cuda.to_device(partial),
            "tbsize": int(tbsize)}


def _dot_launch(s):
    _dot_gpu[s["partial"].shape[0], s["tbsize"]](s["a"], s["b"], s["partial"], s["a"].shape[0])


def _dot_from_device(s):
    return s["partial"].copy_to_host()


# ----------------------------------------------------------------------------------------------- inputs


def state_before(kernel, n):
    """``(a, b, c)`` as the first launch of ``kernel`` finds them: initialised, then the iteration's earlier
    kernels applied (NumPy)."""
    a, b, c = np.full(n, START_A), np.full(n, START_B), np.full(n, START_C)
    for k in KERNEL_ORDER[:KERNEL_ORDER.index(kernel)]:
        if k == "copy":
            c[:] = a
        elif k == "mul":
            b[:] = SCALAR * c
        elif k == "add":
            c[:] = a + b
        elif k == "triad":
            a[:] = b + SCALAR * c
    return a, b, c


def _size(params):
    n, tbsize = int(params["n"]), int(params["tbsize"])
    if n % TBSIZE or n % tbsize:
        raise ValueError(f"babelstream: the array size must be a multiple of {TBSIZE} (and of tbsize), got {n}")
    return n


def _inputs(kernel, names):
    def make_inputs(params, seed):
        a, b, c = state_before(kernel, _size(params))
        arrays = {"a": a, "b": b, "c": c}
        return tuple(arrays[k] for k in names)

    make_inputs.__name__ = f"make_{kernel}_inputs"
    return make_inputs


def make_dot_inputs(params, seed):
    """``(a, b, partial, tbsize)`` before the first dot launch; ``partial`` zeros, one per block."""
    a, b, _ = state_before("dot", _size(params))
    return a, b, np.zeros(int(params["dot_blocks"]), dtype=np.float64), int(params["tbsize"])


def work(params):
    """copy/mul/add/triad: one thread per element, blocks of ``TBSIZE``."""
    return int(params["n"]), TBSIZE


def dot_work(params):
    """dot: ``dot_blocks`` blocks of ``tbsize`` threads."""
    return int(params["dot_blocks"]) * int(params["tbsize"]), int(params["tbsize"])


def _kernel(name, cpu, gpu, make_inputs, description, work_fn=work, feature_point=FEATURE_POINT):
    return MeasuredKernel(
        source="babelstream",
        application="babelstream",
        kernel=name,
        description=f"BabelStream 3.x CUDA {name}: {description}, float64",
        cpu=cpu,
        gpu=gpu,
        make_inputs=make_inputs,
        points=POINTS,
        work=work_fn,
        test_point=TEST_POINT,
        feature_point=feature_point,
        rtol=1e-12,
        atol=1e-14,
    )


KERNELS = [
    _kernel("copy", copy, _stream_port(_copy_gpu, ("a", "c"), "c"), _inputs("copy", ("a", "c")), "c = a"),
    _kernel("mul", mul, _stream_port(_mul_gpu, ("b", "c"), "b"), _inputs("mul", ("b", "c")), "b = 0.4 c"),
    _kernel("add", add, _stream_port(_add_gpu, ("a", "b", "c"), "c"), _inputs("add", ("a", "b", "c")),
            "c = a + b"),
    _kernel("triad", triad, _stream_port(_triad_gpu, ("a", "b", "c"), "a"), _inputs("triad", ("a", "b", "c")),
            "a = b + 0.4 c"),
    _kernel("dot", dot, GpuPort(_dot_to_device, _dot_launch, _dot_from_device), make_dot_inputs,
            "per-block partial sums of a . b (256 blocks of 1024, grid-stride, shared-memory tree)", dot_work,
            DOT_FEATURE_POINT),
]
