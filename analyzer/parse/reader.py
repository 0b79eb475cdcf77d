"""Reading one file's syntax for the extractor (`analyzer.parse.extract`): its text, the query captures by
role, and the expressions the facts are made of — member chains, subscript keys, property keys, type
annotations, a value's kind, destructuring patterns.

`Reader` holds the extraction state of one file (every node-id index the passes fill); the parts built on
it (`analyzer.parse.surface`, then the extractor itself) add the passes. One object per file, since every
pass reads and fills the same indexes.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node

from analyzer.index.model import (
    Arg,
    Definition,
    FileFacts,
    ObjectProperty,
)

log = logging.getLogger(__name__)

TEXT_LIMIT = 120
FUNCTION_TYPES = frozenset({"arrow_function", "function_expression", "generator_function", "function"})
CLASS_TYPES = frozenset({"class"})
WRAPPERS = frozenset({"parenthesized_expression", "non_null_expression", "as_expression",
                      "satisfies_expression", "type_assertion", "await_expression"})
LITERAL_TYPES = frozenset({"string", "template_string", "number", "array", "object", "regex", "true", "false"})
DOT_WS = re.compile(r"\s*(\??\.)\s*")
SIMPLE_CHAIN = re.compile(r"[\w$#]+(?:\??\.[\w$#]+)*")


def await_generic_callee(node: Node) -> Node:
    """tree-sitter reads `await ctx.ui.custom<{ a: string }>(…)` as a call of `await ctx.ui.custom` (TypeScript:
    an await of the call): the callee is the awaited member expression."""
    if node.type == "await_expression" and node.named_child_count == 1:
        inner = node.named_children[0]
        if inner.type in ("member_expression", "identifier", "subscript_expression"):
            return inner
    return node


def fold(text: str, limit: int | None = None) -> str:
    if "\n" in text or "  " in text or "\t" in text or "\r" in text:
        folded = " ".join(text.split())
    else:
        folded = text.strip()
    if limit is not None and len(folded) > limit:
        return folded[:limit]
    return folded


def callee_text_of(text: str) -> str:
    """Callee texts lose the line breaks of chained calls: `a()\n  .b` → `a().b`."""
    return DOT_WS.sub(r"\1", text) if "\n" in text or " ." in text or ". " in text else text


def type_text(annotation: str) -> str:
    """`: Foo<Bar>` → `Foo<Bar>` (type annotations include their colon)."""
    text = annotation.lstrip()
    if text.startswith(":"):
        text = text[1:]
    return fold(text)


def unquote(text: str) -> str:
    if len(text) >= 2 and text[0] in "'\"`" and text[-1] == text[0]:
        return text[1:-1]
    return text


def unwrap(node: Node) -> Node:
    """Look through parentheses, `!`, `as`, `satisfies`, `<T>x` and `await` to the expression."""
    while node.type in WRAPPERS:
        inner = node.child_by_field_name("expression") if node.type == "parenthesized_expression" else None
        if inner is None:
            named = [c for c in node.named_children if c.type != "comment"]
            if not named:
                break
            inner = named[-1] if node.type == "type_assertion" else named[0]
        node = inner
    return node


@dataclass


class State:
    source: bytes
    language: str
    facts: FileFacts
    errors: int = 0
    by_role: dict[str, list[dict[str, list[Node]]]] = field(default_factory=lambda: defaultdict(list))

    def text(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")


class Reader:
    """One file's text, query captures and extraction state; reading its expressions."""

    def __init__(self, state: State, declaration: bool) -> None:
        self.s = state
        self.source = state.source
        self.facts = state.facts
        self.declaration = declaration
        self.by_role = state.by_role
        # node id → facts
        self.class_owner: dict[int, Definition] = {}  # class/interface/type-alias node → definition
        self.fn_def: dict[int, Definition] = {}  # function-ish node (def or value) → definition
        self.value_def: dict[int, str] = {}  # value function node → qualname (object properties)
        self.exported_ids: set[int] = set()
        self.default_ids: set[int] = set()
        self.declare_ids: set[int] = set()
        self.property_param_ids: set[int] = set()
        self.static_field_ids: set[int] = set()
        self.optional_call_ids: set[int] = set()
        self.ambient: list[tuple[int, int, str]] = []
        self.holders: dict[int, tuple[str, str | None]] = {}  # object node → (holder, holder type)
        self.property_holders: dict[int, tuple[str, str | None]] = {}  # object node → (key, type)
        self.callback_args: dict[int, str] = {}  # closure node passed as an argument → "<callee>:<index>"
        self.folded_overloads: list[tuple[Definition, Definition]] = []  # (the member, a further signature)
        self.arg_by_node: dict[int, Arg] = {}
        self.prop_by_node: dict[int, ObjectProperty] = {}
        self.pending_values: list[tuple[ObjectProperty, int]] = []
        self.qualnames: dict[str, Definition] = {}
        self.seen_names: defaultdict[str, int] = defaultdict(int)
        self.bodies: list[tuple[Definition, int, int]] = []
        self._field_holder_nodes: dict[int, tuple[Node, str]] = {}
        self._dyn_nodes: list[tuple[Node, str]] = []
        self.params: dict[int, tuple[Node, bool]] = {}
        self.value_keys: set[tuple[str, str, str]] = set()  # (scope, kind, text) of member and name reads
        self.track_args = bool(self.by_role.get("dynamic_import"))  # only then args/properties need lookup

    # -- helpers -----------------------------------------------------------------------------

    def text(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def snippet(self, node: Node) -> str:
        """The node's text folded and cut to TEXT_LIMIT, without decoding a large node whole."""
        start, end = node.start_byte, node.end_byte
        if end - start > 4 * TEXT_LIMIT:
            end = start + 4 * TEXT_LIMIT
        return fold(self.source[start:end].decode("utf-8", "replace"), TEXT_LIMIT)

    def guard(self, fn, *args) -> Any:
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - one construct must not lose the file
            log.debug("extract: %s failed", getattr(fn, "__name__", fn), exc_info=True)
            self.s.errors += 1
            return None

    def matches(self, role: str) -> list[dict[str, list[Node]]]:
        return self.by_role.get(role, [])

    def chain(self, node: Node, text: str | None = None) -> tuple[list[str], bool]:
        """Fold a callee expression into the model's chain form (see model docstring)."""
        if text is None and node.end_byte - node.start_byte <= 4 * TEXT_LIMIT:
            text = self.text(node)
        if text is not None and SIMPLE_CHAIN.fullmatch(text):  # `a.b?.c` written plainly: the text is the chain
            if "?." in text:
                return text.replace("?.", ".").split("."), True
            return text.split("."), False
        parts: list[str] = []
        optional = False
        node = await_generic_callee(node)
        while True:
            t = node.type
            if t == "member_expression":
                prop = node.child_by_field_name("property")
                parts.append(self.text(prop) if prop is not None else "<expr>")
                if node.child_by_field_name("optional_chain") is not None:
                    optional = True
                obj = node.child_by_field_name("object")
                if obj is None:
                    parts.append("<expr>")
                    break
                node = obj
            elif t == "subscript_expression":
                parts.append(self.subscript_key(node))
                if node.child_by_field_name("optional_chain") is not None:
                    optional = True
                obj = node.child_by_field_name("object")
                if obj is None:
                    parts.append("<expr>")
                    break
                node = obj
            elif t in WRAPPERS and t != "await_expression":
                inner = unwrap(node)
                if inner is node:
                    parts.append("<expr>")
                    break
                node = inner
            elif t in ("identifier", "this", "super", "property_identifier", "private_property_identifier"):
                parts.append(self.text(node))
                break
            elif t == "call_expression":
                fn = node.child_by_field_name("function")
                parts.append((callee_text_of(self.snippet(fn)) if fn is not None else "<expr>") + "()")
                break
            elif t in LITERAL_TYPES:
                parts.append("<literal>")
                break
            elif t == "new_expression":  # `new Painter(f).paint()`: the root is an instance of Painter
                ctor = node.child_by_field_name("constructor")
                text = self.text(ctor) if ctor is not None else ""
                parts.append(f"new {text}()" if SIMPLE_CHAIN.fullmatch(text) else "<expr>")
                break
            else:
                parts.append("<expr>")
                break
        parts.reverse()
        return parts, optional

    def subscript_key(self, node: Node) -> str:
        """`a[K]` → "[K]", `a[M.K]` → "[M.K]", `a['k']` → "k" (a plain member); anything else "[]"."""
        index = node.child_by_field_name("index")
        if index is None:
            return "[]"
        t = index.type
        if t == "string":
            key = unquote(self.text(index))
            return key if re.fullmatch(r"[A-Za-z_$][\w$]*", key) else "[]"
        if t == "identifier" or (t == "member_expression" and SIMPLE_CHAIN.fullmatch(self.text(index))):
            return f"[{self.text(index)}]"
        return "[]"

    def key_text(self, node: Node) -> str:
        t = node.type
        if t == "string":
            return unquote(self.text(node))
        if t == "computed_property_name":
            return fold(self.text(node), TEXT_LIMIT)
        return self.text(node)

    def type_of(self, annotation: Node | None) -> str | None:
        return type_text(self.text(annotation)) if annotation is not None else None

    def value_info(self, value: Node | None) -> tuple[str | None, str | None, list[str] | None, list[str] | None]:
        """(`as` type, `new` class, initialiser call chain, alias chain) of an initialiser."""
        if value is None:
            return None, None, None, None
        as_type = None
        if value.type == "as_expression":
            named = [c for c in value.named_children if c.type != "comment"]
            if len(named) >= 2:
                as_type = fold(self.text(named[-1]))
        inner = unwrap(value)
        t = inner.type
        if t == "new_expression":
            ctor = inner.child_by_field_name("constructor")
            return as_type, (fold(self.text(ctor)) if ctor is not None else None), None, None
        if t == "call_expression":
            fn = inner.child_by_field_name("function")
            if fn is None or fn.type == "import":
                return as_type, None, None, None
            return as_type, None, self.chain(fn)[0], None
        if t in ("identifier", "member_expression", "this", "subscript_expression"):
            return as_type, None, None, self.chain(inner)[0]
        return as_type, None, None, None

    def generic_new_type(self, value: Node | None) -> str | None:
        """`new Map<string, Slot>()`: the type TypeScript infers for the variable or field, with its type
        arguments (`Map<string, Slot>`), so `.get(k)` yields a Slot; None without type arguments."""
        inner = unwrap(value) if value is not None else None
        if inner is None or inner.type != "new_expression":
            return None
        ctor, targs = inner.child_by_field_name("constructor"), inner.child_by_field_name("type_arguments")
        if ctor is None or targs is None:
            return None
        return fold(self.text(ctor) + self.text(targs))

    def line(self, node: Node) -> int:
        return node.start_point[0] + 1

    def object_id(self, node: Node) -> str:
        return f"L{node.start_point[0] + 1}C{node.start_point[1] + 1}"

    def _is_require(self, value: Node) -> bool:
        fn = value.child_by_field_name("function")
        return fn is not None and fn.type == "identifier" and self.text(fn) == "require"

    def pattern_names(self, pattern: Node) -> list[tuple[str, str, Node]]:
        """`{ a, b: c, d = 1 }` → [(a, a), (c, b), (d, d)] as (local name, key, node)."""
        out: list[tuple[str, str, Node]] = []
        for c in pattern.named_children:
            t = c.type
            if t == "shorthand_property_identifier_pattern":
                out.append((self.text(c), self.text(c), c))
            elif t == "object_assignment_pattern":
                left = c.child_by_field_name("left")
                if left is not None and left.type == "shorthand_property_identifier_pattern":
                    out.append((self.text(left), self.text(left), c))
            elif t == "pair_pattern":
                key = c.child_by_field_name("key")
                val = c.child_by_field_name("value")
                if val is not None and val.type == "assignment_pattern":
                    val = val.child_by_field_name("left")
                if key is not None and val is not None and val.type == "identifier":
                    out.append((self.text(val), self.key_text(key), c))
        return out
