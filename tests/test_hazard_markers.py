"""The scan against the expectations written in the fixture source (`// hazard: RULE -> PART`, `// ok: RULE`;
tests/hazardmarkers.py), over every hazard fixture: the false-alarm classes a reviewer rejected, what each
rule must find, and that every scan rule is exercised by a marker."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hazardfixtures as hf
import pytest
from hazardmarkers import Marker, markers, unmet

from analyzer.hazards.rules import HazardRules, load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

# world → (builder, {fixture folder: repo name})
WORLDS = {
    "hazard": (hf.build_hazard_world, {"mini-app": "app", "mini-ai": "ai"}),
    "seams": (hf.build_seam_world, {"mini-seams": "host"}),
    "choice": (hf.build_choice_world, {"mini-choice": "choice"}),
    "records": (hf.build_records_world, {"mini-records": "records"}),
    "recall": (hf.build_recall_world, {"recall-app": "app"}),
    "shapes": (lambda t: hf.build_single_world(t, "shapes", "mini-shapes"), {"mini-shapes": "shapes"}),
    "marked": (lambda t: hf.build_single_world(t, "app", "marked-app"), {"marked-app": "app"}),
}
# rules a scan never applies: [[experiment]] rules turn a finding into an app experiment (tests/test_hazards.py)
NOT_SCAN_TABLES = ("experiment",)


class World:
    def __init__(self, tmp: Path, name: str) -> None:
        build, folders = WORLDS[name]
        self.world = build(tmp)
        self.analysis = self.world.analysis()
        self.marks = [m for folder, repo in folders.items() for m in markers(hf.FIXTURES / folder, repo)]

    def scan(self, rules: HazardRules | None = None) -> dict[str, Any]:
        ctx, a = self.world.ctx, self.analysis
        return compute_hazards(a, git_dirs_for(ctx, a), index_facts_for(ctx, a), include_near_misses=True,
                               rules=rules)


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[World, dict[str, Any]]]:
    out = {}
    for name in WORLDS:
        w = World(tmp_path_factory.mktemp(name), name)
        out[name] = (w, w.scan())
    return out


@pytest.fixture(scope="module")
def tables() -> dict[str, str]:
    return {name: e["table"] for name, e in load_hazard_rules().explanations.items()}


def _at(worlds: dict[str, Any], path: str, group: str = "findings") -> list[dict[str, Any]]:
    return [f for f in worlds["marked"][1][group] if f.get("source", {}).get("path") == f"packages/agent/src/{path}"]


@pytest.mark.parametrize("name", list(WORLDS))
def test_every_marker_in_the_fixture_holds(worlds: dict[str, Any], tables: dict[str, str], name: str) -> None:
    world, result = worlds[name]
    assert world.marks
    assert unmet(result, world.marks, tables) == []


def test_every_scan_rule_is_exercised_by_a_marker(worlds: dict[str, Any], tables: dict[str, str]) -> None:
    marked = {m.rule for w, _ in worlds.values() for m in w.marks}
    scan_rules = {name for name, table in tables.items() if table not in NOT_SCAN_TABLES}
    assert sorted(scan_rules - marked) == []


@contextlib.contextmanager
def _without(rule: str, tmp: Path) -> Iterator[None]:
    """The shipped rule files with `rule`'s entry deleted from its file, as an engineer would edit it, for
    every loader of the hazard rules (rules, seams, experiments) while the block runs."""
    deleted = 0

    def delete_entry(name: str, text: str) -> str:
        nonlocal deleted
        chunks = re.split(r"(?m)^(?=\[\[)", text)
        kept = [c for c in chunks if not re.search(rf'(?m)^name = "{re.escape(rule)}"$', c)]
        deleted += len(chunks) - len(kept)
        return "".join(kept)

    with hf.edited_hazard_rules(tmp / f"without-{rule}", delete_entry):
        assert deleted == 1, f"{rule}: expected one entry to delete, found {deleted}"
        yield


def _silent(tables: dict[str, str], worlds: dict[str, Any]) -> list[tuple[str, Marker]]:
    """`ok:` markers of rules that drop a flow without leaving a near-miss (a fallback, a count, a handoff)."""
    return [(name, m) for name, (w, _) in worlds.items() for m in w.marks
            if m.kind == "ok" and tables.get(m.rule) in ("fallback", "carrier", "handoff", "mutator")]


def test_a_rule_that_drops_a_flow_silently_is_what_keeps_its_marked_line_quiet(
        worlds: dict[str, Any], tables: dict[str, str], tmp_path: Path) -> None:
    """Deleting the rule from its file makes a finding appear on the line its `ok:` marker names."""
    silent = _silent(tables, worlds)
    assert {m.rule for _, m in silent} >= {"volatile-fallback", "count-properties", "handed-over-callbacks"}
    for name, m in silent:
        world, result = worlds[name]
        before = [f for f in result["findings"] if f.get("source", {}).get("line") == m.line
                  and f["source"]["path"] == m.path]
        with _without(m.rule, tmp_path):
            edited = world.scan()
        after = [f for f in edited["findings"] if f.get("source", {}).get("line") == m.line
                 and f["source"]["path"] == m.path]
        assert before == [] and after, (m, "deleting the rule changed nothing")


@pytest.mark.parametrize("rule", ["insertion-order", "rendered-system-prompt", "machine-probe", "sorted",
                                  "logging", "message-wire-fields", "routing-key", "value-methods",
                                  "fixed-at-construction", "non-message-entries", "reflect-apply"])
def test_deleting_a_rule_of_each_kind_from_its_file_changes_the_scan(worlds: dict[str, Any], rule: str,
                                                                     tmp_path: Path) -> None:
    """source, sink, control, neutraliser, dismissal, wire, effect, carrier, fixed scope, history, seam: the
    scan reads its knowledge from the rule files, so deleting one rule changes what a fixture reports."""
    def seen(result: dict[str, Any]) -> list[tuple[Any, ...]]:
        return sorted(str((f.get("source", {}).get("path"), f.get("source", {}).get("line"),
                           f.get("dismissed_by"), f.get("effect"), f.get("rules")))
                      for g in ("findings", "near_misses") for f in result[g])
    using = [(w, result) for w, result in worlds.values()
             if any(rule in (f.get("rules") or ()) for g in ("findings", "near_misses") for f in result[g])]
    assert using, f"no fixture exercises {rule}"
    with _without(rule, tmp_path):
        changed = [w for w, result in using if seen(w.scan()) != seen(result)]
    assert changed, f"deleting {rule} changed no fixture's scan"


def test_a_tools_execute_result_is_not_the_tool_definition(worlds: dict[str, Any]) -> None:
    """The Map order inside what `execute` returns reaches `state.tools` only inside the function value."""
    assert [f for f in _at(worlds, "tools.ts") if f["sink"]["part"] == "tool definitions"] == []
    assert [f["source"]["text"] for f in _at(worlds, "tools.ts")] == ["new Date()"]  # the clock tool's result


def test_a_tool_result_is_a_tail_append(worlds: dict[str, Any]) -> None:
    (f,) = _at(worlds, "tools.ts")
    assert (f["sink"]["part"], f["sink"]["message"], f["effect"]) == ("message history", "appended", "tail-append")


def test_a_probe_choosing_resume_or_new_is_no_control_finding(worlds: dict[str, Any]) -> None:
    found = _at(worlds, "resume.ts")
    assert [(f["kind"], f["source"]["text"]) for f in found] == [("environment", "process.cwd()")]
    replayed = [m for m in _at(worlds, "resume.ts", "near_misses")
                if m["dismissed_by"] == "choice-of-replayed-history"]
    assert replayed and all(m["kind"] == "control" for m in replayed)


def test_a_label_entry_never_becomes_history(worlds: dict[str, Any]) -> None:
    assert _at(worlds, "labels.ts") == []
    off = [m for m in _at(worlds, "labels.ts", "near_misses") if m["dismissed_by"] == "message-wire-fields"]
    assert off and "label entry" in off[0]["reason"]


def test_an_optional_user_file_makes_the_choice_possible_with_its_condition(worlds: dict[str, Any]) -> None:
    (f,) = _at(worlds, "prompt-files.ts")
    assert f["kind"] == "control" and f["possible"] is True
    assert f["condition"] == "only when the user has written SYSTEM.md"


def test_a_session_id_sent_as_a_cache_key_is_cache_routing(worlds: dict[str, Any]) -> None:
    keys = [f for f in _at(worlds, "routing.ts") if f["sink"]["part"] == "cache key"]
    assert keys and {f["effect"] for f in keys} == {"cache-routing"}
    assert {"request-builder-fields", "affinity-headers", "affinity-header-assignment"} <= {
        f["sink"]["rule"] for f in keys}


def test_the_text_output_names_the_condition_of_a_possible_finding(worlds: dict[str, Any]) -> None:
    import io

    from rich.console import Console

    from analyzer.hazards.render import render_text

    console = Console(file=io.StringIO(), width=400)
    render_text(worlds["marked"][1], console, verbose=0)
    lines = [line for line in console.file.getvalue().splitlines() if "prompt-files.ts" in line]
    assert any("possible (only when the user has written SYSTEM.md)" in line for line in lines), lines


def _summary(finding: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The shape of `analyze observe EXPERIMENT --json` for an app experiment (analyzer/observe/appsummary.py)."""
    return {"schema": "analyzer.observe.app-summary/1", "source": {"finding": finding, "hazard": "", "rule": "r"},
            "vary": {"factor": "cwd", "name": None, "path": None, "values": ["a", "b"]}, "app_requests": rows}


def test_a_finding_reads_back_what_its_app_experiment_observed(worlds: dict[str, Any], tmp_path: Path) -> None:
    import copy
    import json

    from analyzer.hazards.observed import attach

    result = copy.deepcopy(worlds["marked"][1])
    (f,) = [x for x in result["findings"] if x["source"]["path"].endswith("resume.ts")]
    rows = [{"series": "control", "index": 1, "raw_cached": 900},
            {"series": "cwd=b", "index": 1, "raw_cached": 120,
             "first_divergence": {"kind": "changed", "part": "system", "offset": 40, "lost": 780}}]
    run = tmp_path / "run.json"
    run.write_text(json.dumps(_summary(f["id"], rows)))
    attach(result, [run])
    (seen,) = [x["observed"] for x in result["findings"] if x["id"] == f["id"]]
    assert (seen["observed"], seen["differed"], seen["requests"], seen["cached_tokens_lost"]) == (True, 1, 1, 780)
    assert seen["record"] == str(run) and seen["first_divergence"]["part"] == "system"
    assert sum(1 for x in result["findings"] if "observed" in x) == 1


def test_an_observed_run_that_names_no_finding_of_the_scan_is_one_error(worlds: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    import json

    from analyzer.errors import AnalyzerError
    from analyzer.hazards.observed import attach

    run = tmp_path / "run.json"
    run.write_text(json.dumps(_summary("000000000000", [])))
    with pytest.raises(AnalyzerError, match="is not among this scan's findings"):
        attach(worlds["marked"][1], [run])
    run.write_text("{}")
    with pytest.raises(AnalyzerError, match="not an app summary"):
        attach(worlds["marked"][1], [run])


def _line(path: str, text: str) -> int:
    lines = (hf.FIXTURES / "marked-app" / "packages" / "agent" / "src" / path).read_text().splitlines()
    (found,) = [i + 1 for i, line in enumerate(lines) if text in line]
    return found


def test_an_append_to_a_session_log_is_followed_to_the_replay_that_renders_it(worlds: dict[str, Any]) -> None:
    """Replayed as stored: a frozen near-miss naming the replay; re-rendered by the replay from a clock it reads
    itself: a breaks-prefix finding at that clock, naming the append whose entries it re-renders."""
    frozen = [m for m in _at(worlds, "log.ts", "near_misses") if m["dismissed_by"] == "session-log-replay"]
    assert [(m["source"]["text"], m["effect"]) for m in frozen] == [("new Date()", "frozen-in-history")]
    assert "SessionLog.deriveMessages" in frozen[0]["reason"]
    (f,) = _at(worlds, "log.ts")
    assert (f["source"]["text"], f["effect"], f["sink"]["message"]) == ("Date.now()", "breaks-prefix", "re-rendered")
    assert f["sink"]["replay"]["function"] == "AgedLog.deriveMessages"
    assert f["sink"]["replay"]["appends"] == [f"packages/agent/src/log.ts:{_line('log.ts', 'this.aged.append(')}"]


def test_a_local_function_with_a_sink_rules_name_is_not_that_sink(worlds: dict[str, Any]) -> None:
    """prompt.ts exports `renderPrompt`; recall.ts keeps its own: only the exported one renders the prompt."""
    assert _at(worlds, "recall.ts") == []
    assert [f["sink"]["function"].rsplit(":", 1)[-1] for f in _at(worlds, "prompt.ts")] == ["renderPrompt"]
