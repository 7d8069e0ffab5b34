"""OpenDwarfs fft (AIWC): Eric Bainville's radix-2/4/8/16 Stockham FFT, the whole transform as one region.

AIWC's fft is Bainville's OpenCL FFT (not in the reference tree: its code carries no licence, so this port
is written from the algorithm alone). A forward FFT of ``N`` complex single-precision points (``N`` a power
of two) runs as a sequence of Stockham passes, one kernel launch each, ping-ponging between two buffers.
Before a pass, ``p`` is the product of the radices already applied (1 at first); a radix-``R`` pass has
``N / R`` work items, and work item ``i`` (``k = i mod p``):

* loads the ``R`` points ``x[i + j N/R]``, ``j = 0..R-1``;
* multiplies point ``j`` by the twiddle ``exp(-2 pi i j k / (p R))`` (one cos/sin pair per ``j > 0``);
* takes their ``R``-point DFT in registers;
* stores output ``q`` at ``y[(i - k) R + k + q p]``.

The passes use radix 16 while 16 more points fit and one smaller radix for the rest, ``N = 16**a * r``:
2048 = 16*16*8, 16384 = 16**3*4, 524288 = 16**4*8, 2097152 = 16**5*2. AIWC's rows are named by the
kernel (``fftRadix16Kernel`` ... ``fftRadix2Kernel``), each row's ``workitems`` the first launch of that
kernel (``N / R``), and each row's time is the whole FFT's (the data notes), so the port is one region
named ``aiwc/fft/fft`` doing every pass: a host loop over the passes, each pass a ``prange`` over its
``N / R`` work items. Portcast numbers a region's threads per launch (a prange's iteration index), so it
counts ``max over passes of N / R`` threads, ``N / r`` for the last (smallest) radix: that is what
``work`` returns; the module's tests check every pass's work items against the AIWC rows.

Deliberate differences from the original (its source is not at hand):

* the ``R``-point DFT inside a work item is a radix-2 decimation-in-frequency butterfly network over a
  private array of ``R`` complex values (its output in bit-reversed order, so the store uses a 16-entry
  bit-reversal table); Bainville's kernels use hand-written radix-2/4 codelets with specialised constant
  multiplies, so this does somewhat more floating-point work per item (every butterfly twiddle but the
  trivial first of each group is a full complex multiply, read from a 16-entry table of roots of unity);
* the local work size of the original is not known here: the GPU port uses 64 (a pass with fewer items
  uses one group of all of them);
* the GPU port has one kernel per radix, like the original, with the radix a compile-time constant, so the
  per-item loops unroll and the private arrays live in registers (checked in the PTX for sm_90: the only
  local-memory traffic left is the range reduction of ``sin``/``cos``); the CPU region takes the radix at
  run time (one function for every pass) and its private arrays are small per-iteration arrays;
* the input is a sine wave (``sin(2 pi 3 n / N)``, imaginary part 0), the data notes' "sine wave".

Complex values are ``(re, im)`` float32 pairs (arrays of shape ``(N, 2)``, the layout of OpenCL
``float2``).

Precision: single, as the original's ``float2`` arithmetic. Every operation of the region computes in float32
in both tracing modes (no FP64 record): the twiddle constant -2 pi is a float32 module constant (a GPU compiler
folds ``-2.0 * M_PI`` before the kernel runs; written inline it was one double multiply per work item in the
trace), and the twiddles' cosine and sine are ``np.cos`` / ``np.sin`` of a float32 (``math.cos`` computes in
double when the region runs interpreted).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from .spec import MeasuredKernel

MAX_RADIX = 16
#: the GPU port's work-group size
LOCAL = 64
#: cycles of the input sine wave over the N points
CYCLES = 3
#: -2 pi in float32, the twiddle angle's factor
NEG_TWO_PI = np.float32(-2.0 * math.pi)

POINTS = {"tiny": {"n": 2048}, "small": {"n": 16384}, "medium": {"n": 524288}, "large": {"n": 2097152}}
#: AIWC's kernel name of each radix
KERNEL_OF_RADIX = {16: "fftRadix16Kernel", 8: "fftRadix8Kernel", 4: "fftRadix4Kernel", 2: "fftRadix2Kernel"}


def passes(n):
    """Radices of the passes of an ``n``-point FFT, in launch order (16 while it fits, then the rest).

    Parameters
    ----------
    n : int
        Points, a power of two, at least 2.

    Returns
    -------
    list of int
    """
    n = int(n)
    if n < 2 or n & (n - 1):
        raise ValueError(f"fft: the number of points must be a power of two >= 2, got {n}")
    out, p = [], 1
    while p < n:
        r = MAX_RADIX if n // p >= MAX_RADIX else n // p
        out.append(r)
        p *= r
    return out


def tables():
    """The constant tables of a work item's DFT: the 16th roots of unity ``exp(-2 pi i m / 16)`` as
    ``(re, im)`` float32 pairs and the 4-bit bit reversal of ``0..15`` (int32)."""
    m = np.arange(MAX_RADIX)
    roots = np.empty((MAX_RADIX, 2), dtype=np.float32)
    roots[:, 0] = np.cos(-2.0 * np.pi * m / MAX_RADIX)
    roots[:, 1] = np.sin(-2.0 * np.pi * m / MAX_RADIX)
    rev = np.array([int(f"{j:04b}"[::-1], 2) for j in m], dtype=np.int32)
    return roots, rev


@numba.njit(cache=True)
def _log2(r):
    bits = 0
    while (1 << bits) < r:
        bits += 1
    return bits


@numba.njit(cache=True)
def _dft_dif(ur, ui, r, bits, roots):
    """In-place ``r``-point DFT of ``(ur, ui)[:r]`` by radix-2 decimation in frequency; the result is in
    bit-reversed order (output ``q`` at position ``rev(q)``)."""
    for s in range(bits):
        span = r >> (s + 1)
        step = (MAX_RADIX // 2) // span  # exp(-2 pi i m / (2 span)) is roots[m * step]
        for start in range(0, r, 2 * span):
            for m in range(span):
                a = start + m
                b = a + span
                tr = ur[a] - ur[b]
                ti = ui[a] - ui[b]
                ur[a] = ur[a] + ur[b]
                ui[a] = ui[a] + ui[b]
                if m == 0:
                    ur[b] = tr
                    ui[b] = ti
                else:
                    wr = roots[m * step, 0]
                    wi = roots[m * step, 1]
                    ur[b] = tr * wr - ti * wi
                    ui[b] = tr * wi + ti * wr


def fft(x, roots, rev):
    """CPU region: the whole forward FFT of ``x``, one Stockham pass after another.

    Parameters
    ----------
    x : float32 array (N, 2)
        Complex input as ``(re, im)`` pairs (overwritten: it is one of the two ping-pong buffers).
    roots, rev : numpy.ndarray
        The tables of :func:`tables`.

    Returns
    -------
    float32 array (N, 2)
        ``X[q] = sum_n x[n] exp(-2 pi i n q / N)``.
    """
    n = x.shape[0]
    src = x
    dst = np.empty_like(x)
    p = 1
    while p < n:
        r = MAX_RADIX if n // p >= MAX_RADIX else n // p
        bits = _log2(r)
        t = n // r
        for i in numba.prange(t):
            ur = np.empty(MAX_RADIX, dtype=np.float32)
            ui = np.empty(MAX_RADIX, dtype=np.float32)
            k = i & (p - 1)
            alpha = NEG_TWO_PI * np.float32(k) / np.float32(p * r)
            for j in range(r):
                ur[j] = src[i + j * t, 0]
                ui[j] = src[i + j * t, 1]
            for j in range(1, r):
                c = np.cos(np.float32(j) * alpha)
                s = np.sin(np.float32(j) * alpha)
                re = ur[j] * c - ui[j] * s
                ui[j] = ur[j] * s + ui[j] * c
                ur[j] = re
            _dft_dif(ur, ui, r, bits, roots)
            base = ((i - k) << bits) + k
            for j in range(r):
                q = rev[j] >> (4 - bits)
                dst[base + q * p, 0] = ur[j]
                dst[base + q * p, 1] = ui[j]
        src, dst = dst, src
        p *= r
    return src


def _make_pass_kernel(radix):
    """The GPU kernel of a radix-``radix`` pass (one kernel per radix, as the original's four kernels): the
    radix is a compile-time constant, so the per-item loops have constant trip counts and unroll."""
    bits = radix.bit_length() - 1

    @cuda.jit(device=True)
    def dft_dif(ur, ui, roots):
        for s in range(bits):
            span = radix >> (s + 1)
            step = (MAX_RADIX // 2) // span
            for start in range(0, radix, 2 * span):
                for m in range(span):
                    a = start + m
                    b = a + span
                    tr = ur[a] - ur[b]
                    ti = ui[a] - ui[b]
                    ur[a] = ur[a] + ur[b]
                    ui[a] = ui[a] + ui[b]
                    if m == 0:
                        ur[b] = tr
                        ui[b] = ti
                    else:
                        wr = roots[m * step, 0]
                        wi = roots[m * step, 1]
                        ur[b] = tr * wr - ti * wi
                        ui[b] = tr * wi + ti * wr

    @cuda.jit
    def pass_kernel(src, dst, p, roots, rev):
        i = cuda.grid(1)
        t = src.shape[0] // radix
        ur = cuda.local.array(radix, dtype=numba.float32)
        ui = cuda.local.array(radix, dtype=numba.float32)
        k = i & (p - 1)
        alpha = numba.float32(-2.0 * math.pi) * numba.float32(k) / numba.float32(p * radix)
        for j in range(radix):
            ur[j] = src[i + j * t, 0]
            ui[j] = src[i + j * t, 1]
        for j in range(1, radix):
            c = math.cos(numba.float32(j) * alpha)
            s = math.sin(numba.float32(j) * alpha)
            re = ur[j] * c - ui[j] * s
            ui[j] = ur[j] * s + ui[j] * c
            ur[j] = re
        dft_dif(ur, ui, roots)
        base = ((i - k) << bits) + k
        for j in range(radix):
            q = rev[j] >> (4 - bits)
            dst[base + q * p, 0] = ur[j]
            dst[base + q * p, 1] = ui[j]

    return pass_kernel


_PASS_KERNELS = {r: _make_pass_kernel(r) for r in KERNEL_OF_RADIX}


def _to_device(x, roots, rev):
    return {"buf": [cuda.to_device(x), cuda.device_array_like(x)], "roots": cuda.to_device(roots),
            "rev": cuda.to_device(rev), "n": x.shape[0], "out": 0}


def _launch(s):
    n, p, cur = s["n"], 1, 0
    for r in passes(n):
        t = n // r
        loc = min(LOCAL, t)
        _PASS_KERNELS[r][t // loc, loc](s["buf"][cur], s["buf"][1 - cur], p, s["roots"], s["rev"])
        cur = 1 - cur
        p *= r
    s["out"] = cur


def _from_device(s):
    return s["buf"][s["out"]].copy_to_host()


def make_inputs(params, seed):
    """``(x, roots, rev)``: ``CYCLES`` periods of a sine wave over ``n`` points (imaginary part 0) and the
    constant tables. The wave does not depend on ``seed`` (the original's input is a fixed sine wave)."""
    n = int(params["n"])
    passes(n)  # validates n
    x = np.zeros((n, 2), dtype=np.float32)
    x[:, 0] = np.sin(2.0 * np.pi * CYCLES * np.arange(n) / n)
    return (x, *tables())


def pass_work_items(params):
    """``[(radix, work items)]`` of every pass at ``params``, in launch order."""
    n = int(params["n"])
    return [(r, n // r) for r in passes(n)]


def work(params):
    """What Portcast counts for the region: the largest pass's work items (``N`` over the last radix), and
    the GPU port's work-group size."""
    most = max(w for _, w in pass_work_items(params))
    return most, min(LOCAL, most)


KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="fft",
        kernel="fft",
        description="whole single-precision complex FFT: radix-16 Stockham passes and one radix-8/4/2 pass",
        cpu=fft,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=POINTS["tiny"],
        rtol=1e-4,
        atol=2e-3,
        separate_launches=True,
    ),
]
