"""Strings Portcast did not write, shown as text.

Region names, function names, file paths, source lines, reasons and notes, a trace file's metadata, the
messages of the user's exceptions and the names in a model or GPU description file come from the user or
from a file someone sent. Printed through Rich as they are, ``[...]`` in them is read as markup (``y[i]`` is
shown as ``y``, ``a[/bold]b`` ends the command with a ``MarkupError``, ``[link=...]`` makes a clickable link)
and their control characters reach the terminal (an escape sequence recolours it, moves the cursor or makes a
link; a carriage return or backspace hides what came before). Every print of such a string goes through this
module:

* :func:`visible` -- the string with every control character written out (``\\x1b``, ``\\x07``, ``\\u202e``);
* :func:`escape` -- that, with Rich's markup escaped, to put inside a markup string
  (``f"[bold]{escape(name)}[/]"``);
* :func:`as_text` -- that as a Rich :class:`~rich.text.Text` (a table cell, a status line, a whole line):
  never read as markup; ``--json`` takes the exact string from it (:func:`raw`).
"""

from __future__ import annotations

import re

from rich.text import Text

#: C0 controls but tab (escape sequences, BEL, backspace, carriage return, ...), DEL, C1 controls (CSI
#: 0x9b starts an escape sequence on some terminals), and the Unicode bidirectional controls, which reorder
#: what the terminal shows ("Trojan source")
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: the same without the line feed, for text of several lines (a traceback)
_CONTROL_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: what Rich's markup reads as a tag, with the backslashes before it
_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def _written_out(match: re.Match) -> str:
    c = ord(match.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(value: object, *, lines: bool = False) -> str:
    """``str(value)`` with its control characters written out as Python writes them in a string literal
    (``\\x1b``, ``\\x07``, ``\\x0d``, ``\\u202e``); tabs stay, and line feeds when ``lines`` (else ``\\x0a``).
    Nothing else changes: the result is still to be printed as text (``markup=False``, or :func:`escape`)."""
    s = "" if value is None else str(value)
    return (_CONTROL_KEEP_LINES if lines else _CONTROL).sub(_written_out, s)


def escape(value: object, *, lines: bool = False) -> str:
    """:func:`visible` with Rich's markup escaped: put it inside a markup string and it prints as itself.

    Every ``[`` that would open a tag gets a backslash, and the backslashes before it are doubled. (Unlike
    ``rich.markup.escape``, a trailing backslash is left alone: it prints as itself unless a tag follows it
    in the markup string; print such a string whole with :func:`as_text` and a style instead.)"""
    return _TAG.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", visible(value, lines=lines))


class ShownText(Text):
    """A :class:`~rich.text.Text` of :func:`visible` text that keeps the exact string (``raw``) for ``--json``."""

    raw: str = ""


def as_text(value: object, style: str = "", *, lines: bool = False) -> ShownText:
    """``value`` as a Rich text that is printed as itself: never markup, control characters written out."""
    s = "" if value is None else str(value)
    t = ShownText(visible(s, lines=lines), style=style)
    t.raw = s
    return t


def raw(obj) -> str | None:
    """The exact string behind a :func:`as_text` (None for anything else)."""
    return obj.raw if isinstance(obj, ShownText) else None
