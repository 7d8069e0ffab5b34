"""Helpers shared by command modules: one console, and turning known errors into clean messages."""

from __future__ import annotations

import contextlib

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)


class UserError(Exception):
    """An error caused by the user's input; printed as one clear line, exit code 2."""


@contextlib.contextmanager
def user_errors(*extra: type[BaseException]):
    """Print known input errors as ``error: ...`` and exit 2 instead of a traceback."""
    from profiler.trace import TraceError

    try:
        yield
    except (UserError, TraceError, FileNotFoundError, *extra) as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
