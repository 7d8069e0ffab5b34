"""Library calls inside traced regions: NumPy operations expanded into the element loops they perform, and
the work of the calls that cannot be expanded.

The instrumenter (:mod:`profiler.instrument`, the ``_expand_*`` methods of its rewriter) gives every site
that may operate on arrays its own static ids and registers, and a *plan*: a read-only int64 array holding
the record codes of each part of the expansion (loads, element operation, store, the loop's induction and
BRANCH, accumulator set-up, ...) and the site's counter slot. At run time the site calls

* interpreted mode: a method of :class:`InterpretedLib` (``_pc_X`` in the rewritten code), which checks the
  operands' types in Python and, for arrays, runs the same Numba kernels as the compiled mode into a scratch
  buffer whose records join the interpreted buffer's list (or go to the sinks directly when many);
* compiled mode: a primitive (``_pc_xmap2`` ...) whose ``numba.extending.overload`` picks, at compile time
  from the argument types, either the site's single record (scalars) or a call of the kernel (arrays).

Both modes describe the arrays in the same integer descriptor and run the same kernels (:func:`k_map`,
:func:`k_acc`, :func:`k_gather`, :func:`k_mask`), so their records are identical. The kernels write the
compiled buffer layout (:class:`profiler.runtime.CompiledBuffer`) and check its fill level before every
element, handing it over through ``runtime._full`` when reached, so an expansion of any size keeps the
buffer's bound. Counters (calls, elements, unexpanded work) live in the buffer's ``S`` array after its
``runtime.S_HEAD`` state words, five per site; :func:`region_extra` turns them into the region metadata.
Compiled instrumented code holds only the address of ``S`` (``runtime.CompiledBuffer.entry_args``); a
primitive writes a scalar site's record through it, or describes the arrays and calls a kernel through
the kernel's C entry point, which views the buffer's arrays from the address (:func:`_views`).

What each expansion emits is documented in docs/profiler.md ("Library calls").
"""

from __future__ import annotations

import math
import operator

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic, overload

from core.trace_schema import Op

from . import runtime as rt
from .runtime import HAS_ADDR, S_HEAD, SIZE_SHIFT

#: the most dimensions an expanded array may have (more: the call is estimated, not expanded)
MAXD = 8

#: counters per site in ``S``: expanded calls, elements, unexpanded calls, estimated flops, estimated bytes
SLOT_WIDTH = 5

# ---- plan layout (int64 array per site) -----------------------------------------------------------------
P_SLOT = 0  # index of the site's first counter in S
P_THREADS = 1  # 1: each element of the outer iteration space is a logical thread of its own
P_NEXT = 2  # element loop: INT_ALU induction
P_BRANCH = 3  # element loop: BRANCH (taken bit 0)
P_STORE = 4  # STORE of the result element (size and address added at run time)
P_SCALAR_I = 5  # the site's one record when no array is involved (int / float variant)
P_SCALAR_F = 6
P_BYOPS = 7  # element operation's class follows the operands' types (comparisons), not the result's
P_WKIND = 8  # formula of the work estimate when the call is not expanded (see FORMULAS)
P_LOAD = 9  # map: 9, 10, 11 loads of operands 0..2 (0: the operand is never an array); acc: 9, 10
M_OP_I = 12  # map: op code by operand mask (bit j: operand j is an array), int variant, 8 entries
M_OP_F = 20  # ... float variant
M_STORE = 28  # map: store code by mask (8 entries)
M_HASOP = 36  # map: 1 when the site has an element operation (0: copies, constructors, slice stores)
M_SCALAR_D = 37  # map: the site's one record when no array is involved, double-precision variant
MAP_LEN = 38
A_INIT = 11  # acc: MOVE setting the accumulator up
A_PRE_I = 12  # acc: element operation before accumulating (dot: MUL), 0 none
A_PRE_F = 13
A_ACC_I = 14  # acc: accumulate
A_ACC_F = 15
A_FIN = 16  # acc: after the inner loop (mean: FP_DIV; FP64_DIV when the result is a double), 0 none
A_INEXT = 17  # acc: inner loop induction and BRANCH
A_IBRANCH = 18
A_SCAN_STORE = 19  # scan: STORE of each running value
A_FINAL = 20  # acc: MOVE of a scalar result into the expression's register
ACC_LEN = 21
G_LOAD_IDX = 9  # gather: LOAD of the index element, LOAD of the gathered element
G_LOAD_X = 10
G_MLOAD = 11  # mask: LOAD of the mask element, BRANCH on it, LOAD of the element, STORE, count
G_MBRANCH = 12
G_MLOAD_X = 13
G_MSTORE = 14
G_COUNT = 15
GATHER_LEN = 16
WORK_LEN = 9

# acc kernel flags
F_STORE_OUT = 1  # STORE per outer element
F_SCAN = 2  # STORE per inner element (running value)

#: descriptor layout of the map-like kernels: nd, shape[MAXD], then 4 slots (out, operand 0..2) of
#: present, base address, itemsize, strides[MAXD] (broadcast: 0 along dimensions the operand does not vary)
D_SLOT = 3 + MAXD
D_LEN = 1 + MAXD + 4 * D_SLOT
#: descriptor of the accumulate kernel: outer nd, outer shape, inner nd, inner shape, then 3 slots (out,
#: operand 0, 1) of present, base, itemsize, outer strides[MAXD], inner strides[MAXD]
A_SLOT = 3 + 2 * MAXD
A_OFF = 2 + 2 * MAXD
A_LEN = A_OFF + 3 * A_SLOT


def _dslot(s):
    return 1 + MAXD + s * D_SLOT


def _aslot(s):
    return A_OFF + s * A_SLOT


# ----------------------------------------------------------------------------------------------------------
# what each NumPy callable is (the instrumenter asks at rewrite time)

# (integer, single-precision) classes; a double-precision operation takes the FP64 class of the second
_A, _M, _D, _R, _X = (int(Op.INT_ALU), int(Op.FP_ALU)), (int(Op.INT_MUL), int(Op.FP_MUL)), \
    (int(Op.INT_DIV), int(Op.FP_DIV)), (int(Op.INT_REM), int(Op.FP_DIV)), (int(Op.FP_SPECIAL), int(Op.FP_SPECIAL))

#: elementwise functions: name -> (fewest operands, most operands, (int class, float class), class follows the
#: operands' types (comparisons, predicates) rather than the result's)
MAP_FUNCS: dict[str, tuple[int, int, tuple[int, int], bool]] = {}
for _names, _n, _cls, _byops in (
        ("add subtract maximum minimum fmax fmin copysign bitwise_and bitwise_or bitwise_xor left_shift "
         "right_shift nextafter heaviside", 2, _A, False),
        ("negative positive absolute fabs sign floor ceil trunc rint fix invert bitwise_not conjugate conj "
         "spacing", 1, _A, False),
        ("greater greater_equal less less_equal equal not_equal logical_and logical_or logical_xor", 2, _A, True),
        ("isnan isinf isfinite signbit logical_not", 1, _A, True),
        ("multiply", 2, _M, False), ("square deg2rad rad2deg degrees radians", 1, _M, False),
        ("divide true_divide floor_divide", 2, _D, False), ("reciprocal", 1, _D, False),
        ("mod remainder fmod", 2, _R, False),
        ("power", 2, (int(Op.INT_MUL), int(Op.FP_SPECIAL)), False),
        ("float_power hypot arctan2 logaddexp logaddexp2", 2, _X, False),
        ("sqrt cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh "
         "arccosh arctanh sinc", 1, _X, False)):
    for _f in _names.split():
        MAP_FUNCS[_f] = (_n, _n, _cls, _byops)
MAP_FUNCS["abs"] = MAP_FUNCS["absolute"]
MAP_FUNCS["round"] = MAP_FUNCS["around"] = (1, 2, _A, False)
MAP_FUNCS["where"] = (3, 3, _A, False)
MAP_FUNCS["clip"] = (3, 3, _A, False)

#: reductions: name -> ((int, float) class of the accumulating operation, class follows the operand, mean)
REDUCE_FUNCS = {"sum": (_A, False, False), "prod": (_M, False, False), "min": (_A, False, False),
                "max": (_A, False, False), "amin": (_A, False, False), "amax": (_A, False, False),
                "mean": (_A, False, True), "argmin": (_A, True, False), "argmax": (_A, True, False)}
SCAN_FUNCS = {"cumsum": _A, "cumprod": _M}
MATMUL_FUNCS = {"dot": "matmul", "matmul": "matmul", "vdot": "vdot"}
COPY_FUNCS = frozenset({"copy", "array", "ascontiguousarray", "asfortranarray", "asarray"})
#: constructors: name -> index of the fill value argument (-1: none)
CONSTRUCT_FUNCS = {"zeros": -1, "ones": -1, "zeros_like": -1, "ones_like": -1, "full": 1, "full_like": 1,
                   "arange": -1, "linspace": -1}
#: NumPy calls that do no work on array elements (allocation, views, metadata): one OTHER record, no estimate
NO_WORK = frozenset("""empty empty_like reshape ravel transpose squeeze expand_dims swapaxes moveaxis broadcast_to
    broadcast_arrays atleast_1d atleast_2d atleast_3d shape ndim size dtype iinfo finfo result_type promote_types
    can_cast isscalar seterr errstate geterr random.seed random.default_rng asanyarray""".split())
#: ndarray methods: name -> kind (the base is the operand); others with an estimate: METHOD_ESTIMATES
METHODS = {**{m: "reduce" for m in REDUCE_FUNCS if not m.startswith("a")}, "cumsum": "scan", "cumprod": "scan",
           "copy": "copy", "astype": "copy", "dot": "matmul", "fill": "construct"}
METHOD_ESTIMATES = frozenset("""sort argsort std var trace nonzero searchsorted partition argpartition ptp
    repeat take choose compress any all round clip flatten""".split())

_CANON: dict | None = None


def canonical_name(obj) -> str | None:
    """``np.sum``, ``np.linalg.eigh``, ``np.fft.fft``, ``np.random.rand``: the public NumPy name of ``obj``,
    None when it is not a NumPy callable."""
    global _CANON
    if _CANON is None:
        _CANON = {}
        for prefix, mod in (("np.random.", np.random), ("np.fft.", np.fft), ("np.linalg.", np.linalg), ("np.", np)):
            for k in dir(mod):
                if k.startswith("_"):
                    continue
                try:
                    v = getattr(mod, k)
                except Exception:  # pragma: no cover - deprecated attributes may raise
                    continue
                if callable(v) and not isinstance(v, type(np)):
                    try:
                        _CANON.setdefault(id(v), (v, prefix + k))
                    except TypeError:  # pragma: no cover
                        pass
    hit = _CANON.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    mod = getattr(obj, "__module__", None) or ""
    if isinstance(mod, str) and (mod == "numpy" or mod.startswith("numpy.")):
        return "np." + getattr(obj, "__name__", "call")
    return None


def call_spec(obj, builtin_abs) -> tuple[str, str] | None:
    """``(kind, name)`` of a callable met in a traced region: kind is map, reduce, scan, matmul, vdot, copy,
    construct, none (no element work) or estimate; None when it is not a NumPy callable (nor ``abs``)."""
    if obj is builtin_abs:
        return "map", "abs"
    name = canonical_name(obj)
    if name is None:
        return None
    short = name[3:]
    if isinstance(obj, type) or short in NO_WORK:
        return "none", name
    if short in MAP_FUNCS:
        return "map", name
    if short in REDUCE_FUNCS:
        return "reduce", name
    if short in SCAN_FUNCS:
        return "scan", name
    if short in MATMUL_FUNCS:
        return MATMUL_FUNCS[short], name
    if short in COPY_FUNCS:
        return "copy", name
    if short in CONSTRUCT_FUNCS:
        return "construct", name
    return "estimate", name


def formula_of(name: str) -> tuple[int, str | None, int]:
    """(formula id, keyword read as its flag, the flag's default) of a call name (see :data:`FORMULAS`)."""
    return FORMULAS.get(name, (W_DEFAULT, None, 1))


# ----------------------------------------------------------------------------------------------------------
# kernels (shared by both modes)

_I64P = types.CPointer(types.int64)


@intrinsic
def _ptr(typingctx, addr):
    """An int64 address as an ``int64*`` (for ``numba.carray``)."""

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(_I64P))

    return _I64P(types.int64), codegen


@intrinsic
def data_ptr(typingctx, arr):
    """Address of an array's first element as int64 (no ctypes object, no reference counting)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        return builder.ptrtoint(ary.data, context.get_value_type(types.int64))

    return types.int64(arr), codegen


@intrinsic
def dev_ptr(typingctx, arr):
    """The trace's address of an array's first element (:func:`profiler.runtime.device_addr`): the base
    address of a descriptor."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        return rt.device_addr(context, builder, ary, builder.ptrtoint(ary.data, context.get_value_type(types.int64)))

    return types.int64(arr), codegen


@numba.njit(cache=True, inline="always")
def _views(sp):
    """``(B, S)`` of the compiled buffer whose state array is at address ``sp`` (its head says where the
    record columns are and how long they are; see :class:`profiler.runtime.CompiledBuffer`)."""
    h = numba.carray(_ptr(sp), S_HEAD)
    cap = h[8]
    B = (numba.carray(_ptr(h[3]), cap), numba.carray(_ptr(h[4]), cap), numba.carray(_ptr(h[5]), cap + 1),
         numba.carray(_ptr(h[6]), cap + 1))
    return B, numba.carray(_ptr(sp), h[7])


@numba.njit(cache=True, inline="always")
def _rec(B, p, code):
    """Write one record code at row ``p``; returns the next row."""
    B[0][numba.uint64(p)] = code  # unsigned: no negative-index wrap-around code
    return p + 1


@numba.njit(cache=True, inline="always")
def _reca(B, p, code, addr):
    """:func:`_rec` for a memory record: the code and the address."""
    u = numba.uint64(p)
    B[0][u] = code
    B[1][u] = addr
    return p + 1


@numba.njit(cache=True, inline="always")
def _tidpt(B, k, p, tid):
    """The logical thread is ``tid`` from row ``p`` on (a later change at the same row replaces it);
    ``k`` thread changes are written; returns the new count (as ``runtime._tidpt``, on the arrays)."""
    if k > 0 and B[2][k - 1] == p:
        B[3][k - 1] = tid
        return k
    B[2][k] = p
    B[3][k] = tid
    return k + 1


@numba.njit(cache=True)
def _full(S):
    """The buffer reached its level (``S[0]``, ``S[2]`` set): hand it to the sinks (through Python, which
    resets ``S[0]`` and ``S[2]``)."""
    with numba.objmode():
        rt._flush_in_kernel()


@numba.njit(cache=True, inline="always")
def _check(B, S, p, k):
    """A check point inside an expansion: hand the buffer over when it reached its level. Row -1: the
    hand-over raised (``runtime._flush_in_kernel``), the kernel must return at once."""
    if p >= S[1]:
        S[0] = p
        S[2] = k
        _full(S)
        if S[1] < 0:
            return -1, 0
        return 0, 0
    return p, k


@numba.njit(cache=True, inline="always")
def _advance(idx, addr, D, nd, s0, s1, sbase, sslot, shape0):
    """Next element of an ``nd``-dimensional C-order walk: ``idx`` the index, ``addr[s0:s1]`` the element
    addresses of the operands (operand ``s``'s stride along ``d`` at ``D[sbase + s * sslot + d]``, the
    extent along ``d`` at ``D[shape0 + d]``)."""
    d = nd - 1
    while d >= 0:
        idx[d] += 1
        for s in range(s0, s1):
            addr[s] += D[sbase + s * sslot + d]
        if idx[d] < D[shape0 + d]:
            return
        for s in range(s0, s1):
            addr[s] -= D[sbase + s * sslot + d] * D[shape0 + d]
        idx[d] = 0
        d -= 1


@numba.njit(cache=True, inline="always")
def _latch(B, p, P, more):
    """The element loop's INT_ALU induction and BRANCH (taken while ``more`` elements follow)."""
    p = _rec(B, p, P[P_NEXT])
    return _rec(B, p, P[P_BRANCH] + (1 if more else 0))


@numba.njit(cache=True, inline="always")
def _count(S, P, D):
    """Elements of a walk over the output shape in ``D``; counts the call and its elements in the site's
    counters."""
    n = 1
    for d in range(D[0]):
        n *= D[1 + d]
    slot = P[P_SLOT]
    S[slot] += 1
    S[slot + 1] += n
    return n


@numba.njit(cache=True)
def k_map(B, S, p, k, P, D, nops, opcode, storecode):
    """Element loop of an elementwise operation over the output's shape, in C order.

    Per element: LOAD of each array operand whose element address differs from the previous element's (a
    broadcast operand is not re-loaded), the operation (``opcode``; 0: none), STORE of the result element,
    INT_ALU induction and BRANCH (taken but after the last element). With ``P[P_THREADS]`` each element is a
    logical thread (set before its records, -1 after the loop) and loads every array operand itself: a
    thread does not read an element another thread loaded. Returns the new (row, thread changes)."""
    nd = D[0]
    n = _count(S, P, D)
    if n == 0:
        return p, k
    threads = P[P_THREADS] != 0
    idx = np.zeros(MAXD, np.int64)
    addr = np.zeros(4, np.int64)
    prev = np.zeros(4, np.int64)
    for s in range(4):
        addr[s] = D[1 + MAXD + s * D_SLOT + 1]
    oz = (D[1 + MAXD + 2] << SIZE_SHIFT) | HAS_ADDR
    store = storecode | oz
    for e in range(n):
        p, k = _check(B, S, p, k)
        if p < 0:
            return p, k
        if threads:
            k = _tidpt(B, k, p, e)
        for j in range(nops):
            o = 1 + MAXD + (j + 1) * D_SLOT
            if D[o] != 0 and (threads or e == 0 or addr[j + 1] != prev[j + 1]):
                p = _reca(B, p, P[P_LOAD + j] | HAS_ADDR | (D[o + 2] << SIZE_SHIFT), addr[j + 1])
            prev[j + 1] = addr[j + 1]
        if opcode != 0:
            p = _rec(B, p, opcode)
        p = _reca(B, p, store, addr[0])
        p = _latch(B, p, P, e < n - 1)
        _advance(idx, addr, D, nd, 0, 4, 1 + MAXD + 3, D_SLOT, 1)
    if threads:
        k = _tidpt(B, k, p, -1)
    return p, k


@numba.njit(cache=True)
def k_acc(B, S, p, k, P, D, nops, flags, pre, acc, fin):
    """Accumulating loops: reductions, dot/matmul, scans.

    For each element ``o`` of the outer space (the output's elements; one pass when the output is a scalar):
    MOVE (accumulator set up), then for each element ``r`` of the inner space: LOAD of each operand, ``pre``
    (dot: the multiply; 0: none), ``acc`` (the accumulating operation), with ``F_SCAN`` a STORE of the running
    value, inner INT_ALU induction and BRANCH; then ``fin`` (mean: the division; 0: none), with
    ``F_STORE_OUT`` a STORE of the result, and the outer induction and BRANCH when the output is an array.
    Threads (``P[P_THREADS]``): one per outer element when the output is an array, else one per inner element
    (the accumulator a reduction across them), -1 after the loops."""
    ond = D[0]
    ind = D[1 + MAXD]
    n_outer = 1
    for d in range(ond):
        n_outer *= D[1 + d]
    R = 1
    for d in range(ind):
        R *= D[2 + MAXD + d]
    slot = P[P_SLOT]
    S[slot] += 1
    S[slot + 1] += n_outer * R
    if n_outer == 0:
        return p, k
    threads = P[P_THREADS] != 0
    per_outer = ond > 0
    oidx = np.zeros(MAXD, np.int64)
    iidx = np.zeros(MAXD, np.int64)
    oaddr = np.zeros(3, np.int64)
    iaddr = np.zeros(3, np.int64)
    for s in range(3):
        oaddr[s] = D[A_OFF + s * A_SLOT + 1]
    oz = (D[A_OFF + 2] << SIZE_SHIFT) | HAS_ADDR
    for o in range(n_outer):
        p, k = _check(B, S, p, k)
        if p < 0:
            return p, k
        if threads and per_outer:
            k = _tidpt(B, k, p, o)
        p = _rec(B, p, P[A_INIT])
        for s in range(3):
            iaddr[s] = oaddr[s]
        for d in range(ind):
            iidx[d] = 0
        for r in range(R):
            p, k = _check(B, S, p, k)
            if p < 0:
                return p, k
            if threads and not per_outer:
                k = _tidpt(B, k, p, r)
            for j in range(nops):
                q = A_OFF + (j + 1) * A_SLOT
                p = _reca(B, p, P[P_LOAD + j] | HAS_ADDR | (D[q + 2] << SIZE_SHIFT), iaddr[j + 1])
            if pre != 0:
                p = _rec(B, p, pre)
            p = _rec(B, p, acc)
            if flags & F_SCAN:
                p = _reca(B, p, P[A_SCAN_STORE] | oz, iaddr[0])
            p = _rec(B, p, P[A_INEXT])
            p = _rec(B, p, P[A_IBRANCH] + (1 if r < R - 1 else 0))
            _advance(iidx, iaddr, D, ind, 0, 3, A_OFF + 3 + MAXD, A_SLOT, 2 + MAXD)
        if threads and not per_outer and R > 0:
            k = _tidpt(B, k, p, -1)
        if fin != 0:
            p = _rec(B, p, fin)
        if per_outer:
            if flags & F_STORE_OUT:
                p = _reca(B, p, P[P_STORE] | oz, oaddr[0])
            p = _latch(B, p, P, o < n_outer - 1)
        _advance(oidx, oaddr, D, ond, 0, 3, A_OFF + 3, A_SLOT, 1)
    if threads and per_outer:
        k = _tidpt(B, k, p, -1)
    if not per_outer and P[A_FINAL] != 0:
        p = _rec(B, p, P[A_FINAL])
    return p, k


@numba.njit(cache=True)
def k_gather(B, S, p, k, P, D, vals, xs0, x0, rest):
    """``x[idx]`` with an integer index array: for each output element (shape ``idx.shape + x.shape[1:]``):
    LOAD of the index element (once per index element; per output element with ``P[P_THREADS]``, as
    :func:`k_map` loads a broadcast operand), LOAD of the gathered element, STORE, induction and
    BRANCH. Slots of ``D``: 0 output, 1 index array, 2 ``x`` (without its first dimension); ``vals``: the
    index values in C order; ``xs0``/``x0``: stride and length of ``x``'s first dimension; ``rest``: elements
    per index element."""
    nd = D[0]
    n = _count(S, P, D)
    if n == 0:
        return p, k
    threads = P[P_THREADS] != 0
    idx = np.zeros(MAXD, np.int64)
    addr = np.zeros(3, np.int64)
    for s in range(3):
        addr[s] = D[1 + MAXD + s * D_SLOT + 1]
    zo = (D[1 + MAXD + 2] << SIZE_SHIFT) | HAS_ADDR
    zi = (D[1 + MAXD + D_SLOT + 2] << SIZE_SHIFT) | HAS_ADDR
    zx = (D[1 + MAXD + 2 * D_SLOT + 2] << SIZE_SHIFT) | HAS_ADDR
    prev = np.int64(0)
    for e in range(n):
        p, k = _check(B, S, p, k)
        if p < 0:
            return p, k
        if threads:
            k = _tidpt(B, k, p, e)
        if threads or e == 0 or addr[1] != prev:
            p = _reca(B, p, P[G_LOAD_IDX] | zi, addr[1])
        prev = addr[1]
        v = vals[e // rest]
        if v < 0:
            v += x0
        p = _reca(B, p, P[G_LOAD_X] | zx, addr[2] + v * xs0)
        p = _reca(B, p, P[P_STORE] | zo, addr[0])
        p = _latch(B, p, P, e < n - 1)
        _advance(idx, addr, D, nd, 0, 3, 1 + MAXD + 3, D_SLOT, 1)
    if threads:
        k = _tidpt(B, k, p, -1)
    return p, k


@numba.njit(cache=True)
def k_mask(B, S, p, k, P, D, mask):
    """``x[mask]`` with a boolean mask of ``x``'s shape: for each element of ``x`` (C order): LOAD of the mask
    element, BRANCH on it (taken: selected), and when selected LOAD of the element, STORE to the next output
    element, INT_ALU (the output position); induction and BRANCH. Slots of ``D``: 0 output (1-D), 1 mask,
    2 ``x``; ``mask``: the mask values in C order."""
    nd = D[0]
    n = _count(S, P, D)
    if n == 0:
        return p, k
    threads = P[P_THREADS] != 0
    idx = np.zeros(MAXD, np.int64)
    addr = np.zeros(3, np.int64)
    for s in range(1, 3):
        addr[s] = D[1 + MAXD + s * D_SLOT + 1]
    out = D[1 + MAXD + 1]
    ostride = D[1 + MAXD + 3]
    zo = (D[1 + MAXD + 2] << SIZE_SHIFT) | HAS_ADDR
    zm = (D[1 + MAXD + D_SLOT + 2] << SIZE_SHIFT) | HAS_ADDR
    zx = (D[1 + MAXD + 2 * D_SLOT + 2] << SIZE_SHIFT) | HAS_ADDR
    for e in range(n):
        p, k = _check(B, S, p, k)
        if p < 0:
            return p, k
        if threads:
            k = _tidpt(B, k, p, e)
        p = _reca(B, p, P[G_MLOAD] | zm, addr[1])
        if mask[e]:
            p = _rec(B, p, P[G_MBRANCH] + 1)
            p = _reca(B, p, P[G_MLOAD_X] | zx, addr[2])
            p = _reca(B, p, P[G_MSTORE] | zo, out)
            p = _rec(B, p, P[G_COUNT])
            out += ostride
        else:
            p = _rec(B, p, P[G_MBRANCH])
        p = _latch(B, p, P, e < n - 1)
        _advance(idx, addr, D, nd, 1, 3, 1 + MAXD + 3, D_SLOT, 1)
    if threads:
        k = _tidpt(B, k, p, -1)
    return p, k


@numba.njit(cache=True)
def to_interpreted(codes, addrs, n, trow, tval, k, out_codes, out_addrs):
    """Rows ``0..n-1`` of the compiled layout (and ``k`` thread changes) in the interpreted buffer's layout:
    codes with inline thread markers ``-2 - tid``, addresses of memory records in order. Returns the number
    of codes and of addresses written."""
    j = 0
    q = 0
    m = 0
    for r in range(n):
        while m < k and trow[m] == r:
            out_codes[j] = -2 - tval[m]
            j += 1
            m += 1
        c = codes[r]
        out_codes[j] = c
        j += 1
        if c & HAS_ADDR:
            out_addrs[q] = addrs[r]
            q += 1
    while m < k and trow[m] <= n:
        out_codes[j] = -2 - tval[m]
        j += 1
        m += 1
    return j, q


# ----------------------------------------------------------------------------------------------------------
# work estimates of the calls that are not expanded

W_DEFAULT, W_INV, W_LU, W_SOLVE, W_CHOL, W_EIGH, W_EIGVALSH, W_EIG, W_EIGVALS, W_SVD, W_QR, W_LSTSQ, W_PINV, \
    W_RANK, W_NORM, W_COV, W_CORR, W_FFT, W_RFFT, W_FFTN, W_SORT, W_UNIQUE, W_CONV, W_OUTER, W_TRACE, \
    W_MATMUL = range(26)

#: canonical call name -> (formula id, keyword read as the formula's flag, the flag's default)
FORMULAS: dict[str, tuple[int, str | None, int]] = {
    "np.linalg.inv": (W_INV, None, 1), "np.linalg.det": (W_LU, None, 1), "np.linalg.slogdet": (W_LU, None, 1),
    "np.linalg.solve": (W_SOLVE, None, 1), "np.linalg.cholesky": (W_CHOL, None, 1),
    "np.linalg.eigh": (W_EIGH, None, 1), "np.linalg.eigvalsh": (W_EIGVALSH, None, 1),
    "np.linalg.eig": (W_EIG, None, 1), "np.linalg.eigvals": (W_EIGVALS, None, 1),
    "np.linalg.svd": (W_SVD, "compute_uv", 1), "np.linalg.qr": (W_QR, None, 1),
    "np.linalg.lstsq": (W_LSTSQ, None, 1), "np.linalg.pinv": (W_PINV, None, 1),
    "np.linalg.matrix_rank": (W_RANK, None, 1), "np.linalg.norm": (W_NORM, None, 1),
    "np.cov": (W_COV, "rowvar", 1), "np.corrcoef": (W_CORR, "rowvar", 1),
    **{f"np.fft.{f}": (W_FFT, None, 1) for f in ("fft", "ifft", "hfft", "ihfft")},
    **{f"np.fft.{f}": (W_RFFT, None, 1) for f in ("rfft", "irfft")},
    **{f"np.fft.{f}": (W_FFTN, None, 1) for f in ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn",
                                                   "irfftn")},
    "np.sort": (W_SORT, None, 1), "np.argsort": (W_SORT, None, 1), "ndarray.sort": (W_SORT, None, 1),
    "ndarray.argsort": (W_SORT, None, 1), "np.unique": (W_UNIQUE, None, 1),
    "np.convolve": (W_CONV, None, 1), "np.correlate": (W_CONV, None, 1), "np.outer": (W_OUTER, None, 1),
    "np.trace": (W_TRACE, None, 1), "ndarray.trace": (W_TRACE, None, 1),
    "np.dot": (W_MATMUL, None, 1), "np.matmul": (W_MATMUL, None, 1), "np.vdot": (W_MATMUL, None, 1),
    "ndarray.dot": (W_MATMUL, None, 1), "@": (W_MATMUL, None, 1),
}

#: the formulas, for the documentation and the report (n x n matrices; m x n with m >= n; N elements)
FORMULA_TEXT = {
    W_DEFAULT: "elements of the array operands (of the result when no operand is an array)",
    W_INV: "2 n^3", W_LU: "2/3 n^3 (LU)", W_SOLVE: "2/3 n^3 + 2 n^2 k (LU, k right-hand sides)",
    W_CHOL: "n^3 / 3", W_EIGH: "9 n^3 (with vectors)", W_EIGVALSH: "4/3 n^3", W_EIG: "25 n^3 (with vectors)",
    W_EIGVALS: "10 n^3", W_SVD: "4 m^2 n + 8 m n^2 + 9 n^3 (with U, V); 4 m n^2 - 4/3 n^3 (compute_uv=False)",
    W_QR: "4 m n^2 - 4/3 n^3", W_LSTSQ: "4 m n^2 - 4/3 n^3", W_PINV: "4 m^2 n + 8 m n^2 + 9 n^3",
    W_RANK: "4 m n^2 - 4/3 n^3", W_NORM: "2 N", W_COV: "2 n d^2 (n observations, d variables)",
    W_CORR: "2 n d^2 + d^2", W_FFT: "5 n log2 n per transform (last axis)", W_RFFT: "2.5 n log2 n per transform",
    W_FFTN: "5 N log2 N", W_SORT: "n log2 n comparisons per sorted row (last axis)", W_UNIQUE: "N log2 N",
    W_CONV: "2 n m", W_OUTER: "n m", W_TRACE: "min(m, n)", W_MATMUL: "2 m n k",
}


@numba.njit(cache=True)
def _nlogn(n):
    return n * math.log2(n) if n > 1 else 0.0


@numba.njit(cache=True)
def work_flops(kind, nd0, m0, n0, size0, nd1, m1, n1, size1, elems, relems, flag):
    """Estimated floating-point operations (comparisons for sorts) of one unexpanded call.

    ``nd0, m0, n0, size0``: dimensions, last two extents (1 where missing) and size of the first array
    operand; ``nd1, m1, n1, size1`` the same of the second; ``elems``/``relems``: elements of all array
    operands / of the results; ``flag``: the formula's keyword (svd ``compute_uv``, cov ``rowvar``)."""
    f = 0.0
    mat = m0 * n0
    batch = size0 // mat if mat > 0 else 0
    n = float(n0)
    lo = float(min(m0, n0))
    hi = float(max(m0, n0))
    if kind == W_INV:
        f = 2.0 * n ** 3 * batch
    elif kind == W_LU:
        f = 2.0 / 3.0 * n ** 3 * batch
    elif kind == W_SOLVE:
        rhs = size1 // (n0 * batch) if n0 * batch > 0 else 0
        f = (2.0 / 3.0 * n ** 3 + 2.0 * n * n * rhs) * batch
    elif kind == W_CHOL:
        f = n ** 3 / 3.0 * batch
    elif kind == W_EIGH:
        f = 9.0 * n ** 3 * batch
    elif kind == W_EIGVALSH:
        f = 4.0 / 3.0 * n ** 3 * batch
    elif kind == W_EIG:
        f = 25.0 * n ** 3 * batch
    elif kind == W_EIGVALS:
        f = 10.0 * n ** 3 * batch
    elif kind == W_SVD or kind == W_PINV:
        if kind == W_SVD and flag == 0:
            f = (4.0 * hi * lo * lo - 4.0 / 3.0 * lo ** 3) * batch
        else:
            f = (4.0 * hi * hi * lo + 8.0 * hi * lo * lo + 9.0 * lo ** 3) * batch
    elif kind == W_QR or kind == W_LSTSQ or kind == W_RANK:
        f = (4.0 * hi * lo * lo - 4.0 / 3.0 * lo ** 3) * batch
    elif kind == W_NORM:
        f = 2.0 * size0
    elif kind == W_COV or kind == W_CORR:
        if nd0 <= 1:
            d, obs = 1.0, float(size0)
        elif flag != 0:
            d, obs = float(m0), float(n0)
        else:
            d, obs = float(n0), float(m0)
        f = 2.0 * obs * d * d + (d * d if kind == W_CORR else 0.0)
    elif kind == W_FFT or kind == W_RFFT:
        rows = size0 // n0 if n0 > 0 else 0
        f = (5.0 if kind == W_FFT else 2.5) * _nlogn(n0) * rows
    elif kind == W_FFTN:
        f = 5.0 * _nlogn(size0)
    elif kind == W_SORT:
        rows = size0 // n0 if n0 > 0 else 0
        f = _nlogn(n0) * rows
    elif kind == W_UNIQUE:
        f = _nlogn(size0)
    elif kind == W_CONV or kind == W_OUTER:
        f = (2.0 if kind == W_CONV else 1.0) * size0 * size1
    elif kind == W_TRACE:
        f = lo
    elif kind == W_MATMUL:
        inner = n0 if nd0 >= 1 else 1
        f = 2.0 * relems * inner
    else:
        f = float(elems if elems > 0 else relems)
    return np.int64(round(f))


def _dims(a):
    if isinstance(a, np.ndarray):
        nd = a.ndim
        return nd, (a.shape[-2] if nd >= 2 else 1), (a.shape[-1] if nd >= 1 else 1), a.size
    return 0, 1, 1, 0


def _result_arrays(out):
    if isinstance(out, np.ndarray):
        return [out]
    if isinstance(out, (tuple, list)):
        return [x for x in out if isinstance(x, np.ndarray)]
    return []


def _is_number(v) -> bool:
    return type(v) in (int, float, complex, bool) or isinstance(v, (np.number, np.bool_))


def _expandable(a) -> bool:
    return type(a) is np.ndarray and a.ndim <= MAXD and a.dtype.kind in "biufc"


def _precision_bits(v) -> int:
    """Precision bits (``runtime.FLOAT_TYPES``) of a value; an array's by its dtype (single or double)."""
    if isinstance(v, np.ndarray):
        return rt.array_precision(v)
    return rt.FLOAT_TYPES[type(v)]


def _precision(*values) -> int:
    """0 (integer), 1 (single) or 2 (double precision) of an operation on ``values``, as NumPy promotes
    them (``runtime.PRECISION_OF_BITS``)."""
    bits = 0
    for v in values:
        bits |= _precision_bits(v)
    return rt.PRECISION_OF_BITS[bits]


def _variant(code_int: int, code_fp: int, precision: int) -> int:
    """The code of an operation of ``precision`` (0, 1, 2) from its integer and single-precision codes."""
    if precision == 0:
        return int(code_int)
    return int(rt.fp64_code(code_fp)) if precision == 2 else int(code_fp)


# ----------------------------------------------------------------------------------------------------------
# descriptors (Python side; the compiled side generates the same statements per type)


def _slot_py(D, o, a, nd):
    """Fill the map-descriptor slot at ``o`` for array ``a`` broadcast to ``nd`` dimensions."""
    D[o] = 1
    D[o + 1] = rt.device_address(a)
    D[o + 2] = a.itemsize
    off = nd - a.ndim
    for d in range(a.ndim):
        D[o + 3 + off + d] = a.strides[d] if a.shape[d] != 1 else 0


def map_descriptor(out, ops):
    D = np.zeros(D_LEN, np.int64)
    nd = out.ndim
    D[0] = nd
    D[1:1 + nd] = out.shape
    _slot_py(D, _dslot(0), out, nd)
    for j, a in enumerate(ops):
        if isinstance(a, np.ndarray):
            _slot_py(D, _dslot(j + 1), a, nd)
    return D


def _acc_base(D, s, a):
    q = _aslot(s)
    D[q] = 1
    D[q + 1] = rt.device_address(a)
    D[q + 2] = a.itemsize
    return q


def _acc_axis(D, x, out, ax, scan):
    """Outer space: ``x``'s dimensions but ``ax``; inner: ``ax``. ``out`` has the outer dimensions (a
    reduction) or ``x``'s (a scan)."""
    nd = x.ndim
    q = _acc_base(D, 1, x)
    j = 0
    for d in range(nd):
        if d != ax:
            D[1 + j] = x.shape[d]
            D[q + 3 + j] = x.strides[d] if x.shape[d] != 1 else 0
            j += 1
    D[0] = nd - 1
    D[1 + MAXD] = 1
    D[2 + MAXD] = x.shape[ax]
    D[q + 3 + MAXD] = x.strides[ax] if x.shape[ax] != 1 else 0
    if isinstance(out, np.ndarray):
        qo = _acc_base(D, 0, out)
        if scan:
            j = 0
            for d in range(nd):
                if d != ax:
                    D[qo + 3 + j] = out.strides[d] if out.shape[d] != 1 else 0
                    j += 1
            D[qo + 3 + MAXD] = out.strides[ax] if out.shape[ax] != 1 else 0
        else:
            for d in range(out.ndim):
                D[qo + 3 + d] = out.strides[d] if out.shape[d] != 1 else 0


def _acc_full(D, x, out, scan):
    """Outer space: one element; inner: all of ``x`` in C order (a scan writes ``out``, 1-D, in that order)."""
    nd = x.ndim
    q = _acc_base(D, 1, x)
    D[0] = 0
    D[1 + MAXD] = nd
    for d in range(nd):
        D[2 + MAXD + d] = x.shape[d]
        D[q + 3 + MAXD + d] = x.strides[d] if x.shape[d] != 1 else 0
    if scan and isinstance(out, np.ndarray):
        qo = _acc_base(D, 0, out)
        step = out.strides[0] if out.ndim == 1 else out.itemsize
        for d in range(nd - 1, -1, -1):
            D[qo + 3 + MAXD + d] = step if x.shape[d] != 1 else 0
            step *= x.shape[d]


def _acc_matmul(D, a, b, out):
    """``a @ b`` for 1-D and 2-D operands: outer space = the output's, inner = the contracted dimension."""
    qa = _acc_base(D, 1, a)
    qb = _acc_base(D, 2, b)
    K = a.shape[-1]
    D[1 + MAXD] = 1
    D[2 + MAXD] = K
    D[qa + 3 + MAXD] = a.strides[-1] if K != 1 else 0
    D[qb + 3 + MAXD] = b.strides[0] if K != 1 else 0
    if a.ndim == 1 and b.ndim == 1:
        D[0] = 0
        return
    qo = _acc_base(D, 0, out)
    if a.ndim == 2 and b.ndim == 2:
        D[0] = 2
        D[1], D[2] = a.shape[0], b.shape[1]
        D[qa + 3] = a.strides[0] if a.shape[0] != 1 else 0
        D[qb + 4] = b.strides[1] if b.shape[1] != 1 else 0
    elif a.ndim == 2:
        D[0] = 1
        D[1] = a.shape[0]
        D[qa + 3] = a.strides[0] if a.shape[0] != 1 else 0
    else:
        D[0] = 1
        D[1] = b.shape[1]
        D[qb + 3] = b.strides[1] if b.shape[1] != 1 else 0
    for d in range(out.ndim):
        D[qo + 3 + d] = out.strides[d] if out.shape[d] != 1 else 0


def gather_descriptor(x, idx, out):
    nd = out.ndim
    D = np.zeros(D_LEN, np.int64)
    D[0] = nd
    D[1:1 + nd] = out.shape
    _slot_py(D, _dslot(0), out, nd)
    o = _dslot(1)
    D[o] = 1
    D[o + 1] = rt.device_address(idx)
    D[o + 2] = idx.itemsize
    for d in range(idx.ndim):
        D[o + 3 + d] = idx.strides[d] if idx.shape[d] != 1 else 0
    o = _dslot(2)
    D[o] = 1
    D[o + 1] = rt.device_address(x)
    D[o + 2] = x.itemsize
    for d in range(1, x.ndim):
        D[o + 3 + idx.ndim + d - 1] = x.strides[d] if x.shape[d] != 1 else 0
    return D


def mask_descriptor(x, mask, out):
    nd = x.ndim
    D = np.zeros(D_LEN, np.int64)
    D[0] = nd
    D[1:1 + nd] = x.shape
    o = _dslot(0)
    D[o] = 1
    D[o + 1] = rt.device_address(out)
    D[o + 2] = out.itemsize
    D[o + 3] = out.strides[0]
    _slot_py(D, _dslot(1), mask, nd)
    _slot_py(D, _dslot(2), x, nd)
    return D


# ----------------------------------------------------------------------------------------------------------
# interpreted mode


class Expand(Exception):
    """Raised by the interpreted mode's type lookups of an elementwise site when a probed value is an ndarray:
    the site's records are then the element loop (the lookup stays the scalar path's only cost: a try block
    costs nothing in CPython 3.11+ until it raises)."""


class ExpandCodes(dict):
    """Per-site map: type of the probed value -> record code (integer, single- or double-precision variant);
    an ndarray raises :class:`Expand` (never cached)."""

    def __init__(self, code_int: int, code_single: int, code_double: int) -> None:
        super().__init__()
        self.codes = rt.precision_codes(code_int, code_single, code_double)

    def __missing__(self, t):
        if t is np.ndarray:
            raise Expand
        v = self[t] = self.codes[rt.FLOAT_TYPES[t]]
        return v


class _ExpandFloat(dict):
    """type -> precision bits (as ``runtime.FLOAT_TYPES``); an ndarray raises :class:`Expand`."""

    def __missing__(self, t):
        if t is np.ndarray:
            raise Expand
        v = self[t] = rt.FLOAT_TYPES[t]
        return v


EXPAND_FLOAT = _ExpandFloat()


class _Scratch(rt.CompiledBuffer):
    """The kernels' buffer in interpreted mode: a compiled-layout buffer whose hand-overs first flush the
    interpreted buffer's pending records (program order) and keep its logical thread in step."""

    def __init__(self, ibuf, prog) -> None:
        super().__init__(ibuf.tracer, ibuf.cap, 32, SLOT_WIDTH * prog.n_lib_slots)
        self.ibuf = ibuf

    def _emit(self, n: int, k: int) -> None:
        ib = self.ibuf
        ib.flush()
        self.tid = ib.tid
        super()._emit(n, k)
        ib.tid = self.tid


#: an expansion leaving at most this many rows in the scratch buffer joins the interpreted buffer's list;
#: a longer one goes to the sinks directly
_JOIN_ROWS = 4096


class InterpretedLib:
    """The interpreted mode's library-call primitives (``_pc_X`` in rewritten code), one per region
    invocation. Counters: :attr:`S` (the compiled layout's), allocated with the scratch buffer."""

    def __init__(self, ibuf, prog) -> None:
        self.ibuf = ibuf
        self.prog = prog
        self._sc: _Scratch | None = None
        self._counters = np.zeros(S_HEAD + SLOT_WIDTH * prog.n_lib_slots, np.int64)

    @property
    def S(self) -> np.ndarray:
        return self._sc.S if self._sc is not None else self._counters

    def _scratch(self) -> _Scratch:
        sc = self._sc
        if sc is None:
            sc = self._sc = _Scratch(self.ibuf, self.prog)
            sc.S[S_HEAD:] = self._counters[S_HEAD:]
            n = min(sc.cap, _JOIN_ROWS)  # rows that join the list: at most n codes and n + 1 thread markers
            self._oc = np.empty(2 * n + 2, np.int64)
            self._oa = np.empty(n + 1, np.int64)
        return sc

    def _run(self, kernel, *args) -> None:
        sc = self._scratch()
        with sc:
            p, k = kernel(sc.B, sc.S, 0, 0, *args)
        if p < 0:
            rt.raise_pending()
        if p == 0 and k == 0:
            return
        if p > _JOIN_ROWS:
            sc.S[0] = p
            sc.S[2] = k
            sc.flush()
            return
        j, q = to_interpreted(sc.B[0], sc.B[1], p, sc.B[2], sc.B[3], k, self._oc, self._oa)
        self.ibuf.L.extend(self._oc[:j].tolist())
        if q:
            self.ibuf.A.extend(self._oa[:q].tolist())

    def _scalar(self, P, fp) -> None:
        self.ibuf.L.append(int(P[P_SCALAR_F] if fp else P[P_SCALAR_I]))

    def _typed_scalar(self, P, out, ops) -> None:
        """An elementwise site the kernels do not expand (a 0-d operand among scalars gives a NumPy scalar): its
        one record of the precision compiled code gives it (:class:`_ScalarRecord`: the operands' for a
        comparison, else the result's); the integer record for values of no numeric type."""
        try:
            prec = _precision(*ops) if P[P_BYOPS] else _precision(out)
        except (KeyError, TypeError):
            self._scalar(P, False)
            return
        self.ibuf.L.append(int(P[(P_SCALAR_I, P_SCALAR_F, M_SCALAR_D)[prec]]))

    # -- elementwise ----------------------------------------------------------------------------------------
    def map(self, P, out, *ops) -> None:
        """Record an elementwise site whose result ``out`` is an ndarray (operands ``ops``)."""
        ok = _expandable(out) and all(_expandable(a) and a.ndim <= out.ndim or _is_number(a) for a in ops)
        if not ok:
            self._typed_scalar(P, out, ops)
            return
        mask = 0
        for j, a in enumerate(ops):
            if isinstance(a, np.ndarray):
                mask |= 1 << j
        prec = _precision(*ops) if P[P_BYOPS] else _precision(out)
        opcode = _variant(P[M_OP_I + mask], P[M_OP_F + mask], prec) if P[M_HASOP] else 0
        self._run(k_map, P, map_descriptor(out, ops), len(ops), opcode, int(P[M_STORE + mask]))

    def copy(self, P, out, src) -> None:
        """A copy ``out`` of ``src`` (no record per element when no copy was made)."""
        if not isinstance(src, np.ndarray) or not isinstance(out, np.ndarray) or \
                out.__array_interface__["data"][0] == src.__array_interface__["data"][0]:
            self._scalar(P, False)
            return
        self.map(P, out, src)

    # -- accumulating ---------------------------------------------------------------------------------------
    def _acc(self, P, D, nops, flags, out, prec) -> None:
        """Run the accumulating kernel with the codes of precision ``prec`` (0 integer, 1 single, 2 double)."""
        pre = _variant(P[A_PRE_I], P[A_PRE_F], prec)
        acc = _variant(P[A_ACC_I], P[A_ACC_F], prec)
        fin = int(rt.fp64_code(P[A_FIN])) if prec == 2 else int(P[A_FIN])
        self._run(k_acc, P, D, nops, flags, pre, acc, fin)

    def reduce(self, P, out, x, axis=None) -> None:
        """``np.sum(x, axis)`` and the other reductions; ``out`` the result."""
        if not _expandable(x) or not (axis is None or type(axis) is int or isinstance(axis, np.integer)):
            self._scalar(P, False)
            return
        fp = _precision(x) if P[P_BYOPS] else _precision(out)
        D = np.zeros(A_LEN, np.int64)
        if axis is None or x.ndim <= 1:
            if axis is not None and x.ndim == 0:
                self._scalar(P, False)
                return
            _acc_full(D, x, None, False)
        else:
            ax = int(axis) + (x.ndim if axis < 0 else 0)
            if not isinstance(out, np.ndarray):
                self._scalar(P, False)
                return
            _acc_axis(D, x, out, ax, False)
        self._acc(P, D, 1, F_STORE_OUT, out, fp)

    def scan(self, P, out, x, axis=None) -> None:
        """``np.cumsum(x, axis)``, ``np.cumprod``."""
        if not (_expandable(x) and _expandable(out)) or not (axis is None or type(axis) is int
                                                             or isinstance(axis, np.integer)):
            self._scalar(P, False)
            return
        fp = _precision(out)
        D = np.zeros(A_LEN, np.int64)
        if axis is None or x.ndim <= 1:
            _acc_full(D, x, out, True)
        else:
            ax = int(axis) + (x.ndim if axis < 0 else 0)
            _acc_axis(D, x, out, ax, True)
        self._acc(P, D, 1, F_SCAN, out, fp)

    def matmul(self, P, out, a, b) -> None:
        """``a @ b``, ``np.dot``, ``np.matmul`` for 1-D and 2-D operands (else an estimate)."""
        if not (_expandable(a) and _expandable(b) and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
            self.work(P, out, a, b)
            self._scalar(P, False)
            return
        fp = _precision(out)
        D = np.zeros(A_LEN, np.int64)
        _acc_matmul(D, a, b, out)
        self._acc(P, D, 2, F_STORE_OUT, out, fp)

    def vdot(self, P, out, a, b) -> None:
        """``np.vdot(a, b)``: both flattened (expanded when their shapes are equal)."""
        if not (_expandable(a) and _expandable(b) and a.shape == b.shape):
            self.work(P, out, a, b)
            self._scalar(P, False)
            return
        D = np.zeros(A_LEN, np.int64)
        _acc_full(D, a, None, False)
        qb = _acc_base(D, 2, b)
        for d in range(b.ndim):
            D[qb + 3 + MAXD + d] = b.strides[d] if b.shape[d] != 1 else 0
        self._acc(P, D, 2, 0, out, _precision(out))

    # -- indexing -------------------------------------------------------------------------------------------
    def sub(self, P, x, idx, out) -> None:
        """``out = x[idx]`` with an array ``idx``: a gather (integers) or a masked read (booleans)."""
        if type(x) is np.ndarray and x.dtype.kind in "biufc" and _expandable(out) and type(idx) is np.ndarray:
            if idx.dtype.kind in "iu" and 1 <= x.ndim and idx.ndim + x.ndim - 1 <= MAXD:
                vals = np.ascontiguousarray(idx, dtype=np.int64).ravel()
                rest = 1
                for d in range(1, x.ndim):
                    rest *= x.shape[d]
                self._run(k_gather, P, gather_descriptor(x, idx, out), vals, x.strides[0], x.shape[0], max(rest, 1))
                return
            if idx.dtype.kind == "b" and idx.shape == x.shape and x.ndim <= MAXD and out.ndim == 1:
                self._run(k_mask, P, mask_descriptor(x, idx, out), np.ascontiguousarray(idx).ravel())
                return
        self._scalar(P, False)

    # -- estimates ------------------------------------------------------------------------------------------
    def work(self, P, out, a0=None, a1=None, a2=None, flag=1) -> None:
        """Count an unexpanded call and its estimated work (nothing unless an operand or result is an array)."""
        args = [a for a in (a0, a1, a2) if isinstance(a, np.ndarray)]
        res = _result_arrays(out)
        if not args and not res:
            return
        nd0, m0, n0, s0 = _dims(a0)
        nd1, m1, n1, s1 = _dims(a1)
        elems = sum(a.size for a in args)
        relems = sum(a.size for a in res)
        nbytes = sum(a.nbytes for a in args) + sum(a.nbytes for a in res)
        flops = work_flops(int(P[P_WKIND]), nd0, m0, n0, s0, nd1, m1, n1, s1, elems, relems, int(bool(flag)))
        S = self.S if self._sc is not None else self._counters
        slot = int(P[P_SLOT])
        S[slot + 2] += 1
        S[slot + 3] += int(flops)
        S[slot + 4] += int(nbytes)


# ----------------------------------------------------------------------------------------------------------
# compiled mode: primitives whose overloads pick the record(s) from the argument types at compile time


def _stub(*args):  # pragma: no cover - replaced by the overloads in njit code
    raise TypeError("a compiled-tracing primitive: it exists only inside Numba-compiled instrumented code")


def xiter(c0, c1, p, code, it, i):  # noqa: D103
    return _stub()


def xwork(S, P, out, a0, a1, a2, flag):  # noqa: D103
    return _stub()


# The kernels are reached from compiled instrumented code through C entry points (``numba.cfunc``, compiled
# once per machine: Numba's disk cache), called by symbol name. A call of the kernels' dispatchers would
# link each kernel's code into every site's function and have LLVM optimise it again there, which made an
# array site cost about a second of compile time; through the entry point a site compiles only the code
# that describes its arrays. The entry points take the descriptor, the plan and the index arrays by
# address, return the row (-1: the buffer's hand-over raised, see ``runtime._flush_in_kernel``) and leave
# the thread-change count in ``D[0]``.

_C_SIG = {
    "k_map": 9,  # sp, p, k, P address, len(P), D address, nops, opcode, storecode
    "k_acc": 11,  # sp, p, k, P, len(P), D, nops, flags, pre, acc, fin
    "k_gather": 11,  # sp, p, k, P, len(P), D, vals address, len(vals), xs0, x0, rest
    "k_mask": 8,  # sp, p, k, P, len(P), D, mask address (one byte per element), len(mask)
}


@intrinsic
def _ptr8(typingctx, addr):
    """An int64 address as a ``uint8*`` (a boolean mask's bytes, for ``numba.carray``)."""
    ptr = types.CPointer(types.uint8)

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(ptr))

    return ptr(types.int64), codegen


def _c_k_map(sp, p, k, pa, pn, da, nops, opcode, storecode):
    B, S = _views(sp)
    D = numba.carray(_ptr(da), D_LEN)
    p, D[0] = k_map(B, S, p, k, numba.carray(_ptr(pa), pn), D, nops, opcode, storecode)
    return p


def _c_k_acc(sp, p, k, pa, pn, da, nops, flags, pre, acc, fin):
    B, S = _views(sp)
    D = numba.carray(_ptr(da), A_LEN)
    p, D[0] = k_acc(B, S, p, k, numba.carray(_ptr(pa), pn), D, nops, flags, pre, acc, fin)
    return p


def _c_k_gather(sp, p, k, pa, pn, da, va, vn, xs0, x0, rest):
    B, S = _views(sp)
    D = numba.carray(_ptr(da), D_LEN)
    p, D[0] = k_gather(B, S, p, k, numba.carray(_ptr(pa), pn), D, numba.carray(_ptr(va), vn), xs0, x0, rest)
    return p


def _c_k_mask(sp, p, k, pa, pn, da, ma, mn):
    B, S = _views(sp)
    D = numba.carray(_ptr(da), D_LEN)
    p, D[0] = k_mask(B, S, p, k, numba.carray(_ptr(pa), pn), D, numba.carray(_ptr8(ma), mn))
    return p


_C_PY = {"k_map": _c_k_map, "k_acc": _c_k_acc, "k_gather": _c_k_gather, "k_mask": _c_k_mask}
_C_EXTERNAL = {name: types.ExternalFunction(f"portcast_{name}", types.int64(*[types.int64] * n))
               for name, n in _C_SIG.items()}
_C_COMPILED: dict = {}


def _c_entry_points() -> None:
    """Compile (or load from Numba's cache) the kernels' C entry points and make their symbols known to the
    JIT linker; once per process, before the first array site is compiled."""
    if _C_COMPILED:
        return
    import llvmlite.binding as llvm

    for name, n in _C_SIG.items():
        cf = numba.cfunc(types.int64(*[types.int64] * n), cache=True)(_C_PY[name])
        llvm.add_symbol(f"portcast_{name}", cf.address)
        _C_COMPILED[name] = cf


@numba.njit(cache=True)
def _reraise():
    """Raise the exception a kernel's buffer hand-over kept (``runtime.raise_pending``)."""
    with numba.objmode():
        rt.raise_pending()


@intrinsic
def _rec_s(typingctx, sp, p, code):
    """One record ``code`` at row ``p`` of the code column (``sp``: S's address); returns the next row."""

    def codegen(context, builder, sig, args):
        base, row, c = args
        rt._store_row(builder, rt._load_row(builder, base, rt._I64(3)), row, c)
        return builder.add(row, rt._I64(1))

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def _add_s(typingctx, sp, j, v):
    """``S[j] += v`` (``sp``: S's address; ``v`` an integer, or a float truncated towards zero)."""

    def codegen(context, builder, sig, args):
        base, j_, v_ = args
        if isinstance(sig.args[2], types.Float):
            v_ = builder.fptosi(v_, rt._I64)
        else:
            v_ = context.cast(builder, v_, sig.args[2], types.int64)
        ptr = builder.gep(builder.inttoptr(base, rt._I64.as_pointer()), [j_], inbounds=True)
        builder.store(builder.add(builder.load(ptr), v_), ptr)
        return context.get_dummy_value()

    return types.none(types.int64, types.int64, v), codegen


@intrinsic
def _keep(typingctx, arr):
    """Nothing: a use of ``arr`` after a call that got only its address, so Numba frees it no earlier."""

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return types.none(arr), codegen


def _kernel_call(name: str, args: str, keep: str = "") -> list[str]:
    """Statements that run kernel ``name`` through its C entry point and return (row, thread changes);
    ``keep``: an array passed by address, kept alive over the call (``D`` is: it is read after)."""
    return [f"q = c_{name}(S, p, k, data_ptr(P), len(P), data_ptr(D), {args})",
            *([f"_keep({keep})"] if keep else []), "if q < 0:", "    _reraise()", "return q, D[0]"]


def _num_scalar(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean))


def _num_array(t) -> bool:
    return isinstance(t, types.Array) and isinstance(t.dtype, (types.Number, types.Boolean)) and t.ndim <= MAXD


def _prec(t) -> int:
    """0 (integer), 1 (single) or 2 (double precision) of a Numba type (``runtime.numba_precision``)."""
    return rt.numba_precision(t)


_GEN_NS = {"np": np, "data_ptr": data_ptr, "dev_ptr": dev_ptr,
           "_rec_s": _rec_s, "_add_s": _add_s, "_reraise": _reraise, "_keep": _keep,
           "work_flops": work_flops, "fp64_code": rt.fp64_code,
           **{f"c_{name}": fn for name, fn in _C_EXTERNAL.items()}}
_GEN_CACHE: dict = {}


class _ScalarRecord:
    """What a site on scalars (or one the kernels cannot expand) writes: its single record, the plan's code of
    precision ``precops`` when ``P[P_BYOPS] != 0``, else of ``precout`` (0: ``P_SCALAR_I``, 1: ``P_SCALAR_F``,
    2: ``M_SCALAR_D`` of a map plan); emitted in place by the primitive (a load, a select and a store), like the
    instrumenter's own record primitives, instead of a call of a compiled function per site."""

    _SLOT = (P_SCALAR_I, P_SCALAR_F, M_SCALAR_D)

    def __init__(self, precops: int, precout: int) -> None:
        self.precops, self.precout = int(precops), int(precout)

    def codegen(self, context, builder, sig, args):
        sp, row, k, parr = args[1], args[2], args[3], args[4]
        data = context.make_array(sig.args[4])(context, builder, value=parr).data

        def plan(i):
            return builder.load(builder.gep(data, [rt._I64(i)], inbounds=True))

        if self.precops == self.precout:
            code = plan(self._SLOT[self.precops])
        else:
            byops = builder.icmp_signed("!=", plan(P_BYOPS), rt._I64(0))
            code = builder.select(byops, plan(self._SLOT[self.precops]), plan(self._SLOT[self.precout]))
        rt._store_row(builder, rt._load_row(builder, sp, rt._I64(3)), row, code)
        return context.make_tuple(builder, sig.return_type, [builder.add(row, rt._I64(1)), k])


class _MemRecord:
    """``x[idx]`` with a scalar (or tuple) index: the memory record ``runtime.recm`` writes, in place."""

    def __init__(self, part) -> None:
        self.part = part  # runtime._mem_part: None for a tuple's element (no record)

    def codegen(self, context, builder, sig, args):
        sp, row, k, code, x, idx = args[1], args[2], args[3], args[5], args[6], args[7]
        if self.part is not None:
            base0, base1 = (rt._load_row(builder, sp, rt._I64(j)) for j in (3, 4))
            self.part(context, builder, base0, base1, row, code, x, idx, sig.args[6], sig.args[7])
            row = builder.add(row, rt._I64(1))
        return context.make_tuple(builder, sig.return_type, [row, k])


_FALLBACK_RECORD = _ScalarRecord(0, 0)
_ROW_AND_COUNT = types.UniTuple(types.int64, 2)


def _lib_typing(chooser, args):
    """Typing of a library-call primitive ``(B, S, p, k, P, ...) -> (row, thread changes)``: ``chooser``
    (a ``_ol_*`` function) picks, from the argument types, the site's single record (emitted in place) or a
    generated implementation, compiled as an internal function of the caller (once per implementation and
    signature)."""
    impl = chooser(*args)
    sig = _ROW_AND_COUNT(*args)
    if isinstance(impl, (_ScalarRecord, _MemRecord)):
        return sig, impl.codegen

    def codegen(context, builder, sig, llargs):
        return context.compile_internal(builder, impl, sig, llargs)

    return sig, codegen


def _lib_primitive(name: str, chooser, params: str):
    """The Numba intrinsic ``name(params)`` typed by :func:`_lib_typing` with ``chooser``."""
    ns = {"_lib_typing": _lib_typing, "chooser": chooser}
    exec(f"def {name}(typingctx, {params}):\n    return _lib_typing(chooser, ({params},))", ns)
    return intrinsic(ns[name])


def _gen(params: str, body: list[str]):
    """A function ``impl(params)`` with ``body`` (generated per argument types; cached by its text);
    :data:`_FALLBACK` gives the in-place single record instead."""
    if body is _FALLBACK:
        return _FALLBACK_RECORD
    # compiled code passes the state array's address as S (and 0 as B): bodies write records and counters
    # through it and hand it to the kernels' C entry points
    if "c_k_" in "\n".join(body):
        _c_entry_points()
    src = f"def impl({params}):\n" + "\n".join("    " + line for line in body)
    fn = _GEN_CACHE.get(src)
    if fn is None:
        ns = dict(_GEN_NS)
        exec(src, ns)
        fn = _GEN_CACHE[src] = ns["impl"]
    return fn


def _slot_src(o: int, var: str, ndim: int, nd: int) -> list[str]:
    """Statements filling the map-descriptor slot at ``o`` for array ``var`` broadcast to ``nd`` dims
    (the compiled twin of :func:`_slot_py`)."""
    lines = [f"D[{o}] = 1", f"D[{o + 1}] = dev_ptr({var})", f"D[{o + 2}] = {var}.itemsize"]
    off = nd - ndim
    for d in range(ndim):
        lines.append(f"D[{o + 3 + off + d}] = {var}.strides[{d}] if {var}.shape[{d}] != 1 else 0")
    return lines


_FALLBACK = [f"return _rec_s(S, p, P[{P_SCALAR_I}]), k"]


def _map_body(out, ops, names) -> list[str] | None:
    """Statements recording an elementwise site whose result is the array ``out`` (None: not expandable)."""
    precops = max([_prec(t) for t in ops] + [0])
    if not _num_array(out) or not all(_num_array(t) or _num_scalar(t) for t in ops) or \
            any(isinstance(t, types.Array) and t.ndim > out.ndim for t in ops):
        return None
    nd = out.ndim
    body = ["D = np.zeros(%d, np.int64)" % D_LEN, f"D[0] = {nd}"]
    body += [f"D[{1 + d}] = out.shape[{d}]" for d in range(nd)]
    body += _slot_src(_dslot(0), "out", nd, nd)
    mask = 0
    for j, t in enumerate(ops):
        if isinstance(t, types.Array):
            mask |= 1 << j
            body += _slot_src(_dslot(j + 1), names[j], t.ndim, nd)
    body += [f"prec = {precops} if P[{P_BYOPS}] != 0 else {_prec(out)}",
             "opc = np.int64(0)",
             f"if P[{M_HASOP}] != 0:",
             f"    opc = P[{M_OP_I + mask}]",
             "    if prec > 0:",
             f"        opc = P[{M_OP_F + mask}]",
             "    if prec == 2:",
             "        opc = fp64_code(opc)",
             *_kernel_call("k_map", f"np.int64({len(ops)}), opc, P[{M_STORE + mask}]")]
    return body


def _map_impl(out, ops):
    names = [f"a{j}" for j in range(len(ops))]
    params = ", ".join(["B", "S", "p", "k", "P", "out"] + names)
    if not isinstance(out, types.Array):
        return _ScalarRecord(max([_prec(t) for t in ops] + [0]), _prec(out))
    return _gen(params, _map_body(out, ops, names) or _FALLBACK)


def _ol_xmap0(B, S, p, k, P, out):
    return _map_impl(out, [])


def _ol_xmap1(B, S, p, k, P, out, a0):
    return _map_impl(out, [a0])


def _ol_xmap2(B, S, p, k, P, out, a0, a1):
    return _map_impl(out, [a0, a1])


def _ol_xmap3(B, S, p, k, P, out, a0, a1, a2):
    return _map_impl(out, [a0, a1, a2])


def _ol_xcopy(B, S, p, k, P, out, src):
    params = "B, S, p, k, P, out, src"
    body = _map_body(out, [src], ["src"]) if isinstance(src, types.Array) else None
    if body is None:
        return _gen(params, _FALLBACK)
    return _gen(params, ["if data_ptr(out) == data_ptr(src):", f"    return _rec_s(S, p, P[{P_SCALAR_I}]), k"] + body)


def _acc_slot_src(s: int, var: str) -> tuple[int, list[str]]:
    q = _aslot(s)
    return q, [f"D[{q}] = 1", f"D[{q + 1}] = dev_ptr({var})", f"D[{q + 2}] = {var}.itemsize"]


def _acc_full_src(x, xv: str, out, ov: str | None, scan: bool) -> list[str]:
    nd = x.ndim
    q, body = _acc_slot_src(1, xv)
    body += ["D[0] = 0", f"D[{1 + MAXD}] = {nd}"]
    for d in range(nd):
        body += [f"D[{2 + MAXD + d}] = {xv}.shape[{d}]",
                 f"D[{q + 3 + MAXD + d}] = {xv}.strides[{d}] if {xv}.shape[{d}] != 1 else 0"]
    if scan and ov is not None:
        qo, lines = _acc_slot_src(0, ov)
        body += lines
        body.append(f"step = {ov}.strides[0]" if out.ndim == 1 else f"step = np.int64({ov}.itemsize)")
        for d in range(nd - 1, -1, -1):
            body += [f"D[{qo + 3 + MAXD + d}] = step if {xv}.shape[{d}] != 1 else 0", f"step *= {xv}.shape[{d}]"]
    return body


def _acc_axis_src(x, out, scan: bool) -> list[str]:
    nd = x.ndim
    q, body = _acc_slot_src(1, "x")
    body += ["ax = axis", "if ax < 0:", f"    ax += {nd}", "j = 0"]
    for d in range(nd):
        body += [f"if ax != {d}:", f"    D[1 + j] = x.shape[{d}]",
                 f"    D[{q + 3} + j] = x.strides[{d}] if x.shape[{d}] != 1 else 0", "    j += 1"]
    body += [f"D[0] = {nd - 1}", f"D[{1 + MAXD}] = 1", f"D[{2 + MAXD}] = x.shape[ax]",
             f"D[{q + 3 + MAXD}] = x.strides[ax] if x.shape[ax] != 1 else 0"]
    qo, lines = _acc_slot_src(0, "out")
    body += lines
    if scan:
        body.append("j = 0")
        for d in range(nd):
            body += [f"if ax != {d}:", f"    D[{qo + 3} + j] = out.strides[{d}] if out.shape[{d}] != 1 else 0",
                     "    j += 1"]
        body.append(f"D[{qo + 3 + MAXD}] = out.strides[ax] if out.shape[ax] != 1 else 0")
    else:
        for d in range(out.ndim):
            body.append(f"D[{qo + 3 + d}] = out.strides[{d}] if out.shape[{d}] != 1 else 0")
    return body


def _acc_call(nops: int, flags: int, prec_src: str) -> list[str]:
    """Statements running the accumulating kernel with the codes of the precision ``prec_src`` (an expression:
    0 integer, 1 single, 2 double)."""
    return [f"prec = {prec_src}",
            f"pre = P[{A_PRE_I}]", f"acc = P[{A_ACC_I}]", f"fin = P[{A_FIN}]",
            "if prec > 0:", f"    pre = P[{A_PRE_F}]", f"    acc = P[{A_ACC_F}]",
            "if prec == 2:", "    pre = fp64_code(pre)", "    acc = fp64_code(acc)", "    fin = fp64_code(fin)",
            *_kernel_call("k_acc", f"np.int64({nops}), np.int64({flags}), pre, acc, fin")]


def _ol_xreduce(B, S, p, k, P, out, x, axis):
    params = "B, S, p, k, P, out, x, axis"
    if not _num_array(x):
        return _gen(params, _FALLBACK)
    fp_src = f"{_prec(x)} if P[{P_BYOPS}] != 0 else {_prec(out)}"
    head = [f"D = np.zeros({A_LEN}, np.int64)"]
    no_axis = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    if no_axis or (isinstance(axis, types.Integer) and x.ndim == 1):
        return _gen(params, head + _acc_full_src(x, "x", out, None, False) + _acc_call(1, F_STORE_OUT, fp_src))
    if isinstance(axis, types.Integer) and x.ndim >= 2 and _num_array(out) and out.ndim == x.ndim - 1:
        return _gen(params, head + _acc_axis_src(x, out, False) + _acc_call(1, F_STORE_OUT, fp_src))
    return _gen(params, _FALLBACK)


def _ol_xscan(B, S, p, k, P, out, x, axis):
    params = "B, S, p, k, P, out, x, axis"
    if not (_num_array(x) and _num_array(out)):
        return _gen(params, _FALLBACK)
    fp_src = str(_prec(out))
    head = [f"D = np.zeros({A_LEN}, np.int64)"]
    no_axis = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    if no_axis or (isinstance(axis, types.Integer) and x.ndim == 1):
        return _gen(params, head + _acc_full_src(x, "x", out, "out", True) + _acc_call(1, F_SCAN, fp_src))
    if isinstance(axis, types.Integer) and out.ndim == x.ndim:
        return _gen(params, head + _acc_axis_src(x, out, True) + _acc_call(1, F_SCAN, fp_src))
    return _gen(params, _FALLBACK)


def _work_src(out, args: list, names: list[str], flag) -> list[str]:
    """Statements counting an unexpanded call in ``S`` (the compiled twin of :meth:`InterpretedLib.work`)."""
    dims = []
    for j in range(2):
        t = args[j] if j < len(args) else None
        v = names[j] if j < len(names) else None
        if isinstance(t, types.Array):
            nd = t.ndim
            dims += [str(nd), f"{v}.shape[{nd - 2}]" if nd >= 2 else "1", f"{v}.shape[{nd - 1}]" if nd >= 1 else "1",
                     f"{v}.size"]
        else:
            dims += ["0", "1", "1", "0"]
    arrs = [v for t, v in zip(args, names) if isinstance(t, types.Array)]
    res = []
    if isinstance(out, types.Array):
        res = ["out"]
    elif isinstance(out, types.BaseTuple):
        res = [f"out[{i}]" for i, t in enumerate(out.types) if isinstance(t, types.Array)]
    if not arrs and not res:
        return ["return None"]
    elems = " + ".join([f"{v}.size" for v in arrs] or ["0"])
    relems = " + ".join([f"{v}.size" for v in res] or ["0"])
    nbytes = " + ".join([f"{v}.nbytes" for v in arrs + res])
    if isinstance(flag, (types.Boolean, types.Integer)):
        fl = "1 if flag else 0"
    elif isinstance(flag, (types.NoneType, types.Omitted)) or flag is None:
        fl = "0"
    else:
        fl = "1"
    return [f"f = work_flops(P[{P_WKIND}], {', '.join(dims)}, {elems}, {relems}, {fl})",
            f"slot = P[{P_SLOT}]", "_add_s(S, slot + 2, 1)", "_add_s(S, slot + 3, f)",
            f"_add_s(S, slot + 4, {nbytes})", "return None"]


@overload(xwork)
def _ol_xwork(S, P, out, a0, a1, a2, flag):
    return _gen("S, P, out, a0, a1, a2, flag", _work_src(out, [a0, a1, a2], ["a0", "a1", "a2"], flag))


def _matmul_src(a, b) -> list[str]:
    body = [f"D = np.zeros({A_LEN}, np.int64)"]
    qa, la = _acc_slot_src(1, "a")
    qb, lb = _acc_slot_src(2, "b")
    body += la + lb
    body += [f"K = a.shape[{a.ndim - 1}]", f"D[{1 + MAXD}] = 1", f"D[{2 + MAXD}] = K",
             f"D[{qa + 3 + MAXD}] = a.strides[{a.ndim - 1}] if K != 1 else 0",
             f"D[{qb + 3 + MAXD}] = b.strides[0] if K != 1 else 0"]
    if a.ndim == 1 and b.ndim == 1:
        return body + ["D[0] = 0"]
    qo, lo = _acc_slot_src(0, "out")
    body += lo
    if a.ndim == 2 and b.ndim == 2:
        body += ["D[0] = 2", "D[1] = a.shape[0]", "D[2] = b.shape[1]",
                 f"D[{qa + 3}] = a.strides[0] if a.shape[0] != 1 else 0",
                 f"D[{qb + 4}] = b.strides[1] if b.shape[1] != 1 else 0"]
        nd = 2
    elif a.ndim == 2:
        body += ["D[0] = 1", "D[1] = a.shape[0]", f"D[{qa + 3}] = a.strides[0] if a.shape[0] != 1 else 0"]
        nd = 1
    else:
        body += ["D[0] = 1", "D[1] = b.shape[1]", f"D[{qb + 3}] = b.strides[1] if b.shape[1] != 1 else 0"]
        nd = 1
    body += [f"D[{qo + 3 + d}] = out.strides[{d}] if out.shape[{d}] != 1 else 0" for d in range(nd)]
    return body


def _ol_xmatmul(B, S, p, k, P, out, a, b):
    params = "B, S, p, k, P, out, a, b"
    ok = _num_array(a) and _num_array(b) and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2
    if ok and (a.ndim == 1 and b.ndim == 1 or _num_array(out)):
        return _gen(params, _matmul_src(a, b) + _acc_call(2, F_STORE_OUT, str(_prec(out))))
    work = _work_src(out, [a, b], ["a", "b"], None)
    if work[-1] == "return None" and len(work) > 1:
        work = work[:-1]
    return _gen(params, (work if len(work) > 1 else []) + _FALLBACK)


def _ol_xvdot(B, S, p, k, P, out, a, b):
    params = "B, S, p, k, P, out, a, b"
    work = _work_src(out, [a, b], ["a", "b"], None)
    work = work[:-1] if len(work) > 1 else []
    if not (_num_array(a) and _num_array(b) and a.ndim == b.ndim):
        return _gen(params, work + _FALLBACK)
    body = ["if a.shape != b.shape:"] + ["    " + w for w in work + _FALLBACK]
    body += [f"D = np.zeros({A_LEN}, np.int64)"] + _acc_full_src(a, "a", None, None, False)
    qb, lb = _acc_slot_src(2, "b")
    body += lb + [f"D[{qb + 3 + MAXD + d}] = b.strides[{d}] if b.shape[{d}] != 1 else 0" for d in range(b.ndim)]
    return _gen(params, body + _acc_call(2, 0, str(_prec(out))))


def _ol_xsub(B, S, p, k, P, code, x, idx, out):
    params = "B, S, p, k, P, code, x, idx, out"
    if not isinstance(idx, types.Array):
        return _MemRecord(rt._mem_part(x, idx))
    if _num_array(x) and _num_array(out) and isinstance(idx.dtype, types.Integer) and x.ndim >= 1 \
            and idx.ndim + x.ndim - 1 <= MAXD and out.ndim == idx.ndim + x.ndim - 1:
        nd = out.ndim
        body = [f"D = np.zeros({D_LEN}, np.int64)", f"D[0] = {nd}"]
        body += [f"D[{1 + d}] = out.shape[{d}]" for d in range(nd)]
        body += _slot_src(_dslot(0), "out", nd, nd)
        o = _dslot(1)
        body += [f"D[{o}] = 1", f"D[{o + 1}] = dev_ptr(idx)", f"D[{o + 2}] = idx.itemsize"]
        body += [f"D[{o + 3 + d}] = idx.strides[{d}] if idx.shape[{d}] != 1 else 0" for d in range(idx.ndim)]
        o = _dslot(2)
        body += [f"D[{o}] = 1", f"D[{o + 1}] = dev_ptr(x)", f"D[{o + 2}] = x.itemsize", "rest = 1"]
        for d in range(1, x.ndim):
            body += [f"D[{o + 3 + idx.ndim + d - 1}] = x.strides[{d}] if x.shape[{d}] != 1 else 0",
                     f"rest *= x.shape[{d}]"]
        body += ["vals = np.ascontiguousarray(idx).ravel().astype(np.int64)",
                 *_kernel_call("k_gather", "data_ptr(vals), len(vals), x.strides[0], x.shape[0], max(rest, 1)",
                               "vals")]
        return _gen(params, body)
    if _num_array(x) and _num_array(out) and isinstance(idx.dtype, types.Boolean) and idx.ndim == x.ndim \
            and out.ndim == 1:
        nd = x.ndim
        o = _dslot(0)
        body = ["if idx.shape != x.shape:", f"    return _rec_s(S, p, P[{P_SCALAR_I}]), k",
                f"D = np.zeros({D_LEN}, np.int64)", f"D[0] = {nd}"]
        body += [f"D[{1 + d}] = x.shape[{d}]" for d in range(nd)]
        body += [f"D[{o}] = 1", f"D[{o + 1}] = dev_ptr(out)", f"D[{o + 2}] = out.itemsize",
                 f"D[{o + 3}] = out.strides[0]"]
        body += _slot_src(_dslot(1), "idx", nd, nd) + _slot_src(_dslot(2), "x", nd, nd)
        body += ["mask = np.ascontiguousarray(idx).ravel()",
                 *_kernel_call("k_mask", "data_ptr(mask), len(mask)", "mask")]
        return _gen(params, body)
    return _gen(params, _FALLBACK)


@overload(xiter)
def _ol_xiter(c0, c1, p, code, it, i):
    # an element of a 1-D array: its LOAD; a row of a deeper array: one OTHER record (recm's rules)
    if isinstance(it, types.Array):
        return lambda c0, c1, p, code, it, i: rt.recm(c0, c1, p, code, it, i)
    return lambda c0, c1, p, code, it, i: p


xmap0 = _lib_primitive("xmap0", _ol_xmap0, "B, S, p, k, P, out")
xmap1 = _lib_primitive("xmap1", _ol_xmap1, "B, S, p, k, P, out, a0")
xmap2 = _lib_primitive("xmap2", _ol_xmap2, "B, S, p, k, P, out, a0, a1")
xmap3 = _lib_primitive("xmap3", _ol_xmap3, "B, S, p, k, P, out, a0, a1, a2")
xcopy = _lib_primitive("xcopy", _ol_xcopy, "B, S, p, k, P, out, src")
xreduce = _lib_primitive("xreduce", _ol_xreduce, "B, S, p, k, P, out, x, axis")
xscan = _lib_primitive("xscan", _ol_xscan, "B, S, p, k, P, out, x, axis")
xmatmul = _lib_primitive("xmatmul", _ol_xmatmul, "B, S, p, k, P, out, a, b")
xvdot = _lib_primitive("xvdot", _ol_xvdot, "B, S, p, k, P, out, a, b")
xsub = _lib_primitive("xsub", _ol_xsub, "B, S, p, k, P, code, x, idx, out")

PRIMITIVES = {
    "_pc_xmap0": xmap0, "_pc_xmap1": xmap1, "_pc_xmap2": xmap2, "_pc_xmap3": xmap3, "_pc_xcopy": xcopy,
    "_pc_xreduce": xreduce, "_pc_xscan": xscan, "_pc_xmatmul": xmatmul, "_pc_xvdot": xvdot, "_pc_xsub": xsub,
    "_pc_xiter": xiter, "_pc_xwork": xwork, "_pc_nd": np.ndarray, "_pc_Expand": Expand, "_pc_FX": EXPAND_FLOAT,
}


# ----------------------------------------------------------------------------------------------------------
# region metadata


def region_extra(prog, S) -> tuple[list[dict], list[dict]]:
    """``(library_work, library_expanded)`` of a region from the counters ``S`` (see module docstring).

    Returns
    -------
    (list of dict, list of dict)
        Unexpanded calls per site ``{"call", "location", "calls", "flops", "bytes"}`` and expanded sites
        ``{"call", "location", "kind", "elements"}`` (calls and elements summed over the region), each in
        site order, only sites that ran.
    """
    work, expanded = [], []
    for j, site in enumerate(getattr(prog, "lib_slots", [])):
        o = S_HEAD + SLOT_WIDTH * j
        if o + SLOT_WIDTH > len(S):
            break
        calls, elems, ocalls, flops, nbytes = (int(v) for v in S[o:o + SLOT_WIDTH])
        loc = f"{site['file']}:{site['line']}"
        if calls:
            expanded.append({"call": site["call"], "location": loc, "kind": site["kind"], "calls": calls,
                             "elements": elems})
        if ocalls:
            work.append({"call": site["name"], "location": loc, "calls": ocalls, "flops": flops, "bytes": nbytes})
    return work, expanded


def annotate(info, prog, S) -> None:
    """Put the region's library metadata into ``info.extra`` (before the sinks' ``end_region``)."""
    if S is None or not getattr(prog, "lib_slots", None):
        return
    work, expanded = region_extra(prog, S)
    info.extra["library_work"] = work
    info.extra["library_expanded"] = expanded


del operator
