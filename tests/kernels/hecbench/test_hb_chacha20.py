"""The chacha20 port: its keystream is the RFC test vector of the program's key and nonce, decoded
independently with ``bytes.fromhex``."""

from __future__ import annotations

import numba
import numpy as np

from kernels.measured.hecbench import chacha20 as cc

REGION = numba.njit(cc.test_keystreams)


def test_keystream_is_the_test_vector():
    args = cc.make_inputs({}, 0)
    result, raw = REGION(*args)
    want = np.frombuffer(bytes.fromhex(cc.KEYSTREAM), dtype=np.uint8)
    assert np.array_equal(raw, want)
    assert np.array_equal(result, want)
    assert np.array_equal(args[4], np.arange(32)) and np.array_equal(args[5], np.arange(8))


def test_plain_python_xors_a_nonzero_buffer():
    args = list(cc.make_inputs({}, 0))
    args[7] = np.full(256, 0xFF, np.uint8)  # result starts all ones: the XOR gives the complement
    result, _ = cc.test_keystreams(*args)
    assert np.array_equal(result, 0xFF ^ np.frombuffer(bytes.fromhex(cc.KEYSTREAM), dtype=np.uint8))

