"""Eight int32 lanes as one SIMD vector for Numba kernels (LLVM ``<8 x i32>``, one AVX2 register), and the
small helpers the generated ILP passes (``features/fast/ilp_unrolled.py``) share: unchecked element access and
the hashing constant of the word table (``features/fast/ilp_mem.py``). See ``features/fast/gen_ilp.py`` for how the
passes use them."""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

LOAD = np.uint8(8)
STORE = np.uint8(9)
LANES = 8
#: Fibonacci hashing multiplier (2^64 / golden ratio, as signed 64-bit) of the word table
HASH_MUL = np.int64(-7046029254386353131)

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_VT = ir.VectorType(_I32, LANES)


class I32x8Type(types.Type):
    """Eight int32 lanes (LLVM ``<8 x i32>``), held in a vector register inside a kernel."""

    def __init__(self):
        super().__init__(name="I32x8")


i32x8 = I32x8Type()


@register_model(I32x8Type)
class _I32x8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VT)


def _row_pointer(context, builder, arrty, arr, row):
    a = context.make_array(arrty)(context, builder, arr)
    p = builder.gep(a.data, [builder.mul(row, ir.Constant(row.type, LANES))])
    return builder.bitcast(p, _VT.as_pointer())


@intrinsic
def vload(typingctx, arr, row):
    """Row ``row`` of a C-contiguous int32 array of shape (rows, 8), as a vector (no bounds check)."""
    sig = i32x8(arr, types.intp)

    def codegen(context, builder, sig, args):
        row = context.cast(builder, args[1], sig.args[1], types.intp)
        return builder.load(_row_pointer(context, builder, sig.args[0], args[0], row), align=4)
    return sig, codegen


@intrinsic
def vstore(typingctx, arr, row, v):
    """Store a vector into row ``row`` of an int32 array of shape (rows, 8) (no bounds check)."""
    sig = types.void(arr, types.intp, i32x8)

    def codegen(context, builder, sig, args):
        row = context.cast(builder, args[1], sig.args[1], types.intp)
        builder.store(args[2], _row_pointer(context, builder, sig.args[0], args[0], row), align=4)
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def vprefetch(typingctx, arr, row):
    """Hint that row ``row`` of an int32 array of shape (rows, 8) will be read soon (LLVM's prefetch; never
    faults, so ``row`` need not be in bounds)."""
    sig = types.void(arr, types.intp)

    def codegen(context, builder, sig, args):
        row = context.cast(builder, args[1], sig.args[1], types.intp)
        i8p = ir.PointerType(ir.IntType(8))
        fnty = ir.FunctionType(ir.VoidType(), [i8p, _I32, _I32, _I32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch")
        ptr = builder.bitcast(_row_pointer(context, builder, sig.args[0], args[0], row), i8p)
        builder.call(fn, [ptr, _I32(0), _I32(3), _I32(1)])  # read, high temporal locality, data cache
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def vmax(typingctx, a, b):
    """Lane-wise signed maximum."""
    sig = i32x8(i32x8, i32x8)

    def codegen(context, builder, sig, args):
        return builder.select(builder.icmp_signed(">", args[0], args[1]), args[0], args[1])
    return sig, codegen


@intrinsic
def vadd(typingctx, a, b):
    """Lane-wise sum (modulo 2^32)."""
    sig = i32x8(i32x8, i32x8)

    def codegen(context, builder, sig, args):
        return builder.add(args[0], args[1])
    return sig, codegen


@intrinsic
def vsplat(typingctx, s):
    """The integer ``s`` (truncated to int32) in every lane."""
    sig = i32x8(types.intp)

    def codegen(context, builder, sig, args):
        x = builder.trunc(context.cast(builder, args[0], sig.args[0], types.intp), _I32)
        v = builder.insert_element(ir.Constant(_VT, ir.Undefined), x, ir.Constant(_I32, 0))
        return builder.shuffle_vector(v, ir.Constant(_VT, ir.Undefined), ir.Constant(_VT, [0] * LANES))
    return sig, codegen


@intrinsic
def vinc_eq(typingctx, v, a, b):
    """``v + 1`` in the lanes where ``a == b``, ``v`` elsewhere."""
    sig = i32x8(i32x8, i32x8, i32x8)

    def codegen(context, builder, sig, args):
        return builder.add(args[0], builder.zext(builder.icmp_signed("==", args[1], args[2]), _VT))
    return sig, codegen


@intrinsic
def lane_events(typingctx, t1, x, rem, z):
    """Bit k: lane k has ``t1 > x``; bit 8 + k: lane k has ``rem == z``."""
    sig = types.intp(i32x8, i32x8, i32x8, i32x8)

    def codegen(context, builder, sig, args):
        gt = builder.zext(builder.bitcast(builder.icmp_signed(">", args[0], args[1]), ir.IntType(LANES)), _I64)
        eq = builder.zext(builder.bitcast(builder.icmp_signed("==", args[2], args[3]), ir.IntType(LANES)), _I64)
        return builder.or_(gt, builder.shl(eq, ir.Constant(_I64, LANES)))
    return sig, codegen


@intrinsic
def vget(typingctx, v, k):
    """Lane ``k`` (sign-extended)."""
    sig = types.intp(i32x8, types.intp)

    def codegen(context, builder, sig, args):
        k = context.cast(builder, args[1], sig.args[1], types.intp)
        return builder.sext(builder.extract_element(args[0], k), _I64)
    return sig, codegen


@intrinsic
def vset(typingctx, v, k, s):
    """``v`` with lane ``k`` replaced by ``s`` (truncated to int32)."""
    sig = i32x8(i32x8, types.intp, types.intp)

    def codegen(context, builder, sig, args):
        k = context.cast(builder, args[1], sig.args[1], types.intp)
        s = builder.trunc(context.cast(builder, args[2], sig.args[2], types.intp), _I32)
        return builder.insert_element(args[0], s, k)
    return sig, codegen


@intrinsic
def uget(typingctx, arr, i):
    """``arr[i]`` of a 1-D array without negative-index wraparound or bounds check (``i`` >= 0)."""
    sig = arr.dtype(arr, types.intp)

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        return builder.load(builder.gep(a.data, [i]))
    return sig, codegen


@intrinsic
def uset(typingctx, arr, i, v):
    """``arr[i] = v`` of a 1-D array without wraparound or bounds check (``i`` >= 0)."""
    sig = types.void(arr, types.intp, arr.dtype)

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        builder.store(context.cast(builder, args[2], sig.args[2], sig.args[0].dtype), builder.gep(a.data, [i]))
        return context.get_dummy_value()
    return sig, codegen

