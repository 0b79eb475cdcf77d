"""The files `analyze hazards` reads, as trees from the index's shared syntax-tree service.

Only files holding a function the analysis visits are asked for (on demand); reading and parsing is the
service's (`analyzer.index.trees`, cached per blob), this module adds the hazards' view of a file: its
imports and the function-like node a graph node (`repo:path:qualname`, with `line`/`end_line`) stands for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from tree_sitter import Node, Query, QueryCursor

from analyzer.index.trees import MissingBlob, SyntaxTrees
from analyzer.parse.languages import get_language, language_for_path

FUNCTION_NODES = frozenset({"function_declaration", "generator_function_declaration", "method_definition",
                            "arrow_function", "function_expression", "function"})


@cache
def _query(name: str, language: str) -> Query:
    text = resources.files("analyzer.hazards").joinpath(name).read_text(encoding="utf-8")
    return Query(get_language(language), text)


def captures(name: str, language: str, node: Node) -> dict[str, list[Node]]:
    return QueryCursor(_query(name, language)).captures(node)


def matches(name: str, language: str, node: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    return QueryCursor(_query(name, language)).matches(node)


@dataclass
class ParsedFile:
    repo: str
    path: str
    source: bytes
    root: Node
    language: str
    imports: dict[str, str] = field(default_factory=dict)  # local name → module specifier
    imported_as: dict[str, str] = field(default_factory=dict)  # local name → exported name
    _by_row: dict[int, list[Node]] = field(default_factory=dict)
    _local_names: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)

    def text(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    def local_names(self, exported: frozenset[str]) -> frozenset[str]:
        """`exported` and the local names this file imports them under (asked for every condition and `try`)."""
        found = self._local_names.get(exported)
        if found is None:
            found = self._local_names[exported] = exported | {
                local for local, name in self.imported_as.items() if name in exported}
        return found

    def function_at(self, line: int, end_line: int) -> Node | None:
        """The function-like node of a definition starting at `line` (1-based), preferring the one that
        also ends at `end_line` (a declaration's value, a method, a field arrow)."""
        if not self._by_row:
            for fn in captures("functions.scm", self.language, self.root).get("fn", []):
                rows = {fn.start_point[0]}
                up = fn.parent
                for _ in range(3):  # declarator → declaration → export; pair; field definition
                    if up is None:
                        break
                    rows.add(up.start_point[0])
                    up = up.parent
                for row in rows:
                    self._by_row.setdefault(row, []).append(fn)
        found = self._by_row.get(line - 1, [])
        if not found:
            return None
        exact = [f for f in found if f.end_point[0] == end_line - 1]
        pool = exact or found
        return max(pool, key=lambda f: f.end_byte - f.start_byte)


class SourceFiles:
    """Parsed files at the analysed commits, read through one `SyntaxTrees` (shared when one is passed)."""

    def __init__(self, git_dirs: dict[str, str], commits: dict[str, str], trees: SyntaxTrees | None = None) -> None:
        self.commits = commits
        self.git_dirs = git_dirs
        self._own_trees = trees is None
        self.trees = trees or SyntaxTrees()
        self._files: dict[tuple[str, str], ParsedFile | None] = {}
        self.unreadable: list[str] = []

    def get(self, repo: str, path: str) -> ParsedFile | None:
        key = (repo, path)
        if key not in self._files:
            self._files[key] = self._load(repo, path)
        return self._files[key]

    def _load(self, repo: str, path: str) -> ParsedFile | None:
        git_dir = self.git_dirs.get(repo)
        if git_dir is None or language_for_path(path) is None:
            return None
        try:
            tree = self.trees.at(git_dir, self.commits[repo], path)
        except (MissingBlob, KeyError):  # a missing blob is reported, not fatal
            self.unreadable.append(f"{repo}:{path}")
            return None
        if tree is None:
            return None
        pf = ParsedFile(repo, path, tree.source, tree.root, tree.language)
        _read_imports(pf)
        return pf

    def close(self) -> None:
        if self._own_trees:
            self.trees.close()


def _read_imports(pf: ParsedFile) -> None:
    for stmt in pf.root.children:
        if stmt.type != "import_statement":
            continue
        got = captures("imports.scm", pf.language, stmt)
        modules = got.get("module", [])
        if not modules:
            continue
        module = pf.text(modules[0])
        for spec in descendants(stmt, "import_specifier"):
            name = spec.child_by_field_name("name")
            alias = spec.child_by_field_name("alias")
            if name is not None:
                local = pf.text(alias or name)
                pf.imports[local] = module
                pf.imported_as[local] = pf.text(name)
        for binding in got.get("local", []):
            if binding.parent is not None and binding.parent.type != "import_specifier":
                pf.imports[pf.text(binding)] = module
                pf.imported_as[pf.text(binding)] = "*" if binding.parent.type == "namespace_import" else "default"


def descendants(node: Node, kind: str) -> list[Node]:
    """Every node of `kind` below `node` (itself included)."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == kind:
            out.append(n)
        stack.extend(n.children)
    return out


def parameter_nodes(fn: Node) -> list[Node]:
    """A function's parameters in order: an arrow function's lone `x` or the entries of its parameter list."""
    single = fn.child_by_field_name("parameter")
    if single is not None:
        return [single]
    params = fn.child_by_field_name("parameters")
    return [c for c in (params.named_children if params else []) if c.type not in ("comment", "decorator")]


def unwrap(node: Node) -> Node:
    while node.type in ("parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression",
                        "await_expression") and node.named_children:
        node = node.named_children[0]
    return node


def base_identifier(node: Node) -> Node | None:
    while node.type in ("member_expression", "subscript_expression"):
        obj = node.child_by_field_name("object")
        if obj is None:
            return None
        node = obj
    return node if node.type == "identifier" else None


def key_text(pf: ParsedFile, key: Node | None) -> str:
    if key is None:
        return ""
    text = pf.text(key)
    return text[1:-1] if key.type == "string" else text


def pattern_names(pf: ParsedFile, pattern: Node) -> Iterable[tuple[Node, str | None]]:
    """Identifiers a destructuring pattern binds (`{ a, b: c, ...rest }`, `[x, y]`), each with the field
    of the top-level object it reads (None for array elements, rest and nested patterns)."""
    out: list[tuple[Node, str | None]] = []
    stack: list[tuple[Node, str | None]] = [(c, None) for c in pattern.named_children] \
        if pattern.type in ("object_pattern", "array_pattern") else [(pattern, None)]
    top = pattern.type == "object_pattern"
    while stack:
        n, key = stack.pop()
        if n.type == "shorthand_property_identifier_pattern":
            out.append((n, pf.text(n) if top and n.parent == pattern else key))
            continue
        if n.type == "identifier":
            out.append((n, key))
            continue
        if n.type == "pair_pattern":
            value = n.child_by_field_name("value")
            k = n.child_by_field_name("key")
            if value is not None:
                stack.append((value, key_text(pf, k) if top and n.parent == pattern else None))
            continue
        if n.type in ("assignment_pattern", "object_assignment_pattern"):
            left = n.child_by_field_name("left")
            if left is not None:
                field_key = pf.text(left) if top and n.parent == pattern and left.type.startswith("shorthand") else key
                stack.append((left, field_key))
            continue
        stack.extend((c, None) for c in n.named_children if not c.type.endswith("type_annotation"))
    return out


def module_string(pf: ParsedFile, name: str) -> str | None:
    """The string a module-level `const NAME = '…'` of this file holds (a section name kept in a constant)."""
    for stmt in pf.root.named_children:
        decl = stmt.child_by_field_name("declaration") if stmt.type == "export_statement" else stmt
        if decl is None or decl.type != "lexical_declaration":
            continue
        for d in decl.named_children:
            ident, value = d.child_by_field_name("name"), d.child_by_field_name("value")
            if d.type == "variable_declarator" and ident is not None and value is not None \
                    and pf.text(ident) == name and value.type == "string":
                return pf.text(value)[1:-1]
    return None
