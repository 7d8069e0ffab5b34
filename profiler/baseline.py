"""Timing a region as written, without the tracer: :func:`measure_uninstrumented` and its :class:`Baseline`.

The speedup a report gives is against this time: the function compiled with ``numba.njit`` when Numba can
(the counterpart of the compiled tracing mode; a ``parallel=True`` dispatcher timed single-threaded), else
plain Python; a warm-up run, then the best of a few, each on fresh deep copies of the arguments.
"""

from __future__ import annotations

import copy
import dataclasses
import time

from . import instrument as ins
from . import markers as _markers
from .compile_errors import numba_error_types


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
            except numba_error_types():
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
        if how == "njit" and isinstance(exc, numba_error_types()):  # a new argument type Numba cannot compile
            _BASELINE_JIT[key] = None
            return measure_uninstrumented(base, args, repeat=repeat, jit=False)
        return Baseline(None, how, f"{type(exc).__name__}: {exc}", _BASELINE_NOTE.get(key) if how == "njit" else None)
    return Baseline(best, how, note=_BASELINE_NOTE.get(key) if how == "njit" else None)
