"""The sites of one file's sweep (`analyzer.parse.extract`): what each capture placed in its scope becomes.

The extractor's sweep walks definitions and regions; every other capture it meets is handed to a handler
here with the innermost open region (`Frame`): calls and their arguments, object literals and their
properties, bindings, member assignments, returns, dynamic imports and JSX props — the facts resolution
reads — and the `Value` facts it does not read (member reads, assignment targets, updates, iterated
values, literal texts), which the hazard scan and literal attribution look up instead of the source text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from analyzer.index.model import (
    LITERAL_MIN_CHARS,
    Arg,
    Assignment,
    Binding,
    Call,
    Definition,
    DynamicImport,
    ObjectLiteral,
    ObjectProperty,
    Value,
)
from analyzer.parse.reader import (
    CLASS_TYPES,
    FUNCTION_TYPES,
    SIMPLE_CHAIN,
    TEXT_LIMIT,
    WRAPPERS,
    callee_text_of,
    fold,
    type_text,
    unquote,
    unwrap,
)
from analyzer.parse.surface import Surface


@dataclass(slots=True)
class Frame:
    """An open lexical region during the sweep."""

    end: int
    kind: str  # def | object | anon
    prefix: str  # qualname prefix for named things inside
    scope: str | None  # nearest named definition
    nested: int
    fn_node: Node | None = None  # innermost function (for a returned object's holder type)
    fn_def: Definition | None = None
    object_id: str | None = None



VALUE_ROLES = ("value.member", "value.ident", "value.assign", "value.update", "value.iterate", "value.literal")
# a member expression in these places is not a read of its own: the chain it belongs to is (`a.b` in `a.b.c`),
# or a call, `new`, write or update fact holds it
_HELD_BY = {"member_expression": "object", "subscript_expression": "object", "call_expression": "function",
            "new_expression": "constructor", "assignment_expression": "left", "update_expression": "argument"}
# an update here has no value (`i++;`, `for (…; …; i++)`): kept only when it updates a member (`this.n++;`,
# state another function reads) or its value is used (`id = ++this.n`)
_VALUELESS_UPDATE = frozenset({"expression_statement", "for_statement", "sequence_expression"})
# a literal here is a module specifier, not text (`import … from "…"`, `export * from "…"`)
_SPECIFIER_PARENTS = frozenset({"import_statement", "export_statement"})


class Sites(Surface):
    """The handlers of the sweep's captures, each given the innermost open region."""

    def on_object(self, node: Node, top: Frame) -> Frame:
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
        return Frame(end=node.end_byte, kind="object", prefix=prefix, scope=top.scope, nested=top.nested,
                      fn_node=top.fn_node, fn_def=top.fn_def, object_id=oid)

    def returned_to(self, top: Frame) -> str | None:
        """`f((…) => { return {…} })`: the literal is what the closure passed as f's argument returns — the
        compiler types it by that parameter's function type (`ui.custom(factory: (…) => Component)`)."""
        if top.kind != "anon" or top.fn_node is None:
            return None
        return self.callback_args.get(top.fn_node.id)

    def return_type_of(self, top: Frame) -> str | None:
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

    def on_call(self, m: dict[str, list[Node]], variant: str, top: Frame) -> None:
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

    def on_return_new(self, m: dict[str, list[Node]], _variant: str, top: Frame) -> None:
        if top.fn_def is None or top.nested:
            return  # returned from a closure, not from the named function
        cls = fold(self.text(m["class"][0]))
        if cls not in top.fn_def.returns_new:
            top.fn_def.returns_new.append(cls)

    def on_return_chain(self, m: dict[str, list[Node]], _variant: str, top: Frame) -> None:
        d = top.fn_def
        if d is None or top.nested or d.return_type or d.returns_chain is not None:
            return  # annotated, returned from a closure, or not the first return
        chain = self.chain(m["chain"][0])[0]
        plain = "<expr>" not in chain and "<literal>" not in chain and not any(seg.startswith("[") for seg in chain)
        if plain and chain != ["undefined"]:
            d.returns_chain = chain

    def on_dynamic_import(self, m: dict[str, list[Node]], _variant: str, top: Frame) -> None:
        src = m["source"][0]
        if src.type == "template_string" and _has_substitution(src):
            return
        node = m["call"][0]
        self.facts.dynamic_imports.append(DynamicImport(specifier=unquote(self.text(src)), scope=top.scope,
                                                        line=self.line(node), nested=top.nested))
        self._dyn_nodes.append((node, unquote(self.text(src))))

    def on_binding(self, m: dict[str, list[Node]], variant: str, top: Frame) -> None:
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

    def on_assign(self, m: dict[str, list[Node]], _variant: str, top: Frame) -> None:
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

    def on_jsx(self, m: dict[str, list[Node]], _variant: str, top: Frame) -> None:
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

    def on_destructure(self, m: dict[str, list[Node]], variant: str, top: Frame) -> None:
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


    # -- values ----------------------------------------------------------------------------------

    def collect_values(self, events: list[tuple[int, int, int, str, Any]]) -> None:
        """The sweep's value events; member expressions only where they are read whole."""
        for role in VALUE_ROLES:
            member = role == "value.member"
            literal = role == "value.literal"
            update = role == "value.update"
            for m in self.matches(role):
                n = m["value"][0]
                if literal:
                    if n.end_byte - n.start_byte < LITERAL_MIN_CHARS + 2:
                        continue
                    parent = n.parent
                    if parent is not None and parent.type in _SPECIFIER_PARENTS:
                        continue
                elif update:
                    parent = n.parent
                    if parent is not None and parent.type in _VALUELESS_UPDATE \
                            and m["target"][0].type not in ("member_expression", "subscript_expression"):
                        continue
                elif member:
                    parent = n.parent
                    if parent is not None:
                        held = _HELD_BY.get(parent.type)
                        if held is not None:
                            part = parent.child_by_field_name(held)
                            if part is not None and part.id == n.id:
                                continue
                events.append((n.start_byte, -n.end_byte, 1, "value", (m, role)))

    def on_value(self, m: dict[str, list[Node]], role: str, top: Frame) -> None:
        node = m["value"][0]
        kind = role[len("value."):]
        scope = top.scope
        if kind == "member" or kind == "ident":
            text = ".".join(self.chain(node)[0]) if kind == "member" else self.text(node)
            key = (scope or "", kind, text)
            if scope is not None:  # module level: each line (a constant's declaration) counts
                if key in self.value_keys:
                    return  # one per scope: the hazard scan asks which functions read it, not how often
                self.value_keys.add(key)
        elif kind == "literal":
            text = self.text(node)
            if len(text) < LITERAL_MIN_CHARS + 2:
                return
        else:
            if kind == "iterate" and node.type == "for_in_statement" \
                    and not any(c.type == "of" for c in node.children):
                return  # `for (k in o)` iterates keys, a shape of its own
            target = m["target"][0]
            # an iterated value as written (`this.byName.get(k) ?? []`), an assignment target or an update's
            # operand as a chain
            text = self.snippet(target) if kind == "iterate" else ".".join(self.chain(target)[0])
        self.facts.values.append(Value(kind, scope, self.line(node), text))


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

