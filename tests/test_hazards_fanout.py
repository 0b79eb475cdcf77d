"""A callee's sink is replayed at every call: a summary keeps one hit per flow shape and sink, not one per
call path (tests/fixtures/hazards/fanout-app, 27 paths from `main` to one sink). Kept per path, a real
repo's summaries grew to a million hits and the scan ran out of memory."""

from __future__ import annotations

import hazardfixtures as hf
import pytest
from hazardmarkers import markers, unmet

from analyzer.hazards.candidates import Candidates
from analyzer.hazards.driver import Engine
from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for
from analyzer.hazards.syntax import SourceFiles

FILE = "packages/fanout/src/index.ts"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> hf.FixtureWorld:
    return hf.build_single_world(tmp_path_factory.mktemp("fanout"), "app", "fanout-app")


def test_the_finding_is_reported_once_with_the_shortest_chain(world: hf.FixtureWorld) -> None:
    a = world.analysis()
    result = compute_hazards(a, git_dirs_for(world.ctx, a), index_facts_for(world.ctx, a), include_near_misses=True)
    tables = {name: e["table"] for name, e in load_hazard_rules().explanations.items()}
    marks = markers(hf.FIXTURES / "fanout-app", "app")
    assert [m.rule for m in marks if m.kind == "hazard"] == ["current-time"]
    assert unmet(result, marks, tables) == []
    clock = [f for f in result["findings"] if f["source"]["text"] == "Date.now()"]
    assert len(clock) == 1
    whys = [s["why"] for s in clock[0]["steps"]]
    assert any("→ level3" in w for w in whys) and not any("detour" in w for w in whys), whys


def test_each_summary_holds_one_hit_per_sink_not_one_per_call_path(world: hf.FixtureWorld) -> None:
    a = world.analysis()
    rules = load_hazard_rules()
    files = SourceFiles(git_dirs_for(world.ctx, a), {p.name: p.commit for p in a.pins})
    try:
        engine = Engine(a.graph, files, rules, Candidates(index_facts_for(world.ctx, a), rules), max_depth=6)
        engine.run(["app"])
    finally:
        files.close()
    counts = {name: len(engine.summaries[f"app:{FILE}:{name}"].sinks)
              for name in ("level1", "level2", "level3", "main")}
    # per path these would be 3, 9, 27 and 27: every call of the level below replays all its hits
    assert counts == {"level1": 1, "level2": 1, "level3": 1, "main": 1}
    (hit,) = engine.summaries[f"app:{FILE}:main"].sinks
    assert hit.flow.origin.text == "Date.now()" and hit.site.part == "system prompt"
