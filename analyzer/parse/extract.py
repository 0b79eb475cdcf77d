"""Turn one TS/JS file into `FileFacts` (see `analyzer.index.model` for the record conventions).

What counts as a definition, call, import, binding or object holder is written in the `.scm` query
files; this module runs them (one traversal per file), then places every capture in its lexical
context with a single sweep over byte ranges: named definitions and object literals form the
qualname prefixes, anonymous functions add closure nesting, and calls/bindings/dynamic imports take
the innermost named definition as their scope. No input raises: syntax errors are recovered by
tree-sitter and counted; a failure on one construct is counted in `extract_errors` and skipped.

The extractor is one object per file in four parts, each its own module: `reader.Reader` (the text, the
captures by role, reading expressions, and the node-id indexes every pass fills), `surface.Surface` (the
passes that read captures directly: markers, heritage, fields, imports, exports), `sites.Sites` (what each
capture met in the sweep becomes: calls, arguments, objects, bindings, assignments, JSX, value facts) and
`_Extractor` here (definitions, their qualnames and params, and the lexical sweep that places the rest).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from tree_sitter import Node, QueryCursor

from analyzer.index.model import (
    Binding,
    Definition,
    Field,
    FileFacts,
    Param,
)
from analyzer.parse.languages import is_declaration_file, language_for_path, parse_bytes
from analyzer.parse.queries_loader import error_query, file_query
from analyzer.parse.reader import State, fold, type_text
from analyzer.parse.sites import Frame, Sites

# Bump when extraction output changes for the same input (part of the per-blob cache key).
EXTRACTOR_VERSION = "15"

log = logging.getLogger(__name__)

# A destructured parameter keeps every name it binds (`function View({ a, b, …, renderSlot })`): React
# components destructure dozens of props, and a pattern cut at TEXT_LIMIT loses the later ones.
PATTERN_LIMIT = 4000
SIGNATURE_LIMIT = 300
ALIAS_SIGNATURE_LIMIT = 1500  # a type alias's text is its meaning (`A & B & PropsLocale<N>`): cut it less
MODIFIER_TOKENS = frozenset({"static", "abstract", "async", "readonly", "declare", "override", "accessor"})
# declaration merging: a type-only declaration and a value declaration of one name are one symbol
TYPE_HALVES = frozenset({"interface", "type_alias"})
VALUE_HALVES = frozenset({"class", "function", "enum"})
_EVENT_ORDER = itemgetter(0, 1, 2)  # (start, -end, priority): outer before inner, regions before facts


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
        state = State(source=source, language=language, facts=facts)
        _run(state, root, declaration)
        facts.extract_errors += state.errors
    except Exception:  # noqa: BLE001 - a broken file must never stop the index
        log.debug("extraction failed for %s", path, exc_info=True)
        facts.extract_errors += 1
    return facts


def _count_errors(root: Node, language: str) -> int:
    captures = QueryCursor(error_query(language)).captures(root)
    return sum(len(nodes) for nodes in captures.values())


def _run(state: State, root: Node, declaration: bool) -> None:
    query, roles, _settings = file_query(state.language, declaration)
    by_role = state.by_role
    for index, captures in QueryCursor(query).matches(root):
        by_role[roles[index]].append(captures)
    _Extractor(state, declaration).run()


# ----------------------------------------------------------------------------------------------
# the extractor


class _Extractor(Sites):
    """The lexical sweep: definitions, their qualnames and params, and the calls, bindings, objects,
    JSX and values placed in their scopes (the handlers, surface passes and reading are `Sites`,
    `Surface` and `Reader`)."""

    def run(self) -> None:
        self.guard(self.collect_markers)
        candidates = self.collect_candidates()
        events = self.collect_events(candidates)
        self.sweep(events)
        self.finish_definitions()
        for step in (self.collect_heritage, self.collect_fields, self.collect_imports, self.collect_exports,
                     self.attach_dynamic_imports, self.fill_property_values, self.hash_bodies):
            self.guard(step)

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
            d.return_type = type_text(self.text(rt))
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
        return fold(text, limit).rstrip(";").rstrip()

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
                name = fold(self.text(pattern), PATTERN_LIMIT)
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
        self.collect_values(events)
        self.params = self.params_of()
        events.sort(key=_EVENT_ORDER)
        return events

    def sweep(self, events: list[tuple[int, int, int, str, Any]]) -> None:
        stack: list[Frame] = [Frame(end=1 << 62, kind="module", prefix="", scope=None, nested=0)]
        handlers: dict[str, Callable[[dict[str, list[Node]], str, Frame], None]] = {
            "call": self.on_call, "new": self.on_call, "dynamic_import": self.on_dynamic_import,
            "binding": self.on_binding, "destructure": self.on_destructure, "return_new": self.on_return_new,
            "assign": self.on_assign, "return_chain": self.on_return_chain, "jsx": self.on_jsx,
            "value": self.on_value}
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
                    stack.append(Frame(end=-neg_end, kind="anon", prefix=top.prefix, scope=top.scope,
                                        nested=top.nested + 1, fn_node=payload, fn_def=None, object_id=top.object_id))
                    if payload.id in self.params:
                        self.bind_params(self.make_params(payload), top.scope)
                else:
                    handlers[kind](payload[0], payload[1], top)
            except Exception:  # noqa: BLE001 - one construct must not lose the file
                log.debug("extract: %s at byte %d failed", kind, start, exc_info=True)
                self.s.errors += 1

    def on_def(self, cand: _Candidate, top: Frame) -> Frame:
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
            return Frame(end=cand.end, kind="def", prefix=d.qualname, scope=d.qualname, nested=0,
                          fn_node=None, fn_def=None)
        return Frame(end=cand.end, kind="def", prefix=d.qualname, scope=d.qualname, nested=0,
                      fn_node=fn, fn_def=d)

