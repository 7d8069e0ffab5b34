"""Why Numba could not compile an instrumented region, in one line a user can act on.

Numba's typing and lowering errors are long: pipeline headers ("Failed in nopython mode pipeline ..."),
the message, source excerpts ('File "...", line N:'), "During: ..." context lines, and for a call that failed
inside a callee the callee's whole message nested in the caller's. :func:`describe_failure` picks the
innermost cause (the first message, or the specific error an overload raised), the user's file:line it was
raised at and the user function it is in, and maps the instrumenter's internal names back (``_pc_f3_helper``
-> ``helper``) or drops them (temporaries ``_pc_t12`` are "an intermediate value"). :func:`numba_error_types` are
the exceptions that mean Numba cannot compile something (:class:`NotCompilable` is Portcast's own).
"""

from __future__ import annotations

import os
import re

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FILE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_DURING_AT = re.compile(r"^\s*During: .*? at (?P<file>\S.*?) \((?P<line>\d+)\)\s*$")
_CALLEE = re.compile(r"^\s*During: resolving callee type: .*?CPUDispatcher\(<function (?P<name>_pc_f\d+_\w+) at ")
_NO_IMPL = re.compile(r"No implementation of function .*? found for signature:")
_REJECTED = "Rejected as the implementation raised a specific error:"
_ERROR_PREFIX = re.compile(r"^\s*(?:\w+\.)*\w*(?:Error|Exception): ")
_FUNC = re.compile(r"\b_pc_f\d+_(\w+)")
_TEMP = re.compile(r"'?\b_pc_t\d+(?:\.\d+)?\b'?")
_INTERNAL = re.compile(r"\b_pc_\w+")
_SSA = re.compile(r"'([A-Za-z_]\w*)\.\d+'")
_MODULE = re.compile(r"Module\(<module '([\w.]+)'[^>]*>\)")
_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
_IV = re.compile(r"<iv=[^>]*>")
#: Portcast's recording primitives: a failure inside one is reported by its own (specific) message
_PRIMITIVES = frozenset({"recm", "meta", "kcode", "kattr", "fop", "fop2", "_rec", "_reca", "_tidpt", "_full"})

MAX_CAUSE = 300


def short_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it, else as given."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


def _is_user_location(path: str) -> bool:
    here = os.path.dirname(os.path.realpath(__file__))
    real = os.path.realpath(path)
    return not (real.startswith(here + os.sep) or f"{os.sep}site-packages{os.sep}" in real
                or f"{os.sep}numba{os.sep}" in real)


def _clean(text: str, names: dict[str, str]) -> str:
    text = _FUNC.sub(lambda m: names.get(m.group(0), m.group(1)), text)
    text = _TEMP.sub("an intermediate value", text)
    text = _INTERNAL.sub("(tracing code)", text)
    text = _SSA.sub(r"'\1'", text)
    text = _MODULE.sub(r"Module(\1)", text)
    text = _IV.sub("", _ADDR.sub("", text))
    text = " ".join(text.split())
    return text if len(text) <= MAX_CAUSE else text[: MAX_CAUSE - 3] + "..."


def _skip(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("Failed in ") or s.startswith("During: ") or s == "<source elided>"


def _cause(lines: list[str]) -> tuple[str, int]:
    """(innermost cause, index of the line where it ends) of a Numba error message."""
    for k, line in enumerate(lines):
        if _REJECTED in line:
            msg = []
            for nxt in lines[k + 1:]:
                if nxt.strip().startswith("raised from") or not nxt.strip():
                    break
                msg.append(nxt.strip())
            specific = _ERROR_PREFIX.sub("", " ".join(msg))
            sig = _signature(lines, k)
            name = sig.split("(", 1)[0] if sig else ""
            if sig and name not in _PRIMITIVES:
                return f"{sig}: {specific}", k
            return specific, k
    for k, line in enumerate(lines):
        if _NO_IMPL.search(line):
            sig = _signature(lines, len(lines)) or line.strip()
            return f"No implementation of {sig}", k
    k = 0
    while k < len(lines) and (_skip(lines[k]) or _FILE.match(lines[k])):
        k += 1
    msg = []
    while (
        k < len(lines)
        and lines[k].strip()
        and not _FILE.match(lines[k])
        and not lines[k].strip().startswith("During: ")
    ):
        msg.append(lines[k].strip())
        k += 1
    return " ".join(msg), k


def _signature(lines: list[str], before: int) -> str:
    """The ``>>> f(types)`` line of the last "No implementation" block before line ``before``."""
    sig = ""
    for line in lines[:before]:
        s = line.strip()
        if s.startswith(">>> "):
            sig = s[4:]
    return sig


def describe_failure(exc: BaseException, program=None) -> str:
    """One line: ``file:line (in function): cause`` (location and function when Numba names them).

    Parameters
    ----------
    exc : BaseException
        What compiling the instrumented region raised (a Numba error, or the reason an argument cannot be typed).
    program : profiler.instrument.Program, optional
        The instrumented program: maps the instrumented functions' names back to the user's.
    """
    names = {}
    if program is not None:
        names = {fi.name: fi.qualname for fi in program.order}
    text = _ANSI.sub("", str(exc)).strip()
    if not text:
        return type(exc).__name__
    lines = text.splitlines()
    cause, at = _cause(lines)
    if not cause:
        cause = next((ln.strip() for ln in lines if not _skip(ln)), type(exc).__name__)
    where = ""
    func = ""
    for line in lines[at:]:
        m = _FILE.match(line) or _DURING_AT.match(line)
        if not where and m and _is_user_location(m.group("file")):
            where = f"{short_path(os.path.abspath(m.group('file')))}:{m.group('line')}"
        c = _CALLEE.match(line)
        if c:
            func = names.get(c.group("name"), _FUNC.sub(r"\1", c.group("name")))
            break
    head = where + (f" (in {func})" if where and func else "")
    cause = _clean(cause, names)
    return f"{head}: {cause}" if head else cause


class NotCompilable(Exception):
    """An argument Numba cannot type, or another reason the compiled mode cannot run."""


def numba_error_types() -> tuple:
    """The exceptions that mean "Numba cannot compile this" (not: the region itself raised)."""
    from numba.core import errors

    return (errors.NumbaError, NotCompilable)
