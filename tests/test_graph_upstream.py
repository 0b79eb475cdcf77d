"""The graph and the trace on the real snapshots (dsh rc.2 + Pi v0.82.1). Skips when they are absent.

These pins predate `SystemPromptProjection`: there the system prompt is rendered by `renderPrompt` and
sent as a request field, so the research trace is checked as `renderPrompt → parseChunkUsage`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DSH_RC2, PI_V0_82_1, snapshot

from analyzer.analysis import analyze
from analyzer.api import open_session
from analyzer.cli import main

pytestmark = pytest.mark.upstream

ADAPTER = "dsh:packages/llm/llm-pi-ai/src/"
PARSE = "pi:packages/ai/src/api/openai-completions.ts:parseChunkUsage"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    dsh = snapshot("deepseek-ai+deepseek-harness", DSH_RC2)
    pi = snapshot("at-inc+pi", PI_V0_82_1)
    tmp = tmp_path_factory.mktemp("upstream-graph")
    lock = tmp / "repos.lock"
    lock.write_text(f"""
[repos.dsh]
url = "{dsh}"
commit = "{DSH_RC2}"

[repos.pi]
url = "{pi}"
commit = "{PI_V0_82_1}"
aliases = ["@mariozechner/pi-ai"]

[trace]
from = "renderPrompt"
to = "parseChunkUsage"
""")
    return lock, tmp / "cache"


@pytest.fixture(scope="module")
def graph(world):
    lock, cache = world
    return analyze(open_session(lock, cache_dir=cache, environ={})).graph


def cli(world, capsys, *args: str) -> tuple[int, str, str]:
    lock, cache = world
    code = main(["--lock", str(lock), "--cache-dir", str(cache), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_indexes_both_repos_without_crashing(graph) -> None:
    stats = graph.graph["stats"]
    index = graph.graph["index_stats"]
    assert index["dsh"]["files"] > 2500 and index["pi"]["files"] > 500
    assert stats["files"] == index["dsh"]["files"] + index["pi"]["files"]
    assert stats["edges_by_kind"]["dispatch"] > 0 and stats["edges_by_kind"]["interface"] > 0


def test_callers_of_parse_chunk_usage(world, graph, capsys) -> None:
    code, out, _ = cli(world, capsys, "--json", "callers", "parseChunkUsage")
    assert code == 0
    callers = {(e["caller"], e["kind"]) for e in json.loads(out)["edges"]}
    assert ("pi:packages/ai/src/api/openai-completions.ts:stream", "direct") in callers


def test_agent_step_reaches_the_llm_runtime(graph) -> None:
    step = "dsh:packages/core/agent-loop/src/agent.ts:ReactLoopAgent.step"
    callees = {(v.rsplit(":", 1)[1], d["kind"]) for _, v, d in graph.out_edges(step, data=True)}
    assert ("LlmRuntime.stream", "dispatch") in callees  # this.loopCtx.llm.stream: the 'llm' service
    assert ("LlmRuntime.prepareCall.stream", "interface") in callees  # preparedCall?.stream
    build = "dsh:packages/core/agent-loop/src/agent.ts:ReactLoopAgent.buildRequest"
    assert any(v.endswith("LlmRuntime.prepareCall") for _, v in graph.out_edges(build))


def test_trace_crosses_from_dsh_into_pi_through_the_adapter(world, capsys) -> None:
    code, out, _ = cli(world, capsys, "--json", "trace", "renderPrompt", "parseChunkUsage")
    assert code == 0
    data = json.loads(out)
    assert data["mode"] == "common-caller"
    assert data["anchor"].endswith("ReactLoopAgent.step")
    nodes = [h["node"] for h in data["hops"]]
    assert nodes[-1] == PARSE
    assert any(n.startswith(ADAPTER) for n in nodes), "the path goes through the llm-pi-ai adapter"
    first_pi = next(i for i, n in enumerate(nodes) if n.startswith("pi:"))
    assert all(n.startswith("dsh:") for n in nodes[:first_pi]) and all(n.startswith("pi:") for n in nodes[first_pi:])
    lazy = [e for e in data["edges"] if e.get("rule") == "lazy-module-loader"]
    assert lazy and lazy[0]["alternatives"], "the lazy API table has other live targets"


def test_system_prompt_projection_is_unknown_at_rc2(world, capsys) -> None:
    code, _, err = cli(world, capsys, "trace", "SystemPromptProjection", "parseChunkUsage")
    assert code == 3 and err.startswith("error: unknown symbol 'SystemPromptProjection'; closest:")
    assert "RuntimeContextProjection" in err and "renderPrompt" in err


def test_guesses_never_cross_repos_nor_bind_globals(graph) -> None:
    guesses = [(u, v, d) for u, v, d in graph.edges(data=True) if d["kind"] == "name"]
    assert all(u.split(":", 1)[0] == v.split(":", 1)[0] for u, v, _ in guesses)
    globals_ = {"Math", "JSON", "Object", "Buffer", "AbortSignal", "Promise", "Array", "Number", "String", "console"}
    assert not [d["call_text"] for _, _, d in guesses if d["call_text"].split(".")[0] in globals_]
    # Pi's parseChunkUsage calls Math.max: no edge into dsh's vendored code
    assert all(v.startswith("pi:") for v in graph.successors(PARSE))


def test_merged_declarations_have_their_callers(graph) -> None:
    halves = [n for n in graph if n.endswith(":CompactionId") and graph.nodes[n]["kind"] == "function"]
    assert halves and f"{halves[0]}#type" in graph
    assert graph.in_degree(halves[0]) >= 10  # `CompactionId(` is called all over dsh


def test_constructor_options_reach_the_closure_given(graph) -> None:
    src = ADAPTER + "adapter.ts:PiAiAdapter.streamWithSnapshot"
    targets = {v for _, v, d in graph.out_edges(src, data=True) if d["call_text"].endswith("resolveApiKey")}
    assert ADAPTER + "index.ts:apply.resolveApiKey" in targets


def test_callees_of_an_ambiguous_name_list_each_definition(world, capsys) -> None:
    code, out, _ = cli(world, capsys, "--json", "callees", "renderPrompt", "parseChunkUsage")
    data = json.loads(out)
    assert code == 0
    by = {r["symbol"]: r for r in data["results"]}
    assert by["renderPrompt"]["ambiguous"] and len(by["renderPrompt"]["definitions"]) == 2
    assert not by["parseChunkUsage"]["ambiguous"]


def test_computed_keys_and_runtime_mixins_on_dsh(graph) -> None:
    # ctx.tools[TOOL_RUNTIME_SCHEDULER].prepare(…): the field `[TOOL_RUNTIME_SCHEDULER]` initialised with a literal
    prepare = "dsh:packages/core/tools/src/index.ts:ToolRuntime.[TOOL_RUNTIME_SCHEDULER].prepare"
    sites = {d["path"] for _, _, d in graph.in_edges(prepare, data=True)}
    assert "packages/core/agent-loop/src/tool-calls.ts" in sites
    # cordis: `interface Context extends Pick<Fiber, 'effect'>` → ctx.effect(…) reaches Fiber.effect, possible
    effect = [d for _, _, d in graph.in_edges("dsh:vendor/cordis/src/fiber.ts:Fiber.effect", data=True)]
    assert effect and all(d["possible"] for d in effect if d["kind"] == "interface")
    assert any("Pick<Fiber, 'effect'>" in ev for d in effect for ev in d["evidence"])


def test_the_stored_view_reads_back_the_built_graph(world, graph) -> None:
    """The lazily-loaded view, and the full graph rebuilt from it, equal the graph as built."""
    lock, cache = world
    warm = analyze(open_session(lock, cache_dir=cache, environ={}))
    assert warm.from_cache and warm._graph is None
    view = warm.view
    assert list(view.nodes(data=True)) == list(graph.nodes(data=True))
    for n in list(graph)[::25]:
        assert list(view.in_edges(n, data=True, keys=True)) == list(graph.in_edges(n, data=True, keys=True))
        assert list(view.out_edges(n, data=True, keys=True)) == list(graph.out_edges(n, data=True, keys=True))
        assert list(view.predecessors(n)) == list(graph.predecessors(n))
    back = warm.graph
    assert list(back.edges(keys=True, data=True)) == list(graph.edges(keys=True, data=True))
    assert all(list(back._pred[n]) == list(graph._pred[n]) for n in graph)


def test_translators_reach_the_closure_the_locale_service_binds(graph) -> None:
    """values-types: `{ t }: PopupSelectInjected & PropsLocale<'command'>` is read through the intersection, the
    conditional alias and `TranslateNS<N>` to `Translate`, whose producer is the closure `bind` returns."""
    view = "dsh:packages/client/ui-commands/src/client/PopupSelectView.tsx:PopupSelectView"
    bind = "dsh:packages/client/locale/src/client/index.ts:LocaleRuntime.bind"
    found = [d for _, v, d in graph.out_edges(view, data=True) if v == bind]
    assert found and all(d["rule"] == "function-value" and d["possible"] for d in found)
    lines = found[0]["evidence"]
    assert any("type PropsLocale<N> = N extends" in e for e in lines)
    assert any("LocaleRuntime.bind returns Translate" in e for e in lines)
    # a hook of the `hooks` compartment: the slot registry's renderer binds it (values-slots), which is more
    # specific than the mapped type's producers (values-types' fallback, used only when nothing is followed)
    hooks = {v for _, v, d in graph.out_edges("dsh:packages/client/ui-trajectory/src/client/TrajectoryView.tsx:"
                                              "TrajectoryView", data=True)
             if d.get("rule") == "function-value" and any("useDuration(" in e for e in d["evidence"])}
    assert hooks == {"dsh:packages/client/ui-renderer/src/client/session-provider.tsx:observableHook"}
