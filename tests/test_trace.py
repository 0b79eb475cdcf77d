"""`analyze trace` on the fixture monorepos: anchoring, source order, direct reach, seams, names, output."""

from __future__ import annotations

import json

import pytest
from graphfixtures import build_world

from analyzer.cli import main
from analyzer.trace.pathfinding import find_paths
from analyzer.trace.render import render_mermaid, validate_mermaid
from analyzer.trace.result import trace_result, validate_trace_json

STEP = "harness:packages/agent/src/loop.ts:AgentLoop.step"
WARMUP = "harness:packages/agent/src/loop.ts:AgentLoop.warmup"
PROJECT = "harness:packages/prompt/src/projection.ts:PromptProjection.project"
PARSE = "piai:packages/ai/src/api/completions.ts:parseChunkUsage"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("trace"), trace=("PromptProjection", "parseChunkUsage"))


@pytest.fixture(scope="module")
def graph(world):
    return world.analysis().graph


def trace_cli(world, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--lock", str(world.lock_path), "--cache-dir", str(world.ctx.cache_dir), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_common_caller_is_the_lowest_valid_anchor(graph) -> None:
    (best,) = find_paths(graph, [PROJECT], [PARSE])
    assert best.mode == "common-caller" and best.anchor == STEP
    assert best.from_branch[0].target == PROJECT
    assert best.to_branch[-1].target == PARSE
    # the FROM branch leaves the anchor before the TO branch does (source order in the anchor's body)
    assert best.from_branch[0].order < best.to_branch[0].order


def test_a_caller_reaching_to_before_from_is_not_an_anchor(graph) -> None:
    # warmup reaches both, but streams (line 36) before it projects (line 39)
    anchors = {p.anchor for p in find_paths(graph, [PROJECT], [PARSE], k=50)}
    assert WARMUP not in anchors
    assert STEP in anchors
    assert all(p.from_branch[0].order < p.to_branch[0].order for p in find_paths(graph, [PROJECT], [PARSE], k=50))


def test_removing_the_valid_anchor_leaves_only_higher_callers(graph) -> None:
    g = graph.copy()
    g.remove_node(STEP)
    anchors = {p.anchor for p in find_paths(g, [PROJECT], [PARSE], k=50)}
    assert WARMUP not in anchors and STEP not in anchors


def test_direct_reach(graph) -> None:
    probe = "harness:packages/llm-pi/src/adapter.ts:PiBridgeAdapter.probe"
    (best,) = find_paths(graph, [probe], [PARSE])
    assert best.mode == "direct" and best.anchor is None
    assert [s.target.rsplit(":", 1)[1] for s in best.to_branch][-2:] == ["stream", "parseChunkUsage"]


def _traced(world) -> dict:
    """The library's trace at the fixture lock's `[trace]` (its `analyzer.trace/1` document)."""
    from analyzer.api import TraceOptions, trace

    result = trace(world.ctx, TraceOptions())
    assert result.found
    return result.document


def test_dispatch_hop_lists_the_other_live_targets(world) -> None:
    data = _traced(world)
    assert data["mode"] == "common-caller" and data["anchor"] == STEP
    seams = [e for e in data["edges"] if e["kind"] in ("interface", "dispatch")]
    assert seams, "the fixture path crosses dynamic seams"
    alternatives = {a.rsplit(":", 1)[1] for e in seams for a in e["alternatives"]}
    assert "NativeAdapter.stream" in alternatives  # the adapter map also holds the native adapter
    lazy = [e for e in data["edges"] if e.get("rule") == "lazy-module-loader"]
    assert lazy and any(a.endswith("messages.ts:streamSimple") for a in lazy[0]["alternatives"])


def test_text_output_shows_lines_kinds_and_alternatives(world, capsys) -> None:
    code, out, _ = trace_cli(world, capsys, "trace", "PromptProjection", "parseChunkUsage")
    assert code == 0
    assert "AgentLoop.step" in out and "(anchor)" in out
    assert "line 21" in out and "line 24" in out
    assert "other live targets at this seam" in out
    assert "\x1b[" not in out  # plain text in a pipe


def test_json_schema_round_trip(world, graph, capsys) -> None:
    data = _traced(world)
    assert validate_trace_json(data) == []
    code, out, _ = trace_cli(world, capsys, "--json", "trace")  # the command prints that document
    assert code == 0 and json.loads(out) == data
    assert json.loads(json.dumps(data)) == data
    assert data["pins"]["harness"]["commit"] == world.commits["harness"]
    hop_nodes = [h["node"] for h in data["hops"]]
    assert hop_nodes[0] == STEP and hop_nodes[-1] == PARSE
    for hop in data["hops"][1:]:
        edge = data["edges"][hop["via"]]
        assert edge["target"] == hop["node"]
    broken = dict(data, hops=[dict(data["hops"][1], via=999)])
    assert validate_trace_json(broken)


def test_mermaid_output_is_well_formed(world, capsys) -> None:
    code, out, _ = trace_cli(world, capsys, "trace", "--mermaid")
    assert code == 0 and out.startswith("flowchart TD\n")
    assert validate_mermaid(out) == []
    listed = json.loads(trace_cli(world, capsys, "--json", "trace")[1])["edges"]
    assert out.count("-->") + out.count("-.->") == len(listed)
    assert validate_mermaid(out.replace("flowchart TD", "graph")) != []
    assert validate_mermaid(out + "  n99 --> n0\n") != []


def test_mermaid_without_a_path_says_so_and_json_mermaid_is_refused(world, capsys) -> None:
    code, out, err = trace_cli(world, capsys, "trace", "parseChunkUsage", "summarize", "--mermaid")
    assert code == 1 and out == ""
    assert err.startswith("no request path from parseChunkUsage to summarize, so no flowchart to draw")
    code, out, err = trace_cli(world, capsys, "--json", "trace", "--mermaid")
    assert code == 2 and out == "" and err.startswith("error: --json and --mermaid both choose the output")


def test_unknown_name_suggests_close_ones(world, capsys) -> None:
    code, _, err = trace_cli(world, capsys, "trace", "SystemPromptProjection", "parseChunkUsage")
    assert code == 3 and "Traceback" not in err
    assert err.count("\n") == 1 and "unknown symbol 'SystemPromptProjection'" in err
    assert "PromptProjection" in err


def test_ambiguous_name_lists_candidates(world, capsys) -> None:
    code, out, _ = trace_cli(world, capsys, "trace", "project", "parseChunkUsage")
    assert "ambiguous" in out and "ChangeLog.project" not in out.split("ambiguous", 1)[0]
    assert "projection.ts" in out  # candidates are listed with their places
    from analyzer.api import callers

    (stream,) = callers(world.ctx, ["stream"]).results
    assert len({e["callee"] for e in stream["edges"]}) > 1


def test_no_path_is_said_not_raised(world) -> None:
    from analyzer.api import TraceOptions, trace

    result = trace(world.ctx, TraceOptions("parseChunkUsage", "ChangeLog.project"))
    assert not result.found and result.document["hops"] == []


def test_no_path_exits_one(world, capsys) -> None:
    # nothing that calls the unrelated ChangeLog.project (only `summarize` does) reaches parseChunkUsage
    code, out, _ = trace_cli(world, capsys, "trace", "parseChunkUsage", "ChangeLog.project")
    assert code == 1 and "no request path found" in out


def test_trace_result_without_paths_is_valid(graph) -> None:
    assert validate_trace_json(trace_result(graph, "a", "b", [], {})) == []
    assert render_mermaid(trace_result(graph, "a", "b", [], {})) == "flowchart TD\n"


def test_all_lists_each_alternative_as_its_own_branch(world, capsys) -> None:
    from analyzer.api import TraceOptions, trace

    data = trace(world.ctx, TraceOptions(alternatives=4)).document
    alts = data["alternatives"]
    assert alts
    for alt in alts:
        assert alt["anchor"] not in alt["from_branch"] + alt["to_branch"]  # never through its own anchor twice
        if alt["mode"] == "common-caller":
            assert alt["from_branch"][-1].startswith(tuple(data["candidates"]["from"]))  # a class: one of its methods
            assert alt["hops"] == [alt["anchor"], *alt["from_branch"], *alt["to_branch"]]
        assert alt["to_branch"][-1].startswith(tuple(data["candidates"]["to"]))
    _, text, _ = trace_cli(world, capsys, "trace", "--all", "4")
    block = text.split("alternative 1 ", 1)[1].split("alternative 2 ", 1)[0]
    first = alts[0]
    if first["mode"] == "common-caller":
        anchor = first["anchor"].split(":", 2)[2]
        assert f"anchor  {anchor}" in block
        assert f"FROM    {anchor} → " in block and f"TO      {anchor} → " in block


def test_a_path_back_through_its_own_anchor_is_no_alternative() -> None:
    import networkx as nx

    g = nx.MultiDiGraph()
    for n in "XSFPT":
        g.add_node(n, path="a.ts", test=False)
    # X calls S (line 1), which calls X back; X reaches TO through P (line 2) and FROM only at line 3, after
    # it: the one "anchored" pair is X → S → X → F before X → P → T, through X twice
    for u, v, line in (("X", "S", 1), ("S", "X", 1), ("X", "P", 2), ("X", "F", 3), ("P", "T", 1)):
        g.add_edge(u, v, kind="direct", line=line, path="a.ts", confidence=1.0)
    assert find_paths(g, ["F"], ["T"], k=5) == []
