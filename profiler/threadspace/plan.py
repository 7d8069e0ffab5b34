"""The plan: the loops chosen as the region's thread space (marked, or the outermost independent loop on each
path, nests collapsed), from the facts of every function reachable from the root."""

from __future__ import annotations

import ast
import dataclasses
import inspect

from ..user_code import SourceUnavailable, closure_namespace, function_source, unwrap_callable
from .sinking import _sink_barrier, _sunk_name
from .source_facts import THREAD_SPACE_VERSION, FuncFacts, LoopFacts, _header, _loc, _names, _target_names, loop_key
from .verdict import Verdict, loop_verdict


@dataclasses.dataclass
class KernelLoop:
    """One loop nest chosen as thread space: ``loops`` outermost first (one loop, or a collapsed nest)."""

    func: FuncFacts
    loops: list  # LoopFacts
    how: str  # "marked" or "inferred"
    verdicts: list  # Verdict per loop of the nest
    sunk: list = dataclasses.field(default_factory=list)  # (loop key, statement) sunk from that loop's body

    @property
    def outer(self) -> LoopFacts:
        return self.loops[0]

    def to_json(self, index: int) -> dict:
        f = self.func
        red = {}
        atomics: list = []
        reasons: list = []
        private: list = []
        for v in self.verdicts:
            red.update(v.reductions)
            atomics += [a for a in v.atomics if a not in atomics]
            reasons += [r for r in v.reasons if r not in reasons]
            private += [p for p in v.private if p not in private]
        kinds = [v.kind for v in self.verdicts]
        kind = next((k for k in ("sequential", "atomic", "scan", "reduction") if k in kinds), "independent")
        return {
            "id": index, "how": self.how, "function": f.qualname,
            "location": _loc(f.file, self.outer.line), "header": _header(self.outer.node),
            "dims": len(self.loops), "nest": [_loc(f.file, lf.line) for lf in self.loops],
            "static": kind, "reductions": [f"{k} ({op})" for k, op in sorted(red.items())],
            "atomics": atomics, "reasons": reasons, "private": private, "latch_pc": 0,
            "sunk": [{"location": _loc(f.file, st.lineno), "text": ast.unparse(st)} for _, st in self.sunk],
        }


class Analysis:
    """Facts of every function reachable from a region's root, and the chosen thread space."""

    def __init__(self) -> None:
        self._facts: dict = {}
        self.kernels: list[KernelLoop] = []
        self.rejected: list[dict] = []
        self.notes: list[str] = []
        self.roles: dict = {}  # (func key, loop key) -> (kernel index, position in the nest, nest depth)
        self.kernel_funcs: set = set()  # keys of functions called from inside a kernel loop
        self.private_sites: set = set()  # (func key, line, col) of stores to arrays a kernel loop privatises
        self.root: FuncFacts | None = None
        self.how = "none"

    # -- facts --------------------------------------------------------------------------------------------------
    def facts(self, fn) -> FuncFacts | None:
        key = fn.__code__
        if key in self._facts:
            return self._facts[key]
        self._facts[key] = None  # recursion guard: a function reached while it is collected
        try:
            fdef, file = function_source(fn)
        except SourceUnavailable:
            return None
        params = list(inspect.signature(fn).parameters)
        f = FuncFacts(key, fn.__qualname__, file, fdef, closure_namespace(fn), params, self)
        self._facts[key] = f
        f.collect()
        return f

    def block_facts(self, key, qualname: str, file: str, fdef: ast.FunctionDef, namespace: dict) -> FuncFacts:
        f = FuncFacts(key, qualname, file, fdef, namespace, [a.arg for a in fdef.args.args], self)
        self._facts[key] = f
        f.collect()
        return f

    # -- choosing ---------------------------------------------------------------------------------------------------
    def plan(self, root: FuncFacts) -> "Analysis":
        self.root = root
        marked = self._find_marked(root, set())
        if marked:
            self.how = "marked"
            for f, lf in marked:
                self._add_kernel(f, lf, "marked")
        else:
            self._choose(root, root.fdef.body, set())
            self.how = "inferred" if self.kernels else "none"
        self._conflicts()
        self.private_sites = {(k.func.key,) + tuple(site) for k in self.kernels for v in k.verdicts
                              for site in v.private_sites}
        return self

    def _find_marked(self, f: FuncFacts, seen: set) -> list:
        """Outermost marked loops reachable from ``f`` at host level (not inside another marked loop)."""
        if f.key in seen:
            return []
        seen = seen | {f.key}
        out = []
        marked_keys = [k for k, lf in f.loops.items() if lf.marked]
        outer_marked = [k for k in marked_keys if not self._inside(f, k, set(marked_keys) - {k})]
        for k in sorted(outer_marked):
            out.append((f, f.loops[k]))
        covered = set(outer_marked)
        for c in f.calls:
            if any(k in covered for k in c.loops):
                continue
            out += self._find_marked(c.callee, seen)
        return out

    @staticmethod
    def _inside(f: FuncFacts, key, others: set) -> bool:
        p = f.loops[key].parent
        while p is not None:
            if p in others:
                return True
            p = f.loops[p].parent
        return False

    def _choose(self, f: FuncFacts, stmts, seen: set) -> None:
        """Host-level walk: the first independent (or reduction/atomic) loop on each path is a kernel."""
        if f.key in seen:
            return
        for s in stmts:
            if isinstance(s, (ast.For, ast.While)):
                lf = f.loops[loop_key(s)]
                v = loop_verdict(f, lf)
                if v.kind != "sequential" and isinstance(s, ast.For):
                    self._add_kernel(f, lf, "inferred", v)
                    continue
                self.rejected.append({"location": _loc(f.file, s.lineno), "function": f.qualname,
                                      "header": _header(s), "why": v.reasons[:3]})
                self._calls_in(f, s.iter if isinstance(s, ast.For) else s.test, seen)
                self._choose(f, s.body, seen)
                self._choose(f, s.orelse, seen)
                continue
            if isinstance(s, ast.If):
                self._calls_in(f, s.test, seen)
                self._choose(f, s.body, seen)
                self._choose(f, s.orelse, seen)
            elif isinstance(s, ast.With):
                for it in s.items:
                    self._calls_in(f, it.context_expr, seen)
                self._choose(f, s.body, seen)
            elif isinstance(s, ast.Try):
                self._choose(f, s.body, seen)
                for h in s.handlers:
                    self._choose(f, h.body, seen)
                self._choose(f, s.orelse, seen)
                self._choose(f, s.finalbody, seen)
            else:
                self._calls_in(f, s, seen)

    def _calls_in(self, f: FuncFacts, node, seen: set) -> None:
        if node is None:
            return
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                fn = f.callee_of(n)
                if fn is not None:
                    callee = self.facts(fn)
                    if callee is not None and callee.key not in seen:
                        self._choose(callee, callee.fdef.body, seen | {f.key})

    def _add_kernel(self, f: FuncFacts, lf: LoopFacts, how: str, verdict: Verdict | None = None) -> None:
        if any(k.func.key == f.key and k.outer.key == lf.key for k in self.kernels):
            return  # the same loop reached by another path: one kernel
        loops = [lf]
        verdicts = [verdict or loop_verdict(f, lf)]
        sunk: list = []
        while True:
            body = [
                s
                for s in loops[-1].node.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) and not isinstance(s, ast.Pass)
            ]
            if not body or not isinstance(body[-1], ast.For) or loops[-1].node.orelse:
                break
            allowed = set().union(*(_target_names(lp.node.target) for lp in loops))
            allowed |= {_sunk_name(st) for _, st in sunk}
            lead = []
            for st in body[:-1]:  # an imperfect nest: statements between the headers, sunk into the inner loop
                if _sink_barrier(f, loops, st, allowed) is not None:
                    break
                lead.append(st)
                allowed.add(_sunk_name(st))
            if len(lead) != len(body) - 1:
                break
            if allowed & _names(body[-1].iter):
                break  # not rectangular (a grid-stride loop ``range(gid, n, total)``, or a bound computed between
                # the headers): the inner loop is the thread's
            inner = f.loops[loop_key(body[-1])]
            v = loop_verdict(f, inner)
            if v.kind == "sequential" or (lead and v.kind != "independent"):
                break  # an imperfect nest collapses into an inner loop without dependences only (the sunk
                # statements' row of a reduction or atomic update stays in one thread, as written)
            sunk += [(loops[-1].key, st) for st in lead]
            loops.append(inner)
            verdicts.append(v)
        k = len(self.kernels)
        self.kernels.append(KernelLoop(f, loops, how, verdicts, sunk))
        for pos, lp in enumerate(loops):
            self.roles[(f.key, lp.key)] = (k, pos, len(loops))

    def _conflicts(self) -> None:
        """Functions called from inside a kernel loop run inside its threads: their own kernel loops (a
        function also called from the host) are serialised inside the thread."""
        reach: set = set()
        stack = []
        for k in self.kernels:
            f = k.func
            for c in f.calls:
                if k.outer.key in c.loops:
                    stack.append(c.callee)
        while stack:
            g = stack.pop()
            if g.key in reach:
                continue
            reach.add(g.key)
            stack.extend(c.callee for c in g.calls)
        self.kernel_funcs = reach
        keep = []
        for k in self.kernels:
            if k.func.key in reach:
                self.notes.append(f"{_loc(k.func.file, k.outer.line)}: {k.func.qualname} is also called from inside "
                                  "another thread loop, so its loop runs inside that loop's threads (nested "
                                  "parallelism is not a second thread space)")
                continue
            keep.append(k)
        if len(keep) != len(self.kernels):
            self.kernels = keep
            self.roles = {}
            for i, k in enumerate(self.kernels):
                for pos, lp in enumerate(k.loops):
                    self.roles[(k.func.key, lp.key)] = (i, pos, len(k.loops))
            if not self.kernels:
                self.how = "none"

    # -- queries used by the rewriter -------------------------------------------------------------------------------
    def role(self, func_key, node) -> tuple[int, int, int] | None:
        """(kernel index, position in its nest, nest depth) of a loop statement, or None (not a thread loop)."""
        return self.roles.get((func_key, loop_key(node)))

    def sunk_of(self, func_key, node) -> set:
        """Keys (:func:`loop_key`) of the statements of loop ``node``'s body that are sunk into the inner loop
        of its collapsed nest (an imperfect nest); empty for any other loop."""
        key = loop_key(node)
        return {loop_key(st) for k in self.kernels if k.func.key == func_key for lk, st in k.sunk if lk == key}

    def is_private_store(self, func_key, node) -> bool:
        """Whether a subscript store target writes an array a kernel loop privatises: the dependence check on the
        trace counts no write-after-write or write-after-read between threads at it."""
        return (func_key, int(node.lineno), int(node.col_offset)) in self.private_sites

    def reductions_of(self, index: int) -> dict:
        out = {}
        for v in self.kernels[index].verdicts:
            out.update(v.reductions)
        return out

    def to_json(self) -> dict:
        """The ``thread_space`` entry of the region metadata (latch pcs, tokens and pcs added by the rewriter)."""
        return {
            "version": THREAD_SPACE_VERSION, "how": self.how,
            "loops": [k.to_json(i) for i, k in enumerate(self.kernels)],
            "rejected": self.rejected, "notes": self.notes,
        }


def analyse_function(fn) -> Analysis:
    """The thread space of a region whose root is the function ``fn``."""
    a = Analysis()
    f = a.facts(unwrap_callable(fn))
    if f is None:
        return a
    return a.plan(f)


def analyse_block(key, qualname: str, file: str, fdef: ast.FunctionDef, namespace: dict) -> Analysis:
    """The thread space of a marked block (made into the synthetic function ``fdef``)."""
    a = Analysis()
    return a.plan(a.block_facts(key, qualname, file, fdef, namespace))
