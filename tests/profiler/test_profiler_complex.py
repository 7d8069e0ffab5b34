"""Complex numbers trace in both modes with the same records: ``.real``/``.imag`` of a number are register moves,
of an array views; conjugation is one ALU operation, ``abs`` of a complex a special function (a hypot),
``complex(a, b)`` a move; element accesses of complex arrays are 16 (complex128) or 8 (complex64) bytes."""

import numba
import numpy as np
import profiler_complex_kernels as CK
import pytest
from profiler_testing import trace_rows

from core.trace_schema import COLUMN_NAMES, Op
from profiler import runtime as rt
from profiler.runtime import device_address as _dev
from profiler.session import trace_function
from profiler.trace import MemorySink

MODES = ["interpreted", "compiled"]
L, S, B = Op.LOAD, Op.STORE, Op.BRANCH


def trace(fn, args, mode, chunk_records=1 << 20):
    res, rows, _, chunk = trace_rows(fn, args, mode, "kind", chunk_records)
    return res, rows, chunk


@pytest.mark.parametrize("mode", MODES)
def test_scalar_parts_conjugate_abs_and_construction(mode):
    out = np.zeros(2, np.complex128)
    z, w = 1.0 + 2.0j, np.complex64(3.0 - 1.0j)
    res, rows, _ = trace(CK.parts, (z, w, out), mode)
    p = _dev(out)
    # z=1 w=2 out=3 (ret 4), r=5, i=6, c=7, m=8, u=9, -i -> 10, exp sites 11, 12, their sum 13,
    # np.conj(w) -> 14, np.conjugate(w) -> 15, product 16, + c -> 17, np.real(w) -> 18, sum 19, np.imag(w) -> 20, 21
    # z (a Python complex) computes in double, w (complex64) in single; a sum of a Python number and a
    # complex64 / float32 value is single precision in NumPy (interpreted, NEP 50), double in Numba (compiled)
    mixed = Op.FP_ALU if mode == "interpreted" else Op.FP64_ALU
    assert rows == [
        ("attr:real", Op.MOVE, 0, 1, 0, 0, 5, 0, 0, -1),
        ("attr:imag", Op.MOVE, 0, 1, 0, 0, 6, 0, 0, -1),
        ("call:conj", Op.FP64_ALU, 0, 1, 0, 0, 7, 0, 0, -1),
        ("call:abs", Op.FP64_SPECIAL, 0, 1, 0, 0, 8, 0, 0, -1),
        ("unary:-", Op.FP64_ALU, 0, 6, 0, 0, 10, 0, 0, -1),
        ("call:complex", Op.MOVE, 0, 5, 10, 0, 9, 0, 0, -1),
        ("call:special", Op.FP64_SPECIAL, 0, 9, 0, 0, 11, 0, 0, -1),
        ("call:special", Op.FP64_SPECIAL, 0, 7, 0, 0, 12, 0, 0, -1),
        ("binop:+", Op.FP64_ALU, 0, 11, 12, 0, 13, 0, 0, -1),
        ("store", S, 0, 13, 3, 0, 0, p, 16, -1),
        ("call:conj", Op.FP_ALU, 0, 2, 0, 0, 14, 0, 0, -1),
        ("call:conj", Op.FP_ALU, 0, 2, 0, 0, 15, 0, 0, -1),
        ("binop:*", Op.FP_MUL, 0, 14, 15, 0, 16, 0, 0, -1),
        ("binop:+", mixed, 0, 16, 7, 0, 17, 0, 0, -1),
        ("store", S, 0, 17, 3, 0, 0, p + 16, 16, -1),
        ("call:real", Op.MOVE, 0, 2, 0, 0, 18, 0, 0, -1),
        ("binop:+", mixed, 0, 8, 18, 0, 19, 0, 0, -1),
        ("call:imag", Op.MOVE, 0, 2, 0, 0, 20, 0, 0, -1),
        ("binop:+", mixed, 0, 19, 20, 0, 21, 0, 0, -1),
    ]
    assert res.value == pytest.approx(abs(z) + 3.0 - 1.0)
    u = complex(1.0, -2.0)
    assert out[0] == pytest.approx(np.exp(u) + np.exp(z.conjugate()))
    assert out[1] == pytest.approx((3.0 + 1.0j) ** 2 + z.conjugate())


@pytest.mark.parametrize("mode", MODES)
def test_parts_of_complex64_arrays_are_views_and_elements_are_8_bytes(mode):
    a = np.array([1.0 + 2.0j, 3.0 - 4.0j], np.complex64)
    re, mag = np.zeros(2, np.float32), np.zeros(2, np.float32)
    res, rows, _ = trace(CK.array_parts, (a, re, mag), mode)
    pa, pr, pm = _dev(a), _dev(re), _dev(mag)
    # a=1 re=2 mag=3 (ret 4), ar=5, k=8, ar[k] -> 9, a.imag -> 10, a.imag[k] -> 11, sum 12, a[k] -> 13, abs 14
    body = lambda k: [  # noqa: E731
        ("load", L, 0, 8, 5, 0, 9, pa + 8 * k, 4, k),  # the real part: the element's first 4 bytes
        ("attr:imag", Op.OTHER, 0, 1, 0, 0, 10, 0, 0, k),
        ("load", L, 0, 8, 10, 0, 11, pa + 8 * k + 4, 4, k),
        ("binop:+", Op.FP_ALU, 0, 9, 11, 0, 12, 0, 0, k),
        ("store", S, 0, 12, 8, 2, 0, pr + 4 * k, 4, k),
        ("load", L, 0, 8, 1, 0, 13, pa + 8 * k, 8, k),
        ("call:abs", Op.FP_SPECIAL, 0, 13, 0, 0, 14, 0, 0, k),
        ("store", S, 0, 14, 8, 3, 0, pm + 4 * k, 4, k),
    ]
    latch = lambda k, t: [("loop:next", Op.INT_ALU, 0, 8, 0, 0, 8, 0, 0, k), ("branch:loop", B, t, 8, 0, 0, 0, 0, 0, k)]  # noqa: E731
    assert rows == (
        [("attr:real", Op.OTHER, 0, 1, 0, 0, 5, 0, 0, -1)] + body(0) + latch(0, 1) + body(1) + latch(1, 0)
        + [("load", L, 0, 1, 0, 0, 15, pa, 8, -1), ("call:conj", Op.FP_ALU, 0, 15, 0, 0, 16, 0, 0, -1)]
    )
    assert re.tolist() == [3.0, -1.0] and mag.tolist() == pytest.approx([5 ** 0.5, 5.0])
    assert res.value == 1.0 - 2.0j


def _relative(chunk, arrays):
    addr = chunk.addr.copy()
    for a in arrays:
        inside = (chunk.size > 0) & (chunk.addr >= _dev(a)) & (chunk.addr < _dev(a) + a.nbytes)
        addr[inside] -= _dev(a)
    return {name: (addr if name == "addr" else getattr(chunk, name)) for name in COLUMN_NAMES}


def test_fft_traces_compiled_in_auto_mode_with_the_interpreted_records(capsys):
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal(32) + 1j * rng.standard_normal(32)
    xi, pi_ = x0.copy(), np.zeros(32)
    res_i, _, ci = trace(CK.fft, (xi, pi_), "interpreted")
    want = np.fft.fft(x0)
    assert np.allclose(xi, want) and np.allclose(pi_, np.abs(want) ** 2)
    assert res_i.value == pytest.approx(abs(want[1]) + want[0].imag)
    ref = _relative(ci, (xi, pi_))
    ops = ci.op[ci.size > 0]
    assert set(ci.size[ci.size > 0].tolist()) == {8, 16}  # power[k] (float64) and x[k] (complex128)
    assert (
        np.count_nonzero(ops == S) == 32 * 5 * 2 // 2 + 32 + 2 * 12
    )  # butterflies, power, bit-reversal swaps (12 pairs)
    capsys.readouterr()
    for chunk_records in (1, 7, 1 << 20):
        xc, pc_ = x0.copy(), np.zeros(32)
        sink = MemorySink()
        res_c = trace_function(CK.fft, (xc, pc_), sinks=[sink], mode="auto", chunk_records=chunk_records)
        assert res_c.info.mode == "compiled" and capsys.readouterr().err == ""
        got = _relative(sink.regions[0][2], (xc, pc_))
        for col in COLUMN_NAMES:
            assert np.array_equal(got[col], ref[col]), (chunk_records, col)
        assert np.array_equal(xc, xi) and np.array_equal(pc_, pi_)


class Holder:
    def __init__(self):
        self.real = 2.5


def test_real_of_other_objects_is_an_attribute_load_in_interpreted_mode():
    res, rows, _ = trace(CK.real_of, (Holder(), 7), "interpreted")
    assert res.value == 9.5
    (obj_load, int_move, add) = rows
    assert obj_load[:2] == ("attr:real", L) and obj_load[8] == 8 and obj_load[7] >= rt.SYNTHETIC_BASE
    assert int_move == ("attr:real", Op.MOVE, 0, 2, 0, 0, 5, 0, 0, -1)
    assert add[:2] == ("binop:+", Op.FP64_ALU)  # 2.5 + 7: Python floats compute in double


VALUES = [True, 3, np.int8(-2), np.uint64(5), 2.5, np.float32(1.5), 1 + 2j, np.complex64(1j), np.zeros(2, np.int16),
          np.zeros((2, 2)), np.zeros(3, np.float32), np.zeros(2, np.complex128), np.zeros(2, bool), (1, 2)]


@pytest.mark.parametrize("v", VALUES, ids=lambda v: f"{type(v).__name__}-{getattr(v, 'dtype', '')}")
def test_value_kinds_agree_between_python_and_numba_types(v):
    k = rt.value_kind(v)
    assert k == rt.numba_value_kind(numba.typeof(v))
    codes = rt.KindCodes(range(10, 10 + rt.N_VALUE_KINDS))
    assert codes.of(v) == 10 + k and codes.of(v) == 10 + k  # the second time from the cache (scalars)
    single = getattr(v, "dtype", None) in (np.float32, np.complex64)  # float32 and complex64: single precision
    if isinstance(v, np.ndarray):
        assert k == {"i": rt.VK_INT_ARRAY, "u": rt.VK_INT_ARRAY, "b": rt.VK_INT_ARRAY,
                     "f": rt.VK_FLOAT32_ARRAY if single else rt.VK_FLOAT_ARRAY,
                     "c": rt.VK_COMPLEX64_ARRAY if single else rt.VK_COMPLEX_ARRAY}[v.dtype.kind]
    else:
        assert k == (rt.VK_OBJECT if isinstance(v, tuple)
                     else (rt.VK_COMPLEX64 if single else rt.VK_COMPLEX) if np.iscomplexobj(v)
                     else (rt.VK_FLOAT32 if single else rt.VK_FLOAT) if isinstance(v, (float, np.floating))
                     else rt.VK_INT)


def test_kind_ops_give_double_kinds_their_fp64_class():
    # (int, float, complex, int array, float array, complex array, object) -> the eleven kinds
    ops = (Op.INT_ALU, Op.FP_ALU, Op.FP_SPECIAL, Op.INT_ALU, Op.FP_ALU, Op.FP_SPECIAL, Op.INT_ALU)
    assert rt.kind_ops(ops) == (Op.INT_ALU, Op.FP64_ALU, Op.FP64_SPECIAL, Op.INT_ALU, Op.FP64_ALU, Op.FP64_SPECIAL,
                                Op.INT_ALU, Op.FP_ALU, Op.FP_SPECIAL, Op.FP_ALU, Op.FP_SPECIAL)
    with pytest.raises(ValueError, match="kind_ops needs the classes of 7 kinds, got 2"):
        rt.kind_ops(ops[:2])
