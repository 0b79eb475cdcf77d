"""No import cycle among the modules of `analyzer/`.

What counts as an import of module A by module B: every `import X` / `from X import N` statement in B's
source, wherever it stands — at the top, inside a function (a deferred import is still a dependency),
under `if TYPE_CHECKING:` (a cycle needed only for annotations is still a cycle in the design). `from P
import N` depends on the module `P.N` when that is a module of the package, else on `P` itself; relative
imports are resolved against B's package. Only modules of the package count (the standard library and
third-party packages cannot close a cycle through us). A package's `__init__` is the module `P`; being a
submodule of P is not an import of P.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent / "analyzer"


def module_names(root: Path) -> dict[str, Path]:
    """Dotted name → file, for every .py file under the package directory `root`."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules that module `name` (the file `path`) imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in found if m in modules and m != name}


def import_graph(root: Path) -> nx.DiGraph:
    modules = module_names(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in imported_modules(name, path, modules))
    return graph


def first_cycle(graph: nx.DiGraph) -> list[str]:
    try:
        return [u for u, _v in nx.find_cycle(graph)]
    except nx.NetworkXNoCycle:
        return []


def test_analyzer_has_no_import_cycle() -> None:
    graph = import_graph(ROOT)
    assert graph.number_of_edges() > 100  # the imports were read (an empty graph has no cycle either)
    assert graph.has_edge("analyzer.graph.build", "analyzer.resolve.pipeline")
    cycle = first_cycle(graph)
    assert not cycle, "import cycle: " + " → ".join([*cycle, cycle[0]])


def test_a_cycle_is_found_through_deferred_relative_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n")
    graph = import_graph(pkg)
    assert sorted(first_cycle(graph)) == ["pkg.a", "pkg.sub.b", "pkg.sub.c"]
    (pkg / "sub" / "c.py").write_text("import os\n")
    assert first_cycle(import_graph(pkg)) == []


def test_only_the_command_line_imports_the_command_line() -> None:
    """Data flows one way: a library module never reaches up into `analyzer.cli` (the CLI is a thin shell
    over `analyzer.api`); `analyzer.__main__` is the entry point and may."""
    graph = import_graph(ROOT)
    upward = sorted((a, b) for a, b in graph.edges
                    if b.startswith("analyzer.cli") and not a.startswith("analyzer.cli") and a != "analyzer.__main__")
    assert graph.has_edge("analyzer.cli.commands.app", "analyzer.apps.setup")
    assert not upward, f"modules outside analyzer/cli import it: {upward}"
