"""Privatisation: arrays made outside a loop that every iteration writes before it reads (per-thread
buffers on a GPU), found by the write coverage of each iteration."""

from __future__ import annotations

import ast

from .scalars import _own_nodes, _runs_at_least_once
from .source_facts import _CONSTRUCTORS, FuncFacts, LoopFacts, _names, _subscript_base, _target_names

_ALL = ("all",)


def _affine(e) -> tuple[str, int]:
    """``e`` as (base text, constant offset): ``n1 - 1`` -> ("n1", -1), ``3`` -> ("", 3), ``2 * j`` -> ("2 * j", 0)."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return "", e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) \
            and type(e.operand.value) is int:
        return "", -e.operand.value
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        sign = 1 if isinstance(e.op, ast.Add) else -1
        if isinstance(e.right, ast.Constant) and type(e.right.value) is int:
            b, o = _affine(e.left)
            return b, o + sign * e.right.value
        if sign == 1 and isinstance(e.left, ast.Constant) and type(e.left.value) is int:
            b, o = _affine(e.right)
            return b, o + e.left.value
    return ast.unparse(e), 0


def _le(a: tuple, b: tuple) -> bool:
    """``a <= b`` for every value of the names: the same base, a smaller or equal offset."""
    return a[0] == b[0] and a[1] <= b[1]


def _range_bounds(it) -> tuple | None:
    """(start, stop) nodes of ``range(stop)`` / ``range(start, stop)`` / ``range(start, stop, 1)``, else None."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("range", "prange")
            and not it.keywords and 1 <= len(it.args) <= 3):
        return None
    if len(it.args) == 3 and not (isinstance(it.args[2], ast.Constant) and it.args[2].value == 1):
        return None
    if len(it.args) == 1:
        return ast.Constant(0), it.args[0]
    return it.args[0], it.args[1]


class _Coverage:
    """Which arrays of ``names`` every iteration of a loop writes before it reads (docs/profiler.md,
    "Privatisation"). The body is walked in order keeping, per array, the regions written so far in the
    iteration. A region has one component per index: a point ``(base, offset)`` (an expression, or the variable
    of a ``range`` loop inside the iteration while that loop runs: the element of its current iteration), an
    interval ``[lo, hi)`` of such bounds (what a ``for v in range(lo, hi)`` wrote at ``v + c`` once it ended),
    or the whole dimension (``b[:]``, and the dimensions after the last index). What a branch, a ``while``, a
    ``try`` or a loop that is no plain ``range`` (or may ``break`` / ``continue``) writes covers only the later
    loads of that block. A load must lie in one region written before it. Every expression a comparison relies
    on must keep its value through the iteration: no name in it assigned in the loop, no element read but
    ``.shape[...]``, no call but ``len()``. Anything else (an index that cannot be compared, the array passed or
    aliased as a whole) fails the array: the analysis stays conservative."""

    def __init__(self, loop, names: set) -> None:
        self.names = set(names)
        self.failed: dict = {}  # name -> (kind, line, text): "read" (a load not surely written before it) or "use"
        self.stores: dict = {}  # name -> [(line, col, text)] of its subscript stores in the loop
        self.loaded: set = set()
        self.assigned = set()  # names assigned in the loop body, loop variables of inner loops apart
        self.loop_vars = set()  # those: stable only inside their loop
        for n in ast.walk(ast.Module(body=list(loop.body), type_ignores=[])):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                tgts = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in tgts:
                    self.assigned |= _target_names(t)
            elif isinstance(n, ast.For) and isinstance(n.target, ast.Name) and _range_bounds(n.iter):
                self.loop_vars.add(n.target.id)
            elif isinstance(n, (ast.For, ast.comprehension)):
                self.assigned |= _target_names(n.target)
        self.assigned |= _shadowed(loop.body, _target_names(loop.target))
        self.env: list = []  # (variable, lo, hi) of the plain range loops entered inside the iteration
        self.regions: dict = {name: [] for name in names}
        self.conditional: set = set()  # arrays stored under a branch (or in a loop that may not run through)
        self.depth = 0
        self.walk(loop.body)

    # -- expressions ------------------------------------------------------------------------------------------
    def stable(self, node) -> bool:
        """The expression keeps its value through the iteration, or through the inner loops it is inside of."""
        live = {v for v, _, _ in self.env}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and (n.id in self.assigned or (n.id in self.loop_vars and n.id not in live)):
                return False
            if isinstance(n, ast.Subscript) and not (isinstance(n.value, ast.Attribute) and n.value.attr == "shape"):
                return False
            if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id == "len"):
                return False
        return True

    def loop_var(self, base: str):
        for v, lo, hi in reversed(self.env):
            if v == base:
                return lo, hi
        return None

    def component(self, node):
        """One index as a region component, or None when it cannot be compared."""
        if isinstance(node, ast.Slice):
            if node.lower is None and node.upper is None and node.step is None:
                return _ALL
            if node.step is None and node.lower is not None and node.upper is not None \
                    and self.stable(node.lower) and self.stable(node.upper):
                return ("iv", _affine(node.lower), _affine(node.upper))
            return None
        if not self.stable(node):
            return None
        return ("pt",) + _affine(node)

    def components(self, idx: list):
        out = []
        for i in idx:
            for e in (i.elts if isinstance(i, ast.Tuple) else [i]):
                c = self.component(e)
                if c is None:
                    return None
                out.append(c)
        return out

    def inside(self, load, store) -> bool:
        """The load component lies in the store component (both as seen at the load)."""
        if store == _ALL:
            return True
        if load == _ALL:
            return False
        if load[0] == "pt":
            if store[0] == "pt":
                return load == store
            lv = self.loop_var(load[1])
            if lv is not None:  # every value of the variable, shifted
                lo, hi = lv
                load = ("iv", (lo[0], lo[1] + load[2]), (hi[0], hi[1] + load[2]))
            else:
                load = ("iv", load[1:], (load[1], load[2] + 1))
        if store[0] != "iv":
            return False
        return _le(store[1], load[1]) and _le(load[2], store[2])

    def covered(self, name: str, comps: list) -> bool:
        for region in self.regions[name]:
            n = max(len(region), len(comps))
            r = list(region) + [_ALL] * (n - len(region))
            c = list(comps) + [_ALL] * (n - len(comps))
            if all(self.inside(a, b) for a, b in zip(c, r)):
                return True
        return False

    # -- statements -------------------------------------------------------------------------------------------
    def reads(self, node) -> None:
        """Loads of the arrays in an expression; a name of one used otherwise (passed, aliased) fails it."""
        if node is None:
            return
        if isinstance(node, ast.Subscript):
            base, idx = _subscript_base(node)
            for i in idx:
                self.reads(i)
            if base is None:
                v = node
                while isinstance(v, ast.Subscript):
                    v = v.value
                self.reads(v)
            elif base in self.names and isinstance(node.ctx, ast.Load):
                self.load(base, idx, node)
            return
        if isinstance(node, ast.Name):
            if node.id in self.names:
                self.fail(node.id, "use", node.lineno, node.id)
            return
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "size", "ndim", "dtype") \
                and isinstance(node.value, ast.Name):
            return  # the array's shape, not its elements
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
                and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
            return
        for child in ast.iter_child_nodes(node):
            self.reads(child)

    def load(self, name: str, idx: list, node) -> None:
        self.loaded.add(name)
        comps = self.components(idx)
        if comps is None or not self.covered(name, comps):
            self.fail(name, "read", node.lineno, ast.unparse(node))

    def fail(self, name: str, kind: str, line: int, text: str) -> None:
        self.failed.setdefault(name, (kind, line, text))

    def store(self, tgt, aug: bool) -> None:
        base, idx = _subscript_base(tgt)
        for i in idx:
            self.reads(i)
        if base not in self.names:
            return
        self.stores.setdefault(base, []).append((tgt.lineno, tgt.col_offset, ast.unparse(tgt)))
        if aug:
            self.load(base, idx, tgt)
        comps = self.components(idx)
        if comps is None:
            self.fail(base, "store", tgt.lineno, ast.unparse(tgt))
            return
        if self.depth:
            self.conditional.add(base)
        self.regions[base].append(comps)

    def targets(self, tgt, aug: bool) -> None:
        if isinstance(tgt, (ast.Tuple, ast.List)):
            for e in tgt.elts:
                self.targets(e.value if isinstance(e, ast.Starred) else e, aug)
        elif isinstance(tgt, ast.Subscript):
            self.store(tgt, aug)
        elif isinstance(tgt, ast.Attribute):
            self.reads(tgt.value)
        elif isinstance(tgt, ast.Name) and tgt.id in self.names:
            self.fail(tgt.id, "use", tgt.lineno, tgt.id)

    def walk(self, stmts) -> None:
        for s in stmts:
            if isinstance(s, ast.Assign):
                self.reads(s.value)
                for t in s.targets:
                    self.targets(t, False)
            elif isinstance(s, ast.AugAssign):
                self.reads(s.value)
                self.targets(s.target, True)
            elif isinstance(s, ast.AnnAssign):
                self.reads(s.value)
                if s.value is not None:
                    self.targets(s.target, False)
            elif isinstance(s, ast.For):
                self.reads(s.iter)
                self.inner_loop(s)
            elif isinstance(s, (ast.If, ast.While)):
                self.reads(s.test)
                self.scoped(s.body)
                self.scoped(s.orelse)
            elif isinstance(s, ast.With):
                for it in s.items:
                    self.reads(it.context_expr)
                self.walk(s.body)
            elif isinstance(s, ast.Try):
                for body in [s.body, s.orelse, s.finalbody] + [h.body for h in s.handlers]:
                    self.scoped(body)
            else:
                for child in ast.iter_child_nodes(s):
                    self.reads(child)

    def scoped(self, stmts) -> None:
        """A block that may not run, or not run through (a branch, an iteration of a loop that is no plain
        ``range``): what it writes covers its own later loads only."""
        saved = {k: list(v) for k, v in self.regions.items()}
        self.depth += 1
        self.walk(stmts)
        self.depth -= 1
        self.regions = saved

    def inner_loop(self, s: ast.For) -> None:
        """A loop inside the iteration: a plain ``range`` loop with bounds that keep their value leaves, per
        store of its body at ``v + c``, the interval ``[lo + c, hi + c)``; any other loop (or one that may
        ``break`` / ``continue``) leaves nothing, and what its body writes covers that body's own later loads."""
        bounds = _range_bounds(s.iter)
        if bounds is None or not isinstance(s.target, ast.Name) or self.loop_var(s.target.id) is not None \
                or not all(self.stable(b) for b in bounds):
            self.scoped(s.body)
            self.scoped(s.orelse)
            return
        var = s.target.id
        lo, hi = _affine(bounds[0]), _affine(bounds[1])
        self.env.append((var, lo, hi))
        if s.orelse or any(isinstance(n, (ast.Break, ast.Continue)) for n in _own_nodes(s.body)):
            self.scoped(s.body)
            self.env.pop()
            self.scoped(s.orelse)
            return
        before = {k: len(v) for k, v in self.regions.items()}
        self.walk(s.body)
        self.env.pop()
        once = _runs_at_least_once(s.iter)
        for name, regions in self.regions.items():
            kept = regions[:before[name]]
            for region in regions[before[name]:]:  # written in the body: what the whole loop wrote
                out = []
                uses = 0
                for c in region:
                    if c[0] == "pt" and c[1] == var:
                        out.append(("iv", (lo[0], lo[1] + c[2]), (hi[0], hi[1] + c[2])))
                        uses += 1
                        continue
                    texts = [c[1]] if c[0] == "pt" else [c[1][0], c[2][0]] if c[0] == "iv" else []
                    if any(var in _names(ast.parse(t or "0", mode="eval")) for t in texts):
                        uses = -1  # the variable inside an expression: no rectangle
                        break
                    out.append(c)
                if uses > 1 or uses < 0 or (uses == 0 and not once):
                    continue
                kept.append(out)
            self.regions[name] = kept


def _shadowed(stmts, outer: set) -> set:
    """Variables a loop nested in ``stmts`` rebinds while a loop around it (``outer``: their variables) runs:
    their value changes in the middle of the outer loop's iteration."""
    out = set()
    for s in stmts:
        if isinstance(s, ast.For):
            mine = _target_names(s.target)
            out |= mine & outer
            out |= _shadowed(s.body, outer | mine) | _shadowed(s.orelse, outer)
        elif isinstance(s, (ast.If, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                out |= _shadowed(getattr(s, field, []) or [], outer)
            for h in getattr(s, "handlers", []) or []:
                out |= _shadowed(h.body, outer)
    return out


def _privatised(f: "FuncFacts", lf: "LoopFacts", effects: list, taint: set) -> tuple[dict, dict]:
    """Arrays the loop privatises, and why others that would be failed: ({name: (first store line, sites,
    last value or "")}, {name: (kind, line, text)}). A candidate is an array the loop stores only at elements
    that do not depend on its variable, directly in its function (no called function touches it), and also
    reads; a local made by a constructor (``np.empty(n)``), a parameter or a global, not rebound."""
    aliased = set()  # arrays another name may view: named in an assigned value other than by their shape
    for vals in f.assign_values.values():
        for v in vals:
            aliased |= _array_mentions(v)
    by_name: dict = {}
    for e in effects:
        by_name.setdefault(e.name, []).append(e)
    cands = set()
    for name, es in by_name.items():
        if not any(e.kind == "store" for e in es) or not any(e.kind == "load" for e in es):
            continue
        if any(e.key[0] != f.qualname or len(e.key) != 3 or e.key[1] != name for e in es):
            continue  # a called function reads or writes it
        if any(f.depends_on(set(e.every), taint) or f.depends_on({name}, taint) for e in es if e.kind == "store"):
            continue  # (partly) indexed by the iteration: not one buffer for all of them
        vals = f.assign_values.get(name, [])
        if name in f.params and vals:
            continue
        if any(not (isinstance(v, ast.Call) and _call_name(v) in _CONSTRUCTORS) for v in vals):
            continue  # a view of another array, or made from one
        if name in aliased:
            continue  # another name views it
        cands.add(name)
    if not cands:
        return {}, {}
    cov = _Coverage(lf.node, cands)
    inside = {id(n) for n in ast.walk(lf.node)}
    private = {}
    for name in sorted(cands):
        if name in cov.failed or name not in cov.stores or name not in cov.loaded:
            continue
        last = ""
        if name in f.params:
            last = "a parameter: the caller sees it"
        elif name not in f.locals:
            last = "a global: the caller sees it"
        else:
            after = [n.lineno for n in ast.walk(f.fdef) if isinstance(n, ast.Name) and n.id == name
                     and isinstance(n.ctx, ast.Load) and id(n) not in inside]
            if after:
                last = f"read outside the loop at line {min(after)}"
        if last and name in cov.conditional:
            continue  # its last value would be that of the last iteration that took the branch
        sites = [(line, col) for line, col, _ in cov.stores[name]]
        private[name] = (min(line for line, _ in sites), sites, last)
    return private, {k: v for k, v in cov.failed.items() if k in cands}


def _array_mentions(node, whole: bool = True) -> set:
    """Names an assigned value may view or pass on as arrays: a name used bare (``b = a``, ``np.asarray(a)``,
    ``a + 1``), or the array a whole value picks a part of (``row = a[i]``, ``a[i].T``); not an element read
    inside an expression (``s + a[i]``), nor ``.shape``, ``.size``, ``.ndim``, ``.dtype`` or ``len()``."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Subscript):
        out = _array_mentions(node.slice, False)
        return out | (_array_mentions(node.value, whole) if whole or not isinstance(node.value, ast.Name) else set())
    if isinstance(node, ast.Attribute):
        return set() if node.attr in ("shape", "size", "ndim", "dtype") else _array_mentions(node.value, whole)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return set()
    out = set()
    for child in ast.iter_child_nodes(node):
        out |= _array_mentions(child, False)
    return out


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
