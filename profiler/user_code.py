"""The user's functions as the instrumenter and the thread-space analysis both read them.

Which functions are the user's (not the standard library's, an installed package's or Portcast's own), the
plain function behind a region wrapper or a Numba dispatcher, a function's source (its ``FunctionDef`` with the
line numbers of its file), the names its code sees besides its locals, what a global name or module attribute in
it refers to, and the names it assigns. Both :mod:`profiler.instrument` and :mod:`profiler.threadspace` import
this module; it imports neither, so the two do not import each other.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import sysconfig
import textwrap
import types as pytypes
from typing import Any


class SourceUnavailable(ValueError):
    """The source of a function to trace cannot be found."""


def _is_user_file(path: str | None) -> bool:
    if not path:
        return False
    path = os.path.realpath(path)
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = paths.get(key)
        if p and path.startswith(os.path.realpath(p) + os.sep):
            return False
    here = os.path.dirname(os.path.realpath(__file__))  # profiler/
    portcast_dir = os.path.join(os.path.dirname(here), "portcast")
    if path.startswith(here + os.sep) or path.startswith(portcast_dir + os.sep):
        return False
    return path.endswith(".py")


def unwrap_callable(obj):
    """The plain Python function behind a region wrapper or a Numba dispatcher, else ``obj``."""
    for _ in range(8):
        if getattr(obj, "__portcast_region__", None) is not None and hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
            continue
        py = getattr(obj, "py_func", None)
        if py is not None and isinstance(py, pytypes.FunctionType):
            obj = py
            continue
        break
    return obj


def is_user_function(obj) -> bool:
    """Whether ``obj`` (or the function behind it) is a named function defined in one of the user's files."""
    fn = unwrap_callable(obj)
    if not isinstance(fn, pytypes.FunctionType) or fn.__name__ == "<lambda>":
        return False
    try:
        return _is_user_file(inspect.getsourcefile(fn))
    except TypeError:
        return False


def resolve_static(node, local_names, namespace: dict) -> tuple[bool, Any]:
    """(True, value) of a global name or module attribute chain as a function's code would see it (its
    globals and closure in ``namespace``, then the builtins), (False, None) for a local or anything else."""
    if isinstance(node, ast.Name):
        if node.id in local_names:
            return False, None
        if node.id in namespace:
            return True, namespace[node.id]
        if hasattr(builtins, node.id):
            return True, getattr(builtins, node.id)
        return False, None
    if isinstance(node, ast.Attribute):
        ok, base = resolve_static(node.value, local_names, namespace)
        if ok and isinstance(base, pytypes.ModuleType) and hasattr(base, node.attr):
            return True, getattr(base, node.attr)
    return False, None


def closure_namespace(fn) -> dict:
    """The names a function's code sees besides its locals: its globals, overlaid with its closure cells."""
    ns = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                ns[name] = cell.cell_contents
            except ValueError:
                pass
    return ns


def assigned_names(fdef) -> set[str]:
    """The local names of a function: its parameters and every name it assigns, deletes, imports or catches."""
    out = set(a.arg for a in fdef.args.args + fdef.args.posonlyargs + fdef.args.kwonlyargs)
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


def function_source(fn) -> tuple[ast.FunctionDef, str]:
    """The FunctionDef of ``fn`` with line numbers and columns of its file, and the file name."""
    try:
        file = inspect.getsourcefile(fn) or fn.__code__.co_filename
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SourceUnavailable(
            f"cannot trace {getattr(fn, '__qualname__', fn)!r}: its source is not available ({exc})"
        ) from None
    src = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(textwrap.dedent(src))
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise SourceUnavailable(f"cannot trace {fn.__qualname__!r}: {file}:{first} is not a plain function definition")
    for n in ast.walk(tree):
        if "lineno" in n._attributes and hasattr(n, "lineno"):
            n.lineno += first - 1
            n.end_lineno = (n.end_lineno or n.lineno) + first - 1
            n.col_offset += indent
    return fdef, file
