"""conv1d: 'valid' 1-D correlation of a float32 signal with a 31-tap filter (an FIR filter).

``out[i] = sum_k w[k] * x[i + k]`` for ``i < n - 30``. Each input element is read by 31 outputs: the GPU
port loads a block's signal tile plus its 30-element halo and the taps into shared memory once.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ._launch import blocks_for, rng
from .spec import GpuPort, KernelSpec

TPB = 256
TAPS = 31
SPAN = TPB + TAPS - 1  # signal tile plus halo held in shared memory


def conv1d_cpu(x, w):
    """CPU region: FIR filter output over the positions where the filter fits.

    Parameters
    ----------
    x : numpy.ndarray
        float32 signal of length ``n``.
    w : numpy.ndarray
        float32 taps of length ``k <= n``.

    Returns
    -------
    numpy.ndarray
        float32 output of length ``n - k + 1``.
    """
    n = x.shape[0]
    k = w.shape[0]
    nout = n - k + 1
    out = np.empty(nout, dtype=np.float32)
    for i in numba.prange(nout):
        s = np.float32(0.0)
        for t in range(k):
            s += w[t] * x[i + t]
        out[i] = s
    return out


@cuda.jit
def _conv1d_kernel(x, w, out):
    sx = cuda.shared.array(shape=SPAN, dtype=numba.float32)
    sw = cuda.shared.array(shape=TAPS, dtype=numba.float32)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * TPB
    n = x.shape[0]
    e = t
    while e < SPAN:
        if base + e < n:
            sx[e] = x[base + e]
        else:
            sx[e] = 0.0
        e += TPB
    if t < TAPS:
        sw[t] = w[t]
    cuda.syncthreads()
    i = base + t
    if i < out.shape[0]:
        s = numba.float32(0.0)
        for k in range(TAPS):
            s += sw[k] * sx[t + k]
        out[i] = s


def _to_device(x, w):
    if w.shape[0] != TAPS:
        raise ValueError(f"conv1d GPU port is compiled for {TAPS} taps, got {w.shape[0]}")
    nout = x.shape[0] - TAPS + 1
    return {"x": cuda.to_device(x), "w": cuda.to_device(w), "out": cuda.device_array(nout, dtype=np.float32)}


def _launch(s):
    nout = s["out"].shape[0]
    _conv1d_kernel[blocks_for(nout, TPB), TPB](s["x"], s["w"], s["out"])


def _from_device(s):
    return s["out"].copy_to_host()


def make_inputs(n, seed):
    """``(x, w)``: a float32 signal of length ``n`` (normal) and 31 float32 taps uniform in [-1, 1)."""
    g = rng(seed)
    return g.standard_normal(n).astype(np.float32), g.uniform(-1.0, 1.0, TAPS).astype(np.float32)


KERNEL = KernelSpec(
    name="conv1d",
    category="dense",
    description="31-tap float32 FIR filter ('valid' correlation); GPU stages signal tile + halo in shared memory",
    cpu=conv1d_cpu,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 600, "small": 1 << 16, "medium": 1 << 20, "large": 1 << 24},
    rtol=1e-4,
    atol=1e-5,
    expect_gpu_faster=True,
)
