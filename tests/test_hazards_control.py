"""Control dependence in `analyze hazards`: a volatile test (control.toml) that selects the value sent is a
finding of kind `control` citing the test and each alternative; tests that select nothing are not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hazardfixtures import FIXTURES, build_choice_world

from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.hazards.model import validate_hazards_json
from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

PATH = "packages/choice/src/index.ts"
LINES = (FIXTURES / "mini-choice" / PATH).read_text().splitlines()


def line_of(text: str, after: str | None = None) -> int:
    """The 1-based line holding `text` (the first after the line holding `after`), so the expectations
    follow the fixture when it is edited."""
    start = line_of(after) if after else 0
    hits = [i + 1 for i, line in enumerate(LINES) if i + 1 > start and text in line]
    assert hits, text
    return hits[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_choice_world(tmp_path_factory.mktemp("choice"))


@pytest.fixture(scope="module")
def result(world) -> dict[str, Any]:
    analysis = world.analysis()
    return compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           include_near_misses=True)


def _controls(result: dict[str, Any], path: str = PATH) -> dict[int, dict[str, Any]]:
    return {f["source"]["line"]: f for f in result["findings"] if f["kind"] == "control"
            and f["source"]["path"] == path}


def test_each_volatile_test_that_selects_a_value_is_one_control_finding(result: dict[str, Any]) -> None:
    got = {line: (f["control"]["rule"], [b["line"] for b in f["control"]["branches"]])
           for line, f in _controls(result).items()}
    assert got == {
        # if (clock) reassigns: the value before the `if` or the one inside it
        line_of("Date.now() > token.expiresAt"): ("volatile-comparison", [line_of("let text ="),
                                                                           line_of("text = 'Your session")]),
        # a ternary: both alternatives are on the test's line
        line_of("? 'Mode: online.'"): ("volatile-comparison", [line_of("? 'Mode: online.'")] * 2),
        # try { x = await fetch… } catch { x = … }: the try statement is the test
        line_of("try {", after="async function remoteNotes"): (
            "network-fallback", [line_of("notes = await res.text()"), line_of("notes = 'No remote notes.'")]),
        # returns in the try and in the catch
        line_of("try {", after="async function remoteRules"): (
            "network-fallback", [line_of("return await res.text()", after="async function remoteRules"),
                                 line_of("return 'Default rules.'")]),
        # an early return under a probe of the machine, and the return after it
        line_of("if (existsSync(`${dir}"): ("machine-probe", [line_of("return 'Follow PROMPT.md"),
                                                              line_of("return 'No project prompt.'")]),
    }


def test_a_control_finding_cites_the_test_and_its_alternatives_texts(result: dict[str, Any]) -> None:
    f = _controls(result)[line_of("Date.now() > token.expiresAt")]
    assert f["control"]["test"]["text"] == "Date.now() > token.expiresAt" and f["control"]["tested"] == "current-time"
    assert [b["text"] for b in f["control"]["branches"]] == ["'Welcome back.'",
                                                             "'Your session expired; sign in again.'"]
    assert f["steps"][0]["why"].startswith("volatile test (volatile-comparison)")
    assert any(s["why"] == "assigned to text" for s in f["steps"])
    assert f["sink"]["rule"] == "rendered-system-prompt" and f["sink"]["function"].endswith(":buildSystemPrompt")
    # a clock test changes at some request: the prefix breaks there; a probe differs per machine
    assert (f["granularity"], f["granularity_rule"], f["effect"]) == ("request", "current-time", "breaks-prefix")
    probe = _controls(result)[line_of("if (existsSync(`${dir}")]
    assert (probe["granularity"], probe["granularity_rule"], probe["effect"]) == ("machine", "machine-probe",
                                                                                 "cross-session")
    assert probe["neutralised_by"].startswith("leave what the machine happens to have")


def test_tests_that_select_nothing_are_not_findings(result: dict[str, Any]) -> None:
    controls = _controls(result)
    for quiet in (line_of("? 'Be concise.'"),  # the same text either way
                  line_of("Date.now() > token.expiresAt", after="function banner"),  # only logging
                  line_of("try {", after="function parsedLimit"),  # a parse, not a network call
                  line_of("return cwd ?"),  # the tested value itself is sent (its own finding)
                  line_of("if (existsSync('/etc/mini-choice'))")):  # both alternatives volatile
        assert quiet not in controls, controls[quiet]
    values = {(f["source"]["line"], f["source"]["text"]) for f in result["findings"] if f["kind"] != "control"}
    assert values == {(line_of("const cwd = process.cwd()"), "process.cwd()"),
                      (line_of("Home: ${homedir()}"), "homedir()"), (line_of("Home: ${__dirname}"), "__dirname")}


def test_json_schema_requires_the_alternatives(result: dict[str, Any]) -> None:
    assert validate_hazards_json(result) == []
    import copy

    broken = copy.deepcopy(result)
    i = next(i for i, f in enumerate(broken["findings"]) if f["kind"] == "control")
    broken["findings"][i]["control"]["branches"] = broken["findings"][i]["control"]["branches"][:1]
    assert validate_hazards_json(broken) == [f"findings[{i}].control: expected the test and two or more branches"]
    assert not any("control dependence (a prompt chosen" in lim for lim in result["limits"])


def test_text_output_prints_the_branches(world, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lock", str(world.lock_path), "--cache-dir", str(world.ctx.cache_dir), "hazards", "-v"]) == 1
    out = capsys.readouterr().out
    assert "control → system prompt" in out
    assert f"branch choice:{PATH}:{line_of('return ' + chr(39) + 'Default rules.')}  'Default rules.'" in out


def test_control_rules_are_validated(tmp_path: Path) -> None:
    rules = load_hazard_rules()
    assert {c.name for c in rules.controls} == {"volatile-comparison", "network-fallback", "machine-probe"}
    bad = tmp_path / "bad.toml"
    bad.write_text("[[control]]\nname = 'x'\nneutralised = 'n'\n")
    with pytest.raises(AnalyzerError, match="needs source_kinds, catch_calls or probe_calls"):
        load_hazard_rules([bad])
    bad.write_text("[[control]]\nname = 'x'\nneutralised = 'n'\nprobe_calls = ['stat']\n")
    with pytest.raises(AnalyzerError, match="needs a granularity"):
        load_hazard_rules([bad])
    bad.write_text("[[control]]\nname = 'x'\nneutralised = 'n'\nsource_kinds = ['weather']\n")
    with pytest.raises(AnalyzerError, match="source_kinds names unknown kinds"):
        load_hazard_rules([bad])


def test_a_field_of_a_selected_object_differs_only_if_an_alternative_writes_it(result: dict[str, Any]) -> None:
    """`{ ...decide(), label }.label` is the same whichever decision a clock test took; `.notes` is not."""
    path = "packages/choice/src/decision.ts"
    sinks = {f["sink"]["function"].rsplit(":", 1)[-1] for f in result["findings"]
             if f["kind"] == "control" and f["source"]["path"] == path}
    assert sinks == {"renderContextSections"}
