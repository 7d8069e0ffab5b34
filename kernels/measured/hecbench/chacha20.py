"""ChaCha20 keystream test, HeCBench ``chacha20``: the kernel ``test_keystreams``, its first launch.

One block of 256 threads. First every thread decodes hex text to bytes with a block-stride loop (byte ``i =
tid, tid + 256, ...`` of each of the three strings: ``raw[i] = (c2u[text[2i]] << 4) | c2u[text[2i + 1]]``
through a 256-entry character table): the 32-byte key, the 8-byte nonce and the 256-byte expected keystream.
Then thread 0 alone builds the ChaCha20 state (the constant ``"expand 32-byte k"``, the key, a 64-bit block
counter of 0, the nonce; little-endian 32-bit words) and XORs ``n = 256`` bytes of ``result`` (zeroed by the
host before the launch) with the keystream: four 64-byte blocks, each 10 double rounds of eight quarter
rounds (add, xor, rotate by 16, 12, 8, 7) on a copy of the state, the state added back, the counter
incremented. The host then compares ``result`` with the decoded keystream (the RFC test vector of this key
and nonce).

Inputs: the program's fixed strings (key ``00 01 ... 1f``, nonce ``00 01 ... 07``, the 512-character
keystream); no size parameter, so the test point is the measured point. The character table is the host's
(digits, ``a-f``, ``A-F``; the original leaves the other 194 entries uninitialised: zero here).

Deliberate differences: the original has no barrier between the decoding and thread 0's use of the key and
nonce (they are decoded by threads 0-39, the first two warps' lanes); the region splits the two parts into two
phases (two parallel loops over the 256 threads). The 32-bit words are carried in int64 with masks (Numba
would widen the uint32 arithmetic anyway); thread 0's state, working copy and 64-byte keystream buffer are
scratch arrays passed in (the GPU port: local arrays). The quarter rounds are a loop over a table of their
four word indices instead of the macro's eight written-out calls.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from ...spec import GpuPort
from ..spec import MeasuredKernel

THREADS = 256
MASK = 0xFFFFFFFF

KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
NONCE = "0001020304050607"
KEYSTREAM = (
    "f798a189f195e66982105ffb640bb7757f579da31602fc93ec01ac56f85ac3c134a4547b733b46413042c9440049176905d3be59ea1c"
    "53f15916155c2be8241a38008b9a26bc35941e2444177c8ade6689de95264986d95889fb60e84629c9bd9a5acb1cc118be563eb9b3a4"
    "a472f82e09a7e778492b562ef7130e88dfe031c79db9d4f7c7a899151b9a475032b63fc385245fe054e3dd5a97a5f576fe064025d3ce"
    "042c566ab2c507b138db853e3d6959660996546cc9c4a6eafdc777c040d70eaf46f76dad3979e5c5360c3317166a1c894c94a371876a"
    "94df7628fe4eaaf2ccb27d5aaae0ad7ad0f9d4b6ad3b54098746d4524d38407a6deb3ab78fab78c9"
)
MAGIC = np.frombuffer(b"expand 32-byte k", dtype=np.uint8).copy()
#: the word indices (a, b, c, d) of the eight quarter rounds of a double round: columns, then diagonals
QUARTER_ROUNDS = np.array([[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15],
                           [0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]], dtype=np.int64)

POINTS = {"100000": {}}


def char_table():
    t = np.zeros(256, dtype=np.uint8)
    for i in range(10):
        t[ord("0") + i] = i
    for i in range(26):
        t[ord("a") + i] = i + 10
        t[ord("A") + i] = i + 10
    return t


def test_keystreams(text_key, text_nonce, text_keystream, char_to_uint, raw_key, raw_nonce, raw_keystream,
                    result, magic, qr, state, x, ks8):
    """Decode the three hex strings (all 256 threads), then thread 0 XORs ``result`` with the ChaCha20
    keystream of the decoded key and nonce. ``state, x``: int64 (16,), ``ks8``: int64 (64,) scratch.
    Returns ``(result, raw_keystream)``."""
    for tid in numba.prange(THREADS):
        i = tid
        while i < text_key.shape[0] // 2:
            raw_key[i] = (char_to_uint[text_key[2 * i]] << 4) | char_to_uint[text_key[2 * i + 1]]
            i += THREADS
        i = tid
        while i < text_nonce.shape[0] // 2:
            raw_nonce[i] = (char_to_uint[text_nonce[2 * i]] << 4) | char_to_uint[text_nonce[2 * i + 1]]
            i += THREADS
        i = tid
        while i < text_keystream.shape[0] // 2:
            raw_keystream[i] = ((char_to_uint[text_keystream[2 * i]] << 4)
                                | char_to_uint[text_keystream[2 * i + 1]])
            i += THREADS
    for tid in numba.prange(THREADS):
        if tid == 0:
            for w in range(4):
                state[w] = (np.int64(magic[4 * w]) | (np.int64(magic[4 * w + 1]) << 8)
                            | (np.int64(magic[4 * w + 2]) << 16) | (np.int64(magic[4 * w + 3]) << 24))
            for w in range(8):
                state[4 + w] = (np.int64(raw_key[4 * w]) | (np.int64(raw_key[4 * w + 1]) << 8)
                                | (np.int64(raw_key[4 * w + 2]) << 16) | (np.int64(raw_key[4 * w + 3]) << 24))
            state[12] = 0
            state[13] = 0
            for w in range(2):
                state[14 + w] = (np.int64(raw_nonce[4 * w]) | (np.int64(raw_nonce[4 * w + 1]) << 8)
                                 | (np.int64(raw_nonce[4 * w + 2]) << 16) | (np.int64(raw_nonce[4 * w + 3]) << 24))
            position = 64
            for i in range(text_keystream.shape[0] // 2):
                if position >= 64:
                    for w in range(16):
                        x[w] = state[w]
                    for r in range(10):
                        for q in range(8):
                            a = qr[q, 0]
                            b = qr[q, 1]
                            c = qr[q, 2]
                            d = qr[q, 3]
                            x[a] = (x[a] + x[b]) & MASK
                            t = x[d] ^ x[a]
                            x[d] = ((t << 16) | (t >> 16)) & MASK
                            x[c] = (x[c] + x[d]) & MASK
                            t = x[b] ^ x[c]
                            x[b] = ((t << 12) | (t >> 20)) & MASK
                            x[a] = (x[a] + x[b]) & MASK
                            t = x[d] ^ x[a]
                            x[d] = ((t << 8) | (t >> 24)) & MASK
                            x[c] = (x[c] + x[d]) & MASK
                            t = x[b] ^ x[c]
                            x[b] = ((t << 7) | (t >> 25)) & MASK
                    for w in range(16):
                        word = (x[w] + state[w]) & MASK
                        ks8[4 * w] = word & 0xFF
                        ks8[4 * w + 1] = (word >> 8) & 0xFF
                        ks8[4 * w + 2] = (word >> 16) & 0xFF
                        ks8[4 * w + 3] = (word >> 24) & 0xFF
                    state[12] = (state[12] + 1) & MASK
                    if state[12] == 0:
                        state[13] = (state[13] + 1) & MASK
                    position = 0
                result[i] = result[i] ^ ks8[position]
                position += 1
    return result, raw_keystream


_QR_HOST = QUARTER_ROUNDS
_MAGIC_HOST = MAGIC


@cuda.jit
def _keystreams_gpu(text_key, text_nonce, text_keystream, char_to_uint, raw_key, raw_nonce, raw_keystream,
                    result):
    qr = cuda.const.array_like(_QR_HOST)
    magic = cuda.const.array_like(_MAGIC_HOST)
    tid = cuda.threadIdx.x
    i = tid
    while i < text_key.shape[0] // 2:
        raw_key[i] = (char_to_uint[text_key[2 * i]] << 4) | char_to_uint[text_key[2 * i + 1]]
        i += THREADS
    i = tid
    while i < text_nonce.shape[0] // 2:
        raw_nonce[i] = (char_to_uint[text_nonce[2 * i]] << 4) | char_to_uint[text_nonce[2 * i + 1]]
        i += THREADS
    i = tid
    while i < text_keystream.shape[0] // 2:
        raw_keystream[i] = (char_to_uint[text_keystream[2 * i]] << 4) | char_to_uint[text_keystream[2 * i + 1]]
        i += THREADS
    cuda.syncthreads()
    if tid == 0:
        state = cuda.local.array(16, numba.int64)
        x = cuda.local.array(16, numba.int64)
        ks8 = cuda.local.array(64, numba.int64)
        for w in range(4):
            state[w] = (numba.int64(magic[4 * w]) | (numba.int64(magic[4 * w + 1]) << 8)
                        | (numba.int64(magic[4 * w + 2]) << 16) | (numba.int64(magic[4 * w + 3]) << 24))
        for w in range(8):
            state[4 + w] = (numba.int64(raw_key[4 * w]) | (numba.int64(raw_key[4 * w + 1]) << 8)
                            | (numba.int64(raw_key[4 * w + 2]) << 16) | (numba.int64(raw_key[4 * w + 3]) << 24))
        state[12] = 0
        state[13] = 0
        for w in range(2):
            state[14 + w] = (numba.int64(raw_nonce[4 * w]) | (numba.int64(raw_nonce[4 * w + 1]) << 8)
                             | (numba.int64(raw_nonce[4 * w + 2]) << 16) | (numba.int64(raw_nonce[4 * w + 3]) << 24))
        position = 64
        for i in range(text_keystream.shape[0] // 2):
            if position >= 64:
                for w in range(16):
                    x[w] = state[w]
                for r in range(10):
                    for q in range(8):
                        a = qr[q, 0]
                        b = qr[q, 1]
                        c = qr[q, 2]
                        d = qr[q, 3]
                        x[a] = (x[a] + x[b]) & MASK
                        t = x[d] ^ x[a]
                        x[d] = ((t << 16) | (t >> 16)) & MASK
                        x[c] = (x[c] + x[d]) & MASK
                        t = x[b] ^ x[c]
                        x[b] = ((t << 12) | (t >> 20)) & MASK
                        x[a] = (x[a] + x[b]) & MASK
                        t = x[d] ^ x[a]
                        x[d] = ((t << 8) | (t >> 24)) & MASK
                        x[c] = (x[c] + x[d]) & MASK
                        t = x[b] ^ x[c]
                        x[b] = ((t << 7) | (t >> 25)) & MASK
                for w in range(16):
                    word = (x[w] + state[w]) & MASK
                    ks8[4 * w] = word & 0xFF
                    ks8[4 * w + 1] = (word >> 8) & 0xFF
                    ks8[4 * w + 2] = (word >> 16) & 0xFF
                    ks8[4 * w + 3] = (word >> 24) & 0xFF
                state[12] = (state[12] + 1) & MASK
                if state[12] == 0:
                    state[13] = (state[13] + 1) & MASK
                position = 0
            result[i] = result[i] ^ ks8[position]
            position += 1


_NAMES = ("text_key", "text_nonce", "text_keystream", "char_to_uint", "raw_key", "raw_nonce", "raw_keystream",
          "result")


def _to_device(*args):
    if not (np.array_equal(args[8], _MAGIC_HOST) and np.array_equal(args[9], _QR_HOST)):
        raise ValueError("chacha20 GPU port: the constant and the round table are compiled in")
    return {k: cuda.to_device(a) for k, a in zip(_NAMES, args[:8])}


def _launch(s):
    _keystreams_gpu[1, THREADS](*(s[k] for k in _NAMES))


def _from_device(s):
    return s["result"].copy_to_host(), s["raw_keystream"].copy_to_host()


def _text(s):
    return np.frombuffer(s.encode("ascii"), dtype=np.uint8).copy()


def make_inputs(params, seed):
    """The program's fixed strings (``seed`` is unused: the program has no random input)."""
    return (_text(KEY), _text(NONCE), _text(KEYSTREAM), char_table(), np.zeros(len(KEY) // 2, np.uint8),
            np.zeros(len(NONCE) // 2, np.uint8), np.zeros(len(KEYSTREAM) // 2, np.uint8),
            np.zeros(len(KEYSTREAM) // 2, np.uint8), MAGIC.copy(), QUARTER_ROUNDS.copy(),
            np.zeros(16, np.int64), np.zeros(16, np.int64), np.zeros(64, np.int64))


def work(params):
    return THREADS, THREADS


KERNELS = [
    MeasuredKernel(
        source="hecbench",
        application="chacha20",
        kernel="test_keystreams",
        description="HeCBench chacha20: 256 threads decode hex strings, then one thread generates and XORs "
        "four ChaCha20 blocks (a serial chain of 32-bit add-xor-rotate)",
        cpu=test_keystreams,
        gpu=GpuPort(_to_device, _launch, _from_device),
        make_inputs=make_inputs,
        points=POINTS,
        work=work,
        test_point=POINTS["100000"],
        rtol=0.0,
        atol=0.0,
    ),
]
