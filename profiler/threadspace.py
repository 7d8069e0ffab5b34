"""The GPU thread space of a region, chosen from the source before the region runs.

A GPU port turns loops whose iterations are independent into kernels: each iteration becomes a thread, each
execution of the loop a launch. This module reads the region's source (the root function or marked block and
every user function it calls, resolved as the instrumenter resolves them) and decides which loops those are:

* **marked** loops (``numba.prange`` / ``portcast.parallel``) are the thread space wherever they sit: in the
  region itself or in a function it calls; inside a marked loop nothing else is;
* with no mark anywhere, the **outermost loop that analysis finds independent** (or a reduction, or an
  update through atomics) on each path from the region's entry; a loop that carries a dependence is a host
  loop, and the search goes on inside it and inside the functions it calls (a solver's iteration loop runs on
  the host, the kernels are the loops inside it);
* a kernel loop whose body is exactly one further loop with no carried dependence, whose range does not
  depend on the outer loop's index, is collapsed with it into a multi-dimensional thread space (the threads
  are numbered by linear index over the whole nest); an inner loop over ``range(gid, n, total)`` (a
  grid-stride loop) or ``range(i)`` stays inside the outer loop's threads;
* statements between the loop headers of such a nest (an **imperfect nest**) that only compute a scalar from
  the outer indices, values fixed before the nest and each other are **sunk** into the inner loop: a GPU
  thread recomputes them from its indices, so the nest still collapses into an inner loop without
  dependences (:func:`_sink_barrier` says what may be sunk; anything else between the headers, or an inner
  reduction or atomic loop, keeps the outer loop's threads, as before).

The analysis is static and conservative where it must guess; the trace of the region is checked afterwards
for the dependences it actually has (features/thread_dependences.py), which is the verdict a porter should trust.

What counts as a dependence of loop ``L`` (iteration variable ``i``):

* a **scalar** local read before it is assigned in an iteration and assigned somewhere in the loop (its value
  flows from one iteration to the next), unless every use of it is a reduction statement (``s += e``,
  ``s = s * e``, ``s = max(s, e)``, ``if e < s: s = e`` with companions such as an argmin index): then it is a
  **reduction** (a GPU does it with a tree reduction or atomics, at a cost);
* a **store** ``a[idx] = ...`` (also through called functions) whose index does not depend on ``i``: every
  iteration writes the same element (a conflict), except ``a[idx] += ...``, an **atomic** update (a
  histogram);
* a **load** of an array the loop also stores, at an index written differently from every store of it
  (``u[i - 1]`` while storing ``u[i]``): a possible carried dependence through memory;
* a ``while`` loop, a ``break`` of the loop or a ``return`` inside it (the trip count depends on the order),
  and growing a Python list (``.append``), unless the body appends exactly once per iteration, unconditionally
  (entry ``k`` is iteration ``k``'s value: a map).

A scalar ``n`` used only as the whole index of stores and advanced by a positive constant (``buf[n] = v;
n += 1``: a stack push, a stream compaction) is an **append counter**: a GPU thread takes its slot with an
atomic add, so the loop is atomic (the entries' order may differ), and the counter's register is checked on
the trace as a reduction variable's.

Arrays created inside an iteration (``tmp = np.zeros(3)``) and arrays local to a called function are private
and never conflict. So is an array made outside the loop (a row buffer ``u1 = np.empty(n1)``), or a parameter
or global, that every iteration **writes before it reads** (:class:`_Coverage`): the loop stores it, directly
and only at elements that do not depend on ``i``, and reads it, and every load lies in a region the same
iteration surely wrote before (``b[k]`` over ``for k in range(lo, hi)`` wrote ``b[lo:hi]``, bounds compared
up to constant offsets). It is a per-thread buffer on a GPU: its stores and loads are no dependence, the
kernel loop's ``private`` entry names it, and its stores' pcs go to the metadata's ``private_pcs`` (the check
on the trace counts no write between threads there). Its values seen after the loop (a parameter, a global,
read elsewhere in the function) are the last iteration's: a note, not a dependence. An array read before the
iteration writes it carries a value from an earlier iteration (a reason says so).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
from typing import Any

import numpy as np

from . import markers as _markers
from .user_code import (
    SourceUnavailable,
    assigned_names,
    closure_namespace,
    function_source,
    is_user_function,
    resolve_static,
    unwrap_callable,
)

#: schema of the ``thread_space`` entry of a region's metadata
THREAD_SPACE_VERSION = 1

_RED_BINOPS = {ast.Add: "+", ast.Sub: "+", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
_COMMUTATIVE = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
_MINMAX = {"min": "min", "max": "max", "minimum": "min", "maximum": "max", "fmin": "min", "fmax": "max"}
_ORDER_METHODS = frozenset({"append", "extend", "insert", "pop", "popleft", "appendleft", "add", "remove",
                            "discard", "update", "setdefault"})
_CONSTRUCTORS = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
                           "array", "copy", "arange", "linspace", "ascontiguousarray", "asarray", "identity",
                           "eye", "list", "dict", "set", "tuple"})


def _loc(file: str, line: int) -> str:
    return f"{file}:{line}"


def _header(node) -> str:
    if isinstance(node, ast.For):
        return f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}"
    return f"while {ast.unparse(node.test)}"


def loop_key(node) -> tuple[int, int]:
    """How the rewriter and this module name a loop of a function: (line, column) of its statement."""
    return (int(node.lineno), int(node.col_offset))


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _direct_names(node) -> set[str]:
    """Names of ``node`` outside subscript indices: what an address or a value is computed from directly. A
    name only inside an index (``labels[i]``) reaches the value through memory (data-dependent)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Subscript):
            stack.append(n.value)
        else:
            stack.extend(ast.iter_child_nodes(n))
    return out


def _target_names(tgt) -> set[str]:
    return {n.id for n in ast.walk(tgt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _index_parts(idx: list) -> tuple:
    parts = []
    for i in idx:
        if isinstance(i, ast.Tuple):
            parts += [ast.unparse(e) for e in i.elts]
        else:
            parts.append(ast.unparse(i))
    return tuple(parts)


def _index_text(idx: list) -> str:
    return ", ".join(_index_parts(idx))


def _site(base, idx: list, aug: bool, line: int, loops) -> "Site":
    names = set().union(*(_names(i) for i in idx)) if idx else set()
    direct = set().union(*(_direct_names(i) for i in idx)) if idx else set()
    return Site(base, names, _index_text(idx), aug, line, loops, direct, _index_parts(idx))


def _subscript_base(node) -> tuple[str | None, list]:
    """(base name, index nodes) of ``a[i]``, ``a[i][j]``, ``a[i, j]``; base None when it is not a name."""
    idx = []
    while isinstance(node, ast.Subscript):
        idx.append(node.slice)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, idx[::-1]
    return None, idx[::-1]


def _element_origin(it, resolve):
    """What a loop variable's value is computed from, for the dependence closure: the start of a
    ``range(start, stop, step)`` (the stop and step shape the iteration space, they do not pick the element:
    ``for k in range(0, n, m)`` visits the same elements whatever ``m``), the iterable of ``for v in xs``, and
    None for ``range(stop)``."""
    inner = it
    if isinstance(inner, ast.Call):
        ok, obj = resolve(inner.func)
        if ok and obj is _markers.parallel and len(inner.args) == 1:
            inner = inner.args[0]
    if isinstance(inner, ast.Call) and isinstance(inner.func, (ast.Name, ast.Attribute)):
        name = inner.func.attr if isinstance(inner.func, ast.Attribute) else inner.func.id
        if name in ("range", "prange") and not inner.keywords:
            return inner.args[0] if len(inner.args) >= 2 else None
    return it


def _is_marked_iter(it, resolve) -> bool:
    if isinstance(it, ast.Call):
        ok, obj = resolve(it.func)
        if ok and (obj is _markers.parallel or getattr(obj, "__name__", "") == "prange"):
            return True
    return False


# ----------------------------------------------------------------------------------------------------------
# per-function facts


@dataclasses.dataclass
class Site:
    """A subscript store or load inside a function."""

    base: str | None
    index_names: set
    index_text: str
    aug: bool
    line: int
    loops: tuple  # loop keys of the enclosing loops in this function, outermost first
    direct_names: set = dataclasses.field(default_factory=set)  # index names outside nested indices
    parts: tuple = ()  # text of each index component


@dataclasses.dataclass(frozen=True)
class Effect:
    """A load or store of an array element that a caller can see."""

    kind: str  # "load" or "store"
    base: str  # the array: a parameter or global of the function the effect is expressed in (or an alias)
    direct: frozenset  # names the element depends on directly (see FuncFacts.store_dependence)
    every: frozenset  # names it depends on at all
    aug: bool  # the store of an update `a[k] op= v`
    loc: str  # file:line of the subscript
    key: tuple  # the element expression: (function, array name there, index text, enclosing argument indices...)
    loops: tuple  # loop keys enclosing it (or the call) in the function it is expressed in
    name: str  # the array's name where the effect is expressed (before aliases are resolved)
    parts: tuple = ()  # text of each index component, in the function of key[0]


@dataclasses.dataclass
class CallSite:
    callee: "FuncFacts"
    args: dict  # callee parameter -> caller expression node
    line: int
    loops: tuple


@dataclasses.dataclass
class LoopFacts:
    node: Any
    key: tuple
    parent: tuple | None
    marked: bool
    targets: set
    line: int


class FuncFacts:
    """What the thread-space analysis needs to know about one function (or the region's block)."""

    def __init__(self, key, qualname: str, file: str, fdef: ast.FunctionDef, namespace: dict, params: list[str],
                 analysis: "Analysis") -> None:
        self.key = key
        self.qualname = qualname
        self.file = file
        self.fdef = fdef
        self.ns = namespace
        self.params = list(params)
        self.locals = assigned_names(fdef)
        self.analysis = analysis
        self.loops: dict[tuple, LoopFacts] = {}
        self.stores: list[Site] = []
        self.loads: list[Site] = []
        self.calls: list[CallSite] = []
        self.deps: dict[str, set] = {}  # name -> names its assignments read (flow-insensitive)
        self.direct: dict[str, set] = {}  # the same, without names that only appear inside an index
        self.assign_values: dict[str, list] = {}  # name -> value nodes assigned to it
        self.order_calls: list[tuple[int, tuple, str, str | None]] = []  # (line, loops, method, receiver name)
        self._effects = None

    # -- name resolution, as the rewriter does it ------------------------------------------------------------
    def resolve(self, node) -> tuple[bool, Any]:
        return resolve_static(node, self.locals, self.ns)

    def callee_of(self, call: ast.Call):
        """The user function a call runs (traced by the instrumenter), or None."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        ok, obj = self.resolve(call.func)
        if not ok or not is_user_function(obj):
            return None
        fn = unwrap_callable(obj)
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return None
        if not all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                   for p in sig.parameters.values()):
            return None
        return fn

    # -- facts ------------------------------------------------------------------------------------------------
    def collect(self) -> None:
        self._walk(self.fdef.body, ())

    def _dep(self, name: str, value) -> None:
        self.deps.setdefault(name, set()).update(_names(value) if value is not None else set())
        self.direct.setdefault(name, set()).update(_direct_names(value) if value is not None else set())
        if value is not None:
            self.assign_values.setdefault(name, []).append(value)

    def _expr(self, node, loops) -> None:
        """Loads, calls and list-growing method calls inside an expression."""
        if node is None:
            return
        inner = set()
        for n in ast.walk(node):  # a sub-array passed to a traced function is not read here: the callee reads it
            if isinstance(n, ast.Call) and self.callee_of(n) is not None:
                for a in list(n.args) + [k.value for k in n.keywords]:
                    if isinstance(a, ast.Subscript):
                        inner.add(id(a))
        for n in ast.walk(node):
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and id(n) not in inner:
                v = n.value
                while isinstance(v, ast.Subscript):
                    inner.add(id(v))
                    v = v.value
                base, idx = _subscript_base(n)
                if base is not None:
                    self.loads.append(_site(base, idx, False, n.lineno, loops))
            elif isinstance(n, ast.Call):
                fn = self.callee_of(n)
                if fn is not None:
                    callee = self.analysis.facts(fn)
                    if callee is not None:
                        self.calls.append(CallSite(callee, _bind(fn, n), n.lineno, loops))
                elif isinstance(n.func, ast.Attribute) and n.func.attr in _ORDER_METHODS:
                    ok, obj = self.resolve(n.func.value)
                    if not ok:  # a method of a local object (a list growing), not a module function
                        recv = n.func.value.id if isinstance(n.func.value, ast.Name) else None
                        self.order_calls.append((n.lineno, loops, n.func.attr, recv))

    def _store_target(self, tgt, loops, aug: bool, value) -> None:
        if isinstance(tgt, ast.Name):
            self._dep(tgt.id, value)
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            for e in tgt.elts:
                self._store_target(e.value if isinstance(e, ast.Starred) else e, loops, aug, value)
        elif isinstance(tgt, ast.Subscript):
            base, idx = _subscript_base(tgt)
            self.stores.append(_site(base, idx, aug, tgt.lineno, loops))
            for i in idx:
                self._expr(i, loops)
        elif isinstance(tgt, ast.Attribute):
            self._expr(tgt.value, loops)

    def _walk(self, stmts, loops) -> None:
        for s in stmts:
            if isinstance(s, (ast.For, ast.While)):
                key = loop_key(s)
                marked = isinstance(s, ast.For) and _is_marked_iter(s.iter, self.resolve)
                targets = _target_names(s.target) if isinstance(s, ast.For) else set()
                self.loops[key] = LoopFacts(s, key, loops[-1] if loops else None, marked, targets, s.lineno)
                if isinstance(s, ast.For):
                    self._expr(s.iter, loops)
                    origin = _element_origin(s.iter, self.resolve)
                    for t in targets:
                        self._dep(t, origin)
                else:
                    self._expr(s.test, loops + (key,))
                self._walk(s.body, loops + (key,))
                self._walk(s.orelse, loops)
                continue
            if isinstance(s, ast.Assign):
                self._expr(s.value, loops)
                for t in s.targets:
                    self._store_target(t, loops, False, s.value)
            elif isinstance(s, ast.AugAssign):
                self._expr(s.value, loops)
                if isinstance(s.target, ast.Subscript):
                    self._expr(s.target, loops)  # the read half of the update
                self._store_target(s.target, loops, True, s.value)
                if isinstance(s.target, ast.Name):
                    self._dep(s.target.id, s.target)
            elif isinstance(s, ast.AnnAssign):
                if s.value is not None:
                    self._expr(s.value, loops)
                    self._store_target(s.target, loops, False, s.value)
            elif isinstance(s, (ast.Expr, ast.Return)):
                self._expr(s.value, loops)
            elif isinstance(s, ast.If):
                self._expr(s.test, loops)
                self._walk(s.body, loops)
                self._walk(s.orelse, loops)
            elif isinstance(s, ast.Assert):
                self._expr(s.test, loops)
            elif isinstance(s, ast.With):
                for it in s.items:
                    self._expr(it.context_expr, loops)
                self._walk(s.body, loops)
            elif isinstance(s, ast.Try):
                self._walk(s.body, loops)
                for h in s.handlers:
                    self._walk(h.body, loops)
                self._walk(s.orelse, loops)
                self._walk(s.finalbody, loops)

    # -- dependence closure -------------------------------------------------------------------------------------
    def depends_on(self, names: set, roots: set, direct: bool = False) -> bool:
        """Whether any of ``names`` depends (through assignments, flow-insensitively) on any of ``roots``;
        ``direct``: only through values computed from them, not through an index (a loaded value)."""
        return bool(self.roots_of(names, direct) & set(roots))

    def roots_of(self, names: set, direct: bool = False) -> set:
        """Every name that ``names`` depend on, themselves included (``direct``: see :meth:`depends_on`)."""
        graph = self.direct if direct else self.deps
        seen: set = set()
        stack = list(names)
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            stack.extend(graph.get(n, ()))
        return seen

    def store_dependence(self, index_names: set, base: str | None, roots: set) -> str:
        """How the element a store writes depends on ``roots``: "direct" (the address is computed from them:
        distinct elements per value), "indirect" (only through loaded values: a scatter), or "none"."""
        base_names = {base} if base else set()
        if self.depends_on(index_names, roots, direct=True) or self.depends_on(base_names, roots):
            return "direct"
        if self.depends_on(index_names, roots):
            return "indirect"
        return "none"

    def site_effects(self, visible_only: bool = True) -> list["Effect"]:
        """This function's own subscript loads and stores, in terms of its local names; ``visible_only``: only
        those of arrays a caller can see (not of arrays made inside the function)."""
        out = []
        for kind, sites in (("store", self.stores), ("load", self.loads)):
            for st in sites:
                base = self._visible_base(st.base) if visible_only else st.base
                if base is None:
                    continue
                out.append(Effect(kind, base, frozenset(st.direct_names), frozenset(st.index_names), st.aug,
                                  _loc(self.file, st.line), (self.qualname, st.base, st.index_text), st.loops,
                                  st.base, st.parts))
        return out

    def call_effects(self, c: "CallSite") -> list["Effect"]:
        """The loads and stores a call does (through the callee and its callees) on arrays this function can
        see, in terms of this function's names. An argument ``levels[k]`` (an array of a list, a row of a
        matrix) stands for the container ``levels`` at an element that depends on ``k`` directly."""
        out = []
        for e in c.callee.effects():
            direct, every = set(), set()
            for p in e.every:
                a = c.args.get(p)
                if a is None:
                    continue
                every |= _names(a)
                if p in e.direct:
                    direct |= _direct_names(a)
            key = e.key
            if e.base in c.callee.params:
                a = c.args.get(e.base)
                while isinstance(a, ast.Subscript):  # levels[k]: the container, at k
                    direct |= _names(a.slice)
                    every |= _names(a.slice)
                    key = key + (ast.unparse(a.slice),)
                    a = a.value
                if not isinstance(a, ast.Name):
                    continue
                base = self._visible_base(a.id)
                name = a.id
                if base is None:
                    continue
            else:
                base = name = e.base
            out.append(Effect(e.kind, base, frozenset(direct), frozenset(every), e.aug, e.loc, key, c.loops, name,
                              e.parts))
        return out

    def effects(self) -> list["Effect"]:
        """Loads and stores this function does (itself and through its callees) on arrays its caller can see
        (parameters and globals; arrays made inside it are private to the call), with ``direct`` / ``every``
        = the parameters the element depends on directly / at all (see :meth:`store_dependence`)."""
        if self._effects is not None:
            return self._effects
        self._effects = []  # recursion: a function reached again while it is summarised adds nothing more
        params = set(self.params)
        out = []
        local = self.site_effects() + [e for c in self.calls for e in self.call_effects(c)]
        for e in local:
            base_roots = self.roots_of({e.name})
            direct = (self.roots_of(set(e.direct), direct=True) | base_roots) & params
            every = (self.roots_of(set(e.every)) | base_roots) & params
            out.append(Effect(e.kind, e.base, frozenset(direct), frozenset(every), e.aug, e.loc, e.key, (), e.base,
                              e.parts))
        self._effects = out
        return out

    def _visible_base(self, name: str | None) -> str | None:
        """The parameter or global an array name stands for here, or None for an array made inside the
        function (private to one call)."""
        if name is None:
            return None
        if name in self.params or name not in self.locals:
            return name
        return self._alias_of(name)

    def _alias_of(self, name: str) -> str | None:
        """The array a local name views (``row = a[i]``, ``b = a``), or None when it is made here."""
        vals = self.assign_values.get(name, [])
        for v in vals:
            node = v
            while isinstance(node, ast.Subscript):
                node = node.value
            if isinstance(node, ast.Name) and node.id != name:
                return node.id if node.id not in self.locals or node.id in self.params else self._alias_of(node.id)
        return None


def _bind(fn, call: ast.Call) -> dict:
    """Callee parameter -> argument expression of a call (positional and keyword)."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}
    out = {}
    for p, a in zip(params, call.args):
        out[p] = a
    for k in call.keywords:
        if k.arg:
            out[k.arg] = k.value
    return out


# ----------------------------------------------------------------------------------------------------------
# loop verdicts


@dataclasses.dataclass
class Verdict:
    """The static verdict on one loop: ``kind`` is independent, reduction, atomic or sequential."""

    kind: str
    reductions: dict = dataclasses.field(default_factory=dict)  # name -> operator
    atomics: list = dataclasses.field(default_factory=list)  # "count[k] (file:line)"
    reasons: list = dataclasses.field(default_factory=list)  # why sequential / notes, with file:line
    private: list = dataclasses.field(default_factory=list)  # "`u1` (file:line)": arrays private to the iteration
    private_sites: list = dataclasses.field(default_factory=list)  # (line, col) of their subscript stores


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


# -- privatisation: arrays every iteration writes before it reads -----------------------------------------------

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


def _effect_text(e: Effect, f: FuncFacts) -> str:
    """How a load or store reads in the loop's function: ``a[i - 1]``, or ``levels[lev]`` (as ``u[i, j, k]``
    in smooth) for one done by a called function."""
    func, name, index = e.key[:3]
    if func == f.qualname and len(e.key) == 3:
        return f"`{name}[{index}]`"
    outer = "".join(f"[{k}]" for k in reversed(e.key[3:]))
    return f"`{e.name}{outer}` (as `{name}[{index}]` in {func})"


def loop_verdict(f: FuncFacts, lf: LoopFacts) -> Verdict:
    """Static verdict on loop ``lf`` of function ``f`` (see the module docstring)."""
    node = lf.node
    file = f.file
    if isinstance(node, ast.While):
        return Verdict("sequential", reasons=[f"{_loc(file, node.lineno)}: a while loop (its trip count depends on "
                                               "values carried from one iteration to the next)"])
    reasons = _early_exits(node, file)
    reductions, counters = _scalar_verdicts(f, lf, reasons)
    # memory: the loop's own loads and stores, and those of the functions it calls
    taint = set(lf.targets)
    atomics: list[str] = []
    notes: list[str] = []
    effects = _loop_effects(f, lf)
    privatised, unprivatised = _privatised(f, lf, effects, taint)
    effects = [e for e in effects if e.name not in privatised]
    priv = _private_entries(file, privatised, notes)
    written = _store_verdicts(f, lf, effects, counters, reasons, atomics, notes)
    _load_verdicts(f, taint, effects, written, reasons)
    for name, (kind, line, text) in sorted(unprivatised.items()):
        if kind == "read" and any(not w.aug for w in written.get(name, [])):
            reasons.append(f"{_loc(file, line)}: reads `{text}` before the iteration has written it (every iteration "
                           f"stores `{name}` at the same elements): a value may flow in from an earlier iteration")
    _order_call_verdicts(f, lf, reasons, notes)
    reasons = list(dict.fromkeys(reasons))
    notes = list(dict.fromkeys(notes))
    atomics = list(dict.fromkeys(atomics))
    if reasons:
        return Verdict("sequential", reductions, atomics, reasons + notes, **priv)
    if atomics:
        return Verdict("atomic", reductions, atomics, notes, **priv)
    if reductions:
        kind = "scan" if any(op.endswith("scan") for op in reductions.values()) else "reduction"
        return Verdict(kind, reductions, atomics, notes, **priv)
    return Verdict("independent", reasons=notes, **priv)


def _early_exits(node, file: str) -> list[str]:
    """Reasons for the breaks of the loop ``node`` and the returns inside it (the later iterations must not run)."""
    reasons: list[str] = []
    for n in _own_nodes(node.body):
        if isinstance(n, ast.Break):
            reasons.append(f"{_loc(file, n.lineno)}: break (the iterations after the exit must not run)")
    for n in ast.walk(ast.Module(body=list(node.body), type_ignores=[])):
        if isinstance(n, ast.Return):
            reasons.append(f"{_loc(file, n.lineno)}: return inside the loop (the iterations after it must not run)")
    return reasons


def _scalar_verdicts(f: FuncFacts, lf: LoopFacts, reasons: list) -> tuple[dict, set]:
    """The scalars the loop carries from one iteration to the next: (reductions and scans by name, the append
    counters); a carried scalar that is neither adds a reason to ``reasons``."""
    node = lf.node
    exposed: dict = {}
    assigned: dict = {}
    _exposed(node.body, set(lf.targets), f.locals, exposed, assigned)
    reductions: dict = {}
    counters: set = set()
    for name in sorted(set(exposed) & set(assigned)):
        if name in lf.targets:
            continue
        if _append_counter(node.body, name):
            counters.add(name)
            reductions[name] = "append counter"
            continue
        op = _reduction_of(node.body, name)
        if op is None:
            op = _scan_of(node.body, name)
        if op is not None:
            reductions[name] = op
        else:
            reasons.append(f"{_loc(f.file, exposed[name])}: `{name}` is read before it is assigned in an iteration "
                           f"and assigned at line {assigned[name]}: its value is carried from one iteration to the "
                           "next")
    return reductions, counters


def _loop_effects(f: FuncFacts, lf: LoopFacts) -> list:
    """The loads and stores the loop runs (its own and those of the functions it calls), but those of arrays
    created inside an iteration."""
    private = _private_arrays(lf.node.body, f.locals)
    effects = [e for e in f.site_effects(visible_only=False) if lf.key in e.loops]
    for c in f.calls:
        if lf.key in c.loops:
            effects += [e for e in f.call_effects(c)]
    return [e for e in effects if e.name not in private]


def _private_entries(file: str, privatised: dict, notes: list) -> dict:
    """The verdict's ``private`` and ``private_sites`` for the arrays every iteration writes before it reads; a
    note for each whose values are seen after the loop."""
    private_list, private_sites = [], []
    for name, (line, sites, last) in sorted(privatised.items()):
        private_list.append(f"`{name}` ({_loc(file, line)})")
        private_sites += sites
        if last:
            notes.append(f"{_loc(file, line)}: `{name}` is written before it is read in every iteration (private to "
                         f"the thread); its values after the loop are the last iteration's ({last})")
    return {"private": private_list, "private_sites": private_sites}


def _store_verdicts(f: FuncFacts, lf: LoopFacts, effects: list, counters: set, reasons: list, atomics: list,
                    notes: list) -> dict[str, list]:
    """Judges every store whose element does not depend on the loop variable directly (an atomic update, an
    append through a counter, a scatter through loaded indices, or a conflict); returns the stores by array."""
    taint = set(lf.targets)
    var = ", ".join(sorted(lf.targets)) or "the iteration"
    written: dict[str, list] = {}
    for e in effects:
        if e.kind != "store":
            continue
        written.setdefault(e.name, []).append(e)
        direct = f.depends_on(set(e.direct), taint, direct=True) or f.depends_on({e.name}, taint)
        if direct:
            continue
        what = _effect_text(e, f)
        if e.aug:
            atomics.append(f"{what} ({e.loc})")
        elif e.key[0] == f.qualname and len(e.key) == 3 and e.parts and len(e.parts) == 1 and e.parts[0] in counters:
            atomics.append(f"{what} ({e.loc}): appended through the counter `{e.parts[0]}` (an atomic add on a GPU; "
                           "the entries' order may differ)")
        elif f.depends_on(set(e.every), taint):
            notes.append(f"{e.loc}: {what} scatters through loaded indices: iterations write distinct elements only "
                         "if those indices differ (checked on the trace)")
        else:
            reasons.append(f"{e.loc}: every iteration stores {what} (the element does not depend on {var}): "
                           "conflicting writes")
    return written


def _load_verdicts(f: FuncFacts, taint: set, effects: list, written: dict, reasons: list) -> None:
    """A reason for every load of an array the loop stores that may read what another iteration wrote."""
    def picks(texts) -> bool:
        names = set().union(*(_names(ast.parse(t, mode="eval")) for t in texts))
        return bool(names) and f.depends_on(names, taint, direct=True)

    def same_part(r: Effect, w: Effect) -> bool:
        """The load reads only what the store writes in the same iteration: the same element expression, the
        same sub-array ``levels[lev]`` or the same row ``a[i, j - 1]`` / ``a[i, j]`` picked by the loop
        variable itself."""
        if r.key == w.key:
            return True
        outer = r.key[3:]
        if outer and outer == w.key[3:] and picks(outer):
            return True
        if r.key[:2] == w.key[:2] and r.key[0] == f.qualname and not outer and not w.key[3:]:
            return any(a == b and picks([a]) for a, b in zip(r.parts, w.parts))
        return False

    for e in effects:
        if e.kind != "load" or e.name not in written:
            continue
        if not any(same_part(e, w) for w in written[e.name]):
            stores = ", ".join(sorted({_effect_text(w, f) for w in written[e.name]}))
            reasons.append(f"{e.loc}: reads {_effect_text(e, f)} while the loop stores {stores}: a value written by "
                           "another iteration may be read")


def _order_call_verdicts(f: FuncFacts, lf: LoopFacts, reasons: list, notes: list) -> None:
    """Growing a container inside the loop: a note for one append per iteration (a map), else a reason."""
    for line, loops, method, recv in f.order_calls:
        if lf.key not in loops:
            continue
        if method == "append" and loops[-1] == lf.key and _one_append_per_iteration(lf.node, recv):
            notes.append(f"{_loc(f.file, line)}: `{recv}.append()` adds one entry per iteration: entry k is "
                         "iteration k's (a GPU thread writes it by its index)")
        else:
            reasons.append(f"{_loc(f.file, line)}: .{method}() grows a container in iteration order")


# ----------------------------------------------------------------------------------------------------------
# the plan


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
