"""Which functions are the user's, and what a name in their code refers to."""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import sysconfig
import types as pytypes
from typing import Any


def _is_user_file(path: str | None) -> bool:
    if not path:
        return False
    path = os.path.realpath(path)
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = paths.get(key)
        if p and path.startswith(os.path.realpath(p) + os.sep):
            return False
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # profiler/
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


def is_user_function(obj) -> bool:
    fn = unwrap_callable(obj)
    if not isinstance(fn, pytypes.FunctionType) or fn.__name__ == "<lambda>":
        return False
    try:
        return _is_user_file(inspect.getsourcefile(fn))
    except TypeError:
        return False
