"""The two recording back ends, the only mode-specific part of the rewriter: what a record statement looks like
in interpreted and in compiled mode, and the primitives the generated code calls."""

from __future__ import annotations

import abc
import ast

from core.trace_schema import Op, fp64_class

from .. import libcalls as lc
from .. import runtime as rt
from .program import Program


def _typed_codes(pc, op_i, op_f) -> tuple[int, int, int]:
    """The integer, single- and double-precision codes of a typed record (``op_f`` is the single-precision
    class; its FP64 class the double one)."""
    return rt.code_of(pc, op_i), rt.code_of(pc, op_f), rt.code_of(pc, fp64_class(op_f))


class _Backend(abc.ABC):
    """What a record statement is in one execution mode. The rewriter asks for source text (statements as
    strings) and never looks inside it; ``pc`` is a static id, ``op`` an :class:`~core.trace_schema.Op`, names
    (``obj``, ``idx``, ``probes``, ...) are the temporaries or variables of the generated code. Each back end
    implements every method (abstract here, so a missing one fails when the back end is made)."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self.ns: dict = {}  # namespace of the function being rewritten (set by the rewriter): lookup tables go there

    @abc.abstractmethod
    def prologue(self) -> list[str]:
        """Statements at the entry of every instrumented function (bind the buffer's state to locals)."""

    @abc.abstractmethod
    def rec(self, pc, op, taken=0) -> str:
        """One record of ``pc`` with operation class ``op`` (``taken``: 1 for a taken BRANCH)."""

    @abc.abstractmethod
    def rec_typed(self, pc, op_i, op_f, probes, result=False) -> str:
        """One record whose class is ``op_f`` (or its FP64 class, see :func:`core.trace_schema.fp64_class`) when
        any of the values ``probes`` is a float, else ``op_i``. Precision: interpreted mode combines the
        probes' types as NumPy promotes them (a Python float is "weak": with a float32 the operation is
        single precision; ``result``: ``probes[0]`` is the operation's result, a Python float there was
        computed in double); compiled mode takes the widest of their Numba types."""

    @abc.abstractmethod
    def rec_branch(self, pc, cond) -> str:
        """A BRANCH record, taken when the expression ``cond`` is true."""

    @abc.abstractmethod
    def rec_mem(self, pc, op, obj, idx) -> str:
        """A LOAD or STORE record with the address and size of element ``idx`` of the array ``obj``."""

    @abc.abstractmethod
    def rec_alloc(self, pc, obj) -> str:
        """The OTHER record of an allocation (``np.empty``): with the address and size of the new array ``obj``
        when it is one (the dependence check forgets what earlier threads did with those bytes)."""

    @abc.abstractmethod
    def rec_attr(self, pc, op, obj, name) -> str:
        """The record of reading attribute ``name`` of ``obj`` (array metadata such as ``.shape``)."""

    @abc.abstractmethod
    def rec_kind(self, pc, ops, probe) -> str:
        """One record whose class is picked from ``ops`` by the kind of the value ``probe`` (``ops``: the
        classes of an int, float, complex, int/float/complex array, other object; a double-precision value
        takes the FP64 class, see ``runtime.kind_ops`` and ``runtime.VK_*``)."""

    @abc.abstractmethod
    def rec_kattr(self, pc, ops, obj, name) -> str:
        """As :meth:`rec_kind` for the attribute ``obj.name`` (``.real``, ``.imag``)."""

    @abc.abstractmethod
    def set_tid(self, expr) -> str:
        """The statement that makes ``expr`` the logical GPU thread of the records that follow."""

    @abc.abstractmethod
    def check(self) -> list[str]:
        """A check point: statements that hand a full buffer to the sinks."""

    @abc.abstractmethod
    def lib(self, method, plan, out, args, guard=None, scalar=None, n_pcs=0) -> str:
        """Run the expansion ``method`` of a library call (:mod:`profiler.libcalls`) with the site's ``plan``;
        with ``guard``, only when that value is an ndarray, else the statement ``scalar``. ``n_pcs``: the
        record sites of the expansion."""

    @abc.abstractmethod
    def lib_typed(self, plan, out, args, pc, op_i, op_f, probes, n_pcs=0) -> str:
        """An elementwise site: its one typed record for scalars, the map expansion for arrays."""

    @abc.abstractmethod
    def lib_sub(self, plan, code, base, idx, out, scalar, n_pcs=0) -> str:
        """A subscript ``base[idx]``: the gather expansion when ``idx`` is an array, else ``scalar``."""

    @abc.abstractmethod
    def lib_iter(self, code, it, i) -> str:
        """The LOAD record of element ``i`` when iterating over an array or list ``it``."""

    @abc.abstractmethod
    def lib_work(self, plan, out, args, flag) -> str:
        """Count the estimated work of a library call that is not expanded into records."""

    @abc.abstractmethod
    def before_call(self) -> list[str]:
        """Statements before a call to another instrumented function."""

    @abc.abstractmethod
    def after_call(self) -> list[str]:
        """Statements after such a call."""

    @abc.abstractmethod
    def before_return(self) -> list[str]:
        """Statements before the function returns."""


class _Interp(_Backend):
    """Interpreted back end: records are ints appended to a Python list (``_pc_a``), memory records go
    through the buffer's methods (``_pc_m``, ``_pc_m1``, ``_pc_m2``); a check point flushes the list when it
    holds more than the buffer's capacity."""

    @staticmethod
    def prologue() -> list[str]:
        return [
            "_pc_L = _pc_B.L",
            "_pc_a = _pc_L.append",
            "_pc_m = _pc_B.mem",
            "_pc_m1 = _pc_B.m1",
            "_pc_m2 = _pc_B.m2",
            "_pc_ma = _pc_B.attr",
            "_pc_CAP = _pc_B.cap",
            "_pc_X = _pc_B.lib",
        ]

    def rec(self, pc, op, taken=0) -> str:
        return f"_pc_a({rt.code_of(pc, op, taken)})"

    def rec_typed(self, pc, op_i, op_f, probes, result=False) -> str:
        ci, cs, cd = _typed_codes(pc, op_i, op_f)
        if ci == cs == cd or not probes:
            return f"_pc_a({ci})"
        if len(probes) == 1:
            name = f"_pc_K{pc}"
            self.ns[name] = rt.TypeCodes(ci, cs, cd)
            return f"_pc_a({name}[type({probes[0]})])"
        sel = " | ".join(f"{'_pc_FR' if result and k == 0 else '_pc_F'}[type({p})]" for k, p in enumerate(probes))
        return f"_pc_a({rt.precision_codes(ci, cs, cd)}[{sel}])"

    def rec_branch(self, pc, cond) -> str:
        c0 = rt.code_of(pc, Op.BRANCH)
        return f"_pc_a({c0 + 1} if {cond} else {c0})"

    def rec_mem(self, pc, op, obj, idx) -> str:
        if idx.startswith("("):
            node = ast.parse(idx, mode="eval").body
            if isinstance(node, ast.Tuple) and len(node.elts) == 2:
                i, j = (ast.unparse(e) for e in node.elts)
                return f"_pc_m2({rt.code_of(pc, op)}, {obj}, {i}, {j})"
            return f"_pc_m({rt.code_of(pc, op)}, {obj}, {idx})"
        return f"_pc_m1({rt.code_of(pc, op)}, {obj}, {idx})"

    def rec_alloc(self, pc, obj) -> str:
        return f"_pc_B.alloc({rt.code_of(pc, Op.OTHER)}, {obj})"

    def rec_attr(self, pc, op, obj, name) -> str:
        return f"_pc_ma({rt.code_of(pc, op)}, {obj}, {name!r})"

    def rec_kind(self, pc, ops, probe) -> str:
        name = f"_pc_K{pc}"
        self.ns[name] = rt.KindCodes([rt.code_of(pc, op) for op in rt.kind_ops(ops)])
        return f"_pc_a({name}.of({probe}))"

    def rec_kattr(self, pc, ops, obj, name) -> str:
        kname = f"_pc_K{pc}"
        self.ns[kname] = rt.KindCodes([rt.code_of(pc, op) for op in rt.kind_ops(ops)])
        return f"_pc_B.kattr({kname}, {obj}, {name!r})"

    def set_tid(self, expr) -> str:
        return f"_pc_a(-2 - {expr})"

    def check(self) -> list[str]:
        return ["if len(_pc_L) > _pc_CAP: _pc_B.flush()"]

    # library calls (profiler/libcalls.py): the InterpretedLib methods, behind a type test where the site's
    # operands are usually scalars, so that the scalar record keeps its cost
    def lib(self, method, plan, out, args, guard=None, scalar=None, n_pcs=0) -> str:
        call = f"_pc_X.{method}({plan}, {out}{''.join(', ' + a for a in args)})"
        if guard is None:
            return call
        src = f"if type({guard}) is _pc_nd:\n    {call}"
        return src + (f"\nelse:\n    {scalar}" if scalar else "")

    def lib_typed(self, plan, out, args, pc, op_i, op_f, probes, n_pcs=0) -> str:
        """An elementwise site: its one typed record, whose type lookup raises Expand for an ndarray."""
        ci, cs, cd = _typed_codes(pc, op_i, op_f)
        if len(probes) == 1:
            name = f"_pc_KX{pc}"
            self.ns[name] = lc.ExpandCodes(ci, cs, cd)
            look = f"{name}[type({probes[0]})]"
        else:
            look = f"{rt.precision_codes(ci, cs, cd)}[{' | '.join(f'_pc_FX[type({p})]' for p in probes)}]"
        call = f"_pc_X.map({plan}, {out}{''.join(', ' + a for a in args)})"
        return f"try:\n    _pc_a({look})\nexcept _pc_Expand:\n    {call}"

    def lib_sub(self, plan, code, base, idx, out, scalar, n_pcs=0) -> str:
        return f"if type({idx}) is _pc_nd:\n    _pc_X.sub({plan}, {base}, {idx}, {out})\nelse:\n    {scalar}"

    def lib_iter(self, code, it, i) -> str:
        return f"if type({it}) is _pc_nd or type({it}) is list:\n    _pc_m1({code}, {it}, {i})"

    def lib_work(self, plan, out, args, flag) -> str:
        return f"_pc_X.work({plan}, {out}, {', '.join(args)}, {flag})"

    def before_call(self) -> list[str]:
        return []

    after_call = before_return = before_call


class _Compiled(_Backend):
    """Compiled back end: each record is one int64 code (the interpreted buffer's layout) written by
    ``_pc_rec`` (memory records: ``_pc_recm`` also writes the address) with no capacity check; the row
    ``_pc_p`` lives in a local (register), the columns' addresses ``_pc_c0``/``_pc_c1`` too; ``_pc_S`` is
    the address of the buffer's state array (see :meth:`profiler.runtime.CompiledBuffer.entry_args`). Check points
    (function entry, after calls, at the head of every loop iteration) store the row to ``S[0]`` and hand a
    full buffer to the sinks (see :class:`profiler.runtime.CompiledBuffer`: between two check points each
    record site runs at most once, so :attr:`n_sites` bounds the rows written). A change of logical thread
    appends (row, tid) to two other arrays. Every primitive is a Numba intrinsic: a record costs a few LLVM
    instructions at its site and next to nothing to compile."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        prog.n_sites = 0

    _SAVE = "_pc_save(_pc_S, _pc_p, _pc_k)"
    _CHECK = ["if _pc_check(_pc_S, _pc_p, _pc_k, _pc_lim):\n    _pc_full()\n    _pc_p = 0\n    _pc_k = 0"]

    def prologue(self) -> list[str]:
        return ["_pc_p = _pc_ld(_pc_S, 0)", "_pc_lim = _pc_ld(_pc_S, 1)", "_pc_k = _pc_ld(_pc_S, 2)",
                "_pc_c0 = _pc_ld(_pc_S, 3)", "_pc_c1 = _pc_ld(_pc_S, 4)"] + self._CHECK

    def _site(self, src: str) -> str:
        self.prog.n_sites += 1
        return src

    def rec(self, pc, op, taken=0) -> str:
        return self._site(f"_pc_p = _pc_rec(_pc_c0, _pc_p, {rt.code_of(pc, op, taken)})")

    def rec_typed(self, pc, op_i, op_f, probes, result=False) -> str:
        ci, cs, cd = _typed_codes(pc, op_i, op_f)
        if ci == cs == cd or not probes:
            return self.rec(pc, op_i)
        if len(probes) == 1:
            return self._site(f"_pc_p = _pc_recf(_pc_c0, _pc_p, {probes[0]}, {ci}, {cs}, {cd})")
        return self._site(f"_pc_p = _pc_recf2(_pc_c0, _pc_p, {probes[0]}, {probes[1]}, {ci}, {cs}, {cd})")

    def rec_branch(self, pc, cond) -> str:
        c0 = rt.code_of(pc, Op.BRANCH)
        if cond in ("True", "False"):
            return self._site(f"_pc_p = _pc_rec(_pc_c0, _pc_p, {c0 + int(cond == 'True')})")
        return self._site(f"_pc_p = _pc_recb(_pc_c0, _pc_p, {c0}, {cond})")

    def rec_mem(self, pc, op, obj, idx) -> str:
        return self._site(f"_pc_p = _pc_recm(_pc_c0, _pc_c1, _pc_p, {rt.code_of(pc, op)}, {obj}, {idx})")

    def rec_alloc(self, pc, obj) -> str:
        return self._site(f"_pc_p = _pc_recalloc(_pc_c0, _pc_c1, _pc_p, {rt.code_of(pc, Op.OTHER)}, {obj})")

    def rec_attr(self, pc, op, obj, name) -> str:
        return f"_pc_meta({obj}, {name!r})"

    def rec_kind(self, pc, ops, probe) -> str:
        codes = ", ".join(str(rt.code_of(pc, op)) for op in rt.kind_ops(ops))
        return self._site(f"_pc_p = _pc_rec(_pc_c0, _pc_p, _pc_kc({probe}, ({codes})))")

    def rec_kattr(self, pc, ops, obj, name) -> str:
        codes = ", ".join(str(rt.code_of(pc, op)) for op in rt.kind_ops(ops))
        return self._site(f"_pc_p = _pc_rec(_pc_c0, _pc_p, _pc_kattr({obj}, ({codes})))")

    def set_tid(self, expr) -> str:
        return f"_pc_k = _pc_tidpt(_pc_S, _pc_k, _pc_p, {expr})"

    def check(self) -> list[str]:
        return list(self._CHECK)

    # library calls: primitives whose overloads pick the records from the argument types (libcalls.py);
    # an expansion writes each of its record sites at most once between two of its check points
    _LIB = {"copy": "_pc_xcopy", "reduce": "_pc_xreduce", "scan": "_pc_xscan", "matmul": "_pc_xmatmul",
            "vdot": "_pc_xvdot"}

    def lib(self, method, plan, out, args, guard=None, scalar=None, n_pcs=0) -> str:
        self.prog.n_sites += n_pcs + 1
        fn = f"_pc_xmap{len(args)}" if method == "map" else self._LIB[method]
        return f"_pc_p, _pc_k = {fn}(_pc_B, _pc_S, _pc_p, _pc_k, {plan}, {out}{''.join(', ' + a for a in args)})"

    def lib_typed(self, plan, out, args, pc, op_i, op_f, probes, n_pcs=0) -> str:
        return self.lib("map", plan, out, args, n_pcs=n_pcs)

    def lib_sub(self, plan, code, base, idx, out, scalar, n_pcs=0) -> str:
        self.prog.n_sites += n_pcs + 1
        return f"_pc_p, _pc_k = _pc_xsub(_pc_B, _pc_S, _pc_p, _pc_k, {plan}, {code}, {base}, {idx}, {out})"

    def lib_iter(self, code, it, i) -> str:
        return self._site(f"_pc_p = _pc_xiter(_pc_c0, _pc_c1, _pc_p, {code}, {it}, {i})")

    def lib_work(self, plan, out, args, flag) -> str:
        return f"_pc_xwork(_pc_S, {plan}, {out}, {', '.join(args)}, {flag})"

    def before_call(self) -> list[str]:
        return [self._SAVE]

    def after_call(self) -> list[str]:
        # no check point here: the callee checked at its entry and its loop heads, and the sites it runs after
        # its last check point and the caller's sites up to the caller's next check point are distinct sites,
        # each run at most once, so the rows stay within n_sites of the level
        return ["_pc_p = _pc_ld(_pc_S, 0)", "_pc_k = _pc_ld(_pc_S, 2)"]

    def before_return(self) -> list[str]:
        return [self._SAVE]


_PRIMS = {
    "_pc_F": rt.FLOAT_TYPES,
    "_pc_FR": rt.RESULT_FLOAT_TYPES,
    "_pc_rec": rt._rec,
    "_pc_recf": rt._recf,
    "_pc_recf2": rt._recf2,
    "_pc_recb": rt._recb,
    "_pc_recm": rt.recm,
    "_pc_recalloc": rt.recalloc,
    "_pc_recs": rt._recs,
    "_pc_save": rt._save,
    "_pc_check": rt._check,
    "_pc_ld": rt._ld,
    "_pc_full": rt._full,
    "_pc_tidpt": rt._tidpt,
    "_pc_meta": rt.meta,
    "_pc_kc": rt.kcode,
    "_pc_kattr": rt.kattr,
    **lc.PRIMITIVES,
}
