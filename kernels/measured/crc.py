"""CRC-32 by slicing-by-8, Extended OpenDwarfs ``crc``: the kernel ``crc32_slice8``, as AIWC timed it.

The Ethernet CRC-32 (reflected polynomial ``0xEDB88320``, initial value and final xor ``0xFFFFFFFF``: the
same value as ``zlib.crc32``) of one page of ``page_size`` bytes per work item. The page is read as 32-bit
words; each step of the main loop takes two words (eight bytes), xors the running CRC into the first and
replaces the CRC by the xor of eight lookups, one per byte, into eight 256-entry tables (table ``k``
advances a byte's contribution by ``k`` further bytes). The last 1-7 bytes, when the page size is not a
multiple of 8, go byte by byte through table 0, read one word at a time. Every step needs the previous
CRC: the work item's loop is one long dependent chain.

Launch: global size = the number of pages CRC'd by the invocation, work groups of 1. The host's default
is 16 pages per launch, but AIWC records one work item at every size (its instruction counts are one
page's: about 58 per eight-byte step), so the invocation here is one page: the region's parallel loop has
one iteration, which walks the whole page (``page_size / 8`` steps). Sizes: the AIWC input files hold 1000 pages of
``N`` bytes (``crc_1000xN.txt``, N = 2000, 16000, 524000, 4194304); only the first page is read by this
invocation, so only that page is generated.

Inputs: the generator (``createcrc``) fills each word with ``rand()`` (glibc, seeded with its process id:
unknown), so every word is below 2^31; here glibc ``rand`` after ``srand(seed)``. The tables are a program
constant of the original (OpenCL ``__constant`` memory); here an argument of the region, and constant
memory (``cuda.const.array_like``) in the GPU port. The CRC is carried in int64 (Numba's integer typing
would widen 32-bit operands anyway); the values are those of the original's 32-bit arithmetic.
Page sizes that are not a multiple of 4 are refused (the original would read into the next page).

Precision: integer only (no floating-point operation), as the original.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ..spec import GpuPort
from ._glibc import glibc_rand
from .spec import MeasuredKernel

POLY = 0xEDB88320
MASK = 0xFFFFFFFF

#: AIWC sizes: bytes per page; the invocation CRCs one page
POINTS = {
    "tiny": {"page_size": 2000, "pages": 1},
    "small": {"page_size": 16000, "pages": 1},
    "medium": {"page_size": 524000, "pages": 1},
    "large": {"page_size": 4194304, "pages": 1},
}


def slice8_tables():
    """The eight slicing-by-8 tables, uint32 ``(8, 256)``: table 0 is the byte-wise CRC table of
    ``POLY``; table ``k`` is table ``k - 1`` advanced by one more zero byte."""
    t = np.zeros((8, 256), dtype=np.uint32)
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ POLY if c & 1 else c >> 1
        t[0, b] = c
    for k in range(1, 8):
        for b in range(256):
            prev = int(t[k - 1, b])
            t[k, b] = (prev >> 8) ^ int(t[0, prev & 0xFF])
    return t


TABLES = slice8_tables()


def crc32_slice8(data, length_bytes, length_ints, table, res):
    """CRC-32 of page ``gid`` (words ``gid * length_ints`` on) for every work item ``gid < res.shape[0]``.

    Parameters
    ----------
    data : uint32, the pages' words, ``length_ints`` per page.
    length_bytes : bytes per page. length_ints : ``length_bytes // 4``.
    table : uint32 ``(8, 256)``, :func:`slice8_tables`.
    res : uint32, one CRC per page, overwritten.

    Returns
    -------
    ``res``.
    """
    for gid in numba.prange(res.shape[0]):
        crc = np.int64(MASK)
        i = gid * length_ints
        left = length_bytes
        while left >= 8:
            one = np.int64(data[i]) ^ crc
            two = np.int64(data[i + 1])
            i += 2
            crc = (np.int64(table[7, one & 0xFF]) ^ np.int64(table[6, (one >> 8) & 0xFF])
                   ^ np.int64(table[5, (one >> 16) & 0xFF]) ^ np.int64(table[4, one >> 24])
                   ^ np.int64(table[3, two & 0xFF]) ^ np.int64(table[2, (two >> 8) & 0xFF])
                   ^ np.int64(table[1, (two >> 16) & 0xFF]) ^ np.int64(table[0, two >> 24]))
            left -= 8
        while left > 0:
            one = np.int64(data[i])
            i += 1
            j = 0
            while left > 0 and j < 4:
                left -= 1
                crc = (crc >> 8) ^ np.int64(table[0, (crc & 0xFF) ^ ((one >> (8 * j)) & 0xFF)])
                j += 1
        res[gid] = crc ^ MASK
    return res


# ----------------------------------------------------------------------------------------------- GPU port

_TABLES_HOST = TABLES  # module-level array captured as CUDA constant memory


@cuda.jit
def _crc_gpu(data, length_bytes, length_ints, res):
    table = cuda.const.array_like(_TABLES_HOST)
    gid = cuda.grid(1)
    crc = numba.int64(MASK)
    i = gid * length_ints
    left = length_bytes
    while left >= 8:
        one = numba.int64(data[i]) ^ crc
        two = numba.int64(data[i + 1])
        i += 2
        crc = (numba.int64(table[7, one & 0xFF]) ^ numba.int64(table[6, (one >> 8) & 0xFF])
               ^ numba.int64(table[5, (one >> 16) & 0xFF]) ^ numba.int64(table[4, one >> 24])
               ^ numba.int64(table[3, two & 0xFF]) ^ numba.int64(table[2, (two >> 8) & 0xFF])
               ^ numba.int64(table[1, (two >> 16) & 0xFF]) ^ numba.int64(table[0, two >> 24]))
        left -= 8
    while left > 0:
        one = numba.int64(data[i])
        i += 1
        j = 0
        while left > 0 and j < 4:
            left -= 1
            crc = (crc >> 8) ^ numba.int64(table[0, (crc & 0xFF) ^ ((one >> (8 * j)) & 0xFF)])
            j += 1
    res[gid] = crc ^ MASK


def _to_device(data, length_bytes, length_ints, table, res):
    if not np.array_equal(table, _TABLES_HOST):
        raise ValueError("crc GPU port: the tables are compiled in as constants; pass slice8_tables()")
    return {"data": cuda.to_device(data), "res": cuda.to_device(res),
            "length_bytes": int(length_bytes), "length_ints": int(length_ints)}


def _launch(s):
    # one work item per page, work groups of 1 (the original's default work-group size)
    _crc_gpu[s["res"].shape[0], 1](s["data"], s["length_bytes"], s["length_ints"], s["res"])


def _from_device(s):
    return s["res"].copy_to_host()


# ----------------------------------------------------------------------------------------------- inputs


def make_inputs(params, seed):
    """The pages of the invocation (``rand()`` words), their size in bytes and words, the tables and the
    result array."""
    page_size, pages = int(params["page_size"]), int(params["pages"])
    if page_size % 4:
        raise ValueError(f"crc: the page size must be a multiple of 4 bytes, got {page_size}")
    words = page_size // 4
    data = glibc_rand(seed, pages * words).astype(np.uint32)
    return data, page_size, words, TABLES.copy(), np.zeros(pages, dtype=np.uint32)


def work(params):
    return int(params["pages"]), 1


KERNELS = [
    MeasuredKernel(
        source="aiwc",
        application="crc",
        kernel="crc32_slice8",
        description="Extended OpenDwarfs crc (AIWC): slicing-by-8 CRC-32 of one page by one work item "
        "(a serial dependent chain of table lookups)",
        cpu=crc32_slice8,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=POINTS["tiny"],
        rtol=0.0,
        atol=0.0,
    ),
]
