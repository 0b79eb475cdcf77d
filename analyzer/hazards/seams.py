"""How a call's arguments reach the parameters of the function it runs, per edge: the seams.

A direct call maps argument i to parameter i. A seam does not:
- a named event (`emit('x/y', a, b)`, `waterfall(this, 'x/y', a, next)`) hands the listener the arguments
  after the event name, a `waterfall` listener's last parameter is the emitter's last argument (its
  default `next`), and the graph's edge for an inline listener names the function that registers it, so
  the listener is the closure found in that function's body at the registration (`ctx.on('x/y', …)`);
- a forwarder (`Reflect.apply(fn, self, [a, b])`, `fn.call(self, a)`) passes the elements of an array, or
  the arguments after `this`;
- a registry (`setFactory(f)`) stores a value its class later calls through a lookup the graph cannot
  resolve: a forwarded call inside that class reaches the member of every value registered.

What counts is data: the graph's own [[event]] rules (the rules that made the edge) and the scan's
[[forwarder]] and [[registry]] tables (analyzer/rules/hazards/seams.toml). This module derives the
mapping from them; it adds no edge to the graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from tree_sitter import Node

from analyzer.hazards.flow import FlowContext, FunctionFlow, FunctionInfo
from analyzer.hazards.rules import glob_match
from analyzer.hazards.syntax import FUNCTION_NODES, ParsedFile, parameter_nodes, unwrap
from analyzer.hazards.taints import Step, Summary, Taints, norm
from analyzer.rules.files import read_rule_files

if TYPE_CHECKING:
    import networkx as nx

    from analyzer.hazards.syntax import SourceFiles


class Engine(FlowContext, Protocol):
    """What the seams read of the engine (`analyzer.hazards.driver.Engine`), without importing it."""

    g: nx.MultiDiGraph
    files: SourceFiles
    max_depth: int

    @property
    def kinds(self) -> frozenset[str]: ...
    def innermost(self, repo: str, path: str, line: int) -> str | None: ...
    def _members(self, class_node: str) -> list[str]: ...
    def _file_functions(self, repo: str, path: str) -> list[tuple[int, int, str]]: ...
    def _module_names(self, pf: ParsedFile) -> dict[str, Taints]: ...
    def shadowing(self) -> set[str]: ...

# parameter index → (the call's argument index it comes from, the flows it carries)
Params = dict[int, tuple[int, Taints]]


@dataclass(frozen=True)
class EventRule:
    name: str
    emit: frozenset[str]
    listen: frozenset[str]
    next_methods: frozenset[str]
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Forwarder:
    name: str
    calls: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    function_arg: int | None = None  # None: the function is the receiver
    args_array: int | None = None
    args_from: int | None = None


@dataclass(frozen=True)
class RegistryRule:
    name: str
    methods: tuple[str, ...]
    arg: int = 0


@dataclass(frozen=True)
class SeamRules:
    events: tuple[EventRule, ...]
    forwarders: tuple[Forwarder, ...]
    registries: tuple[RegistryRule, ...]

    def event(self, attrs: dict[str, Any]) -> EventRule | None:
        if not str(attrs.get("seam") or "").startswith("event:"):
            return None
        return next((e for e in self.events if e.name == attrs.get("rule")), None)

    def forwarder(self, callee: str) -> Forwarder | None:
        method = callee.rsplit(".", 1)[-1]
        for f in self.forwarders:
            if callee in f.calls or ("." in callee and method in f.methods):
                return f
        return None


@cache
def load_seam_rules() -> SeamRules:
    """The graph's [[event]] rules and the scan's [[forwarder]]/[[registry]] tables."""
    from analyzer.rules import typescript

    events = []
    graph_files, _ = read_rule_files("analyzer.rules", skip=[typescript.FILE])
    for rf in graph_files:
        for e in rf.data.get("event", []):
            events.append(EventRule(str(e["name"]), frozenset(e.get("emit_methods", ())),
                                    frozenset(e.get("listen_methods", ())), frozenset(e.get("next_methods", ())),
                                    re.compile(e.get("name_pattern", r".+"))))
    forwarders, registries = [], []
    hazard_files, _ = read_rule_files("analyzer.rules.hazards", what="hazard rule file")
    for rf in hazard_files:
        for e in rf.data.get("forwarder", []):
            forwarders.append(Forwarder(str(e["name"]), tuple(e.get("calls", ())), tuple(e.get("methods", ())),
                                        e.get("function_arg"), e.get("args_array"), e.get("args_from")))
        for e in rf.data.get("registry", []):
            registries.append(RegistryRule(str(e["name"]), tuple(e["methods"]), int(e.get("arg", 0))))
    return SeamRules(tuple(events), tuple(forwarders), tuple(registries))


def identity(arg_t: list[Taints]) -> Params:
    return {i: (i, t) for i, t in enumerate(arg_t)}


def event_params(rule: EventRule, method: str, event: str, pf: ParsedFile, args: list[Node],
                 arg_t: list[Taints], arity: int) -> Params:
    """The listener's parameters from the emitter's arguments: those after the event name; with a `next`
    emitter, the last argument is the listener's last parameter."""
    at = next((i for i, a in enumerate(args) if a.type == "string" and pf.text(a)[1:-1] == event), None)
    if at is None:
        return identity(arg_t)
    payload = list(range(at + 1, len(args)))
    out: Params = {}
    if method in rule.next_methods and payload and arity > 0:
        last = payload.pop()
        out[arity - 1] = (last, arg_t[last])
        payload = payload[:arity - 1]
    for j, a in enumerate(payload):
        out.setdefault(j, (a, arg_t[a]))
    return out


def forward_params(fwd: Forwarder, args: list[Node], arg_t: list[Taints],
                   elements: dict[int, list[Taints]]) -> Params:
    """The forwarded function's parameters: an array literal's elements (any other array value reaches
    every parameter), or the arguments after `this`."""
    if fwd.args_from is not None:
        return {j: (a, arg_t[a]) for j, a in enumerate(range(fwd.args_from, len(args)))}
    if fwd.args_array is None or fwd.args_array >= len(args):
        return {}
    a = fwd.args_array
    if a not in elements:
        return {j: (a, arg_t[a]) for j in range(MAX_SPREAD)}
    return {j: (a, t) for j, t in enumerate(elements[a])}


MAX_SPREAD = 8  # parameters an array value of unknown length may reach


class Seams:
    """The engine's view of the seams: listener closures, forwarded calls, registered values."""

    def __init__(self, engine: Engine) -> None:
        self.e = engine
        self.rules = load_seam_rules()
        self._listeners: dict[tuple[str, str], list[tuple[ParsedFile, Node]]] = {}
        self._closures: dict[str, tuple[Summary, int]] = {}  # key → (summary, the depth it was made at)
        self._busy: set[str] = set()
        self._registered: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
        self._links: tuple[dict[str, set[str]], dict[str, set[str]]] | None = None

    # ---- named events ------------------------------------------------------------------------------
    def listeners(self, target: str, event: str, rule: EventRule) -> list[tuple[ParsedFile, Node]]:
        """Inline listeners of `event` registered in `target`'s body (empty: `target` is the listener)."""
        key = (target, event)
        if key in self._listeners:
            return self._listeners[key]
        found: list[tuple[ParsedFile, Node]] = []
        a = self.e.g.nodes.get(target, {})
        pf = self.e.files.get(a["repo"], a["path"]) if a else None
        fn = pf.function_at(a["line"], a["end_line"]) if pf is not None else None
        if pf is not None and fn is not None:
            stack = [fn]
            while stack:
                n = stack.pop()
                if n.type == "call_expression":
                    handler = _listener(pf, n, event, rule)
                    if handler is not None:
                        found.append((pf, handler))
                stack.extend(n.named_children)
        found.sort(key=lambda x: x[1].start_byte)
        self._listeners[key] = found
        return found

    def closure_summary(self, target: str, pf: ParsedFile, closure: Node, depth: int) -> Summary | None:
        """The summary of an inline function (its parameters symbolic); its calls are `target`'s edges."""
        key = f"{target}@{closure.start_point[0] + 1}:{closure.start_point[1]}"
        cached = self._closures.get(key)
        # made deeper and cut by the depth bound there: made again from here (as the engine does)
        if cached is not None and (not cached[0].truncated or cached[1] <= depth or key in self._busy):
            return cached[0]
        if depth > self.e.max_depth:
            return None
        if key in self._busy:
            return Summary()
        a = self.e.g.nodes[target]
        parent = a.get("parent")
        class_node = parent if parent and self.e.g.nodes.get(parent, {}).get("kind") == "class" else None
        info = FunctionInfo(target, a.get("name", ""), a.get("qualname", ""), class_node, False,
                            target not in self.e.shadowing())
        self._busy.add(key)
        try:
            result = FunctionFlow(self.e, pf, closure, info, depth, module_names=self.e._module_names(pf)).run()
        finally:
            self._busy.discard(key)
        self._closures[key] = (result, depth)
        return result

    def listener_returns_source(self, node: str) -> bool:
        """Does an inline listener registered in `node` return a volatile value, or add one to what it is
        handed (its emitters matter)?"""
        for _, _, d in self.e.g.in_edges(node, data=True):
            rule = self.rules.event(d)
            if rule is None:
                continue
            for pf, closure in self.listeners(node, str(d["seam"])[len("event:"):], rule):
                summ = self.closure_summary(node, pf, closure, 0)
                if summ is not None and any(o.kind == "source" for t in (summ.returns, *summ.mutates.values())
                                            for o in t):
                    return True
        return False

    def through(self, target: str, attrs: dict[str, Any], callee: str, pf: ParsedFile, args: list[Node],
                arg_t: list[Taints], elements: dict[int, list[Taints]],
                depth: int) -> list[tuple[Summary | None, Params, str]]:
        """(summary, parameter map, what ran) for each function this edge runs."""
        rule = self.rules.event(attrs)
        if rule is not None:
            event = str(attrs["seam"])[len("event:"):]
            method = callee.rsplit(".", 1)[-1]
            inline = self.listeners(target, event, rule)
            out: list[tuple[Summary | None, Params, str]] = []
            for lpf, closure in inline:
                summ = self.closure_summary(target, lpf, closure, depth)
                out.append((summ, event_params(rule, method, event, pf, args, arg_t, _arity(closure)),
                            f"listener of {event!r} at {lpf.path}:{closure.start_point[0] + 1}"))
            if inline:
                return out
            summ = self.e.summary(target, depth)
            return [(summ, event_params(rule, method, event, pf, args, arg_t, _target_arity(self.e, target)),
                     f"listener of {event!r}")]
        fwd = self.rules.forwarder(callee)
        name = self.e.g.nodes.get(target, {}).get("name", "")
        if fwd is not None and (attrs.get("forwarded") or name not in fwd.methods):
            return [(self.e.summary(target, depth), forward_params(fwd, args, arg_t, elements),
                     f"forwarded by {fwd.name}")]
        return [(self.e.summary(target, depth), identity(arg_t), "")]

    def listener_arg(self, node: str, pf: ParsedFile, call: Node) -> int | None:
        """The argument of a listener registration (`ctx.on('x/y', (…) => …)`) in `node` that is the inline
        listener, when an emitter of that event has an edge to `node`: the emitter runs it, so what it
        returns is followed from there (with no emitter in the graph it stays a cut flow)."""
        for rule in self.rules.events:
            fn = call.child_by_field_name("function")
            prop = fn.child_by_field_name("property") if fn is not None and fn.type == "member_expression" else None
            if prop is None or pf.text(prop) not in rule.listen:
                continue
            args_node = call.child_by_field_name("arguments")
            args = [c for c in (args_node.named_children if args_node is not None else []) if c.type != "comment"]
            at = next((i for i, a in enumerate(args) if a.type == "string"), None)
            event = pf.text(args[at])[1:-1] if at is not None else ""
            if at is None or not rule.pattern.match(event) or node not in self.e.g:
                continue
            if not any(d.get("seam") == f"event:{event}" and d.get("rule") == rule.name
                       for _, _, d in self.e.g.in_edges(node, data=True)):
                continue
            return next((i for i in range(at + 1, len(args)) if unwrap(args[i]).type in FUNCTION_NODES), None)
        return None

    def provider_returns(self, class_node: str | None, pf: ParsedFile, value: Node, depth: int) -> Taints:
        """A provider registered by name (`variable('now', renderNow)`, `tools(this.schemas)`) runs at every
        assembly: what it returns (its volatile values) is what the registration gives."""
        name = ""
        target = None
        if value.type == "identifier":
            name = pf.text(value)
            target = next((n for _, _, n in self.e._file_functions(pf.repo, pf.path)
                           if self.e.g.nodes[n].get("qualname") == name), None)
        elif value.type == "member_expression" and class_node is not None:
            obj, prop = value.child_by_field_name("object"), value.child_by_field_name("property")
            if obj is not None and obj.type == "this" and prop is not None:
                name = pf.text(prop)
                target = next((m for m in self.e._members(class_node) if self.e.g.nodes[m].get("name") == name), None)
        if target is None:
            return {}
        summ = self.e.summary(target, depth + 1)
        if summ is None:
            return {}
        step = Step(pf.repo, pf.path, value.start_point[0] + 1,
                    f"returned by provider {self.e.qualname(target)}, run at every assembly")
        return {o: f.then(step) for o, f in summ.returns.items() if o.kind == "source"}

    def referencers(self, node: str) -> list[str]:
        """Functions of `node`'s file that name it as a value (`variable('now', renderNow)`,
        `text: this.render`) without calling it: they may register it as a provider."""
        a = self.e.g.nodes[node]
        name = a.get("name", "")
        pf = self.e.files.get(a["repo"], a["path"])
        if pf is None or not name or not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            return []
        text = pf.source.decode("utf-8", errors="replace")
        out: set[str] = set()
        for m in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])(?!\s*[(<:])", text):
            before = text[max(0, m.start() - 6):m.start()]
            if a.get("parent") and not before.endswith("this."):
                continue  # a method is named through `this.`
            if re.search(r"(function|class|interface|type|\.)\s*$", before) and not before.endswith("this."):
                continue  # its declaration, or a member of something else
            line = text.count("\n", 0, m.start()) + 1
            user = self.e.innermost(a["repo"], a["path"], line)
            if user is not None and user != node:
                out.add(user)
        return sorted(out)

    # ---- forwarders and registries -----------------------------------------------------------------
    def forwarded(self, node: str, class_node: str | None, pf: ParsedFile, call: Node, callee: str,
                  args: list[Node]) -> list[tuple[str, dict[str, Any]]]:
        """Edges for a forwarded call the graph has none for: `Reflect.apply(this.slot.m, …)` inside a
        registry's class reaches `m` of every value registered with it."""
        fwd = self.rules.forwarder(callee)
        if fwd is None or class_node is None:
            return []
        if fwd.function_arg is not None:
            fn = unwrap(args[fwd.function_arg]) if fwd.function_arg < len(args) else None
        else:
            callee_node = call.child_by_field_name("function")
            fn = callee_node.child_by_field_name("object") if callee_node is not None else None
        if fn is None or fn.type != "member_expression":
            return []
        prop = fn.child_by_field_name("property")
        member = pf.text(prop) if prop is not None else ""
        out = []
        for target, rule, where in self.registered(class_node, member):
            out.append((target, {"kind": "dispatch", "rule": rule, "possible": True, "forwarded": True,
                                 "evidence": (where,)}))
        return out

    def registered(self, class_node: str, member: str) -> list[tuple[str, str, str]]:
        """Member `member` of every value registered with one of `class_node`'s registering methods."""
        key = (class_node, member)
        if key in self._registered:
            return self._registered[key]
        out: list[tuple[str, str, str]] = []
        for method in self.e._members(class_node):
            name = self.e.g.nodes[method].get("name", "")
            rule = next((r for r in self.rules.registries if glob_match(name, r.methods)), None)
            if rule is None:
                continue
            for caller, _, d in self.e.g.in_edges(method, data=True):
                if d.get("kind") not in self.e.kinds:
                    continue
                for cls in self._registered_classes(caller, d, rule):
                    for m in self.e._members(cls):
                        if self.e.g.nodes[m].get("name") == member and all(m != x[0] for x in out):
                            out.append((m, rule.name, f"{d.get('path')}:{d.get('line')}: {d.get('call_text')}(…) "
                                                      f"registers {self.e.qualname(cls)}"))
        self._registered[key] = out
        return out

    def links(self, backwards: bool) -> dict[str, set[str]]:
        """Registry seams as adjacency for the engine's region walks (no graph edge stands for them): each
        member of a registry's class may run every member of each class registered with it."""
        if self._links is None:
            forward: dict[str, set[str]] = {}
            for cls in sorted({a.get("parent") for n, a in self.e.g.nodes(data=True)
                               if a.get("parent") and any(glob_match(a.get("name", ""), r.methods)
                                                          for r in self.rules.registries)}):
                members = self.e._members(str(cls))
                for method in members:
                    name = self.e.g.nodes[method].get("name", "")
                    rule = next((r for r in self.rules.registries if glob_match(name, r.methods)), None)
                    if rule is None:
                        continue
                    for caller, _, d in self.e.g.in_edges(method, data=True):
                        if d.get("kind") in self.e.kinds:
                            for registered in self._registered_classes(caller, d, rule):
                                for m in members:
                                    forward.setdefault(m, set()).update(self.e._members(registered))
            backward: dict[str, set[str]] = {}
            for u, vs in forward.items():
                for v in vs:
                    backward.setdefault(v, set()).add(u)
            self._links = (forward, backward)
        return self._links[1] if backwards else self._links[0]

    def _registered_classes(self, caller: str, d: dict[str, Any], rule: RegistryRule) -> list[str]:
        a = self.e.g.nodes[caller]
        pf = self.e.files.get(a["repo"], a["path"])
        if pf is None:
            return []
        call = _call_at(pf, int(d.get("line", 0)), int(d.get("column", 0)) - 1)  # the graph's columns are 1-based
        args_node = call.child_by_field_name("arguments") if call is not None else None
        args = [c for c in (args_node.named_children if args_node is not None else []) if c.type != "comment"]
        if rule.arg >= len(args):
            return []
        value = unwrap(args[rule.arg])
        if value.type == "this":
            parent = a.get("parent")
            return [parent] if parent and self.e.g.nodes.get(parent, {}).get("kind") == "class" else []
        if value.type == "new_expression":
            ctor = value.child_by_field_name("constructor")
            text = norm(pf.text(ctor)) if ctor is not None else ""
            line, col = value.start_point[0] + 1, value.start_point[1] + 1
            out = []
            for v, e in self.e.callees(caller, line, col, text):
                parent = self.e.g.nodes[v].get("parent")
                if e and parent:
                    out.append(parent)
            return out
        return []


def _listener(pf: ParsedFile, call: Node, event: str, rule: EventRule) -> Node | None:
    fn = call.child_by_field_name("function")
    if fn is None or fn.type != "member_expression":
        return None
    prop = fn.child_by_field_name("property")
    if prop is None or pf.text(prop) not in rule.listen:
        return None
    args_node = call.child_by_field_name("arguments")
    args = [c for c in (args_node.named_children if args_node is not None else []) if c.type != "comment"]
    at = next((i for i, a in enumerate(args) if a.type == "string"), None)
    if at is None or pf.text(args[at])[1:-1] != event:
        return None
    handler = next((unwrap(a) for a in args[at + 1:] if unwrap(a).type in FUNCTION_NODES), None)
    return handler


def _arity(fn: Node) -> int:
    return len(parameter_nodes(fn))


def _target_arity(engine: Engine, target: str) -> int:
    a = engine.g.nodes.get(target, {})
    pf = engine.files.get(a["repo"], a["path"]) if a else None
    fn = pf.function_at(a["line"], a["end_line"]) if pf is not None else None
    return _arity(fn) if fn is not None else -1


def _call_at(pf: ParsedFile, line: int, column: int) -> Node | None:
    stack = [pf.root]
    best = None
    while stack:
        n = stack.pop()
        if n.start_point[0] > line - 1 or n.end_point[0] < line - 1:
            continue
        if n.type == "call_expression" and n.start_point[0] == line - 1 and (column < 0 or n.start_point[1] == column):
            best = n
        stack.extend(n.named_children)
    return best
