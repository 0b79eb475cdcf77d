"""What a name means in a module: a local definition, an import followed through re-export chains
and barrels, a namespace, a module-level variable, or an external package.
"""

from __future__ import annotations

from typing import NamedTuple

from analyzer.index.model import Binding, Definition, Export, FileFacts, Import
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef, Program

MAX_REEXPORT_DEPTH = 24


class Symbol(NamedTuple):
    """A resolved name. Exactly one of `definition`, `namespace`, `binding`, `external` is set.
    (A named tuple: made for every name lookup, cheaper to build than a frozen dataclass.)"""

    definition: DefRef | None = None
    namespace: ModuleRef | None = None
    binding: tuple[ModuleRef, Binding] | None = None
    external: str | None = None
    evidence: tuple[str, ...] = ()  # "path:line: why" from use site to target
    type_only: bool = False


class ExportIndex(NamedTuple):
    definitions: dict[str, list[Definition]]  # exported top-level definitions by name, in file order
    named: dict[str, Export]  # the first export statement of each exported name
    stars: list[Export]  # `export * from …` (and `export * as ns`) in file order


class SymbolResolver:
    def __init__(self, program: Program) -> None:
        self.program = program
        self._export_cache: dict[tuple[ModuleRef, str], Symbol | None] = {}
        self._name_cache: dict[tuple[ModuleRef, str], Symbol | None] = {}
        self._imports: dict[ModuleRef, dict[str, list[Import]]] = {}
        self._exports: dict[ModuleRef, ExportIndex] = {}

    def imports_of(self, mod: ModuleRef, local: str) -> list[Import]:
        """The imports of `mod` that bind `local`, in file order (indexed per file: every name lookup
        scanned all imports). Do not mutate."""
        index = self._imports.get(mod)
        if index is None:
            index = self._imports[mod] = {}
            facts = self.program.files.get(mod)
            for imp in facts.imports if facts is not None else ():
                index.setdefault(imp.local, []).append(imp)
        return index.get(local, [])

    def _export_index(self, mod: ModuleRef, facts: FileFacts) -> ExportIndex:
        """Per file, what `_resolve_export` scanned for every name: exported top-level definitions by
        name, the first `export` statement of each name, and the `export *`s — each in file order."""
        index = self._exports.get(mod)
        if index is None:
            defs: dict[str, list[Definition]] = {}
            for d in facts.definitions:
                if d.parent is None and d.exported:
                    defs.setdefault(d.name, []).append(d)
            named: dict[str, Export] = {}
            stars: list[Export] = []
            for ex in facts.exports:
                if ex.exported == "*":
                    stars.append(ex)
                else:
                    named.setdefault(ex.exported, ex)
            index = self._exports[mod] = ExportIndex(defs, named, stars)
        return index

    def resolve_name(self, mod: ModuleRef, name: str) -> Symbol | None:
        """A module-level name as seen from inside `mod` (locals beat imports, as in JS)."""
        key = (mod, name)
        if key in self._name_cache:
            return self._name_cache[key]
        self._name_cache[key] = None  # cycle guard
        result = self._resolve_name(mod, name)
        self._name_cache[key] = result
        return result

    def _resolve_name(self, mod: ModuleRef, name: str) -> Symbol | None:
        local = self.program.top_level(mod).get(name)
        if local is not None and local.ambient_module and self.imports_of(mod, name):
            # `import { Context } from 'pkg'` + `declare module 'pkg' { interface Context { … } }` in one file:
            # the augmentation merges into the imported declaration (receivers add it); it does not shadow it
            local = None
        if local is not None:
            return Symbol(definition=DefRef(mod.repo, mod.path, local.qualname),
                          evidence=(f"{mod.path}:{local.line}: {local.kind} {local.name} is declared here",))
        for b in self.program.bindings_named(mod, None, name)[:1]:
            return Symbol(binding=(mod, b), evidence=(f"{mod.path}:{b.line}: module variable",))
        if mod not in self.program.files:
            return None
        for imp in self.imports_of(mod, name)[:1]:  # the first import of the name decides, whatever it finds
            res = self.program.resolver.resolve(mod.repo, mod.path, imp.specifier)
            why = f"{mod.path}:{imp.line}: import {{{imp.imported}}} from {imp.specifier!r} ({res.how})"
            if res.module is None:
                return Symbol(external=res.external or imp.specifier, evidence=(why,), type_only=imp.type_only)
            if imp.imported == "*":
                return Symbol(namespace=res.module, evidence=(why,), type_only=imp.type_only)
            target = self.resolve_export(res.module, imp.imported)
            if target is None:
                return None
            return Symbol(target.definition, target.namespace, target.binding, target.external,
                          (why, *target.evidence), imp.type_only or target.type_only)
        return None

    def resolve_export(self, mod: ModuleRef, name: str, depth: int = 0) -> Symbol | None:
        key = (mod, name)
        if key in self._export_cache:
            return self._export_cache[key]
        self._export_cache[key] = None  # cycle guard
        result = self._resolve_export(mod, name, depth)
        self._export_cache[key] = result
        return result

    def _resolve_export(self, mod: ModuleRef, name: str, depth: int) -> Symbol | None:
        if depth > MAX_REEXPORT_DEPTH:
            return None
        facts = self.program.files.get(mod)
        if facts is None:
            return None
        index = self._export_index(mod, facts)
        if name == "default":  # `export default …` and a definition exported under the name "default"
            found = [d for d in facts.definitions
                     if d.parent is None and ((d.exported and d.name == name) or d.default_export)]
        else:
            found = index.definitions.get(name, [])
        if found:  # declaration merging: the value half stands for the name (its type half is merged in)
            d = next((x for x in found if not x.qualname.endswith("#type")), found[0])
            return Symbol(definition=DefRef(mod.repo, mod.path, d.qualname),
                          evidence=(f"{mod.path}:{d.line}: export {d.name}",))
        stars = index.stars  # only read when no `export` statement names it (see the return below)
        ex = index.named.get(name)
        if ex is not None:  # the first `export {name}` / `export {x as name} from …` decides
            why = f"{mod.path}:{ex.line}: export {name}" + (f" from {ex.specifier!r}" if ex.specifier else "")
            if ex.specifier is None:
                target = self.resolve_name(mod, ex.local or name)
            else:
                res = self.program.resolver.resolve(mod.repo, mod.path, ex.specifier)
                if res.module is None:
                    return Symbol(external=res.external or ex.specifier, evidence=(why,), type_only=ex.type_only)
                if ex.local == "*":  # export * as ns from 'x'
                    return Symbol(namespace=res.module, evidence=(why,), type_only=ex.type_only)
                target = self.resolve_export(res.module, ex.local or name, depth + 1)
            if target is None:
                return None
            return Symbol(target.definition, target.namespace, target.binding, target.external,
                          (why, *target.evidence), ex.type_only or target.type_only)
        for b in self.program.bindings_named(mod, None, name)[:1]:
            if _binding_exported(facts, name):
                return Symbol(binding=(mod, b), evidence=(f"{mod.path}:{b.line}: export const {name}",))
        if name == "default":
            return None
        for ex in stars:
            if ex.specifier is None:
                continue
            res = self.program.resolver.resolve(mod.repo, mod.path, ex.specifier)
            if res.module is None:
                continue
            target = self.resolve_export(res.module, name, depth + 1)
            if target is not None:
                why = f"{mod.path}:{ex.line}: export * from {ex.specifier!r}"
                return Symbol(target.definition, target.namespace, target.binding, target.external,
                              (why, *target.evidence), target.type_only)
        return None


def _binding_exported(facts, name: str) -> bool:  # type: ignore[no-untyped-def]
    return any(ex.exported == name and ex.specifier is None for ex in facts.exports) or any(
        b.name == name and b.scope is None and b.exported for b in facts.bindings)
