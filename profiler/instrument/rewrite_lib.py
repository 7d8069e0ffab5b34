"""The rewriter's library calls: NumPy operations expanded into the records of the loops they run
(docs/profiler.md, "Library calls"; the plans and run-time counters are in profiler/libcalls.py)."""

from __future__ import annotations

import ast
import builtins

import numpy as np

from core.trace_schema import Op, fp64_class

from .. import libcalls as lc
from .. import markers as _markers
from .. import runtime as rt
from .tables import _CMPOPS, _SPECIAL_NAMES


class _LibraryCalls:
    """Library calls: NumPy operations traced as the element loops they perform (profiler/libcalls.py), mixed
    into :class:`profiler.instrument.rewriter._Rewriter`. Inside the thread space (``in_thread_space``) an
    expansion runs in the current logical thread; elsewhere each element of its outer iteration space is a
    thread of its own launch."""

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
        self._lib_first = len(self.prog._src)  # the site's first own static id (its element loop's body starts there)
        return P, site, call

    def _lib_pc(self, node, call, kind, part, srcs=(), dst=0) -> int:
        self._lib_n += 1
        return self.pc(node, f"lib:{kind}", srcs, dst, text=f"{call}: {part}")

    def _lib_plan(self, P) -> str:
        P.setflags(write=False)
        name = f"_pc_P{len(self.prog.lib_slots)}"
        self.ns[name] = P
        return name

    def _lib_loop(self, node, call, P, ind, what, nslot=lc.P_NEXT, bslot=lc.P_BRANCH, first=None) -> int:
        """The induction and BRANCH that end each iteration of an element loop whose body is the site's static
        ids from ``first`` (default: the site's first) on; a loop of the loop table, except inside a loop's test
        (whose records are all that loop's control)."""
        npc = self._lib_pc(node, call, "next", f"next {what}", [ind], ind)
        bpc = self._lib_pc(node, call, "branch", f"loop over {what}" + ("" if what == "k" else "s"), [ind])
        if not self.ctl_of:
            self.prog.wrap_loop(self._lib_first if first is None else first, [npc, bpc], self.loop_at)
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

    def _expand_map(self, node, kind, name, d, ops, cls, byops, scalar_pc, opname, has_op=True, fill_tok=0,
                    fresh=False):
        """Plan of an elementwise site: ``ops`` = [(node, source, register)] of the operands, ``d`` the result's
        register. Per element: LOAD of each array operand, the operation (``cls`` = its (int, float) class, a
        double-precision operation taking the float class's FP64 class at run time; ``byops``: the operands'
        types decide, not the result's), STORE, induction and BRANCH. ``fresh``: the result is a new array
        (not an operand, an ``out=`` or a view), so its STORE is an allocation record (``prog.alloc_pcs``)."""
        P, site, call = self._lib_new(node, kind, name, lc.MAP_LEN)
        op_scalar = cls if has_op else (Op.OTHER, Op.OTHER)
        P[lc.P_SCALAR_I] = rt.code_of(scalar_pc, op_scalar[0])
        P[lc.P_SCALAR_F] = rt.code_of(scalar_pc, op_scalar[1])
        P[lc.M_SCALAR_D] = rt.code_of(scalar_pc, fp64_class(op_scalar[1]))
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
                self._fresh(fresh, spc)
        else:
            for m in masks:
                v = (loads[0] if m & 1 else ops[0][2]) if ops else fill_tok
                spc = self._lib_pc(node, call, "store", "store", [v, ind, d])
                P[lc.M_STORE + m] = rt.code_of(spc, Op.STORE)
                self._fresh(fresh, spc)
        site["latch_pc"] = self._lib_loop(node, call, P, ind, "element")
        return self._lib_plan(P)

    def _fresh(self, fresh, spc) -> None:
        """Note the STORE ``spc`` as an allocation record when it writes a new result (``fresh``)."""
        if fresh:
            self.prog.alloc_pcs.append(spc)

    def _expand_acc(self, node, kind, name, d, ops, cls, byops, scalar_pc, mean=False):
        """Plan of an accumulating site (kind reduce, matmul, vdot or scan): ``ops`` = [(node, source,
        register)] of the operands (two for matmul/vdot, whose elements are multiplied before accumulating).
        Its result is always a new array (no ``out=``): its STOREs are allocation records."""
        P, site, call = self._lib_new(node, "matmul" if kind == "vdot" else kind, name, lc.ACC_LEN)
        P[lc.P_SCALAR_I] = P[lc.P_SCALAR_F] = rt.code_of(scalar_pc, Op.OTHER)
        P[lc.P_BYOPS] = int(byops)
        ii, io, acc = self._xtok(), self._xtok(), self._xtok()
        P[lc.A_INIT] = rt.code_of(self._lib_pc(node, call, "init", "set up the accumulator", [], acc), Op.MOVE)
        inner = len(self.prog._src)  # the inner loop's body: loads, operation, accumulation (scan: store)
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
            spc = self._lib_pc(node, call, "store", "store", [acc, ii, d])
            P[lc.A_SCAN_STORE] = rt.code_of(spc, Op.STORE)
            self._fresh(True, spc)
        what = "k" if len(ops) == 2 else "element"
        site["latch_pc"] = self._lib_loop(node, call, P, ii, what, lc.A_INEXT, lc.A_IBRANCH, first=inner)
        if mean:
            P[lc.A_FIN] = rt.code_of(self._lib_pc(node, call, "op", "divide by the count", [acc], acc), Op.FP_DIV)
        if kind in ("reduce", "matmul"):
            spc = self._lib_pc(node, call, "store", "store", [acc, io, d])
            P[lc.P_STORE] = rt.code_of(spc, Op.STORE)
            self._fresh(True, spc)
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
            plan = self._expand_map(node, "map", sym, d, ops, (oi, of), False, pc, sym, fresh=True)
            self._lib_emit_typed(plan, res, [lhs, r], pc, oi, of, [res])
        if res != out:
            self.emit(f"{out} = {res}")
        return out, d

    def _expand_unary(self, node, sym, v, vt, out, d, pc):
        if not self._maybe_array(node.operand):
            return None
        res = self._capture(out, (v,))
        self.emit(f"{res} = {sym}{v}")
        plan = self._expand_map(node, "map", sym, d, [(node.operand, v, vt)], (Op.INT_ALU, Op.FP_ALU), False, pc, sym,
                                fresh=True)
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
                                (Op.INT_ALU, Op.FP_ALU), True, pc, sym, fresh=True)
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
                plan = self._expand_map(node, "map", name, d, ops, cls, byops, pc, short, fresh="out" not in keys)
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
                                        has_op=False, fresh=True)
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
                                        has_op=False, fill_tok=fill, fresh=True)
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
        spc = self._lib_pc(node, call, "store", "store", [lx, ind, d])
        P[lc.P_STORE] = rt.code_of(spc, Op.STORE)
        lm, lmx, km = self._xtok(), self._xtok(), self._xtok()
        P[lc.G_MLOAD] = rt.code_of(self._lib_pc(node, call, "load", "load mask", [ind, itok], lm), Op.LOAD)
        P[lc.G_MBRANCH] = rt.code_of(self._lib_pc(node, call, "branch", "selected?", [lm]), Op.BRANCH)
        P[lc.G_MLOAD_X] = rt.code_of(self._lib_pc(node, call, "load", "load selected element", [ind, bt], lmx),
                                     Op.LOAD)
        mpc = self._lib_pc(node, call, "store", "store selected", [lmx, km, d])
        P[lc.G_MSTORE] = rt.code_of(mpc, Op.STORE)
        self.prog.alloc_pcs += [spc, mpc]  # the result of x[idx] is always a new array
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
        of the element given the iteration index, static id of the element's record) or None. A 1-D array's
        element is a LOAD per iteration (into ``v``'s register), a row of a 2-D array a view (OTHER), a list
        element a LOAD at its synthetic address; other iterables record nothing."""
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
        return (f"enumerate({hold})" if enum else hold), ind, (lambda i: self.be.lib_iter(code, hold, i)), pc
