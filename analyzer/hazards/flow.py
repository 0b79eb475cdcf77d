"""Intra-procedural value flow of one function body, as a summary the call graph can compose.

Parameters start as symbolic origins (`param i`), sources (rules) as concrete ones. Walking the body
in order, every value carries the flows that may reach it — through assignments, returns, template
literals, `+`, object/array literals and spreads, built-in carriers (analyzer/rules/hazards/carriers.toml),
calls resolved by the graph (their summaries, via `FlowContext`) — each flow keeping the steps that
explain it. The summary says which flows reach the return value, which reach a sink, which were
dismissed (logging, timers, stores, unfollowed calls) and which class fields were written.

What a node *means* is not the walker's: whether it is a source, a sink, a barrier (neutraliser,
dismissal) or an extra step (a carrier, a mutator, a count, a hand-over) is asked of `FlowConfiguration`
(`configuration.py`), built from the rule files; the walker knows the language's syntax and its local steps
(bind, read, store, call, return).

The walker is split the way docs/design.md "Splitting a recursive walker" says, into parts it composes and
hands their collaborators: `Hits` (hits.py) records where a flow ends (a sink of this function, a loss) and
`CallSites` (callsites.py) replays a callee's summary at a call. What stays here is the recursion itself —
statements, expressions and calls calling each other over the walk's shared state (the bindings in scope, the
loop orders, the guards, the depth). Everything else lives elsewhere: the questions to the rules in
`configuration.py`, the flow algebra in `taints.py`, syntax helpers in `syntax.py`, seams in `seams.py`,
volatile tests in `control.py`, typed records in `records.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tree_sitter import Node

from analyzer.hazards import control, records
from analyzer.hazards.callsites import CallSites
from analyzer.hazards.configuration import FlowConfiguration
from analyzer.hazards.hits import Hits, Places
from analyzer.hazards.rules import HazardRules, Neutraliser, Source
from analyzer.hazards.syntax import (
    FUNCTION_NODES,
    ParsedFile,
    base_identifier,
    key_text,
    parameter_nodes,
    pattern_names,
    unwrap,
)
from analyzer.hazards.taints import (
    CALLED,
    FLATTEN,
    MAX_PATH,
    Flow,
    Origin,
    Step,
    Summary,
    Taints,
    as_order,
    mapped,
    norm,
    order_apart,
    stepped,
    union,
)


class FlowContext(Protocol):
    rules: HazardRules

    def callees(self, node: str, line: int, column: int, callee: str) -> list[tuple[str, dict[str, Any]]]: ...
    def summary(self, node: str, depth: int) -> Summary | None: ...
    def needed(self, node: str, tainted: bool) -> bool: ...
    def field_flows(self, class_node: str, name: str, depth: int) -> Taints: ...
    def is_container_field(self, class_node: str, name: str) -> bool: ...
    def constructed(self, edges: list[tuple[str, dict[str, Any]]], arg_t: list[Taints], call: Step) -> None: ...
    def through_edge(self, target: str, attrs: dict[str, Any], callee: str, pf: ParsedFile, args: list[Node],
                     arg_t: list[Taints], elements: dict[int, list[Taints]],
                     depth: int) -> list[tuple[Summary | None, dict[int, tuple[int, Taints]], str]]: ...
    def forwarded(self, node: str, class_node: str | None, pf: ParsedFile, call: Node, callee: str,
                  args: list[Node]) -> list[tuple[str, dict[str, Any]]]: ...
    def listener_arg(self, node: str, pf: ParsedFile, call: Node) -> int | None: ...
    def provider_returns(self, node: str, class_node: str | None, pf: ParsedFile, value: Node,
                         depth: int) -> Taints: ...
    def qualname(self, node: str) -> str: ...
    def depend(self, key: tuple[str, str]) -> None: ...
    records: Any  # records.RecordStore

@dataclass
class FunctionInfo:
    node: str  # graph node id
    name: str  # bare name
    qualname: str
    class_node: str | None  # the class whose `this` this is
    is_constructor: bool
    # False for a local function that only shares its name with the one a rule names (localnames.py)
    named_by_rules: bool = True


class FunctionFlow:
    """Walk one function body (closures included) and build its `Summary`."""

    def __init__(self, ctx: FlowContext, pf: ParsedFile, fn: Node, info: FunctionInfo, depth: int,
                 module_names: dict[str, Taints] | None = None) -> None:
        self.ctx, self.pf, self.fn, self.info, self.depth = ctx, pf, fn, info, depth
        self.rules = ctx.rules
        self.config = FlowConfiguration.of(ctx.rules)  # what a node means: source, sink, barrier, extra step
        self.env: dict[str, Taints] = {}
        self.module_names = module_names or {}
        self.containers: set[str] = set()  # local names holding a Map/Set
        self.summary = Summary()
        self.places = Places(pf)  # lines, steps and texts as findings cite them
        self.hits = Hits(self.summary, self.config, self.places, info.node, info.name, info.qualname,
                         info.named_by_rules)
        self.calls = CallSites(ctx, self.config, self.hits, self.summary, pf, depth)  # callee summaries at a call
        self._params: dict[str, int] = {}  # local name → the parameter it is (or a field of)
        self._nesting = 0  # closures entered (their returns are not this function's)
        self._loop_order: list[Taints] = []  # ordering flows of the for…of loops being walked
        self._guards: list[control.Guard] = []  # volatile tests with a return under them (this body)
        self.returned_at: dict[int, Taints] = {}
        self._entries: dict[str, str] = {}  # local names holding an entry that is no message → its segment

    # ---- entry -------------------------------------------------------------------------------------
    def run(self) -> Summary:
        self._bind_params(self.fn, symbolic=True)
        self._params = {name: o.index for name, t in self.env.items() for o in t if o.kind == "param"}
        returns = self._body(self.fn)
        self.summary.returns = union(self.summary.returns, returns)
        self.hits.finish()
        records.commit(self, self.ctx.records)  # the typed record writes it keeps (records.py)
        return self.summary

    def _body(self, fn: Node) -> Taints:
        """Walk a function body; returns the flows reaching its return value."""
        saved = getattr(self, "_ret", None)
        saved_guards, self._guards = self._guards, []
        self._ret: Taints = {}
        body = fn.child_by_field_name("body")
        if body is not None:
            if body.type == "statement_block":
                self._stmt(body)
                chosen = control.guarded_returns(self, fn, self._guards)
                self._returned(chosen, body)
                self._ret = union(self._ret, chosen)
            else:  # concise arrow body
                value = self._eval(body)
                self._returned(value, body)
                self._ret = union(self._ret, stepped(value, self.step(body, "returned")))
        out, self._ret = self._ret, saved if saved is not None else {}
        self._guards = saved_guards
        return out

    # ---- public steps (control.py, records.py and the engine use these) ---------------------------------
    def evaluate(self, node: Node | None) -> Taints:
        """The flows reaching an expression's value, walking it (its calls and sinks) as the body does."""
        return self._eval(node)

    def declare(self, declarator: Node) -> None:
        """Bind a `variable_declarator` (a module-level constant read by this function)."""
        self._declare(declarator)

    def origin(self, src: Source, node: Node) -> Taints:
        """A new flow of source rule `src` at `node` (records.py: a field declared as a per-session id)."""
        return self._origin_flow(src, node)

    def line(self, node: Node) -> int:
        return node.start_point[0] + 1

    def step(self, node: Node, why: str, rule: str = "") -> Step:
        return self.places.step(node, why, rule)

    def text(self, node: Node, limit: int = 80) -> str:
        return self.places.text(node, limit)

    def _origin_flow(self, src: Source, node: Node) -> Taints:
        o = Origin("source", src.name, -1, self.pf.repo, self.pf.path, self.line(node), self.text(node),
                   self.info.node, src.kind)
        return {o: Flow(o, (self.step(node, f"{src.kind} source: {self.text(node, 60)}"),))}

    def _neutralise(self, t: Taints, n: Neutraliser, node: Node) -> Taints:
        step = self.step(node, f"{n.reason} ({n.name})", n.name)
        return {o: replace(f.then(step), neutralisers=(*f.neutralisers, n.name)) for o, f in t.items()}

    def _returned(self, t: Taints, node: Node) -> None:
        if self._nesting == 0:  # (a closure's return is not this function's)
            self.hits.returned(t, node)

    # ---- parameters --------------------------------------------------------------------------------
    def _bind_params(self, fn: Node, symbolic: bool) -> None:
        nodes = parameter_nodes(fn)
        for i, p in enumerate(nodes):
            pattern = p.child_by_field_name("pattern") or p
            default = p.child_by_field_name("value")
            if pattern.type == "assignment_pattern":
                default = pattern.child_by_field_name("right")
                pattern = pattern.child_by_field_name("left") or pattern
            t: Taints = {}
            if symbolic:
                o = Origin("param", "", i, self.pf.repo, self.pf.path, self.line(p), self.text(p, 40),
                           self.info.node)
                t = {o: Flow(o)}
            if default is not None:
                t = union(t, stepped(self._eval(default), self.step(default, "parameter default")))
            self._bind(pattern, t, None)
            if self.info.is_constructor and pattern.type == "identifier" and any(
                    c.type == "accessibility_modifier" or c.type == "readonly" for c in p.children):
                # a parameter property (`constructor(private readonly root: string)`) is a field too
                pname = self.pf.text(pattern)
                self.summary.fields[pname] = union(self.summary.fields.get(pname, {}),
                                                   stepped(t, self.step(p, f"stored in this.{pname}")))

    def _bind(self, pattern: Node | None, t: Taints, step: Step | None) -> None:
        if pattern is None:
            return
        names = [(pattern, None)] if pattern.type == "identifier" else pattern_names(self.pf, pattern)
        for n, key in names:
            name = self.pf.text(n)
            value = mapped(t, ("read", key)) if key else t
            value = stepped(value, Step(step.repo, step.path, step.line, step.why.format(name=name))) if step else value
            self.env[name] = union(self.env.get(name, {}), value) if step is None else value

    # ---- statements --------------------------------------------------------------------------------
    def _stmt(self, node: Node) -> None:
        t = node.type
        if t in ("lexical_declaration", "variable_declaration"):
            for d in node.named_children:
                if d.type == "variable_declarator":
                    self._declare(d)
        elif t == "return_statement" or t == "yield_expression":
            returned = node.named_children[0] if node.named_children else None
            if returned is not None:
                flows = self._eval(returned)
                self.returned_at[node.start_byte] = flows  # what each return carries (control.py)
                self._returned(flows, node)
                self._ret = union(self._ret, stepped(flows, self.step(node, "returned")))
        elif t == "for_in_statement":
            right = node.child_by_field_name("right")
            items = self._iterate(right) if right is not None else {}
            # an element of an ordered list is no ordered value itself (which agent, which file): the order is
            # what the body accumulates (below), so the list's own ordering flows stay off the element
            elements = {o: f for o, f in items.items() if not (self.kind(o) == "ordering" and not f.path)}
            self._bind(node.child_by_field_name("left"), elements, self.step(node, "iterated into {name}"))
            # what the body accumulates (push, +=) comes in this iteration order
            order = {o: g for o, f in items.items() if (g := as_order(f)) is not None}
            params = {o: f for o, f in items.items() if o.kind == "param"}
            order = union(order, order_apart(mapped(params, ("order", ""))))
            self._loop_order.append(stepped(order, self.step(node, "accumulated in this iteration order")))
            try:
                for _ in range(2):  # a second pass lets loop-carried values reach earlier statements
                    self._stmt_child(node.child_by_field_name("body"))
            finally:
                self._loop_order.pop()
        elif t in ("for_statement", "while_statement", "do_statement"):
            for c in node.named_children:
                self._stmt_child(c)
            body = node.child_by_field_name("body")
            self._stmt_child(body)
        elif t == "function_declaration" or t == "generator_function_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                self.env[self.pf.text(name)] = self._closure(node)
        elif t in ("class_declaration", "abstract_class_declaration", "interface_declaration",
                   "type_alias_declaration", "import_statement", "comment", "empty_statement"):
            return
        elif t in ("expression_statement",):
            for c in node.named_children:
                self._eval(c)
        elif t == "if_statement":
            cond = node.child_by_field_name("condition")
            cond_t = self._eval(cond) if cond is not None else {}
            test = control.condition_test(self, cond, cond_t)
            self._branches(node, test, (node.child_by_field_name("consequence"),
                                        node.child_by_field_name("alternative")))
        elif t == "try_statement":
            self._branches(node, control.catch_test(self, node), (node.child_by_field_name("body"),
                                                                  node.child_by_field_name("handler")))
            self._stmt_child(node.child_by_field_name("finalizer"))
        else:  # blocks, try/catch/finally, switch, labels, else, throw, export wrappers…
            for c in node.named_children:
                self._stmt_child(c)

    def _branches(self, node: Node, test: control.Test | None, branches: tuple[Node | None, ...]) -> None:
        """Alternative branches (`if`/`else`, `try`/`catch`), each from the same environment; after them a
        name holds what any branch left in it, and what a volatile test chose (control.py)."""
        before = dict(self.env)
        after = []
        for branch in branches:
            self.env = dict(before)
            self._stmt_child(branch)
            after.append(self.env)
        self.env = control.merged(after)
        if test is not None:
            control.select_assigned(self, test, node, branches, before, after)
            g = control.guard(self, test, node, branches)
            if g is not None and all(o.anchor != node for o in self._guards):
                self._guards.append(g)

    def _stmt_child(self, node: Node | None) -> None:
        if node is None:
            return
        if node.type.endswith(("statement", "declaration", "_block", "clause", "_case", "_default",
                               "switch_body")) or node.type in ("statement_block",):
            self._stmt(node)
        else:
            self._eval(node)

    def _declare(self, d: Node) -> None:
        name = d.child_by_field_name("name")
        value = d.child_by_field_name("value")
        if name is None:
            return
        if value is not None:
            inner = unwrap(value)
            if name.type == "identifier" and self._is_container_expr(inner, d) \
                    and re.search(rf"\b{re.escape(self.pf.text(name))}\s*\.\s*(?:{self.config.fill_pattern})\s*\(",
                                  self.pf.text(self.fn)):
                self.containers.add(self.pf.text(name))  # a Map/Set filled here by registration
            if name.type == "identifier" and inner.type == "object" and self._not_a_message(inner):
                self._entries[self.pf.text(name)] = self._not_a_message(inner) or ""
            t = self._eval(value)
        else:
            t = {}
        label = self.pf.text(name) if name.type == "identifier" else "destructured names"
        self._bind(name, t, self.step(d, "assigned to {name}" if name.type == "identifier"
                                       else f"destructured into {label}"))

    def _is_container_expr(self, value: Node, decl: Node) -> bool:
        if value.type == "new_expression":
            ctor = value.child_by_field_name("constructor")
            return ctor is not None and self.config.is_container_type(self.pf.text(ctor))
        ann = decl.child_by_field_name("type")  # `Map<K, V>`: a generic container type
        return ann is not None and any(re.search(rf"\b{c}\s*<", self.pf.text(ann)) for c in self.config.container_types)

    # ---- expressions -------------------------------------------------------------------------------
    def _eval(self, node: Node | None) -> Taints:
        if node is None:
            return {}
        t = node.type
        if t == "identifier" or t == "shorthand_property_identifier":
            name = self.pf.text(node)
            if name in self.env:
                return self.env[name]
            if name in self.module_names:
                return self.module_names[name]
            src = self.config.identifier_source(name)
            return self._origin_flow(src, node) if src is not None else {}
        if t == "member_expression":
            return self._member(node)
        if t == "subscript_expression":
            src = self._member_source(node)
            if src is not None:
                return self._origin_flow(src, node)
            self._eval(node.child_by_field_name("index"))
            return self._eval(node.child_by_field_name("object"))
        if t == "call_expression":
            return self._call(node)
        if t == "new_expression":
            return self._new(node)
        if t == "template_string":
            parts = [self._eval(s.named_children[0]) for s in node.named_children
                     if s.type == "template_substitution" and s.named_children]
            return stepped(mapped(union(*parts), FLATTEN), self.step(node, "template literal"))
        if t == "binary_expression":
            return self._binary(node)
        if t == "ternary_expression":
            cond = node.child_by_field_name("condition")
            cond_t = self._eval(cond)
            alternatives = [(n, self._eval(n)) for n in (node.child_by_field_name("consequence"),
                                                         node.child_by_field_name("alternative"))]
            test = control.condition_test(self, cond, cond_t)
            chosen = control.chosen(self, test, alternatives, node) if test is not None else {}
            return union(*(a for _, a in alternatives), chosen)
        if t in ("parenthesized_expression", "await_expression", "as_expression", "satisfies_expression",
                 "non_null_expression", "type_assertion", "spread_element"):
            inner = [c for c in node.named_children if not c.type.endswith("type") and c.type != "type_arguments"]
            value = self._eval(inner[0]) if inner else {}
            if t == "spread_element" and inner and self._is_container(inner[0]):
                value = union(value, self._iteration_source(inner[0]))
            return value
        if t == "assignment_expression":
            right = self._eval(node.child_by_field_name("right"))
            self._assign(node.child_by_field_name("left"), right, node, augment=False)
            return right
        if t == "augmented_assignment_expression":
            right = self._eval(node.child_by_field_name("right"))
            left = node.child_by_field_name("left")
            value = union(self._eval(left), right)
            if self._loop_order:
                value = union(value, self._loop_order[-1])
            if self._is_counter_update(node):
                value = union(value, self._counter(node))
            self._assign(left, value, node, augment=True)
            return value
        if t == "update_expression":
            return self._counter(node) if self._is_counter_update(node) else {}
        if t == "object":
            return self._object(node)
        if t == "array":
            parts = [stepped(self._eval(c), self.step(c, "array element")) for c in node.named_children]
            return union(*parts)
        if t in FUNCTION_NODES:
            return self._closure(node)
        if t == "sequence_expression":
            out: Taints = {}
            for c in node.named_children:
                out = self._eval(c)
            return out
        if t == "yield_expression":
            self._stmt(node)
            return {}
        if t in ("string", "number", "true", "false", "null", "undefined", "this", "regex", "comment",
                 "property_identifier", "super", "template_substitution"):
            return {}
        for c in node.named_children:  # unknown shapes (JSX, decorators…): visit for calls and sinks only
            self._eval(c)
        return {}

    def _member(self, node: Node) -> Taints:
        src = self._member_source(node)
        if src is not None:
            return self._origin_flow(src, node)
        obj = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        pname = self.pf.text(prop) if prop is not None else ""
        if obj is not None and obj.type == "this" and self.info.class_node:
            own = self.summary.fields.get(pname, {})  # written earlier in this very method
            return stepped(union(own, self.ctx.field_flows(self.info.class_node, pname, self.depth)),
                           self.step(node, f"read from this.{pname}"))
        value = self._eval(obj)
        if self.config.counts(pname):  # counts do not depend on order
            value = {o: f for o, f in value.items() if self.kind(o) != "ordering"}
        stored = records.read_member(self, self.ctx.records, obj, pname, node) if obj is not None and pname else {}
        return union(mapped(value, ("read", pname)), stored) if pname else value

    def _member_source(self, node: Node) -> Source | None:
        return self.config.member_source(norm(self.pf.text(node)))

    def kind(self, origin: Origin) -> str | None:
        if origin.kind != "source":
            return None
        return self.config.kind(origin.rule)

    def _binary(self, node: Node) -> Taints:
        op_node = node.child_by_field_name("operator")
        op = op_node.type if op_node is not None else ""
        left = self._eval(node.child_by_field_name("left"))
        right = self._eval(node.child_by_field_name("right"))
        both = union(left, right)
        barrier = self.config.operator_barrier(op)
        if barrier is not None:
            return self._neutralise(both, barrier, node)
        if op in ("&&", "||", "??"):
            return union(control.settled_by_fallback(self, op, left, right), right)
        return stepped(mapped(both, FLATTEN),
                       self.step(node, "string concatenation" if op == "+" else f"arithmetic ({op})"))

    def _is_counter_update(self, node: Node) -> bool:
        """`id = ++this.n`, `` `call_${n++}` ``: the value of an update is used (not a bare `i++`)."""
        if node.type != "update_expression" or self.config.counter_source is None:
            return False
        parent = node.parent
        return parent is not None and parent.type not in ("expression_statement", "for_statement",
                                                          "sequence_expression")

    def _counter(self, node: Node) -> Taints:
        src = self.config.counter_source
        return self._origin_flow(src, node) if src is not None else {}

    def _assign(self, left: Node | None, value: Taints, node: Node, augment: bool) -> None:
        if left is None:
            return
        if left.type == "identifier":
            name = self.pf.text(left)
            self.env[name] = union(self.env.get(name, {}) if augment else {},
                                   stepped(value, self.step(node, f"assigned to {name}")))
            return
        if left.type in ("object_pattern", "array_pattern"):
            self._bind(left, value, self.step(node, "destructured into {name}"))
            return
        if left.type in ("member_expression", "subscript_expression"):
            obj = left.child_by_field_name("object")
            prop = left.child_by_field_name("property")
            pname = self.pf.text(prop) if prop is not None else ""
            index = left.child_by_field_name("index")
            if index is not None and index.type == "string":  # `headers["x-affinity"] = v`: a key by name
                pname = self.pf.text(index)[1:-1]
            self.hits.assigned(pname, obj, value, node, left)
            if obj is not None and pname and left.type == "member_expression":
                records.write_member(self, self.ctx.records, obj, pname, value, node)
            if obj is not None and obj.type == "this" and left.type == "member_expression":
                old = self.summary.fields.get(pname, {})
                self.summary.fields[pname] = union(old, stepped(value, self.step(node, f"stored in this.{pname}")))
                return
            base = base_identifier(left)
            if base is not None:  # obj.prop = v: the object now carries v (in field prop)
                name = self.pf.text(base)
                wrapped = value
                if pname and obj == base:
                    wrapped = mapped(value, ("wrap", pname))
                elif pname:  # obj.a.b = v: the object carries v under a.b, not as a whole
                    wrapped = self._wrapped_path(left, base, value)
                self.env[name] = union(self.env.get(name, {}),
                                       stepped(wrapped, self.step(node, f"stored in {self.text(left, 40)}")))

    def _wrapped_path(self, left: Node, base: Node, value: Taints) -> Taints:
        props: list[str] = []
        n: Node | None = left
        while n is not None and n.type == "member_expression" and n != base:
            prop = n.child_by_field_name("property")
            if prop is None:
                return value
            props.append(self.pf.text(prop))
            n = n.child_by_field_name("object")
        if n != base or len(props) > MAX_PATH:
            return value  # a computed key on the way (`a[k].b = v`): the whole object carries v
        for p in props:  # innermost first: `a.b.c = v` is { b: { c: v } }
            value = mapped(value, ("wrap", p))
        return value

    def _object(self, node: Node) -> Taints:
        parts: list[Taints] = []
        written: dict[str, Taints] = {}  # field → flows, for a record-typed literal (records.py)
        for c in node.named_children:
            if c.type == "pair":
                key = c.child_by_field_name("key")
                kname = key_text(self.pf, key)
                value_node = c.child_by_field_name("value")
                v = written[kname] = self._eval(value_node)
                self.hits.property(kname, v, c)
                held = v
                if value_node is not None and unwrap(value_node).type in FUNCTION_NODES:
                    held = mapped(v, ("wrap", CALLED))  # a function kept in a field: its result, once called
                parts.append(stepped(mapped(held, ("wrap", kname)), self.step(c, f"object property {kname}")))
            elif c.type == "shorthand_property_identifier":
                kname = self.pf.text(c)
                v = written[kname] = self._eval(c)
                self.hits.property(kname, v, c)
                parts.append(stepped(mapped(v, ("wrap", kname)), self.step(c, f"object property {kname}")))
            elif c.type == "spread_element":
                parts.append(stepped(self._eval(c), self.step(c, "spread into an object")))
            elif c.type == "method_definition":
                self._closure(c)
        records.write_object(self, self.ctx.records, node, written)
        kept = self._not_a_message(node)
        if kept is not None:  # an entry that never becomes a message (a label): what it holds is no history
            rule = self.config.non_message_rule(kept.removesuffix(" entry")) or ""
            return stepped(mapped(union(*parts), ("wrap", kept)), self.step(node, f"inside a {kept}", rule))
        return union(*parts)

    def _entry_segment(self, value: Node) -> str | None:
        """The no-message segment of a value pushed in a loop (an entry literal, or a local holding one)."""
        inner = unwrap(value)
        if inner.type == "object":
            return self._not_a_message(inner)
        return self._entries.get(self.pf.text(inner)) if inner.type == "identifier" else None

    def _not_a_message(self, node: Node) -> str | None:
        """`{ type: "label", … }` with `label` among the history rule's `not_messages`: the entry's segment
        name (`label entry`), else None."""
        if not self.config.has_non_messages:
            return None
        for c in node.named_children:
            if c.type == "pair" and self.config.entry_type_key(key_text(self.pf, c.child_by_field_name("key"))):
                value = c.child_by_field_name("value")
                literal = self.pf.text(value)[1:-1] if value is not None and value.type == "string" else ""
                if self.config.non_message_rule(literal) is not None:
                    return f"{literal} entry"
        return None

    def _closure(self, node: Node) -> Taints:
        """A function value: its calls and sinks are part of this function (as in the call graph); its
        value is what it returns (so `text: () => \\`…${now}\\`` carries `now`)."""
        saved = dict(self.env)
        self._nesting += 1
        try:
            self._bind_params(node, symbolic=False)
            returns = self._body(node)
        finally:
            self._nesting -= 1
        self.env = {**saved, **{k: v for k, v in self.env.items() if k in saved}}
        return stepped(returns, self.step(node, "returned by a closure"))

    # ---- iteration ---------------------------------------------------------------------------------
    def _is_container(self, node: Node) -> bool:
        node = unwrap(node)
        if node.type == "identifier":
            return self.pf.text(node) in self.containers
        if node.type == "member_expression":
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            if obj is not None and obj.type == "this" and prop is not None and self.info.class_node:
                return self.ctx.is_container_field(self.info.class_node, self.pf.text(prop))
        return False

    def _iteration_source(self, receiver: Node) -> Taints:
        src = self.config.iteration_source
        return self._origin_flow(src, receiver) if src is not None else {}

    def _iterate(self, node: Node) -> Taints:
        value = self._eval(node)
        if self._is_container(node):
            value = union(value, self._iteration_source(node))
        return value

    # ---- calls -------------------------------------------------------------------------------------
    def _call(self, node: Node) -> Taints:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        if fn is None:
            return {}
        callee = norm(self.pf.text(fn))
        args = [a for a in (args_node.named_children if args_node is not None else []) if a.type != "comment"]
        receiver = fn.child_by_field_name("object") if fn.type == "member_expression" else None
        prop = fn.child_by_field_name("property") if fn.type == "member_expression" else None
        method = self.pf.text(prop) if prop is not None else ""
        recv_t = self._eval(receiver) if receiver is not None else {}
        arg_t, elements = self._eval_args(args)
        result: Taints = {}

        src = self._call_source(callee, method)
        if src is not None:
            result = self._origin_flow(src, node)
        if receiver is not None and method in self.config.iterator_methods and self._is_container(receiver):
            result = union(result, self._iteration_source(node))

        dismissed = self._dismiss(callee)
        if dismissed is not None:
            for t in (*arg_t, recv_t):
                self.hits.miss(t, dismissed.name, dismissed.reason, node)
            return result

        self._call_sinks(callee, receiver, method, args, arg_t, node)

        barrier = self.config.call_barrier(method if receiver is not None else None, callee,
                                           lambda: self.pf.text(args_node)[1:-1] if args_node is not None else "")
        if barrier is not None and barrier.on_receiver and receiver is not None:
            neutral = self._neutralise(recv_t, barrier.rule, node)
            if receiver.type == "identifier" and barrier.in_place:
                self.env[self.pf.text(receiver)] = neutral
            return union(result, neutral)
        if barrier is not None:
            return union(result, self._neutralise(union(*arg_t), barrier.rule, node))

        edges = self.ctx.callees(self.info.node, self.line(node), node.start_point[1], callee)
        if not edges:  # a forwarded call the graph has no edge for (`Reflect.apply(this.slot.m, …)`)
            edges = self.ctx.forwarded(self.info.node, self.info.class_node, self.pf, node, callee, args)
        if edges:
            composed = self._compose(edges, arg_t, node, callee, args, elements)
            if fn.type == "identifier" and self.pf.text(fn) in self.env:  # a function value (a parameter
                # such as a listener's `next`): what it holds is what calling it gives, whatever the edge
                composed = union(composed, stepped(self.env[self.pf.text(fn)], self.step(node, f"called {callee}()")))
            return union(result, composed)

        if fn.type == "identifier" and self.pf.text(fn) in self.env:  # calling a local function value
            for t in arg_t:  # its parameters are not followed: the arguments stop here, visibly
                if t:
                    self.hits.miss(t, "not-followed", f"passed to {callee}(), a function value without a "
                               "call-graph edge — not followed", node)
            return union(result, stepped(self.env[self.pf.text(fn)], self.step(node, f"called {callee}()")))
        mutator = self.config.mutator(method) if receiver is not None else None
        if receiver is not None and mutator is not None:
            base = base_identifier(receiver) if receiver.type != "identifier" else receiver
            added = stepped(union(*arg_t), self.step(node, f"added by {self.text(fn, 40)}()", mutator.rule))
            if self._loop_order and mutator.keeps_order:
                order = self._loop_order[-1]
                entry = self._entry_segment(args[0]) if args else None
                if entry:  # an entry that is no message: its order is no order of the messages either
                    rule = self.config.non_message_rule(entry.removesuffix(" entry")) or ""
                    order = stepped(mapped(order, ("wrap", entry)), self.step(node, f"inside a {entry}", rule))
                added = union(added, stepped(order, self.step(node, "added in this iteration order", mutator.rule)))
            holder = receiver.child_by_field_name("object") if receiver.type == "member_expression" else None
            field_node = receiver.child_by_field_name("property") if holder is not None else None
            if holder is not None and holder.type == "this" and field_node is not None:
                pname = self.pf.text(field_node)
                self.summary.fields[pname] = union(self.summary.fields.get(pname, {}), added)
            elif base is not None:
                name = self.pf.text(base)
                self.env[name] = union(self.env.get(name, {}), added)
                self._mutated(name, added)
            return union(result, recv_t)
        carrier = self.config.method_carrier(method) if receiver is not None else None
        if receiver is not None and carrier is not None:
            carried = union(recv_t, *arg_t) if carrier.with_args else recv_t
            if carrier.flattens:
                carried = mapped(carried, FLATTEN)
            rule = carrier.args_rule if any(arg_t) and carrier.with_args else carrier.rule
            return union(result, stepped(carried, self.step(node, f".{method}()", rule)))
        carrier = self.config.call_carrier(self.imported_name(callee))
        if carrier is not None:
            carried = union(*arg_t)
            if carrier.flattens:
                carried = mapped(carried, FLATTEN)
            return union(result, stepped(carried, self.step(node, f"{callee}()", carrier.rule)))
        # an unresolved call: say so, never guess. Parameter flows are cut here too, and the cut is
        # replayed at every call site that passes a volatile value in (so a loss is never silent). An
        # inline listener handed to `on('x/y', …)` is no loss: its emitters run it (analyzer.hazards.seams).
        listener = self.ctx.listener_arg(self.info.node, self.pf, node)
        for i, t in enumerate(arg_t):
            if t and i != listener:
                self.hits.miss(t, "not-followed", f"passed to {callee}() — no call-graph edge, not followed", node)
        return result

    def _eval_args(self, args: list[Node]) -> tuple[list[Taints], dict[int, list[Taints]]]:
        """Each argument's flows, and an array literal's per element (a forwarder spreads it)."""
        arg_t: list[Taints] = []
        elements: dict[int, list[Taints]] = {}
        for i, a in enumerate(args):
            inner = unwrap(a)
            if inner.type == "array" and not any(c.type == "spread_element" for c in inner.named_children):
                elements[i] = [stepped(self._eval(c), self.step(c, "array element"))
                               for c in inner.named_children if c.type != "comment"]
                arg_t.append(union(*elements[i]))
            else:
                arg_t.append(self._eval(a))
        return arg_t, elements

    def _mutated(self, name: str, added: Taints) -> None:
        """A parameter's value gained flows (`payload.lines.push(v)`): the caller's argument gains them."""
        if name in self._params and added and self._nesting == 0:  # (a closure's own names may shadow it)
            i = self._params[name]
            self.summary.mutates[i] = union(self.summary.mutates.get(i, {}),
                                            {o: f for o, f in added.items() if o.kind == "source" or o.index != i})

    def _call_source(self, callee: str, method: str) -> Source | None:
        return self.config.call_source(callee, method, self.pf.imports)

    def imported_name(self, callee: str) -> str:
        """`nodeResolve` for `import { resolve as nodeResolve } from "node:path"` is `resolve` (so the
        carrier rules, which name the exported functions, apply to renamed imports)."""
        exported = self.pf.imported_as.get(callee)
        return exported if exported and exported not in ("*", "default") else callee

    def _dismiss(self, callee: str) -> Any:
        return self.config.dismissal(callee)

    def _call_sinks(self, callee: str, receiver: Node | None, method: str, args: list[Node],
                    arg_t: list[Taints], node: Node) -> None:
        recv_text = norm(self.pf.text(receiver)) if receiver is not None else ""
        bare = callee if receiver is None else method
        for sink in self.config.call_sinks(bare, recv_text if receiver is not None else None):
            if sink.arg >= len(args):
                continue
            if sink.url_arg is not None and (sink.url_arg >= len(args)
                                             or not self.config.url_matches(sink, self.pf.text(args[sink.url_arg]))):
                continue
            value = arg_t[sink.arg]
            arg = unwrap(args[sink.arg])
            if not value and arg.type in ("identifier", "member_expression"):  # a provider named, not written
                value = self.ctx.provider_returns(self.info.node, self.info.class_node, self.pf, arg, self.depth)
            if sink.property is not None and arg.type != "object":
                value = mapped(value, ("read", sink.property))  # an object built elsewhere: its field
            elif sink.property is not None:
                value = {}
                for c in arg.named_children:
                    if c.type == "pair" and key_text(self.pf, c.child_by_field_name("key")) == sink.property:
                        held = c.child_by_field_name("value")
                        value = self._eval(held)
                        if not value and held is not None and unwrap(held).type in ("identifier", "member_expression"):
                            value = self.ctx.provider_returns(self.info.node, self.info.class_node, self.pf,
                                                              unwrap(held), self.depth)
                    elif c.type == "shorthand_property_identifier" and self.pf.text(c) == sink.property:
                        value = self._eval(c)
            position = self.hits.position(sink, args) if value else ()
            for flow in value.values():
                self.hits.sink(flow, sink, sink.part, node, f"argument of {callee}()", position)

    def _compose(self, edges: list[tuple[str, dict[str, Any]]], arg_t: list[Taints], node: Node,
                 callee: str, args: list[Node] | None = None,
                 elements: dict[int, list[Taints]] | None = None) -> Taints:
        """The callees' summaries replayed at this call (`callsites.py`); what a callee added to an argument's
        value (`p.xs.push(v)` in its body) is bound here."""
        out, gained = self.calls.compose(edges, arg_t, node, callee, args or [], elements or {})
        for name, got in gained:
            self.env[name] = union(self.env.get(name, {}), got)
            self._mutated(name, got)
        return out

    def _new(self, node: Node) -> Taints:
        ctor = node.child_by_field_name("constructor")
        args_node = node.child_by_field_name("arguments")
        name = norm(self.pf.text(ctor)) if ctor is not None else ""
        args = [a for a in (args_node.named_children if args_node is not None else []) if a.type != "comment"]
        arg_t, elements = self._eval_args(args)
        src = self.config.new_source(name) if not args else None
        if src is not None:
            return self._origin_flow(src, node)
        dismissed = self._dismiss(name)
        if dismissed is not None:
            for t in arg_t:
                self.hits.miss(t, dismissed.name, dismissed.reason, node)
            return {}
        edges = self.ctx.callees(self.info.node, self.line(node), node.start_point[1], name)
        if edges:  # a constructor the graph knows: its sinks, and the fields it sets from its arguments
            made = self._compose(edges, arg_t, node, f"new {name}", args, elements)
            if any(arg_t):
                self.ctx.constructed(edges, arg_t, self.step(node, f"new {name}()"))
            return made
        carrier = self.config.new_carrier(name)
        if carrier is not None:
            carried = union(*arg_t)
            if carrier.flattens:
                carried = mapped(carried, FLATTEN)
            return stepped(carried, self.step(node, f"new {name}()", carrier.rule))
        for t in arg_t:  # a constructor the graph does not know: its arguments stop here, visibly
            if t:
                self.hits.miss(t, "not-followed", f"passed to new {name}() — no call-graph edge, not followed", node)
        return {}
