"""Imperfect nests: which statements between the loop headers of a nest may be sunk into its inner loop (a
GPU thread recomputes them from its indices) so that the nest still collapses."""

from __future__ import annotations

import ast
import builtins

import numpy as np

from .source_facts import FuncFacts, _names, _subscript_base

_PURE_BUILTINS = frozenset({"abs", "min", "max", "int", "float", "round", "complex", "bool", "divmod", "pow", "len"})
_ARRAY_ATTRS = frozenset({"real", "imag", "shape", "size", "ndim"})
_IMPURE_NODES = (ast.Lambda, ast.NamedExpr, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Await,
                 ast.Yield, ast.YieldFrom, ast.Starred, ast.List, ast.Dict, ast.Set)


def _pure_function(f: FuncFacts, call: ast.Call) -> bool:
    """A call whose result depends on its arguments only and that changes nothing: a pure builtin
    (``abs``, ``min``, ``int``...), a ``math`` / ``cmath`` function, a NumPy ufunc or scalar type. A user
    function (traced) is not: whether it has side effects is not looked into."""
    if f.callee_of(call) is not None:
        return False
    ok, obj = f.resolve(call.func)
    if not ok:
        return False  # a method of a local object, or a name the analysis cannot see
    if isinstance(call.func, ast.Name) and call.func.id in _PURE_BUILTINS and obj is getattr(builtins, call.func.id):
        return True
    if getattr(obj, "__module__", None) in ("math", "cmath"):
        return True
    return isinstance(obj, np.ufunc) or (isinstance(obj, type) and issubclass(obj, np.generic))


def _sunk_name(stmt) -> str:
    return (stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target).id


def _sink_barrier(f: FuncFacts, nest: list, stmt, allowed: set) -> str | None:
    """Why ``stmt``, between the loop headers of the nest ``nest`` (LoopFacts, outermost first; ``stmt`` is in
    the body of its last loop), cannot be sunk into the inner loop; None when it can. ``allowed``: the nest's
    loop variables and the names of statements already sunk (outer levels first, then earlier statements).

    It can when it assigns a scalar local (``kk = k if k < n // 2 else k - n``) that nothing else in the
    nest assigns, that no loop header of the nest and no code outside the nest reads (its value is not used
    after the nest), from a pure expression (constants, arithmetic, comparisons, conditional expressions,
    pure functions: :func:`_pure_function`) of the allowed names, names the nest does not assign (values
    fixed before it) and elements of arrays the nest does not store."""
    outer = nest[0].node
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        name, value = stmt.targets[0].id, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
        name, value = stmt.target.id, stmt.value
    else:
        return "not an assignment of one scalar local"
    nest_assigned: dict = {}
    for n in ast.walk(outer):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            nest_assigned[n.id] = nest_assigned.get(n.id, 0) + 1
    why = _sink_name_barrier(f, nest, name, allowed, nest_assigned)
    if why is not None:
        return why
    stored: set = set()
    for st in f.stores:
        if nest[0].key in st.loops and st.base is not None:
            stored.add(st.base)
    for c in f.calls:
        if nest[0].key in c.loops:
            stored |= {e.name for e in f.call_effects(c) if e.kind == "store"}
    stored = set().union(*(_alias_roots(f, b) for b in stored)) if stored else set()
    funcs = {id(n.func) for n in ast.walk(value) if isinstance(n, ast.Call)}
    for n in ast.walk(value):
        why = _sink_read_barrier(f, n, funcs, stored)
        if why is not None:
            return why
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in f.locals and n.id not in allowed \
                and n.id in nest_assigned:
            return f"reads `{n.id}`, assigned in the nest"
    return None


def _sink_name_barrier(f: FuncFacts, nest: list, name: str, allowed: set, nest_assigned: dict) -> str | None:
    """Why the scalar ``name`` a statement between the nest's headers assigns cannot be sunk (it is assigned
    elsewhere in the nest, is not a local, is read outside the nest or by a loop header); None when it can."""
    if name in allowed or nest_assigned.get(name, 0) != 1:
        return f"`{name}` is assigned elsewhere in the nest"
    inside = {id(n) for n in ast.walk(nest[0].node)}
    for n in ast.walk(f.fdef):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return f"`{name}` is not a local"
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in inside:
            return f"`{name}` is read outside the nest (line {n.lineno})"
    if any(name in _names(lp.node.iter) for lp in nest):
        return f"a loop header of the nest reads `{name}`"
    return None


def _alias_roots(f: FuncFacts, base: str) -> set:
    """The array ``base`` and the local arrays it is an alias of, back to a parameter or a fresh array."""
    out = {base}
    while base is not None and base in f.locals and base not in f.params:
        base = f._alias_of(base)
        if base is None or base in out:
            break
        out.add(base)
    return out


def _sink_read_barrier(f: FuncFacts, n, funcs: set, stored: set) -> str | None:
    """Why the node ``n`` of a value to sink makes it no pure scalar expression of values fixed before the nest
    (an impure construct or call, an attribute, an element of an array the nest stores); None when it does not.
    ``funcs``: ids of the called expressions of the value, ``stored``: the arrays the nest stores (and aliases)."""
    if isinstance(n, _IMPURE_NODES):
        return f"`{ast.unparse(n)}` is not a pure scalar expression"
    if isinstance(n, ast.Call) and not _pure_function(f, n):
        return f"calls `{ast.unparse(n.func)}` (not a pure function)"
    if isinstance(n, ast.Attribute) and id(n) not in funcs:
        ok, obj = f.resolve(n)
        if not (ok and not callable(obj)) and n.attr not in _ARRAY_ATTRS:
            return f"reads the attribute `{ast.unparse(n)}`"
    if isinstance(n, ast.Subscript):
        base, _ = _subscript_base(n)
        if base is None:
            node = n.value
            while isinstance(node, ast.Subscript):
                node = node.value
            if not (isinstance(node, ast.Attribute) and node.attr in _ARRAY_ATTRS):
                return f"reads `{ast.unparse(n)}`"
        elif _alias_roots(f, base) & stored:
            return f"reads `{ast.unparse(n)}` of an array the nest stores"
    return None
