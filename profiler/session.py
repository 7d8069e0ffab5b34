"""Running instrumented regions: :func:`trace_function`, :func:`profile_script` and the marker session.

A region invocation goes: instrument (cached per root and mode) -> ``start_region`` on every sink ->
run the instrumented code, which hands bounded chunks to the sinks as its buffer fills -> flush the rest ->
``end_region`` (also after an exception or Ctrl-C, then with ``complete=False``; the exception is re-raised
with a note saying what was kept).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import os
import sys
import time
import types as pytypes
from typing import Any, Iterable, Sequence

from core.version import portcast_version

from . import instrument as ins
from . import libcalls as _lib
from . import runtime as rt
from .baseline import KINDS as BASELINE_KINDS
from .baseline import Baseline
from .baseline import measure_uninstrumented as _measure_baseline
from .compile_errors import NotCompilable, describe_failure
from .repeat_timing import RepeatRule
from .sampling import MAX_TID, RECORDS, SampleFilter, SamplePlan
from .script_blocks import BlockSpec, ScriptTransformer, _dict_return
from .segments import run_as_main
from .trace import DEFAULT_CHUNK_RECORDS, RegionInfo, StaticTable, TraceChunk
from .user_code import unwrap_callable

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

    def __init__(self, program: ins.Program, sinks: Sequence, info: RegionInfo,
                 sample: SamplePlan | None = None) -> None:
        self.program = program
        self.sinks = list(sinks)
        self.info = info
        self.n_records = 0
        self.max_tid = -1
        self.filter = SampleFilter(sample, self.sinks, len(program.static) + 1) if sample is not None else None
        for s in self.sinks:
            if self.filter is not None and hasattr(s, "bind_sample_filter"):
                s.bind_sample_filter(self.filter)

    def deliver(self, chunk: TraceChunk, max_tid: int | None = None) -> None:
        """Count ``chunk`` and hand it to every sink (``max_tid``: its largest tid, when the caller knows it);
        under a sample plan, the sampled part of it (:class:`profiler.sampling.SampleFilter`)."""
        n = len(chunk)
        if not n:
            return
        self.n_records += n
        m = int(chunk.tid.max()) if max_tid is None else int(max_tid)
        if m > self.max_tid:
            self.max_tid = m
        if self.filter is not None:
            self.filter.filter(chunk)
            return
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


def _run_region(name, prog: ins.Program, positional: list, sinks, chunk_records: int, mode: str, source: str,
                invocation: int | None = None, compile_key=None, baseline: "Baseline | None" = None,
                baseline_skipped: str | None = None, sample=None, sample_why: str | None = None):
    """Run ``prog.root`` on ``positional`` while tracing; returns (value, info). ``baseline``: the
    uninstrumented runs' measurement, stored in the region metadata (``baseline_skipped``: why it was asked
    for and not made). ``sample``: None (the exact trace), a :class:`profiler.sampling.SamplePlan`, or
    ``"auto"`` (:func:`auto_plan` from the baseline; exact without one); ``sample_why``: why ``--sample auto``
    traces this invocation exactly, when the caller decided (a marked block)."""
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
        baseline.store(info)
    elif baseline_skipped:
        info.extra["uninstrumented_skipped"] = baseline_skipped
    plan = auto_plan(baseline, mode) if isinstance(sample, str) else sample
    if isinstance(sample, str):
        info.extra["sample_auto"] = "sampled" if plan is not None else (
            "exact: small enough" if baseline is not None and baseline.seconds else
            "exact: no uninstrumented time to size the sample from")
    elif sample_why:
        info.extra["sample_auto"] = sample_why
    if plan is not None and not _has_thread_space(prog.thread_space):
        plan = dataclasses.replace(plan, intervals=True)  # no parallel loop: sample the sequential trace
    tracer = _Tracer(prog, sinks, info, plan)
    fn = prog.root.fn
    if mode == "compiled":
        buf = rt.CompiledBuffer(tracer, chunk_records, prog.n_sites, _lib.SLOT_WIDTH * prog.n_lib_slots)
        buf.allocations = rt.allocation_table(positional)  # the arrays from Python, mapped when decoded
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
    if tracer.filter is not None:  # it counted every record, those the compiled buffer never decoded too
        counts = tracer.filter.finish()
        info.n_records = counts[RECORDS]
        info.n_threads = counts[MAX_TID] + 1
        info.extra["sample"] = counts.to_json()
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
            raise NotCompilable(f"argument {name!r} is {what}, which Numba-compiled code does not take")
        try:
            sig.append(numba.typeof(a))
        except ValueError:
            raise NotCompilable(f"argument {name!r} ({_type_name(a)}) has no Numba type") from None
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


#: ``info.extra["uninstrumented_skipped"]`` of a marked block when a baseline was asked for
BLOCK_NOT_RERUN = ("marked blocks of a script are not re-run (their side effects would repeat; a function marked "
                   "with @portcast.region is timed)")


def check_baseline_options(kind: str, rule) -> None:
    """A ValueError for a ``baseline_kind`` not in :data:`profiler.baseline.KINDS`, a TypeError for a
    ``baseline_rule`` that is not a :class:`RepeatRule`, each naming the parameter."""
    if kind not in BASELINE_KINDS:
        raise ValueError(f"baseline_kind must be one of {', '.join(BASELINE_KINDS)}, got {kind!r}")
    if rule is not None and not isinstance(rule, RepeatRule):
        raise TypeError(f"baseline_rule must be a profiler.repeat_timing.RepeatRule, got {type(rule).__name__}")


def _has_thread_space(ts) -> bool:
    """Whether a program's thread space (``prog.thread_space``) has a parallel loop (a region without one may
    still expand NumPy operations on arrays into threads: those are sampled by blocks all the same)."""
    return bool(ts) and (ts.get("how") not in (None, "none") or bool(ts.get("loops")))


#: records per second of an uninstrumented run, by how it ran: what ``--sample auto`` sizes a region by (on
#: the high side, so that a region is rather sampled more than less; the rate only sets the cost, not the bias)
AUTO_RECORDS_PER_S = {"njit": 4e9, "python": 4e7}


def auto_plan(baseline, mode: str) -> "SamplePlan | None":
    """The sample plan of ``--sample auto`` for a region whose uninstrumented run ``baseline`` measured: the
    rate that leaves the sinks about :data:`profiler.sampling.AUTO_BUDGET_RECORDS` records; None (exact) for a
    region smaller than that, or with no measured time."""
    if baseline is None or not baseline.seconds:
        return None
    rate = AUTO_RECORDS_PER_S["njit" if baseline.how == "njit" else "python"]
    return SamplePlan.auto(baseline.seconds * rate)


def _measure(fn, positional, kind: str = "as-written", rule: RepeatRule | None = None) -> Baseline:
    return _measure_baseline(fn, positional, kind=kind, rule=rule)


def trace_function(fn, args=(), kwargs=None, *, region: str | None = None, sinks: Iterable = (), mode: str = "auto",
                   chunk_records: int = DEFAULT_CHUNK_RECORDS, measure_uninstrumented: bool = False,
                   baseline_kind: str = "as-written", baseline_rule: RepeatRule | None = None,
                   sample=None) -> TraceResult:
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
        Before tracing, time the original function on deep copies of the arguments
        (:func:`profiler.baseline.measure_uninstrumented`: a warm-up, then repeated runs until their spread is
        small) and store the median in ``info.uninstrumented_time_s``, the rest in ``info.extra``
        (:meth:`profiler.baseline.Baseline.store`).
    baseline_kind : {"as-written", "njit"}
        What is timed: the code as written (default) or compiled with ``numba.njit`` by Portcast.
    baseline_rule : RepeatRule, optional
        When the repetition stops (:class:`profiler.repeat_timing.RepeatRule`; default ``RepeatRule()``).
    sample : None, SamplePlan or "auto"
        None: every record goes to the sinks. A :class:`profiler.sampling.SamplePlan`: the sampled warps and
        the address sample do, and ``info.extra["sample"]`` gets the exact counts of the whole region.
        ``"auto"``: a plan sized from the uninstrumented run (:func:`auto_plan`), exact without one.

    Returns
    -------
    TraceResult
        ``.info`` (RegionInfo: records, mode, wall time, complete, ...), ``.static`` (StaticTable),
        ``.value`` (the function's return value).
    """
    kwargs = dict(kwargs or {})
    check_baseline_options(baseline_kind, baseline_rule)
    if chunk_records < 1:
        raise ValueError(f"chunk_records must be >= 1, got {chunk_records}")
    base = unwrap_callable(fn)
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
    baseline = _measure(fn, positional, baseline_kind, baseline_rule) if measure_uninstrumented else None
    value, info = _run_region(name, prog, positional, sinks, chunk_records, used, source, baseline=baseline,
                              sample=sample)
    return TraceResult(info=info, static=prog.static, value=value)


class Session:
    """The active profiling session: the markers delegate to it while a script runs under the profiler."""

    def __init__(self, sinks=(), mode: str = "auto", regions=None, chunk_records: int = DEFAULT_CHUNK_RECORDS,
                 source: str = "", measure_uninstrumented: bool = False, baseline_kind: str = "as-written",
                 baseline_rule: RepeatRule | None = None, sample=None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        check_baseline_options(baseline_kind, baseline_rule)
        self.measure_uninstrumented = measure_uninstrumented
        self.baseline_kind, self.baseline_rule = baseline_kind, baseline_rule
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
        self.sample = sample
        self._records: dict[str, int] = {}  # records of each region's last invocation (sizes "auto" for blocks)

    def _plan(self, name, baseline):
        """The sample plan of a region invocation: ``sample`` as given; for ``"auto"``, sized from the
        uninstrumented run, or for a marked block (which is not rerun) from the region's previous invocation
        (its first one is exact)."""
        if self.sample != "auto":
            return self.sample
        if baseline is not None and baseline.seconds:
            return "auto"
        return SamplePlan.auto(self._records.get(name))

    def _block_why(self, name) -> str | None:
        """Why ``--sample auto`` traces a marked block's invocation exactly (None: it samples it, or was not
        asked to)."""
        if self.sample != "auto" or SamplePlan.auto(self._records.get(name)) is not None:
            return None
        if name not in self._records:
            return "exact: the first invocation of a marked block, which cannot be re-run to size a sample"
        return "exact: small enough (its previous invocation)"

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
        base = unwrap_callable(fn)
        sig = inspect.signature(base)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        positional = [bound.arguments[p] for p in sig.parameters]
        label = f"{name!r} ({base.__code__.co_filename}:{base.__code__.co_firstlineno})"
        prog, used = _choose_mode(self.mode, lambda m: _program_for(base, m), positional, label)
        self._observe("region_arguments", list(sig.parameters), positional)
        baseline = _measure(fn, positional, self.baseline_kind, self.baseline_rule) \
            if self.measure_uninstrumented else None
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
                sample=self._plan(name, baseline),
            )
        finally:
            self._depth -= 1
        self.infos.append(info)
        self._records[name] = info.n_records
        self._observe("region_value", value)
        return value

    def script_ended(self) -> None:
        """The profiled script's last line has run (its globals still alive): tell the sinks that watch."""
        self._observe("script_ended")

    def _observe(self, hook: str, *args) -> None:
        """Tell the sinks that watch region arguments and values (``profiler.segments.ArrayUses``)."""
        for s in self.sinks:
            fn = getattr(s, hook, None)
            if fn is not None:
                fn(*args)

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
        self._observe("region_arguments", params, positional)
        self._depth += 1
        try:
            value, info = _run_region(name, prog, positional, self.sinks, self.chunk_records, used,
                                      f"{spec.file}:{spec.line}", self._next_invocation(name),
                                      baseline_skipped=BLOCK_NOT_RERUN if self.measure_uninstrumented else None,
                                      sample=self._plan(name, None), sample_why=self._block_why(name))
        finally:
            self._depth -= 1
        self.infos.append(info)
        self._records[name] = info.n_records
        self._observe("region_value", value)
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


def profile_script(
    path,
    argv: Sequence[str] = (),
    *,
    sinks: Iterable = (),
    mode: str = "auto",
    regions=None,
    chunk_records: int = DEFAULT_CHUNK_RECORDS,
    measure_uninstrumented: bool = False,
    baseline_kind: str = "as-written",
    baseline_rule: RepeatRule | None = None,
    sample=None,
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
        :func:`trace_function` does (``baseline_kind``, ``baseline_rule`` as there). Marked blocks (``with``,
        ``region_start``/``region_end``) cannot be re-run without repeating their side effects on the script's
        state: their ``uninstrumented_time_s`` stays None and ``info.extra["uninstrumented_skipped"]`` says why.
    sample : None, SamplePlan or "auto"
        As for :func:`trace_function`; under ``"auto"`` a marked block is sized from its previous invocation
        (its first invocation is traced exactly).

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
                      measure_uninstrumented=measure_uninstrumented, baseline_kind=baseline_kind,
                      baseline_rule=baseline_rule, sample=sample)
    session.blocks = {b.block_id: b for b in tr.blocks}
    run_as_main(path, code, session, argv, {"_pc_session": session})
    return session.infos

