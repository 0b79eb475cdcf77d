"""The hazard query's configuration: the one object the body walker asks what a node means.

The walker (`flow.py`) knows the language's local steps (a name is bound, a field read or stored, a call
made, a value returned); what those steps *mean* for the scan is the query's, read from the rule files
(analyzer/rules/hazards/*.toml), the way CodeQL separates a language's flow steps from a configuration's
sources, sinks and barriers. This module answers, for a node the walker describes by its text:

- source: does this call, member read, free identifier, `new`, update or container iteration start a flow
  (sources.toml);
- sink: does this return, object property, call argument or assignment reach a request part (sinks.toml);
- barrier: does this call or operator neutralise a flow, or dismiss it (logging, timers, stores);
- extra step: does the value pass through a built-in (carriers), does a call add its argument to its
  receiver (mutators), does a member count elements, is a call-graph edge a hand-over.

Built once per `HazardRules` (`FlowConfiguration.of`): every question is a dictionary or set lookup or a
glob match on precompiled patterns, since it is asked at every node of every body the scan walks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from analyzer.hazards.rules import (
    Control,
    Dismiss,
    HazardRules,
    Neutraliser,
    Sink,
    Source,
    glob_match,
    glob_regex,
)


@dataclass(frozen=True)
class Carrier:
    """A built-in a value passes through (carriers.toml): what its result holds, and the rule saying so."""
    rule: str  # the carrier rule that makes the receiver's value (or a function's arguments) carry on
    flattens: bool = False  # the result is a plain value: the whole input is visible in it
    with_args: bool = False  # methods: the arguments (a callback's result, a separator) are in it too
    args_rule: str = ""  # the rule that makes the arguments carry on


@dataclass(frozen=True)
class Mutator:
    """A method that adds its arguments to its receiver (mutators in carriers.toml)."""
    rule: str
    keeps_order: bool  # added in the order it is called: inside a loop, in the loop's iteration order


@dataclass(frozen=True)
class CallBarrier:
    """A neutraliser a call matches: on its receiver (`xs.sort()`, maybe in place) or on its arguments."""
    rule: Neutraliser
    on_receiver: bool
    in_place: bool = False  # the receiver's name itself is neutralised (`xs.sort()` sorts `xs`)


@dataclass
class FlowConfiguration:
    """What the hazard rules say about a node; built from `HazardRules` by `FlowConfiguration.of`."""

    rules: HazardRules
    _kinds: dict[str, str] = field(default_factory=dict)
    _heads: frozenset[str] = frozenset()
    _member_prefixes: tuple[str, ...] = ()
    _member_suffixes: tuple[str, ...] = ()
    _dismissed: re.Pattern[str] | None = None  # every [[dismiss]] pattern in one regex (a first test)
    _call_sinks: dict[str, list[Sink]] = field(default_factory=dict)  # method → call-argument sinks
    _identifiers: dict[str, Source] = field(default_factory=dict)
    _new_sources: dict[str, Source] = field(default_factory=dict)
    counter_source: Source | None = None
    iteration_source: Source | None = None
    iterator_methods: frozenset[str] = frozenset()
    container_types: tuple[str, ...] = ()
    fill_pattern: str = "(?!)"
    _method_carriers: dict[str, Carrier] = field(default_factory=dict)
    _call_carriers: dict[str, Carrier] = field(default_factory=dict)
    _new_carriers: dict[str, Carrier] = field(default_factory=dict)
    _mutators: dict[str, Mutator] = field(default_factory=dict)
    _counts: frozenset[str] = frozenset()
    _operator_barriers: dict[str, Neutraliser] = field(default_factory=dict)
    _call_barrier_names: frozenset[str] = frozenset()
    _fallback_operators: frozenset[str] = frozenset()
    _handoffs: frozenset[str] = frozenset()

    @staticmethod
    def of(rules: HazardRules) -> FlowConfiguration:
        """The configuration of `rules`, built once per rules object (the walker is built per function)."""
        if rules._configuration is None:
            rules._configuration = _build(rules)
        built: FlowConfiguration = rules._configuration
        return built

    # ---- sources ---------------------------------------------------------------------------------------
    def kind(self, source_rule: str) -> str:
        """The volatility kind of a source (or control) rule: time, ordering, control…"""
        return self._kinds[source_rule]

    def call_source(self, callee: str, method: str, imports: dict[str, str]) -> Source | None:
        """The source rule a call matches (`Date.now()`, `randomUUID()` imported from a listed module,
        `*.readdirSync`), given the file's imports (local name → module)."""
        head = callee.rsplit(".", 1)[-1]
        if head not in self._heads and method not in self._heads:
            return None  # no rule names this call (the common case: answered by one set lookup)
        for src in self.rules.sources:
            for pat in src.calls:
                p = pat.call
                if p.startswith("*."):
                    if method and method == p[2:]:
                        return src
                elif callee == p:
                    if "." in p or not pat.modules or imports.get(callee) in pat.modules:
                        return src
                elif pat.modules and "." in callee:  # `crypto.randomUUID` with `import * as crypto`
                    first, _, last = callee.rpartition(".")
                    if last == p and imports.get(first) in pat.modules:
                        return src
        return None

    def member_source(self, text: str) -> Source | None:
        """The source rule a member read matches (`process.env.X`, `….header.cwd`), on normalised text."""
        if not (text.startswith(self._member_prefixes) or text.endswith(self._member_suffixes)):
            return None  # no rule can match (one C-level test over all rules; the loop below keeps their order)
        for src in self.rules.sources:
            for m in src.members:
                if m.startswith("*."):
                    if text.endswith(m[1:]):
                        return src
                elif text == m or text.startswith(m + ".") or text.startswith(m + "["):
                    return src
        return None

    def identifier_source(self, name: str) -> Source | None:
        """The source rule a free identifier is (`__dirname`)."""
        return self._identifiers.get(name)

    def new_source(self, constructor: str) -> Source | None:
        """The source rule `new C()` without arguments is (`new Date()`)."""
        return self._new_sources.get(constructor)

    def is_container_type(self, name: str) -> bool:
        """A type whose iteration order is the order its entries were registered in (`Map`, `Set`)."""
        return name in self.container_types

    # ---- sinks -----------------------------------------------------------------------------------------
    def returns_sink(self, name: str, qualname: str) -> Sink | None:
        """The sink a function's return value is (a function rendering the system prompt)."""
        return next((s for s in self.rules.sinks if s.kind == "returns"
                     and (glob_match(name, s.functions) or glob_match(qualname, s.functions))), None)

    def property_sinks(self, name: str, qualname: str) -> list[Sink]:
        """The object-property sinks of object literals written in this function (`{ system: … }`)."""
        return [s for s in self.rules.sinks if s.kind == "property"
                and (glob_match(name, s.functions) or glob_match(qualname, s.functions))]

    @staticmethod
    def property_part(sink: Sink, key: str) -> str | None:
        """The request part an object property `key` lands in under a property sink, if any."""
        return sink.keys.get(key) or next((p for k, p in sink.keys.items() if "*" in k and glob_match(key, (k,))),
                                          None)

    def call_sinks(self, method: str, receiver: str | None) -> list[Sink]:
        """The registration-call sinks a call matches: its method (or bare callee) and receiver text (None for a
        bare call, which only a sink with any receiver takes)."""
        return [s for s in self._call_sinks.get(method, ()) if glob_match(receiver or "*", (s.receiver,))
                and (receiver is not None or s.receiver in ("*", ""))]

    @staticmethod
    def url_matches(sink: Sink, text: str) -> bool:
        """A call-argument sink with `url_arg`: the call's URL argument text is one of the sink's `urls`."""
        return glob_match(text, sink.urls)

    def assignment_sinks(self, prop: str, receiver: str | None) -> list[Sink]:
        """The assignment sinks a write `receiver.prop = …` matches (`state.systemPrompt = …`)."""
        return [s for s in self.rules.sinks if s.kind == "assignment" and prop in s.properties
                and (not s.receivers or (receiver is not None and glob_match(receiver, s.receivers)))]

    # ---- barriers --------------------------------------------------------------------------------------
    def dismissal(self, callee: str) -> Dismiss | None:
        """The [[dismiss]] rule whose calls match: the value is logged, timed, stored… (a near-miss)."""
        if self._dismissed is not None and not self._dismissed.match(callee):
            return None
        return self.rules.dismissal(callee)

    def call_barrier(self, method: str | None, callee: str, args_text: Callable[[], str]) -> CallBarrier | None:
        """The first neutraliser a call matches: a method on a receiver (`method`, None for a bare call), or
        the callee itself; `args_text` gives the call's argument text for rules that test it."""
        if method not in self._call_barrier_names and callee not in self._call_barrier_names:
            return None
        for n in self.rules.neutralisers:
            if method is not None and method in n.methods and _args_match(n, args_text):
                return CallBarrier(n, on_receiver=True, in_place=method in n.in_place)
            if callee in n.calls and _args_match(n, args_text):
                return CallBarrier(n, on_receiver=False)
        return None

    def operator_barrier(self, operator: str) -> Neutraliser | None:
        """The neutraliser a binary operator is (`%`: a value reduced modulo a constant), if any."""
        return self._operator_barriers.get(operator)

    def is_fallback(self, operator: str) -> bool:
        """A `??` / `||` whose volatile right side is its own finding (control.toml [[fallback]])."""
        return operator in self._fallback_operators

    @property
    def controls(self) -> list[Control]:
        return self.rules.controls

    # ---- extra steps -----------------------------------------------------------------------------------
    def method_carrier(self, method: str) -> Carrier | None:
        """`x.method(…)` passes `x` (and, `with_args`, the arguments) on."""
        return self._method_carriers.get(method)

    def call_carrier(self, function: str) -> Carrier | None:
        """`function(…)` (the exported name, for a renamed import) passes its arguments on."""
        return self._call_carriers.get(function)

    def new_carrier(self, constructor: str) -> Carrier | None:
        """`new C(…)` passes its arguments on."""
        return self._new_carriers.get(constructor)

    def mutator(self, method: str) -> Mutator | None:
        """`x.method(v)` adds v to x."""
        return self._mutators.get(method)

    def counts(self, member: str) -> bool:
        """`x.member` counts x's elements: it does not depend on their order."""
        return member in self._counts

    def is_handoff(self, edge_rule: object) -> bool:
        """A call-graph edge (by its rule) that hands a function over instead of calling it now."""
        return edge_rule in self._handoffs

    # ---- entries that are no message ---------------------------------------------------------------------
    def entry_type_key(self, key: str) -> bool:
        """An object key that holds an entry's type (`type`)."""
        return key in self.rules.entry_type_keys

    def non_message_rule(self, type_literal: str) -> str | None:
        """The [[history]] rule naming `type_literal` an entry that never becomes a message (a label)."""
        return self.rules.non_message_types.get(type_literal)

    @property
    def has_non_messages(self) -> bool:
        return bool(self.rules.non_message_types)


def _args_match(n: Neutraliser, args_text: Callable[[], str]) -> bool:
    return n.args is None or bool(n.args.search(args_text().strip()))


def _build(rules: HazardRules) -> FlowConfiguration:
    c = FlowConfiguration(rules)
    c._kinds = {s.name: s.kind for s in reversed(rules.sources)}  # the first rule of a name wins
    c._heads = frozenset(p.call.rsplit(".", 1)[-1] for s in rules.sources for p in s.calls)
    members = [m for s in rules.sources for m in s.members]
    c._member_prefixes = tuple(m for m in members if not m.startswith("*."))
    c._member_suffixes = tuple(m[1:] for m in members if m.startswith("*."))
    patterns = tuple(p for d in rules.dismissals for p in d.calls)
    c._dismissed = glob_regex(patterns) if patterns else None
    for sink in rules.sinks:
        if sink.kind == "call_argument":
            c._call_sinks.setdefault(sink.method, []).append(sink)
    for s in rules.sources:
        for name in s.identifiers:
            c._identifiers.setdefault(name, s)
        for name in s.new:
            c._new_sources.setdefault(name, s)
    c.counter_source = next((s for s in rules.sources if s.updates), None)
    c.iteration_source = next((s for s in rules.sources if s.iterators), None)
    c.iterator_methods = frozenset(i for s in rules.sources for i in s.iterators)
    c.container_types = tuple(sorted({x for s in rules.sources for x in s.containers}))
    c.fill_pattern = rules.fill_pattern
    flattening = {x for r in rules.carriers if r.flattens for x in (*r.methods, *r.calls, *r.new)}
    with_args = {x for r in rules.carriers if r.with_args for x in r.methods}
    for r in rules.carriers:
        for m in r.methods:
            old = c._method_carriers.get(m)
            args_rule = old.args_rule if old is not None and old.args_rule else (r.name if r.with_args else "")
            c._method_carriers[m] = Carrier(old.rule if old is not None else r.name, m in flattening,
                                            m in with_args, args_rule)
        for x in r.calls:
            c._call_carriers.setdefault(x, Carrier(r.name, x in flattening))
        for x in r.new:
            c._new_carriers.setdefault(x, Carrier(r.name, x in flattening))
    c._counts = frozenset(x for r in rules.carriers for x in r.counts)
    ordered = {m for r in rules.mutators if r.keeps_order for m in r.methods}
    for mr in rules.mutators:
        for m in mr.methods:
            c._mutators.setdefault(m, Mutator(mr.name, m in ordered))
    for n in rules.neutralisers:
        for op in n.operators:
            c._operator_barriers.setdefault(op, n)
    c._call_barrier_names = frozenset(x for n in rules.neutralisers for x in (*n.methods, *n.calls))
    c._fallback_operators = frozenset(op for f in rules.fallbacks for op in f.operators)
    c._handoffs = frozenset(rules.handoff_edges)
    return c
