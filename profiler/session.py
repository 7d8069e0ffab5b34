"""Running instrumented regions: :func:`trace_function`, :func:`profile_script` and the marker session.

A region invocation goes: instrument (cached per root and mode) -> ``start_region`` on every sink ->
run the instrumented code, which hands bounded chunks to the sinks as its buffer fills -> flush the rest ->
``end_region`` (also after an exception or Ctrl-C, then with ``complete=False``; the exception is re-raised
with a note saying what was kept).
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import inspect
import os
import sys
import time
import types as pytypes
from typing import Any, Iterable, Sequence

import numpy as np

from . import instrument as ins
from . import libcalls as _lib
from . import markers as _markers
from . import runtime as rt
from .compile_errors import describe_failure
from .trace import DEFAULT_CHUNK_RECORDS, RegionInfo, StaticTable, TraceChunk
from .version import portcast_version

MODES = ("auto", "interpreted", "compiled")


@dataclasses.dataclass
class TraceResult:
    """What :func:`trace_function` returns."""

    info: RegionInfo
    static: StaticTable
    value: Any


def _notice(msg: str) -> None:
    print(f"portcast: {msg}", file=sys.stderr)


class _Tracer:
    """Owns one region invocation's buffer and forwards chunks to the sinks."""

    def __init__(self, program: ins.Program, sinks: Sequence, info: RegionInfo) -> None:
        self.program = program
        self.sinks = list(sinks)
        self.info = info
        self.n_records = 0
        self.max_tid = -1

    def deliver(self, chunk: TraceChunk, max_tid: int | None = None) -> None:
        """Count ``chunk`` and hand it to every sink (``max_tid``: its largest tid, when the caller knows it)."""
        n = len(chunk)
        if not n:
            return
        self.n_records += n
        m = int(chunk.tid.max()) if max_tid is None else int(max_tid)
        if m > self.max_tid:
            self.max_tid = m
        for s in self.sinks:
            s.consume(chunk)


# cache of built programs: (root code or block key, mode) -> Program
_PROGRAMS: dict = {}
_COMPILE_FAILED: dict = {}
_INVOCATIONS: dict[str, int] = {}


def _program_for(fn, mode: str) -> ins.Program:
    key = (fn.__code__, mode)
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = _PROGRAMS[key] = ins.instrument(fn, mode)
    return prog


class _NotCompilable(Exception):
    """An argument Numba cannot type, or another reason the compiled mode cannot run."""


def _numba_error_types():
    from numba.core import errors

    return (errors.NumbaError, _NotCompilable)


def _run_region(name, prog: ins.Program, positional: list, sinks, chunk_records: int, mode: str, source: str,
                invocation: int | None = None, compile_key=None, baseline: "Baseline | None" = None):
    """Run ``prog.root`` on ``positional`` while tracing; returns (value, info). ``baseline``: the
    uninstrumented run's measurement, stored in the region metadata."""
    if invocation is None:
        invocation = _INVOCATIONS.get(name, 0)
        _INVOCATIONS[name] = invocation + 1
    info = RegionInfo(
        name=name, invocation=invocation, mode=mode, portcast_version=portcast_version(), source=source,
        parallel_loop=", ".join(prog.parallel_loops) or None,
    )
    if prog.thread_space:
        info.extra["thread_space"] = copy.deepcopy(prog.thread_space)
    if baseline is not None:
        info.uninstrumented_time_s = baseline.seconds
        info.extra["uninstrumented_mode"] = baseline.how
        if baseline.error:
            info.extra["uninstrumented_error"] = baseline.error
        if baseline.note:
            info.extra["uninstrumented_note"] = baseline.note
    tracer = _Tracer(prog, sinks, info)
    fn = prog.root.fn
    if mode == "compiled":
        buf = rt.CompiledBuffer(tracer, chunk_records, prog.n_sites, _lib.SLOT_WIDTH * prog.n_lib_slots)
        args = (*buf.entry_args(), *positional)
    else:
        buf = rt.InterpretedBuffer(tracer, chunk_records)
        buf.lib = _lib.InterpretedLib(buf, prog)
        args = (buf, None, *positional)
    rt.warm_up(mode)
    for s in tracer.sinks:
        s.start_region(info, prog.static)
    t0 = time.perf_counter()
    value = None
    try:
        if mode == "compiled":
            with buf:
                value = fn(*args)
        else:
            value = fn(*args)
    except BaseException as exc:
        info.wall_time_s = time.perf_counter() - t0
        try:
            buf.flush()
        finally:
            info.complete = False
            info.error = (
                "interrupted (KeyboardInterrupt)"
                if isinstance(exc, KeyboardInterrupt)
                else f"{type(exc).__name__}: {exc}"
            )
            _finish(tracer, info, prog, buf)
        if hasattr(exc, "add_note"):
            exc.add_note(
                f"portcast: raised inside traced region {name!r} (invocation {invocation}); "
                f"the {info.n_records} records before it were kept and the trace is marked incomplete"
            )
        raise
    info.wall_time_s = time.perf_counter() - t0
    buf.flush()
    _finish(tracer, info, prog, buf)
    return value, info


def _finish(tracer: _Tracer, info: RegionInfo, prog: ins.Program, buf=None) -> None:
    info.n_records = tracer.n_records
    info.n_threads = tracer.max_tid + 1
    if buf is not None:  # library calls: what was expanded, and the estimated work of what was not
        _lib.annotate(info, prog, buf.lib.S if isinstance(buf, rt.InterpretedBuffer) else buf.S)
    for s in tracer.sinks:
        s.end_region(info, prog.static)


def _choose_mode(mode: str, build, positional, label: str):
    """Build the program for ``mode``; for auto, try compiled and fall back with a one-line notice."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "interpreted":
        return build("interpreted"), "interpreted"
    prog = None
    try:
        prog = build("compiled")
        if prog.recursive:
            why = (f"{', '.join(prog.recursive)} {'calls itself' if len(prog.recursive) == 1 else 'call each other'}"
                   "; deep recursion in Numba-compiled code can overflow the native stack and crash")
            if mode == "compiled":
                raise ins.UnsupportedConstruct(f"region {label}: {why}: trace it with --mode interpreted")
            _notice(f"region {label}: {why}; tracing in interpreted mode")
            return build("interpreted"), "interpreted"
        _compile(prog, positional)
        return prog, "compiled"
    except ins.UnsupportedConstruct:
        raise
    except Exception as exc:  # Numba typing/lowering errors, untypable arguments, ...
        reason = describe_failure(exc, prog)
        if mode == "compiled":
            raise ins.UnsupportedConstruct(f"region {label}: Numba cannot compile it: {reason}") from None
        _notice(f"region {label}: Numba cannot compile it: {reason}; tracing in interpreted mode")
        return build("interpreted"), "interpreted"


def _compile(prog: ins.Program, positional) -> None:
    import numba

    sig = [numba.typeof(a) for a in rt.CompiledBuffer(None, 1).entry_args()]
    for name, a in zip(prog.root.params, positional):
        what = _python_container(a)
        if what:
            raise _NotCompilable(f"argument {name!r} is {what}, which Numba-compiled code does not take")
        try:
            sig.append(numba.typeof(a))
        except ValueError:
            raise _NotCompilable(f"argument {name!r} ({_type_name(a)}) has no Numba type") from None
    prog.root.fn.compile(tuple(sig))


def _type_name(a) -> str:
    t = type(a)
    return t.__name__ if t.__module__ in ("builtins", "__main__") else f"{t.__module__}.{t.__qualname__}"


def _python_container(a) -> str:
    """"a Python list of lists" and the like for the containers the compiled mode refuses, else ""."""
    if not isinstance(a, (list, set, dict)):
        return ""
    kind = type(a).__name__
    items = list(a.values()) if isinstance(a, dict) else list(a)
    inner = {type(x).__name__ for x in items[:64]}
    if len(inner) == 1 and isinstance(items[0], (list, set, dict, tuple)):
        return f"a Python {kind} of {inner.pop()}s"
    return f"a Python {kind}"


@dataclasses.dataclass
class Baseline:
    """Wall time of an uninstrumented run of a region (see :func:`measure_uninstrumented`)."""

    seconds: float | None  # best of the timed runs; None when the region could not be run
    how: str  # "njit" (compiled with Numba) or "python"
    error: str | None = None  # why ``seconds`` is None
    note: str | None = None  # how the njit run differs from the function as written (SERIAL_NOTE)


#: ``Baseline.note`` (and ``info.extra["uninstrumented_note"]``) when the region is a ``parallel=True`` dispatcher
SERIAL_NOTE = "serial: the function is parallel=True; timed single-threaded (prange runs as range)"


_BASELINE_JIT: dict = {}  # (code object, parallel) -> njit dispatcher of the original function, or None (not njit-able)
_BASELINE_NOTE: dict = {}  # (code object, parallel) -> Baseline.note of that dispatcher


def _njit_dispatcher_of(fn):
    """The Numba CPU dispatcher ``fn`` is (or a region decorator wraps), else None."""
    from numba.core.registry import CPUDispatcher

    obj = fn
    for _ in range(8):
        if isinstance(obj, CPUDispatcher):
            return obj
        if getattr(obj, "__portcast_region__", None) is None or not hasattr(obj, "__wrapped__"):
            return None
        obj = obj.__wrapped__
    return None


def _baseline_dispatcher(fn, base):
    """(dispatcher to time, note): ``fn``'s own njit dispatcher; for a ``parallel=True`` one a serial copy with
    the same options (prange runs as range: the multi-threaded run's time swings with the machine's load);
    else ``numba.njit(base)``."""
    import numba

    disp = _njit_dispatcher_of(fn)
    if disp is None:
        return numba.njit(base), None
    opts = dict(disp.targetoptions)
    if not opts.get("parallel"):
        return disp, None
    opts.pop("nopython", None)  # implied by njit
    opts.pop("cache", None)  # Numba's cache index does not tell the serial and the parallel version apart
    opts["parallel"] = False
    return numba.njit(**opts)(base), SERIAL_NOTE
_PARALLEL_OVERLOADED: list = []


def _overload_parallel_marker() -> None:
    """Let ``portcast.parallel(it)`` compile in njit code (as ``it``), so marked regions have an njit baseline."""
    if not _PARALLEL_OVERLOADED:
        from numba.extending import overload

        @overload(_markers.parallel)
        def _ol_parallel(iterable):
            return lambda iterable: iterable

        _PARALLEL_OVERLOADED.append(_ol_parallel)


def _fresh_copies(args) -> list:
    """Deep copies of the arguments (arrays copied with their memory order), so a run cannot change them."""
    import numpy

    out = []
    for a in args:
        if isinstance(a, numpy.ndarray):
            out.append(numpy.array(a, copy=True, order="K"))
            continue
        try:
            out.append(copy.deepcopy(a))
        except Exception:  # modules, functions, objects that refuse to be copied: passed as they are
            out.append(a)
    return out


def measure_uninstrumented(fn, args=(), *, repeat: int = 3, jit: bool = True) -> Baseline:
    """Time the original (uninstrumented) function on deep copies of ``args``: warm-up, then best of ``repeat``.

    Parameters
    ----------
    fn : callable
        The region's function (plain, ``numba.njit`` dispatcher, or ``portcast.region``-decorated).
    args : sequence
        Positional arguments (all parameters, defaults applied). They are never modified: every run gets
        fresh deep copies (copying is not timed).
    repeat : int
        Timed runs after the warm-up run (which also compiles).
    jit : bool
        Compile the function with ``numba.njit`` when Numba can (the uninstrumented counterpart of the
        compiled tracing mode); else, or when Numba cannot, run it as plain Python. A ``numba.njit``
        dispatcher runs as it is, except a ``parallel=True`` one: its function is compiled with the same
        options but ``parallel=False`` (prange runs as range; ``note`` says so), because the multi-threaded
        run's time swings with the machine's load and the traced run is single-threaded.

    Returns
    -------
    Baseline
        ``seconds`` (wall time, ``time.perf_counter``), ``how`` ("njit" or "python"), ``error`` when the
        region raised (then ``seconds`` is None), ``note`` (:data:`SERIAL_NOTE` for a parallel dispatcher).
    """
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    base = ins.unwrap_callable(fn)
    runner, how = base, "python"
    own = _njit_dispatcher_of(fn)
    key = (base.__code__, bool(own is not None and own.targetoptions.get("parallel")))
    if jit and not any(isinstance(a, (list, set, dict)) for a in args):  # as the compiled tracing mode
        disp = _BASELINE_JIT.get(key, False)
        if disp is False:
            _overload_parallel_marker()
            disp, _BASELINE_NOTE[key] = _baseline_dispatcher(fn, base)
            try:
                disp(*_fresh_copies(args))
            except _numba_error_types():
                disp = None
            except Exception as exc:  # the region itself raised: no baseline
                _BASELINE_JIT[key] = disp
                return Baseline(None, "njit", f"{type(exc).__name__}: {exc}", _BASELINE_NOTE.get(key))
            _BASELINE_JIT[key] = disp
        if disp is not None:
            runner, how = disp, "njit"
    best = None
    try:
        for k in range(repeat + 1):
            call_args = _fresh_copies(args)
            t0 = time.perf_counter()
            runner(*call_args)
            dt = time.perf_counter() - t0
            if k and (best is None or dt < best):  # run 0 is the warm-up
                best = dt
    except Exception as exc:
        if how == "njit" and isinstance(exc, _numba_error_types()):  # a new argument type Numba cannot compile
            _BASELINE_JIT[key] = None
            return measure_uninstrumented(base, args, repeat=repeat, jit=False)
        return Baseline(None, how, f"{type(exc).__name__}: {exc}", _BASELINE_NOTE.get(key) if how == "njit" else None)
    return Baseline(best, how, note=_BASELINE_NOTE.get(key) if how == "njit" else None)


def _measure(fn, positional) -> Baseline:
    return measure_uninstrumented(fn, positional)


def trace_function(fn, args=(), kwargs=None, *, region: str | None = None, sinks: Iterable = (), mode: str = "auto",
                   chunk_records: int = DEFAULT_CHUNK_RECORDS, measure_uninstrumented: bool = False) -> TraceResult:
    """Trace one call ``fn(*args, **kwargs)``; the function is the region.

    Parameters
    ----------
    fn : callable
        A plain Python function, a ``numba.njit`` dispatcher (traced through ``.py_func``) or a function
        decorated with ``portcast.region``. Every user function it calls is traced too.
    args, kwargs : tuple, dict
        The call's arguments (not copied: in-place updates happen as in the original).
    region : str, optional
        Region name; default ``fn.__qualname__`` (or the name given to ``portcast.region``).
    sinks : iterable of TraceSink
        Each receives ``start_region``, the chunks, ``end_region``.
    mode : {"auto", "interpreted", "compiled"}
        ``auto`` compiles the instrumented region with Numba when it can, else interprets it (with a one-line
        notice on stderr).
    chunk_records : int
        Records per chunk handed to the sinks (compiled mode hands over at most 2^16 at a time).
    measure_uninstrumented : bool
        Before tracing, time the original function on deep copies of the arguments (njit-compiled when
        Numba can compile it, else plain Python; warm-up, then best of 3) and store the wall time in
        ``info.uninstrumented_time_s`` (and ``info.extra["uninstrumented_mode"]``: "njit" or "python").

    Returns
    -------
    TraceResult
        ``.info`` (RegionInfo: records, mode, wall time, complete, ...), ``.static`` (StaticTable),
        ``.value`` (the function's return value).
    """
    kwargs = dict(kwargs or {})
    if chunk_records < 1:
        raise ValueError(f"chunk_records must be >= 1, got {chunk_records}")
    base = ins.unwrap_callable(fn)
    if not isinstance(base, pytypes.FunctionType):
        raise TypeError(f"trace_function needs a Python function (or njit dispatcher), got {type(fn).__name__}")
    name = region or getattr(fn, "__portcast_region__", None) or base.__qualname__
    if not ins.Instrumenter("interpreted").signature_ok(base):
        raise ins.UnsupportedConstruct(
            f"{base.__code__.co_filename}:{base.__code__.co_firstlineno}: {base.__qualname__} has *args/**kwargs "
            "parameters, which the tracer does not support"
        )
    sig = inspect.signature(base)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"cannot call {base.__qualname__} with the given arguments: {exc}") from None
    bound.apply_defaults()
    positional = [bound.arguments[p] for p in sig.parameters]
    label = f"{name!r} ({base.__code__.co_filename}:{base.__code__.co_firstlineno})"
    prog, used = _choose_mode(mode, lambda m: _program_for(base, m), positional, label)
    source = f"{base.__module__}:{base.__qualname__}"
    baseline = _measure(fn, positional) if measure_uninstrumented else None
    value, info = _run_region(name, prog, positional, sinks, chunk_records, used, source, baseline=baseline)
    return TraceResult(info=info, static=prog.static, value=value)


# ----------------------------------------------------------------------------------------------------------
# blocks (with-regions and region_start/region_end in a profiled script)


@dataclasses.dataclass
class BlockSpec:
    block_id: int
    name: str
    file: str
    line: int
    body: list
    function: str
    used: list[str]
    assigned: list[str]


def _names(stmts) -> tuple[list[str], list[str]]:
    used, assigned = [], []
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name):
                if n.id not in used:
                    used.append(n.id)
                if isinstance(n.ctx, ast.Store) and n.id not in assigned:
                    assigned.append(n.id)
    return used, assigned


class ScriptTransformer(ast.NodeTransformer):
    """Turns marked blocks of a script into calls ``_pc_session.run_block(...)`` (original code kept for
    when the region is not selected), and reports misplaced start/end markers before anything runs."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.blocks: list[BlockSpec] = []
        self.func_stack: list[str] = ["<module>"]

    def visit_FunctionDef(self, node):
        self.func_stack.append(node.name)
        self.generic_visit(node)
        self.func_stack.pop()
        return node

    def _block(self, name_node, body, line, original):
        for st in body:
            for n in ast.walk(st):
                if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)):
                    raise ins.UnsupportedConstruct(f"{self.file}:{n.lineno}: return/yield inside a marked block is not "
                                                   "supported")
                if isinstance(n, (ast.Break, ast.Continue)) and not _inside_loop(body, n):
                    raise ins.UnsupportedConstruct(f"{self.file}:{n.lineno}: break/continue leaving a marked block is "
                                                   "not supported")
        used, assigned = _names(body)
        spec = BlockSpec(
            len(self.blocks), "", self.file, line, copy.deepcopy(body), self.func_stack[-1], used, assigned
        )
        self.blocks.append(spec)
        name_src = ast.unparse(name_node)
        scope = "globals()" if self.func_stack[-1] == "<module>" else "locals()"
        src = [f"if _pc_session.wants({name_src}):", f"    _pc_r = _pc_session.run_block({name_src}, {spec.block_id}, "
                                                     f"{scope}, globals())"]
        for a in assigned:
            src.append(f"    if {a!r} in _pc_r: {a} = _pc_r[{a!r}]")
        src.append("else:\n    pass")
        new = ast.parse("\n".join(src)).body[0]
        for n in ast.walk(new):
            if "lineno" in n._attributes:
                n.lineno = n.end_lineno = line
                n.col_offset = n.end_col_offset = 0
        new.orelse = original
        return new

    def _stmts(self, stmts):
        out = []
        i = 0
        stmts = [self.visit(s) if not isinstance(s, ast.FunctionDef) else self.visit_FunctionDef(s) for s in stmts]
        flat = []
        for s in stmts:
            flat.extend(s if isinstance(s, list) else [s])
        stmts = flat
        while i < len(stmts):
            s = stmts[i]
            nm = _marker_call(s, "region_start")
            if nm is not None:
                j = next((k for k in range(i + 1, len(stmts)) if _marker_call(stmts[k], "region_end") is not None
                          and ast.unparse(_marker_call(stmts[k], "region_end")) == ast.unparse(nm)), None)
                if j is None:
                    raise ins.UnsupportedConstruct(
                        f"{self.file}:{s.lineno}: region_start({ast.unparse(nm)}) has no matching region_end in the "
                        "same block"
                    )
                body = stmts[i + 1:j]
                out.append(self._block(nm, body, s.lineno, stmts[i:j + 1]))
                i = j + 1
                continue
            nm = _marker_call(s, "region_end")
            if nm is not None:
                raise ins.UnsupportedConstruct(f"{self.file}:{s.lineno}: region_end({ast.unparse(nm)}) without a "
                                               "region_start before it in the same block")
            out.append(s)
            i += 1
        return out

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self._stmts(value))
            elif isinstance(value, list):
                for k, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        value[k] = self.visit(v)
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_With(self, node):
        self.generic_visit(node)
        if (
            len(node.items) == 1
            and ins.is_region_call(node.items[0].context_expr)
            and node.items[0].optional_vars is None
        ):
            return self._block(node.items[0].context_expr.args[0], node.body, node.lineno, [node])
        return node

    def visit_Module(self, node):
        node.body = self._stmts(node.body)
        return node


def _inside_loop(body, target) -> bool:
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, (ast.For, ast.While)) and any(m is target for m in ast.walk(n)):
                return True
    return False


def _marker_call(stmt, which: str):
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == which and len(stmt.value.args) == 1:
            return stmt.value.args[0]
    return None


class Session:
    """The active profiling session: the markers delegate to it while a script runs under the profiler."""

    def __init__(self, sinks=(), mode: str = "auto", regions=None, chunk_records: int = DEFAULT_CHUNK_RECORDS,
                 source: str = "", measure_uninstrumented: bool = False) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.measure_uninstrumented = measure_uninstrumented
        self.sinks = list(sinks)
        self.mode = mode
        self.regions = set(regions) if regions else None
        self.chunk_records = chunk_records
        self.source = source
        self.infos: list[RegionInfo] = []
        self.blocks: dict[int, BlockSpec] = {}
        self._invocations: dict[str, int] = {}
        self._depth = 0
        self._block_programs: dict = {}

    def wants(self, name: str) -> bool:
        return self._depth == 0 and (self.regions is None or name in self.regions)

    def _next_invocation(self, name):
        k = self._invocations.get(name, 0)
        self._invocations[name] = k + 1
        return k

    # called by the @region wrapper
    def call_region(self, name, fn, args, kwargs):
        if not self.wants(name):
            return fn(*args, **kwargs)
        base = ins.unwrap_callable(fn)
        sig = inspect.signature(base)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        positional = [bound.arguments[p] for p in sig.parameters]
        label = f"{name!r} ({base.__code__.co_filename}:{base.__code__.co_firstlineno})"
        prog, used = _choose_mode(self.mode, lambda m: _program_for(base, m), positional, label)
        baseline = _measure(fn, positional) if self.measure_uninstrumented else None
        self._depth += 1
        try:
            value, info = _run_region(
                name,
                prog,
                positional,
                self.sinks,
                self.chunk_records,
                used,
                f"{self.source or base.__module__}:{base.__qualname__}",
                self._next_invocation(name),
                baseline=baseline,
            )
        finally:
            self._depth -= 1
        self.infos.append(info)
        return value

    def run_block(self, name, block_id: int, scope: dict, module_globals: dict) -> dict:
        spec = self.blocks[block_id]
        params, ns = [], dict(module_globals)
        for n in spec.used:
            if n in scope:
                v = scope[n]
                if isinstance(v, (pytypes.ModuleType, type, pytypes.FunctionType, pytypes.BuiltinFunctionType)) or \
                        hasattr(v, "py_func") or getattr(v, "__portcast_region__", None):
                    ns[n] = v
                else:
                    params.append(n)
        positional = [scope[p] for p in params]
        label = f"{name!r} ({spec.file}:{spec.line})"

        def build(mode):
            key = (block_id, mode, tuple(params))
            prog = self._block_programs.get(key)
            if prog is None:
                fdef = ast.FunctionDef(
                    name=f"block_{block_id}",
                    args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                                       kw_defaults=[], kwarg=None, defaults=[]),
                    body=copy.deepcopy(spec.body) or [ast.Pass()], decorator_list=[], returns=None, type_params=[],
                )
                ast.copy_location(fdef, spec.body[0] if spec.body else ast.Pass(lineno=spec.line, col_offset=0))
                inst = ins.Instrumenter(mode)
                outs = [a for a in spec.assigned]
                inst.block(fdef, spec.file, f"{spec.function}:{name}", ns, outs if mode == "compiled" else [])
                if mode == "interpreted":
                    inst.prog.root.node.body = _dict_return(inst.prog.root.node.body, outs)
                prog = self._block_programs[key] = inst.build()
            return prog

        prog, used = _choose_mode(self.mode, build, positional, label)
        self._depth += 1
        try:
            value, info = _run_region(name, prog, positional, self.sinks, self.chunk_records, used,
                                      f"{spec.file}:{spec.line}", self._next_invocation(name))
        finally:
            self._depth -= 1
        self.infos.append(info)
        if isinstance(value, dict):
            return value
        return dict(zip(spec.assigned, value))

    # marker calls executed outside a transformed script: nothing can be traced there
    def enter_block(self, name):
        if self.wants(name):
            _notice(f"region {name!r}: with-blocks are traced only in the profiled script itself; this one runs "
                    "untraced")

    def exit_block(self, name, exc):
        pass

    def region_start(self, name):
        self.enter_block(name)

    def region_end(self, name):
        pass


def _dict_return(body, outs):
    """Replace ``return (...)`` of an interpreted block by a dict of the outputs bound at the end."""

    class R(ast.NodeTransformer):
        def visit_Return(self, node):
            new = ast.parse(
                "return {k: v for k, v in locals().items() if k in " + repr(set(outs) or {"_pc_none"}) + "}"
            ).body[0]
            return ast.copy_location(new, node)

    return [R().visit(s) for s in body]


def profile_script(
    path,
    argv: Sequence[str] = (),
    *,
    sinks: Iterable = (),
    mode: str = "auto",
    regions=None,
    chunk_records: int = DEFAULT_CHUNK_RECORDS,
    measure_uninstrumented: bool = False,
) -> list[RegionInfo]:
    """Run a script as ``__main__`` and trace every marked region it executes, every invocation.

    Parameters
    ----------
    path : str or Path
        The script. Its ``with portcast.region(...)`` blocks and ``region_start``/``region_end`` pairs are
        found before it runs; misplaced markers and unsupported constructs are reported then.
    argv : sequence of str
        ``sys.argv[1:]`` for the script.
    sinks : iterable of TraceSink
    mode : {"auto", "interpreted", "compiled"}
    regions : iterable of str, optional
        Trace only these region names (the others run untraced).
    measure_uninstrumented : bool
        For function regions (``@portcast.region``), time an uninstrumented run first, as
        :func:`trace_function` does. Marked blocks (``with``, ``region_start``/``region_end``) cannot be re-run
        without repeating their side effects on the script's state: their ``uninstrumented_time_s`` stays None.

    Returns
    -------
    list of RegionInfo
        One per traced region invocation, in the order they ended.
    """
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such script")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise ins.UnsupportedConstruct(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    tr = ScriptTransformer(path)
    tree = tr.visit(tree)
    ast.fix_missing_locations(tree)
    code = compile(tree, path, "exec")
    session = Session(sinks=sinks, mode=mode, regions=regions, chunk_records=chunk_records, source=path,
                      measure_uninstrumented=measure_uninstrumented)
    session.blocks = {b.block_id: b for b in tr.blocks}
    module = pytypes.ModuleType("__main__")
    module.__file__ = path
    module.__dict__["__builtins__"] = builtins
    module.__dict__["_pc_session"] = session
    saved = (sys.argv, sys.path[0] if sys.path else None, sys.modules.get("__main__"), _markers._state.session)
    sys.argv = [path, *map(str, argv)]
    sys.path.insert(0, os.path.dirname(path))
    sys.modules["__main__"] = module
    _markers._state.session = session
    try:
        exec(code, module.__dict__)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise
    finally:
        sys.argv = saved[0]
        if sys.path and sys.path[0] == os.path.dirname(path):
            sys.path.pop(0)
        if saved[2] is not None:
            sys.modules["__main__"] = saved[2]
        _markers._state.session = saved[3]
    return session.infos


del np
