"""All extracted facts of the locked repos at their commits, with the lookups resolution needs.

A `Program` is read-only after construction; resolution stages (symbols, receivers, calls, rules)
ask it questions and never mutate it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from analyzer.index.model import Binding, Definition, Field, FileFacts, ObjectLiteral
from analyzer.resolve.modules import ModuleRef, ModuleResolver, RepoModules

MODULE_QUALNAME = "<module>"
TYPE_KINDS = ("class", "interface", "type_alias", "enum")
CALLABLE_KINDS = ("function", "method", "getter", "setter", "constructor", "object_method")
_UNASKED = object()  # a memo's "not asked yet" (None is an answer)


class DefRef(NamedTuple):
    """A definition's identity; its node id is stable across runs (`repo:path:Qualified.name`).

    A named tuple, not a frozen dataclass: resolution hashes and compares hundreds of thousands of these
    (memo keys), and the tuple's C-level hash and equality cost a fraction of the generated Python ones."""

    repo: str
    path: str
    qualname: str

    @property
    def node_id(self) -> str:
        return f"{self.repo}:{self.path}:{self.qualname}"

    @property
    def module(self) -> ModuleRef:
        return ModuleRef(self.repo, self.path)


@dataclass
class RepoInput:
    """One repo's extracted files at one commit, plus what module resolution needs."""

    name: str
    commit: str
    files: list[FileFacts]
    modules: RepoModules


class Program:
    def __init__(self, repos: Iterable[RepoInput]) -> None:
        self.repos = {r.name: r for r in repos}
        self.resolver = ModuleResolver(r.modules for r in self.repos.values())
        self.files: dict[ModuleRef, FileFacts] = {}
        self.defs: dict[DefRef, Definition] = {}
        self._top: dict[ModuleRef, dict[str, Definition]] = {}
        self._children: dict[DefRef, list[Definition]] = defaultdict(list)
        self._fields: dict[DefRef, dict[str, Field]] = defaultdict(dict)
        self._bindings: dict[ModuleRef, dict[str | None, list[Binding]]] = {}
        self._binding_index: dict[ModuleRef, dict[tuple[str | None, str], list[Binding]]] = {}
        self._objects: dict[ModuleRef, dict[str, ObjectLiteral]] = {}
        self.by_name: dict[str, list[DefRef]] = defaultdict(list)
        self.augmentations: dict[tuple[str, str], list[DefRef]] = defaultdict(list)
        self._redeclared: dict[DefRef, list[DefRef]] = {}
        # memos of the two scope walks every call site asks (1.2 million and 500,000 questions on the real
        # repos): exact because the facts above are complete before the first question and never change
        self._scope_chains: dict[tuple[ModuleRef, str | None], tuple[str | None, ...]] = {}
        self._local_functions: dict[tuple[ModuleRef, str | None, str], Definition | None] = {}
        for repo in self.repos.values():
            for facts in repo.files:
                self._add_file(repo.name, facts)

    def _add_file(self, repo: str, facts: FileFacts) -> None:
        mod = ModuleRef(repo, facts.path)
        self.files[mod] = facts
        top: dict[str, Definition] = {}
        for d in facts.definitions:
            ref = DefRef(repo, facts.path, d.qualname)
            self.defs[ref] = d
            self.by_name[d.name].append(ref)
            if d.parent is None:
                # declaration merging: the name means the value half (`CallId(…)`, `new Context()`)
                if d.name not in top or (top[d.name].merges and top[d.name].qualname.endswith("#type")):
                    top[d.name] = d
            else:
                self._children[DefRef(repo, facts.path, d.parent)].append(d)
            if d.ambient_module and d.kind in TYPE_KINDS:
                self.augmentations[(d.ambient_module, d.name)].append(ref)
        self._top[mod] = top
        self._index_redeclared_interfaces(repo, facts)
        for f in facts.fields:
            self._fields[DefRef(repo, facts.path, f.owner)].setdefault(f.name, f)
        scoped: dict[str | None, list[Binding]] = defaultdict(list)
        for b in facts.bindings:
            scoped[b.scope].append(b)
        self._bindings[mod] = scoped
        self._objects[mod] = {o.object_id: o for o in facts.objects}

    def _index_redeclared_interfaces(self, repo: str, facts: FileFacts) -> None:
        """`interface Logger extends A {}` + `interface Logger extends B {}` in one scope are one interface
        (TypeScript merges them); the later ones get `#2` names, so each declaration learns the others."""
        groups: dict[tuple[str | None, str], list[DefRef]] = defaultdict(list)
        for d in facts.definitions:
            if d.kind == "interface":
                groups[(d.parent, d.name)].append(DefRef(repo, facts.path, d.qualname))
        for refs in groups.values():
            if len(refs) > 1:
                for ref in refs:
                    self._redeclared[ref] = [r for r in refs if r != ref]

    # --- lookups ----------------------------------------------------------------------------------
    def top_level(self, mod: ModuleRef) -> dict[str, Definition]:
        return self._top.get(mod, {})

    def children(self, ref: DefRef) -> list[Definition]:
        return self._children.get(ref, [])

    def fields(self, ref: DefRef) -> dict[str, Field]:
        return self._fields.get(ref, {})

    def bindings(self, mod: ModuleRef, scope: str | None) -> list[Binding]:
        return self._bindings.get(mod, {}).get(scope, [])

    def bindings_named(self, mod: ModuleRef, scope: str | None, name: str) -> list[Binding]:
        """Bindings of one name in one scope (indexed: receiver typing asks this for every call)."""
        index = self._binding_index.get(mod)
        if index is None:
            index = {}
            for sc, items in self._bindings.get(mod, {}).items():
                for b in items:
                    index.setdefault((sc, b.name), []).append(b)
            self._binding_index[mod] = index
        return index.get((scope, name), [])

    def object_literal(self, mod: ModuleRef, object_id: str) -> ObjectLiteral | None:
        return self._objects.get(mod, {}).get(object_id)

    def objects(self, mod: ModuleRef) -> Iterable[ObjectLiteral]:
        return self._objects.get(mod, {}).values()

    def parent_ref(self, ref: DefRef) -> DefRef | None:
        d = self.defs.get(ref)
        if d is None or d.parent is None:
            return None
        return DefRef(ref.repo, ref.path, d.parent)

    def enclosing_class(self, ref: DefRef) -> DefRef | None:
        """The class whose `this` a definition sees (its nearest enclosing class)."""
        cur: DefRef | None = ref
        while cur is not None:
            d = self.defs.get(cur)
            if d is not None and d.kind == "class":
                return cur
            cur = self.parent_ref(cur)
        return None

    def scope_chain(self, mod: ModuleRef, scope: str | None) -> tuple[str | None, ...]:
        """The scope and its enclosing definitions' qualnames, innermost first, ending at module level
        (memoised: a tuple, so no caller can change what the next one gets)."""
        key = (mod, scope)
        found = self._scope_chains.get(key)
        if found is None:
            chain: list[str | None] = []
            cur = scope
            while cur is not None:
                chain.append(cur)
                d = self.defs.get(DefRef(mod.repo, mod.path, cur))
                cur = d.parent if d is not None else None
            chain.append(None)
            found = self._scope_chains[key] = tuple(chain)
        return found

    def merged_half(self, ref: DefRef) -> DefRef | None:
        """The other half of a merged declaration (`CallId#type` ↔ `CallId`), if any."""
        d = self.defs.get(ref)
        if d is None or not d.merges:
            return None
        other = DefRef(ref.repo, ref.path, d.merges)
        return other if other in self.defs else None

    def redeclared(self, ref: DefRef) -> list[DefRef]:
        """The other declarations of the same interface in the same scope (declaration merging)."""
        return self._redeclared.get(ref, [])

    def local_function(self, mod: ModuleRef, scope: str | None, name: str) -> Definition | None:
        """A function declared inside the scope chain (`const dispatch = (…) => …` in a function body).
        Memoised per (module, scope, name): the answer depends on the fixed definitions only."""
        key = (mod, scope, name)
        found = self._local_functions.get(key, _UNASKED)
        if found is not _UNASKED:
            return found  # type: ignore[return-value]
        found = None
        for sc in self.scope_chain(mod, scope):
            if sc is None:
                break
            found = next((c for c in self.children(DefRef(mod.repo, mod.path, sc))
                          if c.name == name and c.kind == "function"), None)
            if found is not None:
                break
        self._local_functions[key] = found
        return found
