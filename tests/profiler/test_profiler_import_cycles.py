"""No import cycle among the profiler's modules: the module import graph is built from the source with ast
(imports inside functions included, relative imports resolved, a ``from package import name`` counted as an
import of the submodule ``name`` when there is one, else of the package; imports under ``if TYPE_CHECKING:``
never run and are left out), and it must have no cycle. A planted cycle in a temporary package shows that the
checker finds one."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of the package at ``package_dir`` (a package is its __init__.py)."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                for stmt in node.body:
                    skip.update(id(n) for n in ast.walk(stmt))
    return skip


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules among ``modules`` that the module ``name`` (file ``path``) imports, anywhere in its code."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = _type_checking_nodes(tree)
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            submodules = [f"{base}.{a.name}" for a in node.names]
            # a name that is no submodule is an attribute of the module ``base`` (of a package: its __init__)
            targets = submodules + ([base] if any(m not in modules for m in submodules) else [])
        else:
            continue
        for target in targets:
            while target and target not in modules:  # an attribute of a module: the module it belongs to
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    modules = module_names(package_dir)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as the list of its modules (the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def _in(package: str, module: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_import_cycle_among_profiler_modules():
    graph = import_graph(ROOT / "profiler")
    assert "profiler.threadspace" in graph["profiler.instrument.driver"]  # imported inside a function: seen
    assert "profiler.user_code" in graph["profiler.threadspace.source_facts"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_instrumenter_and_the_thread_space_do_not_import_each_other():
    graph = import_graph(ROOT / "profiler")
    thread_space = [m for m in graph if _in("profiler.threadspace", m)]
    assert len(thread_space) > 1
    assert not any(_in("profiler.instrument", d) for m in thread_space for d in graph[m])
    assert not any(_in("profiler.instrument", d) or _in("profiler.threadspace", d) for d in graph["profiler.user_code"])


def test_the_checker_finds_a_planted_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""pkg"""\n')
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("import os\n\n\ndef f():\n    from .sub.c import g\n    return g\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                      "    from ..b import f\n\n\ndef g():\n    return 1\n")
    graph = import_graph(pkg)
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.sub.c"}, "pkg.sub": set(), "pkg.sub.c": set()}
    assert find_cycle(graph) is None  # the TYPE_CHECKING import is not a cycle

    (pkg / "sub" / "c.py").write_text("def g():\n    from pkg.a import b\n    return b\n")
    graph = import_graph(pkg)
    assert graph["pkg.sub.c"] == {"pkg.a"}
    cycle = find_cycle(graph)
    assert cycle == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]
