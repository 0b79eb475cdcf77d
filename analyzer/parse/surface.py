"""A file's surface for the extractor (`analyzer.parse.extract`): export/default/declare markers and object
holders, class heritage and fields, imports and exports, dynamic imports attached to their call or
property, overload folding and body hashes — the passes that read the query captures directly, without
the lexical sweep.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections import defaultdict

from tree_sitter import Node

from analyzer.index.model import (
    CALL_SIGNATURE_FIELD,
    Export,
    Field,
    Import,
)
from analyzer.parse.reader import CLASS_TYPES, FUNCTION_TYPES, Reader, fold, unquote

_HAS_WS = re.compile(rb"\s")
_PROTECT = bytes.maketrans(b" \t\n\r\x0b\x0c", b"\x00\x01\x02\x03\x04\x05")  # literal whitespace is code
# a (folded, single) space that does not separate two word characters: after it a non-word character,
# or before it one (the look-behind spans the space, so every match starts with a literal space: fast)
_GLUE = re.compile(rb" (?:(?![\w$\x80-\xff])|(?<![\w$\x80-\xff] ))")


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


class Surface(Reader):
    """The capture-driven passes over a file's surface (markers, heritage, fields, imports, exports)."""

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
            self.ambient.append((body.start_byte, body.end_byte, unquote(self.text(m["name"][0]))))
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
            htype = fold(self.text(m["satisfies"][0]))
        elif "as" in m:
            htype = fold(self.text(m["as"][0]))
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
                    owner.implements.append(fold(self.text(m["implements"][0])))
                    continue
                node = m["extends"][0]
                text = self.text(node)
                if node.type == "extends_clause":
                    text = text.strip()
                    text = text[len("extends"):] if text.startswith("extends") else text
                owner.extends.append(fold(text))

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
                                       type=f"{fold(self.text(params))} => {ret}"))

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
                spec = unquote(self.text(stmt_m["source"][0]))
                type_only = stmt.id in type_only_stmts
                if role == "import.default":
                    out.append(Import(spec, "default", self.text(part), self.line(stmt), type_only))
                elif role == "import.namespace":
                    out.append(Import(spec, "*", self.text(part), self.line(stmt), type_only))
                else:
                    name = unquote(self.text(m["name"][0]))
                    alias = part.child_by_field_name("alias")
                    local = self.text(alias) if alias is not None else name
                    out.append(Import(spec, name, local, self.line(part), type_only or part.id in type_only_specs))
        for role in ("import.require", "import.destructure"):
            for m in self.matches(role):
                stmt = m["import"][0]
                named_stmts.add(stmt.id)
                spec = unquote(self.text(m["source"][0]))
                if role == "import.require":
                    out.append(Import(spec, "*", self.text(m["local"][0]), self.line(stmt),
                                      stmt.id in type_only_stmts))
                else:
                    for local, key, node in self.pattern_names(m["pattern"][0]):
                        out.append(Import(spec, key, local, self.line(node)))
        for m in self.matches("import.statement"):
            stmt = m["import"][0]
            if stmt.id not in named_stmts:
                out.append(Import(unquote(self.text(m["source"][0])), "", "", self.line(stmt),
                                  stmt.id in type_only_stmts))
        out.sort(key=lambda i: i.line)

    def collect_exports(self) -> None:
        type_only_stmts = {m["export"][0].id for m in self.matches("export.type_only")}
        type_only_specs = {m["specifier"][0].id for m in self.matches("export.specifier_type_only")}
        out = self.facts.exports
        for m in self.matches("export.star"):
            stmt = m["export"][0]
            out.append(Export("*", self.line(stmt), None, unquote(self.text(m["source"][0])),
                              stmt.id in type_only_stmts))
        for m in self.matches("export.namespace"):
            stmt = m["export"][0]
            out.append(Export(unquote(self.text(m["name"][0])), self.line(stmt), "*",
                              unquote(self.text(m["source"][0])), stmt.id in type_only_stmts))
        statement_of = self._statement_finder("export.clause", "export")
        for m in self.matches("export.named"):
            spec_node = m["specifier"][0]
            stmt_m = statement_of(spec_node)
            if stmt_m is None:
                continue
            stmt = stmt_m["export"][0]
            name = unquote(self.text(m["name"][0]))
            alias = spec_node.child_by_field_name("alias")
            exported = unquote(self.text(alias)) if alias is not None else name
            source_node = stmt.child_by_field_name("source")
            source = unquote(self.text(source_node)) if source_node is not None else None
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
