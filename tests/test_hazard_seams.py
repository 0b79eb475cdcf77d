"""Value flow through the seams: named events, forwarders and registries map arguments to parameters."""

from __future__ import annotations

from typing import Any

import pytest
from hazardfixtures import build_seam_world

from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    world = build_seam_world(tmp_path_factory.mktemp("seams"))
    analysis = world.analysis()
    return compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           include_near_misses=True)


def _findings(result: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["category"] == "value" and f["source"]["path"] == path]


def _from(result: dict[str, Any], path: str, line: int) -> dict[str, Any]:
    found = [f for f in _findings(result, path) if f["source"]["line"] == line]
    assert len(found) == 1, [(f["source"]["line"], f["sink"]["line"]) for f in _findings(result, path)]
    return found[0]


EVENTS = "packages/host/src/events.ts"


def test_an_emitted_value_reaches_the_listener_parameter_after_the_event_name(result: dict[str, Any]) -> None:
    f = _from(result, EVENTS, 5)
    assert f["sink"]["line"] == 9 and f["sink"]["rule"] == "set-system-prompt"
    assert any("argument 3 of bus.emit()" in s["why"] and "onStamp" in s["why"] for s in f["steps"])


def test_a_listener_that_ignores_the_emitted_value_is_no_finding(result: dict[str, Any]) -> None:
    assert not [f for f in _findings(result, EVENTS) if f["source"]["line"] == 44]


def test_an_inline_waterfall_listener_returns_its_value_to_the_emitter(result: dict[str, Any]) -> None:
    f = _from(result, EVENTS, 21)
    assert f["sink"]["line"] == 27
    assert any("returned by" in s["why"] and "listener of 'turn/prepare'" in s["why"] for s in f["steps"])


def test_an_inline_listener_handed_to_on_is_no_cut_flow_when_an_emitter_runs_it(result: dict[str, Any]) -> None:
    cut = [m for m in result["near_misses"] if "bus.on()" in m["reason"]]
    assert [(m["source"]["line"], m["sink"]["line"], m["dismissed_by"]) for m in cut] == [(57, 57, "not-followed")]
    assert [p["line"] for p in result["cut_flows"]["places"] if p["path"] == EVENTS] == [57]


def test_what_a_listener_adds_to_its_argument_reaches_the_emitter(result: dict[str, Any]) -> None:
    f = _from(result, EVENTS, 63)
    assert f["sink"]["line"] == 70
    assert any("added to argument 3 by" in s["why"] and "listener of 'prompt/assemble'" in s["why"]
               for s in f["steps"])


def test_the_waterfall_default_next_is_the_listener_last_parameter(result: dict[str, Any]) -> None:
    f = _from(result, EVENTS, 37)
    assert f["sink"]["line"] == 38 and f["source"]["text"] == "process.cwd()"
    assert any("argument 3 of bus.waterfall()" in s["why"] for s in f["steps"])


def test_a_value_given_to_a_registry_reaches_the_factory_registered_earlier(result: dict[str, Any]) -> None:
    f = _from(result, "packages/host/src/registry.ts", 39)
    assert f["sink"]["line"] == 33 and f["possible"]
    assert any("argument 3 of Reflect.apply() → PromptLoop.open (dispatch:registered-factory, forwarded by "
               "reflect-apply)" in s["why"] for s in f["steps"])
    assert not [x for x in _findings(result, "packages/host/src/registry.ts") if x["sink"]["line"] != 33]


def test_a_parameter_flow_cut_at_a_constructor_without_an_edge_is_a_near_miss(result: dict[str, Any]) -> None:
    miss = [m for m in result["near_misses"] if m["source"]["path"] == "packages/host/src/cuts.ts"]
    assert len(miss) == 1 and miss[0]["dismissed_by"] == "not-followed"
    assert miss[0]["sink"]["line"] == 9 and "new ExternalStamp()" in miss[0]["reason"]
    assert any("argument 1 of describe()" in s["why"] for s in miss[0]["steps"])
    assert any(p["path"] == "packages/host/src/cuts.ts" and p["line"] == 9 for p in result["cut_flows"]["places"])


PROVIDERS = "packages/host/src/providers.ts"


def test_a_provider_registered_by_name_gives_what_it_returns_at_every_assembly(result: dict[str, Any]) -> None:
    f = _from(result, PROVIDERS, 9)
    assert f["sink"]["rule"] == "prompt-variable" and f["sink"]["line"] == 18
    assert f["sink"]["position"] == {"name": "now"}
    assert any("returned by provider renderNow, run at every assembly" in s["why"] for s in f["steps"])
    method = _from(result, PROVIDERS, 28)
    assert method["sink"]["rule"] == "prompt-section-text" and method["sink"]["line"] == 24


def test_fixture_has_no_other_findings(result: dict[str, Any]) -> None:
    places = sorted((f["source"]["path"], f["source"]["line"], f["sink"]["line"]) for f in result["findings"])
    assert places == [("packages/host/src/events.ts", 5, 9), ("packages/host/src/events.ts", 21, 27),
                      ("packages/host/src/events.ts", 37, 38), ("packages/host/src/events.ts", 63, 70),
                      (PROVIDERS, 9, 18), (PROVIDERS, 28, 24),
                      ("packages/host/src/registry.ts", 39, 33)]



def test_a_listener_cut_by_the_depth_bound_deep_in_a_chain_is_made_again_nearer_its_emitter(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    from analyzer.hazards.candidates import Candidates
    from analyzer.hazards.driver import Engine
    from analyzer.hazards.rules import load_hazard_rules
    from analyzer.hazards.syntax import SourceFiles

    world = build_seam_world(tmp_path_factory.mktemp("seams-depth"))
    analysis = world.analysis()
    commits = {p.name: p.commit for p in analysis.pins}
    rules = load_hazard_rules()
    engine = Engine(analysis.graph, SourceFiles(git_dirs_for(world.ctx, analysis), commits), rules,
                    Candidates(index_facts_for(world.ctx, analysis), rules), max_depth=2)
    holder = next(n for n in analysis.graph if n.endswith(":installClock"))
    rule = engine.seams.rules.event({"seam": "event:turn/prepare", "rule": "named-events"})
    assert rule is not None
    [(pf, closure)] = engine.seams.listeners(holder, "turn/prepare", rule)
    deep = engine.seams.closure_summary(holder, pf, closure, 2)
    assert deep is not None and deep.truncated
    near = engine.seams.closure_summary(holder, pf, closure, 0)
    assert near is not None and near is not deep  # made again from depth 0, then kept for deeper callers
    assert engine.seams.closure_summary(holder, pf, closure, 1) is near
