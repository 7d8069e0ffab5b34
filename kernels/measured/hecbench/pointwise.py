"""The pointwise part of an LSTM layer step, HeCBench ``pointwise``: kernels ``init`` (device-side random fill)
and ``elementWise_fp`` (the fused LSTM cell).

* ``init(data, size)``: thread ``i`` seeds ``seed = i ^ size`` and draws one LCG step (unsigned 32-bit
  ``seed = (26757677 seed + 1) % 2^31``), ``data[i] = (float) seed / (float) 2^31``.
* ``elementWise_fp``: thread ``index`` (batch ``index / hiddenSize``) sums, for each of the four gates, the
  input and recurrent pre-activations (``tmp_i``, ``tmp_h`` at ``gateIndex + g hiddenSize``, ``gateIndex =
  index % hiddenSize + 4 batch hiddenSize``) and the two biases, stores the sum to ``linearGates``, and
  combines ``sigmoid(in)``, ``sigmoid(forget)``, ``tanh(cell)``, ``sigmoid(out)`` into the new cell state
  ``c = forget c_in + in cell`` and output ``h = out tanh(c)`` (written to ``h_out`` and ``i_out``).

Launch: blocks of 256, one thread per element with guard. Measured point ``100 8 512 64 100`` (seqLength,
numLayers, hiddenSize, miniBatch, repeat): 32768 elements (128 blocks) for ``elementWise_fp``; the first
``init`` fills ``tmp_h``, ``4 numLayers numElements = 2^20`` values (4096 blocks). The first
``elementWise_fp`` is layer 0, step 0: ``tmp_h`` and ``tmp_i`` at offset 0, ``bias`` of layer 0, ``c_in`` the
first ``numElements`` of ``c_data``, all from the ``init`` launches (reproduced exactly: no host RNG).

Layout: the kernel's pointer arguments (offsets into the big buffers) are the buffers' slices; the outputs
``linearGates``, ``h_out``, ``i_out``, ``c_out`` are arrays of their own. The four-gate loop (unrolled by the
compiler) is written out. Precision: single (float32), as the original; the LCG in int64 with the 32-bit
wrap-around written as a mask.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BLOCK = 256
ONE = np.float32(1.0)
M = 2147483648
MF = np.float32(2147483648.0)

POINTS = {"100 8 512 64 100": {"seqLength": 100, "numLayers": 8, "hiddenSize": 512, "miniBatch": 64,
                               "repeat": 100}}
TEST_POINT = {"seqLength": 3, "numLayers": 2, "hiddenSize": 48, "miniBatch": 8, "repeat": 1}


def init(data, size, n_threads):
    """``data[i] = LCG(i ^ size)``."""
    for index in numba.prange(n_threads):
        if index < size:
            seed = index ^ size
            seed = ((26757677 * seed + 1) & 0xFFFFFFFF) % M
            data[index] = np.float32(seed) / MF
    return data


def elementWise_fp(hidden_size, mini_batch, tmp_h, tmp_i, bias, linear_gates, h_out, i_out, c_in, c_out,
                   n_threads):
    """One LSTM cell step of every element."""
    for index in numba.prange(n_threads):
        if index < mini_batch * hidden_size:
            batch = index // hidden_size
            gate_index = (index % hidden_size) + 4 * batch * hidden_size
            g0 = tmp_i[gate_index] + tmp_h[gate_index]
            g0 += bias[index % hidden_size] + bias[4 * hidden_size + index % hidden_size]
            linear_gates[gate_index] = g0
            g1 = tmp_i[hidden_size + gate_index] + tmp_h[hidden_size + gate_index]
            g1 += bias[hidden_size + index % hidden_size] + bias[5 * hidden_size + index % hidden_size]
            linear_gates[gate_index + hidden_size] = g1
            g2 = tmp_i[2 * hidden_size + gate_index] + tmp_h[2 * hidden_size + gate_index]
            g2 += bias[2 * hidden_size + index % hidden_size] + bias[6 * hidden_size + index % hidden_size]
            linear_gates[gate_index + 2 * hidden_size] = g2
            g3 = tmp_i[3 * hidden_size + gate_index] + tmp_h[3 * hidden_size + gate_index]
            g3 += bias[3 * hidden_size + index % hidden_size] + bias[7 * hidden_size + index % hidden_size]
            linear_gates[gate_index + 3 * hidden_size] = g3
            in_gate = ONE / (ONE + np.exp(-g0))
            forget_gate = ONE / (ONE + np.exp(-g1))
            in_gate2 = np.tanh(g2)
            out_gate = ONE / (ONE + np.exp(-g3))
            val = (forget_gate * c_in[index]) + (in_gate * in_gate2)
            c_out[index] = val
            val = out_gate * np.tanh(val)
            h_out[index] = val
            i_out[index] = val
    return linear_gates, h_out, i_out, c_out


@cuda.jit
def _init_gpu(data, size):
    index = cuda.grid(1)
    if index < size:
        seed = numba.uint64(index ^ size)  # 64-bit product, then the 32-bit wrap-around as a mask
        seed = ((numba.uint64(26757677) * seed + numba.uint64(1)) & numba.uint64(0xFFFFFFFF)) % numba.uint64(M)
        data[index] = numba.float32(seed) / MF


@cuda.jit
def _elementwise_gpu(hidden_size, mini_batch, tmp_h, tmp_i, bias, linear_gates, h_out, i_out, c_in, c_out):
    index = cuda.grid(1)
    if index < mini_batch * hidden_size:
        batch = index // hidden_size
        gate_index = (index % hidden_size) + 4 * batch * hidden_size
        g = cuda.local.array(4, dtype=numba.float32)
        for i in range(4):
            g[i] = tmp_i[i * hidden_size + gate_index] + tmp_h[i * hidden_size + gate_index]
            g[i] += bias[i * hidden_size + index % hidden_size] + bias[(i + 4) * hidden_size + index % hidden_size]
            linear_gates[gate_index + i * hidden_size] = g[i]
        in_gate = ONE / (ONE + numba.float32(math.exp(-g[0])))
        forget_gate = ONE / (ONE + numba.float32(math.exp(-g[1])))
        in_gate2 = numba.float32(math.tanh(g[2]))
        out_gate = ONE / (ONE + numba.float32(math.exp(-g[3])))
        val = (forget_gate * c_in[index]) + (in_gate * in_gate2)
        c_out[index] = val
        val = out_gate * numba.float32(math.tanh(val))
        h_out[index] = val
        i_out[index] = val


def _to_device_init(data, size, n_threads):
    return {"data": cuda.to_device(data), "size": int(size), "n": int(n_threads)}


def _launch_init(s):
    _init_gpu[s["n"] // BLOCK, BLOCK](s["data"], s["size"])


def _from_device_init(s):
    return s["data"].copy_to_host()


def _to_device_ew(hidden_size, mini_batch, *rest):
    *arrays, n_threads = rest
    return {"hs": int(hidden_size), "mb": int(mini_batch), "arrays": [cuda.to_device(a) for a in arrays],
            "n": int(n_threads)}


def _launch_ew(s):
    _elementwise_gpu[s["n"] // BLOCK, BLOCK](s["hs"], s["mb"], *s["arrays"])


def _from_device_ew(s):
    a = s["arrays"]
    return a[3].copy_to_host(), a[4].copy_to_host(), a[5].copy_to_host(), a[7].copy_to_host()


def lcg_fill(size):
    """What ``init`` writes into a buffer of ``size`` floats (NumPy)."""
    seed = (np.arange(size, dtype=np.int64) ^ size)
    seed = ((26757677 * seed + 1) & 0xFFFFFFFF) % M
    return (seed.astype(np.float32) / MF).astype(np.float32)


def _sizes(params):
    hs, mb = int(params["hiddenSize"]), int(params["miniBatch"])
    layers, seq = int(params["numLayers"]), int(params["seqLength"])
    n = hs * mb
    return hs, mb, n, 4 * layers * n, 4 * seq * n, (seq + 1) * layers * n, layers * hs * 8


def make_inputs_init(params, seed):
    """The first ``init``: ``tmp_h`` (``4 numLayers numElements`` floats; no random input)."""
    size = _sizes(params)[3]
    return np.zeros(size, dtype=np.float32), size, work_init(params)[0]


def make_inputs_ew(params, seed):
    """The first ``elementWise_fp`` (layer 0, step 0) on the buffers the four ``init`` launches filled."""
    hs, mb, n, th, ti, hc, b = _sizes(params)
    tmp_h, tmp_i, c_data, bias = lcg_fill(th), lcg_fill(ti), lcg_fill(hc), lcg_fill(b)
    z = lambda k: np.zeros(k, dtype=np.float32)  # noqa: E731
    return (hs, mb, tmp_h[:4 * n].copy(), tmp_i[:4 * n].copy(), bias[:8 * hs].copy(), z(4 * n), z(n), z(n),
            c_data[:n].copy(), z(n), work_ew(params)[0])


def work_init(params):
    size = _sizes(params)[3]
    return (size + BLOCK - 1) // BLOCK * BLOCK, BLOCK


def work_ew(params):
    n = _sizes(params)[2]
    return (n + BLOCK - 1) // BLOCK * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="pointwise",
        kernel="init",
        description="HeCBench pointwise: one LCG step per element fills a buffer with uniform floats",
        cpu=init,
        gpu=GpuPort(_to_device_init, _launch_init, _from_device_init),
        make_inputs=make_inputs_init,
        points=POINTS,
        work=work_init,
        test_point=TEST_POINT,
        rtol=0,
        atol=0,
    ),
    MeasuredKernel(
        source="hecbench",
        application="pointwise",
        kernel="elementWise_fp",
        description="HeCBench pointwise: fused LSTM cell (four gates, sigmoid and tanh), one thread per element",
        cpu=elementWise_fp,
        gpu=GpuPort(_to_device_ew, _launch_ew, _from_device_ew),
        make_inputs=make_inputs_ew,
        points=POINTS,
        work=work_ew,
        test_point=TEST_POINT,
        rtol=1e-5,
        atol=1e-6,
    ),
]
