"""Recording primitives called by instrumented code, and the buffers they write into.

Two implementations of the same primitives, one per execution mode:

* interpreted: :class:`InterpretedBuffer`. Instrumented code appends one Python int per record to a list
  (``code = size << 40 | pc << 6 | has_addr << 5 | op << 1 | taken``; a negative value ``-2 - tid`` marks a
  change of logical thread) and, for memory records, the address to a second list. :meth:`flush` decodes
  the lists with NumPy into a :class:`~profiler.trace.TraceChunk`; the register columns come from the
  program's static per-pc tables (every register of a record is a static property of its pc).
* compiled: :class:`CompiledBuffer`. The instrumented function is compiled with Numba; ``_rec`` writes
  the ten columns of a record straight into preallocated arrays and, when they are full, calls back into
  Python (``numba.objmode``) to hand the chunk to the sinks, then goes on from the start of the arrays.
"""

from __future__ import annotations

import numpy as np
import numba
from numba import types
from numba.core import errors as numba_errors
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .trace import COLUMN_NAMES, RECORD_COLUMNS, Op, TraceChunk

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

#: ndarray attributes that are metadata (registers on a real machine), not memory reads
ARRAY_META = frozenset({"shape", "size", "ndim", "strides", "dtype", "itemsize", "nbytes", "T", "flags", "ctypes"})


def code_of(pc: int, op: int, taken: int = 0) -> int:
    """The interpreted-buffer code of a record without address (see module docstring)."""
    return (pc << PC_SHIFT) | (int(op) << 1) | int(taken)


class _FloatTypes(dict):
    """type -> 1 if values of that type are floating point (float, complex, NumPy floats), else 0."""

    def __missing__(self, t):
        v = 1 if issubclass(t, (float, complex, np.floating, np.complexfloating)) else 0
        self[t] = v
        return v


FLOAT_TYPES = _FloatTypes()


class TypeCodes(dict):
    """Per-site map: type of the probed value -> record code (int or float variant of the operation)."""

    def __init__(self, code_int: int, code_fp: int) -> None:
        super().__init__()
        self.codes = (code_int, code_fp)

    def __missing__(self, t):
        v = self[t] = self.codes[FLOAT_TYPES[t]]
        return v


class InterpretedBuffer:
    """Record buffer of the interpreted mode. Instrumented code uses ``L.append``, :meth:`mem`, :meth:`attr`."""

    def __init__(self, tracer, cap: int) -> None:
        self.tracer = tracer
        self.cap = int(cap)
        self.L: list[int] = []
        self.A: list[int] = []
        self.tid = -1
        self._arrays: dict[int, tuple] = {}
        self._arrays1: dict[int, tuple] = {}
        self.m1 = self.make_m1()
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
                    arrays[id(obj)] = (obj, obj.__array_interface__["data"][0], obj.strides[0], obj.shape[0],
                                       HAS_ADDR | (obj.itemsize << SIZE_SHIFT))
                else:
                    return slow(code, obj, i)
                info = arrays[id(obj)]
            if i < 0:
                i += info[3]
            la(code | info[4])
            aa(info[1] + i * info[2])

        return m1

    # -- memory primitives --------------------------------------------------------------------------------
    def _array_info(self, a):
        if len(self._arrays) > 4096:
            self._arrays.clear()
        info = (a, a.__array_interface__["data"][0], a.strides, a.shape, a.itemsize, a.ndim)
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

        NumPy element: true address and itemsize. Sub-array (view) result: one OTHER record. List element:
        synthetic address, 8 bytes. Tuple element: nothing (tuples are values, kept in registers). Dict or
        other container: synthetic address per key, 8 bytes.
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

    def attr(self, code: int, obj, name: str) -> None:
        """Record the LOAD/STORE ``code`` of attribute ``obj.name``: synthetic address, 8 bytes.

        Metadata of NumPy arrays (shape, strides, ...) is not a memory access and records nothing.
        """
        if isinstance(obj, np.ndarray) and name in ARRAY_META:
            return
        addr = self._synthetic_base(obj) + 8 * self._slot(("a", name))
        self.L.append(code | HAS_ADDR | (8 << SIZE_SHIFT))
        self.A.append(addr)

    # -- flushing -------------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Decode the buffered records into chunks of at most ``cap`` records and hand them to the tracer."""
        if not self.L:
            return
        codes = np.array(self.L, dtype=np.int64)
        addrs = np.array(self.A, dtype=np.int64) if self.A else np.zeros(0, np.int64)
        self.L.clear()
        self.A.clear()
        markers = codes < 0
        n = codes.shape[0]
        if markers.any():
            last = np.where(markers, np.arange(n), -1)
            np.maximum.accumulate(last, out=last)
            tids = np.where(last >= 0, -2 - codes[np.maximum(last, 0)], self.tid)
            self.tid = int(tids[-1])
            keep = ~markers
            codes = codes[keep]
            tids = tids[keep]
        else:
            tids = np.full(n, self.tid, dtype=np.int64)
        pc = ((codes >> PC_SHIFT) & PC_MASK).astype(np.int32)
        has_addr = (codes & HAS_ADDR) != 0
        addr = np.zeros(codes.shape[0], np.int64)
        addr[has_addr] = addrs
        prog = self.tracer.program
        chunk = TraceChunk(
            pc=pc,
            op=((codes >> 1) & 15).astype(np.uint8),
            taken=(codes & 1).astype(np.uint8),
            src1=prog.reg_src1[pc],
            src2=prog.reg_src2[pc],
            src3=prog.reg_src3[pc],
            dst=prog.reg_dst[pc],
            addr=addr,
            size=(codes >> SIZE_SHIFT).astype(np.int32),
            tid=tids.astype(np.int64),
        )
        for part in chunk.split(self.cap) if len(chunk) > self.cap else (chunk,):
            self.tracer.deliver(part)


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


# ----------------------------------------------------------------------------------------------------------
# compiled mode

_ACTIVE: list = []  # stack of CompiledBuffer being filled by compiled code


def _flush_active() -> None:
    _ACTIVE[-1].flush_full()


class CompiledBuffer:
    """Record buffer of the compiled mode: the ten record columns ``B`` (a tuple of arrays) and ``S``.

    ``S[0]`` = records written, ``S[1]`` = capacity, ``S[2]`` = current logical thread id. Compiled code keeps
    the write position in a local variable and stores it to ``S[0]`` at calls, loop back edges and returns.
    """

    def __init__(self, tracer, cap: int) -> None:
        self.tracer = tracer
        self.cap = int(cap)
        self.B = tuple(np.empty(self.cap, dtype) for _, dtype in RECORD_COLUMNS)
        self.S = np.array([0, self.cap, -1], dtype=np.int64)

    def _chunk(self, n: int) -> TraceChunk:
        return TraceChunk(**{name: arr[:n] for name, arr in zip(COLUMN_NAMES, self.B)})

    def flush_full(self) -> None:
        """Called from compiled code (objmode) when the buffer is full; compiled code then resets S[0]."""
        self.tracer.deliver(self._chunk(int(self.S[0])))

    def flush(self) -> None:
        n = int(self.S[0])
        if n:
            self.tracer.deliver(self._chunk(n))
        self.S[0] = 0

    def __enter__(self):
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        _ACTIVE.pop()
        return False


@numba.njit(cache=True, inline="always")
def _rec(B, S, p, cap, tid, pc, op, taken, s1, s2, s3, d, addr, size):
    """Write one record at row ``p`` of the columns; returns the next row (0 after handing a full buffer
    to the sinks)."""
    B[0][p] = pc
    B[1][p] = op
    B[2][p] = taken
    B[3][p] = s1
    B[4][p] = s2
    B[5][p] = s3
    B[6][p] = d
    B[7][p] = addr
    B[8][p] = size
    B[9][p] = tid
    p += 1
    if p >= cap:
        S[0] = p
        _full(S)
        return 0
    return p


@numba.njit(cache=True)
def _full(S):
    with numba.objmode():
        _flush_active()
    S[0] = 0


def recm(B, S, p, cap, tid, pc, op, s1, s2, s3, d, obj, idx):  # pragma: no cover - replaced by the overload in njit code
    """Memory record of ``obj[idx]`` (compiled mode; see the overload)."""
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


@intrinsic
def data_ptr(typingctx, arr):
    """Address of an array's first element as int64 (no ctypes object, no reference counting)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        return builder.ptrtoint(ary.data, cgutils.intp_t)

    return types.int64(arr), codegen


_TUPLE_IMPLS: dict = {}


def _tuple_index_impl(nd: int):
    """``recm`` for an ``nd``-tuple of integers (unrolled: the tuple may mix integer types)."""
    impl = _TUPLE_IMPLS.get(nd)
    if impl is None:
        lines = ["def impl(B, S, p, cap, tid, pc, op, s1, s2, s3, d, obj, idx):", "    addr = data_ptr(obj)"]
        for k in range(nd):
            lines += [f"    i{k} = idx[{k}]", f"    if i{k} < 0:", f"        i{k} += obj.shape[{k}]",
                      f"    addr += i{k} * obj.strides[{k}]"]
        lines.append("    return _rec(B, S, p, cap, tid, pc, op, 0, s1, s2, s3, d, addr, obj.itemsize)")
        ns = {"_rec": _rec, "data_ptr": data_ptr}
        exec("\n".join(lines), ns)
        impl = _TUPLE_IMPLS[nd] = ns["impl"]
    return impl


def _is_int(t) -> bool:
    return isinstance(t, (types.Integer, types.Boolean))


@overload(recm)
def _ol_recm(B, S, p, cap, tid, pc, op, s1, s2, s3, d, obj, idx):
    if isinstance(obj, types.BaseTuple):
        def impl(B, S, p, cap, tid, pc, op, s1, s2, s3, d, obj, idx):
            return p

        return impl
    if not isinstance(obj, types.Array):
        raise numba_errors.TypingError(f"portcast compiled tracing supports element access of NumPy arrays and tuples, not {obj}")
    if isinstance(idx, types.BaseTuple):
        ints = all(_is_int(t) for t in idx.types)
        if ints and len(idx.types) == obj.ndim:
            return _tuple_index_impl(obj.ndim)
    elif _is_int(idx) and obj.ndim == 1:
        def impl(B, S, p, cap, tid, pc, op, s1, s2, s3, d, obj, idx):
            i = idx
            if i < 0:
                i += obj.shape[0]
            return _rec(B, S, p, cap, tid, pc, op, 0, s1, s2, s3, d, data_ptr(obj) + i * obj.strides[0], obj.itemsize)

        return impl

    other = int(Op.OTHER)

    def impl(B, S, p, cap, tid, pc, op, s1, s2, s3, d, obj, idx):
        return _rec(B, S, p, cap, tid, pc, other, 0, s1, s2, s3, d, 0, 0)

    return impl


def fop(v, op_int, op_fp):  # pragma: no cover - replaced by the overload in njit code
    """``op_fp`` if ``v`` is floating point else ``op_int`` (decided from the Numba type at compile time)."""
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


def fop2(v, w, op_int, op_fp):  # pragma: no cover
    """As :func:`fop` for a binary operation: floating point if either operand is."""
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


def _is_fp(t) -> bool:
    if isinstance(t, types.Array):
        t = t.dtype
    return isinstance(t, (types.Float, types.Complex))


@overload(fop, inline="always")
def _ol_fop(v, op_int, op_fp):
    if _is_fp(v):
        return lambda v, op_int, op_fp: op_fp
    return lambda v, op_int, op_fp: op_int


@overload(fop2, inline="always")
def _ol_fop2(v, w, op_int, op_fp):
    if _is_fp(v) or _is_fp(w):
        return lambda v, w, op_int, op_fp: op_fp
    return lambda v, w, op_int, op_fp: op_int


def meta(obj):  # pragma: no cover
    """Compiled mode: accepts array metadata reads; any other attribute read cannot be traced compiled."""
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


@overload(meta, jit_options={"cache": True})
def _ol_meta(obj):
    if isinstance(obj, types.Array):
        return lambda obj: None
    raise numba_errors.TypingError(f"portcast compiled tracing does not trace attributes of {obj}")
