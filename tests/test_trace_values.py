"""Traces through function-value edges stay with the caller that passed the value."""

from __future__ import annotations

import pytest
from graphfixtures import build_world

from analyzer.trace.pathfinding import find_paths

H = "harness:packages/dynamic/src/callbacks.ts:"


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("values")).analysis().graph


def test_a_passed_function_is_reached_through_the_callee(graph) -> None:
    paths = find_paths(graph, [H + "load"], [H + "fetchOnce"])
    assert paths and [(s.source, s.target) for s in paths[0].steps] == [
        (H + "load", H + "withRetry"), (H + "withRetry", H + "fetchOnce")]
    assert paths[0].steps[1].attrs["rule"] == "function-value" and paths[0].steps[1].attrs["passer"] == H + "load"


def test_what_another_caller_passed_is_not_on_this_callers_path(graph) -> None:
    # loadInline calls withRetry too, but passes no onError: logFailure (load's) must not be reached from it
    assert graph.has_edge(H + "withRetry", H + "logFailure") and graph.has_edge(H + "loadInline", H + "withRetry")
    assert find_paths(graph, [H + "loadInline"], [H + "logFailure"]) == []
    # starting inside withRetry, every value that may arrive is a possible route
    assert find_paths(graph, [H + "withRetry"], [H + "logFailure"])


def test_a_value_stored_in_a_field_runs_for_any_caller(graph) -> None:
    run = [d for _, v, d in graph.out_edges(H + "Runner.run", data=True) if v == H + "announce"]
    assert run and run[0]["passer"] is None  # stored by the constructor: not tied to the caller that passed it
    begin = [d for _, v, d in graph.out_edges(H + "begin", data=True) if v == H + "announce"]
    assert begin and begin[0]["passer"] == H + "boot"
