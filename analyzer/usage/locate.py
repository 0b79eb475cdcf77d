"""Find upstream functions at a commit and read their modules (declarations, imports, exports).

`FunctionLocator` is the seam: the evaluator only asks it for a module by path, for the target of a
relative import, and for a named function. `GitFunctionLocator` answers from the git objects of one commit
(GitPython + `git grep`), so nothing is checked out; the cross-repo index can replace it later.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import git

from analyzer.parse.languages import is_declaration_file, language_for_path, parse_bytes
from analyzer.usage.errors import LocateError
from analyzer.usage.values import Site

FUNCTION_NODES = ("function_declaration", "function_expression", "arrow_function", "method_definition")
WRAPPERS = ("as_expression", "satisfies_expression", "parenthesized_expression", "non_null_expression")
SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".jsx")


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
    """Parse a file and collect its top-level declarations, imports and exports."""
    language = language_for_path(path)
    if language is None:
        raise LocateError(f"{path}: not a TypeScript/JavaScript source; the usage evaluator reads only those")
    tree = parse_bytes(source, language)
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


class GitFunctionLocator:
    """Reads files straight from a commit's tree; caches parsed modules."""

    def __init__(self, repo: git.Repo, commit: str, repo_name: str) -> None:
        self.repo = repo
        self.repo_name = repo_name
        try:
            self._commit = repo.commit(commit)
        except (ValueError, git.BadName, git.GitCommandError):
            raise LocateError(f"{repo_name}: commit {commit} is not in {repo.git_dir}; fetch it, or pass another "
                              f"commit with --at {repo_name}=SHA") from None
        self.commit = self._commit.hexsha
        self._modules: dict[str, SourceModule] = {}

    def exists(self, path: str) -> bool:
        try:
            obj = self._commit.tree / path
        except KeyError:
            return False
        return obj.type == "blob"

    def module(self, path: str) -> SourceModule:
        if path not in self._modules:
            try:
                blob = self._commit.tree / path
            except KeyError:
                raise LocateError(f"{self.repo_name}@{self.commit[:10]}: no file {path}") from None
            self._modules[path] = parse_module(self.repo_name, path, blob.data_stream.read())
        return self._modules[path]

    def json_data(self, path: str) -> Any:
        """A JSON file of the tree (`import x from './x.json' with { type: 'json' }`)."""
        try:
            return json.loads((self._commit.tree / path).data_stream.read())
        except KeyError:
            raise LocateError(f"{self.repo_name}@{self.commit[:10]}: no file {path}") from None

    def resolve_import(self, from_path: str, spec: str) -> str | None:
        """A relative specifier → the file it means (TS ESM convention: './x.js' is written for x.ts)."""
        if not spec.startswith("."):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), spec))
        stem, ext = posixpath.splitext(base)
        candidates = []
        if ext == ".json":
            candidates.append(base)
        elif ext in (".js", ".mjs", ".cjs", ".jsx"):
            ts_ext = {".js": [".ts", ".tsx"], ".mjs": [".mts"], ".cjs": [".cts"], ".jsx": [".tsx"]}[ext]
            candidates += [stem + e for e in ts_ext] + [base]
        elif ext in SOURCE_SUFFIXES:
            candidates.append(base)
        else:
            candidates += [base + e for e in (".ts", ".tsx", ".js")]
            candidates += [base + "/index" + e for e in (".ts", ".tsx", ".js")]
        return next((c for c in candidates if self.exists(c)), None)

    def find(self, name: str, path_hint: str | None = None, search_under: Sequence[str] = ()) -> LocatedFunction:
        """Locate `name` (dotted for methods/object properties) in `path_hint`, or by `git grep` under the dirs."""
        head, *rest = name.split(".")
        if path_hint:
            paths = [path_hint]
        else:
            paths = self._grep_declarations(head, search_under)
        found: list[LocatedFunction] = []
        for path in paths:
            mod = self.module(path)
            decl = mod.declarations.get(head)
            if decl is None:
                continue
            found.append(LocatedFunction(mod, function_in(mod, decl, rest, name), name, decl))
        where = path_hint or (", ".join(search_under) or "the whole tree")
        if not found:
            raise LocateError(f"{self.repo_name}@{self.commit[:10]}: no top-level declaration of {head} in {where}; "
                              "the function may have moved or been renamed at this commit")
        if len(found) > 1:
            places = "; ".join(str(f.site) for f in found)
            raise LocateError(f"{self.repo_name}@{self.commit[:10]}: {name} is declared in {len(found)} places "
                              f"({places}); ambiguous, pass the path explicitly")
        return found[0]

    def _grep_declarations(self, name: str, under: Sequence[str]) -> list[str]:
        pattern = (rf"(function\*?\s+{re.escape(name)}\b|(const|let|var|class)\s+{re.escape(name)}\b)")
        pathspecs = list(under) or ["."]
        try:
            out = self.repo.git.grep("-n", "-E", pattern, self.commit, "--", *pathspecs)
        except git.GitCommandError as exc:
            if exc.status == 1:
                return []
            reason = str(exc.stderr).strip()
            raise LocateError(f"{self.repo_name}: git grep failed at {self.commit[:10]}: {reason}") from None
        paths: list[str] = []
        for line in out.splitlines():
            _, path, _rest = line.split(":", 2)
            if (path not in paths and path.endswith(SOURCE_SUFFIXES) and not is_declaration_file(path)
                    and not re.search(r"(^|/)(tests?|__tests__)/|\.(spec|test)\.[cm]?[jt]sx?$", path)):
                paths.append(path)
        return paths


class MemoryLocator:
    """A locator over in-memory files (fixtures, tests): same resolution rules as the git one."""

    def __init__(self, files: dict[str, str | bytes], repo_name: str = "fixture", commit: str = "0" * 40) -> None:
        self.files = {p: (s.encode() if isinstance(s, str) else s) for p, s in files.items()}
        self.repo_name = repo_name
        self.commit = commit
        self._modules: dict[str, SourceModule] = {}

    def exists(self, path: str) -> bool:
        return path in self.files

    def module(self, path: str) -> SourceModule:
        if path not in self._modules:
            if path not in self.files:
                raise LocateError(f"{self.repo_name}: no file {path}")
            self._modules[path] = parse_module(self.repo_name, path, self.files[path])
        return self._modules[path]

    resolve_import = GitFunctionLocator.resolve_import

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
