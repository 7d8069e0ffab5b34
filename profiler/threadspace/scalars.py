"""Scalars a loop carries from one iteration to the next: which locals an iteration reads before it assigns
them, and which of those are reductions, scans or append counters; arrays private to an iteration."""

from __future__ import annotations

import ast

from .source_facts import _COMMUTATIVE, _CONSTRUCTORS, _MINMAX, _RED_BINOPS, _names, _target_names


def _own_nodes(stmts):
    """Nodes of a loop body that belong to the loop itself (not to loops nested in it)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.For, ast.While)):
            continue
        stack.extend(ast.iter_child_nodes(n))


def _exposed(stmts, defined: set, local: set, exposed: dict, assigned: dict) -> set:
    """Walk ``stmts`` in order: record locals read before they are surely assigned (``exposed``: name ->
    line) and every local assigned (``assigned``: name -> line); returns the names surely assigned after."""
    return _ExposedWalk(local, exposed, assigned).block(stmts, defined)


class _ExposedWalk:
    """The walk of :func:`_exposed`: ``local`` the function's locals, ``exposed`` and ``assigned`` filled in."""

    def __init__(self, local: set, exposed: dict, assigned: dict) -> None:
        self.local = local
        self.exposed = exposed
        self.assigned = assigned

    def block(self, stmts, defined: set) -> set:
        """Walk ``stmts`` with ``defined`` surely assigned before them; the names surely assigned after."""
        d = set(defined)
        for s in stmts:
            line = getattr(s, "lineno", 0)
            if isinstance(s, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                d = self.compound(s, d, line)
            else:
                self.simple(s, d, line)
        return d

    def reads(self, node, d: set, line) -> None:
        """Locals ``node`` reads (but a comprehension's targets) not surely assigned yet are exposed."""
        if node is None:
            return
        comp_targets = set()
        for n in ast.walk(node):
            if isinstance(n, ast.comprehension):
                comp_targets |= _target_names(n.target)
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in self.local and n.id not in d \
                    and n.id not in comp_targets:
                self.exposed.setdefault(n.id, line)

    def assign(self, tgt, d: set, line) -> None:
        """The names of target ``tgt`` are assigned (added to ``d``); a subscript's or attribute's reads count."""
        for name in _target_names(tgt):
            self.assigned.setdefault(name, line)
            d.add(name)
        for n in ast.walk(tgt):  # names read by a subscript or attribute target
            if isinstance(n, (ast.Subscript, ast.Attribute)):
                for m in ast.walk(n):
                    if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load) and m.id in self.local \
                            and m.id not in d:
                        self.exposed.setdefault(m.id, line)

    def simple(self, s, d: set, line) -> None:
        """A statement without a body: its reads, then its assignments (added to ``d`` in place)."""
        if isinstance(s, ast.Assign):
            self.reads(s.value, d, line)
            for t in s.targets:
                self.assign(t, d, line)
        elif isinstance(s, ast.AugAssign):
            self.reads(s.value, d, line)
            if isinstance(s.target, ast.Name):
                if s.target.id in self.local and s.target.id not in d:
                    self.exposed.setdefault(s.target.id, line)
                self.assigned.setdefault(s.target.id, line)
                d.add(s.target.id)
            else:
                self.assign(s.target, d, line)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.reads(s.value, d, line)
                self.assign(s.target, d, line)
        elif isinstance(s, (ast.Expr, ast.Return)):
            self.reads(s.value, d, line)
        elif isinstance(s, ast.Assert):
            self.reads(s.test, d, line)

    def compound(self, s, d: set, line) -> set:
        """A statement with bodies (if, for, while, with, try): the names surely assigned after it."""
        if isinstance(s, ast.If):
            self.reads(s.test, d, line)
            return self.block(s.body, d) & self.block(s.orelse, d)
        if isinstance(s, ast.For):
            self.reads(s.iter, d, line)
            inner = set(d)
            for name in _target_names(s.target):
                self.assigned.setdefault(name, line)
                inner.add(name)
            after = self.block(s.body, inner)
            self.block(s.orelse, d)
            if _runs_at_least_once(s.iter):
                d |= after
            return d
        if isinstance(s, ast.While):
            self.reads(s.test, d, line)
            self.block(s.body, d)
            self.block(s.orelse, d)
            return d
        if isinstance(s, ast.With):
            for it in s.items:
                self.reads(it.context_expr, d, line)
            return self.block(s.body, d)
        self.block(s.body, d)  # try
        for h in s.handlers:
            self.block(h.body, d)
        self.block(s.orelse, d)
        return self.block(s.finalbody, d)


def _runs_at_least_once(it) -> bool:
    """``range(K)`` / ``range(a, b)`` with literal bounds that give at least one iteration."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("range", "prange")
            and not it.keywords and 1 <= len(it.args) <= 2):
        return False
    vals = [a.value for a in it.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
    if len(vals) != len(it.args):
        return False
    lo, hi = (0, vals[0]) if len(vals) == 1 else (vals[0], vals[1])
    return hi > lo


def _is_name(node, name) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _reduction_op(stmt, v: str) -> str | None:
    """The operator of a reduction statement on ``v`` (``s += e``, ``s = s + e``, ``s = max(s, e)``), else None."""
    if isinstance(stmt, ast.AugAssign) and _is_name(stmt.target, v):
        op = _RED_BINOPS.get(type(stmt.op))
        if op and v not in _names(stmt.value):
            return op
        return None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _is_name(stmt.targets[0], v):
        val = stmt.value
        if isinstance(val, ast.BinOp):
            op = _RED_BINOPS.get(type(val.op))
            if op is None:
                return None
            if _is_name(val.left, v) and v not in _names(val.right):
                return op
            if isinstance(val.op, _COMMUTATIVE) and _is_name(val.right, v) and v not in _names(val.left):
                return op
            return None
        if isinstance(val, ast.Call) and len(val.args) == 2 and not val.keywords:
            f = val.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            op = _MINMAX.get(fname)
            if op is None:
                return None
            a, b = val.args
            if (_is_name(a, v) and v not in _names(b)) or (_is_name(b, v) and v not in _names(a)):
                return op
    return None


def _conditional_update(stmt, v: str) -> bool:
    """``if e < v: v = e2; idx = k`` (any of < <= > >=, either side): a min/max reduction with companions."""
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return False
    t = stmt.test
    if not (
        isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))
    ):
        return False
    left, right = t.left, t.comparators[0]
    if not ((_is_name(left, v) and v not in _names(right)) or (_is_name(right, v) and v not in _names(left))):
        return False
    if not stmt.body:
        return False
    for s in stmt.body:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            return False
        if v in _names(s.value):
            return False
    return any(_is_name(s.targets[0], v) for s in stmt.body)


def _reduction_of(body, v: str) -> str | None:
    """The operator when every use of ``v`` in ``body`` is a reduction statement, else None."""
    ops = set()
    uses_ok = True

    def visit(stmts):
        nonlocal uses_ok
        for s in stmts:
            if not uses_ok:
                return
            op = _reduction_op(s, v)
            if op is not None:
                ops.add(op)
                continue
            if _conditional_update(s, v):
                ops.add("min/max")
                continue
            if isinstance(s, (ast.For, ast.While)):
                head = s.iter if isinstance(s, ast.For) else s.test
                if v in _names(head) or (isinstance(s, ast.For) and v in _names(s.target)):
                    uses_ok = False
                    return
                visit(s.body)
                visit(s.orelse)
                continue
            if isinstance(s, ast.If):
                if v in _names(s.test):
                    uses_ok = False
                    return
                visit(s.body)
                visit(s.orelse)
                continue
            if isinstance(s, (ast.With, ast.Try)):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(s, field, []) or [])
                for h in getattr(s, "handlers", []) or []:
                    visit(h.body)
                continue
            if v in _names(s):
                uses_ok = False
                return

    visit(body)
    if not uses_ok or not ops:
        return None
    if len(ops) == 1:
        return ops.pop()
    if ops <= {"min", "max", "min/max"}:
        return "min/max"
    return None


def _scan_of(body, v: str) -> str | None:
    """``acc += x[i]; out[i] = acc``: every assignment of ``v`` is a reduction statement and the running value
    is also read (a prefix sum; a GPU computes it with a parallel scan). Returns e.g. "+ scan", else None."""
    ops = set()
    for n in ast.walk(ast.Module(body=list(body), type_ignores=[])):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(v in _target_names(t) for t in targets):
                op = _reduction_op(n, v)
                if op is None or op == "min/max":
                    return None
                ops.add(op)
        elif isinstance(n, ast.For) and v in _target_names(n.target):
            return None
    if len(ops) != 1:
        return None
    return f"{ops.pop()} scan"


def _append_counter(body, v: str) -> bool:
    """``buf[v] = e; v += 1``: every assignment of ``v`` in ``body`` adds a positive integer constant and every
    other use of ``v`` is the whole index of a store ``buf[v] = ...``. The iterations append entries through a
    counter: a GPU thread takes its slot with an atomic add (the entries' order may differ from the loop's)."""
    tree = ast.Module(body=list(body), type_ignores=[])
    allowed: set = set()
    increments = 0
    for n in ast.walk(tree):
        if isinstance(n, ast.AugAssign) and _is_name(n.target, v):
            step = n.value
            if not (isinstance(n.op, ast.Add) and isinstance(step, ast.Constant) and type(step.value) is int
                    and step.value > 0):
                return False
            allowed.add(id(n.target))
            increments += 1
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if v in _target_names(t):
                    return False
                if isinstance(t, ast.Subscript) and _is_name(t.slice, v):
                    allowed.add(id(t.slice))
        elif isinstance(n, (ast.For, ast.comprehension)) and v in _target_names(n.target):
            return False
    if not increments:
        return False
    return all(id(n) in allowed for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == v)


def _one_append_per_iteration(loop, name: str | None) -> bool:
    """The loop body appends to list ``name`` exactly once per iteration (one ``name.append(e)`` statement at
    the body's own level, no ``continue``/``break`` in the loop) and does nothing else with it: entry ``k`` of
    the list is iteration ``k``'s value, which a GPU thread writes by its index (a map, not an ordering)."""
    if name is None:
        return False
    appends, uses = 0, 0
    for s in loop.body:
        if (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
                and _is_name(s.value.func.value, name) and s.value.func.attr == "append" and len(s.value.args) == 1
                and not s.value.keywords):
            appends += 1
    for n in ast.walk(ast.Module(body=list(loop.body), type_ignores=[])):
        if isinstance(n, ast.Name) and n.id == name:
            uses += 1
    own = list(_own_nodes(loop.body))
    if any(isinstance(n, (ast.Continue, ast.Break)) for n in own):
        return False
    return appends == 1 and uses == 1


def _private_arrays(body, local: set) -> set:
    """Locals assigned inside the loop body from a call (``np.zeros``, ``a.copy()``): a fresh array per
    iteration. Names assigned from a subscript or another name are views of an outer array, not private."""
    out = set()
    for n in ast.walk(ast.Module(body=list(body), type_ignores=[])):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            f = n.value.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if fname in _CONSTRUCTORS:
                for t in n.targets:
                    out |= _target_names(t) & local
    return out
