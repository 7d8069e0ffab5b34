"""The ``portcast`` command.

Each command group lives in its own module under :mod:`portcast.commands` and exposes
``register(app: typer.Typer) -> None``; this module collects them, so areas of the tool can grow
without touching each other.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

import portcast.commands as _commands

app = typer.Typer(
    name="portcast",
    help="Estimate how much faster a region of CPU code would run on a GPU, and why.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


def _register_all() -> None:
    for mod in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"portcast.commands.{mod.name}")
        module.register(app)


def _print_version(value: bool) -> None:
    if value:
        from portcast import __version__

        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the Portcast version and exit.",
                                 callback=_print_version, is_eager=True),
) -> None:
    """Estimate how much faster a region of CPU code would run on a GPU, and why."""


def _plain_flags() -> None:
    """On/off options (and ``--help``) show no value type in help: Typer prints ``<bool>`` beside a flag, as
    if it took a value. Its options describe their type with ``display_type_rich``; for a flag, nothing."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich


_plain_flags()
_register_all()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
