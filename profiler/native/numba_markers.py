"""Region markers for compiled Numba code: the client requests of ``include/portcast.h`` as Numba intrinsics.

Use inside ``@numba.njit`` functions, then run the script under the tool
(``portcast record -- python script.py``) to trace the compiled code's machine instructions::

    from profiler.native.numba_markers import region_start, region_end, region_thread

    @numba.njit(cache=True)
    def saxpy(a, x, y):
        region_start("saxpy")
        for i in range(x.size):
            region_thread(i)
            y[i] += a * x[i]
        region_end("saxpy")

When the program does not run under Valgrind the markers cost a few register rotations (the client
request sequence: ``rol rdi`` by 3, 13, 61, 51 bits, then ``xchg rbx, rbx``), and return nothing.
Region names must be string literals. amd64 only.
"""

from __future__ import annotations

import hashlib

from llvmlite import binding as _llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

REQ_BASE = (ord("P") << 24) | (ord("C") << 16)
REQ_REGION_START = REQ_BASE + 1
REQ_REGION_END = REQ_BASE + 2
REQ_THREAD = REQ_BASE + 3

# Numba's JIT does not register LLVM's native assembly parser, which inline assembly needs
_llvm.initialize_native_asmparser()

_I64 = ir.IntType(64)
_I32 = ir.IntType(32)


def _client_request(builder, request: int, arg1) -> ir.Value:
    """Emit Valgrind's amd64 client-request sequence with an argument block ``[request, arg1, 0, 0, 0, 0]``."""
    block = cgutils.alloca_once(builder, _I64, size=6)
    for i, v in enumerate([_I64(request), arg1, _I64(0), _I64(0), _I64(0), _I64(0)]):
        builder.store(v, builder.gep(block, [_I32(i)]))
    fnty = ir.FunctionType(_I64, [_I64, _I64])
    asm = ir.InlineAsm(fnty, "rolq $$3, %rdi\n\trolq $$13, %rdi\n\trolq $$61, %rdi\n\trolq $$51, %rdi\n\t"
                             "xchgq %rbx, %rbx", "={dx},{ax},0,~{cc},~{memory}", side_effect=True)
    return builder.call(asm, [builder.ptrtoint(block, _I64), _I64(0)])


def _cstring(builder, text: str) -> ir.Value:
    """Address (as i64) of a NUL-terminated constant holding ``text`` in the function's module."""
    data = bytearray(text.encode("utf-8") + b"\0")
    mod = builder.module
    name = "portcast_region_name_" + hashlib.sha1(data).hexdigest()[:16]
    gv = mod.globals.get(name)
    if gv is None:
        arr_t = ir.ArrayType(ir.IntType(8), len(data))
        gv = ir.GlobalVariable(mod, arr_t, name)
        gv.global_constant = True
        gv.linkage = "internal"
        gv.initializer = ir.Constant(arr_t, data)
    return builder.ptrtoint(builder.gep(gv, [_I32(0), _I32(0)]), _I64)


def _literal_name(name, marker: str) -> str:
    if not isinstance(name, types.StringLiteral):
        raise errors.TypingError(f"{marker}(name): the region name must be a string literal, got {name}")
    return name.literal_value


@intrinsic(prefer_literal=True)
def region_start(typingctx, name):
    """Start recording region ``name`` (a string literal) when run under Portcast's Valgrind tool."""
    text = _literal_name(name, "region_start")

    def codegen(context, builder, sig, args):
        _client_request(builder, REQ_REGION_START, _cstring(builder, text))
        return context.get_dummy_value()

    return types.none(name), codegen


@intrinsic(prefer_literal=True)
def region_end(typingctx, name):
    """End region ``name`` (a string literal)."""
    text = _literal_name(name, "region_end")

    def codegen(context, builder, sig, args):
        _client_request(builder, REQ_REGION_END, _cstring(builder, text))
        return context.get_dummy_value()

    return types.none(name), codegen


@intrinsic
def region_thread(typingctx, i):
    """Set the logical thread (``tid``) of the following records to the integer ``i`` (-1: none)."""
    if not isinstance(i, types.Integer):
        raise errors.TypingError(f"region_thread(i): expected an integer, got {i}")

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], types.int64)
        _client_request(builder, REQ_THREAD, v)
        return context.get_dummy_value()

    return types.none(i), codegen


__all__ = ["region_start", "region_end", "region_thread"]
