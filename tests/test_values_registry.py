"""Slot registries: a registered component's props are what the registry assembles (registry.tsx fixture).

The exact edges and absent pairs are in tests/fixtures/graph/expected_edges.slots.toml (checked by
test_graph_fixture); these tests check the evidence each edge carries and that the conventions come from the
rule file, not from the code.
"""

from __future__ import annotations

import copy

import pytest
from graphfixtures import fixture_program

from analyzer.graph.build import build_graph
from analyzer.resolve.registries import RegistryRule
from analyzer.resolve.rules import load_rules

R = "harness:packages/dynamic/src/registry.tsx:"
P = "harness:packages/dynamic/src/panel-renderer.ts:"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory):
    return fixture_program(tmp_path_factory.mktemp("registry"))


def _graph(program, edit=None):
    rules = load_rules()
    if edit is not None:
        rules = copy.deepcopy(rules)
        for table in rules.function_values[0]["registry"]:
            edit(table)
    return build_graph(program, rules)


def _edge(g, src: str, dst: str, line: int) -> dict:
    found = [d for _, v, d in g.out_edges(src, data=True) if v == dst and d["line"] == line]
    assert found, f"no edge {src} -> {dst} at line {line}"
    return found[0]


@pytest.fixture(scope="module")
def graph(program):
    return _graph(program)


def test_an_inject_face_member_cites_the_registration_and_the_face(graph) -> None:
    d = _edge(graph, R + "Timeline", R + "install.inject.loadMore", 35)
    assert d["kind"] == "dispatch" and d["possible"] and d["rule"] == "function-value"
    ev = "\n".join(d["evidence"])
    assert "registry.tsx:97: ctx.slots.register(…, Timeline) registers it" in ev
    assert "rule slot-registry" in ev and "property 'loadMore' of the object the inject face returns" in ev


def test_a_hook_prop_is_the_renderers_hook_bound_from_the_hooks_compartment(graph) -> None:
    ev = "\n".join(_edge(graph, R + "Timeline", P + "observableHook", 33)["evidence"])
    assert "hooks.clock of the inject face is bound as useClock" in ev
    assert "panel-renderer.ts:8: observableHook(…) makes it" in ev


def test_owner_props_come_from_the_render_call_of_the_slot_name(graph) -> None:
    ev = "\n".join(_edge(graph, R + "Browser", R + "picked", 53)["evidence"])
    assert "renderSlot('browse.flow'" in ev and "gives the owner props" in ev
    assert "property 'onPicked'" in ev


def test_without_the_registry_table_no_registered_prop_is_reached(program) -> None:
    g = _graph(program, lambda t: t.update(register_calls=[]))
    gone = [(R + "Timeline", R + "install.inject.loadMore"), (R + "Browser", R + "listing"),
            (R + "Card", R + "Form.actions.edit"), (R + "Timeline", P + "observableHook"),
            (R + "Footer", P + "boundRenderSlot")]
    assert [pair for pair in gone if g.has_edge(*pair)] == []
    assert g.has_edge(R + "install", R + "PanelSlots.register")  # the call itself is still a method call


def test_the_register_call_and_the_spec_keys_are_read_from_the_rule(program) -> None:
    renamed = _graph(program, lambda t: t.update(inject_key="provide"))
    assert not renamed.has_edge(R + "Timeline", R + "install.inject.loadMore")
    assert renamed.has_edge(R + "Timeline", P + "boundRenderSlot")  # standard seats need no inject face
    no_seats = _graph(program, lambda t: t.update(standard={}))
    assert not no_seats.has_edge(R + "Host", P + "boundRenderSlot")
    assert no_seats.has_edge(R + "Timeline", R + "install.inject.loadMore")


def test_hook_source_names() -> None:
    rule = RegistryRule.from_table({"name": "r", "register_calls": ["slots.register"], "hooks_key": "hooks"})
    assert rule.hook_source("useClock") == "clock"
    assert rule.hook_source("useAgentLoopCard") == "agentLoopCard"
    assert rule.hook_source("user") is None and rule.hook_source("use") is None
    assert RegistryRule.from_table({"name": "r", "hooks_key": None}).hook_source("useClock") is None


def test_a_store_action_is_the_reducer_the_store_definition_names(graph, program) -> None:
    ev = "\n".join(_edge(graph, R + "Orders", R + "createOrderStore.actions.setOrder", 153)["evidence"])
    assert "store: createOrderStore(…) makes the store" in ev and "defineStore({ actions: … }) defines" in ev
    assert "the bound action runs this reducer" in ev
    g = _graph(program, lambda t: t.update(store_factories=[]))
    assert not g.has_edge(R + "Orders", R + "createOrderStore.actions.setOrder")
    assert not g.has_edge(R + "Row", R + "createOrderStore.actions.setOrder")


def test_owner_props_through_a_render_prop_closure(graph) -> None:
    ev = "\n".join(_edge(graph, R + "Browser", R + "chosen", 53)["evidence"])
    assert "owner is the parameter of the closure given as renderFlow to <PickFlow>" in ev
    assert "PickFlow calls renderFlow(flowOwner)" in ev and "property 'onPicked'" in ev


def test_injects_last_parameter_holds_the_store_actions_when_a_store_is_declared(program) -> None:
    src = R + "installInspector.inject.inspect"
    dst = R + "createOrderStore.actions.setOrder"
    assert _graph(program).has_edge(src, dst)
    assert not _graph(program, lambda t: t.update(store_key=None)).has_edge(src, dst)  # no store, no actions


def test_a_prop_taken_off_props_in_the_body_cites_that_line(graph) -> None:
    ev = _edge(graph, R + "Reader", P + "boundRenderSlot", 211)["evidence"]
    assert ev[1] == "packages/dynamic/src/registry.tsx:209: renderSlot is taken from props.renderSlot"
    ev = _edge(graph, R + "Reader", R + "installReader.inject.scroll.save", 210)["evidence"]
    assert "packages/dynamic/src/registry.tsx:209: scroll is taken from props.scroll" in ev
    assert "packages/dynamic/src/registry.tsx:225: property 'save' of the object given as scroll" in ev
