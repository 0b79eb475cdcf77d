"""Where a flow ends in one function body: a sink it reaches (a hit) or a place it is lost (a near-miss).

A part composed by the body walker (`flow.FunctionFlow`, see docs/design.md "Splitting a recursive
walker"): the walker decides *when* a value reaches a node; this part records *that* it did, with the step
and the site a finding cites. It owns the function's own sinks as the configuration names them (its return
value, the object properties it writes) and the tables that keep one loss per origin and place, and it
appends to the summary's `sinks` and `misses` (nothing else does, but for the callee hits the walker
replays at a call site through `sink_hit` and `add_miss`).

A sink is kept once per flow shape and site, with its shortest chain (the one a finding shows). Without
that, every call of a callee replays all the callee's sinks, and a caller several calls up holds the same
hit once per path: a million copies in one summary of a real repo, and a scan that ran out of memory.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from tree_sitter import Node

from analyzer.hazards.configuration import FlowConfiguration
from analyzer.hazards.rules import Sink
from analyzer.hazards.syntax import ParsedFile, key_text, module_string, unwrap
from analyzer.hazards.taints import Flow, Hit, Site, Step, Summary, Taints, norm

MAX_PARAM_MISSES = 6  # places a parameter's flow is recorded as lost, per function
_WS = re.compile(r"\s+")


class Places:
    """Lines, steps and short texts of one file's nodes, as findings cite them."""

    def __init__(self, pf: ParsedFile) -> None:
        self.pf = pf

    @staticmethod
    def line(node: Node) -> int:
        return node.start_point[0] + 1

    def step(self, node: Node, why: str, rule: str = "") -> Step:
        return Step(self.pf.repo, self.pf.path, node.start_point[0] + 1, why, rule)

    def text(self, node: Node, limit: int = 80) -> str:
        t = _WS.sub(" ", self.pf.text(node)).strip()
        return t if len(t) <= limit else t[: limit - 1] + "…"


class Hits:
    """The sink hits and losses of one function's summary."""

    def __init__(self, summary: Summary, config: FlowConfiguration, places: Places, function: str, name: str,
                 qualname: str, named_by_rules: bool = True) -> None:
        self.summary, self.config, self.places, self.pf = summary, config, places, places.pf
        self.function, self.qualname = function, qualname
        # a function whose name a sink rule names has its sinks, unless it only shares that name (a local
        # function of the same name); a property sink of every function (`in_functions = ["*"]`) still applies
        self.returns_sink = config.returns_sink(name, qualname) if named_by_rules else None
        self.property_sinks = [s for s in config.property_sinks(name, qualname) if named_by_rules or "*" in s.functions]
        self._miss_keys: set[tuple[Any, ...]] = set()
        self._sinks: dict[tuple[Any, ...], Hit] = {}  # one per flow shape and site, in the order found
        self._param_misses: dict[int, int] = {}

    # ---- sinks ---------------------------------------------------------------------------------------
    def site(self, rule: str, part: str, node: Node) -> Site:
        return Site(rule, part, self.pf.repo, self.pf.path, self.places.line(node), self.places.text(node),
                    self.function)

    def sink(self, flow: Flow, sink: Sink, part: str, node: Node, what: str,
             position: tuple[tuple[str, str], ...] = ()) -> None:
        site = replace(self.site(sink.name, part, node), position=position)
        self.sink_hit(Hit(flow.then(self.places.step(node, f"{what} → {part} ({sink.name})")), site))

    def sink_hit(self, hit: Hit) -> None:
        """A hit (this body's own, or a callee's met here by what a call passes in), kept once per flow shape
        and site: a strictly shorter chain replaces the one kept and takes its place in the order found, so
        what is kept is the first of the shortest chains, the one model.py would pick among all copies (chains
        cut at MAX_STEPS are the exception: two cut chains tie there, and the kept one was shorter uncut)."""
        f = hit.flow
        key = (f.origin, f.neutralisers, f.possible, f.path, f.ops, hit.site)
        kept = self._sinks.get(key)
        if kept is None:
            self._sinks[key] = hit
        elif len(f.steps) < len(kept.flow.steps):
            del self._sinks[key]
            self._sinks[key] = hit

    def finish(self) -> None:
        """Write the kept sinks into the summary (once the body has been walked)."""
        self.summary.sinks = list(self._sinks.values())

    def returned(self, t: Taints, node: Node) -> None:
        """The function's own return value (not a closure's): a sink when the rules name the function."""
        if self.returns_sink is not None:
            for flow in t.values():
                self.sink(flow, self.returns_sink, self.returns_sink.part, node, f"returned by {self.qualname}")

    def property(self, key: str, value: Taints, node: Node) -> None:
        """An object property written in this function (`{ system: … }` in a request builder)."""
        if not value:
            return
        for sink in self.property_sinks:
            part = self.config.property_part(sink, key)
            if part is not None:
                for flow in value.values():
                    self.sink(flow, sink, part, node, f"property {key}")

    def assigned(self, prop: str, receiver: Node | None, value: Taints, node: Node, left: Node) -> None:
        """A write `receiver.prop = value` (`state.systemPrompt = …`)."""
        for sink in self.config.assignment_sinks(prop, norm(self.pf.text(receiver)) if receiver is not None else None):
            for flow in value.values():
                self.sink(flow, sink, sink.part, node, f"assigned to {self.places.text(left, 40)}")

    def position(self, sink: Sink, args: list[Node]) -> tuple[tuple[str, str], ...]:
        """The entry's name and order as the registration call states them (literals only)."""
        out: list[tuple[str, str]] = []
        if sink.name_arg is not None and sink.name_arg < len(args) and args[sink.name_arg].type == "string":
            out.append(("name", self.pf.text(args[sink.name_arg])[1:-1]))
        arg = unwrap(args[sink.arg]) if sink.arg < len(args) else None
        if sink.position and arg is not None and arg.type == "object":
            for c in arg.named_children:
                key = key_text(self.pf, c.child_by_field_name("key")) if c.type == "pair" else ""
                value = c.child_by_field_name("value") if c.type == "pair" else None
                if key in sink.position and value is not None and len(self.pf.text(value)) <= 60:
                    text = self.pf.text(value)
                    literal = module_string(self.pf, text) if value.type == "identifier" else None
                    out.append((key, text[1:-1] if value.type == "string" else literal or text))
        return tuple(out)

    # ---- losses --------------------------------------------------------------------------------------
    def miss(self, t: Taints, rule: str, reason: str, node: Node) -> None:
        """The flows `t` stop here: dismissed by `rule` (logging, a store…) or cut (not followed, depth)."""
        site = self.site(rule, reason, node)
        for flow in t.values():
            self.add_miss(Hit(flow, site))

    def add_miss(self, hit: Hit) -> None:
        """One miss per origin and place; parameter misses are capped per parameter, since each is
        replayed at every call site (the first few places say enough about where a value is lost)."""
        o = hit.flow.origin
        key = (o, hit.site.rule, hit.site.repo, hit.site.path, hit.site.line)
        if key in self._miss_keys:
            return
        if o.kind == "param":
            n = self._param_misses.get(o.index, 0)
            if n >= MAX_PARAM_MISSES:
                return
            self._param_misses[o.index] = n + 1
        self._miss_keys.add(key)
        self.summary.misses.append(hit)
