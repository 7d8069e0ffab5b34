"""Source-level instrumenter: rewrites a region (and every user function it calls) to emit trace records.

The rewriter flattens each statement into three-address form (one Python operation per statement, results
in temporaries ``_pc_t<k>``) and puts a recording primitive after each operation. One rewriter serves both
execution modes; only the few statements that record differ (:class:`_Interp` / :class:`_Compiled`):

* interpreted: ``_pc_a(code)`` appends an int to a list, ``_pc_m(code, a, idx)`` records a memory access;
* compiled: ``_pc_rec(B, p, code)`` writes the same code into a Numba array (memory records:
  ``_pc_recm`` also the address); the registers are added when the buffer is decoded.

Static ids (pc) and registers are allocated per :class:`Program` (one per traced root function or
block), starting at 1, so a region's trace does not depend on what else was traced in the process.
Registers: one per local variable name per function, one per expression site (perfect renaming makes
only read-after-write dependences matter). Every register of a record is a static property of its pc.

What each construct emits is documented in docs/profiler.md.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import math
import os
import sysconfig
import textwrap
import types as pytypes
from typing import Any

import numpy as np

from . import libcalls as lc
from . import markers as _markers
from . import runtime as rt
from .trace import Op, StaticInstruction, StaticTable


class UnsupportedConstruct(ValueError):
    """A construct the instrumenter cannot trace; the message names file:line and the construct."""


class SourceUnavailable(ValueError):
    """The source of a function to trace cannot be found."""


# ----------------------------------------------------------------------------------------------------------
# classification tables

_BINOPS = {
    ast.Add: ("+", Op.INT_ALU, Op.FP_ALU),
    ast.Sub: ("-", Op.INT_ALU, Op.FP_ALU),
    ast.BitAnd: ("&", Op.INT_ALU, Op.FP_ALU),
    ast.BitOr: ("|", Op.INT_ALU, Op.FP_ALU),
    ast.BitXor: ("^", Op.INT_ALU, Op.FP_ALU),
    ast.LShift: ("<<", Op.INT_ALU, Op.FP_ALU),
    ast.RShift: (">>", Op.INT_ALU, Op.FP_ALU),
    ast.Mult: ("*", Op.INT_MUL, Op.FP_MUL),
    ast.Div: ("/", Op.INT_DIV, Op.FP_DIV),
    ast.FloorDiv: ("//", Op.INT_DIV, Op.FP_DIV),
    ast.Mod: ("%", Op.INT_REM, Op.FP_DIV),
    ast.Pow: ("**", Op.INT_MUL, Op.FP_SPECIAL),
    ast.MatMult: ("@", Op.OTHER, Op.OTHER),
}
_CMPOPS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}

_SPECIAL_NAMES = frozenset(
    """sqrt exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos atan atan2 sinh cosh tanh asinh
    acosh atanh arcsin arccos arctan arctan2 arcsinh arccosh arctanh erf erfc gamma lgamma cbrt hypot power
    float_power sinc""".split()
)
_ALU_NAMES = frozenset(
    """fabs floor ceil trunc copysign fmin fmax minimum maximum abs absolute rint sign isnan isinf isfinite
    round min max float int bool fmod remainder""".split()
)
_NOREC_CALLS = frozenset({"range", "prange", "parallel"})


def _is_user_file(path: str | None) -> bool:
    if not path:
        return False
    path = os.path.realpath(path)
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = paths.get(key)
        if p and path.startswith(os.path.realpath(p) + os.sep):
            return False
    here = os.path.dirname(os.path.realpath(__file__))
    portcast_dir = os.path.join(os.path.dirname(here), "portcast")
    if path.startswith(here + os.sep) or path.startswith(portcast_dir + os.sep):
        return False
    return path.endswith(".py")


def unwrap_callable(obj):
    """The plain Python function behind a region wrapper or a Numba dispatcher, else ``obj``."""
    for _ in range(8):
        if getattr(obj, "__portcast_region__", None) is not None and hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
            continue
        py = getattr(obj, "py_func", None)
        if py is not None and isinstance(py, pytypes.FunctionType):
            obj = py
            continue
        break
    return obj


def resolve_static(node, local_names, namespace: dict) -> tuple[bool, Any]:
    """(True, value) of a global name or module attribute chain as a function's code would see it (its
    globals and closure in ``namespace``, then the builtins), (False, None) for a local or anything else."""
    if isinstance(node, ast.Name):
        if node.id in local_names:
            return False, None
        if node.id in namespace:
            return True, namespace[node.id]
        if hasattr(builtins, node.id):
            return True, getattr(builtins, node.id)
        return False, None
    if isinstance(node, ast.Attribute):
        ok, base = resolve_static(node.value, local_names, namespace)
        if ok and isinstance(base, pytypes.ModuleType) and hasattr(base, node.attr):
            return True, getattr(base, node.attr)
    return False, None


def closure_namespace(fn) -> dict:
    """The names a function's code sees besides its locals: its globals, overlaid with its closure cells."""
    ns = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                ns[name] = cell.cell_contents
            except ValueError:
                pass
    return ns


def is_user_function(obj) -> bool:
    fn = unwrap_callable(obj)
    if not isinstance(fn, pytypes.FunctionType) or fn.__name__ == "<lambda>":
        return False
    try:
        return _is_user_file(inspect.getsourcefile(fn))
    except TypeError:
        return False


# ----------------------------------------------------------------------------------------------------------
# program: static ids, registers, instrumented functions


@dataclasses.dataclass
class FuncInfo:
    key: Any
    name: str  # name of the instrumented function
    qualname: str
    file: str
    params: list[str]
    param_toks: list[int]
    ret_tok: int
    defaults: dict[str, str]  # param -> namespace name holding its default value
    namespace: dict
    node: ast.FunctionDef | None = None
    fn: Any = None  # instrumented callable (dispatcher in compiled mode)


class Program:
    """Everything the instrumenter made for one root (function or block): static table, registers, code."""

    def __init__(self, mode: str) -> None:
        if mode not in ("interpreted", "compiled"):
            raise ValueError(f"mode must be 'interpreted' or 'compiled', got {mode!r}")
        self.mode = mode
        self.static = StaticTable()
        self._src: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)]
        self._regs: dict = {}
        self.funcs: dict[Any, FuncInfo] = {}
        self.order: list[FuncInfo] = []
        self.parallel_loops: list[str] = []
        # thread space (profiler/threadspace.py): the chosen loops, and what the dependence check on the trace
        # needs to know about the records (features/threadspace.py)
        self.thread_space: dict = {}
        self.induction_pcs: list[int] = []  # "loop:next" records: the loop variable, computed from the thread index
        self.reduction_tokens: dict[int, str] = {}  # register token of a reduction variable -> description
        self.update_pcs: list[int] = []  # LOAD and STORE of `a[i] op= v`: a GPU port does them as one atomic update
        self.kernel_latches: dict[int, int] = {}  # kernel loop index -> pc of its innermost loop's BRANCH
        self.store_values: dict[int, int] = {}  # STORE pc -> register of the stored value (0: a constant)
        self.control_pcs: list[int] = []  # latch records of kernel loops: a GPU thread has no loop around it
        self.root: FuncInfo | None = None
        self.recursive: list[str] = []  # functions on a call cycle (compiled mode can overflow the native stack)
        self.n_sites = 0  # compiled mode: record sites in the generated code (bounds rows between check points)
        # library calls (profiler/libcalls.py): expansion sites (call, file, line, kind, threads, latch_pc, ...;
        # their accumulators join reduction_tokens) and the counter slots of every library site
        self.library_sites: list[dict] = []
        self.lib_slots: list[dict] = []
        self._xregs: list = []  # registers of expansion sites, numbered after the program's own at finalize
        self._xpending: list = []  # (placeholder, site dict or None, description) of reduction accumulators

    def xreg(self, key) -> int:
        """A register of a library-call expansion: a placeholder (negative) until :meth:`finalize` numbers it
        after the registers of the program's own variables and sites (whose numbers do not change)."""
        self._xregs.append(key)
        return -len(self._xregs)

    def reduction(self, placeholder: int, site: dict | None, text: str) -> None:
        """Note an expansion's accumulator (a placeholder of :meth:`xreg`) for :attr:`reduction_tokens`."""
        self._xpending.append((placeholder, site, text))

    @property
    def n_lib_slots(self) -> int:
        return len(self.lib_slots)

    def reg(self, key) -> int:
        r = self._regs.get(key)
        if r is None:
            r = self._regs[key] = len(self._regs) + 1
        return r

    @property
    def n_regs(self) -> int:
        return len(self._regs) + len(self._xregs)

    def new_pc(self, fi: FuncInfo, node: ast.AST, kind: str, srcs=(), dst: int = 0, text: str | None = None) -> int:
        pc = len(self._src)
        s = [int(x) for x in srcs if x][:3]
        s += [0] * (3 - len(s))
        self._src.append((s[0], s[1], s[2], int(dst)))
        if text is None:
            try:
                text = ast.unparse(node)
            except Exception:  # pragma: no cover - unparse handles every node the parser makes
                text = type(node).__name__
        text = " ".join(text.split())
        if len(text) > 120:
            text = text[:117] + "..."
        self.static.add(
            StaticInstruction(
                pc=pc, file=fi.file, line=int(getattr(node, "lineno", 0)), col=int(getattr(node, "col_offset", 0)),
                text=text, function=fi.qualname, kind=kind,
            )
        )
        return pc

    def regs_of(self, pc: int) -> tuple[int, int, int, int]:
        return self._src[pc]

    def _resolve(self, r: int) -> int:
        return len(self._regs) - r if r < 0 else r

    def finalize(self) -> None:
        self._src = [tuple(self._resolve(r) for r in row) for row in self._src]
        for ph, site, text in self._xpending:
            tok = self._resolve(ph)
            self.reduction_tokens[tok] = text
            if site is not None:
                site["reduction_token"] = tok
        self._xpending = []
        arr = np.array(self._src, dtype=np.int32).reshape(-1, 4)
        self.reg_table = np.ascontiguousarray(arr)
        self.reg_src1, self.reg_src2, self.reg_src3, self.reg_dst = (arr[:, k].copy() for k in range(4))


# ----------------------------------------------------------------------------------------------------------
# recording back ends (the only mode-specific part of the rewriter)


class _Interp:
    prims = {}

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

    def __init__(self, prog: Program) -> None:
        self.prog = prog

    def rec(self, pc, op, taken=0) -> str:
        return f"_pc_a({rt.code_of(pc, op, taken)})"

    def rec_typed(self, pc, op_i, op_f, probes) -> str:
        ci, cf = rt.code_of(pc, op_i), rt.code_of(pc, op_f)
        if ci == cf or not probes:
            return f"_pc_a({ci})"
        if len(probes) == 1:
            name = f"_pc_K{pc}"
            self.ns[name] = rt.TypeCodes(ci, cf)
            return f"_pc_a({name}[type({probes[0]})])"
        sel = " | ".join(f"_pc_F[type({p})]" for p in probes)
        return f"_pc_a(({ci}, {cf})[{sel}])"

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

    def rec_attr(self, pc, op, obj, name) -> str:
        return f"_pc_ma({rt.code_of(pc, op)}, {obj}, {name!r})"

    def rec_kind(self, pc, ops, probe) -> str:
        name = f"_pc_K{pc}"
        self.ns[name] = rt.KindCodes([rt.code_of(pc, op) for op in ops])
        return f"_pc_a({name}.of({probe}))"

    def rec_kattr(self, pc, ops, obj, name) -> str:
        kname = f"_pc_K{pc}"
        self.ns[kname] = rt.KindCodes([rt.code_of(pc, op) for op in ops])
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
        ci, cf = rt.code_of(pc, op_i), rt.code_of(pc, op_f)
        if len(probes) == 1:
            name = f"_pc_KX{pc}"
            self.ns[name] = lc.ExpandCodes(ci, cf)
            look = f"{name}[type({probes[0]})]"
        else:
            look = f"({ci}, {cf})[{' | '.join(f'_pc_FX[type({p})]' for p in probes)}]"
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


class _Compiled:
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

    def rec_typed(self, pc, op_i, op_f, probes) -> str:
        ci, cf = rt.code_of(pc, op_i), rt.code_of(pc, op_f)
        if ci == cf or not probes:
            return self.rec(pc, op_i)
        if len(probes) == 1:
            return self._site(f"_pc_p = _pc_recf(_pc_c0, _pc_p, {probes[0]}, {ci}, {cf})")
        return self._site(f"_pc_p = _pc_recf2(_pc_c0, _pc_p, {probes[0]}, {probes[1]}, {ci}, {cf})")

    def rec_branch(self, pc, cond) -> str:
        c0 = rt.code_of(pc, Op.BRANCH)
        if cond in ("True", "False"):
            return self._site(f"_pc_p = _pc_rec(_pc_c0, _pc_p, {c0 + int(cond == 'True')})")
        return self._site(f"_pc_p = _pc_recb(_pc_c0, _pc_p, {c0}, {cond})")

    def rec_mem(self, pc, op, obj, idx) -> str:
        return self._site(f"_pc_p = _pc_recm(_pc_c0, _pc_c1, _pc_p, {rt.code_of(pc, op)}, {obj}, {idx})")

    def rec_attr(self, pc, op, obj, name) -> str:
        return f"_pc_meta({obj}, {name!r})"

    def rec_kind(self, pc, ops, probe) -> str:
        codes = ", ".join(str(rt.code_of(pc, op)) for op in ops)
        return self._site(f"_pc_p = _pc_rec(_pc_c0, _pc_p, _pc_kc({probe}, ({codes})))")

    def rec_kattr(self, pc, ops, obj, name) -> str:
        codes = ", ".join(str(rt.code_of(pc, op)) for op in ops)
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
    "_pc_rec": rt._rec,
    "_pc_recf": rt._recf,
    "_pc_recf2": rt._recf2,
    "_pc_recb": rt._recb,
    "_pc_recm": rt.recm,
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

# record classes by value kind (runtime.VK_*: int, float, complex, int/float/complex array, other object)
_KIND_PART = (Op.MOVE, Op.MOVE, Op.MOVE, Op.OTHER, Op.OTHER, Op.OTHER, Op.LOAD)  # .real / .imag
_KIND_CONJ = (Op.INT_ALU, Op.FP_ALU, Op.FP_ALU, Op.OTHER, Op.OTHER, Op.OTHER, Op.OTHER)  # conjugate
_KIND_ABS = (Op.INT_ALU, Op.FP_ALU, Op.FP_SPECIAL, Op.INT_ALU, Op.FP_ALU, Op.FP_SPECIAL, Op.INT_ALU)  # |z|: hypot
_KIND_REALFN = (Op.MOVE, Op.MOVE, Op.MOVE, Op.OTHER, Op.OTHER, Op.OTHER, Op.OTHER)  # np.real(z), np.imag(z)


# ----------------------------------------------------------------------------------------------------------
# compiled mode: merging the records of straight runs of statements

#: record primitive -> (layout letter of :func:`profiler.runtime._recs`, index of the first item argument)
_MERGEABLE = {"_pc_rec": ("c", 2), "_pc_recf": ("f", 2), "_pc_recf2": ("F", 2), "_pc_recb": ("b", 2),
              "_pc_recm": ("m", 3)}


def _simple(node) -> bool:
    """A name, a constant, or a tuple of those (the arguments a record may take along to a later point)."""
    if isinstance(node, ast.Tuple):
        return all(_simple(e) for e in node.elts)
    return isinstance(node, (ast.Name, ast.Constant))


def _record_item(st):
    """(layout letter, item argument nodes, names they read) of a record statement that may be merged, else None."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and st.targets[0].id == "_pc_p" and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)):
        return None
    spec = _MERGEABLE.get(st.value.func.id)
    if spec is None or st.value.keywords:
        return None
    items = st.value.args[spec[1]:]
    letter = spec[0]
    if letter == "c" and len(items) == 1 and isinstance(items[0], ast.Call):
        kc = items[0]  # _pc_kc(v, (codes)): a code chosen by value kind
        if not (isinstance(kc.func, ast.Name) and kc.func.id == "_pc_kc" and len(kc.args) == 2
                and isinstance(kc.args[1], ast.Tuple)):
            return None
        letter, items = "k", [kc.args[0], *kc.args[1].elts]
    elif letter == "c" and not (len(items) == 1 and isinstance(items[0], ast.Constant)):
        return None
    if not all(_simple(a) for a in items):
        return None
    names = {n.id for a in items for n in ast.walk(a) if isinstance(n, ast.Name)}
    return letter, items, names


def _movable(st, pending_names: set) -> bool:
    """Whether records may be moved past ``st``: a plain assignment that calls no tracer primitive or
    instrumented function, does not touch the row, and rebinds none of the names the pending records read."""
    if isinstance(st, ast.Pass):
        return True
    if isinstance(st, ast.Assign):
        targets = st.targets
    elif isinstance(st, ast.AugAssign):
        targets = [st.target]
    else:
        return False
    for t in targets:
        if isinstance(t, ast.Name):
            if t.id in pending_names:
                return False
        elif not isinstance(t, (ast.Subscript, ast.Attribute)):
            return False
    for n in ast.walk(st):
        if isinstance(n, ast.Name) and n.id.startswith("_pc_") and (n.id in ("_pc_p", "_pc_k", "_pc_S") or
                                                                    n.id in _MERGEABLE or n.id.startswith("_pc_f")):
            return False
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("_pc_"):
            return False
    return True


def merge_records(stmts: list) -> list:
    """Compiled mode: write the records of a straight run of statements with fewer calls. Records whose code
    is known at compile time (a constant, or chosen by an operand's type) are held back past plain
    statements and written by one call of ``_pc_recs``, together with the next memory or branch record (which
    stays at its own site: moving address computations and conditions later made the traced code slower),
    or before anything that reads the row (another primitive, a check point, a call, control flow) or
    rebinds a value whose type chooses a code. Records keep their order and their values, so the trace is
    unchanged. A record written later than its site is lost only where an exception would lose it anyway
    (after the last check point)."""
    out: list = []
    pending: list = []  # (statement, letter, items)
    names: set = set()

    def flush():
        if len(pending) == 1:
            out.append(pending[0][0])
        elif pending:
            first = pending[0][0]
            layout = "".join(letter for _, letter, _ in pending)
            values = ast.Tuple(elts=[a for _, _, items in pending for a in items], ctx=ast.Load())
            call = ast.Call(func=ast.Name("_pc_recs", ast.Load()),
                            args=[ast.Name("_pc_c0", ast.Load()), ast.Name("_pc_c1", ast.Load()),
                                  ast.Name("_pc_p", ast.Load()), ast.Constant(layout), values], keywords=[])
            st = ast.Assign(targets=[ast.Name("_pc_p", ast.Store())], value=call)
            out.append(ast.fix_missing_locations(ast.copy_location(st, first)))
        pending.clear()
        names.clear()

    for st in stmts:
        rec = _record_item(st)
        if rec is not None:
            pending.append((st, rec[0], rec[1]))
            names.update(rec[2])
            if rec[0] in "mb":  # written at its own site, with the records before it
                flush()
            continue
        if pending and _movable(st, names):
            out.append(st)
            continue
        flush()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(st, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(st, field, merge_records(block))
        for h in getattr(st, "handlers", []) or []:
            h.body = merge_records(h.body)
        out.append(st)
    flush()
    return out


# ----------------------------------------------------------------------------------------------------------
# checks


def _check_supported(fdef: ast.FunctionDef, file: str) -> None:
    problems = []
    for node in ast.walk(fdef):
        what = None
        if node is not fdef and isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            what = f"nested {'class' if isinstance(node, ast.ClassDef) else 'function'} definition {node.name!r}"
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            what = "generator (yield)"
        elif isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith, ast.AsyncFunctionDef)):
            what = "async code"
        elif isinstance(node, ast.Global):
            what = f"global statement ({', '.join(node.names)})"
        elif isinstance(node, ast.Nonlocal):
            what = f"nonlocal statement ({', '.join(node.names)})"
        elif isinstance(node, ast.NamedExpr):
            what = "assignment expression (:=)"
        elif isinstance(node, ast.Match):
            what = "match statement"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval"):
            what = f"{node.func.id}()"
        elif isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Store):
            what = "starred assignment target"
        if what:
            problems.append(f"{file}:{getattr(node, 'lineno', fdef.lineno)}: {what} is not supported inside a traced "
                            "region")
    if problems:
        raise UnsupportedConstruct("; ".join(problems))


def _assigned_names(fdef) -> set[str]:
    out = set(a.arg for a in fdef.args.args + fdef.args.posonlyargs + fdef.args.kwonlyargs)
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


# ----------------------------------------------------------------------------------------------------------
# the rewriter


class _Loop:
    def __init__(self, flag: str, brk: str | None):
        self.flag = flag
        self.brk = brk


class _Rewriter:
    def __init__(self, inst: "Instrumenter", fi: FuncInfo, fdef: ast.FunctionDef, root: bool) -> None:
        self.inst = inst
        self.prog = inst.prog
        self.be = inst.backend
        self.fi = fi
        self.fdef = fdef
        self.root = root
        self.ns = fi.namespace
        self.locals = _assigned_names(fdef)
        self.out: list[ast.stmt] = []
        self.n_tmp = 0
        self.loops: list[_Loop] = []
        self.cur: ast.AST = fdef
        self.tid_depth = 0  # > 0 while inside a loop whose iterations are threads

    # -- helpers ------------------------------------------------------------------------------------------
    def tmp(self) -> str:
        self.n_tmp += 1
        return f"_pc_t{self.n_tmp}"

    def var(self, name: str) -> int:
        return self.prog.reg((self.fi.key, "var", name))

    def site(self) -> int:
        return self.prog.reg((self.fi.key, "site", len(self.prog._regs)))

    def emit(self, src: str | list[str]) -> None:
        for s in [src] if isinstance(src, str) else src:
            for st in ast.parse(s).body:
                self._locate(st)
                self.out.append(st)

    def emit_node(self, st: ast.stmt) -> None:
        self._locate(st)
        self.out.append(st)

    def _locate(self, st):
        """Give ``st`` the location of the user's statement being rewritten (``self.cur``), so that Numba's
        messages and Python's tracebacks name the user's file:line; statements nested in ``st`` that were
        located when they were emitted (the body of a rewritten loop or if) keep their own line."""
        ref = self.cur
        stack = [st]
        while stack:
            n = stack.pop()
            if "lineno" in n._attributes:
                n.lineno = getattr(ref, "lineno", 1)
                n.col_offset = getattr(ref, "col_offset", 0)
                n.end_lineno = getattr(ref, "end_lineno", n.lineno)
                n.end_col_offset = getattr(ref, "end_col_offset", 0)
            stack.extend(c for c in ast.iter_child_nodes(n) if not getattr(c, "_pc_located", False))
        st._pc_located = True

    def rtyped(self, pc, op_i, op_f, probes) -> str:
        self.be.ns = self.ns
        return self.be.rec_typed(pc, op_i, op_f, probes)

    def pc(self, node, kind, srcs=(), dst=0, text=None) -> int:
        return self.prog.new_pc(self.fi, node, kind, srcs, dst, text)

    def block(self, stmts) -> list[ast.stmt]:
        saved = self.out
        self.out = []
        for s in stmts:
            self.stmt(s)
        body, self.out = self.out, saved
        return body or [ast.Pass()]

    def resolve(self, node) -> tuple[bool, Any]:
        """Static value of a global name or attribute chain (not of locals)."""
        return resolve_static(node, self.locals, self.ns)

    def in_thread_space(self) -> bool:
        """Whether code being rewritten runs inside the region's thread space (a kernel loop's iteration, or a
        function called from one): there, no loop or library call starts a launch of its own."""
        ts = self.inst.ts
        return self.tid_depth > 0 or (ts is not None and self.fi.key in ts.kernel_funcs)

    def _role(self, s):
        """(kernel index, position in its nest, nest depth) when loop ``s`` is part of a thread space."""
        ts = self.inst.ts
        return None if ts is None else ts.role(self.fi.key, s)

    # -- expressions ---------------------------------------------------------------------------------------
    def expr(self, node, target: str | None = None, dst: int | None = None) -> tuple[str, int]:
        """Flatten ``node``; returns (simple expression source, register). ``target``/``dst``: where an
        operation that produces the value should put it (else a fresh temporary and site register)."""
        self.cur_expr = node
        if isinstance(node, ast.Constant):
            return repr(node.value), 0
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return node.id, self.var(node.id)
            return node.id, 0
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is None:
            return self.e_opaque(node, target, dst)
        return method(node, target, dst)

    def _dest(self, target, dst):
        return (target or self.tmp()), (dst if dst is not None else self.site())

    def e_opaque(self, node, target, dst, kind="other"):
        out, d = self._dest(target, dst)
        toks = [self.var(n.id) for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in self.locals]
        pc = self.pc(node, kind, toks, d)
        self.emit(f"{out} = {ast.unparse(node)}")
        self.emit(self.be.rec(pc, Op.OTHER))
        return out, d

    def e_Attribute(self, node, target, dst):
        ok, _ = self.resolve(node)
        if ok:
            return ast.unparse(node), 0
        base, bt = self.expr(node.value)
        out, d = self._dest(target, dst)
        if node.attr in ("real", "imag"):
            return self._complex_part(node, base, bt, out, d)
        if node.attr in rt.ARRAY_META:
            self.emit(f"{out} = {base}.{node.attr}")
            return out, 0 if target is None else self._move_from(node, out, d, 0)
        pc = self.pc(node, "load:attr", [bt], d)
        self.emit(self.be.rec_attr(pc, Op.LOAD, base, node.attr))
        self.emit(f"{out} = {base}.{node.attr}")
        return out, d

    def _complex_part(self, node, base, bt, out, d):
        """``v.real`` / ``v.imag``: a MOVE of a number's register, a view (OTHER) of an array, an attribute LOAD
        of another object (interpreted mode only)."""
        pc = self.pc(node, f"attr:{node.attr}", [bt], d)
        self.be.ns = self.ns
        self.emit(self.be.rec_kattr(pc, _KIND_PART, base, node.attr))
        self.emit(f"{out} = {base}.{node.attr}")
        return out, d

    def _complex_call(self, node, target, dst):
        """Calls of complex numbers' operations, or None: ``v.conjugate()``, ``v.conj()``, ``np.conj(v)``,
        ``np.conjugate(v)`` (one ALU operation of a scalar, OTHER of an array), ``abs(v)``/``np.abs(v)`` (FP_SPECIAL
        of a complex: a hypot), ``np.real(v)``/``np.imag(v)`` (as ``v.real``), ``complex(a, b)`` (a MOVE)."""
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("conjugate", "conj") and not node.args:
            if self.resolve(f)[0]:
                return None
            base, bt = self.expr(f.value)
            out, d = self._dest(target, dst)
            pc = self.pc(node, "call:conj", [bt], d)
            self.emit(f"{out} = {base}.{f.attr}()")
            self.be.ns = self.ns
            self.emit(self.be.rec_kind(pc, _KIND_CONJ, base))
            return out, d
        ok, obj = self.resolve(f)
        if not ok:
            return None
        func = ast.unparse(f)
        if len(node.args) == 1 and any(obj is g for g in (np.conjugate, np.real, np.imag, np.absolute, abs)):
            kind, ops = ("call:conj", _KIND_CONJ) if obj is np.conjugate else \
                ("call:abs", _KIND_ABS) if obj is np.absolute or obj is abs else (f"call:{obj.__name__}", _KIND_REALFN)
            v, vt = self.expr(node.args[0])
            out, d = self._dest(target, dst)
            pc = self.pc(node, kind, [vt], d)
            self.emit(f"{out} = {func}({v})")
            self.be.ns = self.ns
            self.emit(self.be.rec_kind(pc, ops, v))
            return out, d
        if obj is complex and 1 <= len(node.args) <= 2:
            args, toks = self._args(node)
            out, d = self._dest(target, dst)
            pc = self.pc(node, "call:complex", toks, d)
            self.emit(f"{out} = {func}({', '.join(args)})")
            self.emit(self.be.rec(pc, Op.MOVE))
            return out, d
        return None

    def _move_from(self, node, out, d, src):
        pc = self.pc(node, "move", [src], d)
        self.emit(self.be.rec(pc, Op.MOVE))
        return d

    def _index(self, sl) -> tuple[str, list[int], bool]:
        """(index source, registers, is_slice) of a subscript's slice."""
        if isinstance(sl, ast.Slice):
            parts = []
            toks = []
            for p in (sl.lower, sl.upper, sl.step):
                if p is None:
                    parts.append("")
                else:
                    s, t = self.expr(p)
                    parts.append(s)
                    toks.append(t)
            src = ":".join(parts[:2]) + (f":{parts[2]}" if parts[2] else "")
            return src, toks, True
        if isinstance(sl, ast.Tuple):
            srcs, toks, is_slice = [], [], False
            for e in sl.elts:
                s, t, sli = self._index(e)
                srcs.append(s)
                toks.extend(t)
                is_slice |= sli
            if is_slice:
                return ", ".join(srcs), toks, True
            return "(" + ", ".join(srcs) + ("," if len(srcs) == 1 else "") + ")", toks, False
        s, t = self.expr(sl)
        return s, [t], False

    def e_Subscript(self, node, target, dst):
        base, bt = self.expr(node.value)
        idx, it, is_slice = self._index(node.slice)
        out, d = self._dest(target, dst)
        if is_slice:
            pc = self.pc(node, "view", it + [bt], d)
            self.emit(self.be.rec(pc, Op.OTHER))
        else:
            pc = self.pc(node, "load", it + [bt], d)
            if not isinstance(node.slice, ast.Tuple) and self._maybe_array(node.slice):
                return self._expand_gather(node, base, bt, idx, it, out, d, pc)
            self.emit(self.be.rec_mem(pc, Op.LOAD, base, idx))
        self.emit(f"{out} = {base}[{idx}]")
        return out, d

    def e_BinOp(self, node, target, dst):
        sym, oi, of = _BINOPS[type(node.op)]
        lhs, lt = self.expr(node.left)
        r, rt_ = self.expr(node.right)
        out, d = self._dest(target, dst)
        pc = self.pc(node, f"binop:{sym}", [lt, rt_], d)
        x = self._expand_binop(node, sym, oi, of, pc, lhs, lt, r, rt_, out, d)
        if x is not None:
            return x
        self.emit(f"{out} = {lhs} {sym} {r}")
        self.emit(self.rtyped(pc, oi, of, [out]))
        return out, d

    def e_UnaryOp(self, node, target, dst):
        if isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)) and isinstance(node.operand, ast.Constant) \
                and isinstance(node.operand.value, (int, float, complex)) and not isinstance(node.operand.value, bool):
            return self.expr(ast.copy_location(ast.Constant(eval(ast.unparse(node))), node), target, dst)
        v, vt = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            out, d = self._dest(target, dst)
            self.emit(f"{out} = +{v}")
            return out, (self._move_from(node, out, d, vt) if target else vt)
        out, d = self._dest(target, dst)
        if isinstance(node.op, ast.Not):
            pc = self.pc(node, "unary:not", [vt], d)
            self.emit(f"{out} = not {v}")
            self.emit(self.be.rec(pc, Op.INT_ALU))
        else:
            sym = "-" if isinstance(node.op, ast.USub) else "~"
            pc = self.pc(node, f"unary:{sym}", [vt], d)
            x = self._expand_unary(node, sym, v, vt, out, d, pc)
            if x is not None:
                return x
            self.emit(f"{out} = {sym}{v}")
            self.emit(self.rtyped(pc, Op.INT_ALU, Op.FP_ALU, [out]))
        return out, d

    def _compare(self, node, out, d, lhs, lt, op, r, rt_):
        sym = _CMPOPS[type(op)]
        pc = self.pc(node, f"cmp:{sym}", [lt, rt_], d)
        if sym in ("is", "is not", "in", "not in"):
            self.emit(self.be.rec(pc, Op.INT_ALU))
        else:
            self.emit(self.rtyped(pc, Op.INT_ALU, Op.FP_ALU, [lhs, r]))
        self.emit(f"{out} = {lhs} {sym} {r}")

    def e_Compare(self, node, target, dst):
        out, d = self.tmp(), self.site()
        lhs, lt = self.expr(node.left)
        r, rt_ = self.expr(node.comparators[0])
        if len(node.ops) > 1 or not self._expand_compare(node, out, d, lhs, lt, node.ops[0], r, rt_):
            self._compare(node, out, d, lhs, lt, node.ops[0], r, rt_)
        saved = self.out
        for op, comp in zip(node.ops[1:], node.comparators[1:]):
            bpc = self.pc(node, "branch:chain", [d])
            self.emit(self.be.rec_branch(bpc, out))
            inner: list = []
            self.emit_node(ast.If(test=ast.Name(out, ast.Load()), body=inner, orelse=[]))
            self.out = inner
            r2, rt2 = self.expr(comp)
            self._compare(node, out, d, r, rt_, op, r2, rt2)
            r, rt_ = r2, rt2
        self.out = saved
        if target:
            self.emit(f"{target} = {out}")
            return target, self._move_from(node, target, dst, d)
        return out, d

    def e_BoolOp(self, node, target, dst):
        out, d = self._dest(target, dst)
        is_and = isinstance(node.op, ast.And)
        saved = self.out
        cur = self.out
        for k, v in enumerate(node.values):
            self.out = cur
            s, t = self.expr(v)
            self.emit(f"{out} = {s}")
            self._move_from(v, out, d, t)
            if k < len(node.values) - 1:
                bpc = self.pc(v, "branch:and" if is_and else "branch:or", [d])
                self.emit(self.be.rec_branch(bpc, out))
                inner: list = []
                test = ast.Name(out, ast.Load()) if is_and else ast.UnaryOp(ast.Not(), ast.Name(out, ast.Load()))
                self.emit_node(ast.If(test=test, body=inner, orelse=[]))
                cur = inner
        self.out = saved
        return out, d

    def e_IfExp(self, node, target, dst):
        out, d = self._dest(target, dst)
        c, ct = self.expr(node.test)
        bpc = self.pc(node, "branch:ifexp", [ct])
        self.emit(self.be.rec_branch(bpc, c))
        arms = []
        for arm in (node.body, node.orelse):
            saved = self.out
            self.out = []
            s, t = self.expr(arm)
            self.emit(f"{out} = {s}")
            self._move_from(arm, out, d, t)
            arms.append(self.out)
            self.out = saved
        self.emit_node(ast.If(test=ast.parse(c, mode="eval").body, body=arms[0], orelse=arms[1]))
        return out, d

    def e_Tuple(self, node, target, dst):
        if not isinstance(node.ctx, ast.Load):
            return self.e_opaque(node, target, dst)
        parts, toks = [], []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                return self.e_opaque(node, target, dst)
            s, t = self.expr(e)
            parts.append(s)
            toks.append(t)
        out, _ = self._dest(target, dst)
        self.emit(f"{out} = ({', '.join(parts)}{',' if len(parts) == 1 else ''})")
        first = next((t for t in toks if t), 0)
        if target:
            return out, self._move_from(node, out, dst if dst is not None else self.site(), first)
        return out, first

    def e_Call(self, node, target, dst):
        done = self._complex_call(node, target, dst)
        if done is not None:
            return done
        ok, obj = self.resolve(node.func)
        has_star = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if ok and not has_star:
            fname = getattr(obj, "__name__", "")
            if is_user_function(obj):
                fn = unwrap_callable(obj)
                sig_ok = self.inst.signature_ok(fn)
                if sig_ok:
                    return self.user_call(node, fn, target, dst)
            x = self._expand_call(node, obj, target, dst)
            if x is not None:
                return x
            mod = getattr(obj, "__module__", None) or ""
            is_math = mod in ("math", "cmath") or isinstance(obj, np.ufunc) or mod.startswith("numpy")
            if fname in _SPECIAL_NAMES and is_math:
                return self.lib_call(node, target, dst, "call:special", Op.FP_SPECIAL, Op.FP_SPECIAL)
            if fname in _ALU_NAMES and (is_math or obj in (abs, min, max, float, int, bool, round)):
                return self.lib_call(node, target, dst, f"call:{fname}", Op.INT_ALU, Op.FP_ALU)
            if obj is len:
                return self.lib_call(node, target, dst, "call:len", Op.MOVE, Op.MOVE)
        if not ok and not has_star and isinstance(node.func, ast.Attribute) and \
                (node.func.attr in lc.METHODS or node.func.attr in lc.METHOD_ESTIMATES):
            return self._expand_method(node, target, dst)
        return self.lib_call(node, target, dst, "call:other", Op.OTHER, Op.OTHER, opaque_func=not ok)

    def _args(self, node):
        args, toks = [], []
        for a in node.args:
            if isinstance(a, ast.Starred):
                s, t = self.expr(a.value)
                args.append("*" + s)
            else:
                s, t = self.expr(a)
                args.append(s)
            toks.append(t)
        for k in node.keywords:
            s, t = self.expr(k.value)
            args.append(f"{k.arg}={s}" if k.arg else f"**{s}")
            toks.append(t)
        return args, toks

    def lib_call(self, node, target, dst, kind, oi, of, opaque_func=False):
        if opaque_func:
            func, ft = self.expr(node.func) if not isinstance(node.func, ast.Attribute) else self._method(node.func)
        else:
            func, ft = ast.unparse(node.func), 0
        args, toks = self._args(node)
        out, d = self._dest(target, dst)
        pc = self.pc(node, kind, toks + [ft], d)
        self.emit(f"{out} = {func}({', '.join(args)})")
        if oi == of:
            self.emit(self.be.rec(pc, oi))
        else:
            self.emit(self.rtyped(pc, oi, of, [out] + [a for a in args[:1] if "=" not in a and not a.startswith("*")]))
        return out, d

    def _method(self, attr: ast.Attribute):
        base, bt = self.expr(attr.value)
        return f"{base}.{attr.attr}", bt

    def user_call(self, node, fn, target, dst):
        callee = self.inst.function(fn)
        sig = inspect.signature(fn)
        args, toks = [], []
        for a in node.args:
            s, t = self.expr(a)
            args.append(s)
            toks.append(t)
        kw = {}
        for k in node.keywords:
            s, t = self.expr(k.value)
            kw[k.arg] = (s, t)
        try:
            bound = sig.bind(*range(len(args)), **{k: None for k in kw})
        except TypeError as exc:
            raise UnsupportedConstruct(f"{self.fi.file}:{node.lineno}: call of {fn.__qualname__}: {exc}") from None
        final = []
        for p, ptok in zip(callee.params, callee.param_toks):
            if p in bound.arguments and p not in kw:
                i = bound.arguments[p]
                s, t = args[i], toks[i]
            elif p in kw:
                s, t = kw[p]
            else:
                s, t = callee.defaults[p], 0
                self.ns[s] = callee.namespace[s]
            pc = self.pc(node, f"arg:{p}", [t], ptok)
            self.emit(self.be.rec(pc, Op.MOVE))
            final.append(s)
        cpc = self.pc(node, "call", [], 0)
        self.emit(self.be.rec(cpc, Op.CALL))
        out, d = self._dest(target, dst)
        self.inst.link(self.fi, callee)
        self.emit(self.be.before_call())
        self.emit(f"{out} = {callee.name}(_pc_B, _pc_S{''.join(', ' + s for s in final)})")
        self.emit(self.be.after_call())
        if target or dst is not None:
            return out, self._move_from(node, out, d, callee.ret_tok)
        return out, callee.ret_tok

    # -- statements ------------------------------------------------------------------------------------------
    def stmt(self, s):
        self.cur = s
        method = getattr(self, "s_" + type(s).__name__, None)
        if method is None:
            raise UnsupportedConstruct(
                f"{self.fi.file}:{s.lineno}: {type(s).__name__} statement is not supported inside a traced region"
            )
        method(s)

    def s_Pass(self, s):
        self.emit_node(ast.Pass())

    def s_Expr(self, s):
        if isinstance(s.value, ast.Constant):
            return
        self.expr(s.value)

    def _store(self, tgt, value: str, vt: int, node):
        self.cur_store = tgt
        if isinstance(tgt, ast.Name):
            self.emit(f"{tgt.id} = {value}")
            pc = self.pc(
                node,
                "move",
                [vt],
                self.var(tgt.id),
                text=f"{tgt.id} = "
                f"{ast.unparse(node.value) if hasattr(node, 'value') and node.value is not None else value}",
            )
            self.emit(self.be.rec(pc, Op.MOVE))
        elif isinstance(tgt, ast.Subscript):
            base, bt = self.expr(tgt.value)
            idx, it, is_slice = self._index(tgt.slice)
            self.emit(f"{base}[{idx}] = {value}")
            if is_slice and self._expand_slice_store(tgt, base, bt, idx, value, vt, node):
                return
            if is_slice:
                pc = self.pc(tgt, "store:slice", [vt] + it + [bt], 0)
                self.emit(self.be.rec(pc, Op.OTHER))
            else:
                pc = self.pc(tgt, "store", [vt] + it + [bt], 0)
                self.prog.store_values[pc] = int(vt or 0)
                self.emit(self.be.rec_mem(pc, Op.STORE, base, idx))
        elif isinstance(tgt, ast.Attribute):
            base, bt = self.expr(tgt.value)
            self.emit(f"{base}.{tgt.attr} = {value}")
            pc = self.pc(tgt, "store:attr", [vt, bt], 0)
            self.emit(self.be.rec_attr(pc, Op.STORE, base, tgt.attr))
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            for k, e in enumerate(tgt.elts):
                t = self.tmp()
                self.emit(f"{t} = {value}[{k}]")
                self._store(e, t, vt, node)
        else:
            raise UnsupportedConstruct(f"{self.fi.file}:{node.lineno}: assignment to {type(tgt).__name__}")

    def s_Assign(self, s):
        if (
            len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and not isinstance(s.value, (ast.Name, ast.Constant))
        ):
            name = s.targets[0].id
            v, t = self.expr(s.value, target=name, dst=self.var(name))
            if v != name:
                self._store(s.targets[0], v, t, s)
            return
        if (
            len(s.targets) == 1
            and isinstance(s.targets[0], (ast.Tuple, ast.List))
            and isinstance(s.value, ast.Tuple)
            and len(s.value.elts) == len(s.targets[0].elts)
            and not any(isinstance(e, ast.Starred) for e in s.value.elts)
        ):
            vals = []
            for e in s.value.elts:
                v, t = self.expr(e)
                if v.isidentifier() and v in self.locals:
                    tmp = self.tmp()
                    self.emit(f"{tmp} = {v}")
                    v = tmp
                vals.append((v, t))
            for tgt, (v, t) in zip(s.targets[0].elts, vals):
                self._store(tgt, v, t, s)
            return
        v, t = self.expr(s.value)
        for tgt in s.targets:
            self._store(tgt, v, t, s)

    def s_AnnAssign(self, s):
        if s.value is None:
            return
        self.s_Assign(ast.copy_location(ast.Assign(targets=[s.target], value=s.value), s))

    def s_AugAssign(self, s):
        sym, oi, of = _BINOPS[type(s.op)]
        v, vt = self.expr(s.value)
        tgt = s.target
        if isinstance(tgt, ast.Name):
            d = self.var(tgt.id)
            pc = self.pc(s, f"binop:{sym}=", [d, vt], d)
            self.emit(f"{tgt.id} {sym}= {v}")
            if not self._expand_inplace(s, sym, oi, of, pc, tgt, tgt.id, d, s.value, v, vt):
                self.emit(self.rtyped(pc, oi, of, [tgt.id]))
            return
        if isinstance(tgt, ast.Subscript):
            base, bt = self.expr(tgt.value)
            idx, it, is_slice = self._index(tgt.slice)
            cur, ct = self.tmp(), self.site()
            self.emit(f"{cur} = {base}[{idx}]")
            if is_slice:
                self.emit(self.be.rec(self.pc(tgt, "view", it + [bt], ct), Op.OTHER))
            else:
                lpc = self.pc(tgt, "load", it + [bt], ct)
                self.prog.update_pcs.append(lpc)
                self.emit(self.be.rec_mem(lpc, Op.LOAD, base, idx))
            res, rtk = self.tmp(), self.site()
            pc = self.pc(s, f"binop:{sym}=", [ct, vt], rtk)
            self.emit(f"{res} = {cur}")
            self.emit(f"{res} {sym}= {v}")
            if not self._expand_inplace(s, sym, oi, of, pc, tgt, res, ct, s.value, v, vt):
                self.emit(self.rtyped(pc, oi, of, [res]))
            self.emit(f"{base}[{idx}] = {res}")
            if is_slice:
                self.emit(self.be.rec(self.pc(tgt, "store:slice", [rtk] + it + [bt], 0), Op.OTHER))
            else:
                spc = self.pc(tgt, "store", [rtk] + it + [bt], 0)
                self.prog.update_pcs.append(spc)
                self.prog.store_values[spc] = int(rtk)
                self.emit(self.be.rec_mem(spc, Op.STORE, base, idx))
            return
        if isinstance(tgt, ast.Attribute):
            base, bt = self.expr(tgt.value)
            cur, ct = self.tmp(), self.site()
            self.emit(f"{cur} = {base}.{tgt.attr}")
            self.emit(self.be.rec_attr(self.pc(tgt, "load:attr", [bt], ct), Op.LOAD, base, tgt.attr))
            res, rtk = self.tmp(), self.site()
            pc = self.pc(s, f"binop:{sym}=", [ct, vt], rtk)
            self.emit(f"{res} = {cur} {sym} {v}")
            self.emit(self.rtyped(pc, oi, of, [res]))
            self.emit(f"{base}.{tgt.attr} = {res}")
            self.emit(self.be.rec_attr(self.pc(tgt, "store:attr", [rtk, bt], 0), Op.STORE, base, tgt.attr))
            return
        raise UnsupportedConstruct(f"{self.fi.file}:{s.lineno}: augmented assignment to {type(tgt).__name__}")

    def _ends_flow(self, stmts) -> bool:
        return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Break, ast.Continue, ast.Raise))

    def s_If(self, s):
        c, ct = self.expr(s.test)
        self.cur = s
        pc = self.pc(s.test, "branch:if", [ct])
        self.emit(self.be.rec_branch(pc, c))
        body = self.block(s.body)
        if s.orelse and not self._ends_flow(s.body):
            self.cur = s
            saved, self.out = self.out, body
            jpc = self.pc(s, "jump:else", [], 0, text="jump over else")
            self.emit(self.be.rec(jpc, Op.JUMP))
            self.out = saved
        orelse = self.block(s.orelse) if s.orelse else []
        self.cur = s
        self.emit_node(ast.If(test=ast.parse(c, mode="eval").body, body=body, orelse=orelse))

    def s_For(self, s):
        self.cur = s
        role = self._role(s)
        is_tid = role is not None
        lin = f"_pc_lin{role[0]}" if role is not None and role[2] > 1 else None
        first_pc = len(self.prog._src)
        it = s.iter
        iter_src = None
        if isinstance(it, ast.Call):
            ok, obj = self.resolve(it.func)
            if ok and obj is _markers.parallel and len(it.args) == 1:
                it = it.args[0]
                ok, obj = (self.resolve(it.func) if isinstance(it, ast.Call) else (False, None))
            if (
                ok
                and (obj is range or getattr(obj, "__name__", "") == "prange")
                and isinstance(it, ast.Call)
                and not it.keywords
            ):
                parts = [self.expr(a)[0] for a in it.args]
                iter_src = f"range({', '.join(parts)})"
        elem = self._expand_iter(s) if iter_src is None and it is s.iter else None
        if elem is not None:
            iter_src = elem[0]
        elif iter_src is None:
            iter_src, _ = self.expr(it)
        if is_tid and role[1] > 0:  # an inner loop of a collapsed nest: its bounds are index arithmetic
            self.prog.control_pcs += list(range(first_pc, len(self.prog._src)))
        self.cur = s
        if elem is not None:
            ind = elem[1]
        elif isinstance(s.target, ast.Name):
            ind = self.var(s.target.id)
        else:
            ind = self.prog.reg((self.fi.key, "loop", s.lineno, s.col_offset))
        flag = self.tmp()
        has_break = any(isinstance(n, ast.Break) for n in _loop_own_nodes(s.body))
        brk = self.tmp() if has_break else None
        inc_pc = self.pc(s, "loop:next", [ind], ind, text=f"next {ast.unparse(s.target)}")
        be_pc = self.pc(s, "branch:loop", [ind], 0, text=f"for {ast.unparse(s.target)} in {ast.unparse(s.iter)}")
        self.prog.induction_pcs.append(inc_pc)
        if is_tid:
            self.prog.control_pcs += [inc_pc, be_pc]
            self._enter_kernel_loop(role, be_pc, lin)
        self.emit(f"{flag} = 0")
        if brk:
            self.emit(f"{brk} = 0")
        self.loops.append(_Loop(flag, brk))
        if is_tid:
            self.tid_depth += 1
        saved, self.out = self.out, []
        self.emit(f"if {flag}:\n    {self.be.rec(inc_pc, Op.INT_ALU)}\n    {self.be.rec_branch(be_pc, 'True')}")
        for line in self.be.check():
            self.emit(line)
        if is_tid and role[1] == role[2] - 1:  # the innermost loop of the nest numbers the threads
            if lin is None:
                self.emit(self.be.set_tid(flag))
            else:
                self.emit(self.be.set_tid(lin))
                self.emit(f"{lin} += 1")
        elif is_tid:  # an outer loop of a nest: its own records in an iteration go to the row's first thread
            self.emit(self.be.set_tid(lin))
        self.emit(f"{flag} += 1")
        if elem is not None:
            self.emit(elem[2](f"{flag} - 1"))
        head = self.out
        self.out = saved
        body = head + self.block(s.body)
        if is_tid:
            self.tid_depth -= 1
        self.loops.pop()
        self.cur = s
        saved, self.out = self.out, []
        self.emit(f"if {flag}:\n    {self.be.rec(inc_pc, Op.INT_ALU)}\n    {self.be.rec_branch(be_pc, 'False')}")
        tail = self.out
        self.out = saved
        orelse = self.block(s.orelse) if s.orelse else []
        self.cur = s
        loop = ast.For(target=s.target, iter=ast.parse(iter_src, mode="eval").body, body=body, orelse=[])
        self.emit_node(loop)
        if brk:
            self.emit_node(ast.If(test=ast.parse(f"not {brk}", mode="eval").body, body=tail + orelse, orelse=[]))
        else:
            for st in tail + orelse:
                self.emit_node(st)
        if is_tid and role[1] == 0:
            self.emit(self.be.set_tid("-1"))

    def _enter_kernel_loop(self, role, be_pc: int, lin: str | None) -> None:
        """Before a loop of a thread space: the nest's thread counter, and what the dependence check needs
        (the innermost loop's BRANCH names the kernel in the trace; reduction variables' registers)."""
        k, pos, depth = role
        if pos == 0:
            if lin is not None:
                self.emit(f"{lin} = 0")
            for name, op in self.inst.ts.reductions_of(k).items():
                self.prog.reduction_tokens[self.var(name)] = f"{name} ({op}), {self.fi.file}:{self.cur.lineno}"
        if pos == depth - 1:
            self.prog.kernel_latches[k] = be_pc

    def s_While(self, s):
        self.cur = s
        is_tid = False  # a while loop is never a thread space (profiler/threadspace.py)
        flag = self.tmp()
        self.loops.append(_Loop(flag, None))
        if is_tid:
            self.emit(f"{flag} = 0")
            self.tid_depth += 1
        saved, self.out = self.out, []
        c, ct = self.expr(s.test)
        self.cur = s
        pc = self.pc(s.test, "branch:while", [ct])
        self.emit(self.be.rec_branch(pc, c))
        for line in self.be.check():
            self.emit(line)
        exit_body = self.block(s.orelse) if s.orelse else []
        self.cur = s
        self.emit_node(
            ast.If(test=ast.parse(f"not ({c})", mode="eval").body, body=exit_body + [ast.Break()], orelse=[])
        )
        if is_tid:
            self.emit(self.be.set_tid(flag))
            self.emit(f"{flag} += 1")
        body = self.out + self.block(s.body)
        self.out = saved
        self.loops.pop()
        self.cur = s
        self.emit_node(ast.While(test=ast.Constant(True), body=body, orelse=[]))
        if is_tid:
            self.tid_depth -= 1
            self.emit(self.be.set_tid("-1"))

    def s_Break(self, s):
        pc = self.pc(s, "jump:break", [], 0)
        self.emit(self.be.rec(pc, Op.JUMP))
        loop = self.loops[-1] if self.loops else None
        if loop is not None and loop.brk:
            self.emit(f"{loop.brk} = 1")
        self.emit_node(ast.Break())

    def s_Continue(self, s):
        pc = self.pc(s, "jump:continue", [], 0)
        self.emit(self.be.rec(pc, Op.JUMP))
        self.emit_node(ast.Continue())

    def s_Return(self, s):
        if s.value is not None:
            v, vt = self.expr(s.value)
        else:
            v, vt = "None", 0
        self.cur = s
        if not self.root:
            pc = self.pc(s, "ret", [vt], self.fi.ret_tok)
            self.emit(self.be.rec(pc, Op.RET))
        self.emit(self.be.before_return())
        if self.root and self.inst.block_outputs is not None:
            self.emit(f"return {self.inst.block_outputs}")
        else:
            self.emit(f"return {v}")

    def s_Assert(self, s):
        c, ct = self.expr(s.test)
        self.cur = s
        pc = self.pc(s.test, "branch:assert", [ct])
        self.emit(self.be.rec_branch(pc, c))
        msg = f", {ast.unparse(s.msg)}" if s.msg is not None else ""
        self.emit(f"assert {c}{msg}")

    def s_Raise(self, s):
        self.emit_node(s)

    def s_Delete(self, s):
        self.emit_node(s)

    def s_Import(self, s):
        self.emit_node(s)

    s_ImportFrom = s_Import

    def s_With(self, s):
        # a nested region marker is transparent: its body is part of this trace
        if len(s.items) == 1 and _is_region_call(s.items[0].context_expr) and s.items[0].optional_vars is None:
            for st in s.body:
                self.stmt(st)
            return
        items = [ast.withitem(context_expr=i.context_expr, optional_vars=i.optional_vars) for i in s.items]
        self.emit_node(ast.With(items=items, body=self.block(s.body)))

    def s_Try(self, s):
        body = self.block(s.body)
        handlers = [ast.ExceptHandler(type=h.type, name=h.name, body=self.block(h.body)) for h in s.handlers]
        orelse = self.block(s.orelse) if s.orelse else []
        final = self.block(s.finalbody) if s.finalbody else []
        self.cur = s
        self.emit_node(ast.Try(body=body, handlers=handlers, orelse=orelse, finalbody=final))

    # -- library calls: NumPy operations traced as the element loops they perform (profiler/libcalls.py) ----
    # (inside the thread space, see in_thread_space, an expansion runs in the current logical thread;
    # elsewhere each element of its outer iteration space is a thread of its own launch)
    def _counter_names(self) -> set[str]:
        """Locals bound only as the target of ``for ... in range(...)`` loops (never arrays)."""
        names = getattr(self, "_counters", None)
        if names is None:
            ranged, other = set(), set(a.arg for a in self.fdef.args.args + self.fdef.args.posonlyargs
                                       + self.fdef.args.kwonlyargs)
            targets = set()
            for n in ast.walk(self.fdef):
                if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and self._range_iter(n.iter):
                    ranged.add(n.target.id)
                    targets.add(id(n.target))
            for n in ast.walk(self.fdef):
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in targets:
                    other.add(n.id)
            names = self._counters = ranged - other
        return names

    def _range_iter(self, it) -> bool:
        if isinstance(it, ast.Call):
            ok, obj = self.resolve(it.func)
            if ok and obj is _markers.parallel and len(it.args) == 1:
                return self._range_iter(it.args[0])
            return ok and (obj is range or getattr(obj, "__name__", "") == "prange")
        return False

    def _maybe_array(self, node) -> bool:
        """False when ``node`` is certainly not an array (a literal, a range-loop counter, a global number,
        ``len()``/``int()``, arithmetic of those): such a site needs no expansion."""
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return node.id not in self._counter_names()
            ok, v = self.resolve(node)
            return not (ok and lc._is_number(v))
        if isinstance(node, ast.UnaryOp):
            return self._maybe_array(node.operand)
        if isinstance(node, ast.BinOp):
            return self._maybe_array(node.left) or self._maybe_array(node.right)
        if isinstance(node, ast.Call):
            ok, obj = self.resolve(node.func)
            if ok and obj in (len, int, bool):
                return False
        return True

    def _xtok(self) -> int:
        return self.prog.xreg((self.fi.key, "lib", len(self.prog._xregs)))

    @staticmethod
    def _lib_text(node) -> str:
        try:
            text = ast.unparse(node)
        except Exception:  # pragma: no cover
            text = type(node).__name__
        text = " ".join(text.split())
        return text if len(text) <= 80 else text[:77] + "..."

    def _lib_new(self, node, kind, name, length, expanded=True):
        """A library site: its counter slot, plan array and (for expansions) its ``prog.library_sites`` entry."""
        call = self._lib_text(node)
        line = int(getattr(node, "lineno", 0))
        slot = len(self.prog.lib_slots)
        self.prog.lib_slots.append({"call": call, "name": name, "file": self.fi.file, "line": line, "kind": kind})
        P = np.zeros(length, np.int64)
        P[lc.P_SLOT] = lc.S_HEAD + lc.SLOT_WIDTH * slot
        # outside the thread loops a NumPy operation is a launch of its own (a thread per element), unless the
        # region marks its kernels (prange / portcast.parallel): then, like an unmarked loop, it is host code
        marked = self.inst.ts is not None and self.inst.ts.how == "marked"
        P[lc.P_THREADS] = 0 if self.in_thread_space() or marked else 1
        P[lc.P_WKIND] = lc.formula_of(name)[0]
        site = None
        if expanded:
            site = {"call": call, "file": self.fi.file, "line": line, "kind": kind, "threads": bool(P[lc.P_THREADS])}
            self.prog.library_sites.append(site)
        self._lib_n = 0
        return P, site, call

    def _lib_pc(self, node, call, kind, part, srcs=(), dst=0) -> int:
        self._lib_n += 1
        return self.pc(node, f"lib:{kind}", srcs, dst, text=f"{call}: {part}")

    def _lib_plan(self, P) -> str:
        P.setflags(write=False)
        name = f"_pc_P{len(self.prog.lib_slots)}"
        self.ns[name] = P
        return name

    def _lib_loop(self, node, call, P, ind, what, nslot=lc.P_NEXT, bslot=lc.P_BRANCH) -> int:
        npc = self._lib_pc(node, call, "next", f"next {what}", [ind], ind)
        bpc = self._lib_pc(node, call, "branch", f"loop over {what}" + ("" if what == "k" else "s"), [ind])
        P[nslot] = rt.code_of(npc, Op.INT_ALU)
        P[bslot] = rt.code_of(bpc, Op.BRANCH)
        self.prog.induction_pcs.append(npc)  # the element index: a GPU thread computes it from its own index
        if self.prog.library_sites:
            self.prog.library_sites[-1].setdefault("loop_pcs", {})[bpc] = npc
        return bpc

    def _lib_emit(self, method, plan, out, args, guard=None, scalar=None) -> None:
        self.emit(self.be.lib(method, plan, out, list(args), guard, scalar, self._lib_n))

    def _lib_emit_typed(self, plan, out, args, pc, oi, of, probes) -> None:
        """An elementwise site whose scalar record is typed by ``probes`` (the result, or the operands)."""
        self.be.ns = self.ns
        self.emit(self.be.lib_typed(plan, out, list(args), pc, oi, of, list(probes), self._lib_n))

    def _expand_map(self, node, kind, name, d, ops, cls, byops, scalar_pc, opname, has_op=True, fill_tok=0):
        """Plan of an elementwise site: ``ops`` = [(node, source, register)] of the operands, ``d`` the result's
        register. Per element: LOAD of each array operand, the operation (``cls`` = its (int, float) class;
        ``byops``: float when an operand is), STORE, induction and BRANCH."""
        P, site, call = self._lib_new(node, kind, name, lc.MAP_LEN)
        op_scalar = cls if has_op else (Op.OTHER, Op.OTHER)
        P[lc.P_SCALAR_I] = rt.code_of(scalar_pc, op_scalar[0])
        P[lc.P_SCALAR_F] = rt.code_of(scalar_pc, op_scalar[1])
        P[lc.P_BYOPS] = int(byops)
        P[lc.M_HASOP] = int(has_op)
        ind = self._xtok()
        arr = [self._maybe_array(n) for n, _, _ in ops]
        loads = []
        for j, (n, src, tok) in enumerate(ops):
            if arr[j]:
                L = self._xtok()
                pc = self._lib_pc(node, call, "load", f"load {self._lib_text(n)}", [ind, tok], L)
                P[lc.P_LOAD + j] = rt.code_of(pc, Op.LOAD)
                loads.append(L)
            else:
                loads.append(0)
        masks = [m for m in range(1 << len(ops)) if all(arr[j] or not (m >> j) & 1 for j in range(len(ops)))]
        if has_op:
            E = self._xtok()
            for m in masks:
                srcs = [loads[j] if (m >> j) & 1 else ops[j][2] for j in range(len(ops))]
                pc = self._lib_pc(node, call, "op", opname, srcs, E)
                P[lc.M_OP_I + m] = rt.code_of(pc, cls[0])
                P[lc.M_OP_F + m] = rt.code_of(pc, cls[1])
            spc = self._lib_pc(node, call, "store", "store", [E, ind, d])
            for m in masks:
                P[lc.M_STORE + m] = rt.code_of(spc, Op.STORE)
        else:
            for m in masks:
                v = (loads[0] if m & 1 else ops[0][2]) if ops else fill_tok
                spc = self._lib_pc(node, call, "store", "store", [v, ind, d])
                P[lc.M_STORE + m] = rt.code_of(spc, Op.STORE)
        site["latch_pc"] = self._lib_loop(node, call, P, ind, "element")
        return self._lib_plan(P)

    def _expand_acc(self, node, kind, name, d, ops, cls, byops, scalar_pc, mean=False):
        """Plan of an accumulating site (kind reduce, matmul, vdot or scan): ``ops`` = [(node, source,
        register)] of the operands (two for matmul/vdot, whose elements are multiplied before accumulating)."""
        P, site, call = self._lib_new(node, "matmul" if kind == "vdot" else kind, name, lc.ACC_LEN)
        P[lc.P_SCALAR_I] = P[lc.P_SCALAR_F] = rt.code_of(scalar_pc, Op.OTHER)
        P[lc.P_BYOPS] = int(byops)
        ii, io, acc = self._xtok(), self._xtok(), self._xtok()
        P[lc.A_INIT] = rt.code_of(self._lib_pc(node, call, "init", "set up the accumulator", [], acc), Op.MOVE)
        loads = []
        for j, (n, src, tok) in enumerate(ops):
            L = self._xtok()
            P[lc.P_LOAD + j] = rt.code_of(self._lib_pc(node, call, "load", f"load {self._lib_text(n)}", [ii, tok], L),
                                          Op.LOAD)
            loads.append(L)
        src = loads[0]
        if len(ops) == 2:
            src = self._xtok()
            pc = self._lib_pc(node, call, "op", "multiply", loads, src)
            P[lc.A_PRE_I], P[lc.A_PRE_F] = rt.code_of(pc, Op.INT_MUL), rt.code_of(pc, Op.FP_MUL)
        pc = self._lib_pc(node, call, "acc", "accumulate", [acc, src], acc)
        P[lc.A_ACC_I], P[lc.A_ACC_F] = rt.code_of(pc, cls[0]), rt.code_of(pc, cls[1])
        if kind == "scan":
            P[lc.A_SCAN_STORE] = rt.code_of(self._lib_pc(node, call, "store", "store", [acc, ii, d]), Op.STORE)
        what = "k" if len(ops) == 2 else "element"
        site["latch_pc"] = self._lib_loop(node, call, P, ii, what, lc.A_INEXT, lc.A_IBRANCH)
        if mean:
            P[lc.A_FIN] = rt.code_of(self._lib_pc(node, call, "op", "divide by the count", [acc], acc), Op.FP_DIV)
        if kind in ("reduce", "matmul"):
            P[lc.P_STORE] = rt.code_of(self._lib_pc(node, call, "store", "store", [acc, io, d]), Op.STORE)
        if kind in ("reduce", "matmul", "scan"):
            site["outer_latch_pc"] = self._lib_loop(node, call, P, io, "output element")
        if kind != "scan":
            P[lc.A_FINAL] = rt.code_of(self._lib_pc(node, call, "final", "result", [acc], d), Op.MOVE)
        self.prog.reduction(acc, site, f"{call}: accumulator ({self.fi.file}:{site['line']})")
        return self._lib_plan(P)

    def _capture(self, target, srcs) -> str:
        """Where an expanded operation puts its result: a temporary when the target is one of its operands
        (the records need the operands as they were)."""
        out = target or self.tmp()
        return self.tmp() if target is not None and target in srcs else out

    def _expand_binop(self, node, sym, oi, of, pc, lhs, lt, r, rt_, out, d):
        if not (self._maybe_array(node.left) or self._maybe_array(node.right)):
            return None
        res = self._capture(out, (lhs, r))
        self.emit(f"{res} = {lhs} {sym} {r}")
        ops = [(node.left, lhs, lt), (node.right, r, rt_)]
        if sym == "@":
            plan = self._expand_acc(node, "matmul", "@", d, ops, (Op.INT_ALU, Op.FP_ALU), False, pc)
            self._lib_emit("matmul", plan, res, [lhs, r])
        else:
            plan = self._expand_map(node, "map", sym, d, ops, (oi, of), False, pc, sym)
            self._lib_emit_typed(plan, res, [lhs, r], pc, oi, of, [res])
        if res != out:
            self.emit(f"{out} = {res}")
        return out, d

    def _expand_unary(self, node, sym, v, vt, out, d, pc):
        if not self._maybe_array(node.operand):
            return None
        res = self._capture(out, (v,))
        self.emit(f"{res} = {sym}{v}")
        plan = self._expand_map(node, "map", sym, d, [(node.operand, v, vt)], (Op.INT_ALU, Op.FP_ALU), False, pc, sym)
        self._lib_emit_typed(plan, res, [v], pc, Op.INT_ALU, Op.FP_ALU, [res])
        if res != out:
            self.emit(f"{out} = {res}")
        return out, d

    def _expand_compare(self, node, out, d, lhs, lt, op, r, rt_) -> bool:
        sym = _CMPOPS[type(op)]
        if sym in ("is", "is not", "in", "not in") or not (self._maybe_array(node.left)
                                                           or self._maybe_array(node.comparators[0])):
            return False
        pc = self.pc(node, f"cmp:{sym}", [lt, rt_], d)
        self.emit(f"{out} = {lhs} {sym} {r}")
        plan = self._expand_map(node, "map", sym, d, [(node.left, lhs, lt), (node.comparators[0], r, rt_)],
                                (Op.INT_ALU, Op.FP_ALU), True, pc, sym)
        self._lib_emit_typed(plan, out, [lhs, r], pc, Op.INT_ALU, Op.FP_ALU, [lhs, r])
        return True

    def _expand_inplace(self, node, sym, oi, of, pc, tnode, name, d, vnode, v, vt) -> bool:
        """``name op= v`` on an array updates it in place: a map whose result is ``name`` itself."""
        if sym == "@" or not (self._maybe_array(tnode) or self._maybe_array(vnode)):
            return False
        plan = self._expand_map(node, "map", f"{sym}=", d, [(tnode, name, d), (vnode, v, vt)], (oi, of), False, pc,
                                f"{sym}=")
        self._lib_emit_typed(plan, name, [name, v], pc, oi, of, [name])
        return True

    def _expand_call(self, node, obj, target, dst):
        """A NumPy call: expanded, or one OTHER record plus its estimated work; None: classify as before."""
        spec = lc.call_spec(obj, builtins.abs)
        if spec is None or spec[0] == "none":
            return None
        kind, name = spec
        short = name[3:] if name.startswith("np.") else name
        pos = [(a, *self.expr(a)) for a in node.args]
        kw = {k.arg: (k.value, *self.expr(k.value)) for k in node.keywords}
        return self._lib_call_site(node, kind, name, short, ast.unparse(node.func), None, 0, pos, kw, target, dst)

    def _expand_method(self, node, target, dst):
        """``x.sum()``, ``x.copy()``, ``x.dot(y)``, ``x.sort()`` ...: expanded (or estimated) when ``x`` is an
        array at run time, else the OTHER record of any method call."""
        attr = node.func.attr
        base, bt = self.expr(node.func.value)
        pos = [(a, *self.expr(a)) for a in node.args]
        kw = {k.arg: (k.value, *self.expr(k.value)) for k in node.keywords}
        kind = lc.METHODS.get(attr, "estimate")
        return self._lib_call_site(node, kind, f"ndarray.{attr}", attr, f"{base}.{attr}", (node.func.value, base, bt),
                                   bt, pos, kw, target, dst)

    def _lib_call_site(self, node, kind, name, short, func, this, ft, pos, kw, target, dst):
        out, d = self._dest(target, dst)
        srcs = [p[1] for p in pos] + [v[1] for v in kw.values()] + ([this[1]] if this else [])
        res = self._capture(out, srcs)
        args = ", ".join([p[1] for p in pos] + [f"{k}={v[1]}" for k, v in kw.items()])
        toks = [p[2] for p in pos] + [v[2] for v in kw.values()] + ([ft] if this else [])
        self.emit(f"{res} = {func}({args})")
        ops = ([this] if this else []) + pos  # operands: the method's array first
        n = len(ops)
        keys = set(kw)
        axis = (pos[1 if not this else 0][1] if len(pos) > (0 if this else 1) else kw["axis"][1] if "axis" in kw
                else "None")
        if kind == "map":
            lo, hi, cls, byops = lc.MAP_FUNCS[short]
            if lo <= n <= hi and not keys - {"dtype", "out", "casting", "order"}:
                label = "call:special" if short in _SPECIAL_NAMES else f"call:{short}"
                pc = self.pc(node, label, toks, d)
                plan = self._expand_map(node, "map", name, d, ops, cls, byops, pc, short)
                probes = [o[1] for o in ops] if byops else [res]
                self._lib_emit_typed(plan, res, [o[1] for o in ops], pc, cls[0], cls[1], probes)
                return self._lib_done(res, out, d)
        elif kind in ("reduce", "scan"):
            if n in (1, 2) and not keys - {"axis", "dtype"}:
                pc = self.pc(node, "call:other", toks, d)
                if kind == "reduce":
                    cls, byops, mean = lc.REDUCE_FUNCS[short]
                else:
                    cls, byops, mean = lc.SCAN_FUNCS[short], False, False
                plan = self._expand_acc(node, kind, name, d, ops[:1], cls, byops, pc, mean)
                self._lib_emit(kind, plan, res, [ops[0][1], axis])
                return self._lib_done(res, out, d)
        elif kind in ("matmul", "vdot"):
            if n == 2 and not keys:
                pc = self.pc(node, "call:other", toks, d)
                plan = self._expand_acc(node, kind, name, d, ops, (Op.INT_ALU, Op.FP_ALU), False, pc)
                self._lib_emit(kind, plan, res, [ops[0][1], ops[1][1]])
                return self._lib_done(res, out, d)
        elif kind == "copy":
            if n in (1, 2) and not keys - {"dtype", "order", "copy"}:
                pc = self.pc(node, "call:other", toks, d)
                plan = self._expand_map(node, "copy", name, d, ops[:1], (Op.OTHER, Op.OTHER), False, pc, "copy",
                                        has_op=False)
                self._lib_emit("copy", plan, res, [ops[0][1]])
                return self._lib_done(res, out, d)
        elif kind == "construct":
            pc = self.pc(node, "call:other", toks, d)
            if this:  # x.fill(v): x is the result
                fill = pos[0][2] if pos else 0
                plan = self._expand_map(node, "construct", name, this[2], [], (Op.OTHER, Op.OTHER), False, pc, "fill",
                                        has_op=False, fill_tok=fill)
                self._lib_emit("map", plan, this[1], [], guard=this[1], scalar=self.be.rec(pc, Op.OTHER))
            else:
                k = lc.CONSTRUCT_FUNCS[short]
                fill = pos[k][2] if 0 <= k < len(pos) else kw["fill_value"][2] if "fill_value" in kw else 0
                plan = self._expand_map(node, "construct", name, d, [], (Op.OTHER, Op.OTHER), False, pc, short,
                                        has_op=False, fill_tok=fill)
                self._lib_emit("map", plan, res, [], guard=res, scalar=self.be.rec(pc, Op.OTHER))
            return self._lib_done(res, out, d)
        # not expanded: one OTHER record and the work estimate
        pc = self.pc(node, "call:other", toks, d)
        self.emit(self.be.rec(pc, Op.OTHER))
        P, _, _ = self._lib_new(node, "estimate", name, lc.WORK_LEN, expanded=False)
        plan = self._lib_plan(P)
        flag_kw = lc.formula_of(name)[1]
        flag = kw[flag_kw][1] if flag_kw in kw else "1"
        a = [o[1] for o in ops[:3]] + ["None"] * (3 - min(3, len(ops)))
        self.emit(self.be.lib_work(plan, res, a, flag))
        return self._lib_done(res, out, d)

    def _lib_done(self, res, out, d):
        if res != out:
            self.emit(f"{out} = {res}")
        return out, d

    def _expand_gather(self, node, base, bt, idx, it, out, d, pc):
        """``x[idx]`` whose index may be an array: a gather (integer index array) or a masked read (boolean)."""
        res = self._capture(out, (base, idx))
        self.emit(f"{res} = {base}[{idx}]")
        P, site, call = self._lib_new(node, "gather", "indexing", lc.GATHER_LEN)
        P[lc.P_SCALAR_I] = P[lc.P_SCALAR_F] = rt.code_of(pc, Op.OTHER)
        itok = it[0] if it else 0
        ind, li, lx = self._xtok(), self._xtok(), self._xtok()
        P[lc.G_LOAD_IDX] = rt.code_of(self._lib_pc(node, call, "load", "load index", [ind, itok], li), Op.LOAD)
        P[lc.G_LOAD_X] = rt.code_of(self._lib_pc(node, call, "load", "load element", [li, bt], lx), Op.LOAD)
        P[lc.P_STORE] = rt.code_of(self._lib_pc(node, call, "store", "store", [lx, ind, d]), Op.STORE)
        lm, lmx, km = self._xtok(), self._xtok(), self._xtok()
        P[lc.G_MLOAD] = rt.code_of(self._lib_pc(node, call, "load", "load mask", [ind, itok], lm), Op.LOAD)
        P[lc.G_MBRANCH] = rt.code_of(self._lib_pc(node, call, "branch", "selected?", [lm]), Op.BRANCH)
        P[lc.G_MLOAD_X] = rt.code_of(self._lib_pc(node, call, "load", "load selected element", [ind, bt], lmx),
                                     Op.LOAD)
        P[lc.G_MSTORE] = rt.code_of(self._lib_pc(node, call, "store", "store selected", [lmx, km, d]), Op.STORE)
        P[lc.G_COUNT] = rt.code_of(self._lib_pc(node, call, "next", "next output position", [km], km), Op.INT_ALU)
        site["latch_pc"] = self._lib_loop(node, call, P, ind, "element")
        plan = self._lib_plan(P)
        scalar = self.be.rec_mem(pc, Op.LOAD, base, idx)
        self.emit(self.be.lib_sub(plan, rt.code_of(pc, Op.LOAD), base, idx, res, scalar, self._lib_n))
        return self._lib_done(res, out, d)

    def _expand_slice_store(self, tgt, base, bt, idx, value, vt, node) -> bool:
        """``a[1:-1] = expr`` / ``a[:] = 0``: a STORE per element of the assigned view (LOADs of an array
        source). Returns False where the assignment keeps its one OTHER record."""
        vnode = getattr(node, "value", None)
        pc = self.pc(tgt, "store:slice", [vt, bt], 0)
        view = self.tmp()
        self.emit(f"{view} = {base}[{idx}]")
        ops = [(vnode if isinstance(vnode, ast.AST) else ast.Name(value, ast.Load()), value, vt)]
        plan = self._expand_map(tgt, "copy", "slice assignment", bt, ops, (Op.OTHER, Op.OTHER), False, pc, "store",
                                has_op=False)
        self._lib_emit("map", plan, view, [value], guard=view, scalar=self.be.rec(pc, Op.OTHER))
        return True

    def _expand_iter(self, s):
        """``for v in arr`` / ``for i, v in enumerate(arr)``: (iterable source, induction register, record source
        of the element given the iteration index) or None. A 1-D array's element is a LOAD per iteration
        (into ``v``'s register), a row of a 2-D array a view (OTHER), a list element a LOAD at its synthetic
        address; other iterables record nothing."""
        it, tgt = s.iter, s.target
        enum = False
        if isinstance(it, ast.Call) and not it.keywords and len(it.args) == 1 and isinstance(tgt, ast.Tuple) \
                and len(tgt.elts) == 2 and all(isinstance(e, ast.Name) for e in tgt.elts):
            ok, obj = self.resolve(it.func)
            enum = ok and obj is enumerate
        if not enum and not isinstance(tgt, ast.Name):
            return None
        inner = it.args[0] if enum else it
        src, tok = self.expr(inner)
        self.cur = s
        hold = self.tmp()
        self.emit(f"{hold} = {src}")
        vname = tgt.elts[1].id if enum else tgt.id
        ind = self.var(tgt.elts[0].id) if enum else self._xtok()
        pc = self.pc(s, "load", [ind, tok], self.var(vname), text=f"{vname} = next element of {self._lib_text(inner)}")
        code = rt.code_of(pc, Op.LOAD)
        return (f"enumerate({hold})" if enum else hold), ind, (lambda i: self.be.lib_iter(code, hold, i))

    # -- function ------------------------------------------------------------------------------------------
    def function(self) -> ast.FunctionDef:
        pro = self.be.prologue()
        self.cur = self.fdef
        self.emit(pro)
        for st in self.fdef.body:
            self.stmt(st)
        if not self._ends_flow(self.fdef.body) or not isinstance(self.fdef.body[-1], ast.Return):
            self.cur = self.fdef.body[-1]
            self.s_Return(ast.copy_location(ast.Return(value=None), self.fdef.body[-1]))
        args = [ast.arg("_pc_B"), ast.arg("_pc_S")] + [ast.arg(p) for p in self.fi.params]
        fd = ast.FunctionDef(
            name=self.fi.name,
            args=ast.arguments(
                posonlyargs=[], args=args, vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
            ),
            body=self.out,
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        ast.copy_location(fd, self.fdef)
        return fd


def _is_region_call(node) -> bool:
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name == "region"
    return False


def _loop_own_nodes(stmts):
    """Nodes of a loop body that belong to this loop (not to nested loops)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.For, ast.While)):
            stack.extend(n.orelse)
            continue
        for child in ast.iter_child_nodes(n):
            if isinstance(child, ast.stmt):
                stack.append(child)


# ----------------------------------------------------------------------------------------------------------
# driver


def function_source(fn) -> tuple[ast.FunctionDef, str]:
    """The FunctionDef of ``fn`` with line numbers and columns of its file, and the file name."""
    try:
        file = inspect.getsourcefile(fn) or fn.__code__.co_filename
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SourceUnavailable(
            f"cannot trace {getattr(fn, '__qualname__', fn)!r}: its source is not available ({exc})"
        ) from None
    src = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(textwrap.dedent(src))
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise SourceUnavailable(f"cannot trace {fn.__qualname__!r}: {file}:{first} is not a plain function definition")
    for n in ast.walk(tree):
        if "lineno" in n._attributes and hasattr(n, "lineno"):
            n.lineno += first - 1
            n.end_lineno = (n.end_lineno or n.lineno) + first - 1
            n.col_offset += indent
    return fdef, file


class Instrumenter:
    """Instruments a root function (or block) and, recursively, the user functions it calls."""

    def __init__(self, mode: str) -> None:
        self.prog = Program(mode)
        self.backend = _Interp(self.prog) if mode == "interpreted" else _Compiled(self.prog)
        self.block_outputs: str | None = None
        self._links: list[tuple[FuncInfo, FuncInfo]] = []
        self._n = 0
        self.ts = None  # the region's thread space (threadspace.Analysis), decided before any rewriting

    def signature_ok(self, fn) -> bool:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return False
        return all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in sig.parameters.values()
        )

    def _namespace(self, fn) -> dict:
        ns = closure_namespace(fn)
        ns.update(_PRIMS)
        ns["range"] = range
        return ns

    def _new_info(self, key, qualname, file, params, namespace) -> FuncInfo:
        self._n += 1
        safe = "".join(ch if ch.isalnum() else "_" for ch in qualname)
        fi = FuncInfo(
            key=key, name=f"_pc_f{self._n}_{safe}", qualname=qualname, file=file, params=list(params),
            param_toks=[], ret_tok=0, defaults={}, namespace=namespace,
        )
        fi.param_toks = [self.prog.reg((key, "var", p)) for p in params]
        fi.ret_tok = self.prog.reg((key, "ret"))
        self.prog.funcs[key] = fi
        self.prog.order.append(fi)
        return fi

    def function(self, fn, root: bool = False) -> FuncInfo:
        fn = unwrap_callable(fn)
        key = fn.__code__
        if key in self.prog.funcs:
            return self.prog.funcs[key]
        if not self.signature_ok(fn):
            raise UnsupportedConstruct(
                f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}: {fn.__qualname__} has *args/**kwargs "
                "parameters, which the tracer does not support"
            )
        fdef, file = function_source(fn)
        _check_supported(fdef, file)
        if root:
            from .threadspace import analyse_function

            self.ts = analyse_function(fn)
        sig = inspect.signature(fn)
        params = list(sig.parameters)
        fi = self._new_info(key, fn.__qualname__, file, params, self._namespace(fn))
        for p in sig.parameters.values():
            if p.default is not p.empty:
                dn = f"_pc_d{self._n}_{p.name}"
                fi.namespace[dn] = p.default
                fi.defaults[p.name] = dn
        fi.node = _Rewriter(self, fi, fdef, root).function()
        if root:
            self.prog.root = fi
        return fi

    def block(self, fdef: ast.FunctionDef, file: str, qualname: str, namespace: dict, outputs: list[str]) -> FuncInfo:
        """Instrument a synthetic root function made from a marked block (see profiler.session)."""
        _check_supported(fdef, file)
        params = [a.arg for a in fdef.args.args]
        ns = dict(namespace)
        ns.update(_PRIMS)
        ns["range"] = range
        key = ("block", file, fdef.lineno, qualname)
        from .threadspace import analyse_block

        self.ts = analyse_block(key, qualname, file, fdef, namespace)
        fi = self._new_info(key, qualname, file, params, ns)
        self.block_outputs = "(" + "".join(f"{o}, " for o in outputs) + ")"
        fi.node = _Rewriter(self, fi, fdef, True).function()
        self.block_outputs = None
        self.prog.root = fi
        return fi

    def _thread_space_metadata(self) -> None:
        """``prog.thread_space``: the analysis's choice with the pcs and tokens the rewriter allocated."""
        prog = self.prog
        ts = self.ts
        if ts is None:
            return
        meta = ts.to_json()
        for loop in meta["loops"]:
            loop["latch_pc"] = int(prog.kernel_latches.get(loop["id"], 0))
        self._library_launches(meta)
        meta["induction_pcs"] = sorted(set(prog.induction_pcs))
        meta["reduction_tokens"] = {str(k): v for k, v in sorted(prog.reduction_tokens.items())}
        meta["update_pcs"] = sorted(set(prog.update_pcs))
        meta["store_values"] = {str(k): int(v) for k, v in sorted(prog.store_values.items())}
        meta["control_pcs"] = sorted(set(prog.control_pcs))
        prog.thread_space = meta
        prog.parallel_loops = [loop["location"] for loop in meta["loops"]]

    def _library_launches(self, meta: dict) -> None:
        """NumPy operations expanded outside the thread space are launches of their own (docs/profiler.md,
        "Library calls"): each site is a kernel loop in the metadata's ``library`` list (ids after the source
        loops'), named by its loops' BRANCHes, whose latch records are loop control. A site that only ever
        meets scalars never launches; reports list the sites that did."""
        prog = self.prog
        kinds = {"reduce": "reduction", "scan": "scan"}
        meta["library"] = []
        for site in prog.library_sites:
            if not site.get("threads"):
                continue
            # an accumulating site's threads are its output elements when the result is an array, else the
            # input elements (decided at run time): either loop's BRANCH names the launch
            latches = [int(site[k]) for k in ("latch_pc", "outer_latch_pc") if site.get(k)]
            latch = latches[0] if latches else 0
            loop = {
                "id": len(meta["loops"]) + len(meta["library"]),
                "how": "library",
                "function": "",
                "location": f"{site['file']}:{site['line']}",
                "header": site["call"],
                "dims": 1,
                "nest": [f"{site['file']}:{site['line']}"],
                "static": kinds.get(site["kind"], "independent"),
                "atomics": [],
                "reasons": [],
                "latch_pc": latch,
                "latch_pcs": latches,
                "reductions": (
                    [f"{site['call']} (running value, scan)"]
                    if site["kind"] == "scan"
                    else [f"{site['call']} (accumulator)"]
                )
                if site.get("reduction_token")
                else [],
            }
            meta["library"].append(loop)
            for bpc, npc in site.get("loop_pcs", {}).items():
                prog.control_pcs += [npc, bpc]

    def link(self, caller: FuncInfo, callee: FuncInfo) -> None:
        self._links.append((caller, callee))

    def build(self) -> Program:
        """Compile every instrumented function (njit in compiled mode) and link callers to callees."""
        import numba

        prog = self.prog
        prog.finalize()
        self._thread_space_metadata()
        for fi in prog.order:
            if prog.mode == "compiled":
                fi.node.body = merge_records(fi.node.body)
            mod = ast.Module(body=[fi.node], type_ignores=[])
            ast.fix_missing_locations(mod)
            code = compile(mod, fi.file, "exec")
            exec(code, fi.namespace)
            f = fi.namespace[fi.node.name]
            if prog.mode == "compiled":
                f = numba.njit(f, no_cfunc_wrapper=True, no_cpython_wrapper=fi is not prog.root)
            fi.fn = f
            fi.namespace[fi.name] = f
        for caller, callee in self._links:
            caller.namespace[callee.name] = callee.fn
        prog.recursive = recursive_functions(self._links)
        return prog


def recursive_functions(links) -> list[str]:
    """Qualified names of the functions on a call cycle (a function that calls itself, or calls one that
    calls it back) among the ``(caller, callee)`` links of the instrumented functions."""
    graph: dict = {}
    for caller, callee in links:
        graph.setdefault(id(caller), (caller, set()))[1].add(id(callee))
        graph.setdefault(id(callee), (callee, set()))
    on_cycle = []
    for start, (fi, _) in graph.items():
        seen, stack = set(), list(graph[start][1])
        while stack:
            node = stack.pop()
            if node == start:
                on_cycle.append(fi.qualname)
                break
            if node not in seen:
                seen.add(node)
                stack.extend(graph[node][1])
    return sorted(set(on_cycle))


def instrument(fn, mode: str) -> Program:
    """Instrument ``fn`` (root of a region) and everything it calls; returns the built program."""
    inst = Instrumenter(mode)
    inst.function(fn, root=True)
    return inst.build()


def source_text(fn) -> str:  # pragma: no cover - debugging aid
    """The instrumented source of ``fn`` (interpreted mode), for debugging and docs."""
    inst = Instrumenter("interpreted")
    inst.function(fn, root=True)
    return "\n\n".join(ast.unparse(fi.node) for fi in inst.prog.order)


del math
