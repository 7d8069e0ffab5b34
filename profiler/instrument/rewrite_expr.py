"""The rewriter's expressions: each Python operation becomes one statement and its record."""

from __future__ import annotations

import ast
import inspect

import numpy as np

from core.trace_schema import Op, fp64_class

from .. import libcalls as lc
from .. import runtime as rt
from ..user_code import is_user_function, unwrap_callable
from .tables import _ALU_NAMES, _BINOPS, _CMPOPS, _KIND_ABS, _KIND_CONJ, _KIND_PART, _KIND_REALFN, _SPECIAL_NAMES
from .unsupported import UnsupportedConstruct


class _Expressions:
    """Rewriting of expressions (mixed into :class:`profiler.instrument.rewriter._Rewriter`)."""

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
            if lc.canonical_name(obj) in ("np.empty", "np.empty_like"):
                return self.lib_call(node, target, dst, "call:alloc", Op.OTHER, Op.OTHER, alloc=True)
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

    def lib_call(self, node, target, dst, kind, oi, of, opaque_func=False, alloc=False):
        if opaque_func:
            func, ft = self.expr(node.func) if not isinstance(node.func, ast.Attribute) else self._method(node.func)
        else:
            func, ft = ast.unparse(node.func), 0
        args, toks = self._args(node)
        out, d = self._dest(target, dst)
        pc = self.pc(node, kind, toks + [ft], d)
        self.emit(f"{out} = {func}({', '.join(args)})")
        if alloc:  # np.empty: the record says where the new array is (docs/profiler.md, "Lifetimes")
            self.prog.alloc_pcs.append(pc)
            self.emit(self.be.rec_alloc(pc, out))
        elif oi == of == fp64_class(of):
            self.emit(self.be.rec(pc, oi))
        else:
            probes = [out] + [a for a in args[:1] if "=" not in a and not a.startswith("*")]
            self.emit(self.rtyped(pc, oi, of, probes, result=True))
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
