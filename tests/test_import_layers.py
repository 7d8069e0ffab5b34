"""The package layers hold (docs/architecture.md): every import in every module, at the top or inside a
function, goes only to the same package or to a lower layer.

    core  <-  profiler  <-  features  <-  gpu_models  <-  kernels  <-  predictor  <-  portcast (the facade)

core (atomic writes, bounded JSON, the version, the trace schema) imports nothing of Portcast; each package
above may import every package below it.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "profiler", "features", "predictor", "gpu_models", "kernels", "portcast")
#: what each package may import among the project's packages
ALLOWED = {
    "core": set(),
    "profiler": {"core"},
    "features": {"core", "profiler"},
    "gpu_models": {"core", "profiler", "features"},
    "kernels": {"core", "profiler", "features", "gpu_models"},
    "predictor": {"core", "profiler", "features", "gpu_models", "kernels"},
    "portcast": {"core", "profiler", "features", "predictor", "gpu_models", "kernels"},
}


def project_imports(path: Path):
    """(line, imported top-level package) of every absolute import of a project package in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in PACKAGES:
                yield node.lineno, top


@pytest.mark.parametrize("package", PACKAGES)
def test_package_imports_only_lower_layers(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, top in project_imports(path):
            if top != package and top not in ALLOWED[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {top}")
    assert bad == [], f"{package} may import only {sorted(ALLOWED[package]) or 'nothing of the project'}"


def test_the_checker_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import os\n\n\ndef g():\n    from portcast.cli import app\n    import features.mix as m\n")
    assert sorted(project_imports(f)) == [(5, "portcast"), (6, "features")]


def command_imports(path: Path):
    """(line, module) of every import of a ``portcast.commands`` module in ``path`` (absolute or relative)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .x import ... inside portcast/commands
                yield node.lineno, node.module.split(".")[0]
            elif node.level == 0 and node.module and node.module.startswith("portcast.commands."):
                yield node.lineno, node.module.split(".")[2]
            elif node.level == 0 and node.module == "portcast.commands":
                for a in node.names:
                    yield node.lineno, a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("portcast.commands."):
                    yield node.lineno, a.name.split(".")[2]


def test_no_command_imports_another_command():
    """A command module imports only the shared modules of portcast/commands (``_common``, ``_regions``,
    ``_streams``: names starting with ``_``); what two commands share lives there or in the pipeline."""
    bad = []
    for path in sorted((ROOT / "portcast" / "commands").glob("*.py")):
        for line, mod in command_imports(path):
            if not mod.startswith("_"):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports the command module {mod}")
    assert bad == []


def test_the_command_checker_sees_every_form(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from ._common import x\nfrom .simulate import y\n\n\ndef g():\n"
                 "    from portcast.commands.profile import z\n    import portcast.commands.record\n"
                 "    from portcast.commands import scale\n")
    assert sorted(command_imports(f)) == [(1, "_common"), (2, "simulate"), (6, "profile"), (7, "record"),
                                          (8, "scale")]
