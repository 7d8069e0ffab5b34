"""The constructs the tracer refuses inside a traced region."""

from __future__ import annotations

import ast


class UnsupportedConstruct(ValueError):
    """A construct the instrumenter cannot trace; the message names file:line and the construct."""


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
