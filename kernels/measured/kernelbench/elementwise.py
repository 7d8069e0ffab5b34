"""KernelBench level 1, element-wise problems: the PyTorch eager forward of each, as the CUDA kernels it runs.

Each problem's ``Model.forward`` applies an activation (or a short expression) to one float32 tensor drawn by
``torch.randn`` with the problem file's shape (``sizes_before_2025-07/level1/<problem>.py``: ``batch_size x dim``,
16 x 16384 for most, 2000 x 2000 for 88_MinGPTNewGelu). The data times one forward call (ms, PyTorch eager on
the GPU). PyTorch runs a built-in activation as ONE element-wise kernel (TensorIterator's ``gpu_kernel``); an
expression of tensor operations runs one kernel per operation, each reading its operands from global memory
and writing a new tensor:

* ``25_Swish``, ``x * torch.sigmoid(x)``: 2 kernels (sigmoid, then the product);
* ``30_Softsign``, ``x / (1 + torch.abs(x))``: 3 kernels (abs, add of the scalar 1, division);
* ``88_MinGPTNewGelu``, ``0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x,
  3.0))))``: 8 kernels, in Python's evaluation order: ``0.5 * x``; ``pow(x, 3)`` (PyTorch computes an exponent
  of 3 as ``x * x * x``); ``* 0.044715``; ``x + ``; ``* sqrt(2 / pi)``; ``tanh``; ``1.0 + ``; the final product.

Those ports' regions hold one parallel loop per kernel (``separate_launches``); the intermediate tensors are
inputs of the region (zeros; PyTorch allocates them from its caching allocator). Every other port is one
kernel, one parallel loop.

Formulas: those of PyTorch's CUDA kernels, computed in float32 (the ``opmath`` type of float), with the
problem file's parameters: ReLU is ``clamp_min(x, 0)`` (NaN passes through), LeakyReLU ``x > 0 ? x : x *
0.01``, Sigmoid ``1 / (1 + exp(-x))``, GELU the exact (erf) form PyTorch uses by default, ``x * 0.5 * (1 +
erf(x * sqrt(1/2)))``, SELU and ELU the ELU kernel ``x > 0 ? x * scale : expm1(x * input_scale) *
(alpha * scale)`` (SELU: alpha 1.6732632423543772, scale 1.0507009873554805; ELU: alpha 1, scale 1, as the
problem's ``get_init_inputs`` gives), HardSigmoid ``min(max(x + 3, 0), 6) * (1/6)``, Softplus (beta 1,
threshold 20) ``x * beta > 20 ? x : log1p(exp(x * beta)) / beta``, HardTanh ``clamp(x, -1, 1)`` (NaN passes
through). Scalars of an expression (0.5, 0.044715, ...) are float32 constants, as PyTorch converts a Python
scalar operand to the opmath type.

Thread space: PyTorch's own launch geometry is not in the data. The regions use the geometry of a
straightforward CUDA element-wise kernel: one thread per element, blocks of 256 (``work``); every problem
size is a multiple of 256, so the grid covers the tensor exactly and the bounds check a general kernel
has is left out. (PyTorch's vectorised element-wise kernel actually runs blocks of 128 threads, each
loading 4 elements as one vector: a quarter of the threads here, each with four elements' work.) The tensor
is contiguous, so the regions index it flat: the inputs are 1-D arrays of ``batch_size * dim`` elements.

Inputs: ``torch.randn`` draws from the standard normal distribution; here NumPy's generator seeded with
``seed`` (same distribution, not the same values). Deliberate differences: the adds of a scalar in an
expression (Softsign's ``1 + |x|``, MinGPT's ``1.0 + tanh``) and of two tensors (``x + ...``) are written as
one addition; PyTorch's add kernel computes ``a + alpha * b`` with ``alpha = 1`` (an FMA on the GPU).

Not ported: ``5_Matrix_scalar_multiplication`` (16384 x 4096 = 67 M elements: its region would have about
3e8 trace records, above what can be traced), ``12_Matmul_with_diagonal_matrices_`` (``torch.diag(A) @ B``:
PyTorch builds the dense 4096 x 4096 diagonal matrix and calls cuBLAS's SGEMM, 6.9e10 multiply-adds, not an
element-wise kernel). The 2026 shapes of these problems (``sizes_2026``) are far larger and not ported either.

Precision: single (float32 tensors, constants and arithmetic): every floating-point record is FP32.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256

ZERO = np.float32(0.0)
ONE = np.float32(1.0)
HALF = np.float32(0.5)
LEAKY_SLOPE = np.float32(0.01)  # 20_LeakyReLU: negative_slope
SQRT1_2 = np.float32(math.sqrt(0.5))  # GELU's M_SQRT1_2
SELU_ALPHA = np.float32(1.6732632423543772848170429916717)
SELU_SCALE = np.float32(1.0507009873554804934193349852946)
SELU_NEGCOEF = np.float32(SELU_ALPHA * SELU_SCALE)  # alpha * scale, as the ELU kernel computes it (float)
ELU_ALPHA = np.float32(1.0)  # 31_ELU: get_init_inputs() -> alpha 1.0
ELU_SCALE = np.float32(1.0)
ELU_NEGCOEF = np.float32(ELU_ALPHA * ELU_SCALE)
INPUT_SCALE = np.float32(1.0)  # the ELU kernel's input_scale (1 for both)
THREE = np.float32(3.0)
SIX = np.float32(6.0)
ONE_SIXTH = np.float32(1.0 / 6.0)
SOFTPLUS_BETA = np.float32(1.0)
SOFTPLUS_THRESHOLD = np.float32(20.0)
HARDTANH_MIN = np.float32(-1.0)  # 32_HardTanh: min_val, max_val
HARDTANH_MAX = np.float32(1.0)
GELU_CUBIC = np.float32(0.044715)  # 88_MinGPTNewGelu
GELU_SQRT_2_PI = np.float32(math.sqrt(2.0 / math.pi))


# ----------------------------------------------------------------------------------------------- regions
# one thread per element; each function is one port's region


def relu(x, out):
    """19_ReLU: ``clamp_min(x, 0)``. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        v = x[i]
        if v != v:  # NaN passes through
            out[i] = v
        else:
            out[i] = max(v, ZERO)
    return out


def leaky_relu(x, out):
    """20_LeakyReLU (slope 0.01). Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        v = x[i]
        out[i] = v if v > ZERO else v * LEAKY_SLOPE
    return out


def sigmoid(x, out):
    """21_Sigmoid. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        out[i] = ONE / (ONE + np.exp(-x[i]))
    return out


def tanh(x, out):
    """22_Tanh. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        out[i] = np.tanh(x[i])
    return out


def swish(x, s, out):
    """25_Swish, two kernels: ``s = sigmoid(x)``, then ``out = x * s``. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        s[i] = ONE / (ONE + np.exp(-x[i]))
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] * s[i]
    return out


def gelu(x, out):
    """26_GELU_: the exact form, ``x * 0.5 * (1 + erf(x / sqrt 2))``. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        v = x[i]
        out[i] = v * HALF * (ONE + math.erf(v * SQRT1_2))
    return out


def selu(x, out):
    """27_SELU_: PyTorch's ELU kernel with SELU's alpha and scale. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        v = x[i]
        out[i] = v * SELU_SCALE if v > ZERO else np.expm1(v * INPUT_SCALE) * SELU_NEGCOEF
    return out


def hardsigmoid(x, out):
    """28_HardSigmoid: ``min(max(x + 3, 0), 6) / 6``. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        out[i] = min(max(x[i] + THREE, ZERO), SIX) * ONE_SIXTH
    return out


def softplus(x, out):
    """29_Softplus (beta 1, threshold 20). Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        v = x[i]
        out[i] = v if v * SOFTPLUS_BETA > SOFTPLUS_THRESHOLD else np.log1p(np.exp(v * SOFTPLUS_BETA)) / SOFTPLUS_BETA
    return out


def softsign(x, t_abs, t_den, out):
    """30_Softsign, three kernels: ``|x|``, ``1 + |x|``, ``x / (1 + |x|)``. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        t_abs[i] = abs(x[i])
    for i in numba.prange(x.shape[0]):
        t_den[i] = t_abs[i] + ONE
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] / t_den[i]
    return out


def elu(x, out):
    """31_ELU (alpha 1): PyTorch's ELU kernel. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        v = x[i]
        out[i] = v * ELU_SCALE if v > ZERO else np.expm1(v * INPUT_SCALE) * ELU_NEGCOEF
    return out


def hardtanh(x, out):
    """32_HardTanh: ``clamp(x, -1, 1)``. Returns ``out``."""
    for i in numba.prange(x.shape[0]):
        v = x[i]
        if v != v:  # NaN passes through
            out[i] = v
        else:
            out[i] = min(max(v, HARDTANH_MIN), HARDTANH_MAX)
    return out


def min_gpt_new_gelu(x, t_half, t_cube, t_cubic, t_inner, t_scaled, t_tanh, t_one, out):
    """88_MinGPTNewGelu, eight kernels in Python's evaluation order (module docstring). Returns ``out``."""
    n = x.shape[0]
    for i in numba.prange(n):
        t_half[i] = x[i] * HALF
    for i in numba.prange(n):
        v = x[i]
        t_cube[i] = v * v * v
    for i in numba.prange(n):
        t_cubic[i] = t_cube[i] * GELU_CUBIC
    for i in numba.prange(n):
        t_inner[i] = x[i] + t_cubic[i]
    for i in numba.prange(n):
        t_scaled[i] = t_inner[i] * GELU_SQRT_2_PI
    for i in numba.prange(n):
        t_tanh[i] = np.tanh(t_scaled[i])
    for i in numba.prange(n):
        t_one[i] = t_tanh[i] + ONE
    for i in numba.prange(n):
        out[i] = t_half[i] * t_one[i]
    return out


# ----------------------------------------------------------------------------------------------- GPU ports
# one cuda.jit kernel per PyTorch kernel; one thread per element


@cuda.jit
def _relu_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    if v != v:
        out[i] = v
    else:
        out[i] = max(v, ZERO)


@cuda.jit
def _leaky_relu_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i] = v if v > ZERO else v * LEAKY_SLOPE


@cuda.jit
def _sigmoid_gpu(x, out):
    i = cuda.grid(1)
    out[i] = ONE / (ONE + math.exp(-x[i]))


@cuda.jit
def _tanh_gpu(x, out):
    i = cuda.grid(1)
    out[i] = math.tanh(x[i])


@cuda.jit
def _gelu_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i] = v * HALF * (ONE + math.erf(v * SQRT1_2))


@cuda.jit
def _selu_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i] = v * SELU_SCALE if v > ZERO else math.expm1(v * INPUT_SCALE) * SELU_NEGCOEF


@cuda.jit
def _hardsigmoid_gpu(x, out):
    i = cuda.grid(1)
    out[i] = min(max(x[i] + THREE, ZERO), SIX) * ONE_SIXTH


@cuda.jit
def _softplus_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i] = v if v * SOFTPLUS_BETA > SOFTPLUS_THRESHOLD else math.log1p(math.exp(v * SOFTPLUS_BETA)) / SOFTPLUS_BETA


@cuda.jit
def _elu_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i] = v * ELU_SCALE if v > ZERO else math.expm1(v * INPUT_SCALE) * ELU_NEGCOEF


@cuda.jit
def _hardtanh_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    if v != v:
        out[i] = v
    else:
        out[i] = min(max(v, HARDTANH_MIN), HARDTANH_MAX)


@cuda.jit
def _abs_gpu(x, out):
    i = cuda.grid(1)
    out[i] = abs(x[i])


@cuda.jit
def _add_scalar_gpu(x, scalar, out):
    i = cuda.grid(1)
    out[i] = x[i] + scalar


@cuda.jit
def _mul_scalar_gpu(x, scalar, out):
    i = cuda.grid(1)
    out[i] = x[i] * scalar


@cuda.jit
def _add_gpu(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] + y[i]


@cuda.jit
def _mul_gpu(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] * y[i]


@cuda.jit
def _div_gpu(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] / y[i]


@cuda.jit
def _cube_gpu(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i] = v * v * v


def _port(names, launches):
    """GpuPort over the region's arrays ``names`` (in argument order; the last one is the result):
    ``launches`` is a list of ``(kernel, args)``, each arg an array name or a scalar, launched in order with
    one thread per element in blocks of :data:`BLOCK`."""

    def to_device(*arrays):
        return {k: cuda.to_device(a) for k, a in zip(names, arrays)}

    def launch(s):
        n = s[names[0]].shape[0]
        for kernel, args in launches:
            kernel[n // BLOCK, BLOCK](*(s[a] if isinstance(a, str) else a for a in args))

    def from_device(s):
        return s[names[-1]].copy_to_host()

    return GpuPort(to_device, launch, from_device)


def _unary(kernel):
    return _port(("x", "out"), [(kernel, ("x", "out"))])


# ----------------------------------------------------------------------------------------------- inputs


def _elements(params):
    n = int(np.prod([int(v) for v in params.values()]))
    if n % BLOCK:
        raise ValueError(f"kernelbench element-wise: {n} elements is not a multiple of the block size {BLOCK}")
    return n


def _inputs(temporaries):
    """make_inputs for a port whose region takes ``x``, ``temporaries`` intermediate tensors and ``out``."""

    def make_inputs(params, seed):
        n = _elements(params)
        x = np.random.default_rng(seed).standard_normal(n, dtype=np.float32)
        return (x, *(np.zeros(n, dtype=np.float32) for _ in range(temporaries + 1)))

    return make_inputs


def work(params):
    """One thread per element, blocks of 256."""
    return _elements(params), BLOCK


#: the problem files' shapes (sizes_before_2025-07)
ACTIVATION_SHAPE = {"batch_size": 16, "dim": 16384}
MINGPT_SHAPE = {"batch_size": 2000, "dim": 2000}
#: 4 blocks
TEST_POINT = {"batch_size": 4, "dim": 256}
#: 88_MinGPTNewGelu's region has about 1.6e8 records: its features come from 64 x 2000 (500 blocks)
MINGPT_FEATURE_POINT = {"batch_size": 64, "dim": 2000}


def _kernel(application, description, cpu, gpu, temporaries=0, shape=ACTIVATION_SHAPE, feature_point=None,
            rtol=1e-5, atol=1e-6):
    return MeasuredKernel(
        source="kernelbench",
        application=application,
        kernel="forward",
        description=f"KernelBench level 1 {application}: {description} (PyTorch eager, float32)",
        cpu=cpu,
        gpu=gpu,
        make_inputs=_inputs(temporaries),
        points={"before_2025-07": shape},
        work=work,
        test_point=TEST_POINT,
        separate_launches=temporaries > 0,
        feature_point=feature_point,
        rtol=rtol,
        atol=atol,
    )


_MINGPT_ARRAYS = ("x", "t_half", "t_cube", "t_cubic", "t_inner", "t_scaled", "t_tanh", "t_one", "out")

KERNELS = [
    _kernel("19_ReLU", "torch.relu(x), one kernel", relu, _unary(_relu_gpu)),
    _kernel("20_LeakyReLU", "leaky_relu(x, 0.01), one kernel", leaky_relu, _unary(_leaky_relu_gpu)),
    _kernel("21_Sigmoid", "torch.sigmoid(x), one kernel", sigmoid, _unary(_sigmoid_gpu)),
    _kernel("22_Tanh", "torch.tanh(x), one kernel", tanh, _unary(_tanh_gpu)),
    _kernel("25_Swish", "x * sigmoid(x), two kernels", swish,
            _port(("x", "s", "out"), [(_sigmoid_gpu, ("x", "s")), (_mul_gpu, ("x", "s", "out"))]), temporaries=1),
    _kernel("26_GELU_", "gelu(x) (erf form), one kernel", gelu, _unary(_gelu_gpu)),
    _kernel("27_SELU_", "torch.selu(x), one kernel", selu, _unary(_selu_gpu)),
    _kernel("28_HardSigmoid", "hardsigmoid(x), one kernel", hardsigmoid, _unary(_hardsigmoid_gpu)),
    _kernel("29_Softplus", "softplus(x), one kernel", softplus, _unary(_softplus_gpu)),
    _kernel("30_Softsign", "x / (1 + |x|), three kernels", softsign,
            _port(("x", "t_abs", "t_den", "out"), [(_abs_gpu, ("x", "t_abs")),
                                                   (_add_scalar_gpu, ("t_abs", ONE, "t_den")),
                                                   (_div_gpu, ("x", "t_den", "out"))]), temporaries=2),
    _kernel("31_ELU", "elu(x, alpha=1), one kernel", elu, _unary(_elu_gpu)),
    _kernel("32_HardTanh", "hardtanh(x, -1, 1), one kernel", hardtanh, _unary(_hardtanh_gpu)),
    _kernel("88_MinGPTNewGelu", "minGPT's tanh GELU as eight element-wise kernels", min_gpt_new_gelu,
            _port(_MINGPT_ARRAYS, [(_mul_scalar_gpu, ("x", HALF, "t_half")), (_cube_gpu, ("x", "t_cube")),
                                   (_mul_scalar_gpu, ("t_cube", GELU_CUBIC, "t_cubic")),
                                   (_add_gpu, ("x", "t_cubic", "t_inner")),
                                   (_mul_scalar_gpu, ("t_inner", GELU_SQRT_2_PI, "t_scaled")),
                                   (_tanh_gpu, ("t_scaled", "t_tanh")), (_add_scalar_gpu, ("t_tanh", ONE, "t_one")),
                                   (_mul_gpu, ("t_half", "t_one", "out"))]),
            temporaries=7, shape=MINGPT_SHAPE, feature_point=MINGPT_FEATURE_POINT),
]
