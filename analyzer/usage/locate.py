"""Upstream modules as the evaluator sees them (declarations, imports, exports) and how functions are found.

`FunctionLocator` is the seam: the evaluator only asks it for a module by path, for the target of an
import, and for a named function. The locator `analyze reconcile` uses reads the index
(`analyzer.usage.indexed`); `MemoryLocator` serves in-memory fixtures. Both resolve imports through
`analyzer.resolve.modules`, the graph's one module resolver.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from analyzer.index.configs import RepoConfigs
from analyzer.parse.languages import language_for_path, parse_bytes
from analyzer.resolve.modules import ModuleResolver, RepoModules
from analyzer.usage.errors import LocateError
from analyzer.usage.values import Site

FUNCTION_NODES = ("function_declaration", "function_expression", "arrow_function", "method_definition")
WRAPPERS = ("as_expression", "satisfies_expression", "parenthesized_expression", "non_null_expression")


@dataclass(frozen=True)
class ImportBinding:
    """`import { imported as local } from 'source'` (imported is 'default' or '*' for those forms)."""

    local: str
    imported: str
    source: str
    line: int
    type_only: bool = False


@dataclass
class SourceModule:
    """One parsed file at one commit: its top-level declarations, imports and exports."""

    repo_name: str
    path: str
    source: bytes
    tree: Any
    declarations: dict[str, Any] = field(default_factory=dict)  # name → declaring node
    imports: dict[str, ImportBinding] = field(default_factory=dict)
    exports: dict[str, str] = field(default_factory=dict)  # exported name → local name
    reexports: dict[str, tuple[str, str]] = field(default_factory=dict)  # exported → (imported, source)
    star_reexports: list[str] = field(default_factory=list)

    def site(self, node: Any) -> Site:
        return Site(self.repo_name, self.path, node.start_point[0] + 1)

    def where(self, node: Any) -> str:
        return str(self.site(node))

    def text(self, node: Any) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8")


@dataclass(frozen=True)
class LocatedFunction:
    """A function node found for a (dotted) name, with the module that holds it."""

    module: SourceModule
    node: Any
    qualname: str
    declaration: Any  # the top-level declaration the function belongs to

    @property
    def site(self) -> Site:
        return self.module.site(self.node)


class FunctionLocator(Protocol):
    """What the evaluator needs from an index of one repo at one commit."""

    repo_name: str
    commit: str

    def module(self, path: str) -> SourceModule: ...

    def json_data(self, path: str) -> Any: ...

    def resolve_import(self, from_path: str, spec: str) -> str | None: ...

    def find(self, name: str, path_hint: str | None = None, search_under: Sequence[str] = ()) -> LocatedFunction: ...


def parse_module(repo_name: str, path: str, source: bytes) -> SourceModule:
    """Parse in-memory text (fixtures) and collect its top-level declarations, imports and exports."""
    language = language_for_path(path)
    if language is None:
        raise LocateError(f"{path}: not a TypeScript/JavaScript source; the usage evaluator reads only those")
    return module_of(repo_name, path, source, parse_bytes(source, language))


def module_of(repo_name: str, path: str, source: bytes, tree: Any) -> SourceModule:
    """A parsed file's top-level declarations, imports and exports (the tree from `analyzer.index.trees`)."""
    mod = SourceModule(repo_name, path, source, tree)
    for stmt in tree.root_node.named_children:
        _collect(mod, stmt)
    return mod


def _collect(mod: SourceModule, stmt: Any, exported: bool = False) -> None:
    t = stmt.type
    if t == "export_statement":
        decl = stmt.child_by_field_name("declaration")
        source = stmt.child_by_field_name("source")
        if decl is not None:
            for name in _declared_names(decl):
                mod.exports[name] = name
            _collect(mod, decl, exported=True)
            return
        if any(c.type == "default" for c in stmt.children):
            value = stmt.child_by_field_name("value")
            if value is not None and value.type == "identifier":
                mod.exports["default"] = mod.text(value)
            return
        clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
        if clause is None:
            if source is not None and any(c.type == "*" for c in stmt.children):
                mod.star_reexports.append(_string_value(mod, source))
            return
        for spec in clause.named_children:
            if spec.type != "export_specifier":
                continue
            name = mod.text(spec.child_by_field_name("name"))
            alias_node = spec.child_by_field_name("alias")
            alias = mod.text(alias_node) if alias_node is not None else name
            if source is not None:
                mod.reexports[alias] = (name, _string_value(mod, source))
            else:
                mod.exports[alias] = name
        return
    if t == "import_statement":
        _collect_import(mod, stmt)
        return
    if t in ("function_declaration", "class_declaration", "abstract_class_declaration"):
        name = stmt.child_by_field_name("name")
        if name is not None:
            mod.declarations.setdefault(mod.text(name), stmt)
        return
    if t in ("lexical_declaration", "variable_declaration"):
        for d in stmt.named_children:
            if d.type == "variable_declarator" and d.child_by_field_name("name").type == "identifier":
                mod.declarations.setdefault(mod.text(d.child_by_field_name("name")), d)


def _declared_names(decl: Any) -> Iterable[str]:
    if decl.type in ("lexical_declaration", "variable_declaration"):
        for d in decl.named_children:
            n = d.child_by_field_name("name") if d.type == "variable_declarator" else None
            if n is not None and n.type == "identifier":
                yield n.text.decode()
    else:
        n = decl.child_by_field_name("name")
        if n is not None:
            yield n.text.decode()


def _string_value(mod: SourceModule, node: Any) -> str:
    return mod.text(node)[1:-1]


def _collect_import(mod: SourceModule, stmt: Any) -> None:
    source = stmt.child_by_field_name("source")
    if source is None:
        return
    spec = _string_value(mod, source)
    line = stmt.start_point[0] + 1
    stmt_type_only = any(c.type == "type" for c in stmt.children)
    clause = next((c for c in stmt.named_children if c.type == "import_clause"), None)
    if clause is None:
        return
    for part in clause.named_children:
        if part.type == "identifier":
            name = mod.text(part)
            mod.imports[name] = ImportBinding(name, "default", spec, line, stmt_type_only)
        elif part.type == "namespace_import":
            ident = next(c for c in part.named_children if c.type == "identifier")
            mod.imports[mod.text(ident)] = ImportBinding(mod.text(ident), "*", spec, line, stmt_type_only)
        elif part.type == "named_imports":
            for s in part.named_children:
                if s.type != "import_specifier":
                    continue
                name = mod.text(s.child_by_field_name("name"))
                alias_node = s.child_by_field_name("alias")
                local = mod.text(alias_node) if alias_node is not None else name
                type_only = stmt_type_only or any(c.type == "type" for c in s.children)
                mod.imports[local] = ImportBinding(local, name, spec, line, type_only)


def unwrap(node: Any) -> Any:
    """Strip `as`, `satisfies`, `!` and parentheses around an expression."""
    while node is not None and node.type in WRAPPERS:
        node = node.named_children[0]
    return node


def function_in(mod: SourceModule, decl: Any, parts: Sequence[str], qualname: str) -> Any:
    """The function node for `parts` (after the top-level name) inside a declaration, or raise."""
    node = decl
    if node.type == "variable_declarator":
        node = unwrap(node.child_by_field_name("value"))
    for key in parts:
        if node is None:
            break
        if node.type in ("class_declaration", "abstract_class_declaration", "class"):
            body = node.child_by_field_name("body")
            node = next((m for m in body.named_children if m.type == "method_definition"
                         and mod.text(m.child_by_field_name("name")) == key), None)
        elif node.type == "object":
            found = None
            for p in node.named_children:
                if p.type == "pair" and mod.text(p.child_by_field_name("key")).strip("'\"") == key:
                    found = unwrap(p.child_by_field_name("value"))
                elif p.type == "method_definition" and mod.text(p.child_by_field_name("name")) == key:
                    found = p
            node = found
        else:
            node = None
    if node is None or node.type not in FUNCTION_NODES:
        raise LocateError(f"{mod.repo_name}:{mod.path}: {qualname} is not a function declaration, arrow function, "
                          "method or object-literal function there; check the name at this commit")
    return node


def json_import(from_path: str, spec: str) -> str | None:
    """The file a relative `.json` import names (`import x from './x.json' with { type: 'json' }`): data, not a
    module, so it is a plain path join (module resolution only knows indexed sources)."""
    if not spec.startswith(".") or not spec.endswith(".json"):
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(from_path), spec))


def resolve_module(resolver: ModuleResolver, repo_name: str, from_path: str, spec: str,
                   exists: Any) -> str | None:
    """An import specifier → the file it means: JSON data by path, modules through `analyzer.resolve.modules`."""
    if spec.endswith(".json"):
        target = json_import(from_path, spec)
        return target if target is not None and exists(target) else None
    found = resolver.resolve(repo_name, from_path, spec)
    return found.module.path if found.module is not None else None


def find_declared(locator: Any, name: str, paths: Sequence[str], where: str) -> LocatedFunction:
    """The one function `name` (dotted for methods/object properties) among the top-level declarations of `paths`."""
    head, *rest = name.split(".")
    found: list[LocatedFunction] = []
    for path in paths:
        mod = locator.module(path)
        decl = mod.declarations.get(head)
        if decl is None:
            continue
        found.append(LocatedFunction(mod, function_in(mod, decl, rest, name), name, decl))
    if not found:
        raise LocateError(f"{locator.repo_name}@{locator.commit[:10]}: no top-level declaration of {head} in {where}; "
                          "the function may have moved or been renamed at this commit")
    if len(found) > 1:
        places = "; ".join(str(f.site) for f in found)
        raise LocateError(f"{locator.repo_name}@{locator.commit[:10]}: {name} is declared in {len(found)} places "
                          f"({places}); ambiguous, pass the path explicitly")
    return found[0]


class MemoryLocator:
    """A locator over in-memory files (fixtures, tests): the same module resolution as the indexed one."""

    def __init__(self, files: dict[str, str | bytes], repo_name: str = "fixture", commit: str = "0" * 40) -> None:
        self.files = {p: (s.encode() if isinstance(s, str) else s) for p, s in files.items()}
        self.repo_name = repo_name
        self.commit = commit
        self._modules: dict[str, SourceModule] = {}
        sources = {p for p in self.files if language_for_path(p) is not None}
        self._resolver = ModuleResolver([RepoModules(repo_name, sources, RepoConfigs())])

    def exists(self, path: str) -> bool:
        return path in self.files

    def module(self, path: str) -> SourceModule:
        if path not in self._modules:
            if path not in self.files:
                raise LocateError(f"{self.repo_name}: no file {path}")
            self._modules[path] = parse_module(self.repo_name, path, self.files[path])
        return self._modules[path]

    def resolve_import(self, from_path: str, spec: str) -> str | None:
        return resolve_module(self._resolver, self.repo_name, from_path, spec, self.exists)

    def json_data(self, path: str) -> Any:
        if path not in self.files:
            raise LocateError(f"{self.repo_name}: no file {path}")
        return json.loads(self.files[path])

    def find(self, name: str, path_hint: str | None = None, search_under: Sequence[str] = ()) -> LocatedFunction:
        head, *rest = name.split(".")
        paths = [path_hint] if path_hint else [p for p in self.files
                                               if not search_under or p.startswith(tuple(search_under))]
        found = []
        for path in paths:
            mod = self.module(path)
            if head in mod.declarations:
                found.append(LocatedFunction(mod, function_in(mod, mod.declarations[head], rest, name),
                                             name, mod.declarations[head]))
        if len(found) != 1:
            raise LocateError(f"{self.repo_name}: {name} found {len(found)} times; expected exactly one")
        return found[0]
