"""How every output of Portcast writes a number or a place in the source: times, bytes, counts, speedups and
short ``file:line`` names, each in one function here.

The terminal tables, the prediction lines, the JSON report's readers and the HTML page all call these, so the
same quantity reads the same everywhere. Where two outputs have always written a quantity differently (the
bound table's ``"1.24 ms"`` and the prediction line's ``"1.243 ms"``), a parameter says which, so each output
keeps its text and there is still one function.
"""

from __future__ import annotations

import functools
import os

#: decimal prefixes, largest first (``k`` is lower case: ``kB``)
_PREFIXES = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))


def short_location(loc: str) -> str:
    """``file:line`` with the file's base name only (tables stay narrow); anything else as it is."""
    if not loc or ":" not in loc:
        return loc
    file, line = loc.rsplit(":", 1)
    return f"{os.path.basename(file)}:{line}"


def short_reason(text: str) -> str:
    """A reason with its leading ``/long/path/file.py:line`` shortened to ``file.py:line``."""
    head, sep, rest = text.partition(": ")
    if sep and ":" in head and "/" in head:
        return f"{short_location(head)}: {rest}"
    return text


def format_count(x: float, *, unit: str = "", sep: str = "", small: str = ".3g") -> str:
    """``x`` with three significant digits and a decimal prefix from k to T, then ``unit``: ``"1.2G"`` (the
    bound table's counts), ``format_count(x, sep=" ", small=".0f")`` gives ``"1.2 G"`` (the library-call
    table). ``small``: the format of a number below 1,000 (which has no prefix; ``sep`` goes before ``unit``
    only when there is one)."""
    x = float(x)
    for prefix, scale in _PREFIXES:
        if abs(x) >= scale:
            return f"{x / scale:.3g}{sep}{prefix}{unit}"
    return f"{x:{small}}{sep if unit else ''}{unit}"


def format_bytes(b: float) -> str:
    """Bytes with three significant digits and a decimal unit (``"1.64 MB"``, ``"512 B"``)."""
    return format_count(b, unit="B", sep=" ", small=".0f")


def format_seconds(t: float | None, *, ms_digits: int = 3, ns: bool = True) -> str:
    """``t`` seconds with a unit (``"1.24 ms"``; ``"-"`` for None): three significant digits, ``ms_digits`` of
    them for milliseconds and seconds; below a microsecond in nanoseconds, or in fractions of a microsecond
    without ``ns``."""
    if t is None:
        return "-"
    t = float(t)
    if abs(t) >= 1.0:
        return f"{t:.{ms_digits}g} s"
    if abs(t) >= 1e-3:
        return f"{t / 1e-3:.{ms_digits}g} ms"
    if abs(t) >= 1e-6 or not ns:
        return f"{t / 1e-6:.3g} us"
    return f"{t / 1e-9:.3g} ns"


#: a predicted time as the prediction lines and the HTML headline print it (``"18.4 us"``, ``"2.345 ms"``)
format_time = functools.partial(format_seconds, ms_digits=4, ns=False)


def speedup_number(v: float) -> str:
    """A speedup factor: three significant digits (``5.13``, ``0.191``), whole numbers from 1,000 (``1,040``)."""
    text = f"{v:.3g}"
    return f"{v:,.0f}" if "e+" in text else text


def speedup_text(value: float, interval: tuple[float, float] | None = None, *, dash: str = "-") -> str:
    """``5.1x (4.8-5.4)``: a speedup and, when known, its interval from the CPU time's quartiles (``dash``
    between its ends)."""
    span = f" ({speedup_number(interval[0])}{dash}{speedup_number(interval[1])})" if interval is not None else ""
    return f"{speedup_number(value)}x{span}"


def format_value(v, fmt: str = "{:.4g}") -> str:
    """A table cell's number: ``"-"`` for None, integers with thousands separators, else ``fmt``."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return fmt.format(v)
