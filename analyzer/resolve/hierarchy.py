"""The class hierarchy downwards: the subtypes and implementations of a class or interface (the part of
receiver typing that interface dispatch asks; see `analyzer.resolve.receivers`). Owns the subtype index.
"""

from __future__ import annotations

from collections import defaultdict

from analyzer.resolve.declarations import Declarations
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.typetext import named_types


class Hierarchy:
    """Subtypes and implementations, from the supertypes `Declarations` finds."""

    def __init__(self, program: Program, decls: Declarations) -> None:
        self.p = program
        self.decls = decls
        self._impl_index: dict[DefRef, list[tuple[DefRef, str]]] | None = None
        self._subtypes: dict[DefRef, list[tuple[DefRef, str]]] = {}
        self._implementations: dict[DefRef, list[tuple[DefRef, str]]] = {}

    # --- implementations ----------------------------------------------------------------------
    def _subtype_index(self) -> dict[DefRef, list[tuple[DefRef, str]]]:
        if self._impl_index is None:
            index: dict[DefRef, list[tuple[DefRef, str]]] = defaultdict(list)
            for cref, d in self.p.defs.items():
                if d.kind not in ("class", "interface", "type_alias"):
                    continue
                # `type ModelsOptions = SimpleOptions & Transforms`: a literal typed by the alias is each part
                # (only object literals are found through an alias: `implementations` keeps classes)
                for sup in self.decls.supertypes(cref):
                    verb = "is" if d.kind == "type_alias" else \
                        "extends" if sup.ref.qualname in _names(d.extends) else "implements"
                    kind = "type" if d.kind == "type_alias" else d.kind
                    index[sup.ref].append((cref, f"{cref.path}:{d.line}: {kind} {d.name} {verb} {sup.ref.qualname}"))
            self._impl_index = index
        return self._impl_index

    def subtypes(self, ref: DefRef) -> list[tuple[DefRef, str]]:
        """Classes and interfaces below `ref` (transitively), each with the line that says so.
        Memoised (do not mutate the list): the index is fixed once built, and every interface call asks."""
        found = self._subtypes.get(ref)
        if found is None:
            found = self._subtypes[ref] = self._walk_subtypes(ref)
        return found

    def _walk_subtypes(self, ref: DefRef) -> list[tuple[DefRef, str]]:
        index = self._subtype_index()
        seen: dict[DefRef, str] = {}
        stack = list(index.get(ref, []))
        while stack:
            cref, why = stack.pop()
            if cref in seen:
                continue
            seen[cref] = why
            stack.extend(index.get(cref, []))
        return sorted(seen.items())

    def implementations(self, ref: DefRef) -> list[tuple[DefRef, str]]:
        """Classes that extend/implement `ref`, directly or through interfaces (memoised: do not mutate)."""
        found = self._implementations.get(ref)
        if found is None:
            found = self._implementations[ref] = [(c, why) for c, why in self.subtypes(ref)
                                                  if self.p.defs[c].kind == "class"]
        return found


def _names(texts: list[str]) -> set[str]:
    return {n for t in texts for n in named_types(t)}
