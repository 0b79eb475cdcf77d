"""Function values kept in collections and `fn.bind(x)`: who the edges name as the passer, and the
evidence lines they cite (graph fixture `dynamic/src/stored.ts`, declared types `dynamic/src/declared.ts`)."""

from __future__ import annotations

import pytest
from graphfixtures import build_world

S = "harness:packages/dynamic/src/stored.ts:"
D = "harness:packages/dynamic/src/declared.ts:"


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("stored")).analysis().graph


def _edge(graph, src: str, dst: str) -> dict:
    found = [d for _, v, d in graph.out_edges(src, data=True) if v == dst and d.get("rule") == "function-value"]
    assert len(found) == 1, found
    return found[0]


def test_a_stored_listener_runs_for_any_caller_and_cites_where_it_was_added(graph) -> None:
    e = _edge(graph, S + "Notifier.notify", S + "logCount")
    assert e["passer"] is None and e["possible"] and e["kind"] == "dispatch"
    assert any("listener is an element of this.listeners" in line for line in e["evidence"])
    assert any(":9: this.listeners.add(listener) stores it" in line for line in e["evidence"])
    assert any(":52: " in line and "logCount" in line for line in e["evidence"])  # the subscribe call


def test_a_bound_function_passed_as_an_argument_keeps_its_passer(graph) -> None:
    e = _edge(graph, S + "run", S + "Widget.render")
    assert e["passer"] == S + "kick"
    assert any("w.render.bind(…) is w.render with its this bound" in line for line in e["evidence"])


def test_declared_type_edges_cite_the_alias_chain_and_the_producer(graph) -> None:
    e = _edge(graph, D + "Picker", D + "Phrasebook.bind")
    assert e["possible"] and e["passer"] is None
    lines = e["evidence"]
    assert any("{ say } of Picker is typed PickerProps" in line for line in lines)
    assert any("type WithSpeech<N> = N extends" in line for line in lines)
    assert any("Phrasebook.bind returns Speak (a function type): the function it returns" in line for line in lines)


def test_the_function_value_pass_is_freed_without_the_cyclic_gc(tmp_path) -> None:
    """The build runs with the cyclic GC paused: the pass and its collection helper must not keep each other
    (and every memo table) alive through graph assembly — that cycle cost 150 MB of peak RSS on dsh + Pi."""
    import gc
    import sys

    from graphfixtures import fixture_program

    from analyzer.resolve.calls import CallResolver
    from analyzer.resolve.functionvalues import FunctionValues
    from analyzer.resolve.receivers import Types
    from analyzer.resolve.rules import load_rules
    from analyzer.resolve.symbols import SymbolResolver

    program = fixture_program(tmp_path)
    rules = load_rules()
    symbols = SymbolResolver(program)
    types = Types(program, symbols, rules.identity_wrappers)
    calls = CallResolver(program, symbols, types)
    gc.disable()
    try:
        fv = FunctionValues(program, symbols, types, calls, rules.function_values[0], rules.events)
        fv.edges([])
        # the local name and getrefcount's own argument: nothing the pass owns refers back to it (a cycle
        # would keep it alive when `del` drops the name; compiled classes take no weak references to check)
        assert sys.getrefcount(fv) == 2
    finally:
        gc.enable()
