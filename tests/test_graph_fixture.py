"""The call graph on the fixture monorepos: the exact edge set, negative cases, provenance, caching."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from graphfixtures import FIXTURES, build_world

from analyzer.analysis import analyze
from analyzer.cli import main
from analyzer.graph.store import graph_path

EXPECTED: dict[str, list] = {"edge": [], "absent": []}
for _part in sorted(FIXTURES.glob("expected_edges*.toml")):  # one file per group of shapes, merged
    for _key, _items in tomllib.loads(_part.read_text()).items():
        EXPECTED.setdefault(_key, []).extend(_items)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("graph"))


@pytest.fixture(scope="module")
def graph(world):
    return world.analysis().graph


def edge_set(g):
    return {(u, v, d["kind"], d["line"]) for u, v, d in g.edges(data=True)}


def test_exact_edge_set(graph) -> None:
    expected = {(e["from"], e["to"], e["kind"], e["line"]) for e in EXPECTED["edge"]}
    have = edge_set(graph)
    assert expected - have == set(), "missing edges"
    assert have - expected == set(), "unexpected edges"


def test_absent_pairs(graph) -> None:
    for rec in EXPECTED["absent"]:
        src, dst = rec["from"], rec["to"]
        assert dst in graph, f"absent pair names a node that does not exist: {dst}"
        bad = [(u, v) for u, v in graph.edges()
               if v == dst and (u == src or (src.endswith(":*") and u.startswith(src[:-1])))]
        assert bad == [], rec.get("why", "")


def test_every_edge_carries_evidence_and_a_known_kind(graph) -> None:
    for u, v, d in graph.edges(data=True):
        assert d["kind"] in {"direct", "method", "interface", "dispatch", "name"}
        assert d["evidence"] and d["evidence"][0].startswith(f"{d['path']}:{d['line']}:")
        assert 0 < d["confidence"] <= 1
        if d["kind"] == "dispatch":
            assert d["rule"], (u, v)


def test_dispatch_edges_name_their_rule_and_cite_the_registration(graph) -> None:
    step = "harness:packages/agent/src/loop.ts:AgentLoop.step"
    service = [d for _, v, d in graph.out_edges(step, data=True) if d.get("rule") == "service-injection"]
    assert service and all(any("super(…, 'llm')" in ev for ev in d["evidence"]) for d in service)
    lazy = [d for _, _, d in graph.edges(data=True) if d.get("rule") == "lazy-module-loader"]
    assert lazy and all(any("import(" in ev for ev in d["evidence"]) for d in lazy)


def test_interface_fan_out_marks_alternatives_possible(graph) -> None:
    fan = [d for _, _, d in graph.edges(data=True) if d["kind"] == "interface"]
    assert fan and all(d["possible"] for d in fan)


def test_nodes_are_stable_and_carry_body_hashes(world, graph) -> None:
    again = analyze(world.ctx, rebuild=True).graph
    assert set(again.nodes) == set(graph.nodes)
    node = graph.nodes["piai:packages/ai/src/api/completions.ts:parseChunkUsage"]
    assert node["body_hash"] and node["line"] < node["end_line"] and node["kind"] == "function"
    assert again.nodes["piai:packages/ai/src/api/completions.ts:parseChunkUsage"]["body_hash"] == node["body_hash"]


def test_warm_load_comes_from_the_cache_and_a_corrupt_cache_is_rebuilt(world, graph) -> None:
    warm = analyze(world.ctx)
    assert warm.from_cache and edge_set(warm.graph) == edge_set(graph)
    stored = next((world.ctx.cache_dir / "graphs").glob("*.pickle"))
    key = stored.name.split(".")[0]
    graph_path(world.ctx.cache_dir, key).write_bytes(b"garbage")
    rebuilt = analyze(world.ctx)
    assert not rebuilt.from_cache and edge_set(rebuilt.graph) == edge_set(graph)


def run_cli(world, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--lock", str(world.lock_path), "--cache-dir", str(world.ctx.cache_dir), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_callers_and_callees(world, capsys) -> None:
    from analyzer.api import callers

    (data,) = callers(world.ctx, ["parseChunkUsage"]).results
    assert {e["caller"] for e in data["edges"]} == {"piai:packages/ai/src/api/completions.ts:stream"}
    assert {e["kind"] for e in data["edges"]} == {"direct"}
    code, out, _ = run_cli(world, capsys, "callees", "AgentLoop.step")  # the text the command prints
    assert code == 0 and "dispatch:service-injection" in out and "PromptProjection.project" in out


def test_index_stats_command(world, capsys) -> None:
    code, out, _ = run_cli(world, capsys, "index", "--stats")
    assert code == 0
    for word in ("files", "nodes", "edges: dispatch", "unresolved calls", "rule lazy-module-loader"):
        assert word in out


def test_symbols_command_and_unknown_symbol(world, capsys) -> None:
    code, out, _ = run_cli(world, capsys, "symbols", "*Adapter*")
    assert code == 0 and "NativeAdapter" in out and "PiBridgeAdapter" in out
    code, _, err = run_cli(world, capsys, "callers", "NoSuchThing")
    assert code == 3 and err.startswith("error: unknown symbol 'NoSuchThing'") and "Traceback" not in err


def test_type_only_import_makes_no_edge(graph) -> None:
    # loop.ts imports `Context` and `Session` type-only: no edge targets a type declaration
    targets = {graph.nodes[v]["kind"] for _, v in graph.out_edges("harness:packages/agent/src/loop.ts:AgentLoop.step")}
    assert "interface" not in targets and "type_alias" not in targets


def test_fixture_lines_are_our_own() -> None:
    # guard against pasting upstream code into fixtures: they are small and written for these tests
    sizes = [p.stat().st_size for p in Path(FIXTURES).rglob("*.ts")]
    assert sizes and max(sizes) < 4000


def test_third_party_packages_are_counted_external_nodes(graph) -> None:
    node = graph.nodes["npm:zod"]
    assert node["kind"] == "external" and node["importing_files"] == 1 and node["calls"] == 1
    assert graph.in_degree("npm:zod") == 0  # counted, not followed
    assert graph.graph["stats"]["external_packages"] == 1 and graph.graph["stats"]["external_calls"] == 1
