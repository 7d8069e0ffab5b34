"""A software prefetch for Numba kernels (LLVM's ``llvm.prefetch``).

Random lookups in tables larger than the cache (the block index, per-block arrays) cost a memory latency
each, and a branch that depends on the loaded value keeps the processor from overlapping them. A kernel
that knows the address of a lookup some iterations ahead calls :func:`prefetch` on it; the line is then
in the cache when the lookup comes. A prefetch never faults and changes no result.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint that ``arr[idx]`` (1-d array, integer index, no bounds check) will be read soon."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        i8p = ir.PointerType(ir.IntType(8))
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        # the unsuffixed (pre-LLVM 10) name: LLVM's IR upgrader renames it to the overload of the pointer
        # type in use (p0i8 with typed pointers, p0 with opaque ones), so it works with every llvmlite
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch")
        # read access, high temporal locality, data cache
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen
