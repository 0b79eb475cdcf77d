"""Turn one TS/JS file into `FileFacts` (see `analyzer.index.model` for the record conventions).

What counts as a definition, call, import, binding or object holder is written in the `.scm` query
files; this module runs them (one traversal per file), then places every capture in its lexical
context with a single sweep over byte ranges: named definitions and object literals form the
qualname prefixes, anonymous functions add closure nesting, and calls/bindings/dynamic imports take
the innermost named definition as their scope. No input raises: syntax errors are recovered by
tree-sitter and counted; a failure on one construct is counted in `extract_errors` and skipped.
"""

from __future__ import annotations

import hashlib
import logging
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from tree_sitter import Node, QueryCursor

from analyzer.index.model import (
    CALL_SIGNATURE_FIELD,
    Arg,
    Assignment,
    Binding,
    Call,
    Definition,
    DynamicImport,
    Export,
    Field,
    FileFacts,
    Import,
    ObjectLiteral,
    ObjectProperty,
    Param,
)
from analyzer.parse.languages import is_declaration_file, language_for_path, parse_bytes
from analyzer.parse.queries_loader import error_query, file_query

# Bump when extraction output changes for the same input (part of the per-blob cache key).
EXTRACTOR_VERSION = "11"

log = logging.getLogger(__name__)

TEXT_LIMIT = 120
# A destructured parameter keeps every name it binds (`function View({ a, b, …, renderSlot })`): React
# components destructure dozens of props, and a pattern cut at TEXT_LIMIT loses the later ones.
PATTERN_LIMIT = 4000
SIGNATURE_LIMIT = 300
ALIAS_SIGNATURE_LIMIT = 1500  # a type alias's text is its meaning (`A & B & PropsLocale<N>`): cut it less
FUNCTION_TYPES = frozenset({"arrow_function", "function_expression", "generator_function", "function"})
CLASS_TYPES = frozenset({"class"})
WRAPPERS = frozenset({"parenthesized_expression", "non_null_expression", "as_expression",
                      "satisfies_expression", "type_assertion", "await_expression"})
MODIFIER_TOKENS = frozenset({"static", "abstract", "async", "readonly", "declare", "override", "accessor"})
LITERAL_TYPES = frozenset({"string", "template_string", "number", "array", "object", "regex", "true", "false"})
# declaration merging: a type-only declaration and a value declaration of one name are one symbol
TYPE_HALVES = frozenset({"interface", "type_alias"})
VALUE_HALVES = frozenset({"class", "function", "enum"})
_HAS_WS = re.compile(rb"\s")
_PROTECT = bytes.maketrans(b" \t\n\r\x0b\x0c", b"\x00\x01\x02\x03\x04\x05")  # literal whitespace is code
_DOT_WS = re.compile(r"\s*(\??\.)\s*")
_SIMPLE_CHAIN = re.compile(r"[\w$#]+(?:\??\.[\w$#]+)*")
_EVENT_ORDER = itemgetter(0, 1, 2)  # (start, -end, priority): outer before inner, regions before facts
# a (folded, single) space that does not separate two word characters: after it a non-word character,
# or before it one (the look-behind spans the space, so every match starts with a literal space: fast)
_GLUE = re.compile(rb" (?:(?![\w$\x80-\xff])|(?<![\w$\x80-\xff] ))")


# ----------------------------------------------------------------------------------------------
# small helpers


def _await_generic_callee(node: Node) -> Node:
    """tree-sitter reads `await ctx.ui.custom<{ a: string }>(…)` as a call of `await ctx.ui.custom` (TypeScript:
    an await of the call): the callee is the awaited member expression."""
    if node.type == "await_expression" and node.named_child_count == 1:
        inner = node.named_children[0]
        if inner.type in ("member_expression", "identifier", "subscript_expression"):
            return inner
    return node


def _redeclared_half(existing: Definition, d: Definition, cand: _Candidate) -> str | None:
    """A redeclaration TypeScript reads as the same member: a further overload signature of an interface or
    object-type method (`on(e: "a", …)`, `on(e: "b", …)` — one member; the first signature stands for all,
    so "" drops this one) or the other accessor of a `get x()` / `set x(v)` pair (one property with two
    bodies: the second is `x#set` / `x#get`). None: a genuinely separate definition (`#2`)."""
    if cand.role == "def.method_signature" and existing.kind == "method" and not existing.has_body \
            and existing.parent == d.parent:
        return ""
    if {existing.kind, d.kind} == {"getter", "setter"} and existing.parent == d.parent:
        return f"{existing.qualname}#{d.kind[:3]}"
    return None


def _fold(text: str, limit: int | None = None) -> str:
    if "\n" in text or "  " in text or "\t" in text or "\r" in text:
        folded = " ".join(text.split())
    else:
        folded = text.strip()
    if limit is not None and len(folded) > limit:
        return folded[:limit]
    return folded


def _callee_text(text: str) -> str:
    """Callee texts lose the line breaks of chained calls: `a()\n  .b` → `a().b`."""
    return _DOT_WS.sub(r"\1", text) if "\n" in text or " ." in text or ". " in text else text


def _type_text(annotation: str) -> str:
    """`: Foo<Bar>` → `Foo<Bar>` (type annotations include their colon)."""
    text = annotation.lstrip()
    if text.startswith(":"):
        text = text[1:]
    return _fold(text)


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] in "'\"`" and text[-1] == text[0]:
        return text[1:-1]
    return text


def _unwrap(node: Node) -> Node:
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


@dataclass(slots=True)
class _Frame:
    """An open lexical region during the sweep."""

    end: int
    kind: str  # def | object | anon
    prefix: str  # qualname prefix for named things inside
    scope: str | None  # nearest named definition
    nested: int
    fn_node: Node | None = None  # innermost function (for a returned object's holder type)
    fn_def: Definition | None = None
    object_id: str | None = None


@dataclass(slots=True)
class _Candidate:
    """A definition found by a query, before its qualname is known."""

    role: str
    node: Node  # the declaration (range, signature, body hash)
    name: str
    kind: str
    value: Node | None = None  # the function/class node when it is not `node` itself
    object_node: Node | None = None
    is_signature: bool = False
    start: int = 0
    end: int = 0
    merge: str = ""  # declaration merging: "type" or "value" half of a name declared both ways


@dataclass
class _State:
    source: bytes
    language: str
    facts: FileFacts
    errors: int = 0
    by_role: dict[str, list[dict[str, list[Node]]]] = field(default_factory=lambda: defaultdict(list))

    def text(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")


# ----------------------------------------------------------------------------------------------
# entry point


def extract_facts(source: bytes, path: str) -> FileFacts:
    """Facts of one file; never raises (bad constructs are skipped and counted in `extract_errors`)."""
    language = language_for_path(path) or "typescript"
    declaration = is_declaration_file(path)
    facts = FileFacts(path=path, language=language, declaration_only=declaration)
    try:
        facts.line_count = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
        tree = parse_bytes(source, language)
        root = tree.root_node
        if root.has_error:
            facts.parse_errors = _count_errors(root, language)
        state = _State(source=source, language=language, facts=facts)
        _run(state, root, declaration)
        facts.extract_errors += state.errors
    except Exception:  # noqa: BLE001 - a broken file must never stop the index
        log.debug("extraction failed for %s", path, exc_info=True)
        facts.extract_errors += 1
    return facts


def _count_errors(root: Node, language: str) -> int:
    captures = QueryCursor(error_query(language)).captures(root)
    return sum(len(nodes) for nodes in captures.values())


def _run(state: _State, root: Node, declaration: bool) -> None:
    query, roles, _settings = file_query(state.language, declaration)
    by_role = state.by_role
    for index, captures in QueryCursor(query).matches(root):
        by_role[roles[index]].append(captures)
    _Extractor(state, declaration).run()


# ----------------------------------------------------------------------------------------------
# the extractor


class _Extractor:
    def __init__(self, state: _State, declaration: bool) -> None:
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
        self.track_args = bool(self.by_role.get("dynamic_import"))  # only then args/properties need lookup

    # -- helpers -----------------------------------------------------------------------------

    def text(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def snippet(self, node: Node) -> str:
        """The node's text folded and cut to TEXT_LIMIT, without decoding a large node whole."""
        start, end = node.start_byte, node.end_byte
        if end - start > 4 * TEXT_LIMIT:
            end = start + 4 * TEXT_LIMIT
        return _fold(self.source[start:end].decode("utf-8", "replace"), TEXT_LIMIT)

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
        if text is not None and _SIMPLE_CHAIN.fullmatch(text):  # `a.b?.c` written plainly: the text is the chain
            if "?." in text:
                return text.replace("?.", ".").split("."), True
            return text.split("."), False
        parts: list[str] = []
        optional = False
        node = _await_generic_callee(node)
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
                inner = _unwrap(node)
                if inner is node:
                    parts.append("<expr>")
                    break
                node = inner
            elif t in ("identifier", "this", "super", "property_identifier", "private_property_identifier"):
                parts.append(self.text(node))
                break
            elif t == "call_expression":
                fn = node.child_by_field_name("function")
                parts.append((_callee_text(self.snippet(fn)) if fn is not None else "<expr>") + "()")
                break
            elif t in LITERAL_TYPES:
                parts.append("<literal>")
                break
            elif t == "new_expression":  # `new Painter(f).paint()`: the root is an instance of Painter
                ctor = node.child_by_field_name("constructor")
                text = self.text(ctor) if ctor is not None else ""
                parts.append(f"new {text}()" if _SIMPLE_CHAIN.fullmatch(text) else "<expr>")
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
            key = _unquote(self.text(index))
            return key if re.fullmatch(r"[A-Za-z_$][\w$]*", key) else "[]"
        if t == "identifier" or (t == "member_expression" and _SIMPLE_CHAIN.fullmatch(self.text(index))):
            return f"[{self.text(index)}]"
        return "[]"

    def key_text(self, node: Node) -> str:
        t = node.type
        if t == "string":
            return _unquote(self.text(node))
        if t == "computed_property_name":
            return _fold(self.text(node), TEXT_LIMIT)
        return self.text(node)

    def type_of(self, annotation: Node | None) -> str | None:
        return _type_text(self.text(annotation)) if annotation is not None else None

    def value_info(self, value: Node | None) -> tuple[str | None, str | None, list[str] | None, list[str] | None]:
        """(`as` type, `new` class, initialiser call chain, alias chain) of an initialiser."""
        if value is None:
            return None, None, None, None
        as_type = None
        if value.type == "as_expression":
            named = [c for c in value.named_children if c.type != "comment"]
            if len(named) >= 2:
                as_type = _fold(self.text(named[-1]))
        inner = _unwrap(value)
        t = inner.type
        if t == "new_expression":
            ctor = inner.child_by_field_name("constructor")
            return as_type, (_fold(self.text(ctor)) if ctor is not None else None), None, None
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
        inner = _unwrap(value) if value is not None else None
        if inner is None or inner.type != "new_expression":
            return None
        ctor, targs = inner.child_by_field_name("constructor"), inner.child_by_field_name("type_arguments")
        if ctor is None or targs is None:
            return None
        return _fold(self.text(ctor) + self.text(targs))

    def line(self, node: Node) -> int:
        return node.start_point[0] + 1

    # -- run ---------------------------------------------------------------------------------

    def run(self) -> None:
        self.guard(self.collect_markers)
        candidates = self.collect_candidates()
        events = self.collect_events(candidates)
        self.sweep(events)
        self.finish_definitions()
        for step in (self.collect_heritage, self.collect_fields, self.collect_imports, self.collect_exports,
                     self.attach_dynamic_imports, self.fill_property_values, self.hash_bodies):
            self.guard(step)

    # -- markers (sets of node ids flagged by small patterns) ----------------------------------

    def collect_markers(self) -> None:
        for m in self.matches("param.property"):
            self.property_param_ids.add(m["param"][0].id)
        for m in self.matches("field.static"):
            self.static_field_ids.add(m["field"][0].id)
        for m in self.matches("call.optional"):
            self.optional_call_ids.add(m["call"][0].id)
        for m in self.matches("ambient.declare"):
            self.declare_ids.add(m["declaration"][0].id)
        for m in self.matches("ambient.module"):
            body = m["body"][0]
            self.ambient.append((body.start_byte, body.end_byte, _unquote(self.text(m["name"][0]))))
        for m in self.matches("ambient.global"):
            body = m["body"][0]
            self.ambient.append((body.start_byte, body.end_byte, "global"))
        for m in self.matches("export.declaration"):
            decl = m["declaration"][0]
            is_default = False
            self._mark_exported(decl, is_default)
        for m in self.matches("export.default_marker"):
            self.default_ids.add(m["export"][0].id)
        for role, holder in (("holder.variable", "variable"), ("holder.return", "return"),
                             ("holder.field", "field"), ("holder.assign", "assign"),
                             ("holder.export_default", "export_default"), ("holder.property", "property")):
            for m in self.matches(role):
                self.guard(self._holder, m, holder)

    def _mark_exported(self, decl: Node, is_default: bool) -> None:
        self.exported_ids.add(decl.id)
        if decl.type == "ambient_declaration":
            for child in decl.named_children:
                self.exported_ids.add(child.id)
                if child.type in ("lexical_declaration", "variable_declaration"):
                    for d in child.named_children:
                        self.exported_ids.add(d.id)
        if decl.type in ("lexical_declaration", "variable_declaration"):
            for d in decl.named_children:
                self.exported_ids.add(d.id)

    def _holder(self, m: dict[str, list[Node]], holder: str) -> None:
        obj = m["object"][0]
        htype = None
        if "satisfies" in m:
            htype = _fold(self.text(m["satisfies"][0]))
        elif "as" in m:
            htype = _fold(self.text(m["as"][0]))
        if holder == "variable":
            annotation = m["declarator"][0].child_by_field_name("type")
            if annotation is not None:
                htype = self.type_of(annotation)
            self.holders[obj.id] = ("variable:" + self.text(m["name"][0]), htype)
        elif holder == "field":
            # the owner's qualname is known only after the sweep; keep the nodes
            self.holders[obj.id] = ("field", htype)
            self._field_holder_nodes[obj.id] = (m["body"][0], self.text(m["name"][0]))
        elif holder == "assign":
            parts, _ = self.chain(m["target"][0])
            self.holders[obj.id] = ("assign:" + ".".join(parts), htype)
        elif holder == "property":
            self.property_holders[obj.id] = (self.key_text(m["key"][0]), htype)
        else:
            self.holders[obj.id] = (holder, htype)

    # -- definitions -------------------------------------------------------------------------

    def collect_candidates(self) -> list[_Candidate]:
        out: list[_Candidate] = []
        for role in ("def.function", "def.function_signature", "def.class", "def.interface", "def.type_alias",
                     "def.enum", "def.method", "def.method_signature", "def.method_overload", "def.field_function",
                     "def.var_function", "def.var_class", "def.property_function", "def.default_function",
                     "def.default_class"):
            for m in self.matches(role):
                cand = self.guard(self._candidate, role, m)
                if cand is not None:
                    out.append(cand)
        # `const C = class Named {}`: the variable names it, not the class expression's own name
        value_ids = {c.value.id for c in out if c.value is not None and c.role == "def.var_class"}
        out = [c for c in out if not (c.role == "def.class" and c.node.id in value_ids)]
        self.mark_merges(out)
        return out

    def mark_merges(self, cands: list[_Candidate]) -> None:
        """`type CallId` + `function CallId` (or `interface C` + `class C`) in one scope are one symbol."""
        groups: dict[tuple[int, str], list[_Candidate]] = defaultdict(list)
        for c in cands:
            if c.kind in TYPE_HALVES or c.kind in VALUE_HALVES:
                parent = c.node.parent
                while parent is not None and parent.type in ("export_statement", "ambient_declaration"):
                    parent = parent.parent
                groups[(parent.id if parent is not None else 0, c.name)].append(c)
        for group in groups.values():
            kinds = {c.kind for c in group}
            if kinds & TYPE_HALVES and kinds & VALUE_HALVES:
                for c in group:
                    c.merge = "type" if c.kind in TYPE_HALVES else "value"

    def _candidate(self, role: str, m: dict[str, list[Node]]) -> _Candidate | None:
        node = m["def"][0]
        name_node = m.get("name", [None])[0]
        value = m.get("value", [None])[0]
        name = self.key_text(name_node) if name_node is not None else "default"
        kind = {
            "def.function": "function", "def.function_signature": "function", "def.class": "class",
            "def.interface": "interface", "def.type_alias": "type_alias", "def.enum": "enum",
            "def.method_signature": "method", "def.field_function": "method", "def.var_function": "function",
            "def.var_class": "class", "def.property_function": "object_method", "def.default_function": "function",
            "def.default_class": "class",
        }.get(role, "method")
        cand = _Candidate(role=role, node=node, name=name, kind=kind, value=value,
                          is_signature=role in ("def.function_signature", "def.method_overload"))
        if role == "def.method":
            parent = node.parent
            if parent is not None and parent.type == "object":
                cand.kind = "object_method"
                cand.object_node = parent
            elif node.type == "method_definition":
                if any(c.type == "get" for c in node.children):
                    cand.kind = "getter"
                elif any(c.type == "set" for c in node.children):
                    cand.kind = "setter"
                elif name == "constructor":
                    cand.kind = "constructor"
        elif role == "def.property_function":
            cand.object_node = node.parent
        elif role in ("def.default_function", "def.default_class") and value is not None:
            cand.node = value
        if role in ("def.var_function", "def.var_class"):
            parent = node.parent
            if parent is not None and parent.type in ("lexical_declaration", "variable_declaration") \
                    and parent.named_child_count == 1:
                cand.node = parent
        cand.start, cand.end = cand.node.start_byte, cand.node.end_byte
        return cand

    def make_definition(self, cand: _Candidate, prefix: str, scope: str | None) -> Definition:
        plain = f"{prefix}.{cand.name}" if prefix else cand.name
        qual_base = f"{plain}#type" if cand.merge == "type" else plain
        node = cand.node
        fn = cand.value if cand.value is not None else node
        d = Definition(qualname=qual_base, name=cand.name, kind=cand.kind, line=self.line(node),
                       end_line=node.end_point[0] + 1, parent=scope)
        if cand.merge:
            d.merges = plain if cand.merge == "type" else f"{plain}#type"
        if cand.kind in ("interface", "type_alias"):
            d.has_body = False
        elif cand.kind != "class" and cand.kind != "enum":
            d.has_body = not cand.is_signature and fn.child_by_field_name("body") is not None
        decl_ids = {node.id, fn.id}
        if cand.role in ("def.var_function", "def.var_class"):
            decl_ids.add(self._declarator(cand).id)
        d.exported = bool(decl_ids & self.exported_ids) or cand.role.startswith("def.default_")
        d.default_export = cand.role.startswith("def.default_") or self._is_default_decl(node)
        d.modifiers = self.modifiers(cand, fn)
        d.signature = self.signature(node, fn, cand.kind)
        rt = fn.child_by_field_name("return_type")
        if rt is not None:
            d.return_type = _type_text(self.text(rt))
        for start, end, name in self.ambient:
            if start <= node.start_byte < end:
                d.ambient_module = name
        # register the qualname (first keeps the plain name; overload signatures yield to the body)
        existing = self.qualnames.get(qual_base)
        if existing is None:
            self.qualnames[qual_base] = d
            self.seen_names[qual_base] = 1
        elif "signature-only" in existing.modifiers and cand.is_signature:
            d.qualname = ""  # a further overload signature: the first one stands for all of them
        elif "signature-only" in existing.modifiers and not cand.is_signature:
            # implementation after overload signatures: it takes the name, the signature is dropped
            existing.qualname = ""  # marked for removal
            if d.return_type is None:
                d.return_type = existing.return_type
            self.qualnames[qual_base] = d
        elif (twin := _redeclared_half(existing, d, cand)) is not None:
            d.qualname = twin  # "" drops a further overload signature; else the accessor pair's other half
            if twin:
                self.qualnames[twin] = d
            else:
                self.folded_overloads.append((existing, d))  # its parameters are filled in later
        else:
            self.seen_names[qual_base] += 1
            n = self.seen_names[qual_base]
            while f"{qual_base}#{n}" in self.qualnames:
                n += 1
            d.qualname = f"{qual_base}#{n}"
            self.qualnames[d.qualname] = d
        if cand.is_signature:
            d.modifiers.append("signature-only")
        self.fn_def[fn.id] = d
        self.fn_def[node.id] = d
        if cand.kind in ("class", "interface", "type_alias", "enum"):
            self.class_owner[fn.id] = d
            self.class_owner[node.id] = d
            body = fn.child_by_field_name("value" if cand.kind == "type_alias" else "body")
            if body is not None:
                self.class_owner[body.id] = d
        if cand.value is not None:
            self.value_def[cand.value.id] = d.qualname
        self.facts.definitions.append(d)
        self.bodies.append((d, node.start_byte, node.end_byte))
        return d

    def _declarator(self, cand: _Candidate) -> Node:
        node = cand.node
        if node.type in ("lexical_declaration", "variable_declaration"):
            for c in node.named_children:
                if c.type == "variable_declarator":
                    return c
        return node

    def _is_default_decl(self, node: Node) -> bool:
        if node.id not in self.exported_ids:
            return False
        parent = node.parent
        if parent is not None and parent.type == "ambient_declaration":
            parent = parent.parent
        return parent is not None and parent.id in self.default_ids

    def modifiers(self, cand: _Candidate, fn: Node) -> list[str]:
        mods: list[str] = []
        nodes = [cand.node] if fn is cand.node else [cand.node, fn]
        if cand.role in ("def.var_function", "def.var_class"):
            nodes = [fn]
        for n in nodes:
            for c in n.children:
                t = c.type
                if t in MODIFIER_TOKENS and t not in mods:
                    mods.append(t)
                elif t == "accessibility_modifier" or t == "override_modifier":
                    word = self.text(c)
                    if word not in mods:
                        mods.append(word)
                elif t == "*" and "generator" not in mods:
                    mods.append("generator")
                elif t in ("{", "(", "formal_parameters", "class_body", "statement_block"):
                    break
        if cand.node.type == "abstract_class_declaration" and "abstract" not in mods:
            mods.append("abstract")
        if (cand.node.id in self.declare_ids or fn.id in self.declare_ids) and "declare" not in mods:
            mods.append("declare")
        return mods

    def signature(self, node: Node, fn: Node, kind: str) -> str:
        body = None
        if kind in ("class", "interface", "enum"):
            body = fn.child_by_field_name("body")
        elif kind != "type_alias":
            body = fn.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        text = self.source[node.start_byte:end].decode("utf-8", "replace")
        limit = ALIAS_SIGNATURE_LIMIT if kind == "type_alias" else SIGNATURE_LIMIT
        return _fold(text, limit).rstrip(";").rstrip()

    def params_of(self) -> dict[int, tuple[Node, bool]]:
        """Function node id → (its parameter list, whether the function has a body)."""
        grouped: dict[int, tuple[Node, bool]] = {}
        for role, body in (("param.body", True), ("param.signature", False)):
            for m in self.matches(role):
                grouped[m["function"][0].id] = (m["params"][0], body)
        return grouped

    def make_params(self, fn: Node) -> list[tuple[Param, Node, bool]]:
        """Parameters of a function as (Param, name node, binds a name) — a walk of one parameter list."""
        entry = self.params.get(fn.id)
        if entry is None:
            return []
        params_node, body = entry
        if params_node.type == "identifier":  # `x => …`
            return [(Param(name=self.text(params_node)), params_node, body)]
        out: list[tuple[Param, Node, bool]] = []
        for p in params_node.named_children:
            t = p.type
            optional = False
            ptype = None
            if t in ("required_parameter", "optional_parameter"):
                pattern = p.child_by_field_name("pattern")
                annotation = p.child_by_field_name("type")
                ptype = self.type_of(annotation) if annotation is not None else None
                optional = t == "optional_parameter" or p.child_by_field_name("value") is not None
            elif t == "assignment_pattern":
                pattern = p.child_by_field_name("left")
                optional = True
            elif t in ("identifier", "rest_pattern", "object_pattern", "array_pattern"):
                pattern = p
            else:
                continue  # comments, decorators
            if pattern is None:
                continue
            name_node = pattern
            if pattern.type == "rest_pattern" and pattern.named_child_count:
                name_node = pattern.named_children[0]
            if name_node.type == "identifier":
                name = self.text(name_node)
            elif pattern.type == "object_pattern":
                name = _fold(self.text(pattern), PATTERN_LIMIT)
            else:
                name = self.snippet(pattern)
            param = Param(name=name, type=ptype, is_property=p.id in self.property_param_ids, optional=optional)
            out.append((param, name_node, body and name_node.type == "identifier"))
        return out

    def bind_params(self, params: list[tuple[Param, Node, bool]], scope: str | None) -> None:
        """Typed parameters become bindings in `scope` (untyped ones tell resolution nothing)."""
        for param, name_node, binds in params:
            if binds and param.type is not None:
                self.facts.bindings.append(Binding(scope, param.name, name_node.start_point[0] + 1, param.type,
                                                   kind="param"))

    # -- events and the sweep ------------------------------------------------------------------

    def collect_events(self, candidates: list[_Candidate]) -> list[tuple[int, int, int, str, Any]]:
        events: list[tuple[int, int, int, str, Any]] = []
        value_ids = set()
        for c in candidates:
            events.append((c.start, -c.end, 0, "def", c))
            if c.value is not None:
                value_ids.add(c.value.id)
        for m in self.matches("object"):
            n = m["object"][0]
            if n.named_child_count:
                events.append((n.start_byte, -n.end_byte, 0, "object", n))
        for m in self.matches("scope.function"):
            n = m["function"][0]
            if n.id not in value_ids:
                events.append((n.start_byte, -n.end_byte, 0, "anon", n))
        for role, kind, key, variant in (
                ("call", "call", "call", ""), ("call.new", "new", "call", "new"),
                ("dynamic_import", "dynamic_import", "call", ""), ("return.new", "return_new", "return", ""),
                ("return.chain", "return_chain", "return", ""),
                ("binding", "binding", "binding", ""), ("binding.var", "binding", "binding", "var"),
                ("binding.for_of", "binding", "binding", "for_of"), ("binding.catch", "binding", "binding", "catch"),
                ("binding.using", "binding", "binding", "using"), ("assign.member", "assign", "assign", ""),
                ("binding.destructure", "destructure", "binding", ""),
                ("binding.destructure_var", "destructure", "binding", "var"), ("jsx", "jsx", "element", "")):
            for m in self.matches(role):
                n = m[key][0]
                events.append((n.start_byte, -n.end_byte, 1, kind, (m, variant)))
        self.params = self.params_of()
        events.sort(key=_EVENT_ORDER)
        return events

    def sweep(self, events: list[tuple[int, int, int, str, Any]]) -> None:
        stack: list[_Frame] = [_Frame(end=1 << 62, kind="module", prefix="", scope=None, nested=0)]
        handlers: dict[str, Callable[[dict[str, list[Node]], str, _Frame], None]] = {
            "call": self.on_call, "new": self.on_call, "dynamic_import": self.on_dynamic_import,
            "binding": self.on_binding, "destructure": self.on_destructure, "return_new": self.on_return_new,
            "assign": self.on_assign, "return_chain": self.on_return_chain, "jsx": self.on_jsx}
        for start, neg_end, _prio, kind, payload in events:
            while stack[-1].end <= start:
                stack.pop()
            top = stack[-1]
            try:
                if kind == "def":
                    stack.append(self.on_def(payload, top))
                elif kind == "object":
                    stack.append(self.on_object(payload, top))
                elif kind == "anon":
                    stack.append(_Frame(end=-neg_end, kind="anon", prefix=top.prefix, scope=top.scope,
                                        nested=top.nested + 1, fn_node=payload, fn_def=None, object_id=top.object_id))
                    if payload.id in self.params:
                        self.bind_params(self.make_params(payload), top.scope)
                else:
                    handlers[kind](payload[0], payload[1], top)
            except Exception:  # noqa: BLE001 - one construct must not lose the file
                log.debug("extract: %s at byte %d failed", kind, start, exc_info=True)
                self.s.errors += 1

    def on_def(self, cand: _Candidate, top: _Frame) -> _Frame:
        d = self.make_definition(cand, top.prefix, top.scope)
        if cand.object_node is not None:
            d.object_id = self.object_id(cand.object_node)
        fn = cand.value if cand.value is not None else cand.node
        params = self.make_params(fn)
        for p, name_node, _binds in params:
            d.params.append(p)
            if p.is_property and d.kind == "constructor" and d.parent is not None:
                self.facts.fields.append(Field(owner=d.parent, name=p.name, line=self.line(name_node), type=p.type,
                                               from_parameter=True))
        self.bind_params(params, d.qualname)
        if cand.kind in ("class", "interface", "type_alias", "enum"):
            return _Frame(end=cand.end, kind="def", prefix=d.qualname, scope=d.qualname, nested=0,
                          fn_node=None, fn_def=None)
        return _Frame(end=cand.end, kind="def", prefix=d.qualname, scope=d.qualname, nested=0,
                      fn_node=fn, fn_def=d)

    def object_id(self, node: Node) -> str:
        return f"L{node.start_point[0] + 1}C{node.start_point[1] + 1}"

    def on_object(self, node: Node, top: _Frame) -> _Frame:
        row, col = node.start_point
        oid = f"L{row + 1}C{col + 1}"
        node_id = node.id
        holder, htype = self.holders.get(node_id, ("other", None))
        prefix = top.prefix
        if node_id in self.property_holders and top.kind == "object":
            key, ptype = self.property_holders[node_id]
            holder, htype = f"property:{top.object_id}.{key}", ptype
            prefix = f"{prefix}.{key}" if prefix else key
        elif holder.startswith("variable:"):
            name = holder[len("variable:"):]
            prefix = f"{prefix}.{name}" if prefix else name
        elif holder == "field":
            owner_node, fname = self._field_holder_nodes.get(node_id, (None, ""))
            owner = self.class_owner.get(owner_node.id) if owner_node is not None else None
            holder = f"field:{owner.qualname if owner else '?'}.{fname}"
            prefix = f"{prefix}.{fname}" if prefix else fname
        elif holder == "return" and htype is None:
            htype = self.return_type_of(top)
        props: list[ObjectProperty] = []
        obj = ObjectLiteral(oid, top.scope, row + 1, node.end_point[0] + 1, holder, htype, props, top.nested)
        if holder == "return" and htype is None:
            obj.returned_to = self.returned_to(top)
        make_property = self.make_property
        for child in node.named_children:
            try:
                prop = make_property(child, oid)
            except Exception:  # noqa: BLE001
                self.s.errors += 1
                continue
            if prop is not None:
                props.append(prop)
        self.facts.objects.append(obj)
        return _Frame(end=node.end_byte, kind="object", prefix=prefix, scope=top.scope, nested=top.nested,
                      fn_node=top.fn_node, fn_def=top.fn_def, object_id=oid)

    def returned_to(self, top: _Frame) -> str | None:
        """`f((…) => { return {…} })`: the literal is what the closure passed as f's argument returns — the
        compiler types it by that parameter's function type (`ui.custom(factory: (…) => Component)`)."""
        if top.kind != "anon" or top.fn_node is None:
            return None
        return self.callback_args.get(top.fn_node.id)

    def return_type_of(self, top: _Frame) -> str | None:
        if top.fn_def is not None and top.fn_node is not None:
            return top.fn_def.return_type
        if top.fn_node is not None:
            rt = top.fn_node.child_by_field_name("return_type")
            return _type_text(self.text(rt)) if rt is not None else None
        return None

    def make_property(self, child: Node, oid: str) -> ObjectProperty | None:
        t = child.type
        if t == "pair":
            key_node = child.child_by_field_name("key")
            value = child.child_by_field_name("value")
            if key_node is None:
                key = "?"
            elif key_node.type == "property_identifier":
                key = self.source[key_node.start_byte:key_node.end_byte].decode("utf-8", "replace")
            else:
                key = self.key_text(key_node)
            prop = ObjectProperty(key, child.start_point[0] + 1, "other")
            if value is not None:
                self.classify_value(prop, value)
        elif t == "method_definition":
            name = child.child_by_field_name("name")
            prop = ObjectProperty(key=self.key_text(name) if name is not None else "?", line=self.line(child),
                                  value_kind="function")
            self.pending_values.append((prop, child.id))
        elif t == "shorthand_property_identifier":
            ident = self.text(child)
            prop = ObjectProperty(key=ident, line=self.line(child), value_kind="identifier", value_text=ident)
        elif t == "spread_element":
            inner = child.named_children[0] if child.named_child_count else child
            prop = ObjectProperty(key="...", line=self.line(child), value_kind="spread")
            if inner.type in ("identifier", "member_expression", "this"):
                prop.value_text = ".".join(self.chain(inner)[0])
            else:
                prop.value_text = self.snippet(inner)
        else:
            return None
        if self.track_args:
            self.prop_by_node[child.id] = prop
        return prop

    def classify_value(self, prop: ObjectProperty, value: Node) -> None:
        t = value.type
        inner = _unwrap(value) if t in WRAPPERS else value
        t = inner.type
        if t in FUNCTION_TYPES:
            prop.value_kind = "function"
            self.pending_values.append((prop, inner.id))
        elif t == "identifier":
            prop.value_kind, prop.value_text = "identifier", self.text(inner)
        elif t in ("member_expression", "subscript_expression", "this"):
            prop.value_kind, prop.value_text = "member", ".".join(self.chain(inner)[0])
        elif t == "call_expression":
            fn = inner.child_by_field_name("function")
            prop.value_kind = "call"
            prop.value_text = self.snippet(fn) if fn is not None else ""
        elif t == "new_expression":
            ctor = inner.child_by_field_name("constructor")
            prop.value_kind, prop.value_text = "new", (_fold(self.text(ctor)) if ctor is not None else "")
        elif t == "string" or (t == "template_string" and not _has_substitution(inner)):
            prop.value_kind = "string"
            prop.value_text = _unquote(self.source[inner.start_byte:inner.end_byte].decode("utf-8", "replace"))
        elif t == "object":
            prop.value_kind = "object"
            if inner.named_child_count:
                prop.value_object_id = self.object_id(inner)
        else:
            prop.value_text = self.snippet(inner)

    def on_call(self, m: dict[str, list[Node]], variant: str, top: _Frame) -> None:
        # the hottest path of extraction: one Node property per question, fast paths inlined
        node = m["call"][0]
        callee_node = m["callee"][0]
        start = callee_node.start_byte
        end = callee_node.end_byte
        if end - start <= TEXT_LIMIT:
            raw = self.source[start:end].decode("utf-8", "replace")
            if raw == "import":
                return  # dynamic import: see on_dynamic_import
            if _SIMPLE_CHAIN.fullmatch(raw):
                if "?." in raw:
                    chain, optional = raw.replace("?.", ".").split("."), True
                else:
                    chain, optional = raw.split("."), False
                text = raw
            else:
                chain, optional = self.chain(callee_node, raw)
                text = _callee_text(_fold(raw, TEXT_LIMIT))
        else:
            chain, optional = self.chain(callee_node)
            text = _callee_text(self.snippet(callee_node))
        if callee_node.type == "await_expression" and text.startswith("await "):
            text = text[len("await "):]  # see _await_generic_callee
        kind = variant or ("super" if text == "super" else "call")
        row, col = node.start_point
        args_list: list[Arg] = []
        optional_ids = self.optional_call_ids
        call = Call(top.scope, chain, row + 1, col + 1, kind,
                    optional or (bool(optional_ids) and node.id in optional_ids), top.nested, args_list, text)
        args = m["args"][0] if "args" in m else node.child_by_field_name("arguments")
        if args is not None and args.type == "arguments":
            index = 0
            src = self.source
            track = self.track_args
            for a in args.named_children:
                t = a.type
                if t == "identifier" and not track:
                    args_list.append(Arg("identifier", src[a.start_byte:a.end_byte].decode("utf-8", "replace")))
                elif t == "comment":
                    continue
                else:
                    try:
                        args_list.append(self.make_arg(a, text, index))
                    except Exception:  # noqa: BLE001
                        self.s.errors += 1
                index += 1
        self.facts.calls.append(call)

    def make_arg(self, node: Node, callee_text: str, index: int) -> Arg:
        t = node.type
        if t == "identifier":
            arg = Arg("identifier", self.source[node.start_byte:node.end_byte].decode("utf-8", "replace"))
            if self.track_args:
                self.arg_by_node[node.id] = arg
            return arg
        inner = _unwrap(node) if t in WRAPPERS else node
        t = inner.type
        if t == "string" or (t == "template_string" and not _has_substitution(inner)):
            arg = Arg("string", _unquote(self.source[inner.start_byte:inner.end_byte].decode("utf-8", "replace")))
        elif t in FUNCTION_TYPES:
            arg = Arg("function", self.snippet(inner))
            self.callback_args[inner.id] = f"{callee_text}:{index}"
        elif t == "call_expression":
            fn = inner.child_by_field_name("function")
            arg = Arg("call", self.snippet(fn) if fn is not None else "")
        elif t == "member_expression" or t == "subscript_expression":
            arg = Arg("member", ".".join(self.chain(inner)[0]))
        elif t == "identifier" or t == "this":
            arg = Arg("identifier", self.source[inner.start_byte:inner.end_byte].decode("utf-8", "replace"))
        elif t == "object" and inner.named_child_count:
            point = inner.start_point
            arg = Arg("object", self.snippet(inner), f"L{point[0] + 1}C{point[1] + 1}")
            htype = None
            if node.type in ("satisfies_expression", "as_expression"):
                named = [c for c in node.named_children if c.type != "comment"]
                htype = _fold(self.text(named[-1])) if len(named) >= 2 else None
            # a holder seen from the outside (e.g. `return Object.freeze({…})`) wins over the argument
            self.holders.setdefault(inner.id, (f"argument:{callee_text}:{index}", htype))
        elif t == "number":
            arg = Arg(kind="number", text=self.text(inner))
        else:
            arg = Arg(kind="other", text=self.snippet(node))
        if self.track_args:
            self.arg_by_node[node.id] = arg
        return arg

    def on_return_new(self, m: dict[str, list[Node]], _variant: str, top: _Frame) -> None:
        if top.fn_def is None or top.nested:
            return  # returned from a closure, not from the named function
        cls = _fold(self.text(m["class"][0]))
        if cls not in top.fn_def.returns_new:
            top.fn_def.returns_new.append(cls)

    def on_return_chain(self, m: dict[str, list[Node]], _variant: str, top: _Frame) -> None:
        d = top.fn_def
        if d is None or top.nested or d.return_type or d.returns_chain is not None:
            return  # annotated, returned from a closure, or not the first return
        chain = self.chain(m["chain"][0])[0]
        plain = "<expr>" not in chain and "<literal>" not in chain and not any(seg.startswith("[") for seg in chain)
        if plain and chain != ["undefined"]:
            d.returns_chain = chain

    def on_dynamic_import(self, m: dict[str, list[Node]], _variant: str, top: _Frame) -> None:
        src = m["source"][0]
        if src.type == "template_string" and _has_substitution(src):
            return
        node = m["call"][0]
        self.facts.dynamic_imports.append(DynamicImport(specifier=_unquote(self.text(src)), scope=top.scope,
                                                        line=self.line(node), nested=top.nested))
        self._dyn_nodes.append((node, _unquote(self.text(src))))

    def on_binding(self, m: dict[str, list[Node]], variant: str, top: _Frame) -> None:
        node = m["binding"][0]
        if variant in ("for_of", "using"):
            value = m["value"][0]
        elif variant == "catch":
            value = None
        else:
            value = node.child_by_field_name("value")
        if value is not None and variant != "for_of":
            vt = value.type
            if vt in FUNCTION_TYPES or vt in CLASS_TYPES:
                return  # a definition
            if vt == "call_expression" and self._is_require(value):
                return  # an import
        kind = variant or (self.text(m["kind"][0]) if "kind" in m else "const")
        annotation = node.child_by_field_name("type") if variant != "using" else None
        exported = node.id in self.exported_ids
        name_node = m["name"][0]
        branches = [value] if value is None or annotation is not None else _branches(value)
        for i, branch in enumerate(branches):
            as_type, new_class, init_callee, init_chain = self.value_info(branch)
            btype = self.type_of(annotation) if annotation is not None else as_type or self.generic_new_type(branch)
            if btype is None and new_class is None and init_callee is None and init_chain is None and not exported:
                continue  # nothing to infer from (bindings exist to type receivers)
            self.facts.bindings.append(Binding(scope=top.scope, name=self.text(name_node), line=self.line(name_node),
                                               type=btype, new_class=new_class, init_callee=init_callee,
                                               init_chain=init_chain, kind=kind, exported=exported,
                                               branch=i if len(branches) > 1 else 0))

    def on_assign(self, m: dict[str, list[Node]], _variant: str, top: _Frame) -> None:
        value = m["value"][0]
        target, _ = self.chain(m["target"][0])
        if len(target) < 2 or target[-1].startswith("["):
            return
        t = value.type
        if t in FUNCTION_TYPES:
            kind, text = "function", ""
        elif t == "identifier":
            kind, text = "identifier", self.text(value)
        else:
            kind, text = "member", ".".join(self.chain(value)[0])
        self.facts.assignments.append(Assignment(scope=top.scope, target=target, line=self.line(value),
                                                 value_kind=kind, value_text=text, nested=top.nested))

    def on_jsx(self, m: dict[str, list[Node]], _variant: str, top: _Frame) -> None:
        """`<Comp a={f} b={() => …} />`: the props object Comp receives, as an object literal held by
        `jsx:<Comp>` (intrinsic lower-case elements pass nothing to the repo's code)."""
        name = self.text(m["name"][0])
        if not name[:1].isupper() and "." not in name:
            return
        node = m["element"][0]
        obj = ObjectLiteral(object_id=self.object_id(node), scope=top.scope, line=self.line(node),
                            end_line=node.end_point[0] + 1, holder=f"jsx:{name}", nested=top.nested)
        for attr in node.named_children:
            if attr.type == "jsx_expression" and attr.named_child_count \
                    and attr.named_children[0].type == "spread_element":  # `<Comp {...shared} />`
                spread = attr.named_children[0]
                inner = spread.named_children[0] if spread.named_child_count else spread
                text = (".".join(self.chain(inner)[0]) if inner.type in ("identifier", "member_expression", "this")
                        else self.snippet(inner))
                obj.properties.append(ObjectProperty(key="...", line=self.line(attr), value_kind="spread",
                                                     value_text=text))
                continue
            if attr.type != "jsx_attribute" or not attr.named_child_count:
                continue
            key = attr.named_children[0]
            value = attr.named_children[1] if attr.named_child_count > 1 else None
            prop = ObjectProperty(key=self.text(key), line=self.line(attr), value_kind="other")
            if value is not None and value.type == "jsx_expression" and value.named_child_count:
                self.classify_value(prop, value.named_children[0])
            obj.properties.append(prop)
        if obj.properties:
            self.facts.objects.append(obj)

    def _is_require(self, value: Node) -> bool:
        fn = value.child_by_field_name("function")
        return fn is not None and fn.type == "identifier" and self.text(fn) == "require"

    def on_destructure(self, m: dict[str, list[Node]], variant: str, top: _Frame) -> None:
        value = m["value"][0]
        if value.type == "call_expression" and self._is_require(value):
            return
        kind = variant or (self.text(m["kind"][0]) if "kind" in m else "const")
        _as, new_class, init_callee, init_chain = self.value_info(value)
        for name, key, node in self.pattern_names(m["pattern"][0]):
            self.facts.bindings.append(Binding(scope=top.scope, name=name, line=self.line(node), new_class=new_class,
                                               init_callee=init_callee, init_chain=init_chain,
                                               destructure_key=key, kind=kind,
                                               exported=m["binding"][0].id in self.exported_ids))

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

    # -- after the sweep -----------------------------------------------------------------------

    def finish_definitions(self) -> None:
        self.fold_overloads()
        self.facts.definitions = [d for d in self.facts.definitions if d.qualname]
        for d in self.facts.definitions:
            if "signature-only" in d.modifiers:
                d.modifiers.remove("signature-only")
        self.bodies = [b for b in self.bodies if b[0].qualname]

    def fold_overloads(self) -> None:
        """A dropped overload signature's parameters join its member's (`Definition.signatures()`)."""
        for member, extra in self.folded_overloads:
            member.overload_params.extend(extra.params)
            member.overload_sizes.append(len(extra.params))

    def collect_heritage(self) -> None:
        for role in ("heritage.extends", "heritage.implements", "heritage.interface_extends"):
            for m in self.matches(role):
                owner = self.class_owner.get(m["owner"][0].id)
                if owner is None:
                    continue
                if role == "heritage.implements":
                    owner.implements.append(_fold(self.text(m["implements"][0])))
                    continue
                node = m["extends"][0]
                text = self.text(node)
                if node.type == "extends_clause":
                    text = text.strip()
                    text = text[len("extends"):] if text.startswith("extends") else text
                owner.extends.append(_fold(text))

    def collect_fields(self) -> None:
        for m in self.matches("field.class"):
            self.guard(self._field, m, False)
        for m in self.matches("field.signature"):
            self.guard(self._field, m, False)
        for m in self.matches("field.method_signature"):
            self.guard(self._field, m, True)
        for m in self.matches("field.call_signature"):
            self.guard(self._call_signature, m)
        self.facts.fields.sort(key=lambda f: (f.line, f.owner, f.name))

    def _field(self, m: dict[str, list[Node]], method_signature: bool) -> None:
        owner = self.class_owner.get(m["body"][0].id)
        if owner is None:
            return
        node = m["field"][0]
        value = None if method_signature else node.child_by_field_name("value")
        annotation = None if method_signature else node.child_by_field_name("type")
        _as, new_class, init_callee, _chain = self.value_info(value)
        self.facts.fields.append(Field(owner=owner.qualname, name=self.key_text(m["name"][0]), line=self.line(node),
                                       type=self.type_of(annotation) if annotation is not None
                                       else self.generic_new_type(value),
                                       new_class=new_class, init_callee=init_callee,
                                       is_static=node.id in self.static_field_ids,
                                       is_method_signature=method_signature))

    def _call_signature(self, m: dict[str, list[Node]]) -> None:
        """`interface Fn<T> { (ctx: Context, config: T): any }` → field "()" typed `(ctx: Context, config: T) => any`
        (CALL_SIGNATURE_FIELD): the function type a value of the interface has when called."""
        owner = self.class_owner.get(m["body"][0].id)
        if owner is None:
            return
        node = m["field"][0]
        params = node.child_by_field_name("parameters")
        if params is None:
            return
        ret = self.type_of(node.child_by_field_name("return_type")) or "any"
        self.facts.fields.append(Field(owner=owner.qualname, name=CALL_SIGNATURE_FIELD, line=self.line(node),
                                       type=f"{_fold(self.text(params))} => {ret}"))

    def _statement_finder(self, role: str, key: str):
        """Find the statement (import/export) that contains a clause part, by byte position."""
        stmts = sorted(((m[key][0].start_byte, m[key][0].end_byte, m) for m in self.matches(role)),
                       key=lambda t: t[0])
        starts = [t[0] for t in stmts]

        def find(node: Node) -> dict[str, list[Node]] | None:
            i = bisect_right(starts, node.start_byte) - 1
            if i >= 0 and node.start_byte < stmts[i][1]:
                return stmts[i][2]
            return None

        return find

    def collect_imports(self) -> None:
        type_only_stmts = {m["import"][0].id for m in self.matches("import.type_only")}
        type_only_specs = {m["specifier"][0].id for m in self.matches("import.specifier_type_only")}
        statement_of = self._statement_finder("import.statement", "import")
        named_stmts: set[int] = set()
        out = self.facts.imports
        for role in ("import.default", "import.namespace", "import.named"):
            for m in self.matches(role):
                part = m["specifier"][0] if "specifier" in m else m["local"][0]
                stmt_m = statement_of(part)
                if stmt_m is None:
                    continue
                stmt = stmt_m["import"][0]
                named_stmts.add(stmt.id)
                spec = _unquote(self.text(stmt_m["source"][0]))
                type_only = stmt.id in type_only_stmts
                if role == "import.default":
                    out.append(Import(spec, "default", self.text(part), self.line(stmt), type_only))
                elif role == "import.namespace":
                    out.append(Import(spec, "*", self.text(part), self.line(stmt), type_only))
                else:
                    name = _unquote(self.text(m["name"][0]))
                    alias = part.child_by_field_name("alias")
                    local = self.text(alias) if alias is not None else name
                    out.append(Import(spec, name, local, self.line(part), type_only or part.id in type_only_specs))
        for role in ("import.require", "import.destructure"):
            for m in self.matches(role):
                stmt = m["import"][0]
                named_stmts.add(stmt.id)
                spec = _unquote(self.text(m["source"][0]))
                if role == "import.require":
                    out.append(Import(spec, "*", self.text(m["local"][0]), self.line(stmt),
                                      stmt.id in type_only_stmts))
                else:
                    for local, key, node in self.pattern_names(m["pattern"][0]):
                        out.append(Import(spec, key, local, self.line(node)))
        for m in self.matches("import.statement"):
            stmt = m["import"][0]
            if stmt.id not in named_stmts:
                out.append(Import(_unquote(self.text(m["source"][0])), "", "", self.line(stmt),
                                  stmt.id in type_only_stmts))
        out.sort(key=lambda i: i.line)

    def collect_exports(self) -> None:
        type_only_stmts = {m["export"][0].id for m in self.matches("export.type_only")}
        type_only_specs = {m["specifier"][0].id for m in self.matches("export.specifier_type_only")}
        out = self.facts.exports
        for m in self.matches("export.star"):
            stmt = m["export"][0]
            out.append(Export("*", self.line(stmt), None, _unquote(self.text(m["source"][0])),
                              stmt.id in type_only_stmts))
        for m in self.matches("export.namespace"):
            stmt = m["export"][0]
            out.append(Export(_unquote(self.text(m["name"][0])), self.line(stmt), "*",
                              _unquote(self.text(m["source"][0])), stmt.id in type_only_stmts))
        statement_of = self._statement_finder("export.clause", "export")
        for m in self.matches("export.named"):
            spec_node = m["specifier"][0]
            stmt_m = statement_of(spec_node)
            if stmt_m is None:
                continue
            stmt = stmt_m["export"][0]
            name = _unquote(self.text(m["name"][0]))
            alias = spec_node.child_by_field_name("alias")
            exported = _unquote(self.text(alias)) if alias is not None else name
            source_node = stmt.child_by_field_name("source")
            source = _unquote(self.text(source_node)) if source_node is not None else None
            out.append(Export(exported, self.line(spec_node), name, source,
                              stmt.id in type_only_stmts or spec_node.id in type_only_specs))
        for m in self.matches("export.declaration"):
            stmt = m["export"][0]
            is_default = stmt.id in self.default_ids
            for name in self.declared_names(m["declaration"][0]):
                out.append(Export("default" if is_default else name, self.line(stmt), name, None))
        for m in self.matches("export.default"):
            stmt = m["export"][0]
            value = m["value"][0]
            if value.type == "identifier":
                local: str | None = self.text(value)
            elif value.type in FUNCTION_TYPES or value.type in CLASS_TYPES:
                d = self.fn_def.get(value.id)
                local = d.qualname if d is not None else None
            else:
                local = None
            out.append(Export("default", self.line(stmt), local, None))
        for m in self.matches("export.assign"):
            value = m["value"][0]
            local = self.text(value) if value.type == "identifier" else None
            out.append(Export("default", self.line(m["export"][0]), local, None))
        out.sort(key=lambda e: e.line)

    def declared_names(self, decl: Node) -> list[str]:
        if decl.type == "ambient_declaration":
            names: list[str] = []
            for c in decl.named_children:
                names.extend(self.declared_names(c))
            return names
        if decl.type in ("lexical_declaration", "variable_declaration"):
            out = []
            for d in decl.named_children:
                if d.type == "variable_declarator":
                    name = d.child_by_field_name("name")
                    if name is not None and name.type == "identifier":
                        out.append(self.text(name))
                    elif name is not None and name.type == "object_pattern":
                        out.extend(n for n, _k, _node in self.pattern_names(name))
            return out
        name = decl.child_by_field_name("name")
        if name is not None and name.type in ("identifier", "type_identifier", "nested_identifier"):
            return [self.text(name)]
        return []

    def attach_dynamic_imports(self) -> None:
        for node, spec in self._dyn_nodes:
            child = node
            parent = child.parent
            while parent is not None:
                if parent.type == "arguments":
                    arg = self.arg_by_node.get(child.id)
                    if arg is not None and spec not in arg.dynamic_imports:
                        arg.dynamic_imports.append(spec)
                elif parent.type == "pair":
                    prop = self.prop_by_node.get(parent.id)
                    if prop is not None and spec not in prop.dynamic_imports:
                        prop.dynamic_imports.append(spec)
                elif child.type == "method_definition":
                    prop = self.prop_by_node.get(child.id)
                    if prop is not None and spec not in prop.dynamic_imports:
                        prop.dynamic_imports.append(spec)
                child, parent = parent, parent.parent

    def fill_property_values(self) -> None:
        for prop, node_id in self.pending_values:
            d = self.fn_def.get(node_id)
            prop.value_def = d.qualname if d is not None else self.value_def.get(node_id)

    def hash_bodies(self) -> None:
        if not self.bodies:
            return
        hashes = body_hashes(self.source, [(s, e) for _d, s, e in self.bodies],
                             [(n.start_byte, n.end_byte) for m in self.matches("token.comment") for n in m["comment"]],
                             [(n.start_byte, n.end_byte) for m in self.matches("token.literal") for n in m["literal"]])
        for (d, _s, _e), h in zip(self.bodies, hashes, strict=True):
            d.body_hash = h


def _branches(value: Node, depth: int = 0) -> list[Node]:
    """The alternatives of a conditional initialiser: `c ? a : b`, `a ?? b`, `a || b` (nested too)."""
    inner = value
    while inner.type == "parenthesized_expression" and inner.named_child_count == 1:
        inner = inner.named_children[0]
    if depth < 4 and inner.type == "ternary_expression":
        cons, alt = inner.child_by_field_name("consequence"), inner.child_by_field_name("alternative")
        if cons is not None and alt is not None:
            return _branches(cons, depth + 1) + _branches(alt, depth + 1)
    if depth < 4 and inner.type == "binary_expression":
        op = inner.child_by_field_name("operator")
        left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
        if op is not None and op.type in ("??", "||") and left is not None and right is not None:
            return _branches(left, depth + 1) + _branches(right, depth + 1)
    return [value]


def _has_substitution(node: Node) -> bool:
    return any(c.type == "template_substitution" for c in node.named_children)


# ----------------------------------------------------------------------------------------------
# body hash


def body_hashes(source: bytes, ranges: list[tuple[int, int]], comments: list[tuple[int, int]],
                literals: list[tuple[int, int]]) -> list[str]:
    """Hashes of byte ranges that ignore comments and whitespace between tokens but not inside literals.

    Comments are blanked; whitespace inside literals is swapped for non-whitespace placeholders so it
    survives; everything else has whitespace folded and dropped wherever it does not separate two word
    characters (so `f(a,b)` and `f( a, b )` agree). The text is cut only at range boundaries; pieces
    are normalised once, shared by nested ranges, and skipped outside every range.
    """
    buf = bytearray(source)
    for s, e in comments:
        buf[s:e] = b" " * (e - s)
    has_ws = _HAS_WS.search
    for s, e in literals:
        if has_ws(buf, s, e):  # searched in place: most literals have no whitespace, so no copy
            buf[s:e] = buf[s:e].translate(_PROTECT)
    depth_change: dict[int, int] = defaultdict(int)
    for s, e in ranges:
        depth_change[s] += 1
        depth_change[e] -= 1
    cuts = sorted(depth_change)
    pieces: list[bytes] = []
    index: dict[int, int] = {}
    depth = 0
    for i in range(len(cuts) - 1):
        a = cuts[i]
        depth += depth_change[a]
        index[a] = len(pieces)
        pieces.append(_GLUE.sub(b"", b" ".join(buf[a:cuts[i + 1]].split())) if depth > 0 else b"")
    index[cuts[-1]] = len(pieces)
    out = []
    for s, e in ranges:
        i, j = index[s], index[e]
        joined = pieces[i] if j == i + 1 else b" ".join(p for p in pieces[i:j] if p)
        out.append(hashlib.sha1(joined).hexdigest()[:16])
    return out
