"""The rewriter: one instance rewrites one function into three-address form with its records."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from ..user_code import assigned_names, resolve_static
from .program import FuncInfo
from .rewrite_expr import _Expressions
from .rewrite_lib import _LibraryCalls
from .rewrite_stmt import _Loop, _Statements

if TYPE_CHECKING:
    from .driver import Instrumenter


class _Rewriter(_Expressions, _Statements, _LibraryCalls):
    """Rewrites one function (``fdef``, the user's source) into the instrumented function: three-address
    statements in ``out``, each followed by its record (from the back end ``be``), static ids and registers
    allocated in the program ``prog``. ``root``: the region's root, whose loops may become GPU threads."""

    def __init__(self, inst: "Instrumenter", fi: FuncInfo, fdef: ast.FunctionDef, root: bool) -> None:
        self.inst = inst
        self.prog = inst.prog
        self.be = inst.backend
        self.fi = fi
        self.fdef = fdef
        self.root = root
        self.ns = fi.namespace
        self.locals = assigned_names(fdef)
        self.out: list[ast.stmt] = []
        self.n_tmp = 0
        self.loops: list[_Loop] = []
        self.cur: ast.AST = fdef
        self.tid_depth = 0  # > 0 while inside a loop whose iterations are threads
        # the loop table (profiler/loops.py): the loop whose body the statements being rewritten are in, and the
        # loop whose control (a for's increment and test, a while's test) is being rewritten; 0: none
        self.loop_at = 0
        self.ctl_of = 0

    # -- helpers ------------------------------------------------------------------------------------------
    def tmp(self) -> str:
        """A new temporary name (``_pc_t<k>``)."""
        self.n_tmp += 1
        return f"_pc_t{self.n_tmp}"

    def var(self, name: str) -> int:
        """The register of local variable ``name``."""
        return self.prog.reg((self.fi.key, "var", name))

    def site(self) -> int:
        """A new register for an expression site (perfect renaming: one per site)."""
        return self.prog.reg((self.fi.key, "site", len(self.prog._regs)))

    def emit(self, src: str | list[str]) -> None:
        """Append the statements of the source text ``src`` to the output, located at the user's statement."""
        for s in [src] if isinstance(src, str) else src:
            for st in ast.parse(s).body:
                self._locate(st)
                self.out.append(st)

    def emit_node(self, st: ast.stmt) -> None:
        """Append the statement node ``st`` to the output, located at the user's statement."""
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

    def rtyped(self, pc, op_i, op_f, probes, result=False) -> str:
        """The back end's typed record (:meth:`_Backend.rec_typed`) in this function's namespace."""
        self.be.ns = self.ns
        return self.be.rec_typed(pc, op_i, op_f, probes, result)

    def pc(self, node, kind, srcs=(), dst=0, text=None) -> int:
        """A new static id for ``node`` (:meth:`Program.new_pc`), in the body of the loop being rewritten, or the
        control of the loop whose header is."""
        return self.prog.new_pc(self.fi, node, kind, srcs, dst, text, loop=self.loop_at, closes=self.ctl_of)

    def block(self, stmts) -> list[ast.stmt]:
        """The rewritten statements of a nested block (the body of an ``if``, a loop, a ``with``)."""
        saved = self.out
        self.out = []
        for s in stmts:
            self.stmt(s)
        body, self.out = self.out, saved
        return body or [ast.Pass()]

    def resolve(self, node) -> tuple[bool, Any]:
        """:func:`resolve_static` of ``node`` in this function: the value of a global name or attribute chain
        (its locals shadow globals)."""
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

    # -- function ------------------------------------------------------------------------------------------
    def function(self) -> ast.FunctionDef:
        """The instrumented function: prologue, the rewritten body, a final return; parameters ``_pc_B`` (the
        buffer), ``_pc_S`` (its state) and the user's."""
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
