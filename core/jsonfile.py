"""Reading JSON files people hand to Portcast (models, GPU descriptions, sidecars): bounded in size and
nesting, every failure one :class:`JsonFileError` that names the file.

Lives in ``core``, the bottom layer, because every other package uses it (docs/architecture.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: the largest JSON file read (bytes); Portcast's own files are at most a few MB
MAX_BYTES = 256 * 1024 * 1024
#: the deepest nesting of arrays and objects accepted; Portcast's own files nest at most 6 deep
MAX_DEPTH = 64


class JsonFileError(ValueError):
    """A JSON file that cannot be read: invalid, too large, too deeply nested, not UTF-8. The message
    starts with the file name."""


def _depth(doc: Any) -> int:
    """Nesting depth of a decoded document (iterative: no recursion limit)."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in node)
    return deepest


def _nesting_before_decode(text: str, limit: int) -> int:
    """Deepest bracket nesting of ``text`` outside strings, stopping once past ``limit`` (a cheap check that
    keeps the decoder from recursing into a hostile file)."""
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _a(what: str) -> str:
    return f"an {what}" if what[:1].lower() in "aeio" else f"a {what}"


def read_json(path: str | os.PathLike, *, what: str = "JSON file", max_bytes: int = MAX_BYTES,
              max_depth: int = MAX_DEPTH) -> Any:
    """Decode the JSON file ``path``. Raises FileNotFoundError for a missing file and :class:`JsonFileError`
    (``"<path>: not a valid <what> (...)"``) for one that is not UTF-8 JSON, larger than ``max_bytes`` or
    nested deeper than ``max_depth``, or a folder."""
    path = Path(path)
    if path.is_dir():
        raise JsonFileError(f"{path}: is a folder, not {_a(what)}")
    size = path.stat().st_size
    if size > max_bytes:
        raise JsonFileError(f"{path}: not {_a(what)} ({size:,} bytes; at most {max_bytes:,} are read)")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonFileError(f"{path}: not {_a(what)} (not UTF-8 text: {exc})") from None
    deep = _nesting_before_decode(text, max_depth)
    if deep > max_depth:
        raise JsonFileError(f"{path}: not {_a(what)} (nested more than {max_depth} levels deep)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonFileError(f"{path}: not {_a(what)} (invalid JSON at line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg})") from None
    except RecursionError:  # pragma: no cover - the bracket check comes first
        raise JsonFileError(f"{path}: not {_a(what)} (nested too deeply)") from None
    if _depth(doc) > max_depth:  # pragma: no cover - same as the bracket count
        raise JsonFileError(f"{path}: not {_a(what)} (nested more than {max_depth} levels deep)")
    return doc
