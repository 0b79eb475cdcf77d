"""Resolution in forked workers gives exactly the serial graph: same edges in the same order, same
unresolved calls, same rule-match counts (speed without changing semantics)."""

from __future__ import annotations

import multiprocessing

import pytest
from graphfixtures import fixture_program, graph_snapshot

import analyzer.resolve.parallel as parallel
from analyzer.gcpause import gc_paused
from analyzer.graph.build import build_graph
from analyzer.resolve.rules import load_rules


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory):
    return fixture_program(tmp_path_factory.mktemp("parallel"))


_snapshot = graph_snapshot


def test_forked_resolution_equals_the_serial_loop(program, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = load_rules()
    with gc_paused():
        serial = build_graph(program, rules, workers=1)
    monkeypatch.setattr(parallel, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(parallel, "CHUNKS_PER_WORKER", 3)  # several chunks per worker: merging order matters
    forks = []
    real = multiprocessing.get_context

    def spy(method: str):
        forks.append(method)
        return real(method)

    monkeypatch.setattr(parallel.multiprocessing, "get_context", spy)
    with gc_paused():
        forked = build_graph(program, rules, workers=3)
    assert forks == ["fork"]  # the pool ran (a failure to fork would have logged and fallen back)
    assert serial.number_of_edges() > 0 and serial.graph["stats"]["rule_matches"]
    assert _snapshot(forked) == _snapshot(serial)
