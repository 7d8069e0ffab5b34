"""The (T) energy contributions of CCSD(T), HeCBench ``ccsd-trpdrv`` (NWChem's ``ccsd_tengy``): the kernel
``ccsd_kernel``.

For one occupied triple ``(i, j, k)`` and virtual ``a``, thread ``(b, c)`` (a pair of virtual orbitals) reads
the eight intermediate matrices ``f1n ... f4t`` at ``bc = b + c nvir`` and ``cb = c + b nvir``, the energy
denominator ``-1 / (e_b + e_c + eaijk)``, and adds its fourth- and fifth-order terms to ``emp4i``, ``emp4k``,
``emp5i`` and ``emp5k`` with double-precision ``atomicAdd`` (the fifth-order terms also use ``t1v1[b]``,
``t1v2[b]`` and ``dintx1, dintx2, dintc1, dintc2`` at ``c``).

Launch: 16 x 16 blocks, ``ceil(nvir / 16)^2`` of them, guard ``b < nvir && c < nvir``. Measured point ``40 200
100`` (nocc, nvir, maxiter): 13 x 13 blocks. The timed launch is the first: ``a = i = j = k = 1`` (Fortran
indices), so ``eaijk = e_0 - (e_0 + e_0 + e_0)``; the four sums start at zero.

Inputs (exact): the host's ``srand48(2)`` and ``drand48()`` fill, in order, ``eorb`` and the eight ``f``
matrices, the ``T``, ``X``, ``J``, ``K`` and ``D`` arrays the kernel does not read, then ``dintc1, dintc2,
dintx1, dintx2, t1v1, t1v2`` (each ``nvir^2`` long; the kernel reads the first ``nvir``); reproduced here
with the same 48-bit generator (``seed`` is added to the ``srand48`` seed).

Deliberate differences: the 2-D grid is flattened (thread ``gid``: block ``gid / 256``, ``bx = blk % gridX``,
``by = blk / gridX``; ``tx = t % 16``, ``ty = t / 16``); the atomic adds are read-modify-writes (a sequential
run; the GPU's order of the double additions differs, so the sums agree to rounding). Precision: double.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

BX = BY = 16
BLOCK = BX * BY

POINTS = {"40 200 100": {"nocc": 40, "nvir": 200, "maxiter": 100}}
#: 3 x 3 blocks, the last partly outside the 40 x 40 virtual pairs
TEST_POINT = {"nocc": 4, "nvir": 40, "maxiter": 1}


def ccsd_kernel(f1n, f1t, f2n, f2t, f3n, f3t, f4n, f4t, dintc1, dintx1, t1v1, dintc2, dintx2, t1v2, eorb, eaijk,
                emp4i, emp5i, emp4k, emp5k, ncor, nocc, nvir, grid_x, n_threads):
    """Add every (b, c) pair's terms to the four energy sums."""
    for gid in numba.prange(n_threads):
        blk = gid // 256
        t = gid % 256
        b = (blk % grid_x) * 16 + t % 16
        c = (blk // grid_x) * 16 + t // 16
        if b < nvir and c < nvir:
            denom = -1.0 / (eorb[ncor + nocc + b] + eorb[ncor + nocc + c] + eaijk)
            bc = b + c * nvir
            cb = c + b * nvir
            f1nbc = f1n[bc]
            f1tbc = f1t[bc]
            f1ncb = f1n[cb]
            f1tcb = f1t[cb]
            f2nbc = f2n[bc]
            f2tbc = f2t[bc]
            f2ncb = f2n[cb]
            f2tcb = f2t[cb]
            f3nbc = f3n[bc]
            f3tbc = f3t[bc]
            f3ncb = f3n[cb]
            f3tcb = f3t[cb]
            f4nbc = f4n[bc]
            f4tbc = f4t[bc]
            f4ncb = f4n[cb]
            f4tcb = f4t[cb]
            emp4i[0] += (denom * (f1tbc + f1ncb + f2tcb + f3nbc + f4ncb) * (f1tbc - f2tbc * 2 - f3tbc * 2 + f4tbc)
                         - denom * (f1nbc + f1tcb + f2ncb + f3ncb) * (f1tbc * 2 - f2tbc - f3tbc + f4tbc * 2)
                         + denom * 3 * (f1nbc * (f1nbc + f3ncb + f4tcb * 2) + f2nbc * f2tcb + f3nbc * f4tbc))
            emp4k[0] += (denom * (f1nbc + f1tcb + f2ncb + f3tbc + f4tcb) * (f1nbc - f2nbc * 2 - f3nbc * 2 + f4nbc)
                         - denom * (f1tbc + f1ncb + f2tcb + f3tcb) * (f1nbc * 2 - f2nbc - f3nbc + f4nbc * 2)
                         + denom * 3 * (f1tbc * (f1tbc + f3tcb + f4ncb * 2) + f2tbc * f2ncb + f3tbc * f4nbc))
            t1v1b = t1v1[b]
            t1v2b = t1v2[b]
            dintx1c = dintx1[c]
            dintx2c = dintx2[c]
            dintc1c = dintc1[c]
            dintc2c = dintc2[c]
            emp5i[0] += (denom * t1v1b * dintx1c * (f1tbc + f2nbc + f4ncb
                                                    - (f3tbc + f4nbc + f2ncb + f1nbc + f2tbc + f3ncb) * 2
                                                    + (f3nbc + f4tbc + f1ncb) * 4)
                         + denom * t1v1b * dintc1c * (f1nbc + f4nbc + f1tcb - (f2nbc + f3nbc + f2tcb) * 2))
            emp5k[0] += (denom * t1v2b * dintx2c * (f1nbc + f2tbc + f4tcb
                                                    - (f3nbc + f4tbc + f2tcb + f1tbc + f2nbc + f3tcb) * 2
                                                    + (f3tbc + f4nbc + f1tcb) * 4)
                         + denom * t1v2b * dintc2c * (f1tbc + f4tbc + f1ncb - (f2tbc + f3tbc + f2ncb) * 2))
    return emp4i, emp5i, emp4k, emp5k


@cuda.jit
def _ccsd_gpu(f1n, f1t, f2n, f2t, f3n, f3t, f4n, f4t, dintc1, dintx1, t1v1, dintc2, dintx2, t1v2, eorb, eaijk,
              emp4i, emp5i, emp4k, emp5k, ncor, nocc, nvir):
    b = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if b < nvir and c < nvir:
        denom = -1.0 / (eorb[ncor + nocc + b] + eorb[ncor + nocc + c] + eaijk)
        bc = b + c * nvir
        cb = c + b * nvir
        f1nbc, f1tbc, f1ncb, f1tcb = f1n[bc], f1t[bc], f1n[cb], f1t[cb]
        f2nbc, f2tbc, f2ncb, f2tcb = f2n[bc], f2t[bc], f2n[cb], f2t[cb]
        f3nbc, f3tbc, f3ncb, f3tcb = f3n[bc], f3t[bc], f3n[cb], f3t[cb]
        f4nbc, f4tbc, f4ncb, f4tcb = f4n[bc], f4t[bc], f4n[cb], f4t[cb]
        cuda.atomic.add(emp4i, 0, denom * (f1tbc + f1ncb + f2tcb + f3nbc + f4ncb) * (f1tbc - f2tbc * 2 - f3tbc * 2
                                                                                   + f4tbc)
                        - denom * (f1nbc + f1tcb + f2ncb + f3ncb) * (f1tbc * 2 - f2tbc - f3tbc + f4tbc * 2)
                        + denom * 3 * (f1nbc * (f1nbc + f3ncb + f4tcb * 2) + f2nbc * f2tcb + f3nbc * f4tbc))
        cuda.atomic.add(emp4k, 0, denom * (f1nbc + f1tcb + f2ncb + f3tbc + f4tcb) * (f1nbc - f2nbc * 2 - f3nbc * 2
                                                                                   + f4nbc)
                        - denom * (f1tbc + f1ncb + f2tcb + f3tcb) * (f1nbc * 2 - f2nbc - f3nbc + f4nbc * 2)
                        + denom * 3 * (f1tbc * (f1tbc + f3tcb + f4ncb * 2) + f2tbc * f2ncb + f3tbc * f4nbc))
        t1v1b = t1v1[b]
        t1v2b = t1v2[b]
        cuda.atomic.add(emp5i, 0, denom * t1v1b * dintx1[c] * (f1tbc + f2nbc + f4ncb - (f3tbc + f4nbc + f2ncb + f1nbc
                                                                                       + f2tbc + f3ncb) * 2
                                                               + (f3nbc + f4tbc + f1ncb) * 4)
                        + denom * t1v1b * dintc1[c] * (f1nbc + f4nbc + f1tcb - (f2nbc + f3nbc + f2tcb) * 2))
        cuda.atomic.add(emp5k, 0, denom * t1v2b * dintx2[c] * (f1nbc + f2tbc + f4tcb - (f3nbc + f4tbc + f2tcb + f1tbc
                                                                                       + f2nbc + f3tcb) * 2
                                                               + (f3tbc + f4nbc + f1tcb) * 4)
                        + denom * t1v2b * dintc2[c] * (f1tbc + f4tbc + f1ncb - (f2tbc + f3tbc + f2ncb) * 2))


def _to_device(*args):
    arrays = [cuda.to_device(a) for a in args[:15]]
    eaijk = float(args[15])
    sums = [cuda.to_device(a) for a in args[16:20]]
    ncor, nocc, nvir, grid_x, n_threads = (int(v) for v in args[20:25])
    return {"arrays": arrays, "eaijk": eaijk, "sums": sums, "ints": (ncor, nocc, nvir),
            "grid": (grid_x, n_threads // BLOCK // grid_x)}


def _launch(s):
    _ccsd_gpu[s["grid"], (BX, BY)](*s["arrays"], s["eaijk"], *s["sums"], *s["ints"])


def _from_device(s):
    return tuple(a.copy_to_host() for a in s["sums"])


@numba.njit(cache=True)
def drand48(seed, count):
    """``srand48(seed)`` then ``count`` draws of ``drand48()`` (the 48-bit LCG ``a = 0x5DEECE66D, c = 11``)."""
    x = ((seed & 0xFFFFFFFF) << 16) | 0x330E
    out = np.empty(count)
    for k in range(count):
        x = (0x5DEECE66D * x + 0xB) & 0xFFFFFFFFFFFF
        out[k] = x / 281474976710656.0
    return out


def host_arrays(nocc, nvir, seed):
    """The arrays the host draws, in its order: ``eorb``, ``f1n, f2n, f3n, f4n, f1t, f2t, f3t, f4t`` and the
    six ``dint``/``t1v`` arrays (the ones in between are drawn and dropped)."""
    ncor = 0
    nbf, lnvv, lnov, kchunk = ncor + nocc + nvir, nvir * nvir, nocc * nvir, nocc
    sizes = [nbf] + [lnvv] * 8 + [lnvv, kchunk * lnvv, lnov * nocc, kchunk * lnov, lnov * nocc, kchunk * lnov,
                                  lnvv, kchunk * lnvv, lnvv, kchunk * lnvv, lnov * nocc, kchunk * lnov,
                                  lnov * nocc, kchunk * lnov, lnov, nvir * kchunk, nvir * nocc] + [lnvv] * 6
    r = drand48(2 + seed, sum(sizes))
    parts, o = [], 0
    for s in sizes:
        parts.append(r[o:o + s])
        o += s
    eorb = parts[0]
    f1n, f2n, f3n, f4n, f1t, f2t, f3t, f4t = parts[1:9]
    dintc1, dintc2, dintx1, dintx2, t1v1, t1v2 = parts[-6:]
    return eorb, (f1n, f1t, f2n, f2t, f3n, f3t, f4n, f4t), (dintc1, dintx1, t1v1, dintc2, dintx2, t1v2)


def make_inputs(params, seed):
    """The region's arguments at the first launch (``a = i = j = k = 1``), the four sums at zero."""
    nocc, nvir = int(params["nocc"]), int(params["nvir"])
    eorb, f, d = host_arrays(nocc, nvir, seed)
    eaijk = eorb[0] - (eorb[0] + eorb[0] + eorb[0])
    sums = [np.zeros(1) for _ in range(4)]
    grid_x = (nvir + BX - 1) // BX
    return (*[a.copy() for a in f], *[a.copy() for a in d], eorb.copy(), eaijk, *sums, 0, nocc, nvir, grid_x,
            work(params)[0])


def work(params):
    g = (int(params["nvir"]) + BX - 1) // BX
    return g * g * BLOCK, BLOCK


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="ccsd-trpdrv",
        kernel="ccsd_kernel",
        description="HeCBench ccsd-trpdrv: CCSD(T) fourth- and fifth-order energy terms of one occupied triple, "
        "one thread per virtual pair, double-precision atomic sums",
        cpu=ccsd_kernel,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=TEST_POINT,
        rtol=1e-10,
        atol=1e-10,
    ),
]
