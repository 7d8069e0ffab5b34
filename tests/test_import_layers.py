"""The package layers hold (docs/architecture.md): every import in every module, at the top or inside a
function, goes only to the same package or to a lower layer.

    profiler  <-  features  <-  predictor, gpu_models (independent of each other)  <-  portcast (the facade)
    kernels (the corpus and the ports of measured kernels) may use profiler only
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("profiler", "features", "predictor", "gpu_models", "kernels", "portcast")
#: what each package may import among the project's packages
ALLOWED = {
    "profiler": set(),
    "features": {"profiler"},
    "predictor": {"profiler", "features"},
    "gpu_models": {"profiler", "features"},
    "kernels": {"profiler"},
    "portcast": {"profiler", "features", "predictor", "gpu_models", "kernels"},
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
