"""CRC-32 (IEEE 802.3, as zlib.crc32) of one long byte buffer, table-driven (serial dependence).

Every byte's step needs the previous CRC value, so the only parallel work is building the 256-entry
table (the parallel loop). GPU port: one block of 256 threads builds the table in shared memory, then
a single thread walks the whole buffer — the straightforward port of a serial algorithm, expected to be
much slower than the CPU (one slow GPU thread, global-memory latency on every byte).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .spec import GpuPort, KernelSpec

POLY = 0xEDB88320
MASK = 0xFFFFFFFF


def crc32(buf):
    """CRC-32 of ``buf``, equal to ``zlib.crc32(buf.tobytes())``.

    Parameters
    ----------
    buf : uint8 array.

    Returns
    -------
    int: the CRC as a non-negative integer below 2**32.
    """
    table = np.empty(256, dtype=np.int64)
    for k in numba.prange(256):
        c = k
        for _ in range(8):
            if c & 1:
                c = POLY ^ (c >> 1)
            else:
                c = c >> 1
        table[k] = c
    crc = MASK
    for i in range(buf.shape[0]):
        crc = table[(crc ^ np.int64(buf[i])) & 0xFF] ^ (crc >> 8)
    return crc ^ MASK


@cuda.jit
def _crc(buf, out):
    table = cuda.shared.array(256, dtype=numba.int64)
    k = cuda.threadIdx.x
    c = numba.int64(k)
    for _ in range(8):
        if c & 1:
            c = POLY ^ (c >> 1)
        else:
            c = c >> 1
    table[k] = c
    cuda.syncthreads()
    if k == 0:
        crc = numba.int64(MASK)
        for i in range(buf.shape[0]):
            crc = table[(crc ^ np.int64(buf[i])) & 0xFF] ^ (crc >> 8)
        out[0] = crc ^ MASK


def _to_device(buf):
    return {"buf": cuda.to_device(buf), "out": cuda.device_array(1, dtype=np.int64)}


def _launch(s):
    _crc[1, 256](s["buf"], s["out"])


def _from_device(s):
    return int(s["out"].copy_to_host()[0])


def make_inputs(n, seed):
    """``n`` random bytes."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, size=n, dtype=np.uint8),)


KERNEL = KernelSpec(
    name="crc32",
    category="serial",
    description="table-driven CRC-32 of one buffer; GPU: 256 threads build the table, one thread "
    "walks the buffer",
    cpu=crc32,
    gpu=GpuPort(_to_device, _launch, _from_device),
    make_inputs=make_inputs,
    sizes={"tiny": 200, "small": 100_000, "medium": 4_000_000, "large": 100_000_000},
    rtol=0.0,
    atol=0.0,
    expect_gpu_faster=False,
)
