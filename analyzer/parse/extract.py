"""Turn one TS/JS file into `FileFacts` (see `analyzer.index.model` for the record conventions).

What counts as a definition, call, import, binding or object holder is written in the `.scm` query
files; this module runs them (one traversal per file), then places every capture in its lexical
context with a single sweep over byte ranges: named definitions and object literals form the
qualname prefixes, anonymous functions add closure nesting, and calls/bindings/dynamic imports take
the innermost named definition as their scope. No input raises: syntax errors are recovered by
tree-sitter and counted; a failure on one construct is counted in `extract_errors` and skipped.

The extractor is one object per file in three parts, each its own module: `reader.Reader` (the text, the
captures by role, reading expressions, and the node-id indexes every pass fills), `surface.Surface` (the
passes that read captures directly: markers, heritage, fields, imports, exports) and `_Extractor` here
(the lexical sweep: definitions, params, calls, bindings, objects, JSX).
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
    Arg,
    Assignment,
    Binding,
    Call,
    Definition,
    DynamicImport,
    Field,
    FileFacts,
    ObjectLiteral,
    ObjectProperty,
    Param,
)
from analyzer.parse.languages import is_declaration_file, language_for_path, parse_bytes
from analyzer.parse.queries_loader import error_query, file_query
from analyzer.parse.reader import (
    CLASS_TYPES,
    FUNCTION_TYPES,
    SIMPLE_CHAIN,
    TEXT_LIMIT,
    WRAPPERS,
    State,
    callee_text_of,
    fold,
    type_text,
    unquote,
    unwrap,
)
from analyzer.parse.surface import Surface

# Bump when extraction output changes for the same input (part of the per-blob cache key).
EXTRACTOR_VERSION = "12"

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


class _Extractor(Surface):
    """The lexical sweep: definitions, their qualnames and params, and the calls, bindings, objects
    and JSX placed in their scopes (the surface passes and the reading are `Surface` and `Reader`)."""

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
            return type_text(self.text(rt)) if rt is not None else None
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
        inner = unwrap(value) if t in WRAPPERS else value
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
            prop.value_kind, prop.value_text = "new", (fold(self.text(ctor)) if ctor is not None else "")
        elif t == "string" or (t == "template_string" and not _has_substitution(inner)):
            prop.value_kind = "string"
            prop.value_text = unquote(self.source[inner.start_byte:inner.end_byte].decode("utf-8", "replace"))
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
            if SIMPLE_CHAIN.fullmatch(raw):
                if "?." in raw:
                    chain, optional = raw.replace("?.", ".").split("."), True
                else:
                    chain, optional = raw.split("."), False
                text = raw
            else:
                chain, optional = self.chain(callee_node, raw)
                text = callee_text_of(fold(raw, TEXT_LIMIT))
        else:
            chain, optional = self.chain(callee_node)
            text = callee_text_of(self.snippet(callee_node))
        if callee_node.type == "await_expression" and text.startswith("await "):
            text = text[len("await "):]  # see await_generic_callee
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
        inner = unwrap(node) if t in WRAPPERS else node
        t = inner.type
        if t == "string" or (t == "template_string" and not _has_substitution(inner)):
            arg = Arg("string", unquote(self.source[inner.start_byte:inner.end_byte].decode("utf-8", "replace")))
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
                htype = fold(self.text(named[-1])) if len(named) >= 2 else None
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
        cls = fold(self.text(m["class"][0]))
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
        self.facts.dynamic_imports.append(DynamicImport(specifier=unquote(self.text(src)), scope=top.scope,
                                                        line=self.line(node), nested=top.nested))
        self._dyn_nodes.append((node, unquote(self.text(src))))

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
