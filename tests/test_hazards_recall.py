"""Flow shapes that kept values from the prompt: fields a non-constructor method fills and a getter hands out,
constructor parameter properties, and which message a message-history value lands in."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
from hazardfixtures import build_recall_world

from analyzer.cli import main
from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for
from analyzer.hazards.taints import Flow, Hit, Origin, Step

CORE = "packages/core/src/index.ts"
LOADER = "packages/loader/src/index.ts"
RUNTIME = "packages/core/src/runtime.ts"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    world = build_recall_world(tmp_path_factory.mktemp("recall"))
    analysis = world.analysis()
    return compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           include_near_misses=True)


def _found(result: dict[str, Any], path: str, text: str) -> dict[str, Any]:
    got = [f for f in result["findings"] if f["source"]["path"] == path and f["source"]["text"] == text]
    assert len(got) == 1, [(f["source"]["path"], f["source"]["text"]) for f in result["findings"]]
    return got[0]


def test_a_listing_stored_by_a_reload_method_reaches_the_prompt_through_a_getter(result: dict[str, Any]) -> None:
    f = _found(result, LOADER, "readdirSync(dir)")
    assert f["sink"]["part"] == "system prompt" and f["kind"] == "ordering"
    whys = [s["why"] for s in f["steps"]]
    assert "stored in this.plugins" in whys and "read from this.plugins" in whys
    assert any(w.startswith("returned by FolderCatalogue.getPlugins") for w in whys)


def test_a_constructor_parameter_property_carries_its_argument_to_the_methods(result: dict[str, Any]) -> None:
    f = _found(result, CORE, "homedir()")
    whys = [s["why"] for s in f["steps"]]
    assert "stored in this.root" in whys and "stored in this.notes" in whys
    assert f["sink"]["part"] == "system prompt" and f["granularity"] == "machine"


def test_a_loop_over_an_options_field_keeps_both_the_elements_and_their_order(result: dict[str, Any]) -> None:
    """`for (const { path } of options.notes) prompt += …`: the note paths (content) and the plugins' listing
    order (order only) both reach the prompt through the same options parameter."""
    paths = _found(result, CORE, "homedir()")
    assert "argument 1 of buildSystemPrompt() → buildSystemPrompt (direct)" in [s["why"] for s in paths["steps"]]
    assert _found(result, LOADER, "readdirSync(dir)")["sink"]["part"] == "system prompt"


def test_the_working_directory_still_lands_once(result: dict[str, Any]) -> None:
    assert _found(result, CORE, "process.cwd()")["sink"]["part"] == "system prompt"
    assert len(result["findings"]) == 7


def test_a_call_inside_a_provider_closure_follows_the_closures_own_edges(result: dict[str, Any]) -> None:
    f = _found(result, "packages/core/src/policy.ts", "process.cwd()")
    assert (f["sink"]["part"], f["effect"]) == ("runtime context", "tail-append")
    assert f["sink"]["position"] == {"name": "policy:workspace", "order": "10"}
    assert any(s["why"].startswith("argument 1 of policyText()") for s in f["steps"])


def test_a_callback_handed_over_in_an_object_gets_none_of_the_calls_arguments(result: dict[str, Any]) -> None:
    """`runner.bind(Date.now(), { setTools: (names) => … })`: the runner calls setTools later with its own
    names; the start time is not one of them."""
    assert not [f for f in result["findings"] if f["source"]["path"] == "packages/core/src/handoff.ts"]


def test_a_section_named_by_a_module_constant_lands_at_that_name(result: dict[str, Any]) -> None:
    f = _found(result, "packages/core/src/sections.ts", "import.meta.url")
    assert f["sink"]["position"] == {"name": "core:origin", "order": "-50"}


def test_a_nested_field_assignment_carries_the_value_under_that_path_only(result: dict[str, Any]) -> None:
    stamps = [f for f in result["findings"] if f["source"]["path"] == RUNTIME]
    assert [f["source"]["line"] for f in stamps] == [14]  # runtime.state.label, not runtime.state.log (line 8)


def test_field_writers_are_read_when_the_reader_sits_at_the_depth_bound(tmp_path: Path) -> None:
    world = build_recall_world(tmp_path)
    analysis = world.analysis()
    # Session.systemPrompt reads Shelf.getNames at depth 3; only Shelf.refresh (called off the request
    # side) writes the listing it returns
    res = compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           max_depth=3)
    f = _found(res, LOADER, "readdirSync(this.dir)")
    assert f["sink"]["part"] == "system prompt" and "read from this.names" in [s["why"] for s in f["steps"]]


def _hit(whys: list[str]) -> Hit:
    o = Origin("source", "counter", -1, "app", "a.ts", 1, "n++", "app:a.ts:f")
    flow = Flow(o, tuple(Step("app", "a.ts", 1, w) for w in whys))
    return Hit(flow, None)  # type: ignore[arg-type]


def test_a_message_value_is_new_unless_its_chain_reads_the_stored_history() -> None:
    from analyzer.hazards.model import message_origin

    rules = load_hazard_rules()
    assert message_origin(rules, _hit(["template literal", "property messages → message history"])) == "new"
    assert message_origin(rules, _hit(["stored in this.log", "read from this.history", "array element"])) == "replayed"
    assert message_origin(rules, _hit(["returned by Store.getEntries (method) to this call"])) == "replayed"
    assert message_origin(rules, _hit(["returned by Clock.stamp (method) to this call"])) == "new"


def test_message_history_findings_say_which_message(tmp_path: Path) -> None:
    from hazardfixtures import build_hazard_world

    world = build_hazard_world(tmp_path)
    analysis = world.analysis()
    res = compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis))
    messages = [f for f in res["findings"] if f["category"] == "value" and f["sink"]["part"] == "message history"]
    assert messages and all(f["sink"]["message"] in ("new", "replayed") for f in messages)
    others = [f for f in res["findings"] if f["category"] == "value" and f["sink"]["part"] != "message history"]
    assert others and all("message" not in f["sink"] for f in others)
    # the counter is put into the user message built for this request
    turn = [f for f in messages if f["source"]["text"] == "++this.turn"]
    assert [f["sink"]["message"] for f in turn] == ["new"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["--lock", str(world.lock_path), "--cache-dir", str(world.ctx.cache_dir), "hazards"])
    assert "message  new in this request" in buf.getvalue()


def test_a_chain_longer_than_the_cap_keeps_its_source_first_and_its_sink_last() -> None:
    from analyzer.hazards.taints import MAX_STEPS, compose_through

    o = Origin("source", "counter", -1, "app", "a.ts", 1, "n++", "app:a.ts:f")
    flow = Flow(o, (Step("app", "a.ts", 1, "source"),))
    for i in range(MAX_STEPS + 5):
        flow = flow.then(Step("app", "a.ts", 2 + i, f"hop {i}"))
    flow = flow.then(Step("app", "a.ts", 999, "sink"))
    assert len(flow.steps) == MAX_STEPS
    assert flow.steps[0].why == "source" and flow.steps[-1].why == "sink"
    hops = tuple(Step("app", "b.ts", 10 + i, f"inner {i}") for i in range(MAX_STEPS))
    param = Origin("param", "", 0, "app", "b.ts", 1, "x", "app:b.ts:g")
    inner = Flow(param, (*hops, Step("app", "b.ts", 500, "returned")))
    composed = compose_through(flow, inner, Step("app", "a.ts", 3, "call"), False)
    assert composed is not None and len(composed.steps) == MAX_STEPS
    assert composed.steps[0].why == "source" and composed.steps[-1].why == "returned"


def test_a_loaders_own_system_prompt_field_is_no_request_state(result: dict[str, Any]) -> None:
    assert not [f for f in result["findings"] if f["source"]["path"] == "packages/loader/src/prompt-file.ts"]
