"""Who writes a stored record's field: every place whose value ends up in field F of record type T.

A finding whose source is a record field read back at the request (`context.agent.session.header.cwd`)
says where the value is read, not which entry point put it there. The record was built in one place
(`const header: SessionHeader = { …, cwd: meta.cwd }` in the store's `prepare`) from a parameter that each
caller fills differently: the headless entry with `process.cwd()`, an API handler with the request's
`cwd`. This module finds those writers from the record's type and the call graph:

1. the object literals declared as T (`holder_type` of the index's object facts, through the
   field-keeping generics of records.toml) and the value each gives F, spreads and conditionals included;
2. from a value that is a parameter (or a field of one, `options.meta.cwd`) to every caller's argument
   (graph edges, and registry forwarders such as `Reflect.apply(target.createAgent, r, [ctx, options])`
   through the seams), as far as the argument is itself a parameter;
3. what is left — a call (`process.cwd()`), a request field, a constant, a parameter nobody passes — is a
   writer, named with its file and line and the calls it went through.

A value a writer passes is not followed as a flow (that is the walker's job): this answers "which entry
points set it", for a reviewer, beside the finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from analyzer.hazards.records import RecordStore, class_field_record, type_of
from analyzer.hazards.syntax import FUNCTION_NODES, ParsedFile, key_text, parameter_nodes, unwrap

MAX_DEPTH = 8  # calls followed up from the record write
MAX_WRITERS = 64  # writers kept per field (sorted by place)
FOLLOWED = frozenset({"direct", "method", "interface", "dispatch"})


@dataclass(frozen=True)
class Writer:
    """One place that puts a value into the record's field."""

    repo: str
    path: str
    line: int
    text: str  # the value as written
    via: tuple[str, ...] = ()  # `path:line` of the calls from the writer down to the record write

    def to_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "path": self.path, "line": self.line, "text": self.text, "via": list(self.via)}


class RecordWriters:
    """Writers of record fields in one graph; `engine` is the scan's driver (graph, files, edges, seams)."""

    def __init__(self, engine: Any, store: RecordStore, objects: dict[str, list[tuple[str, Any]]],
                 assigns: dict[str, list[tuple[str, Any]]] | None = None) -> None:
        self.e, self.store = engine, store
        self.objects = objects  # repo → (path, ObjectLiteral fact) with a declared type
        self.assigns = assigns or {}  # repo → (path, Value fact of kind `assign`): `header.cwd = …`
        self._memo: dict[tuple[str, str], list[Writer]] = {}

    # ---- which record a read means -----------------------------------------------------------------
    def field_of_chain(self, repo: str, chain: list[str]) -> tuple[str, str] | None:
        """`….session.header.cwd` → (declaration of Session.header's type, "cwd"): the record a member chain
        reads, from the declared type of the field named by the chain's second-to-last member (one
        declaration of the repository declaring that field, else None)."""
        if len(chain) < 3:
            return None
        holder, name = chain[-2], chain[-1]
        found = set()
        for n, a in self.e.g.nodes(data=True):
            if a.get("repo") != repo or a.get("kind") not in ("class", "interface", "type_alias") or a.get("test"):
                continue
            decl = self._field_record(n, holder)
            if decl is not None and self.store.field_annotation(decl, name) is not None:
                found.add(decl)
        return (found.pop(), name) if len(found) == 1 else None

    def _field_record(self, owner: str, field: str) -> str | None:
        a = self.e.g.nodes[owner]
        if a.get("kind") == "class":
            return class_field_record(self.store, owner, field)
        return self.store.field_type(owner, field)

    # ---- writers -----------------------------------------------------------------------------------
    def of(self, decl: str, name: str) -> list[Writer]:
        key = (decl, name)
        if key not in self._memo:
            found: set[Writer] = set()
            repo = self.e.g.nodes[decl]["repo"]
            for path, obj in self.objects.get(repo, []):
                if self.store.resolve(repo, path, obj.holder_type) != decl:
                    continue
                pf = self.e.files.get(repo, path)
                node = _object_at(pf, obj.object_id) if pf is not None else None
                fn = self.e.innermost(repo, path, obj.line)
                if pf is None or node is None or fn is None:
                    continue
                for value in _field_values(pf, node, name):
                    found |= self._trace(fn, pf, value, [], (), 0, set())
            for path, fact in self.assigns.get(repo, []):
                if fact.text.rsplit(".", 1)[-1] == name:
                    found |= self._assigned(repo, path, fact.line, decl, name)
            shortest: dict[tuple[str, str, int, str], Writer] = {}  # one per place and value: the shortest route
            for w in sorted(found, key=lambda w: (len(w.via), w.via)):
                shortest.setdefault((w.repo, w.path, w.line, w.text), w)
            self._memo[key] = sorted(shortest.values(), key=lambda w: (w.repo, w.path, w.line, w.text))[:MAX_WRITERS]
        return self._memo[key]

    def _assigned(self, repo: str, path: str, line: int, decl: str, name: str) -> set[Writer]:
        """`x.F = v` at `line` with `x` declared as the record (a parameter, a variable, a field of `this`)."""
        pf = self.e.files.get(repo, path)
        fn = self.e.innermost(repo, path, line)
        fn_node = self._syntax(fn, pf) if pf is not None and fn is not None else None
        if pf is None or fn is None or fn_node is None:
            return set()
        a = self.e.g.nodes[fn]
        parent = a.get("parent")
        view = _Scope(pf, fn_node, parent if parent and self.e.g.nodes.get(parent, {}).get("kind") == "class" else None)
        out: set[Writer] = set()
        for n in _assignments_at(fn_node, line):
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            prop = left.child_by_field_name("property") if left is not None else None
            obj = left.child_by_field_name("object") if left is not None else None
            if right is None or prop is None or obj is None or pf.text(prop) != name:
                continue
            if type_of(view, self.store, obj) == decl:
                out |= self._trace(fn, pf, right, [], (), 0, set())
        return out

    def _trace(self, fn: str, pf: ParsedFile, node: Node, path: list[str], via: tuple[str, ...], depth: int,
               seen: set[tuple[Any, ...]]) -> set[Writer]:
        """The writers of what `node` (inside graph function `fn`), taken at member `path`, holds."""
        node = unwrap(node)
        mark = (fn, node.start_byte, node.end_byte, node.type, tuple(path))
        if mark in seen:
            return set()
        seen.add(mark)
        if node.type == "object" and path:
            return {w for v in _field_values(pf, node, path[0]) for w in self._trace(fn, pf, v, path[1:], via, depth,
                                                                                     seen)}
        if node.type == "binary_expression" and pf.text(node.child_by_field_name("operator") or node) in ("??", "||"):
            return {w for side in ("left", "right") if (s := node.child_by_field_name(side)) is not None
                    for w in self._trace(fn, pf, s, path, via, depth, seen)}
        if node.type == "ternary_expression":
            return {w for side in ("consequence", "alternative") if (s := node.child_by_field_name(side)) is not None
                    for w in self._trace(fn, pf, s, path, via, depth, seen)}
        base, chain = _chain(pf, node)
        if base is not None:
            fn_node = self._syntax(fn, pf)
            where = _binding(pf, fn_node, base, node) if fn_node is not None else None
            if where is not None and where[0] == "param":
                return self._callers(fn, int(where[1]), [*where[2], *chain, *path], (node, path), pf, via, depth,
                                     seen)
            if where is not None and where[0] == "local":
                return self._trace(fn, pf, where[1], [*where[2], *chain, *path], via, depth, seen)
        return {self._leaf(pf, node, path, via)}

    def _leaf(self, pf: ParsedFile, node: Node, path: list[str], via: tuple[str, ...]) -> Writer:
        text = " ".join(pf.text(node).split())
        text = text if len(text) <= 80 else text[:79] + "…"
        return Writer(pf.repo, pf.path, node.start_point[0] + 1, text + "".join(f".{p}" for p in path), via)

    def _callers(self, fn: str, index: int, path: list[str], read: tuple[Node, list[str]], pf: ParsedFile,
                 via: tuple[str, ...], depth: int, seen: set[tuple[Any, ...]]) -> set[Writer]:
        """Parameter `index` of `fn` at member `path`: what every caller passes there (`read`: the expression
        that reads it here and the member path taken of it, the writer when nobody passes it)."""
        # a named event's listener receives the emitter's payload, not its arguments in order: not followed
        callers = [(u, d) for u, _, d in self.e.g.in_edges(fn, data=True)
                   if d.get("kind") in FOLLOWED and self.e.seams.rules.event(d) is None]
        callers += [(u, {"kind": "dispatch", "forwarded": True}) for u in sorted(self.e.seams.links(True).get(fn, ()))]
        out: set[Writer] = set()
        for caller, d in callers if depth < MAX_DEPTH else []:
            a = self.e.g.nodes[caller]
            if a.get("test") and not self.e.include_tests:
                continue
            cpf = self.e.files.get(a["repo"], a["path"])
            if cpf is None:
                continue
            for call, args in self._call_sites(caller, cpf, d, fn):
                if index < len(args):
                    out |= self._trace(caller, cpf, args[index], path, (f"{cpf.path}:{call.start_point[0] + 1}", *via),
                                       depth + 1, seen)
        return out or {self._leaf(pf, read[0], read[1], via)}  # nobody passes it: the parameter read writes it

    def _call_sites(self, caller: str, pf: ParsedFile, d: dict[str, Any], target: str) -> list[tuple[Node, list[Node]]]:
        """The call(s) in `caller` that run `target`, with the arguments its parameters receive."""
        if not d.get("forwarded"):
            call = _call_at(pf, int(d.get("line", 0)), int(d.get("column", 0)) - 1)
            return [(call, _args(call))] if call is not None else []
        # a registry forwarder: `Reflect.apply(x.member, receiver, [a, b])` / `x.member.call(receiver, a, b)`
        member = self.e.g.nodes[target].get("name", "")
        fn_node = self._syntax(caller, pf)
        out = []
        for call in _calls(fn_node) if fn_node is not None else []:
            callee = call.child_by_field_name("function")
            fwd = self.e.seams.rules.forwarder(" ".join(pf.text(callee).split())) if callee is not None else None
            args = _args(call)
            if fwd is None or member not in pf.text(call):
                continue
            array = unwrap(args[fwd.args_array]) if fwd.args_array is not None and fwd.args_array < len(args) else None
            if array is not None and array.type == "array":
                out.append((call, [c for c in array.named_children if c.type != "comment"]))
            elif array is None and fwd.args_from is not None:
                out.append((call, args[fwd.args_from:]))
        return out

    def _syntax(self, fn: str, pf: ParsedFile) -> Node | None:
        a = self.e.g.nodes[fn]
        return pf.function_at(a["line"], a["end_line"])


class _Scope:
    """What `records.type_of` reads of a body walker: the file, the function, the class of its `this`."""

    def __init__(self, pf: ParsedFile, fn: Node, class_node: str | None) -> None:
        self.pf, self.fn = pf, fn
        self.info = type("Info", (), {"class_node": class_node})()


# ---- syntax helpers ------------------------------------------------------------------------------------
def _assignments_at(fn: Node, line: int) -> list[Node]:
    """`a.b = v` expressions of `fn` on `line` (1-based)."""
    out, stack = [], [fn]
    while stack:
        n = stack.pop()
        if n.start_point[0] > line - 1 or n.end_point[0] < line - 1:
            continue
        if n.type == "assignment_expression" and n.start_point[0] == line - 1:
            left = n.child_by_field_name("left")
            if left is not None and left.type == "member_expression":
                out.append(n)
        stack.extend(n.named_children)
    return out


def _object_at(pf: ParsedFile, object_id: str) -> Node | None:
    """The object literal of an index fact (`L<line>C<col>`, both 1-based)."""
    try:
        line, col = (int(x) for x in object_id[1:].split("C"))
    except ValueError:
        return None
    stack = [pf.root]
    while stack:
        n = stack.pop()
        if n.start_point[0] > line - 1 or n.end_point[0] < line - 1:
            continue
        if n.type == "object" and n.start_point[0] == line - 1 and n.start_point[1] in (col - 1, col):
            return n
        stack.extend(n.named_children)
    return None


def _field_values(pf: ParsedFile, obj: Node, name: str) -> list[Node]:
    """The values an object literal gives key `name`: its own pair or shorthand, and those of the objects
    it spreads (`...cond ? {} : { cwd: meta.cwd }`); a spread of something else is a value at that key."""
    out: list[Node] = []
    for c in obj.named_children:
        if c.type == "pair":
            key, value = c.child_by_field_name("key"), c.child_by_field_name("value")
            if key is not None and value is not None and key_text(pf, key) == name:
                out.append(value)
        elif c.type == "shorthand_property_identifier" and pf.text(c) == name:
            out.append(c)
        elif c.type == "spread_element" and c.named_children:
            out += _spread_values(pf, c.named_children[0], name)
    return out


def _spread_values(pf: ParsedFile, node: Node, name: str) -> list[Node]:
    node = unwrap(node)
    if node.type == "object":
        return _field_values(pf, node, name)
    if node.type == "ternary_expression":
        return [v for side in ("consequence", "alternative") if (s := node.child_by_field_name(side)) is not None
                for v in _spread_values(pf, s, name)]
    return []


def _chain(pf: ParsedFile, node: Node) -> tuple[str | None, list[str]]:
    """`options?.meta.cwd` → ("options", ["meta", "cwd"]); a shorthand `{ cwd }` → ("cwd", [])."""
    chain: list[str] = []
    while node.type == "member_expression":
        prop = node.child_by_field_name("property")
        obj = node.child_by_field_name("object")
        if prop is None or obj is None:
            return None, []
        chain.insert(0, pf.text(prop))
        node = unwrap(obj)
    if node.type in ("identifier", "shorthand_property_identifier"):
        return pf.text(node), chain
    return None, []


def _binding(pf: ParsedFile, fn: Node, name: str, use: Node) -> tuple[str, Any, list[str]] | None:
    """What `name` is inside `fn`: ("param", index, member path) or ("local", initialiser, member path)."""
    # the innermost function around the use that declares it (a closure's own parameters first)
    scope = use.parent
    while scope is not None:
        if scope.type in FUNCTION_NODES:
            found = _param(pf, scope, name)
            if found is not None:
                return ("param", found[0], found[1]) if scope == fn else ("local-param", found[0], found[1])
        if scope == fn:
            break
        scope = scope.parent
    for decl in _declarators(fn):
        pattern, value = decl.child_by_field_name("name"), decl.child_by_field_name("value")
        if pattern is None or value is None or decl.start_byte > use.start_byte:
            continue
        if pattern.type == "identifier" and pf.text(pattern) == name:
            return "local", value, []
        if pattern.type == "object_pattern":
            key = _pattern_key(pf, pattern, name)
            if key is not None:
                return "local", value, [key]
    return None


def _param(pf: ParsedFile, fn: Node, name: str) -> tuple[int, list[str]] | None:
    nodes = parameter_nodes(fn)
    for i, p in enumerate(nodes):
        pattern = p.child_by_field_name("pattern") or p
        if pattern.type == "assignment_pattern":
            pattern = pattern.child_by_field_name("left") or pattern
        if pattern.type == "identifier" and pf.text(pattern) == name:
            return i, []
        if pattern.type == "object_pattern":
            key = _pattern_key(pf, pattern, name)
            if key is not None:
                return i, [key]
    return None


def _pattern_key(pf: ParsedFile, pattern: Node, name: str) -> str | None:
    """The key `{ a: b }` / `{ b }` / `{ b = 1 }` binds `name` from."""
    for c in pattern.named_children:
        if c.type == "shorthand_property_identifier_pattern" and pf.text(c) == name:
            return name
        if c.type == "object_assignment_pattern":
            left = c.child_by_field_name("left")
            if left is not None and pf.text(left) == name:
                return name
        if c.type == "pair_pattern":
            key, value = c.child_by_field_name("key"), c.child_by_field_name("value")
            if key is not None and value is not None and pf.text(unwrap(value)) == name:
                return key_text(pf, key)
    return None


def _declarators(fn: Node) -> list[Node]:
    out, stack = [], [fn.child_by_field_name("body")]
    while stack:
        n = stack.pop()
        if n is None or (n.type in FUNCTION_NODES and n != fn):
            continue
        if n.type == "variable_declarator":
            out.append(n)
        stack.extend(n.named_children)
    return out


def _calls(fn: Node) -> list[Node]:
    out, stack = [], [fn]
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            out.append(n)
        stack.extend(n.named_children)
    return out


def _call_at(pf: ParsedFile, line: int, column: int) -> Node | None:
    """The call or `new` at a graph edge's place (the column is the callee's or the expression's start)."""
    best = None
    stack = [pf.root]
    while stack:
        n = stack.pop()
        if n.start_point[0] > line - 1 or n.end_point[0] < line - 1:
            continue
        if n.type in ("call_expression", "new_expression") and n.start_point[0] == line - 1 \
                and (column < 0 or n.start_point[1] == column):
            best = n
        stack.extend(n.named_children)
    return best


def _args(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    return [c for c in (args.named_children if args is not None else []) if c.type != "comment"]
