"""Stored records by type: a volatile value written into field F of a value of declared record type T
reaches every read of F on a value of type T (records.toml).

`const header: Header = { cwd: process.cwd() }` (or `header.cwd = …`, or `{ cwd }` passed where a parameter
typed `Header` is expected) is written once and read back wherever the record went (a session store, a
file, an event): `session.header.cwd`, with `session: Session` and `Session.header: Header` declared. The
types are the declared ones — annotations of parameters, variables, class and interface fields, return
types, `as`/`satisfies` — read from the files' syntax trees and reduced as the resolver reduces type texts
(`analyzer.index.types`); a type name is the declaration the graph has for it in the same file, else the
one declaration of that name in the repository (an ambiguous name is not followed).

The engine keeps the written flows per (declaration, field); a summary that reads one is re-run when the
field gains flows (as for fields filled at construction sites).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Protocol

import networkx as nx
from tree_sitter import Node, QueryError

from analyzer.hazards.rules import HazardRules, Record, Source, glob_match
from analyzer.hazards.syntax import FUNCTION_NODES, ParsedFile, SourceFiles, descendants, key_text, matches, unwrap
from analyzer.hazards.taints import Step, Summary, Taints, stepped, union
from analyzer.index.types import base_name, candidate_types, type_arguments

KEY = "record:"  # prefix of the engine's dependency keys for record fields


class Scope(Protocol):
    """What declared types are read from: the file, the function, and `info.class_node` (the class of `this`)."""

    pf: ParsedFile
    fn: Node
    info: Any


class Walker(Scope, Protocol):
    """What this module reads of the body walker (`flow.FunctionFlow`)."""

    ctx: Any
    summary: Summary

    def step(self, node: Node, why: str, rule: str = "") -> Step: ...
    def origin(self, src: Any, node: Node) -> Taints: ...


class RecordStore:
    """Record declarations of one graph, their fields' declared types, and the flows written into them."""

    def __init__(self, graph: nx.MultiDiGraph, files: SourceFiles, rules: HazardRules) -> None:
        self.g, self.files = graph, files
        self.rule: Record | None = rules.records[0] if rules.records else None
        self.fixed = next((f.name for f in rules.fixed if self.rule and f.name == self.rule.fixed), None)
        self._decls: dict[tuple[str, str], list[str]] | None = None  # (repo, name) → declaration nodes
        self._fields: dict[str, dict[str, str]] = {}  # declaration → field → annotation text
        self.values: dict[tuple[str, str], Taints] = {}  # (KEY + declaration, field) → written flows
        self.class_fields: dict[tuple[str, str], str | None] = {}  # (class, field) → record declaration
        self.typed_sources = [src for src in rules.sources if src.field_types]  # sources known by field type

    # ---- declarations --------------------------------------------------------------------------------
    def _declarations(self) -> dict[tuple[str, str], list[str]]:
        if self._decls is None:
            kinds = set(self.rule.declarations) if self.rule else set()
            self._decls = {}
            for n, a in self.g.nodes(data=True):
                if a.get("kind") in kinds and not a.get("test"):
                    self._decls.setdefault((a["repo"], a.get("name", "")), []).append(n)
        return self._decls

    def resolve(self, repo: str, path: str, text: str | None) -> str | None:
        """The record declaration a type text names (`Pick<Header, 'cwd'> | undefined` → Header), or None."""
        if not text or self.rule is None:
            return None
        text = text.strip().lstrip(":").strip()
        for _ in range(4):  # field-keeping generics: their first argument
            base = base_name(text)
            args = type_arguments(text)
            if base not in self.rule.field_subsets or not args:
                break
            text = args[0]
        found = set()
        for name in candidate_types(text):
            nodes = self._declarations().get((repo, name.rsplit(".", 1)[-1]), [])
            local = [n for n in nodes if self.g.nodes[n]["path"] == path]
            pick = local or nodes
            if len(pick) == 1:
                found.add(pick[0])
            elif pick:
                return None  # ambiguous: not followed
        return found.pop() if len(found) == 1 else None

    def field_annotation(self, decl: str, name: str) -> str | None:
        """The annotation text of field `name` of `decl` (`SessionId`), or None."""
        fields = self._fields.get(decl)
        if fields is None:
            fields = self._fields[decl] = self._read_fields(decl)
        return fields.get(name)

    def field_type(self, decl: str, name: str) -> str | None:
        """The record declaration of field `name` of `decl`, when its annotation names one."""
        fields = self._fields.get(decl)
        if fields is None:
            fields = self._fields[decl] = self._read_fields(decl)
        a = self.g.nodes[decl]
        return self.resolve(a["repo"], a["path"], fields.get(name))

    def _read_fields(self, decl: str) -> dict[str, str]:
        a = self.g.nodes[decl]
        pf = self.files.get(a["repo"], a["path"])
        if pf is None:
            return {}
        out: dict[str, str] = {}
        stack = [pf.root]
        while stack:
            n = stack.pop()
            if n.start_point[0] > a["end_line"] - 1 or n.end_point[0] < a["line"] - 1:
                continue
            if n.type in ("interface_declaration", "type_alias_declaration") and n.start_point[0] == a["line"] - 1:
                for sig in descendants(n, "property_signature"):
                    key, ann = sig.child_by_field_name("name"), sig.child_by_field_name("type")
                    if key is not None and ann is not None:
                        out.setdefault(key_text(pf, key), pf.text(ann))
                return out
            stack.extend(n.children)
        return out

    def writers(self, candidates: set[str], rules: HazardRules) -> set[str]:
        """The functions among `candidates` (holding a source expression) whose text names a record type of
        their repository and keeps something (a kept_by call, a `this.` field): they may write a volatile
        value into a record read elsewhere."""
        keep = {c.rsplit(".", 1)[-1] for d in rules.dismissals if self.rule and d.name in self.rule.kept_by
                for c in d.calls} - {"*", ""}
        kept = re.compile(r"this\.[\w$]+\s*=[^=]|\b(?:" + "|".join(map(re.escape, sorted(keep))) + r")\s*\(")
        names: dict[str, re.Pattern[str]] = {}
        for repo in {self.g.nodes[n]["repo"] for n in candidates if n in self.g}:
            known = sorted({name for (r, name) in self._declarations() if r == repo and name})
            alts = "|".join(map(re.escape, known)) or "(?!)"
            names[repo] = re.compile(rf"\b(?:{alts})\b")
        out = set()
        for n in candidates:
            a = self.g.nodes.get(n)
            pf = self.files.get(a["repo"], a["path"]) if a else None
            fn = pf.function_at(a["line"], a["end_line"]) if pf is not None and a else None
            text = pf.text(fn) if pf is not None and fn is not None else ""
            if a and kept.search(text) and names[a["repo"]].search(text):
                out.add(n)
        return out

    # ---- flows ----------------------------------------------------------------------------------------
    def written(self, decl: str, name: str, flows: Taints) -> None:
        sourced = {o: f for o, f in flows.items() if o.kind == "source"}
        if not sourced:
            return
        if self.fixed is not None:
            sourced = {o: replace(f, neutralisers=(*f.neutralisers, self.fixed)) for o, f in sourced.items()}
        key = (KEY + decl, name)
        self.values[key] = union(self.values.get(key, {}), sourced)

    def read(self, decl: str, name: str) -> Taints:
        return self.values.get((KEY + decl, name), {})


# ---- the walker's side ---------------------------------------------------------------------------------
def _declared(w: Scope) -> dict[str, str]:
    """Declared types of the names of the function being walked (parameters and annotated variables)."""
    cache: dict[str, str] | None = getattr(w, "_declared_types", None)
    if cache is not None:
        return cache
    out: dict[str, str] = {}
    # a closure the graph holds as a node of its own also sees its enclosing functions' names (outer first,
    # the innermost first, so an inner declaration wins)
    scopes = [w.fn]
    up = w.fn.parent
    while up is not None:
        if up.type in FUNCTION_NODES:
            scopes.append(up)
        up = up.parent
    found = []
    for scope in scopes:
        try:
            found += matches("declared.scm", w.pf.language, scope)
        except QueryError:  # a language without type annotations (JavaScript): nothing is declared
            break
    for _, got in found:
        names, types = got.get("name", []), got.get("type", [])
        if names and types:
            out.setdefault(w.pf.text(names[0]), w.pf.text(types[0]))
    setattr(w, "_declared_types", out)  # noqa: B010 - a cache on the walker, not part of its interface
    return out


def type_of(w: Scope, store: RecordStore, node: Node | None, depth: int = 0) -> str | None:
    """The record declaration of an expression's declared type, or None."""
    if node is None or depth > 6:
        return None
    node = node if node.type in ("as_expression", "satisfies_expression") else unwrap(node)
    if node.type in ("as_expression", "satisfies_expression"):
        ann = node.named_children[-1] if node.named_children else None
        return store.resolve(w.pf.repo, w.pf.path, w.pf.text(ann)) if ann is not None else None
    if node.type == "identifier":
        return store.resolve(w.pf.repo, w.pf.path, _declared(w).get(w.pf.text(node)))
    if node.type == "member_expression":
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if obj is None or prop is None:
            return None
        if obj.type == "this":
            return _class_field_type(w, store, w.pf.text(prop))
        owner = type_of(w, store, obj, depth + 1)
        return store.field_type(owner, w.pf.text(prop)) if owner is not None else None
    return None


def _class_field_type(w: Scope, store: RecordStore, name: str) -> str | None:
    cls = getattr(w.info, "class_node", None)
    if not cls or cls not in store.g:
        return None
    if (cls, name) not in store.class_fields:
        store.class_fields[(cls, name)] = _read_class_field(store, cls, name)
    return store.class_fields[(cls, name)]


def class_field_record(store: RecordStore, cls: str, name: str) -> str | None:
    """The record declaration a class field's annotation names (`readonly header: SessionHeader`)."""
    return _read_class_field(store, cls, name)


def _read_class_field(store: RecordStore, cls: str, name: str) -> str | None:
    a = store.g.nodes[cls]
    pf = store.files.get(a["repo"], a["path"])
    if pf is None:
        return None
    stack = [pf.root]
    while stack:  # only the nodes within the class's lines
        n = stack.pop()
        if n.start_point[0] > a["end_line"] - 1 or n.end_point[0] < a["line"] - 1 or n.type in FUNCTION_NODES:
            continue
        if n.type == "public_field_definition":
            key, ann = n.child_by_field_name("name"), n.child_by_field_name("type")
            if key is not None and ann is not None and pf.text(key) == name:
                return store.resolve(a["repo"], a["path"], pf.text(ann))
            continue
        stack.extend(n.children)
    return None


def context_type(w: Walker, store: RecordStore, obj: Node) -> str | None:
    """The record declaration an object literal is written as: an annotated variable, `as`/`satisfies`,
    the function's declared return type, or a field of an enclosing typed object literal."""
    up = obj.parent
    while up is not None and up.type in ("parenthesized_expression", "await_expression"):
        up = up.parent
    if up is None:
        return None
    if up.type == "variable_declarator":
        ann = up.child_by_field_name("type")
        return store.resolve(w.pf.repo, w.pf.path, w.pf.text(ann)) if ann is not None else None
    if up.type in ("as_expression", "satisfies_expression"):
        return type_of(w, store, up)
    if up.type == "return_statement":
        fn = up.parent
        while fn is not None and fn.type not in FUNCTION_NODES:
            fn = fn.parent
        ann = fn.child_by_field_name("return_type") if fn is not None else None
        return store.resolve(w.pf.repo, w.pf.path, w.pf.text(ann)) if ann is not None else None
    if up.type == "pair" and up.parent is not None and up.parent.type == "object":
        outer = context_type(w, store, up.parent)
        key = up.child_by_field_name("key")
        return store.field_type(outer, key_text(w.pf, key)) if outer is not None and key is not None else None
    return None


def write_object(w: Walker, store: RecordStore, obj: Node, fields: dict[str, Taints]) -> None:
    """An object literal of a record type: each field's flows are written into the record (once the
    function is walked, if it keeps them: `commit`)."""
    if not any(fields.values()):
        return
    decl = context_type(w, store, obj)
    if decl is None:
        return
    for name, flows in fields.items():
        if flows:
            _pending(w).append((decl, name, stepped(flows, w.step(obj, f"written into {_name(store, decl)}.{name}"))))


def write_member(w: Walker, store: RecordStore, obj: Node, name: str, flows: Taints, node: Node) -> None:
    """`x.F = v` with `x` of a record type."""
    if not flows or obj.type == "this":
        return
    decl = type_of(w, store, obj)
    if decl is not None:
        _pending(w).append((decl, name, stepped(flows, w.step(node, f"written into {_name(store, decl)}.{name}"))))


def _pending(w: Walker) -> list[tuple[str, str, Taints]]:
    out: list[tuple[str, str, Taints]] | None = getattr(w, "_record_writes", None)
    if out is None:
        out = []
        setattr(w, "_record_writes", out)  # noqa: B010 - the walker's pending writes, see commit
    return out


def commit(w: Walker, store: RecordStore) -> None:
    """The function's record writes whose values it keeps: passed to a kept_by call (its misses say so,
    also from its callees) or stored in a field of `this`."""
    writes = _pending(w)
    if not writes or store.rule is None:
        return
    kept = {h.flow.origin for h in w.summary.misses if h.site.rule in store.rule.kept_by}
    kept.update(o for t in w.summary.fields.values() for o in t)
    for decl, name, flows in writes:
        store.written(decl, name, {o: f for o, f in flows.items() if o in kept})
    writes.clear()


def read_member(w: Walker, store: RecordStore, obj: Node, name: str, node: Node) -> Taints:
    """`x.F` with `x` of a record type: every flow written into that field."""
    decl = type_of(w, store, obj)
    if decl is None:
        return {}
    typed = identity_source(store, decl, name)
    if typed is not None:  # a field declared as a per-session id (`readonly id: SessionId`)
        return w.origin(typed, node)
    key = (KEY + decl, name)
    w.ctx.depend(key)
    flows = store.values.get(key, {})
    rule = store.rule.name if store.rule is not None else ""
    return stepped(flows, w.step(node, f"read from a stored {_name(store, decl)}.{name}", rule)) if flows else {}


def identity_source(store: RecordStore, decl: str, name: str) -> Source | None:
    """The source rule whose `field_types` name the declared type of field `name` of record `decl`."""
    if not store.typed_sources:
        return None
    ann = store.field_annotation(decl, name)
    names = id_type_names(ann) if ann else []
    return next((src for src in store.typed_sources if any(glob_match(n, src.field_types) for n in names)), None)


def id_type_names(annotation: str) -> list[str]:
    """The names an annotation gives its type: the base name, and for a branded type the brand's string
    literal (`Branded<'SessionId'>` is a SessionId as much as `SessionId` is)."""
    text = annotation.strip().lstrip(":").strip()
    out = [base_name(text)]
    out += [a.strip()[1:-1] for a in type_arguments(text)
            if len(a.strip()) > 2 and a.strip()[0] == a.strip()[-1] and a.strip()[0] in "'\""]
    return [n for n in out if n]


def _name(store: RecordStore, decl: str) -> str:
    return str(store.g.nodes[decl].get("name", decl.rsplit(":", 1)[-1]))

