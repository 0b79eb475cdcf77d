"""Erase TypeScript-only syntax from a node's text, using the tree-sitter tree (for the Node differential check).

Removed: type annotations (incl. return types and `this: T` parameters), type arguments and parameters,
`as T`, `satisfies T`, the non-null `!`, the optional-parameter `?`, and interface / type-alias / `declare`
statements. Everything else is copied byte for byte, so the JavaScript that Node runs is the upstream code.
"""

from __future__ import annotations

from typing import Any

from analyzer.usage.errors import UnsupportedSyntax
from analyzer.usage.locate import SourceModule

DROP_NODES = {"type_annotation", "type_arguments", "type_parameters", "asserts_annotation",
              "type_predicate_annotation", "omitting_type_annotation", "opting_type_annotation",
              "interface_declaration", "type_alias_declaration", "ambient_declaration"}
REFUSE_NODES = {"enum_declaration", "accessibility_modifier", "abstract_class_declaration", "decorator",
                "internal_module", "module"}


def strip_types(mod: SourceModule, node: Any) -> str:
    """The JavaScript text of `node` with its TypeScript-only syntax removed."""
    cuts: list[tuple[int, int]] = []
    _collect_cuts(mod, node, cuts)
    out: list[bytes] = []
    pos = node.start_byte
    for start, end in sorted(cuts):
        if start < pos:  # nested inside an earlier cut
            start = pos
            if end <= pos:
                continue
        out.append(mod.source[pos:start])
        pos = end
    out.append(mod.source[pos:node.end_byte])
    return b"".join(out).decode("utf-8")


def _collect_cuts(mod: SourceModule, node: Any, cuts: list[tuple[int, int]]) -> None:
    t = node.type
    if t in DROP_NODES:
        cuts.append((node.start_byte, node.end_byte))
        return
    if t in REFUSE_NODES:
        raise UnsupportedSyntax(f"{t} (no plain-JavaScript equivalent for the differential check)", mod.where(node))
    if t in ("as_expression", "satisfies_expression"):
        first = node.named_children[0]
        cuts.append((first.end_byte, node.end_byte))
        _collect_cuts(mod, first, cuts)
        return
    if t == "non_null_expression":
        cuts.append((node.end_byte - 1, node.end_byte))
    if t == "optional_parameter":
        for c in node.children:
            if c.type == "?":
                cuts.append((c.start_byte, c.end_byte))
    if t == "required_parameter" and node.child_by_field_name("pattern") is not None \
            and node.child_by_field_name("pattern").type == "this":
        cuts.append((node.start_byte, node.end_byte))
        return
    if t == "variable_declarator":
        for c in node.children:
            if c.type == "!":  # definite assignment `let x!: T`
                cuts.append((c.start_byte, c.end_byte))
    if t == "type_assertion":  # `<T>expr`
        raise UnsupportedSyntax("angle-bracket type assertion", mod.where(node))
    for c in node.children:
        _collect_cuts(mod, c, cuts)
