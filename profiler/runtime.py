"""Recording primitives called by instrumented code, and the buffers they write into.

Two implementations of the same primitives, one per execution mode; both encode a record the same way,
as one int64 ``code = size << 40 | pc << 6 | has_addr << 5 | op << 1 | taken`` (plus the address of a
memory record), and both add the register columns only when decoding (every register of a record is a
static property of its pc, looked up in the program's per-pc table):

* interpreted: :class:`InterpretedBuffer`. Instrumented code appends one Python int per record to a list
  (a negative value ``-2 - tid`` marks a change of logical thread) and, for memory records, the address to
  a second list (``m1``/``m2``: fast paths for one and two integer indices into a NumPy array).
  :meth:`~InterpretedBuffer.flush` decodes the lists with :func:`decode_interpreted` (Numba) into a
  :class:`~profiler.trace.TraceChunk`.
* compiled: :class:`CompiledBuffer`. The instrumented function is compiled with Numba; ``_rec`` writes
  the code (``_reca`` also the address, at the same row) into preallocated arrays with no capacity check,
  ``_tidpt`` notes changes of logical thread on the side, and check points (function entry, after calls,
  loop iteration heads) call back into Python (``numba.objmode``) when the buffer reached its level, where
  the buffer goes to the sinks as a :class:`CodedChunk` (each column decoded when first read); the compiled
  code then goes on from row 0.
"""

from __future__ import annotations

import array
import threading

import numpy as np
import numba
from numba import types
from numba.core import errors as numba_errors
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .trace import COLUMN_DTYPES, COLUMN_NAMES, RECORD_COLUMNS, Op, TraceChunk, TraceError

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


# value kinds: the class of some records depends on whether the operand is an integer, a float or a complex
# number, a NumPy array of one of those, or another object (``abs`` of a complex is a hypot, ``.real`` of a
# complex is a register move but of an array a view). Both modes classify the same way.
VK_INT, VK_FLOAT, VK_COMPLEX, VK_INT_ARRAY, VK_FLOAT_ARRAY, VK_COMPLEX_ARRAY, VK_OBJECT = range(7)
N_VALUE_KINDS = 7


def scalar_kind(t: type) -> int:
    """Value kind of a Python or NumPy scalar type (anything else: :data:`VK_OBJECT`)."""
    if issubclass(t, (complex, np.complexfloating)):
        return VK_COMPLEX
    if issubclass(t, (float, np.floating)):
        return VK_FLOAT
    if issubclass(t, (int, np.integer, np.bool_)):
        return VK_INT
    return VK_OBJECT


def value_kind(v) -> int:
    """Value kind of a value (interpreted mode); arrays by their dtype."""
    if isinstance(v, np.ndarray):
        k = scalar_kind(v.dtype.type)
        return VK_INT_ARRAY + (k if k <= VK_COMPLEX else VK_INT)
    return scalar_kind(type(v))


def numba_value_kind(t) -> int:
    """Value kind of a Numba type (compiled mode), as :func:`value_kind` classifies the values."""
    if isinstance(t, types.Array):
        k = numba_value_kind(t.dtype)
        return VK_INT_ARRAY + (k if k <= VK_COMPLEX else VK_INT)
    if isinstance(t, types.Complex):
        return VK_COMPLEX
    if isinstance(t, types.Float):
        return VK_FLOAT
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
                    arrays[id(obj)] = (obj, obj.__array_interface__["data"][0], obj.strides[0], obj.strides[1],
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
        op[j] = (c >> 1) & 15
        taken[j] = c & 1
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


class CompiledBuffer:
    """Record buffer of the compiled mode.

    Compiled code writes a compact stream: ``B[0]`` (int64) gets one code per record in the interpreted
    buffer's layout (``size << 40 | pc << 6 | has_addr << 5 | op << 1 | taken``) and, for memory records,
    ``B[1]`` the address at the same row; a change of logical thread appends (row, tid) to ``B[2]``, ``B[3]``.
    ``S[0]`` = rows written, ``S[1]`` = the fill level at which a check point hands the buffer over,
    ``S[2]`` = thread changes written. Compiled code keeps the row in a local variable, writes records
    without any capacity check and checks the level only at check points (function entry, after each call,
    at the head of each loop iteration). Between two check points every record site runs at most once, so
    ``slack`` rows (the program's number of record sites) past the level suffice. When a check point finds
    the level reached (and at the end) the stream goes to the sinks as a :class:`CodedChunk`, whose columns
    are decoded when a sink first reads them (the registers from the program's per-pc table).
    """

    def __init__(self, tracer, cap: int, slack: int = 0) -> None:
        self.tracer = tracer
        self.chunk = max(1, min(int(cap), COMPILED_CHUNK_RECORDS))
        slack = max(0, int(slack))
        level = max(1, self.chunk - slack)
        self.cap = level + slack + 1
        self.B = (np.empty(self.cap, np.int64), np.empty(self.cap, np.int64),
                  np.empty(self.cap + 1, np.int64), np.empty(self.cap + 1, np.int64))
        self.S = np.array([0, level, 0], dtype=np.int64)
        self.tid = -1
        self._out = None
        self.generation = 0  # chunks handed over so far (see CodedChunk)
        self.decode_lock = threading.Lock()  # one decoding of a CodedChunk's column group at a time

    def _emit(self, n: int, k: int) -> None:
        if n <= 0 and k <= 0:
            return
        if self._out is None:
            self._out = {name: np.empty(self.cap, dtype) for name, dtype in RECORD_COLUMNS}
            self._regs = np.ascontiguousarray(self.tracer.program.reg_table, dtype=np.int32)
        tid0 = self.tid
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
        for start in range(0, n, self.chunk):
            stop = min(n, start + self.chunk)
            self.tracer.deliver(TraceChunk(**{name: arr[start:stop] for name, arr in out.items()}))

    def flush_full(self) -> None:
        """Called from compiled code (objmode) at a check point; compiled code then resets S[0] and S[2]."""
        self._emit(int(self.S[0]), int(self.S[2]))

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
    :class:`~profiler.trace.TraceError` instead of returning records of a later chunk.
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
        op[j] = (c >> 1) & 15
        taken[j] = c & 1
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


@numba.njit(cache=True, inline="always")
def _rec(B, p, code):
    """Write one record code at row ``p``; returns the next row."""
    B[0][numba.uint64(p)] = code  # unsigned: no negative-index wrap-around code
    return p + 1


@numba.njit(cache=True, inline="always")
def _reca(B, p, code, addr):
    """:func:`_rec` for a memory record: the code and the address."""
    u = numba.uint64(p)  # unsigned: no negative-index wrap-around code
    B[0][u] = code
    B[1][u] = addr
    return p + 1


@numba.njit(cache=True, inline="always")
def _tidpt(B, k, p, tid):
    """The logical thread is ``tid`` from row ``p`` on (a later change at the same row replaces it);
    ``k`` thread changes are written; returns the new count."""
    if k > 0 and B[2][k - 1] == p:
        B[3][k - 1] = tid
        return k
    B[2][k] = p
    B[3][k] = tid
    return k + 1


@numba.njit(cache=True)
def _full(S):
    """Check point found the buffer at its level: hand it to the sinks (through Python)."""
    with numba.objmode():
        _flush_active()
    S[0] = 0
    S[2] = 0


def recm(B, p, code, obj, idx):  # pragma: no cover - replaced by the overload in njit code
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
        lines = ["def impl(B, p, code, obj, idx):", "    addr = data_ptr(obj)"]
        for k in range(nd):
            lines += [f"    i{k} = idx[{k}]", f"    if i{k} < 0:", f"        i{k} += obj.shape[{k}]",
                      f"    addr += i{k} * obj.strides[{k}]"]
        lines.append(f"    return _reca(B, p, code | {HAS_ADDR} | (obj.itemsize << {SIZE_SHIFT}), addr)")
        ns = {"_reca": _reca, "data_ptr": data_ptr}
        exec("\n".join(lines), ns)
        impl = _TUPLE_IMPLS[nd] = ns["impl"]
    return impl


def _is_int(t) -> bool:
    return isinstance(t, (types.Integer, types.Boolean))


@overload(recm)
def _ol_recm(B, p, code, obj, idx):
    if isinstance(obj, types.BaseTuple):
        def impl(B, p, code, obj, idx):
            return p

        return impl
    if not isinstance(obj, types.Array):
        raise numba_errors.TypingError(f"portcast compiled tracing supports element access of NumPy arrays and tuples, not {obj}")
    if isinstance(idx, types.BaseTuple):
        ints = all(_is_int(t) for t in idx.types)
        if ints and len(idx.types) == obj.ndim:
            return _tuple_index_impl(obj.ndim)
    elif _is_int(idx) and obj.ndim == 1:
        def impl(B, p, code, obj, idx):
            i = idx
            if i < 0:
                i += obj.shape[0]
            return _reca(B, p, code | HAS_ADDR | (obj.itemsize << SIZE_SHIFT), data_ptr(obj) + i * obj.strides[0])

        return impl

    other = ~OP_FIELD
    other_op = int(Op.OTHER) << 1

    def impl(B, p, code, obj, idx):
        return _rec(B, p, (code & other) | other_op)

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


def meta(obj, name):  # pragma: no cover
    """Compiled mode: accepts array metadata reads; any other attribute read cannot be traced compiled."""
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


@overload(meta, jit_options={"cache": True})
def _ol_meta(obj, name):
    if isinstance(obj, types.Array):
        return lambda obj, name: None
    attr = getattr(name, "literal_value", None)
    if attr is None:  # no match: Numba then retries with the literal string
        return None
    from numba.core.registry import cpu_target

    typing = cpu_target.typing_context
    typing.refresh()
    if typing.resolve_getattr(obj, attr) is None:  # in Numba's own words, as if the tracer were not there
        raise numba_errors.TypingError(f"Unknown attribute '{attr}' of type {obj}")
    raise numba_errors.TypingError(f"portcast compiled tracing does not trace attribute '{attr}' of {obj}")


def kcode(v, codes):  # pragma: no cover - replaced by the overload in njit code
    """``codes[value kind of v]`` (decided from the Numba type at compile time; see :func:`numba_value_kind`)."""
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


@overload(kcode, inline="always")
def _ol_kcode(v, codes):
    k = numba_value_kind(v)
    return lambda v, codes: codes[k]


def kattr(obj, codes):  # pragma: no cover - replaced by the overload in njit code
    """:func:`kcode` for ``obj.real`` / ``obj.imag``: numbers and arrays only."""
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


@overload(kattr, inline="always")
def _ol_kattr(obj, codes):
    k = numba_value_kind(obj)
    if k == VK_OBJECT:
        raise numba_errors.TypingError(f"portcast compiled tracing does not trace attributes of {obj}")
    return lambda obj, codes: codes[k]
