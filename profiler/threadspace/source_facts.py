"""What the thread-space analysis knows about one function before judging its loops: the loops, the
loads and stores (sites) and the calls of a function or a marked block, where each name comes from, and the
helpers that read names and subscripts in its source."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from typing import TYPE_CHECKING, Any

from .. import markers as _markers
from ..user_code import assigned_names, is_user_function, resolve_static, unwrap_callable

if TYPE_CHECKING:
    from .plan import Analysis


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
