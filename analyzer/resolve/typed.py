"""What receiver typing answers with: a written type (`TypeExpr`), a resolved declaration (`NamedType`),
a module namespace (`NamespaceType`), a member found on a type (`Member`), and the small pieces of type
text reading that more than one part of `analyzer.resolve.receivers` needs.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from analyzer.index.model import Definition, Field
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef
from analyzer.resolve.typetext import split_top

RETURN_TYPE_RE = re.compile(r"ReturnType<\s*typeof\s+([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*>")
KEYED_RE = re.compile(r"^([A-Za-z_$][\w$.]*)\[\s*([A-Z][\w$]*)\s*\]$")  # `this[K]`, `Services[K]`


class TypeExpr(NamedTuple):
    """A type written somewhere (`text` is resolved in `mod`), with why the receiver has it.

    This and the other typing results are named tuples rather than frozen dataclasses: resolution makes
    millions of them, and a frozen dataclass's `__init__` (one `object.__setattr__` per field) cost 2× more."""

    mod: ModuleRef
    text: str
    evidence: str


class NamedType(NamedTuple):
    """A resolved class / interface / type alias. `static` marks the class object itself (`C.m()`)."""

    ref: DefRef
    evidence: tuple[str, ...]
    static: bool = False
    mixin: str | None = None  # reached through `extends Pick<…>`/`Omit<…>`: the line that says so


class NamespaceType(NamedTuple):
    module: ModuleRef
    evidence: tuple[str, ...]


Typed = TypeExpr | NamedType | NamespaceType


class Member(NamedTuple):
    """A member found on a type: a callable definition or a field."""

    owner: DefRef
    definition: Definition | None
    field: Field | None
    mixin: str | None = None  # found through a Pick/Omit heritage (a runtime mixin): the evidence line


def declares_type_parameter(d: Definition, name: str) -> bool:
    """Is `name` one of `d`'s own type parameters (`get<K extends keyof this>(…)`)?"""
    return re.search(rf"[<,]\s*{re.escape(name)}\b", d.signature.split("(", 1)[0]) is not None


def alias_target(signature: str) -> str | None:
    """The right-hand side of `type X<T = D> = Y<T> | Z` (None for object types, which are members)."""
    depth = 0
    for i, ch in enumerate(signature):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "=" and depth == 0 and signature[i + 1:i + 2] != ">":
            rhs = signature[i + 1:].strip().rstrip(";")
            return None if not rhs or rhs.startswith("{") else rhs
    return None


def strip_generic(text: str) -> str:
    """`<T>(select: (s: S) => T) => T` → `(select: (s: S) => T) => T` (a generic function type's parameters)."""
    text = text.strip()
    if not text.startswith("<"):
        return text
    depth = 0
    for i, ch in enumerate(text):
        depth += {"<": 1, ">": -1}.get(ch, 0) if text[i - 1:i + 1] != "=>" else 0
        if depth == 0:
            return text[i + 1:].strip()
    return text


def strip_optional(text: str) -> str:
    """`((a: A) => void) | undefined` → `(a: A) => void` (an optional callback property)."""
    parts = [p.strip() for p in split_top(text, "|") if p.strip() not in ("undefined", "null")]
    return parts[0] if len(parts) == 1 else text
