"""Load the hazard rules (sources, neutralisers, sinks, dismissals, structural patterns) from TOML.

The rule files are data beside the dispatch rules (`analyzer/rules/hazards/`); this module only
validates their shape so a malformed file is one `error:` line, never a traceback.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.rules.files import read_rule_files

KINDS = ("time", "random", "environment", "filesystem", "ordering", "counter", "locale")
PARTS = ("system prompt", "tool definitions", "message history", "runtime context", "cache key")


@dataclass(frozen=True)
class CallPattern:
    call: str  # `Date.now`, `*.toLocaleString`, bare `randomUUID`
    modules: tuple[str, ...] = ()  # a bare name counts only when imported from one of these


@dataclass
class Source:
    name: str
    kind: str
    granularity: str
    neutralised: str
    calls: list[CallPattern] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    iterators: list[str] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)
    updates: bool = False
    identifiers: list[str] = field(default_factory=list)


@dataclass
class Neutraliser:
    name: str
    applies_to: tuple[str, ...]
    reason: str
    methods: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    operators: tuple[str, ...] = ()
    args: re.Pattern[str] | None = None
    scope: str | None = None  # constructor | module: values computed once


@dataclass
class Sink:
    name: str
    kind: str  # returns | property | call_argument | assignment
    part: str = ""
    functions: tuple[str, ...] = ()
    keys: dict[str, str] = field(default_factory=dict)
    receiver: str = "*"
    method: str = ""
    arg: int = 0
    property: str | None = None
    properties: tuple[str, ...] = ()
    receivers: tuple[str, ...] = ()


@dataclass
class Dismiss:
    name: str
    reason: str
    calls: tuple[str, ...]


@dataclass
class Structural:
    name: str
    kind: str  # rewrite | runtime_tools
    description: str
    receivers: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    index_assignment: bool = False
    in_functions: tuple[str, ...] = ()


@dataclass
class HazardRules:
    sources: list[Source] = field(default_factory=list)
    neutralisers: list[Neutraliser] = field(default_factory=list)
    sinks: list[Sink] = field(default_factory=list)
    dismissals: list[Dismiss] = field(default_factory=list)
    structural: list[Structural] = field(default_factory=list)
    carry_methods: set[str] = field(default_factory=set)
    carry_with_args: set[str] = field(default_factory=set)
    carry_calls: set[str] = field(default_factory=set)
    carry_new: set[str] = field(default_factory=set)
    mutators: set[str] = field(default_factory=set)
    flattening: set[str] = field(default_factory=set)  # carriers whose result is a plain value
    wire_fields: dict[str, set[str]] = field(default_factory=dict)  # request part → serialised fields
    files: list[str] = field(default_factory=list)
    text_hash: str = ""
    _heads: frozenset[str] | None = None

    def source(self, name: str) -> Source:
        return next(s for s in self.sources if s.name == name)

    @property
    def call_heads(self) -> frozenset[str]:
        """The last name of every source call pattern (a cheap pre-check before matching)."""
        if self._heads is None:
            self._heads = frozenset(c.call.rsplit(".", 1)[-1] for s in self.sources for c in s.calls)
        return self._heads

    def scoped(self, scope: str) -> Neutraliser | None:
        return next((n for n in self.neutralisers if n.scope == scope), None)


def glob_match(text: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return bool(_glob_regex(tuple(patterns)).match(text))


@lru_cache(maxsize=256)
def _glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled regex per pattern list (rules are matched against every call in every body)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)")


def load_hazard_rules(extra: list[Path] | None = None) -> HazardRules:
    """The shipped rule files (plus any extra TOML files); malformed entries are one-line errors."""
    rules = HazardRules()
    files, rules.text_hash = read_rule_files("analyzer.rules.hazards", extra or [], what="hazard rule file")
    for rule_file in files:
        name, data = rule_file.name, rule_file.data
        for table, entries in data.items():
            if table not in _READERS or not isinstance(entries, list):
                raise AnalyzerError(f"{name}: unknown hazard rule table [[{table}]]; known: {', '.join(_READERS)}")
            for entry in entries:
                if not isinstance(entry, dict) or "name" not in entry:
                    raise AnalyzerError(f"{name}: a [[{table}]] entry has no name; add name = \"…\"")
                try:
                    _READERS[table](rules, entry)
                except (KeyError, TypeError, ValueError, re.error) as exc:
                    raise AnalyzerError(f"{name}: [[{table}]] {entry['name']!r}: {exc}; see the comments at the "
                                        "top of the shipped file for the expected keys") from None
        rules.files.append(name)
    return rules


def _source(rules: HazardRules, e: dict[str, Any]) -> None:
    if e["kind"] not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    calls = [CallPattern(c) if isinstance(c, str) else CallPattern(c["call"], tuple(c.get("modules", ())))
             for c in e.get("calls", [])]
    rules.sources.append(Source(e["name"], e["kind"], str(e["granularity"]), str(e["neutralised"]), calls,
                                list(e.get("new", [])), list(e.get("members", [])), list(e.get("iterators", [])),
                                list(e.get("containers", [])), bool(e.get("updates", False)),
                                list(e.get("identifiers", []))))


def _neutraliser(rules: HazardRules, e: dict[str, Any]) -> None:
    kinds = tuple(e["applies_to"])
    if bad := [k for k in kinds if k not in KINDS]:
        raise ValueError(f"applies_to names unknown kinds {bad}")
    rules.neutralisers.append(Neutraliser(e["name"], kinds, str(e["reason"]), tuple(e.get("methods", ())),
                                          tuple(e.get("calls", ())), tuple(e.get("operators", ())),
                                          re.compile(e["args"]) if e.get("args") else None, e.get("scope")))


def _part(value: str) -> str:
    if value not in PARTS:
        raise ValueError(f"part {value!r} is not one of {', '.join(PARTS)}")
    return value


def _returns(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.sinks.append(Sink(e["name"], "returns", _part(e["part"]), functions=tuple(e["functions"])))


def _property(rules: HazardRules, e: dict[str, Any]) -> None:
    keys = {str(k): _part(v) for k, v in dict(e["keys"]).items()}
    rules.sinks.append(Sink(e["name"], "property", functions=tuple(e["in_functions"]), keys=keys))


def _call_argument(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.sinks.append(Sink(e["name"], "call_argument", _part(e["part"]), receiver=str(e.get("receiver", "*")),
                            method=str(e["method"]), arg=int(e.get("arg", 0)), property=e.get("property")))


def _assignment(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.sinks.append(Sink(e["name"], "assignment", _part(e["part"]), properties=tuple(e["properties"]),
                            receivers=tuple(e.get("receivers", ()))))


def _dismiss(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.dismissals.append(Dismiss(e["name"], str(e["reason"]), tuple(e["calls"])))


def _structural(kind: str):  # noqa: ANN202 - a small reader factory
    def read(rules: HazardRules, e: dict[str, Any]) -> None:
        rules.structural.append(Structural(e["name"], kind, str(e["description"]), tuple(e.get("receivers", ())),
                                           tuple(e.get("methods", ())), bool(e.get("index_assignment", False)),
                                           tuple(e.get("in_functions", ()))))
    return read


def _carrier(rules: HazardRules, e: dict[str, Any]) -> None:
    methods = set(e.get("methods", ()))
    rules.carry_methods |= methods
    if e.get("flattens"):
        rules.flattening |= methods | set(e.get("calls", ())) | set(e.get("new", ()))
    if e.get("with_args"):
        rules.carry_with_args |= methods
    rules.carry_calls |= set(e.get("calls", ()))
    rules.carry_new |= set(e.get("new", ()))


def _mutator(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.mutators |= set(e["methods"])


def _wire(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.wire_fields.setdefault(_part(e["part"]), set()).update(e["fields"])


_READERS = {"wire": _wire, "carrier": _carrier, "mutator": _mutator, "source": _source,
            "neutraliser": _neutraliser, "returns": _returns, "property": _property,
            "call_argument": _call_argument, "assignment": _assignment, "dismiss": _dismiss,
            "rewrite": _structural("rewrite"), "runtime_tools": _structural("runtime_tools")}
