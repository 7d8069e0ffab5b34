"""No import cycle among the modules of portcast/ (docs/architecture.md): every import counts, at the top of a
module or inside a function, absolute or relative. A cycle is found on the ast (nothing is imported), and the
checker is shown to find one planted in a temporary package.

``from pkg import name`` depends on ``pkg.name`` when that is a module, else on ``pkg`` itself (a package's
``__init__`` is not a dependency of every module below it)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]



def module_graph(root: Path, package: str) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}`` for every module of ``root/package``."""
    mods = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    graph = {}
    for name, path in mods.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[:len(here) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                deps.update(f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names)
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (each a set of modules importing each other),
    sorted; iterative Tarjan."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return sorted(found)


def test_portcast_has_no_import_cycle():
    graph = module_graph(ROOT, "portcast")
    assert "portcast.profile_report" in graph and "portcast.commands._regions" in graph
    assert cycles(graph) == []


def test_the_renderers_import_no_pipeline():
    """The report modules render what the pipeline built; they never import it (the circle this test guards)."""
    graph = module_graph(ROOT, "portcast")
    for module in ("portcast.profile_report", "portcast.report", "portcast.bounds_report", "portcast.formatting"):
        assert "portcast.pipeline" not in graph[module], module


def test_the_checker_finds_a_planted_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import c\n")
    (pkg / "a.py").write_text("import os\n\n\ndef f():\n    from pkg.b import g\n    return g\n")
    (pkg / "b.py").write_text("from .sub import c\n\n\ndef g():\n    pass\n")
    (pkg / "sub" / "c.py").write_text("from ..a import f\n")
    (pkg / "d.py").write_text("import pkg.a\nfrom pkg import b\n")
    graph = module_graph(tmp_path, "pkg")
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.sub.c"}, "pkg.d": {"pkg.a", "pkg.b"},
                     "pkg.sub": {"pkg.sub.c"}, "pkg.sub.c": {"pkg.a"}}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    (pkg / "sub" / "c.py").write_text("import os\n")
    assert cycles(module_graph(tmp_path, "pkg")) == []
