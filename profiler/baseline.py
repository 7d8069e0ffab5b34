"""Timing a region without the tracer, as its user runs it: :func:`measure_uninstrumented` and its :class:`Baseline`.

The speedup a report gives is against this time. Two kinds (:data:`KINDS`):

* ``as-written`` (the default): the code as the user wrote it. A plain Python function (NumPy calls and all) runs
  in the interpreter; a ``numba.njit`` function (or a region wrapping one) runs as that dispatcher, except a
  ``parallel=True`` one, which is timed single-threaded (:data:`SERIAL_NOTE`).
* ``njit``: the function compiled with ``numba.njit`` by Portcast when Numba can (the counterpart of the compiled
  tracing mode; a plain Python function when it cannot, with a note saying so).

Every run gets fresh deep copies of the arguments (not timed), so the user's data is never changed; one warm-up
run (which compiles) is not timed; then :func:`profiler.repeat_timing.time_repeated` repeats the call until the
spread of the times is small or the budget is spent, and the median is the time. While it runs, no profiling
session is active (a region the function calls runs as plain code, untraced) and NumPy's and Python's global
random states are restored afterwards.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import random
import time
from typing import Any, Callable

from . import markers as _markers
from .compile_errors import numba_error_types
from .repeat_timing import RepeatRule, time_repeated
from .user_code import unwrap_callable

#: the baselines :func:`measure_uninstrumented` can time
KINDS = ("as-written", "njit")

#: ``Baseline.note`` (and ``info.extra["uninstrumented_note"]``) when the region is a ``parallel=True`` dispatcher
SERIAL_NOTE = "serial: the function is parallel=True; timed single-threaded (prange runs as range)"
#: ``Baseline.note`` when the njit baseline was asked for and Numba cannot compile the region
NOT_COMPILABLE_NOTE = "Numba cannot compile it: timed as written"
#: ``Baseline.note`` when the user's own njit dispatcher cannot compile for these arguments
DISPATCHER_FAILED_NOTE = "its njit dispatcher cannot compile for these arguments: timed as plain Python"


@dataclasses.dataclass
class Baseline:
    """Wall time of uninstrumented runs of a region (see :func:`measure_uninstrumented`)."""

    seconds: float | None  # median of the timed runs; None when the region could not be run
    how: str  # "njit" (compiled with Numba) or "python" (interpreted)
    error: str | None = None  # why ``seconds`` is None
    note: str | None = None  # how the run differs from the kind asked for (SERIAL_NOTE, NOT_COMPILABLE_NOTE, ...)
    kind: str = "as-written"  # the baseline asked for (KINDS)
    as_written: bool = True  # what ran is the code as the user wrote it (False: njit-compiled by Portcast)
    timing: dict | None = None  # profiler.repeat_timing.Timing.to_dict() of the timed runs

    def label(self, numpy: bool = False) -> str:
        """What was timed, in words: ``NumPy as written`` (``numpy``: the region ran NumPy array operations),
        ``Python as written``, ``njit as written`` (the user's own Numba function) or ``njit-compiled by
        Portcast``."""
        if self.how == "njit":
            return "njit as written" if self.as_written else "njit-compiled by Portcast"
        return "NumPy as written" if numpy else "Python as written"

    def describe(self, numpy: bool = False, *, at: str = "") -> str:
        """``NumPy as written, median of 2,000 runs, IQR 3%``: the label (``at``: words after it, e.g. ``at n =
        1,000``), the note, and how many runs agreed how well (:func:`timing_words`)."""
        head = self.label(numpy) + (f" {at}" if at else "")
        if self.note:
            head += f"; {self.note}"
        return head + (f", {timing_words(self.timing)}" if self.timing else "")

    def store(self, info) -> None:
        """Put the measurement into a :class:`profiler.trace.RegionInfo` (its time and ``extra`` keys, which
        trace files keep): :meth:`from_info` reads it back."""
        info.uninstrumented_time_s = self.seconds
        info.extra["uninstrumented_mode"] = self.how
        info.extra["uninstrumented_kind"] = self.kind
        info.extra["uninstrumented_as_written"] = self.as_written
        if self.timing is not None:
            info.extra["uninstrumented_timing"] = dict(self.timing)
        if self.error:
            info.extra["uninstrumented_error"] = self.error
        if self.note:
            info.extra["uninstrumented_note"] = self.note

    @classmethod
    def from_info(cls, info) -> "Baseline | None":
        """The measurement :meth:`store` put into ``info`` (older trace files: best-of-3 njit runs, no timing),
        or None when the region was not measured."""
        extra = info.extra or {}
        if "uninstrumented_mode" not in extra:
            return None
        how = str(extra["uninstrumented_mode"])
        return cls(seconds=info.uninstrumented_time_s or None, how=how, error=extra.get("uninstrumented_error"),
                   note=extra.get("uninstrumented_note"), kind=str(extra.get("uninstrumented_kind", "njit")),
                   as_written=bool(extra.get("uninstrumented_as_written", how == "python")),
                   timing=extra.get("uninstrumented_timing"))


def uses_numpy(info) -> bool:
    """Whether a traced region ran NumPy array operations (expanded or estimated library calls)."""
    extra = info.extra or {}
    return bool(extra.get("library_work") or extra.get("library_expanded"))


def why_not_measured(info, default: str) -> str:
    """Why a region has no CPU time: the error of its uninstrumented run, why it was skipped (a marked block of
    a script), else ``default`` (e.g. ``--no-baseline``)."""
    extra = info.extra or {}
    err = extra.get("uninstrumented_error")
    if err:
        return f"it raised {err}"
    return str(extra.get("uninstrumented_skipped") or default)


def percent(x: float) -> str:
    """A share as a short percentage: 3.1%, 0.42%, 12%, 150%."""
    v = 100.0 * float(x)
    if v != v or v in (float("inf"), float("-inf")):
        return "inf%"
    return f"{v:.0f}%" if v >= 10 else f"{v:.2g}%"


def _seconds(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def timing_words(t: dict) -> str:
    """``median of 2,000 runs, IQR 3%``, and when the spread did not reach its target, why the runs stopped."""
    runs = int(t["runs"])
    words = f"median of {runs:,} run{'' if runs == 1 else 's'}, IQR {percent(t['spread'])}"
    if t.get("reached", True):
        return words
    if t.get("spread", 0.0) <= t.get("target_spread", 0.0):
        return words + f": only {runs} in the {_seconds(t['budget_s'])} budget"
    where = f"the {_seconds(t['budget_s'])} budget" if t.get("stopped_by") == "budget" else f"{runs:,} runs"
    return words + f": not below the {percent(t['target_spread'])} target in {where}"


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


_BASELINE_JIT: dict = {}  # (code object, parallel) -> dispatcher Portcast made for it, or None (Numba cannot)


def _portcast_dispatcher(fn, base, own):
    """The dispatcher Portcast times for ``fn`` (cached): for a ``parallel=True`` dispatcher ``own`` a serial
    copy with the same options (prange runs as range: the multi-threaded run's time swings with the machine's
    load); without ``own``, ``numba.njit(base)``."""
    import numba

    key = (base.__code__, own is not None)
    disp = _BASELINE_JIT.get(key, False)
    if disp is False:
        _overload_parallel_marker()
        if own is None:
            disp = numba.njit(base)
        else:
            opts = dict(own.targetoptions)
            opts.pop("nopython", None)  # implied by njit
            opts.pop("cache", None)  # Numba's cache index does not tell the serial and the parallel version apart
            opts["parallel"] = False
            disp = numba.njit(**opts)(base)
        _BASELINE_JIT[key] = disp
    return disp


_PARALLEL_OVERLOADED: list = []


def _overload_parallel_marker() -> None:
    """Let ``portcast.parallel(it)`` compile in njit code (as ``it``), so marked regions have an njit baseline."""
    if not _PARALLEL_OVERLOADED:
        from numba.extending import overload

        @overload(_markers.parallel)
        def _ol_parallel(iterable):
            return lambda iterable: iterable

        _PARALLEL_OVERLOADED.append(_ol_parallel)


def _python_of(fn):
    """``fn`` without its region decorators (the plain function, or the dispatcher they wrap)."""
    obj = fn
    for _ in range(8):
        if getattr(obj, "__portcast_region__", None) is not None and hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
            continue
        break
    return obj


def _fresh_copies(args) -> list:
    """Deep copies of the arguments (arrays keep their memory order; an argument passed twice stays one object),
    so a run cannot change them. Objects that refuse to be copied (modules, functions, ...) are passed as they
    are."""
    memo: dict = {}
    out = []
    for a in args:
        try:
            out.append(copy.deepcopy(a, memo))
        except Exception:
            out.append(a)
    return out


@contextlib.contextmanager
def _outside_the_session():
    """No profiling session while the baseline runs (a region it calls runs as plain code), and NumPy's and
    Python's global random states as they were before it."""
    import numpy

    session, _markers._state.session = _markers._state.session, None
    np_state, py_state = numpy.random.get_state(), random.getstate()
    try:
        yield
    finally:
        _markers._state.session = session
        numpy.random.set_state(np_state)
        random.setstate(py_state)


def _choose_runner(fn, base, kind: str, args) -> tuple[Callable, str, bool, str | None]:
    """(callable, how, as written, note) of the run to time."""
    own = _njit_dispatcher_of(fn)
    if own is not None:
        if own.targetoptions.get("parallel"):
            return _portcast_dispatcher(fn, base, own), "njit", True, SERIAL_NOTE
        return own, "njit", True, None
    if kind != "njit":
        return _python_of(fn), "python", True, None
    if any(isinstance(a, (list, set, dict)) for a in args):  # Python containers: as the compiled tracing mode
        return _python_of(fn), "python", True, NOT_COMPILABLE_NOTE
    disp = _portcast_dispatcher(fn, base, None)
    if disp is None:  # known from an earlier region
        return _python_of(fn), "python", True, NOT_COMPILABLE_NOTE
    return disp, "njit", False, None


def measure_uninstrumented(fn, args=(), *, kind: str = "as-written", rule: RepeatRule | None = None,
                           clock: Callable[[], float] = time.perf_counter) -> Baseline:
    """Time ``fn(*args)`` without the tracer, on deep copies of ``args``: a warm-up run, then repeated runs
    until their spread is small (``rule``), the median being the time.

    Parameters
    ----------
    fn : callable
        The region's function (plain, ``numba.njit`` dispatcher, or ``portcast.region``-decorated).
    args : sequence
        Positional arguments (all parameters, defaults applied). They are never modified: every run gets fresh
        deep copies (copying is not timed).
    kind : {"as-written", "njit"}
        ``as-written``: the code as written (a plain function interpreted, NumPy calls and all; a Numba
        dispatcher as it is). ``njit``: compiled with ``numba.njit`` when Numba can (else as written, with
        :data:`NOT_COMPILABLE_NOTE`). Either way a ``parallel=True`` dispatcher runs serially
        (:data:`SERIAL_NOTE`): the multi-threaded run's time swings with the machine's load, and the traced run
        is single-threaded.
    rule : RepeatRule, optional
        When to stop repeating (:class:`profiler.repeat_timing.RepeatRule`; default ``RepeatRule()``).
    clock : callable
        The timer (``time.perf_counter``); tests give a fake one.

    Returns
    -------
    Baseline
        ``seconds`` (median wall time), ``how`` ("njit" or "python"), ``kind``, ``as_written``, ``timing`` (runs,
        median, quartiles, spread, whether the target spread was reached), ``error`` when the region raised (then
        ``seconds`` is None), ``note``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    rule = rule or RepeatRule()
    base = unwrap_callable(fn)
    runner, how, written, note = _choose_runner(fn, base, kind, args)

    def result(seconds=None, error=None, timing=None) -> Baseline:
        return Baseline(seconds, how, error, note, kind, written, timing)

    with _outside_the_session():
        try:
            runner(*_fresh_copies(args))  # warm-up; compiles a dispatcher
        except Exception as exc:
            if how != "njit" or not isinstance(exc, numba_error_types()):
                return result(error=f"{type(exc).__name__}: {exc}")  # the region itself raised: no baseline
            if not written:  # Portcast's njit copy: Numba cannot compile the region
                _BASELINE_JIT[base.__code__, False] = None
                runner, how, written, note = _python_of(fn), "python", True, NOT_COMPILABLE_NOTE
            else:
                runner, how, note = base, "python", DISPATCHER_FAILED_NOTE
            try:
                runner(*_fresh_copies(args))
            except Exception as exc2:
                return result(error=f"{type(exc2).__name__}: {exc2}")
        try:
            t = time_repeated(runner, lambda: _fresh_copies(args), rule=rule, clock=clock)
        except Exception as exc:
            return result(error=f"{type(exc).__name__}: {exc}")
    return result(seconds=t.median_s, timing=t.to_dict())


def baseline_summary(b: Baseline | None, numpy: bool = False) -> dict[str, Any] | None:
    """A measured baseline as plain data for reports: kind, how, label, note, error and the timing's fields."""
    if b is None:
        return None
    out = {"kind": b.kind, "how": b.how, "as_written": b.as_written, "label": b.label(numpy),
           "description": b.describe(numpy), "note": b.note, "error": b.error}
    out.update(b.timing or {})
    return out
