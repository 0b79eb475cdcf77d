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
PARTS = ("system prompt", "tool definitions", "message history", "runtime context", "cache key", "request headers",
         "request body")
# How often a value changes, finest first: a value fixed at a coarser scope is the coarser one.
GRANULARITIES = ("request", "session", "day", "machine", "install")
# What a value does to the cached prefix, in the order findings are ranked (the vocabulary of
# [[effect]] rules, see effects.toml).
EFFECTS = ("breaks-prefix", "cross-session", "cache-routing", "frozen-in-history", "tail-append", "out-of-band")


@dataclass(frozen=True)
class CallPattern:
    call: str  # `Date.now`, `*.toLocaleString`, bare `randomUUID`
    modules: tuple[str, ...] = ()  # a bare name counts only when imported from one of these


@dataclass
class Source:
    name: str
    kind: str
    granularity: str  # one of GRANULARITIES
    neutralised: str
    calls: list[CallPattern] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    iterators: list[str] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)
    updates: bool = False
    identifiers: list[str] = field(default_factory=list)
    fills: list[str] = field(default_factory=list)  # methods that register into a container (`set`, `add`)
    field_types: list[str] = field(default_factory=list)  # a record field declared with one of these types
    typed_fields: list[str] = field(default_factory=list)  # …read under one of these names (candidates)


@dataclass
class Neutraliser:
    name: str
    applies_to: tuple[str, ...]
    reason: str
    methods: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    operators: tuple[str, ...] = ()
    args: re.Pattern[str] | None = None
    in_place: tuple[str, ...] = ()  # methods that change their receiver (`xs.sort()`): the name is neutralised


@dataclass(frozen=True)
class Fixed:
    """A value computed once at a scope (an object's construction, a module's load): not dismissed, but
    at least as coarse as `granularity` (a per-request clock read in a constructor is a per-session value)."""
    name: str
    scope: str  # constructor | module
    granularity: str
    reason: str


@dataclass(frozen=True)
class Effect:
    """Decides a finding's effect on the prefix: the first rule whose conditions all hold names it."""
    name: str
    effect: str
    reason: str
    parts: tuple[str, ...] = ()  # request parts (empty: any)
    granularities: tuple[str, ...] = ()  # effective granularities (empty: any)
    dismissed_by: tuple[str, ...] = ()  # for near-misses: the dismissing rule (empty: findings only)
    messages: tuple[str, ...] = ()  # message history only: the message origins (new | replayed | appended)


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
    position: tuple[str, ...] = ()  # call_argument: object keys that say where the entry lands
    name_arg: int | None = None  # call_argument: the argument whose literal names the entry
    url_arg: int | None = None  # call_argument: the argument whose text must match one of `urls`
    urls: tuple[str, ...] = ()


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
    effect: str = "breaks-prefix"
    granularity: str = "request"


@dataclass(frozen=True)
class Control:
    """A volatile test (control.toml): a condition or a `catch` whose outcome selects the value sent."""
    name: str
    neutralised: str
    granularity: str | None = None  # None: the tested source's
    source_kinds: tuple[str, ...] = ()
    catch_calls: tuple[str, ...] = ()
    probe_calls: tuple[str, ...] = ()
    # string literals of the probing function that name a file the user writes (globs): a choice made by
    # whether such a file exists is a `possible` finding, its condition named
    optional_files: tuple[str, ...] = ()
    in_callbacks: bool = False  # catch_calls: also calls inside callbacks handed to a call of the try block


@dataclass(frozen=True)
class Fallback:
    """A choice settled by a volatile fallback (control.toml `[[fallback]]`): `a ?? process.cwd()`. What a
    volatile test chose for `a` only decides whether the fallback is used; the fallback is its own finding."""
    name: str
    operators: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class UnchangedChoice:
    """A control finding whose alternatives send the same text (control.toml `[[unchanged_choice]]`): a test
    choosing whether stored history is replayed chooses between resuming and starting anew; what is replayed
    is what was already sent."""
    name: str
    parts: tuple[str, ...]
    message: str
    reason: str


@dataclass(frozen=True)
class CarrierRule:
    """Built-ins a value passes through (carriers.toml `[[carrier]]`): methods, functions, constructors, and
    members that count elements (`length`); `configuration.py` indexes them for the walker."""
    name: str
    methods: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    new: tuple[str, ...] = ()
    counts: tuple[str, ...] = ()
    with_args: bool = False  # methods: the arguments are in the result too
    flattens: bool = False  # the result is a plain value (a string, a number)


@dataclass(frozen=True)
class MutatorRule:
    """Methods that add their arguments to their receiver (carriers.toml `[[mutator]]`)."""
    name: str
    methods: tuple[str, ...]
    keeps_order: bool = False  # added in call order (inside a loop: the loop's iteration order)


@dataclass(frozen=True)
class Record:
    """Stored records by type (records.toml): which declarations are records, which generics keep fields."""
    name: str
    declarations: tuple[str, ...]
    field_subsets: tuple[str, ...] = ()
    kept_by: tuple[str, ...] = ()  # [[dismiss]] rules whose calls keep a record (and `this` fields)
    fixed: str | None = None


# What every rule says about itself (`analyze hazards --explain RULE`): what it matches, why that matters for
# the cached prefix, an example in code, and the fix.
EXPLAINED = ("what", "why", "example", "fix")

CONTROL_KIND = "control"  # the kind of a finding whose value a volatile test selected


@dataclass
class HazardRules:
    sources: list[Source] = field(default_factory=list)
    neutralisers: list[Neutraliser] = field(default_factory=list)
    sinks: list[Sink] = field(default_factory=list)
    dismissals: list[Dismiss] = field(default_factory=list)
    fixed: list[Fixed] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    structural: list[Structural] = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    carriers: list[CarrierRule] = field(default_factory=list)
    mutators: list[MutatorRule] = field(default_factory=list)
    wire_fields: dict[str, set[str]] = field(default_factory=dict)  # request part → serialised fields
    wire_rules: dict[str, str] = field(default_factory=dict)  # request part → the [[wire]] rule naming its fields
    history_rule: str = ""  # the [[history]] rule naming the reads
    appended_by: tuple[str, ...] = ()  # functions whose result is a new message appended after the history
    appended_rule: str = ""
    history_reads: tuple[str, ...] = ()  # names whose read means a message of the stored history is replayed
    handoff_edges: set[str] = field(default_factory=set)  # edge rules whose target runs later, with other args
    fallbacks: list[Fallback] = field(default_factory=list)
    unchanged_choices: list[UnchangedChoice] = field(default_factory=list)
    covered_choice: tuple[str, str] | None = None  # (rule name, reason): a choice inside a volatile value
    # `type` values of entries that never become a message (a label, UI state): what they hold is no history
    non_message_types: dict[str, str] = field(default_factory=dict)  # type literal → the rule naming it
    entry_type_keys: tuple[str, ...] = ()  # the object keys that hold an entry's type (`type`)
    explanations: dict[str, dict[str, str]] = field(default_factory=dict)  # rule name → table, file, EXPLAINED
    files: list[str] = field(default_factory=list)
    text_hash: str = ""
    # the walker's view of these rules (`configuration.FlowConfiguration.of`), built once; never copied by
    # `dataclasses.replace`, so edited rules get their own
    _configuration: Any = field(default=None, init=False, repr=False, compare=False)

    def source(self, name: str) -> Source:
        return next(s for s in self.sources if s.name == name)

    @property
    def fill_pattern(self) -> str:
        """A regex alternation of the container sources' filling methods (`set|add`); never matches when none."""
        fills = sorted({re.escape(m) for s in self.sources for m in s.fills})
        return "|".join(fills) or "(?!)"

    def dismissal(self, callee: str) -> Dismiss | None:
        """The [[dismiss]] rule whose calls match: a barrier (logging, timers, stores…)."""
        return next((d for d in self.dismissals if glob_match(callee, d.calls)), None)

    def scoped(self, scope: str) -> Fixed | None:
        return next((n for n in self.fixed if n.scope == scope), None)

    def granularity(self, flow_origin_rule: str, met: tuple[str, ...], tested: str = "") -> tuple[str, str]:
        """(granularity, rule that decided it): the source's own, made coarser by every [[fixed]] scope
        the flow passed (a constructor, a module-level constant). A [[control]] test without its own
        granularity changes as often as the source it tests (`tested`)."""
        src = self.source(flow_origin_rule)
        best, rule = src.granularity, flow_origin_rule
        control = next((c for c in self.controls if c.name == flow_origin_rule), None)
        if control is not None and control.granularity is None and tested:
            best, rule = self.source(tested).granularity, tested
        for f in self.fixed:
            if f.name in met and GRANULARITIES.index(f.granularity) > GRANULARITIES.index(best):
                best, rule = f.granularity, f.name
        return best, rule

    def effect(self, part: str | None, granularity: str, dismissed_by: str | None = None,
               message: str | None = None) -> Effect | None:
        for e in self.effects:
            if (e.parts and part not in e.parts) or (e.granularities and granularity not in e.granularities):
                continue
            if e.messages and message not in e.messages:
                continue
            if (dismissed_by is None) != (not e.dismissed_by) or (dismissed_by and dismissed_by not in e.dismissed_by):
                continue
            return e
        return None


def glob_match(text: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return bool(glob_regex(tuple(patterns)).match(text))


@lru_cache(maxsize=256)
def glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
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
                rules.explanations[str(entry["name"])] = {
                    "rule": str(entry["name"]), "table": table, "file": name,
                    **{k: str(entry[k]) for k in EXPLAINED if k in entry}}
                try:
                    _READERS[table](rules, entry)
                except (KeyError, TypeError, ValueError, re.error) as exc:
                    raise AnalyzerError(f"{name}: [[{table}]] {entry['name']!r}: {exc}; see the comments at the "
                                        "top of the shipped file for the expected keys") from None
        rules.files.append(name)
    return rules


def explain(rules: HazardRules, name: str) -> dict[str, str]:
    """A rule's own explanation (its table, file, what/why/example/fix), or one `error:` naming close rules."""
    found = rules.explanations.get(name)
    if found is None:
        import difflib

        close = difflib.get_close_matches(name, list(rules.explanations), n=4, cutoff=0.5)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise AnalyzerError(f"no hazard rule named {name!r}{hint}; rule names are the `name` keys of "
                            "analyzer/rules/hazards/*.toml (findings print them as `rule …`)")
    return found


def _granularity(value: str) -> str:
    if value not in GRANULARITIES:
        raise ValueError(f"granularity {value!r} is not one of {', '.join(GRANULARITIES)}")
    return value


def _source(rules: HazardRules, e: dict[str, Any]) -> None:
    if e["kind"] not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    _granularity(str(e["granularity"]))
    calls = [CallPattern(c) if isinstance(c, str) else CallPattern(c["call"], tuple(c.get("modules", ())))
             for c in e.get("calls", [])]
    rules.sources.append(Source(e["name"], e["kind"], str(e["granularity"]), str(e["neutralised"]), calls,
                                list(e.get("new", [])), list(e.get("members", [])), list(e.get("iterators", [])),
                                list(e.get("containers", [])), bool(e.get("updates", False)),
                                list(e.get("identifiers", [])), list(e.get("fills", [])),
                                list(e.get("field_types", [])), list(e.get("typed_fields", []))))


def _neutraliser(rules: HazardRules, e: dict[str, Any]) -> None:
    kinds = tuple(e["applies_to"])
    if bad := [k for k in kinds if k not in KINDS]:
        raise ValueError(f"applies_to names unknown kinds {bad}")
    rules.neutralisers.append(Neutraliser(e["name"], kinds, str(e["reason"]), tuple(e.get("methods", ())),
                                          tuple(e.get("calls", ())), tuple(e.get("operators", ())),
                                          re.compile(e["args"]) if e.get("args") else None,
                                          tuple(e.get("in_place", ()))))


def _fixed(rules: HazardRules, e: dict[str, Any]) -> None:
    if e["scope"] not in ("constructor", "module", "record"):
        raise ValueError("scope must be constructor, module or record")
    rules.fixed.append(Fixed(e["name"], e["scope"], _granularity(str(e["granularity"])), str(e["reason"])))


def _effect(rules: HazardRules, e: dict[str, Any]) -> None:
    if e["effect"] not in EFFECTS:
        raise ValueError(f"effect must be one of {', '.join(EFFECTS)}")
    rules.effects.append(Effect(e["name"], e["effect"], str(e["reason"]), tuple(_part(p) for p in e.get("parts", ())),
                                tuple(_granularity(g) for g in e.get("granularities", ())),
                                tuple(e.get("dismissed_by", ())), tuple(e.get("messages", ()))))


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
                            method=str(e["method"]), arg=int(e.get("arg", 0)), property=e.get("property"),
                            position=tuple(e.get("position", ())),
                            name_arg=int(e["name_arg"]) if "name_arg" in e else None,
                            url_arg=int(e["url_arg"]) if "url_arg" in e else None, urls=tuple(e.get("urls", ()))))


def _assignment(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.sinks.append(Sink(e["name"], "assignment", _part(e["part"]), properties=tuple(e["properties"]),
                            receivers=tuple(e.get("receivers", ()))))


def _dismiss(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.dismissals.append(Dismiss(e["name"], str(e["reason"]), tuple(e["calls"])))


def _structural(kind: str):  # noqa: ANN202 - a small reader factory
    def read(rules: HazardRules, e: dict[str, Any]) -> None:
        effect = str(e.get("effect", "breaks-prefix"))
        if effect not in EFFECTS:
            raise ValueError(f"effect must be one of {', '.join(EFFECTS)}")
        rules.structural.append(Structural(e["name"], kind, str(e["description"]), tuple(e.get("receivers", ())),
                                           tuple(e.get("methods", ())), bool(e.get("index_assignment", False)),
                                           tuple(e.get("in_functions", ())), effect,
                                           _granularity(str(e.get("granularity", "request")))))
    return read


def _control(rules: HazardRules, e: dict[str, Any]) -> None:
    kinds = tuple(e.get("source_kinds", ()))
    if bad := [k for k in kinds if k not in KINDS]:
        raise ValueError(f"source_kinds names unknown kinds {bad}")
    control = Control(e["name"], str(e["neutralised"]),
                      _granularity(str(e["granularity"])) if "granularity" in e else None, kinds,
                      tuple(e.get("catch_calls", ())), tuple(e.get("probe_calls", ())),
                      tuple(str(x) for x in e.get("optional_files", ())), bool(e.get("in_callbacks", False)))
    if not (control.source_kinds or control.catch_calls or control.probe_calls):
        raise ValueError("needs source_kinds, catch_calls or probe_calls")
    if control.granularity is None and not control.source_kinds:
        raise ValueError("needs a granularity (only a test of sources takes theirs)")
    rules.controls.append(control)
    # a control origin names its rule like a source origin does: kind, granularity and advice
    rules.sources.append(Source(control.name, CONTROL_KIND, control.granularity or GRANULARITIES[0],
                                control.neutralised))


def _record(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.records.append(Record(e["name"], tuple(e["declarations"]), tuple(e.get("field_subsets", ())),
                                tuple(e.get("kept_by", ())), str(e["fixed"]) if e.get("fixed") else None))


def _carrier(rules: HazardRules, e: dict[str, Any]) -> None:
    def names(key: str) -> tuple[str, ...]:
        return tuple(str(x) for x in e.get(key, ()))

    rules.carriers.append(CarrierRule(e["name"], names("methods"), names("calls"), names("new"), names("counts"),
                                      bool(e.get("with_args")), bool(e.get("flattens"))))


def _mutator(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.mutators.append(MutatorRule(e["name"], tuple(str(x) for x in e["methods"]), bool(e.get("keeps_order"))))


def _wire(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.wire_fields.setdefault(_part(e["part"]), set()).update(e["fields"])
    rules.wire_rules.setdefault(e["part"], str(e["name"]))


def _handoff(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.handoff_edges |= {str(x) for x in e["rules"]}


def _history(rules: HazardRules, e: dict[str, Any]) -> None:
    if e.get("reads"):
        rules.history_rule = rules.history_rule or str(e["name"])
    if e.get("appended_by"):
        rules.appended_rule = rules.appended_rule or str(e["name"])
        rules.appended_by = (*rules.appended_by, *(str(x) for x in e["appended_by"]))
    rules.history_reads = (*rules.history_reads, *(str(x) for x in e.get("reads", ())))
    rules.non_message_types.update({str(x): e["name"] for x in e.get("not_messages", ())})
    rules.entry_type_keys = (*rules.entry_type_keys, *(str(x) for x in e.get("type_keys", ())))


def _fallback(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.fallbacks.append(Fallback(e["name"], tuple(str(x) for x in e["operators"]), str(e["reason"])))


def _covered_choice(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.covered_choice = (str(e["name"]), str(e["reason"]))


def _unchanged_choice(rules: HazardRules, e: dict[str, Any]) -> None:
    rules.unchanged_choices.append(UnchangedChoice(e["name"], tuple(_part(p) for p in e["parts"]),
                                                   str(e.get("message", "")), str(e["reason"])))


def _elsewhere(rules: HazardRules, e: dict[str, Any]) -> None:
    """Read by another module (`[[experiment]]`: analyzer.hazards.experiment; `[[forwarder]]`, `[[registry]]`:
    analyzer.hazards.seams)."""


_READERS = {"experiment": _elsewhere, "forwarder": _elsewhere, "registry": _elsewhere,
            "fixed": _fixed, "effect": _effect, "wire": _wire, "carrier": _carrier,
            "mutator": _mutator, "source": _source, "control": _control, "record": _record,
            "neutraliser": _neutraliser, "returns": _returns, "property": _property,
            "call_argument": _call_argument, "assignment": _assignment, "dismiss": _dismiss,
            "history": _history, "handoff": _handoff, "fallback": _fallback,
            "unchanged_choice": _unchanged_choice, "covered_choice": _covered_choice,
            "rewrite": _structural("rewrite"), "runtime_tools": _structural("runtime_tools")}
