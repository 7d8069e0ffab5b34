"""The source of a function to trace, and the constructs the tracer refuses."""

from __future__ import annotations

import ast
import inspect
import textwrap


class UnsupportedConstruct(ValueError):
    """A construct the instrumenter cannot trace; the message names file:line and the construct."""


class SourceUnavailable(ValueError):
    """The source of a function to trace cannot be found."""





def _check_supported(fdef: ast.FunctionDef, file: str) -> None:
    problems = []
    for node in ast.walk(fdef):
        what = None
        if node is not fdef and isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            what = f"nested {'class' if isinstance(node, ast.ClassDef) else 'function'} definition {node.name!r}"
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            what = "generator (yield)"
        elif isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith, ast.AsyncFunctionDef)):
            what = "async code"
        elif isinstance(node, ast.Global):
            what = f"global statement ({', '.join(node.names)})"
        elif isinstance(node, ast.Nonlocal):
            what = f"nonlocal statement ({', '.join(node.names)})"
        elif isinstance(node, ast.NamedExpr):
            what = "assignment expression (:=)"
        elif isinstance(node, ast.Match):
            what = "match statement"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval"):
            what = f"{node.func.id}()"
        elif isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Store):
            what = "starred assignment target"
        if what:
            problems.append(f"{file}:{getattr(node, 'lineno', fdef.lineno)}: {what} is not supported inside a traced "
                            "region")
    if problems:
        raise UnsupportedConstruct("; ".join(problems))


def _assigned_names(fdef) -> set[str]:
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
