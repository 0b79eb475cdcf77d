"""The walker asks, the rule files answer: editing a rule of each kind in a copy of the rule files changes
what the scan reports on the line of tests/fixtures/hazards/config-app written for it.

Each case names a rule file, a text in it and what to put instead, and the marked line whose finding (or
near-miss) must come or go. The configuration itself (`analyzer.hazards.configuration`) is checked on its
own first: every question it answers comes from the loaded rules.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import hazardfixtures as hf
import pytest
from hazardmarkers import markers, unmet

from analyzer.hazards.configuration import FlowConfiguration
from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

SOURCE = "packages/config/src/index.ts"


class World:
    def __init__(self, tmp: Path) -> None:
        self.world = hf.build_single_world(tmp, "config", "config-app")
        self.analysis = self.world.analysis()
        self.marks = markers(hf.FIXTURES / "config-app", "config")
        self.lines = (hf.FIXTURES / "config-app" / SOURCE).read_text().splitlines()

    def scan(self) -> dict[str, Any]:
        ctx, a = self.world.ctx, self.analysis
        return compute_hazards(a, git_dirs_for(ctx, a), index_facts_for(ctx, a), include_near_misses=True)

    def line(self, text: str) -> int:
        """The fixture line holding `text` (exactly one)."""
        found = [i for i, line in enumerate(self.lines, start=1) if text in line]
        assert len(found) == 1, (text, found)
        return found[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("config"))


@pytest.fixture(scope="module")
def shipped(world: World) -> dict[str, Any]:
    return world.scan()


@contextlib.contextmanager
def edited(tmp: Path, file: str, old: str, new: str) -> Iterator[None]:
    """The shipped rule files with `old` replaced by `new` in `file` (once), read by every loader of the hazard
    rules while the block runs: the edit an engineer makes to change what the scan knows."""
    def replace_once(name: str, text: str) -> str:
        if name != file:
            return text
        assert text.count(old) == 1, f"{file}: expected {old!r} once"
        return text.replace(old, new)

    with hf.edited_hazard_rules(tmp / "rules", replace_once):
        yield


# rule-file keys whose values name JavaScript things (built-ins, methods, members, globals)
JS_NAME_KEYS = ("methods", "calls", "call", "modules", "new", "counts", "members", "identifiers", "iterators",
                "containers", "fills", "in_place", "catch_calls", "probe_calls")


def test_the_walker_holds_no_name_the_rule_files_hold() -> None:
    """What a built-in does lives in the rule files: no string the walker or its control part compare against
    is a method, call, constructor, member or global a rule lists. (The logical operators `&&`, `||`, `??` stay:
    passing either operand on is the language's own step, like an assignment.)"""
    named: set[str] = set()

    def collect(value: Any, key: str | None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                collect(v, k)
        elif isinstance(value, list):
            for v in value:
                collect(v, key)
        elif isinstance(value, str) and key in JS_NAME_KEYS:
            named.add(value)

    import tomllib

    for entry in resources.files("analyzer.rules.hazards").iterdir():
        if entry.name.endswith(".toml"):
            collect(tomllib.loads(entry.read_text()), None)
    assert {"push", "length", "set", "add", "Date.now", "JSON.stringify", "Map", "process.env"} <= named
    for module in ("flow.py", "control.py"):
        tree = ast.parse((Path(hf.__file__).parent.parent / "analyzer" / "hazards" / module).read_text())
        constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert constants & named == set(), module


def test_the_configuration_answers_from_the_rules(tmp_path: Path) -> None:
    from dataclasses import replace

    rules = load_hazard_rules()
    config = FlowConfiguration.of(rules)
    assert FlowConfiguration.of(rules) is config  # built once per rules object…
    assert FlowConfiguration.of(replace(rules, mutators=[])) is not config  # …and an edited copy gets its own
    push, splice = config.mutator("push"), config.mutator("splice")
    assert push is not None and (push.rule, push.keeps_order) == ("ordered-additions", True)
    assert splice is not None and not splice.keeps_order and config.mutator("slice") is None
    mapping = config.method_carrier("map")  # holds the receiver's elements, and what the callback gives
    assert mapping is not None and (mapping.rule, mapping.args_rule, mapping.with_args, mapping.flattens) == (
        "element-methods", "argument-carrying-methods", True, False)
    assert config.counts("length") and not config.counts("push")
    sort = config.call_barrier("sort", "names.sort", lambda: "")
    assert sort is not None and (sort.rule.name, sort.on_receiver, sort.in_place) == ("sorted", True, True)
    iso = config.call_barrier("slice", "stamp.slice", lambda: "0, 10")
    assert iso is not None and iso.rule.name == "iso-date-prefix"
    assert config.call_barrier("slice", "stamp.slice", lambda: "1") is None  # the rule's `args` decide
    assert config.dismissal("console.log") is not None and config.dismissal("render") is None
    extra = tmp_path / "queue.toml"
    extra.write_text('[[mutator]]\nname = "queue-additions"\nmethods = ["enqueue"]\nkeeps_order = true\n')
    added = FlowConfiguration.of(load_hazard_rules([extra])).mutator("enqueue")
    assert added is not None and added.rule == "queue-additions" and config.mutator("enqueue") is None


def _on(result: dict[str, Any], line: int, group: str = "findings") -> list[dict[str, Any]]:
    return [f for f in result[group] if f.get("source", {}).get("path") == SOURCE and f["source"]["line"] == line]


def test_the_fixture_markers_hold_with_the_shipped_rules(world: World, shipped: dict[str, Any]) -> None:
    tables = {name: e["table"] for name, e in load_hazard_rules().explanations.items()}
    assert len(world.marks) >= 15
    assert unmet(shipped, world.marks, tables) == []


# (kind, file, text in the file, what to put instead, text of the fixture line, rule, what happens to it)
EDITS = [
    ("source: calls", "sources.toml", '"Date.now", ', "", "${Date.now()}", "current-time", "gone"),
    ("source: new", "sources.toml", 'new = ["Date"]', "new = []", "${new Date()}", "current-time", "gone"),
    ("source: members", "sources.toml", 'members = ["process.env"]', "members = []", "CONFIG_HOME",
     "process-environment", "gone"),
    ("source: identifiers", "sources.toml", '"__dirname", ', "", "${__dirname}", "install-location", "gone"),
    ("source: updates", "sources.toml", "updates = true", "updates = false", "++turns", "counter", "gone"),
    ("source: iterators", "sources.toml", '"keys", ', "", "byName.keys()", "insertion-order", "gone"),
    ("source: containers", "sources.toml", 'containers = ["Map", "Set"]', 'containers = ["Set"]', "byName.keys()",
     "insertion-order", "gone"),
    ("source: fills", "sources.toml", 'fills = ["set", "add"]', 'fills = ["add"]', "byName.keys()",
     "insertion-order", "gone"),
    ("sink: returns", "sinks.toml", '"buildSystemPrompt", ', "", "${Date.now()}", "rendered-system-prompt", "gone"),
    ("sink: property", "sinks.toml", 'user = "cache key"\n', "", "CONFIG_USER", "request-builder-fields", "gone"),
    ("sink: call argument", "sinks.toml", 'method = "setSystemPrompt"', 'method = "setPrompt"', "Agent started at",
     "set-system-prompt", "gone"),
    ("sink: assignment", "sinks.toml", 'properties = ["systemPrompt"]', 'properties = ["prompt"]', "State of",
     "system-prompt-state", "gone"),
    ("barrier: neutraliser", "sources.toml", 'methods = ["toDateString", "toLocaleDateString"]',
     'methods = ["toLocaleDateString"]', "toDateString()", "current-time", "appears"),
    ("barrier: dismissal", "sinks.toml", '"console.*", "*.log", ', "", "console.log", "logging", "undismissed"),
    ("carrier: methods", "carriers.toml", '"toFixed", ', "", "process.uptime()", "current-time", "gone"),
    ("carrier: calls", "carriers.toml", 'calls = ["JSON.stringify", ', "calls = [", "JSON.stringify",
     "current-time", "gone"),
    ("carrier: new", "carriers.toml", '"URL", ', "", "new URL", "working-directory", "gone"),
    ("carrier: counts", "carriers.toml", 'counts = ["length", "size"]', 'counts = ["size"]', "readdirSync('.')",
     "directory-order", "appears"),
    ("mutator: methods", "carriers.toml", 'methods = ["push", ', "methods = [", "Math.random()", "randomness",
     "gone"),
    ("mutator: keeps order", "carriers.toml", "keeps_order = true", "keeps_order = false", "byName.keys()",
     "insertion-order", "gone"),
    ("control: probe calls", "control.toml", 'probe_calls = ["existsSync", ', "probe_calls = [", "existsSync(",
     "machine-probe", "gone"),
]


@pytest.mark.parametrize(("kind", "file", "old", "new", "at", "rule", "change"), EDITS, ids=[e[0] for e in EDITS])
def test_editing_a_rule_of_each_kind_changes_the_scan(world: World, shipped: dict[str, Any], tmp_path: Path,
                                                      kind: str, file: str, old: str, new: str, at: str, rule: str,
                                                      change: str) -> None:
    line = world.line(at)

    def naming(result: dict[str, Any], group: str = "findings") -> list[dict[str, Any]]:
        return [f for f in _on(result, line, group) if rule in f["rules"]]

    with edited(tmp_path, file, old, new):
        after = world.scan()
    if change == "gone":
        assert naming(shipped) and not naming(after), kind
    elif change == "appears":
        assert not _on(shipped, line) and _on(after, line), kind
    else:  # undismissed: the near-miss its rule made is now another rule's (the call is not followed)
        assert naming(shipped, "near_misses") and not naming(after, "near_misses") and _on(after, line, "near_misses")
    # …and not every line: a finding this edit has nothing to do with stays
    untouched = world.line("CONFIG_USER" if kind in ("sink: returns", "mutator: methods") else "Math.random()")
    assert _on(shipped, untouched) and _on(after, untouched) == _on(shipped, untouched), kind
