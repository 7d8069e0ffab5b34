"""Recording primitives called by instrumented code, and the buffers they write into.

Two implementations of the same primitives, one per execution mode; both encode a record the same way,
as one int64 ``code = size << 40 | pc << 6 | has_addr << 5 | op << 1 | taken`` (plus the address of a
memory record), and both add the register columns only when decoding (every register of a record is a
static property of its pc, looked up in the program's per-pc table). The op field has four bits (classes
0..15); a double-precision record (FP64_X, 16..19) is coded as its single-precision class FP_X with the
``taken`` bit set (no floating-point record is ever taken), which decoding turns into FP64_X, taken 0
(:func:`code_of`, :func:`fp64_code`). Precision is decided where int and float variants are: from the
operand or result types (:data:`FLOAT_TYPES` in interpreted mode, Numba's types in compiled mode):

* interpreted: :class:`InterpretedBuffer`. Instrumented code appends one Python int per record to a list
  (a negative value ``-2 - tid`` marks a change of logical thread) and, for memory records, the address to
  a second list (``m1``/``m2``: fast paths for one and two integer indices into a NumPy array).
  :meth:`~InterpretedBuffer.flush` decodes the lists with :func:`decode_interpreted` (Numba) into a
  :class:`~profiler.trace.TraceChunk`.
* compiled: :class:`CompiledBuffer`. The instrumented function is compiled with Numba; ``_rec`` writes
  the code (``recm`` also the address, at the same row; ``_recs`` several records at once) into
  preallocated arrays with no capacity check, ``_tidpt`` notes changes of logical thread on the side, and
  check points (function entry, loop iteration heads) call back into Python (``numba.objmode``) when the
  buffer reached its level, where the buffer goes to the sinks as a :class:`CodedChunk` (each column decoded
  when first read); the compiled code then goes on from row 0. The primitives are Numba intrinsics that
  write through raw addresses (compiled code gets the buffer as one address, see
  :meth:`CompiledBuffer.entry_args`): a record costs a few machine instructions and little compile time.
"""

from __future__ import annotations

import array
import threading
import weakref

import numba
import numpy as np
from llvmlite import ir as llvm_ir
from numba import types
from numba.core import cgutils
from numba.core import errors as numba_errors
from numba.extending import intrinsic

from core.trace_schema import COLUMN_DTYPES, COLUMN_NAMES, FP64_OFFSET, RECORD_COLUMNS, Op, TraceError, fp64_class

from .trace import TraceChunk

# ----------------------------------------------------------------------------------------------------------
# record codes of the interpreted buffer

PC_SHIFT = 6
SIZE_SHIFT = 40
HAS_ADDR = 1 << 5
PC_MASK = (1 << (SIZE_SHIFT - PC_SHIFT)) - 1
OP_FIELD = 0b11110

#: base of the synthetic address space for list elements and object attributes (above user space)
SYNTHETIC_BASE = 0x7F00_0000_0000
SYNTHETIC_SPAN = 1 << 24  # bytes reserved per container object
#: the largest size an allocation record carries (the code's size field has 23 bits); a larger array's record
#: says this many bytes
MAX_ALLOC_SIZE = (1 << (63 - SIZE_SHIFT)) - 1

#: where the trace puts NumPy arrays (docs/trace-format.md, "Addresses"): the allocation whose lowest byte is
#: at CPU address ``low`` starts at ``DEVICE_BASE + DEVICE_SPREAD * low`` (4 KiB-aligned, and apart from every
#: other allocation by at least its own size: allocations never share a page), so a byte at ``a`` is at
#: ``a + device_delta(low)``
DEVICE_BASE = 1 << 60
DEVICE_SPREAD = 1 << 12


def device_delta(low: int) -> int:
    """What to add to a CPU address inside the allocation whose lowest byte is at ``low``."""
    return DEVICE_BASE + (DEVICE_SPREAD - 1) * int(low)


def _lowest_byte(a: np.ndarray) -> tuple[int, int]:
    """The lowest and one past the highest byte address an array spans (its data pointer for no elements)."""
    lo = hi = a.__array_interface__["data"][0]
    if a.size:
        for n, st in zip(a.shape, a.strides):
            if st < 0:
                lo += (n - 1) * st
            else:
                hi += (n - 1) * st
        hi += a.itemsize
    return lo, hi


#: id(owner) -> (weak reference to the owner, low, high): the interpreted mode meets the views of one array
#: again and again (a row per iteration)
_OWNERS: dict[int, tuple] = {}


def allocation_of(a: np.ndarray) -> tuple[int, int]:
    """The CPU bytes ``[low, high)`` of the allocation that holds ``a``: its owner's (``.base`` followed to the
    array that owns the memory, or to the last array before a buffer of another kind)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    hit = _OWNERS.get(id(a))
    if hit is not None and hit[0]() is a:
        return hit[1], hit[2]
    lo, hi = _lowest_byte(a)
    if len(_OWNERS) > 4096:
        _OWNERS.clear()
    _OWNERS[id(a)] = (weakref.ref(a), lo, hi)
    return lo, hi


def device_address(a: np.ndarray) -> int:
    """The trace's address of ``a``'s first element (``a.ctypes.data`` in the trace's address space)."""
    return a.__array_interface__["data"][0] + device_delta(allocation_of(a)[0])


def allocation_table(objs, depth: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The allocations of the arrays among ``objs`` (and in tuples, lists and dict values in them, ``depth``
    levels deep): ``(low, high, delta)`` sorted by ``low``, one entry per allocation (an allocation that
    overlaps an earlier one is left out)."""
    seen: dict[int, int] = {}

    def walk(o, d):
        if isinstance(o, np.ndarray):
            lo, hi = allocation_of(o)
            if hi > lo:
                seen[lo] = max(seen.get(lo, hi), hi)
        elif d > 0 and isinstance(o, (tuple, list)):
            for v in o:
                walk(v, d - 1)
        elif d > 0 and isinstance(o, dict):
            for v in o.values():
                walk(v, d - 1)

    for o in objs:
        walk(o, depth)
    low, high = [], []
    for lo in sorted(seen):
        if not high or lo >= high[-1]:
            low.append(lo)
            high.append(seen[lo])
    low_a = np.array(low, np.int64)
    return low_a, np.array(high, np.int64), np.array([device_delta(v) for v in low], np.int64)


_NO_ALLOCATIONS = allocation_table(())


@numba.njit(cache=True, nogil=True)
def to_device(addr, n, low, high, delta):
    """Map the CPU addresses among ``addr[:n]`` that lie in one of the allocations ``[low[i], high[i])``
    (sorted, disjoint) to the trace's addresses (``+ delta[i]``); others (0, addresses already mapped,
    synthetic addresses) stay."""
    m = low.shape[0]
    if m == 0:
        return
    first, end = low[0], high[m - 1]
    if m <= 8:  # a few arguments: count the allocations starting at or below a (no branch to mispredict)
        for j in range(n):
            a = addr[j]
            if a >= first and a < end:
                k = 0
                for i in range(1, m):
                    k += numba.int64(low[i] <= a)
                if a < high[k]:
                    addr[j] = a + delta[k]
        return
    last = 0
    for j in range(n):
        a = addr[j]
        if a < first or a >= end:
            continue
        if not (low[last] <= a < high[last]):
            lo, hi = 0, m  # the last allocation starting at or below a
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if low[mid] <= a:
                    lo = mid
                else:
                    hi = mid
            if a >= high[lo]:
                continue
            last = lo
        addr[j] = a + delta[last]


#: ndarray attributes that are metadata (registers on a real machine), not memory reads
ARRAY_META = frozenset({"shape", "size", "ndim", "strides", "dtype", "itemsize", "nbytes", "T", "flags", "ctypes"})


#: the code bit that marks a floating-point record as double precision (its ``taken`` bit)
FP64_BIT = 1


def code_of(pc: int, op: int, taken: int = 0) -> int:
    """The interpreted-buffer code of a record without address (see module docstring): FP64_X is coded as
    FP_X with the taken bit set."""
    op = int(op)
    if op >= Op.FP64_ALU:
        return (pc << PC_SHIFT) | ((op - FP64_OFFSET) << 1) | FP64_BIT
    return (pc << PC_SHIFT) | (op << 1) | int(taken)


@numba.njit(cache=True, inline="always")
def fp64_code(code):
    """``code`` as a double-precision record when it is a floating-point one (op field FP_ALU..FP_SPECIAL,
    4..7: the taken bit set), else unchanged."""
    o = (code >> 1) & 15
    if o >= 4 and o <= 7:
        return code | FP64_BIT
    return code


@numba.njit(cache=True, inline="always")
def decode_op(c):
    """(op, taken) of a record code: a floating-point op field (4..7) with the taken bit is FP64 (16..19,
    taken 0); branch-free."""
    o = (c >> 1) & 15
    t = c & 1
    f = t & np.int64((o >> 2) == 1)
    return o + FP64_OFFSET * f, t ^ f


# Precision of a value by its type (interpreted mode), as bits that combine by OR over a site's probes:
# 0 not floating point, 1 single precision (NumPy float32, float16, complex64), 2 a NumPy double (float64,
# complex128, longdouble), 4 a Python float or complex (double, but "weak" in NumPy's promotion: with a
# single-precision NumPy value the operation computes in single precision, NEP 50).
P_SINGLE, P_DOUBLE, P_WEAK = 1, 2, 4
#: combined probe bits -> which variant of a site's record: 0 integer, 1 single, 2 double precision
PRECISION_OF_BITS = (0, 1, 2, 2, 2, 1, 2, 2)


def precision_bits(t: type, weak: bool = True) -> int:
    """Precision bits of a scalar type (see above); ``weak=False`` counts a Python float as a NumPy double
    (the result of an operation that computed it in double: ``math.sqrt``, ``float()``)."""
    if issubclass(t, np.generic):
        if issubclass(t, (np.floating, np.complexfloating)):
            single = t(0).real.dtype.itemsize <= 4
            return P_SINGLE if single else P_DOUBLE
        return 0
    if issubclass(t, (float, complex)):
        return P_WEAK if weak else P_DOUBLE
    return 0


def array_precision(a: np.ndarray) -> int:
    """Precision bits of an array's elements (float32/float16/complex64: single; other floats: double)."""
    k = a.dtype.kind
    if k in "fc":
        return P_SINGLE if a.dtype.type(0).real.dtype.itemsize <= 4 else P_DOUBLE
    return 0


class _FloatTypes(dict):
    """type -> precision bits of values of that type (:func:`precision_bits`), cached."""

    def __init__(self, weak: bool = True) -> None:
        super().__init__()
        self.weak = weak

    def __missing__(self, t):
        v = self[t] = precision_bits(t, self.weak)
        return v


#: precision bits by type; :data:`RESULT_FLOAT_TYPES` the same for a site's result (a Python float is a double)
FLOAT_TYPES = _FloatTypes()
RESULT_FLOAT_TYPES = _FloatTypes(weak=False)


def precision_codes(code_int: int, code_single: int, code_double: int) -> tuple[int, ...]:
    """The record code of each combined precision bits value (index 0..7, :data:`PRECISION_OF_BITS`)."""
    codes = (code_int, code_single, code_double)
    return tuple(codes[PRECISION_OF_BITS[b]] for b in range(8))


class TypeCodes(dict):
    """Per-site map: type of the probed value -> record code (integer, single- or double-precision variant of
    the operation)."""

    def __init__(self, code_int: int, code_single: int, code_double: int) -> None:
        super().__init__()
        self.codes = precision_codes(code_int, code_single, code_double)

    def __missing__(self, t):
        v = self[t] = self.codes[FLOAT_TYPES[t]]
        return v


# value kinds: the class of some records depends on whether the operand is an integer, a float or a complex
# number, a NumPy array of one of those, or another object (``abs`` of a complex is a hypot, ``.real`` of a
# complex is a register move but of an array a view), and a float or complex one's precision (VK_FLOAT,
# VK_COMPLEX and their arrays: double; the *32 / *64 kinds: float32 or float16, complex64). Both modes
# classify the same way.
(VK_INT, VK_FLOAT, VK_COMPLEX, VK_INT_ARRAY, VK_FLOAT_ARRAY, VK_COMPLEX_ARRAY, VK_OBJECT, VK_FLOAT32,
 VK_COMPLEX64, VK_FLOAT32_ARRAY, VK_COMPLEX64_ARRAY) = range(11)
N_VALUE_KINDS = 11
_ARRAY_KIND = {VK_INT: VK_INT_ARRAY, VK_FLOAT: VK_FLOAT_ARRAY, VK_COMPLEX: VK_COMPLEX_ARRAY,
               VK_FLOAT32: VK_FLOAT32_ARRAY, VK_COMPLEX64: VK_COMPLEX64_ARRAY, VK_OBJECT: VK_INT_ARRAY}
#: the kinds whose values compute in double / in single precision
DOUBLE_KINDS = (VK_FLOAT, VK_COMPLEX, VK_FLOAT_ARRAY, VK_COMPLEX_ARRAY)
SINGLE_KINDS = (VK_FLOAT32, VK_COMPLEX64, VK_FLOAT32_ARRAY, VK_COMPLEX64_ARRAY)


def kind_ops(ops) -> tuple:
    """The operation class of each value kind from the seven of a number's kind (int, float, complex, their
    arrays, other object): the single-precision kinds take the float/complex ones' classes as given, the
    double-precision kinds their FP64 classes (:func:`core.trace_schema.fp64_class`)."""
    ops = tuple(ops)
    if len(ops) != 7:
        raise ValueError(f"kind_ops needs the classes of 7 kinds, got {len(ops)}")
    out = list(ops) + [ops[VK_FLOAT], ops[VK_COMPLEX], ops[VK_FLOAT_ARRAY], ops[VK_COMPLEX_ARRAY]]
    for k in DOUBLE_KINDS:
        out[k] = fp64_class(out[k])
    return tuple(out)


def scalar_kind(t: type) -> int:
    """Value kind of a Python or NumPy scalar type (anything else: :data:`VK_OBJECT`)."""
    if issubclass(t, (complex, np.complexfloating)):
        return VK_COMPLEX64 if precision_bits(t) == P_SINGLE else VK_COMPLEX
    if issubclass(t, (float, np.floating)):
        return VK_FLOAT32 if precision_bits(t) == P_SINGLE else VK_FLOAT
    if issubclass(t, (int, np.integer, np.bool_)):
        return VK_INT
    return VK_OBJECT


def value_kind(v) -> int:
    """Value kind of a value (interpreted mode); arrays by their dtype."""
    if isinstance(v, np.ndarray):
        return _ARRAY_KIND[scalar_kind(v.dtype.type)]
    return scalar_kind(type(v))


def numba_precision(t) -> int:
    """0 (not floating point), 1 (single: float32, float16, complex64) or 2 (double) of a Numba type (arrays by
    their dtype)."""
    if isinstance(t, types.Array):
        t = t.dtype
    if isinstance(t, types.Float):
        return 1 if t.bitwidth <= 32 else 2
    if isinstance(t, types.Complex):
        return 1 if t.bitwidth <= 64 else 2
    return 0


def numba_value_kind(t) -> int:
    """Value kind of a Numba type (compiled mode), as :func:`value_kind` classifies the values."""
    if isinstance(t, types.Array):
        return _ARRAY_KIND[numba_value_kind(t.dtype)]
    if isinstance(t, types.Complex):
        return VK_COMPLEX64 if numba_precision(t) == 1 else VK_COMPLEX
    if isinstance(t, types.Float):
        return VK_FLOAT32 if numba_precision(t) == 1 else VK_FLOAT
    if isinstance(t, (types.Integer, types.Boolean)):
        return VK_INT
    return VK_OBJECT


class KindCodes(dict):
    """Per-site record codes by value kind (interpreted mode): ``of(v)`` is the code for operand ``v``."""

    def __init__(self, codes) -> None:
        super().__init__()
        if len(codes) != N_VALUE_KINDS:
            raise ValueError(f"KindCodes needs {N_VALUE_KINDS} codes, got {len(codes)}")
        self.codes = tuple(int(c) for c in codes)

    def of(self, v) -> int:
        c = self.get(type(v))  # scalars and objects are cached by type; arrays (kind by dtype) are not
        if c is None:
            k = value_kind(v)
            c = self.codes[k]
            if not isinstance(v, np.ndarray):
                self[type(v)] = c
        return c


class InterpretedBuffer:
    """Record buffer of the interpreted mode. Instrumented code uses ``L.append``, :meth:`mem`, :meth:`attr`."""

    def __init__(self, tracer, cap: int) -> None:
        self.tracer = tracer
        self.cap = int(cap)
        self.L: list[int] = []
        self.A: list[int] = []
        self.tid = -1
        self.lib = None  # the library-call primitives (profiler.libcalls.InterpretedLib), set by the session
        self._arrays: dict[int, tuple] = {}
        self._arrays1: dict[int, tuple] = {}
        self._arrays2: dict[int, tuple] = {}
        self.m1 = self.make_m1()
        self.m2 = self.make_m2()
        self._synth: dict[int, tuple] = {}
        self._slots: dict = {}
        self._next_synth = SYNTHETIC_BASE

    def make_m1(self):
        """Fast primitive for a one-index access ``obj[i]``: ``m1(code, obj, i)``."""
        arrays, L, A, slow = self._arrays1, self.L, self.A, self.mem
        la, aa = L.append, A.append

        def m1(code, obj, i):
            info = arrays.get(id(obj))
            if info is None or info[0] is not obj or type(i) is not int:
                if type(obj) is np.ndarray and obj.ndim == 1 and type(i) is int:
                    if len(arrays) > 4096:
                        arrays.clear()
                    arrays[id(obj)] = (obj, device_address(obj), obj.strides[0], obj.shape[0],
                                       HAS_ADDR | (obj.itemsize << SIZE_SHIFT))
                else:
                    return slow(code, obj, i)
                info = arrays[id(obj)]
            if i < 0:
                i += info[3]
            la(code | info[4])
            aa(info[1] + i * info[2])

        return m1

    def make_m2(self):
        """Fast primitive for a two-index access ``obj[i, j]``: ``m2(code, obj, i, j)`` (else :meth:`mem`)."""
        arrays, L, A, slow = self._arrays2, self.L, self.A, self.mem
        la, aa = L.append, A.append

        def m2(code, obj, i, j):
            info = arrays.get(id(obj))
            if info is None or info[0] is not obj or type(i) is not int or type(j) is not int:
                if type(obj) is np.ndarray and obj.ndim == 2 and type(i) is int and type(j) is int:
                    if len(arrays) > 4096:
                        arrays.clear()
                    arrays[id(obj)] = (obj, device_address(obj), obj.strides[0], obj.strides[1],
                                       obj.shape[0], obj.shape[1], HAS_ADDR | (obj.itemsize << SIZE_SHIFT))
                else:
                    return slow(code, obj, (i, j))
                info = arrays[id(obj)]
            if i < 0:
                i += info[4]
            if j < 0:
                j += info[5]
            la(code | info[6])
            aa(info[1] + i * info[2] + j * info[3])

        return m2

    # -- memory primitives --------------------------------------------------------------------------------
    def _array_info(self, a):
        if len(self._arrays) > 4096:
            self._arrays.clear()
        info = (a, device_address(a), a.strides, a.shape, a.itemsize, a.ndim)
        self._arrays[id(a)] = info
        return info

    def _synthetic_base(self, obj) -> int:
        info = self._synth.get(id(obj))
        if info is None or info[0] is not obj:
            info = (obj, self._next_synth)
            self._next_synth += SYNTHETIC_SPAN
            self._synth[id(obj)] = info
        return info[1]

    def _slot(self, key) -> int:
        s = self._slots.get(key)
        if s is None:
            s = self._slots[key] = len(self._slots)
        return s

    def mem(self, code: int, obj, idx) -> None:
        """Record the LOAD/STORE ``code`` of ``obj[idx]`` (after the access happened).

        NumPy element: its address in the trace (:func:`device_address`) and itemsize. Sub-array (view) result:
        one OTHER record. List element: synthetic address, 8 bytes. Tuple element: nothing (tuples are values,
        kept in registers). Dict or other container: synthetic address per key, 8 bytes.
        """
        if isinstance(obj, np.ndarray):
            info = self._arrays.get(id(obj))
            if info is None or info[0] is not obj:
                info = self._array_info(obj)
            _, base, strides, shape, itemsize, ndim = info
            if type(idx) is tuple:
                if len(idx) != ndim:
                    self.L.append((code & ~OP_FIELD) | (Op.OTHER << 1))
                    return
                addr = base
                for k in range(ndim):
                    i = idx[k]
                    if not (type(i) is int or isinstance(i, np.integer)):
                        self.L.append((code & ~OP_FIELD) | (Op.OTHER << 1))
                        return
                    if i < 0:
                        i += shape[k]
                    addr += int(i) * strides[k]
            else:
                if ndim != 1 or not (type(idx) is int or isinstance(idx, np.integer)):
                    self.L.append((code & ~OP_FIELD) | (Op.OTHER << 1))
                    return
                i = int(idx)
                if i < 0:
                    i += shape[0]
                addr = base + i * strides[0]
            self.L.append(code | HAS_ADDR | (itemsize << SIZE_SHIFT))
            self.A.append(addr)
            return
        if type(obj) is tuple:
            return
        base = self._synthetic_base(obj)
        if isinstance(obj, list):
            i = int(idx)
            if i < 0:
                i += len(obj)
            addr = base + 8 * i
        else:
            addr = base + 8 * self._slot(("k", idx if _hashable(idx) else id(idx)))
        self.L.append(code | HAS_ADDR | (8 << SIZE_SHIFT))
        self.A.append(addr)

    def alloc(self, code: int, obj) -> None:
        """The allocation record ``code`` (OTHER) of a new array ``obj`` (``np.empty``): its address and size
        (at most :data:`MAX_ALLOC_SIZE`); of anything else the plain record."""
        if type(obj) is np.ndarray:
            self.L.append(code | HAS_ADDR | (min(obj.nbytes, MAX_ALLOC_SIZE) << SIZE_SHIFT))
            self.A.append(device_address(obj))
        else:
            self.L.append(code)

    def attr(self, code: int, obj, name: str) -> None:
        """Record the LOAD/STORE ``code`` of attribute ``obj.name``: synthetic address, 8 bytes.

        Metadata of NumPy arrays (shape, strides, ...) is not a memory access and records nothing.
        """
        if isinstance(obj, np.ndarray) and name in ARRAY_META:
            return
        addr = self._synthetic_base(obj) + 8 * self._slot(("a", name))
        self.L.append(code | HAS_ADDR | (8 << SIZE_SHIFT))
        self.A.append(addr)

    def kattr(self, codes: "KindCodes", obj, name: str) -> None:
        """Record ``obj.real`` / ``obj.imag`` (``codes``: per value kind): a MOVE of a number, an OTHER (view)
        of an array; of another object an attribute LOAD as :meth:`attr` records it."""
        c = codes.of(obj)
        if c == codes.codes[VK_OBJECT]:  # the LOAD code: distinct from the MOVE and OTHER codes
            self.attr(c, obj, name)
        else:
            self.L.append(c)

    # -- flushing -------------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Decode the buffered records into chunks of at most ``cap`` records and hand them to the tracer."""
        if not self.L:
            return
        codes = np.frombuffer(array.array("q", self.L), dtype=np.int64)
        addrs = np.frombuffer(array.array("q", self.A), dtype=np.int64) if self.A else np.zeros(1, np.int64)
        self.L.clear()
        self.A.clear()
        n = codes.shape[0]
        cols = tuple(np.empty(n, dtype) for _, dtype in RECORD_COLUMNS)
        m, self.tid = decode_interpreted(codes, addrs, self.tracer.program.reg_table, self.tid, *cols)
        chunk = TraceChunk(**{name: arr[:m] for name, arr in zip(COLUMN_NAMES, cols)})
        for part in chunk.split(self.cap) if len(chunk) > self.cap else (chunk,):
            self.tracer.deliver(part)


@numba.njit(cache=True, nogil=True)
def decode_interpreted(codes, addrs, regs, tid, pc, op, taken, src1, src2, src3, dst, addr, size, tids):
    """Decode the interpreted buffer (codes with inline thread markers ``-2 - tid``; one address per code with
    ``HAS_ADDR``, in order) into record columns.

    Parameters
    ----------
    codes, addrs : int64 arrays
        The buffer's two lists.
    regs : int32 array (n_pc, 4)
        src1, src2, src3, dst of every static id.
    tid : int
        Logical thread before the first code.
    pc, op, taken, src1, src2, src3, dst, addr, size, tids : arrays
        Output columns (at least as long as ``codes``).

    Returns
    -------
    (int, int)
        Records written and the logical thread after the last code.
    """
    j = 0
    q = 0
    for k in range(codes.shape[0]):
        c = codes[k]
        if c < 0:
            tid = -2 - c
            continue
        p = (c >> PC_SHIFT) & PC_MASK
        pc[j] = p
        op[j], taken[j] = decode_op(c)
        size[j] = c >> SIZE_SHIFT
        if c & HAS_ADDR:
            addr[j] = addrs[q]
            q += 1
        else:
            addr[j] = 0
        tids[j] = tid
        j += 1
    for i in range(j):
        p = pc[i]
        src1[i] = regs[p, 0]
        src2[i] = regs[p, 1]
        src3[i] = regs[p, 2]
        dst[i] = regs[p, 3]
    return j, tid


_WARM: set = set()


def warm_up(mode: str) -> None:
    """Load (from Numba's cache) or compile the decoder of ``mode``'s buffer, so that the first traced region
    of a process does not count that time in its wall time."""
    if mode in _WARM:
        return
    cols = tuple(np.empty(1, dtype) for _, dtype in RECORD_COLUMNS)
    one = np.zeros(1, np.int64)
    regs = np.zeros((1, 4), np.int32)
    if mode == "compiled":
        expand_codes(one, one, 0, one, one, 0, regs, -1, *cols)
        out = dict(zip(COLUMN_NAMES, cols))  # the lazy decoders of CodedChunk, called one by one
        decode_fields(one, one, 0, out["pc"], out["op"], out["taken"], out["addr"], out["size"])
        decode_regs(one, 0, regs, out["src1"], out["src2"], out["src3"], out["dst"])
        walk_tids(one, one, 0, 0, -1, _NO_TIDS)
    else:
        decode_interpreted(one[:0], one, regs, -1, *cols)
    _WARM.add(mode)


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


# ----------------------------------------------------------------------------------------------------------
# compiled mode

_ACTIVE: list = []  # stack of CompiledBuffer being filled by compiled code

#: records per chunk of the compiled mode (at most ``chunk_records``): small enough that the compact buffer
#: and the decoded columns stay in the last-level cache, large enough that the call back into Python per
#: chunk (about 9 us) is a few percent of the tracer's time
COMPILED_CHUNK_RECORDS = 1 << 17


def _flush_active() -> None:
    _ACTIVE[-1].flush_full()


#: (exception, buffer, its level) of a hand-over that raised inside a library-call kernel
_PENDING: list = []


def _flush_in_kernel() -> None:
    """:func:`_flush_active` for a library-call kernel (:mod:`profiler.libcalls`), which compiled code
    reaches through a C entry point that cannot carry a Python exception: an exception of the sinks (or a
    Ctrl-C) is kept, and the level ``S[1]`` set to -1 tells the kernel to stop (it returns row -1); the
    caller then calls :func:`raise_pending`."""
    buf = _ACTIVE[-1]
    try:
        buf.flush_full()
    except BaseException as exc:  # noqa: BLE001 - re-raised by raise_pending
        _PENDING.append((exc, buf, int(buf.S[1])))
        buf.S[1] = -1


def raise_pending() -> None:
    """Raise the exception :func:`_flush_in_kernel` kept (the buffer's level restored first)."""
    exc, buf, level = _PENDING.pop()
    buf.S[1] = level
    raise exc


#: entries of a compiled buffer's state array before the library-call counters (see :class:`CompiledBuffer`)
S_HEAD = 9


class CompiledBuffer:
    """Record buffer of the compiled mode.

    Compiled code writes a compact stream: ``B[0]`` (int64) gets one code per record in the interpreted
    buffer's layout (``size << 40 | pc << 6 | has_addr << 5 | op << 1 | taken``) and, for memory records,
    ``B[1]`` the address at the same row; a change of logical thread appends (row, tid) to ``B[2]``, ``B[3]``.
    ``S[0]`` = rows written, ``S[1]`` = the fill level at which a check point hands the buffer over,
    ``S[2]`` = thread changes written, ``S[3:7]`` = the addresses of ``B[0]`` to ``B[3]``, ``S[7]`` = the length
    of ``S``, ``S[8]`` = the length of ``B[0]`` (after these :data:`S_HEAD`, ``extra`` counters of library
    calls, see :mod:`profiler.libcalls`): compiled code gets
    only S's address (:meth:`entry_args`) and reads and writes through it, so no array crosses a call of
    the instrumented functions (their signatures, call sites and Python wrapper stay as small as the user's
    own). Compiled code keeps the row in a local variable, writes records
    without any capacity check and checks the level only at check points (function entry, after each call,
    at the head of each loop iteration). Between two check points every record site runs at most once, so
    ``slack`` rows (the program's number of record sites) past the level suffice. When a check point finds
    the level reached (and at the end) the stream goes to the sinks as a :class:`CodedChunk`, whose columns
    are decoded when a sink first reads them (the registers from the program's per-pc table).
    """

    def __init__(self, tracer, cap: int, slack: int = 0, extra: int = 0) -> None:
        self.tracer = tracer
        self.chunk = max(1, min(int(cap), COMPILED_CHUNK_RECORDS))
        slack = max(0, int(slack))
        level = max(1, self.chunk - slack)
        self.cap = level + slack + 1
        self.B = (np.empty(self.cap, np.int64), np.empty(self.cap, np.int64),
                  np.empty(self.cap + 1, np.int64), np.empty(self.cap + 1, np.int64))
        head = [0, level, 0, *(b.ctypes.data for b in self.B), S_HEAD + max(0, int(extra)), self.cap]
        self.S = np.zeros(head[7], dtype=np.int64)  # after the head: library-call counters (libcalls.py)
        self.S[:S_HEAD] = head
        self.tid = -1
        self._out = None
        #: the allocations of the arrays compiled code got from Python (:func:`allocation_table`): their CPU
        #: addresses become the trace's when decoded (arrays compiled code allocates are mapped where recorded)
        self.allocations = _NO_ALLOCATIONS
        self.generation = 0  # chunks handed over so far (see CodedChunk)
        self.decode_lock = threading.Lock()  # one decoding of a CodedChunk's column group at a time

    def _emit(self, n: int, k: int) -> None:
        if n <= 0 and k <= 0:
            return
        if self._out is None:
            self._out = {name: np.empty(self.cap, dtype) for name, dtype in RECORD_COLUMNS}
            self._regs = np.ascontiguousarray(self.tracer.program.reg_table, dtype=np.int32)
        tid0 = self.tid
        filt = getattr(self.tracer, "filter", None)
        if filt is not None and n <= self.chunk:  # a sampled trace: count every row, decode only the kept ones
            n, k, self.tid = filt.filter_coded(self, n, k, tid0)
            if n:
                try:
                    filt.deliver_kept(CodedChunk(self, n, k, tid0))
                finally:
                    self.generation += 1
            return
        if n <= self.chunk:
            self.tid, top = walk_tids(self.B[2], self.B[3], k, n, tid0, _NO_TIDS)
            try:
                self.tracer.deliver(CodedChunk(self, n, k, tid0), max_tid=top)
            finally:
                self.generation += 1  # the chunk's undecoded columns are gone once compiled code goes on
            return
        out = self._out
        self.tid, _ = expand_codes(self.B[0], self.B[1], n, self.B[2], self.B[3], k, self._regs, tid0,
                                   *(out[name] for name in COLUMN_NAMES))
        to_device(out["addr"], n, *self.allocations)
        for start in range(0, n, self.chunk):
            stop = min(n, start + self.chunk)
            self.tracer.deliver(TraceChunk(**{name: arr[start:stop] for name, arr in out.items()}))

    def entry_args(self) -> tuple[int, int]:
        """The first two arguments of a compiled instrumented function (``_pc_B``, ``_pc_S``): 0 (unused) and
        the address of ``S``. The buffer must stay alive while compiled code runs (the tracer holds it)."""
        return 0, int(self.S.ctypes.data)

    def flush_full(self) -> None:
        """Called from compiled code (objmode) at a check point: hands the rows over and resets S[0] and S[2]
        (compiled code sets its local row and count to 0 after the call)."""
        n, k = int(self.S[0]), int(self.S[2])
        self.S[0] = self.S[2] = 0
        self._emit(n, k)

    def flush(self) -> None:
        n, k = int(self.S[0]), int(self.S[2])
        self.S[0] = self.S[2] = 0
        self._emit(n, k)

    def __enter__(self):
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        _ACTIVE.pop()
        return False


_NO_TIDS = np.empty(0, np.int64)


class CodedChunk(TraceChunk):
    """A chunk of the compiled mode, handed to the sinks in the compact form compiled code wrote.

    The columns are decoded from the code words (and addresses, thread changes, per-pc register table) in
    three groups (pc/op/taken/addr/size, the four registers, tid), each the first time a sink reads one of
    its columns, into the buffer's own column arrays, and kept for the other sinks: the tracer's cost stays
    that of the compact stream, and a sink pays only for the groups it reads (the register columns, say,
    only when something computes dependences). Like every chunk a tracer hands over,
    it is valid during ``consume`` only; reading a column that was not decoded by then raises
    :class:`~core.trace_schema.TraceError` instead of returning records of a later chunk.
    """

    def __init__(self, buf: "CompiledBuffer", n: int, k: int, tid0: int) -> None:
        self.__dict__.update(_buf=buf, _n=n, _k=k, _tid0=tid0, _gen=buf.generation)

    def __len__(self) -> int:
        return self._n

    def __getattr__(self, name: str):
        # called only for attributes not in __dict__: a column not decoded yet
        d = self.__dict__
        buf = d.get("_buf")
        if buf is None or name not in COLUMN_DTYPES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if buf.generation != d["_gen"]:
            raise TraceError(f"trace column {name!r} read after the tracer reused its buffer: a sink must copy "
                             "the columns it keeps before consume() returns")
        with buf.decode_lock:  # sinks may read a chunk from several threads (the feature engine does)
            if name in d:  # another thread decoded the group meanwhile
                return d[name]
            n, out, codes = d["_n"], buf._out, buf.B[0]
            if name in _FIELD_GROUP:  # the five columns held in the code word: one pass
                decode_fields(codes, buf.B[1], n, out["pc"], out["op"], out["taken"], out["addr"], out["size"])
                to_device(out["addr"], n, *buf.allocations)
                group = _FIELD_GROUP
            elif name == "tid":
                walk_tids(buf.B[2], buf.B[3], d["_k"], n, d["_tid0"], out["tid"])
                group = ("tid",)
            else:
                decode_regs(codes, n, buf._regs, out["src1"], out["src2"], out["src3"], out["dst"])
                group = _REG_GROUP
            for g in group:  # published only once decoded: a reader finds a whole column or takes the lock
                d[g] = out[g][:n]
            return d[name]


#: the columns a CodedChunk decodes together
_FIELD_GROUP = ("pc", "op", "taken", "addr", "size")
_REG_GROUP = ("src1", "src2", "src3", "dst")


@numba.njit(cache=True, nogil=True)
def decode_fields(codes, addrs, n, pc, op, taken, addr, size):
    """The five columns held in the first ``n`` code words: pc, op, taken, size, and the address (from
    ``addrs`` where the code says the record is a memory access, else 0)."""
    for j in range(n):
        c = codes[j]
        pc[j] = (c >> PC_SHIFT) & PC_MASK
        op[j], taken[j] = decode_op(c)
        size[j] = c >> SIZE_SHIFT
        addr[j] = addrs[j] if c & HAS_ADDR else 0


@numba.njit(cache=True, nogil=True)
def decode_regs(codes, n, regs, src1, src2, src3, dst):
    """The four register columns, looked up in the per-pc table ``regs`` (n_pc x 4)."""
    for j in range(n):
        p = numba.uint32((codes[j] >> PC_SHIFT) & PC_MASK)  # unsigned: no negative-index wrap-around code
        src1[j] = regs[p, 0]
        src2[j] = regs[p, 1]
        src3[j] = regs[p, 2]
        dst[j] = regs[p, 3]


@numba.njit(cache=True, nogil=True)
def walk_tids(trow, tval, k, n, tid, tids):
    """Logical threads of rows ``0..n-1``: thread ``tid`` before the first change, ``tval[m]`` from row
    ``trow[m]`` on (rows non-decreasing; changes past row ``n`` are ignored). Writes them to ``tids`` unless
    it is empty (then only walks). Returns the thread after the last row and the largest thread of the rows
    (-1 when none)."""
    fill = tids.shape[0] > 0
    j = 0
    top = -1
    for m in range(k):
        stop = trow[m]
        if stop > n:  # written after the last check point (the region raised): not part of the trace
            break
        if j < stop and tid > top:
            top = tid
        if fill:
            while j < stop:
                tids[j] = tid
                j += 1
        else:
            j = max(j, stop)
        tid = tval[m]
    if j < n and tid > top:
        top = tid
    if fill:
        while j < n:
            tids[j] = tid
            j += 1
    return tid, top


@numba.njit(cache=True, nogil=True)
def expand_codes(codes, addrs, n, trow, tval, k, regs, tid, pc, op, taken, src1, src2, src3, dst, addr, size, tids):
    """Decode ``codes[:n]`` (and ``addrs`` at the rows of memory records) into all ten record columns.

    Parameters
    ----------
    codes, addrs : int64 arrays
        The compact stream (see :class:`CompiledBuffer`).
    n : int
        Rows of the stream to decode.
    trow, tval : int64 arrays
        The first ``k`` changes of logical thread (see :func:`walk_tids`).
    k : int
        Number of thread changes.
    regs : int32 array (n_pc, 4)
        src1, src2, src3, dst of every static id.
    tid : int
        Logical thread before the first row.
    pc, op, taken, src1, src2, src3, dst, addr, size, tids : arrays
        Output columns (at least ``n`` long).

    Returns
    -------
    (int, int)
        The logical thread after the last row, and the largest thread of the rows (-1 when none).
    """
    decode_fields(codes, addrs, n, pc, op, taken, addr, size)
    decode_regs(codes, n, regs, src1, src2, src3, dst)
    return walk_tids(trow, tval, k, n, tid, tids)


# The recording primitives below are Numba intrinsics: each call site becomes a few LLVM instructions emitted
# in place (a store and an add, or a constant chosen at typing time). As inline="always" Numba functions they
# were copied into the caller's Numba IR at every site, and typed, lowered and optimised there: that made the
# instrumented compile several times slower than the plain one.


_I64 = llvm_ir.IntType(64)


def _store_row(builder, base, row, value):
    """``((int64*) base)[row] = value``."""
    builder.store(value, builder.gep(builder.inttoptr(base, _I64.as_pointer()), [row], inbounds=True))


@intrinsic
def _rec(typingctx, c0, p, code):
    """Write one record code at row ``p`` of the code column (address ``c0``; no bounds check: see
    :class:`CompiledBuffer`); returns the next row."""

    def codegen(context, builder, sig, args):
        base, row, c = args
        _store_row(builder, base, row, c)
        return builder.add(row, row.type(1))

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def _recf(typingctx, c0, p, v, op_int, op_single, op_double):
    """:func:`_rec` of ``op_double`` if ``v`` is a double-precision float (or complex128; arrays by dtype),
    ``op_single`` if it is a float32/float16/complex64, else ``op_int``, decided from the Numba type at compile
    time."""
    pick = 3 + numba_precision(v)

    def codegen(context, builder, sig, args):
        _store_row(builder, args[0], args[1], args[pick])
        return builder.add(args[1], args[1].type(1))

    return types.int64(types.int64, types.int64, v, types.int64, types.int64, types.int64), codegen


@intrinsic
def _recf2(typingctx, c0, p, v, w, op_int, op_single, op_double):
    """As :func:`_recf` for two values: the wider precision of the two (compiled code promotes a float32
    operand to double when the other is a double, a float literal included)."""
    pick = 4 + max(numba_precision(v), numba_precision(w))

    def codegen(context, builder, sig, args):
        _store_row(builder, args[0], args[1], args[pick])
        return builder.add(args[1], args[1].type(1))

    return types.int64(types.int64, types.int64, v, w, types.int64, types.int64, types.int64), codegen


@intrinsic
def _recb(typingctx, c0, p, code, cond):
    """:func:`_rec` of a branch: ``code + 1`` when ``cond`` is true (Python truth), else ``code``."""
    if not _truth_ok(typingctx, cond):
        return None

    def codegen(context, builder, sig, args):
        truth = context.is_true(builder, sig.args[3], args[3])
        _store_row(builder, args[0], args[1], builder.add(args[2], builder.zext(truth, _I64)))
        return builder.add(args[1], args[1].type(1))

    return types.int64(types.int64, types.int64, types.int64, cond), codegen


@intrinsic
def _check(typingctx, sp, p, k, lim):
    """Check point: :func:`_save`, then whether the buffer reached its level (``p >= lim``)."""

    def codegen(context, builder, sig, args):
        base, row, cnt, level = args
        _store_row(builder, base, _I64(0), row)
        _store_row(builder, base, _I64(2), cnt)
        return builder.icmp_signed(">=", row, level)

    return types.boolean(types.int64, types.int64, types.int64, types.int64), codegen


@intrinsic
def _save(typingctx, sp, p, k):
    """Check point: ``S[0] = p`` (rows written), ``S[2] = k`` (thread changes written); ``sp`` is S's address."""

    def codegen(context, builder, sig, args):
        base, row, cnt = args
        _store_row(builder, base, _I64(0), row)
        _store_row(builder, base, _I64(2), cnt)
        return context.get_dummy_value()

    return types.none(types.int64, types.int64, types.int64), codegen


def _load_row(builder, base, row):
    """``((int64*) base)[row]``."""
    return builder.load(builder.gep(builder.inttoptr(base, _I64.as_pointer()), [row], inbounds=True))


@intrinsic
def _ld(typingctx, sp, j):
    """``S[j]`` (``sp``: S's address)."""

    def codegen(context, builder, sig, args):
        return _load_row(builder, args[0], args[1])

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _tidpt(typingctx, sp, k, p, tid):
    """The logical thread is ``tid`` from row ``p`` on (a later change at the same row replaces it);
    ``k`` thread changes are written (to ``B[2]``, ``B[3]``, whose addresses are ``S[5]``, ``S[6]``; ``sp``:
    S's address); returns the new count. Branch-free: with ``k > 0`` and the last change at row ``p`` it
    overwrites that change, else it appends."""

    def codegen(context, builder, sig, args):
        sp_, cnt, row, t = args
        rows = builder.inttoptr(_load_row(builder, sp_, _I64(5)), _I64.as_pointer())
        tids = builder.inttoptr(_load_row(builder, sp_, _I64(6)), _I64.as_pointer())
        one, zero = _I64(1), _I64(0)
        has = builder.icmp_signed(">", cnt, zero)
        last = builder.select(has, builder.sub(cnt, one), zero)  # rows[0] exists (the arrays are cap + 1 long)
        same = builder.and_(has, builder.icmp_signed("==", builder.load(builder.gep(rows, [last], inbounds=True)), row))
        slot = builder.select(same, last, cnt)
        builder.store(row, builder.gep(rows, [slot], inbounds=True))
        builder.store(t, builder.gep(tids, [slot], inbounds=True))
        return builder.select(same, cnt, builder.add(cnt, one))

    return types.int64(types.int64, types.int64, types.int64, types.int64), codegen


@numba.njit(cache=True)
def _full():
    """Check point found the buffer at its level: hand it to the sinks (through Python, which resets S[0] and
    S[2])."""
    with numba.objmode():
        _flush_active()


def device_addr(context, builder, ary, addr):
    """The trace's address of CPU address ``addr`` inside array ``ary`` (a ``context.make_array`` value): an
    array Numba allocated (no parent object, a MemInfo) is an allocation starting at its MemInfo's data
    (:func:`device_delta`, computed in place); an array from Python keeps its CPU address, which
    :func:`to_device` maps when decoding (:attr:`CompiledBuffer.allocations`), and so does a constant."""
    if not context.enable_nrt:
        return addr
    null = llvm_ir.Constant(ary.meminfo.type, None)
    own = builder.and_(builder.icmp_unsigned("!=", ary.meminfo, null),
                       builder.icmp_unsigned("==", ary.parent, llvm_ir.Constant(ary.parent.type, None)))
    slot = cgutils.alloca_once_value(builder, addr)
    with builder.if_then(own):
        low = builder.ptrtoint(context.nrt.meminfo_data(builder, ary.meminfo), _I64)
        builder.store(builder.add(addr, builder.add(_I64(DEVICE_BASE), builder.mul(low, _I64(DEVICE_SPREAD - 1)))),
                      slot)
    return builder.load(slot)


def _is_int(t) -> bool:
    return isinstance(t, (types.Integer, types.Boolean))


def _mem_part(obj, idx):
    """Typing of the memory record of ``obj[idx]``: None for a tuple element (no record: tuples are values),
    else ``emit(context, builder, base0, base1, row, code, arr, index, obj_type, idx_type)`` that writes the
    record at ``row``: an array element's code with the access size and its address (negative indices
    wrapped), or one OTHER record for a sub-array (fewer integer indices than dimensions, or a slice)."""
    if isinstance(obj, types.BaseTuple):
        return None
    if not isinstance(obj, types.Array):
        raise numba_errors.TypingError("portcast compiled tracing supports element access of NumPy arrays and tuples, "
                                       f"not {obj}")
    if isinstance(idx, types.BaseTuple):
        element = all(_is_int(t) for t in idx.types) and len(idx.types) == obj.ndim
    else:
        element = _is_int(idx) and obj.ndim == 1
    if not element:
        def other(context, builder, base0, base1, row, c, arr, index, aryty, idxty):
            _store_row(builder, base0, row, builder.or_(builder.and_(c, _I64(~OP_FIELD)), _I64(int(Op.OTHER) << 1)))

        return other

    def emit(context, builder, base0, base1, row, c, arr, index, aryty, idxty):
        ary = context.make_array(aryty)(context, builder, value=arr)
        shapes = cgutils.unpack_tuple(builder, ary.shape, aryty.ndim)
        strides = cgutils.unpack_tuple(builder, ary.strides, aryty.ndim)
        if isinstance(idxty, types.BaseTuple):
            parts = [(builder.extract_value(index, k), t) for k, t in enumerate(idxty.types)]
        else:
            parts = [(index, idxty)]
        addr = builder.ptrtoint(ary.data, _I64)
        for k, (val, ty) in enumerate(parts):
            i = context.cast(builder, val, ty, types.int64)
            if isinstance(ty, types.Integer) and ty.signed:
                i = builder.select(builder.icmp_signed("<", i, _I64(0)), builder.add(i, shapes[k]), i)
            addr = builder.add(addr, builder.mul(i, strides[k]))
        itemsize = context.get_abi_sizeof(context.get_data_type(aryty.dtype))
        _store_row(builder, base0, row, builder.or_(c, _I64(HAS_ADDR | (itemsize << SIZE_SHIFT))))
        _store_row(builder, base1, row, device_addr(context, builder, ary, addr))

    return emit


def _truth_ok(typingctx, cond) -> bool:
    """Whether ``bool(cond)`` is defined for the Numba type ``cond``."""
    if isinstance(cond, (types.Boolean, types.Integer, types.Float)):
        return True
    return typingctx.resolve_function_type(typingctx.resolve_value_type(bool), (cond,), {}) is not None


@intrinsic
def recm(typingctx, c0, c1, p, code, obj, idx):
    """Memory record of ``obj[idx]`` at row ``p`` (``c0``, ``c1``: addresses of the code and address columns;
    see :func:`_mem_part`). Returns the next row (the same row for a tuple element)."""
    part = _mem_part(obj, idx)
    sig = types.int64(types.int64, types.int64, types.int64, types.int64, obj, idx)
    if part is None:
        return sig, lambda context, builder, sig, args: args[2]

    def codegen(context, builder, sig, args):
        base0, base1, row, c, arr, index = args
        part(context, builder, base0, base1, row, c, arr, index, sig.args[4], sig.args[5])
        return builder.add(row, row.type(1))

    return sig, codegen


@intrinsic
def recalloc(typingctx, c0, c1, p, code, obj):
    """The allocation record ``code`` (OTHER) of a new array ``obj`` at row ``p``: its address and size (at
    most :data:`MAX_ALLOC_SIZE`), as :meth:`InterpretedBuffer.alloc`; of anything else the plain record."""
    sig = types.int64(types.int64, types.int64, types.int64, types.int64, obj)
    if not isinstance(obj, types.Array):
        def plain(context, builder, sig, args):
            _store_row(builder, args[0], args[2], args[3])
            return builder.add(args[2], _I64(1))

        return sig, plain

    def codegen(context, builder, sig, args):
        base0, base1, row, c, arr = args
        ary = context.make_array(sig.args[4])(context, builder, value=arr)
        nbytes = builder.mul(ary.nitems, ary.itemsize)
        big = builder.icmp_signed(">", nbytes, _I64(MAX_ALLOC_SIZE))
        nbytes = builder.select(big, _I64(MAX_ALLOC_SIZE), nbytes)
        code = builder.or_(builder.or_(c, _I64(HAS_ADDR)), builder.shl(nbytes, _I64(SIZE_SHIFT)))
        _store_row(builder, base0, row, code)
        _store_row(builder, base1, row, device_addr(context, builder, ary, builder.ptrtoint(ary.data, _I64)))
        return builder.add(row, _I64(1))

    return sig, codegen


#: items of :func:`_recs`, by layout letter: how many values each takes
_RECS_WIDTH = {"c": 1, "f": 4, "F": 5, "b": 2, "m": 3, "k": 1 + N_VALUE_KINDS}


@intrinsic
def _recs(typingctx, c0, c1, p, layout, items):
    """Several records at rows ``p, p + 1, ...`` in one call (the rewriter merges the records of a straight
    run of statements, see :func:`profiler.instrument.merge_records`): ``layout`` (a literal string) has one
    letter per record, ``items`` the records' values one after the other: ``c`` a code; ``f`` a value and the
    integer, single- and double-precision codes (:func:`_recf`); ``F`` two values and the codes (:func:`_recf2`);
    ``b`` a code and a condition (:func:`_recb`); ``m`` a code, an array and an index (:func:`recm`); ``k`` a
    value and the codes of the value kinds (:func:`kcode`). Returns the next row."""
    letters = getattr(layout, "literal_value", None)
    if letters is None or not isinstance(items, types.BaseTuple):
        return None  # Numba then retries with the literal string
    tys = list(items.types)
    plan, k = [], 0
    for letter in letters:
        width = _RECS_WIDTH[letter]
        if k + width > len(tys):
            raise numba_errors.TypingError(f"_recs: layout {letters!r} needs more than {len(tys)} values")
        if letter == "f":
            plan.append(("pick", k + 1 + numba_precision(tys[k])))
        elif letter == "F":
            plan.append(("pick", k + 2 + max(numba_precision(tys[k]), numba_precision(tys[k + 1]))))
        elif letter == "b":
            if not _truth_ok(typingctx, tys[k + 1]):
                return None
            plan.append(("branch", k))
        elif letter == "k":
            plan.append(("pick", k + 1 + numba_value_kind(tys[k])))
        elif letter == "m":
            part = _mem_part(tys[k + 1], tys[k + 2])
            if part is not None:
                plan.append(("mem", k, part))
        else:
            plan.append(("pick", k))
        k += width
    if k != len(tys):
        raise numba_errors.TypingError(f"_recs: layout {letters!r} does not use all {len(tys)} values")

    def codegen(context, builder, sig, args):
        base0, base1, row, _, values = args
        ity = sig.args[4]

        def value(j, to_int=True):
            v = builder.extract_value(values, j)
            return context.cast(builder, v, ity.types[j], types.int64) if to_int else v

        for step in plan:
            if step[0] == "pick":
                _store_row(builder, base0, row, value(step[1]))
            elif step[0] == "branch":
                j = step[1]
                truth = context.is_true(builder, ity.types[j + 1], value(j + 1, False))
                _store_row(builder, base0, row, builder.add(value(j), builder.zext(truth, _I64)))
            else:
                j, part = step[1], step[2]
                part(context, builder, base0, base1, row, value(j), value(j + 1, False), value(j + 2, False),
                     ity.types[j + 1], ity.types[j + 2])
            row = builder.add(row, row.type(1))
        return row

    return types.int64(types.int64, types.int64, types.int64, layout, items), codegen


@intrinsic
def meta(typingctx, obj, name):
    """Compiled mode: accepts attribute reads of arrays (no record); any other attribute read cannot be traced
    compiled (an attribute Numba does not know is reported in Numba's words)."""
    if isinstance(obj, types.Array):
        return types.none(obj, name), lambda context, builder, sig, args: context.get_dummy_value()
    attr = getattr(name, "literal_value", None)
    if attr is None:  # no match: Numba then retries with the literal string
        return None
    from numba.core.registry import cpu_target

    typing = cpu_target.typing_context
    typing.refresh()
    if typing.resolve_getattr(obj, attr) is None:  # in Numba's own words, as if the tracer were not there
        raise numba_errors.TypingError(f"Unknown attribute '{attr}' of type {obj}")
    raise numba_errors.TypingError(f"portcast compiled tracing does not trace attribute '{attr}' of {obj}")


def _pick_code(k: int):
    def codegen(context, builder, sig, args):
        codes_ty = sig.args[1]
        return context.cast(builder, builder.extract_value(args[1], k), codes_ty[k], types.int64)

    return codegen


@intrinsic
def kcode(typingctx, v, codes):
    """``codes[value kind of v]`` (decided from the Numba type at compile time; see :func:`numba_value_kind`)."""
    return types.int64(v, codes), _pick_code(numba_value_kind(v))


@intrinsic
def kattr(typingctx, obj, codes):
    """:func:`kcode` for ``obj.real`` / ``obj.imag``: numbers and arrays only."""
    k = numba_value_kind(obj)
    if k == VK_OBJECT:
        raise numba_errors.TypingError(f"portcast compiled tracing does not trace attributes of {obj}")
    return types.int64(obj, codes), _pick_code(k)
