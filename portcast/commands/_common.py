"""Helpers shared by command modules: one console, and turning known errors into clean messages."""

from __future__ import annotations

import contextlib
from typing import List, Optional

import typer
from rich.console import Console

from portcast.errors import UserError  # noqa: F401  (re-exported: the commands raise it)

#: width of output that does not go to a terminal (a pipe, a file): fixed, so that what a script or a test
#: reads does not depend on COLUMNS or on the length of a path in it
PIPED_WIDTH = 200


class _Console(Console):
    """A Rich console that, when its output is not a terminal, lays tables out at :data:`PIPED_WIDTH` columns
    whatever the environment says and never wraps prose (each message stays on its line); in a terminal it
    wraps prose at word boundaries to the terminal's width (so a number is never split by the terminal)."""

    @property
    def width(self) -> int:
        return super().width if self.is_terminal else PIPED_WIDTH

    @width.setter
    def width(self, value: int) -> None:
        Console.width.fset(self, value)

    def print(self, *objects, **kwargs) -> None:
        kwargs["soft_wrap"] = not self.is_terminal
        super().print(*objects, **kwargs)


console = _Console()
err_console = _Console(stderr=True)



@contextlib.contextmanager
def user_errors(*extra: type[BaseException]):
    """Print known input errors as ``error: ...`` and exit 2 instead of a traceback."""
    from profiler.trace import TraceError

    try:
        yield
    except (UserError, TraceError, FileNotFoundError, *extra) as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def split_list(values: Optional[List[str]]) -> Optional[List[str]]:
    """Accept both ``--opt a --opt b`` and ``--opt a,b``; None when nothing was given."""
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def progress_bar(label: str):
    """A Rich progress bar on stderr: ``label``, the task's description, a bar, done/total, elapsed time."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn(f"[bold]{label}[/] {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err_console, transient=False)


def check_output(out, *, inputs=(), force: bool = False, what: str = "--out") -> None:
    """Refuse an output that would destroy an input (whatever ``force`` says), or replace an existing file
    without ``force``: a :class:`UserError` naming both."""
    import os
    from pathlib import Path

    if out is None:
        return
    out = Path(out)
    for src in inputs:
        if src is not None and Path(src).exists() and out.exists() and os.path.samefile(out, src):
            raise UserError(f"{what} {out} is the input {src}: writing it would destroy the input; choose another file")
    if out.exists() and not force:
        raise UserError(f"{what} {out} exists: pass --force to replace it")
