"""The scan against the expectations written in the fixture source (`// hazard: RULE -> PART`, `// ok: RULE`;
tests/hazardmarkers.py): the false-alarm classes a reviewer rejected, and what each rule must find."""

from __future__ import annotations

from typing import Any

import pytest
from hazardfixtures import FIXTURES, build_single_world
from hazardmarkers import markers, unmet

from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

MARKED = FIXTURES / "marked-app"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    world = build_single_world(tmp_path_factory.mktemp("marked"), "app", "marked-app")
    analysis = world.analysis()
    return compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           include_near_misses=True)


def _at(result: dict[str, Any], path: str, group: str = "findings") -> list[dict[str, Any]]:
    return [f for f in result[group] if f.get("source", {}).get("path") == f"packages/agent/src/{path}"]


def test_every_marker_in_the_fixture_holds(result: dict[str, Any]) -> None:
    marks = markers(MARKED)
    assert {m.kind for m in marks} == {"hazard", "ok"}
    assert unmet(result, marks) == []


def test_a_tools_execute_result_is_not_the_tool_definition(result: dict[str, Any]) -> None:
    """The Map order inside what `execute` returns reaches `state.tools` only inside the function value."""
    assert _at(result, "tools.ts") == []


def test_a_probe_choosing_resume_or_new_is_no_control_finding(result: dict[str, Any]) -> None:
    found = _at(result, "resume.ts")
    assert [(f["kind"], f["source"]["text"]) for f in found] == [("environment", "process.cwd()")]
    replayed = [m for m in _at(result, "resume.ts", "near_misses") if m["dismissed_by"] == "choice-of-replayed-history"]
    assert replayed and all(m["kind"] == "control" for m in replayed)


def test_a_label_entry_never_becomes_history(result: dict[str, Any]) -> None:
    assert _at(result, "labels.ts") == []
    off = [m for m in _at(result, "labels.ts", "near_misses") if m["dismissed_by"] == "wire-fields"]
    assert off and "label entry" in off[0]["reason"]


def test_an_optional_user_file_makes_the_choice_possible_with_its_condition(result: dict[str, Any]) -> None:
    (f,) = _at(result, "prompt-files.ts")
    assert f["kind"] == "control" and f["possible"] is True
    assert f["condition"] == "only when the user has written SYSTEM.md"
