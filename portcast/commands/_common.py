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
    def size(self):
        """The terminal's size; when the output is not a terminal, :data:`PIPED_WIDTH` columns (what every
        layout reads: ``width`` and ``options`` derive from it)."""
        from rich.console import ConsoleDimensions

        got = Console.size.fget(self)
        return got if self.is_terminal else ConsoleDimensions(PIPED_WIDTH, got.height)

    @size.setter
    def size(self, new) -> None:
        Console.size.fset(self, new)

    #: while a command runs with ``--json``: what it printed, kept instead of shown (:func:`json_output`)
    collected: list | None = None

    def print(self, *objects, **kwargs) -> None:
        if self.collected is not None:
            self.collected.extend(objects)
            return
        kwargs["soft_wrap"] = not self.is_terminal
        if self.is_terminal:
            objects = tuple(x for obj in objects for x in self._fit(obj))
        super().print(*objects, **kwargs)

    def _fit(self, obj) -> list:
        """A table too wide for the terminal even with every wrappable column wrapped (Rich would cut its
        cells with an ellipsis) as one field/value table per row instead; anything else as it is."""
        from rich.measure import Measurement
        from rich.table import Table

        if not isinstance(obj, Table):
            return [obj]
        for c in obj.columns:  # a long word (a path) wraps onto the next line instead of ending in an ellipsis
            if c.overflow == "ellipsis":
                c.overflow = "fold"
        if not obj.show_header or len(obj.columns) < 3:
            return [obj]
        # measured without the terminal's limit (a table's own measure is clamped to the width it is given)
        if Measurement.get(self, self.options.update_width(1 << 16), obj).minimum <= self.width:
            return [obj]
        heads = [c.header for c in obj.columns]
        n = max((len(c._cells) for c in obj.columns), default=0)
        out = [] if obj.title is None else [obj.title]
        for i in range(n):
            cells = [c._cells[i] if i < len(c._cells) else "" for c in obj.columns]
            t = Table(show_header=False, box=obj.box, title=None)
            t.add_column("field", no_wrap=True, style="bold")
            t.add_column("value", overflow="fold")
            for h, v in zip(heads, cells):
                t.add_row(h, v)
            out.append(t)
        return out

    def _render_buffer(self, buffer) -> str:
        """What goes to the file, with the control characters of every printed text written out
        (:func:`portcast.safe_text.visible`): the last guard, should a string from a user or a file reach a
        print without :mod:`portcast.safe_text` (Rich's own cursor and style codes are not text and stay)."""
        from rich.segment import Segment

        from portcast.safe_text import visible

        return super()._render_buffer(Segment(t if c else visible(t, lines=True), s, c) for t, s, c in buffer)


console = _Console()
err_console = _Console(stderr=True)

#: the document ``--json`` prints for a command without a structured result of its own
COMMAND_OUTPUT_FORMAT = "portcast.command-output"


def _plain(obj) -> str:
    """A printed object as plain text (markup removed; a table or panel rendered as a terminal would)."""
    from rich.text import Text

    from portcast.safe_text import raw

    if raw(obj) is not None:  # a string from a user or a file: the exact string
        return raw(obj)
    if isinstance(obj, str):
        try:
            return Text.from_markup(obj).plain
        except Exception:  # not markup after all (a path with brackets)
            return obj
    if isinstance(obj, Text):
        return obj.plain
    plain = Console(width=PIPED_WIDTH, file=__import__("io").StringIO(), color_system=None)
    with plain.capture() as cap:
        plain.print(obj)
    return cap.get().rstrip("\n")


def _cell_value(text: str):
    """A table cell as JSON: an int or float when it is one number (thousands separators allowed), else text."""
    t = text.strip()
    bare = t.replace(",", "")
    for kind in (int, float):
        try:
            v = kind(bare)
        except ValueError:
            continue
        if kind is float and v != v:
            return None
        return v
    return t


def table_record(table) -> dict:
    """A Rich table as ``{"title", "columns", "rows"}``, each row a mapping column -> value
    (:func:`_cell_value`); a table without a header (field/value pairs) gives its rows as lists."""
    cols = [_plain(c.header) or f"column {k + 1}" for k, c in enumerate(table.columns)]
    cells = [[_plain(x) for x in c._cells] for c in table.columns]
    n = max((len(c) for c in cells), default=0)
    rows = []
    for i in range(n):
        vals = [_cell_value(c[i]) if i < len(c) else None for c in cells]
        rows.append(dict(zip(cols, vals)) if table.show_header else vals)
    return {"title": _plain(table.title) if table.title else None, "columns": cols if table.show_header else None,
            "rows": rows}


def json_output(command: str, run) -> None:
    """Run a command with ``--json``: what it would print on stdout is kept (tables as records, other lines as
    messages) and printed as one JSON document when it ends normally; stdout carries nothing else (prints of
    a profiled script go to stderr). Warnings and errors still go to stderr; a failing or interrupted command
    prints no JSON (Ctrl-C: one line saying so on stderr, status 130)."""
    import json
    import sys

    from rich.table import Table

    console.collected = []
    out = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):
            run()
    except typer.Exit as exc:
        if exc.exit_code:
            raise
    except KeyboardInterrupt:  # Ctrl-C: no document, and a line saying why
        err_console.print(f"interrupted: portcast {command} stopped before it finished; nothing was printed",
                          highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(130) from None
    finally:
        got, console.collected = console.collected, None
    tables, messages = [], []
    for obj in got:
        if isinstance(obj, Table):
            tables.append(table_record(obj))
        else:
            text = _plain(obj)
            if text.strip():
                messages.append(text)
    doc = {"format": COMMAND_OUTPUT_FORMAT, "schema_version": 1, "command": command, "tables": tables,
           "messages": messages}
    out.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    out.flush()



def warn(text: str) -> None:
    """A warning line on stderr (``warning: ...``); while a command runs with ``--json`` it is also one of the
    document's messages, so that a program reading the JSON sees it too."""
    from portcast.safe_text import as_text

    line = as_text(f"warning: {text}")  # never markup, control characters written out
    if console.collected is not None:
        console.collected.append(line)
    err_console.print(line, highlight=False, soft_wrap=True)


def warn_if_incomplete(*sources, info=None) -> None:
    """Warn about every source that is a Portcast trace file of a region invocation that did not complete (it
    raised, or was interrupted: metadata ``complete`` false): the numbers computed from it cover only the records
    before it stopped. Other sources (scripts, tables, names) pass silently; ``info``: the one source's metadata
    when the caller has read it already."""
    from pathlib import Path

    from profiler.tracefile import TraceFile, is_trace_file

    for src in sources:
        if src is None or not (info is not None or is_trace_file(src)):
            continue
        got = info if info is not None else TraceFile(src).info
        if not got.complete:
            warn(f"{Path(src)}: incomplete trace: region {got.name!r} #{got.invocation} did not complete "
                 f"({got.error or 'no reason recorded'}); the numbers cover only what it recorded before it stopped")


@contextlib.contextmanager
def user_errors(*extra: type[BaseException]):
    """Print known input errors, and outputs that cannot be written, as ``error: ...`` and exit 2 instead of a
    traceback."""
    from core.atomic import OutputWriteError
    from core.trace_schema import TraceError
    from portcast.safe_text import escape

    try:
        yield
    except (UserError, TraceError, FileNotFoundError, OutputWriteError, *extra) as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc)}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def split_list(values: Optional[List[str]]) -> Optional[List[str]]:
    """Accept both ``--opt a --opt b`` and ``--opt a,b``; None when nothing was given."""
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def progress_bar(label: str, transient: bool = False):
    """A Rich progress bar on stderr: ``label``, the task's description, a bar, done/total, elapsed time
    (``transient``: erased when done)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    text = f"[bold]{label}[/] {{task.description}}" if label else "{task.description}"
    return Progress(TextColumn(text), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err_console, transient=transient)


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
    if out.is_dir():
        raise UserError(f"{what} {out} is a directory: give a file name")
    if out.exists() and not out.is_file():
        raise UserError(f"{what} {out} is not a regular file: give a file name")
    if out.exists() and not force:
        raise UserError(f"{what} {out} exists: pass --force to replace it")
