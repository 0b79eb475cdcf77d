"""Scopes and control-flow signals of the usage evaluator, shared by its statement and expression parts."""

from __future__ import annotations

from typing import Any

from analyzer.usage.locate import SourceModule

MAX_STEPS = 5_000_000
MAX_DEPTH = 200
TDZ = object()
SHORT = object()  # an optional chain that short-circuited
OBJECT_PROTOTYPE_NAMES = {"toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
                          "toLocaleString", "constructor", "__proto__"}
SKIPPED_STATEMENTS = {"comment", "empty_statement", "interface_declaration", "type_alias_declaration",
                      "ambient_declaration", "import_statement"}
TYPE_CHILDREN = {"type_annotation", "type_arguments", "type_parameters", "comment"}


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Return(Exception):
    def __init__(self, value: Any, site: Any) -> None:
        self.value = value
        self.site = site


class Scope:
    """A lexical scope; `const` names are remembered so reassignment throws as in JS."""

    __slots__ = ("vars", "consts", "parent", "module_scope")

    def __init__(self, parent: Scope | None, module_scope: Scope | None = None) -> None:
        self.vars: dict[str, Any] = {}
        self.consts: set[str] = set()
        self.parent = parent
        inherited = parent.module_scope if parent else None
        self.module_scope: Scope | None = module_scope if module_scope is not None else inherited

    def declare(self, name: str, value: Any, const: bool = False) -> None:
        self.vars[name] = value
        if const:
            self.consts.add(name)

    def find(self, name: str) -> Scope | None:
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s
            s = s.parent
        return None


def statements(block: Any) -> list[Any]:
    return [c for c in block.named_children if c.type != "comment"]


def pattern_names(pattern: Any, mod: SourceModule) -> list[str]:
    if pattern is None:
        return []
    if pattern.type in ("identifier", "shorthand_property_identifier_pattern"):
        return [mod.text(pattern)]
    names: list[str] = []
    for c in pattern.named_children:
        if c.type == "pair_pattern":
            names += pattern_names(c.child_by_field_name("value"), mod)
        elif c.type in ("object_assignment_pattern", "assignment_pattern"):
            names += pattern_names(c.child_by_field_name("left"), mod)
        elif c.type in ("identifier", "shorthand_property_identifier_pattern", "object_pattern", "array_pattern",
                        "rest_pattern"):
            names += pattern_names(c, mod) if c.type != "rest_pattern" else pattern_names(c.named_children[0], mod)
    return names


def is_optional(node: Any) -> bool:
    return any(c.type in ("optional_chain", "?.") for c in node.children)
