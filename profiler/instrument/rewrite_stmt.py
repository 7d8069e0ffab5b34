"""The rewriter's statements: assignments, control flow and the loops that become GPU threads."""

from __future__ import annotations

import ast

from core.trace_schema import Op

from .. import markers as _markers
from .tables import _BINOPS
from .unsupported import UnsupportedConstruct


class _Loop:
    """A loop being rewritten: the temporary that is true after its first iteration, and the one a ``break``
    sets (None when the loop has no ``break``)."""

    def __init__(self, flag: str, brk: str | None):
        self.flag = flag
        self.brk = brk


class _Statements:
    """Rewriting of statements (mixed into :class:`profiler.instrument.rewriter._Rewriter`)."""

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
            first = self.prog.next_pc
            if is_slice and self._expand_slice_store(tgt, base, bt, idx, value, vt, node):
                self._private_store(tgt, first)
                return
            if is_slice:
                pc = self.pc(tgt, "store:slice", [vt] + it + [bt], 0)
                self.emit(self.be.rec(pc, Op.OTHER))
            else:
                pc = self.pc(tgt, "store", [vt] + it + [bt], 0)
                self.prog.store_values[pc] = int(vt or 0)
                self.emit(self.be.rec_mem(pc, Op.STORE, base, idx))
                self._private_store(tgt, pc)
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

    def _private_store(self, tgt, first: int) -> None:
        """The STOREs of ``tgt`` (static ids from ``first``) write an array a kernel loop privatises
        (profiler/threadspace/): the dependence check on the trace counts no write between threads there."""
        ts = self.inst.ts
        if ts is None or not ts.is_private_store(self.fi.key, tgt):
            return
        for pc in range(first, self.prog.next_pc):
            e = self.prog.static.get(pc)
            if e is not None and e.kind in ("store", "lib:store"):
                self.prog.private_pcs.append(pc)

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
            first = self.prog.next_pc
            private = self.inst.ts is not None and self.inst.ts.is_private_store(self.fi.key, tgt)
            if is_slice:
                self.emit(self.be.rec(self.pc(tgt, "view", it + [bt], ct), Op.OTHER))
            else:
                lpc = self.pc(tgt, "load", it + [bt], ct)
                if not private:  # an update of a private buffer is no atomic: the thread's own element
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
                self._private_store(tgt, first)  # the element stores of the expanded update
            else:
                spc = self.pc(tgt, "store", [rtk] + it + [bt], 0)
                (self.prog.private_pcs if private else self.prog.update_pcs).append(spc)
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
        lp = self.prog.new_loop()
        self.ctl_of = lp  # the increment and the test close each iteration (after the first)
        inc_pc = self.pc(s, "loop:next", [ind], ind, text=f"next {ast.unparse(s.target)}")
        be_pc = self.pc(s, "branch:loop", [ind], 0, text=f"for {ast.unparse(s.target)} in {ast.unparse(s.iter)}")
        self.ctl_of = 0
        if elem is not None:  # the element's LOAD starts every iteration: the body's
            self.prog.static[elem[3]].loop = lp
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
        around, self.loop_at = self.loop_at, lp
        sunk = self.inst.ts.sunk_of(self.fi.key, s) if is_tid else set()
        body = head + (self._block_sinking(s.body, sunk) if sunk else self.block(s.body))
        self.loop_at = around
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

    def _block_sinking(self, stmts, sunk: set) -> list:
        """The body of an outer loop of a collapsed imperfect nest: the statements ``sunk`` into the inner loop
        (profiler/threadspace/) run where they are, once per outer iteration, their records in the row's
        first thread; their pcs go to ``sunk_pcs``."""
        saved, self.out = self.out, []
        for st in stmts:
            first = len(self.prog._src)
            self.stmt(st)
            if (st.lineno, st.col_offset) in sunk:
                self.prog.sunk_pcs += range(first, len(self.prog._src))
        body, self.out = self.out, saved
        return body or [ast.Pass()]

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
        is_tid = False  # a while loop is never a thread space (profiler/threadspace/)
        flag = self.tmp()
        self.loops.append(_Loop(flag, None))
        if is_tid:
            self.emit(f"{flag} = 0")
            self.tid_depth += 1
        saved, self.out = self.out, []
        lp = self.prog.new_loop()
        self.ctl_of = lp  # the test (with what it computes) closes each iteration but the first
        c, ct = self.expr(s.test)
        self.cur = s
        pc = self.pc(s.test, "branch:while", [ct])
        self.ctl_of = 0
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
        around, self.loop_at = self.loop_at, lp
        body = self.out + self.block(s.body)
        self.loop_at = around
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
        if len(s.items) == 1 and is_region_call(s.items[0].context_expr) and s.items[0].optional_vars is None:
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


def is_region_call(node) -> bool:
    """A call ``region(<args>)`` (or ``<module>.region(...)``): the marker of a traced ``with`` block."""
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
