"""Named function types and the functions that produce their values.

`type Translate = (key: string) => string` plays the part an interface plays for objects: a prop, option
or parameter declared `t: Translate` is called as `t(…)`, and when no caller can be followed to the value
given (slot registries, renderer maps, hooks), the functions that make values of that type are the live
candidates — a function declared with it (`const t: Translate = (…) => …`) or a factory whose declared
return type it is (`function localeSeat(…): Translate { return (key) => … }`: the closure it returns
belongs to it). Both are *possible*, like an interface's implementations. A type made by many producers
says too little about one call, so beyond MAX_PRODUCERS none is named.
"""

from __future__ import annotations

import re
from collections import defaultdict

from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.receivers import NamedType, Types
from analyzer.resolve.typetext import named_types, object_type_members

MAX_PRODUCERS = 16
PRODUCER_KINDS = ("function", "method", "getter", "object_method")
_INDEXED = re.compile(r"^\s*([A-Za-z_$][\w$.]*)(?:<[^\[\]]*>)?\[\s*['\"]([A-Za-z_$][\w$]*)['\"]\s*\]\s*$")
_ANNOTATED = re.compile(r"^(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*:\s*(.+?)\s*=\s*"
                        r"(?:async\b|function\b|\(|[\w$]+\s*=>)")


def alias_rhs(signature: str) -> str | None:
    """The right-hand side of `type Name<…> = rhs` (a `=` inside the type parameters is a default)."""
    m = re.match(r"^(?:export\s+)?(?:declare\s+)?type\s+[\w$]+", signature)
    if m is None:
        return None
    depth = 0
    for i in range(m.end(), len(signature)):
        ch = signature[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "=" and depth == 0:
            return signature[i + 1:].strip().lstrip("|").strip()
    return None


def is_function_type(rhs: str) -> bool:
    """`(a: A) => R`, `<T>(x: T) => R`, `new (…) => C`, `async`-free arrows only: a callable type literal."""
    return bool(re.match(r"^(?:new\s+)?(?:<[^()]*>\s*)?\(", rhs)) and "=>" in rhs


class FunctionTypes:
    def __init__(self, program: Program, types: Types) -> None:
        self.p = program
        self.types = types
        self._fn_alias: dict[DefRef, bool] = {}
        self._producers: dict[DefRef, list[tuple[DefRef, tuple[str, ...], bool]]] | None = None
        self._typed_names: set[str] | None = None
        self._aliases: set[str] | None = None

    def typed_names(self) -> set[str]:
        """Names of fields and parameters whose declared type may be a named function type: the only calls
        worth typing (typing every unbound call would cost more than the rest of this pass)."""
        if self._typed_names is None:
            aliases = self._alias_names()
            names: set[str] = set()
            for f in (f for facts in self.p.files.values() for f in facts.fields):
                if f.type and (aliases.intersection(named_types(f.type)) or _INDEXED.match(f.type)):
                    names.add(f.name)
            def candidate(text: str) -> bool:
                return bool(aliases.intersection(named_types(text)) or _INDEXED.match(text))

            for d in self.p.defs.values():
                for prm in d.params:
                    if prm.type and candidate(prm.type):
                        names.add(prm.name)
                    elif prm.type and prm.type.lstrip().startswith("{"):  # `({ t }: { t: Translate })`
                        names.update(k for k, t in object_type_members(prm.type).items() if candidate(t))
            self._typed_names = names
        return self._typed_names

    def _alias_names(self) -> set[str]:
        if self._aliases is None:
            self._aliases = {d.name for d in self.p.defs.values() if d.kind == "type_alias" and (
                is_function_type(alias_rhs(d.signature) or "") or _INDEXED.match(alias_rhs(d.signature) or ""))}
        return self._aliases

    def function_aliases(self, nts: list[NamedType], depth: int = 0) -> list[NamedType]:
        """The named function types among `nts`, following `type A = B` and `type A = X['k']`."""
        out: list[NamedType] = []
        for nt in nts:
            d = self.p.defs.get(nt.ref)
            if d is None or d.kind != "type_alias":
                continue
            rhs = alias_rhs(d.signature) or ""
            if is_function_type(rhs):
                out.append(nt)
            elif depth < 3:
                why = f"{nt.ref.path}:{d.line}: type {d.name} = {rhs[:60]}"
                for found in self.function_aliases(self.text_types(nt.ref.module, rhs, why), depth + 1):
                    out.append(NamedType(found.ref, (*nt.evidence, *found.evidence)))
        return out

    def text_types(self, mod, text: str, why: str) -> list[NamedType]:
        """Named types of a type text, an indexed access `Props['t']` read through to the member's type."""
        m = _INDEXED.match(text)
        if m is None:
            return self.types.resolve_text(mod, text, why)
        out: list[NamedType] = []
        for base in self.types.resolve_text(mod, m.group(1), why):
            for member in self.types.find_member(base.ref, m.group(2)):
                f = member.field
                if f is not None and f.type:
                    out.extend(self.types.resolve_text(member.owner.module, f.type,
                                                       f"{member.owner.path}:{f.line}: {f.owner}.{f.name}: {f.type}"))
        return out

    def producers(self, alias: DefRef) -> list[tuple[DefRef, tuple[str, ...], bool]]:
        """(function, evidence, whether the value is a closure it returns) for one named function type."""
        if self._producers is None:
            self._producers = self._index()
        found = self._producers.get(alias, [])
        return found if len(found) <= MAX_PRODUCERS else []

    def _index(self) -> dict[DefRef, list[tuple[DefRef, tuple[str, ...], bool]]]:
        names = self._alias_names()
        out: dict[DefRef, list[tuple[DefRef, tuple[str, ...], bool]]] = defaultdict(list)
        for ref, d in self.p.defs.items():
            if d.kind not in PRODUCER_KINDS or not d.has_body:
                continue
            declared = _ANNOTATED.match(d.signature) if d.kind == "function" else None
            for text, returned in ((declared.group(1) if declared else None, False), (d.return_type, True)):
                if not text or not names.intersection(named_types(text)):
                    continue
                how = f"returns {text} (a function type): the function it returns" if returned else f"is a {text}"
                why = f"{ref.path}:{d.line}: {d.qualname} {how}"
                for nt in self.function_aliases(self.types.resolve_text(ref.module, text, why)):
                    out[nt.ref].append((ref, nt.evidence, returned))
        return out
