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
    _quiet_library_warnings()


#: Portcast's own packages: warnings raised from their lines are Portcast's business, not the user's
OWN_MODULES = r"(portcast|profiler|features|predictor|gpu_models|kernels)(\.|$)"


def _registered_commands():
    """Every registered command: ``(typer's CommandInfo, its name as typed, "group command" in a group)``."""

    def command_name(info) -> str:
        return info.name or info.callback.__name__.replace("_", "-")

    for info in app.registered_commands:
        yield info, command_name(info)
    for group in app.registered_groups:
        for info in group.typer_instance.registered_commands:
            yield info, f"{group.name} {command_name(info)}"


def _quiet_library_warnings() -> None:
    """Keep the libraries' warnings about the user's data out of the output where Portcast's own code triggers
    them: NumPy's RuntimeWarnings (overflow, division by zero, invalid values: what comes out is checked, and
    reported in Portcast's words where it matters) and Matplotlib's missing-glyph warnings (a region name in a
    script the plot font cannot draw). Filtered by the module whose line raised them, so the warnings of the
    user's own script, while it runs, still reach stderr."""
    import warnings

    warnings.filterwarnings("ignore", category=RuntimeWarning, module=OWN_MODULES)
    warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning, module=OWN_MODULES)


def _plain_flags() -> None:
    """On/off options (and ``--help``) show no value type in help: Typer prints ``<bool>`` beside a flag, as
    if it took a value. Its options describe their type with ``display_type_rich``; for a flag, nothing."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich


def _json_everywhere() -> None:
    """Give every command without a ``--json`` of its own one that prints its output as JSON
    (:func:`portcast.commands._common.json_output`: its tables as records, its other lines as messages)."""
    import functools
    import inspect

    from portcast.commands._common import json_output

    def wrap(info, name: str) -> None:
        fn = info.callback
        sig = inspect.signature(fn, eval_str=True)
        if "json_out" in sig.parameters:
            return
        option = typer.Option(False, "--json", help="Print the output as one JSON document (tables as records) "
                                                    "instead of tables.")

        @functools.wraps(fn)
        def with_json(*args, json_out: bool = False, **kwargs):
            if not json_out:
                return fn(*args, **kwargs)
            return json_output(name, lambda: fn(*args, **kwargs))

        param = inspect.Parameter("json_out", inspect.Parameter.KEYWORD_ONLY, default=option, annotation=bool)
        with_json.__signature__ = sig.replace(parameters=[*sig.parameters.values(), param])
        with_json.__annotations__ = {**getattr(fn, "__annotations__", {}), "json_out": bool}
        info.callback = with_json

    for info, name in _registered_commands():
        wrap(info, name)


#: parameters that name files or folders a command writes
OUTPUT_PARAMS = ("out", "out_dir", "plot", "counters_out")


def _force_everywhere() -> None:
    """Give every command that writes files (:data:`OUTPUT_PARAMS`) and has no ``--force`` of its own one, and
    check its outputs before it runs: an output that is one of its input files is refused whatever; an
    existing file, or a folder with files in it, is replaced only with ``--force``."""
    import functools
    import inspect
    from pathlib import Path

    from portcast.commands._common import UserError, check_output, user_errors

    def is_path(annotation) -> bool:
        return annotation is Path or Path in getattr(annotation, "__args__", ())

    def wrap(info) -> None:
        fn = info.callback
        sig = inspect.signature(fn, eval_str=True)
        outs = [n for n in OUTPUT_PARAMS if n in sig.parameters]
        if not outs or "force" in sig.parameters:
            return
        ins = [n for n, p in sig.parameters.items() if n not in outs and (is_path(p.annotation) or
               p.annotation in (list[Path],) or "List[pathlib.Path]" in str(p.annotation))]
        option = typer.Option(False, "--force", help="Replace existing output files (or write into a folder that "
                                                     "has files).")

        @functools.wraps(fn)
        def checked(*args, force: bool = False, **kwargs):
            bound = sig.bind_partial(*args, **kwargs)
            inputs = []
            for n in ins:
                v = bound.arguments.get(n)
                inputs.extend(v if isinstance(v, (list, tuple)) else [v])
            with user_errors():
                for n in outs:
                    out = bound.arguments.get(n)
                    if out is None:
                        continue
                    flag = "--" + n.replace("_", "-")
                    out = Path(out)
                    if out.is_dir():
                        if any(out.iterdir()) and not force:
                            raise UserError(f"{flag} {out} is a folder with files in it: pass --force to write "
                                            "into it (files of the same names are replaced)")
                        continue
                    check_output(out, inputs=[i for i in inputs if i is not None], force=force, what=flag)
            return fn(*args, **kwargs)

        param = inspect.Parameter("force", inspect.Parameter.KEYWORD_ONLY, default=option, annotation=bool)
        checked.__signature__ = sig.replace(parameters=[*sig.parameters.values(), param])
        checked.__annotations__ = {**getattr(fn, "__annotations__", {}), "force": bool}
        info.callback = checked

    for info, _ in _registered_commands():
        wrap(info)


#: (command, parameter) -> the extensions of the one format that output is written in; any other is refused
#: before the command runs (commands that choose the format by the extension check their own: features,
#: simulate, dvfs predict --counters-out, the measured and import commands)
OUT_SUFFIXES = {
    ("train", "out"): (".json",), ("predict", "out"): (".csv", ".json"),
    ("evaluate aiwc", "out"): (".md",), ("evaluate aiwc", "csv"): (".csv",),
    ("gpu-time train", "out"): (".json",), ("gpu-time train", "points"): (".csv",),
    ("eiger fit", "out"): (".json",), ("eiger evaluate", "out"): (".md",),
    ("scale train", "out"): (".json",), ("scale predict", "out"): (".csv",), ("scale place", "out"): (".csv",),
    ("scale synthetic", "out"): (".csv", ".parquet"),
    ("dvfs predict", "out"): (".csv", ".json"), ("dvfs evaluate", "out"): (".md",),
    ("dvfs plot", "out"): (".png", ".svg"),
    ("measured report", "csv"): (".csv",), ("measured correlate", "csv"): (".csv",),
    ("measured correlate", "plot"): (".png",),
}


def _out_suffixes_everywhere() -> None:
    """Refuse, with one line and before any work, an output file (:data:`OUT_SUFFIXES`) whose extension names
    another format than the one the command writes there (``predict f.json --out p.parquet`` would otherwise
    write CSV into a file whose name says Parquet)."""
    import functools
    import inspect
    from pathlib import Path

    from portcast.commands._common import UserError, check_output, user_errors

    def wrap(info, name: str) -> None:
        params = {p: sfx for (c, p), sfx in OUT_SUFFIXES.items() if c == name}
        if not params:
            return
        fn = info.callback
        sig = inspect.signature(fn, eval_str=True)

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            bound = sig.bind_partial(*args, **kwargs)
            inputs = [v for n, v in bound.arguments.items() if n not in params and isinstance(v, Path)]
            with user_errors():
                for param, suffixes in params.items():
                    out = bound.arguments.get(param)
                    # an output that is one of the inputs is refused first, as that (whatever its name)
                    check_output(out, inputs=inputs, force=True, what=f"--{param}")
                    if out is not None and Path(out).suffix.lower() not in suffixes:
                        got = Path(out).suffix or "no extension"
                        raise UserError(f"--{param} {out}: {name} writes {' or '.join(suffixes)} there, not {got}")
            return fn(*args, **kwargs)

        checked.__signature__ = sig
        info.callback = checked

    for info, name in _registered_commands():
        wrap(info, name)


_plain_flags()
_register_all()
_out_suffixes_everywhere()
_force_everywhere()
_json_everywhere()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
