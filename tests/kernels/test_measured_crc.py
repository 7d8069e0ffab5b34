"""The crc port (kernels/measured/crc.py) against zlib's CRC-32 (the same Ethernet polynomial and
conditioning), on the slicing-by-8 path and on the byte-wise tail, and on known check values."""

from __future__ import annotations

import copy
import zlib

import numba
import numpy as np
import pytest

from kernels.measured import crc

REGION = numba.njit(crc.crc32_slice8)


def _zlib_pages(data, words, pages):
    return [zlib.crc32(data[k * words : (k + 1) * words].tobytes()) for k in range(pages)]


@pytest.mark.parametrize("page_size,pages,seed", [(2000, 1, 0), (2004, 3, 1), (16000, 2, 2), (12, 5, 3)])
def test_region_equals_zlib(page_size, pages, seed):
    data, length_bytes, words, table, res = crc.make_inputs({"page_size": page_size, "pages": pages}, seed)
    assert (length_bytes, words, data.size) == (page_size, page_size // 4, pages * (page_size // 4))
    got = REGION(data, length_bytes, words, table, res)
    assert got.tolist() == _zlib_pages(data, words, pages)


def test_gpu_port_with_several_work_items_and_a_tail():
    # 2004 bytes: 250 eight-byte steps and one word through the byte-wise tail, three pages (work items)
    inputs = crc.make_inputs({"page_size": 2004, "pages": 3}, 4)
    got = crc.KERNELS[0].gpu.run(*copy.deepcopy(inputs))
    assert got.tolist() == _zlib_pages(inputs[0], 501, 3)


def test_known_check_values():
    res = np.zeros(1, dtype=np.uint32)
    # an empty page: the initial value xor the final mask
    assert crc.crc32_slice8(np.zeros(1, dtype=np.uint32), 0, 0, crc.TABLES, res.copy())[0] == 0
    # four zero bytes (tail path only): the well-known 0x2144DF1C
    assert crc.crc32_slice8(np.zeros(1, dtype=np.uint32), 4, 1, crc.TABLES, res.copy())[0] == 0x2144DF1C
    # table 0 is the classic CRC-32 table
    assert crc.TABLES[0, 1] == 0x77073096 and crc.TABLES[0, 128] == 0xEDB88320 and crc.TABLES[0, 255] == 0x2D02EF8D


def test_tables_advance_by_one_byte_each():
    # table k of byte b is the CRC state after byte b followed by k zero bytes (no conditioning)
    def step(c, byte):
        c ^= byte
        for _ in range(8):
            c = (c >> 1) ^ crc.POLY if c & 1 else c >> 1
        return c

    for b in (0, 1, 77, 255):
        c = step(0, b)
        for k in range(8):
            assert crc.TABLES[k, b] == c, (k, b)
            c = step(c, 0)


def test_inputs_are_rand_words_and_one_page_per_invocation():
    data, *_ = crc.make_inputs(crc.POINTS["tiny"], 0)
    assert data.dtype == np.uint32 and data.size == 500 and int(data.max()) < 2**31
    assert all(crc.work(p) == (1, 1) for p in crc.POINTS.values())
    with pytest.raises(ValueError):
        crc.make_inputs({"page_size": 2002, "pages": 1}, 0)
