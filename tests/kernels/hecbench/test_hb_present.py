"""The present port (kernels/measured/hecbench/present.py) against the PRESENT paper's bit-level definition
(64-bit state, 80-bit key register), its published test vectors and the host's shuffled texts."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels.measured.hecbench import present

REGION = numba.njit(present.present)
S = present.SBOX4


def _present80(block, key, rounds=31):
    for r in range(1, rounds + 1):
        block ^= key >> 16
        block = sum(S[(block >> (4 * i)) & 15] << (4 * i) for i in range(16))
        block = sum(((block >> i) & 1) << (63 if i == 63 else 16 * i % 63) for i in range(64))
        key = ((key << 61) | (key >> 19)) & ((1 << 80) - 1)
        key = (S[key >> 76] << 76) | (key & ((1 << 76) - 1))
        key ^= r << 15
    return block ^ (key >> 16)


def test_published_vectors():
    # Bogdanov et al. 2007: (plain, key) -> cipher
    vectors = [(0, 0, 0x5579C1387B228445), (0, (1 << 80) - 1, 0xE72C46C0F5945049),
               ((1 << 64) - 1, 0, 0xA112FFC72F68417B), ((1 << 64) - 1, (1 << 80) - 1, 0x3333DCD3213210D2)]
    num = len(vectors)
    inputs = list(present.make_inputs({"num": num, "rounds": 31}, 0))
    inputs[2] = np.frombuffer(b"".join(v[0].to_bytes(8, "big") for v in vectors), np.uint8).copy()
    inputs[3] = np.frombuffer(b"".join(v[1].to_bytes(10, "big") for v in vectors), np.uint8).copy()
    got = present.present(*inputs).reshape(num, 8)
    for row, (_, _, want) in zip(got, vectors):
        assert int.from_bytes(bytes(row), "big") == want


@pytest.mark.parametrize("num,seed", [(300, 0), (77, 4)])
def test_region_equals_bit_level_cipher(num, seed):
    inputs = present.make_inputs({"num": num, "rounds": 31}, seed)
    got = REGION(*inputs).reshape(num, 8)
    plains, keys = inputs[2].reshape(num, 8), inputs[3].reshape(num, 10)
    for i in range(num):
        want = _present80(int.from_bytes(bytes(plains[i]), "big"), int.from_bytes(bytes(keys[i]), "big"))
        assert int.from_bytes(bytes(got[i]), "big") == want


def test_host_texts_keys_and_work():
    inputs = present.make_inputs({"num": 3, "rounds": 31}, 0)
    # std::shuffle of "PRESENT\0" with default_random_engine(8), applied again for every text (libstdc++)
    assert bytes(inputs[2][8:16]) == bytes([69, 78, 82, 69, 84, 0, 83, 80])
    assert bytes(inputs[2][16:24]) == bytes([84, 0, 78, 82, 83, 80, 69, 69])
    # glibc srand(8): the first key byte is the first rand() % 256
    assert inputs[3][0] == 757547896 % 256
    assert present.work(present.POINTS["100000 100"]) == (391 * 256, 256)
