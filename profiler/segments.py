"""A script's run as segments: when each marked region invocation ran (an untraced run), and which arrays each
region invocation reads and writes and which the host code between them writes (the traced run).

Two runs of the same script give the whole-program view its facts:

* :func:`time_script` runs the script as written, with markers that only read the clock
  (:class:`TimingSession`): each outermost region invocation's start and end, so the host code between two
  regions is the gap between them, timed at full speed. Nested regions belong to the outermost.
* :class:`ArrayUses`, a trace sink of the traced run, learns each region invocation's arrays from its trace:
  every argument array (an allocation, as the trace addresses it) the region loads from is read, every one it
  stores to is written, and one it writes fewer bytes of than it holds is read too (the rest must be where it
  runs). A digest of every array seen so far, taken when a region starts and when it ends, tells which arrays
  the host code between two regions wrote. The host code's reads are not traced: it is taken to read what it
  writes; a region's return value is read by the host code after it. Code whose reads matter is marked as a
  region of its own.

The two runs are paired by region name and invocation; a script that takes another path under the tracer
(random input without a seed, a clock) cannot be paired, and :func:`pair` says where they part.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import gc
import hashlib
import os
import sys
import time
import types as pytypes
import weakref
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from core.trace_schema import Op

from . import markers as _markers
from .runtime import allocation_of, device_delta


class SegmentError(ValueError):
    """The timed and the traced run of a script do not match, or a script cannot be timed."""


@dataclasses.dataclass(frozen=True)
class RegionSpan:
    """One outermost region invocation of the untraced run: seconds since the script started."""

    name: str
    invocation: int
    start: float
    end: float


@dataclasses.dataclass(frozen=True)
class Timeline:
    """The untraced run: its region invocations in order and the whole run's seconds."""

    spans: tuple[RegionSpan, ...]
    total_s: float

    def host_gaps(self) -> list[float]:
        """Seconds of host code before each region invocation, and after the last (one more than spans)."""
        gaps, t = [], 0.0
        for s in self.spans:
            gaps.append(max(0.0, s.start - t))
            t = s.end
        gaps.append(max(0.0, self.total_s - t))
        return gaps


class TimingSession:
    """Markers that read the clock: the outermost region invocations of a run, nothing traced."""

    def __init__(self, regions=None) -> None:
        self.regions = set(regions) if regions else None
        self.spans: list[RegionSpan] = []
        self._open: list[tuple[str, float, bool]] = []  # (name, start, recorded) of each entered region
        self._invocations: dict[str, int] = {}
        self._t0 = time.perf_counter()

    def _enter(self, name: str) -> None:
        outer = not any(rec for _, _, rec in self._open)
        record = outer and (self.regions is None or name in self.regions)
        self._open.append((name, time.perf_counter(), record))

    def _exit(self, name: str) -> None:
        t = time.perf_counter()
        if not self._open:
            return
        opened, start, record = self._open.pop()
        if record:
            k = self._invocations.get(opened, 0)
            self._invocations[opened] = k + 1
            self.spans.append(RegionSpan(opened, k, start - self._t0, t - self._t0))

    def call_region(self, name, fn, args, kwargs):
        self._enter(name)
        try:
            return fn(*args, **kwargs)
        finally:
            self._exit(name)

    def enter_block(self, name):
        self._enter(name)

    def exit_block(self, name, exc):
        self._exit(name)

    def region_start(self, name):
        self._enter(name)

    def region_end(self, name):
        self._exit(name)

    def timeline(self) -> Timeline:
        return Timeline(tuple(self.spans), time.perf_counter() - self._t0)


def run_as_main(path: str, code, session, argv: Sequence[str] = (), extra: Optional[dict] = None) -> None:
    """Run compiled ``code`` of the script at ``path`` as ``__main__`` with ``argv`` and ``session`` as the
    markers' session; ``sys.argv``, ``sys.path``, ``__main__`` and the session are restored after. A
    ``SystemExit`` with status 0 or None is a normal end."""
    module = pytypes.ModuleType("__main__")
    module.__file__ = path
    module.__dict__["__builtins__"] = builtins
    module.__dict__.update(extra or {})
    saved = (sys.argv, sys.modules.get("__main__"), _markers._state.session)
    sys.argv = [path, *map(str, argv)]
    sys.path.insert(0, os.path.dirname(path))
    sys.modules["__main__"] = module
    _markers._state.session = session
    try:
        try:
            exec(code, module.__dict__)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                raise
        ended = getattr(session, "script_ended", None)
        if ended is not None:  # while the script's globals are still alive
            ended()
    finally:
        sys.argv = saved[0]
        if sys.path and sys.path[0] == os.path.dirname(path):
            sys.path.pop(0)
        if saved[1] is not None:
            sys.modules["__main__"] = saved[1]
        _markers._state.session = saved[2]


def time_script(path, argv: Sequence[str] = (), regions=None) -> Timeline:
    """Run the script as written, untraced, and time its outermost region invocations."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such script")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    try:
        code = compile(ast.parse(source, filename=path), path, "exec")
    except SyntaxError as exc:
        raise SegmentError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    session = TimingSession(regions)
    run_as_main(path, code, session, argv)
    return session.timeline()


@dataclasses.dataclass
class RegionArrays:
    """One traced region invocation's arrays (by name), and what the host code before it wrote."""

    name: str
    invocation: int
    reads: list[str]
    writes: list[str]
    host_writes: list[str]  # written by the host code between the previous region and this one
    result_bytes: int = 0  # the bytes of what the region returned (read by the host code after it)


class _Array:
    __slots__ = ("name", "nbytes", "ref", "digest")

    def __init__(self, name: str, owner: np.ndarray) -> None:
        self.name, self.nbytes = name, int(owner.nbytes)
        self.ref = weakref.ref(owner)
        self.digest = _digest(owner)


def _digest(a: np.ndarray) -> bytes:
    data = a if a.flags.c_contiguous else np.ascontiguousarray(a)
    return hashlib.blake2b(memoryview(data).cast("B"), digest_size=16).digest()


def _owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class ArrayUses:
    """A trace sink (and the session's region-argument observer) that learns which arrays each region
    invocation reads and writes, and which arrays the host code between regions writes.

    An array is named after the first region parameter it was passed as (``u``), made unique by a suffix
    (``u.2``) when two arrays share a name. When the script ends, :meth:`script_ended` (called by the session
    while the script's globals are alive) takes the host's last writes and the arrays the program still holds."""

    def __init__(self) -> None:
        self.arrays: dict[int, _Array] = {}  # allocation's lowest CPU byte -> array
        self.names: set[str] = set()
        self.sizes: dict[str, int] = {}  # every array ever named (a freed one's address may be reused)
        self.results: list[RegionArrays] = []
        self.tail_writes: list[str] = []
        self.live: list[str] = []
        self._current: Optional[RegionArrays] = None
        self._dev_low = np.zeros(0, np.int64)
        self._dev_high = np.zeros(0, np.int64)
        self._keys: list[int] = []
        self._loaded = np.zeros(0, np.int64)
        self._stored = np.zeros(0, np.int64)

    # the session's observer calls
    def region_arguments(self, names: Sequence[str], positional: Sequence[Any]) -> None:
        host = self._changed()
        keys = []
        for pname, v in zip(names, positional):
            if not isinstance(v, np.ndarray):
                continue
            owner = _owner(v)
            low = allocation_of(owner)[0]
            if low not in self.arrays or self.arrays[low].ref() is not owner:
                self._track(low, pname, owner)
            if low not in keys:
                keys.append(low)
        keys.sort()
        self._keys = keys
        lows = np.array(keys, np.int64)
        sizes = np.array([self.arrays[k].nbytes for k in keys], np.int64)
        self._dev_low = np.array([device_delta(k) + k for k in keys], np.int64) if keys else lows
        self._dev_high = self._dev_low + sizes
        self._loaded = np.zeros(len(keys), np.int64)
        self._stored = np.zeros(len(keys), np.int64)
        self._current = RegionArrays("", -1, [], [], host)

    def region_value(self, value: Any) -> None:
        """What the last region returned: an array it made is written by it (and so where it ran), a scalar
        is read by the host code after it."""
        if not self.results:
            return
        r = self.results[-1]
        for v in _leaves(value):
            if isinstance(v, np.ndarray):
                owner = _owner(v)
                low = allocation_of(owner)[0]
                if low not in self.arrays or self.arrays[low].ref() is not owner:
                    r.writes.append(self._track(low, f"{r.name}.out", owner).name)
            else:
                r.result_bytes += _scalar_bytes(v)

    # the trace sink calls
    def start_region(self, info, static) -> None:
        if self._current is None:  # a region whose arguments were not announced (no arrays known)
            self._current = RegionArrays("", -1, [], [], self._changed())
        self._current.name, self._current.invocation = info.name, info.invocation

    def consume(self, chunk) -> None:
        if not len(self._keys):
            return
        mem = (chunk.op == Op.LOAD) | (chunk.op == Op.STORE)
        addr, size, store = chunk.addr[mem], chunk.size[mem].astype(np.int64), chunk.op[mem] == Op.STORE
        k = np.searchsorted(self._dev_low, addr, side="right") - 1
        inside = (k >= 0) & (addr < self._dev_high[np.maximum(k, 0)])
        np.add.at(self._loaded, k[inside & ~store], size[inside & ~store])
        np.add.at(self._stored, k[inside & store], size[inside & store])

    def end_region(self, info, static) -> None:
        cur = self._current
        if cur is None:
            return
        for j, key in enumerate(self._keys):
            a = self.arrays[key]
            if self._loaded[j] or (self._stored[j] and self._stored[j] < a.nbytes):
                cur.reads.append(a.name)
            if self._stored[j]:
                cur.writes.append(a.name)
        cur.reads.sort()  # by name, not by where the CPU put the arrays
        cur.writes.sort()
        for a in self.arrays.values():  # the host code after this region is compared with the state now
            owner = a.ref()
            if owner is not None:
                a.digest = _digest(owner)
        self.results.append(cur)
        self._current, self._keys = None, []

    def script_ended(self) -> None:
        """The arrays the host code after the last region wrote, and those the program still holds when its
        last line has run (its results: an array it no longer holds need not come back from the GPU)."""
        self.tail_writes = self._changed()
        gc.collect()  # arrays only a reference cycle (a finished frame, a traceback) still holds are gone
        self.live = sorted(a.name for a in self.arrays.values() if a.ref() is not None)

    def _changed(self) -> list[str]:
        out = []
        for a in self.arrays.values():
            owner = a.ref()
            if owner is None:
                continue
            d = _digest(owner)
            if d != a.digest:
                out.append(a.name)
                a.digest = d
        return out

    def _track(self, low: int, name: str, owner: np.ndarray) -> _Array:
        a = self.arrays[low] = _Array(self._unique(name), owner)
        self.sizes[a.name] = a.nbytes
        return a

    def _unique(self, name: str) -> str:
        out, k = name, 1
        while out in self.names:
            k += 1
            out = f"{name}.{k}"
        self.names.add(out)
        return out

    def array_bytes(self) -> dict[str, int]:
        """The bytes of every array seen, by name (those freed during the run too)."""
        return dict(self.sizes)


def _leaves(value: Any, depth: int = 4):
    """The arrays and scalars in a returned value (tuples, lists and dict values, ``depth`` levels deep)."""
    if isinstance(value, (tuple, list)) and depth > 0:
        for v in value:
            yield from _leaves(v, depth - 1)
    elif isinstance(value, dict) and depth > 0:
        for v in value.values():
            yield from _leaves(v, depth - 1)
    elif value is not None:
        yield value


def _scalar_bytes(v: Any) -> int:
    if isinstance(v, np.generic):
        return int(v.nbytes)
    if isinstance(v, complex):
        return 16
    if isinstance(v, (bool, int, float)):
        return 8
    return 0


def pair(timeline: Timeline, traced: Sequence[RegionArrays]) -> None:
    """Check that the untraced and the traced run invoked the same regions in the same order."""
    a = [(s.name, s.invocation) for s in timeline.spans]
    b = [(r.name, r.invocation) for r in traced]
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            raise SegmentError(f"the untraced and the traced run part at region invocation {i}: {x[0]} #{x[1]} "
                               f"untraced, {y[0]} #{y[1]} traced (does the script depend on a clock or an "
                               "unseeded random number?)")
    if len(a) != len(b):
        raise SegmentError(f"the untraced run invoked {len(a)} regions and the traced run {len(b)}")
