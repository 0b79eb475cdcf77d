"""Differential check: the same located functions, type-stripped, give identical JSON in Node."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DSH_RC2, PI_V0_58_3, PI_V0_82_1
from test_usage_fixtures import DSH_FILES, PI_FILES, PI_OLD_FILES
from usage_upstream_locators import index_cache, upstream_locator  # noqa: F401  (fixture)

from analyzer.usage.ledger import HOPS, ReplaySession, reconcile, reconcile_routes, routes_for
from analyzer.usage.locate import MemoryLocator
from analyzer.usage.nodecheck import NodeCall, node_binary, run_in_node, write_bundle
from analyzer.usage.scenarios import load_scenario, parse_scenario, shipped_names
from analyzer.usage.striptypes import strip_types
from analyzer.usage.values import JSObject, from_python

pytestmark = pytest.mark.node


@pytest.fixture(autouse=True)
def _need_node() -> None:
    if node_binary() is None:
        pytest.skip("node is not on PATH")


def extra_dsh_calls(session: ReplaySession) -> None:
    """Inputs beyond the scenarios: the replacement path of the fold and the decimal paths of the hit %."""
    state = session.call("meter_init", [])
    for turn, step, usage in ((1, 0, {"inputTokens": 10, "outputTokens": 2}),
                              (1, 0, {"inputTokens": 12, "outputTokens": 3, "cacheReadTokens": 4}),
                              (1, 0, {"inputTokens": 12, "outputTokens": 3, "cacheReadTokens": 4}),
                              (2, 1, {"inputTokens": 1, "outputTokens": 1, "cacheWriteTokens": 7})):
        event = JSObject({"type": "assistant/message",
                          "data": JSObject({"turn": float(turn), "step": float(step), "usage": from_python(usage)})})
        state = session.call("meter_apply", [state, event])
    session.call("meter_view", [state])
    for read, miss, write in ((0, 0, 0), (9999, 1, 0), (99999, 0, 1), (995, 5, 0), (1, 2, 0), (10, 0, 0),
                              (999999, 1, 0), (7, 3, 1), (1995, 5, 0)):
        session.call("hit", [from_python({"uncachedInputTokens": miss, "outputTokens": 1, "cacheReadTokens": read,
                                          "cacheWriteTokens": write})])


# Native-adapter inputs beyond the scenarios: each cache field alone, neither, both disagreeing, zeros.
NATIVE_USAGES = (
    {"prompt_tokens": 10, "completion_tokens": 2},
    {"prompt_tokens": 10, "completion_tokens": 2, "prompt_cache_hit_tokens": 0},
    {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {}},
    {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 0},
     "prompt_cache_hit_tokens": 8},
    {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 3},
     "prompt_cache_hit_tokens": 8, "completion_tokens_details": {"reasoning_tokens": 0}},
    {"prompt_tokens": 7, "completion_tokens": 0, "completion_tokens_details": {}},
)


def extra_native_calls(session: ReplaySession) -> int:
    for usage in NATIVE_USAGES:
        session.call("native_map", [from_python(usage)])
    return sum(c[0] == "native_map" for c in session.calls["dsh"])


def differential(session: ReplaySession, tmp_path: Path) -> dict[str, int]:
    compared = {}
    for repo in session.locators:
        entries = {h.key: session.hops[h.key] for h in HOPS if h.repo == repo and h.key in session.hops}
        driver = write_bundle(session.interps[repo], entries, tmp_path / repo)
        calls = [NodeCall(*c) for c in session.calls[repo]]
        got = run_in_node(driver, calls)
        for call, node_json in zip(calls, got, strict=True):
            assert node_json == call.result_json, f"{repo} {call.entry}({call.args_json})"
        compared[repo] = len(calls)
    return compared


def run_all(locs: dict, tmp_path: Path) -> dict[str, int]:
    """Every shipped scenario through both routes (the multi-request ones fold through the meter on each),
    plus the extra inputs; then every recorded call again in Node."""
    session = ReplaySession(locs)
    for name in shipped_names():
        reconcile_routes(load_scenario(name), locs, routes_for("both"), session)
    extra_dsh_calls(session)
    native = extra_native_calls(session)
    assert native == len(NATIVE_USAGES) + sum(len(load_scenario(n).requests) for n in shipped_names())
    assert not session.missing
    counts = differential(session, tmp_path)
    counts["native_map"] = native
    return counts


@pytest.mark.parametrize("pi_files", [PI_FILES, PI_OLD_FILES], ids=["current-shape", "old-shape"])
def test_fixture_functions_agree_with_node(pi_files: dict, tmp_path: Path) -> None:
    counts = run_all({"pi": MemoryLocator(pi_files, "pi"), "dsh": MemoryLocator(DSH_FILES, "dsh")}, tmp_path)
    assert counts["pi"] >= 8 and counts["dsh"] >= 40 and counts["native_map"] >= 14


def test_a_wrong_native_result_is_caught(tmp_path: Path) -> None:
    locs = {"pi": MemoryLocator(PI_FILES, "pi"), "dsh": MemoryLocator(DSH_FILES, "dsh")}
    session = ReplaySession(locs)
    reconcile_routes(load_scenario("deepseek-10k"), locs, routes_for("deepseek-native"), session)
    i = next(i for i, c in enumerate(session.calls["dsh"]) if c[0] == "native_map")
    key, args, result = session.calls["dsh"][i]
    assert result is not None and '"reasoningTokens":200' in result
    session.calls["dsh"][i] = (key, args, result.replace('"reasoningTokens":200', '"reasoningTokens":0'))
    with pytest.raises(AssertionError, match="dsh native_map"):
        differential(session, tmp_path)


def test_a_real_difference_is_caught(tmp_path: Path) -> None:
    """Guard against a vacuous check: a result the evaluator got wrong must not compare equal."""
    locs = {"pi": MemoryLocator(PI_FILES, "pi"), "dsh": MemoryLocator(DSH_FILES, "dsh")}
    session = ReplaySession(locs)
    scenario = parse_scenario({"name": "x", "provider": "p", "model": "m", "prices": {
        "cache_hit": 1, "cache_miss": 2, "output": 3, "as_of": "2025-01-01", "source": "t"},
        "requests": [{"usage": {"prompt_tokens": 5, "completion_tokens": 1}}]}, "inline")
    reconcile(scenario, locs, session)
    key, args, result = session.calls["pi"][0]
    session.calls["pi"][0] = (key, args, result.replace('"output":1', '"output":2'))
    with pytest.raises(AssertionError, match="pi parse"):
        differential(session, tmp_path)


def test_strip_types_leaves_plain_javascript() -> None:
    loc = MemoryLocator({"a.ts": "export function f<T>(a: number, b?: T, c = 1 as number): string {\n"
                                 "  const x = (a satisfies number)! + (b as any ?? c)\n  return `${x}` as const\n}\n"})
    located = loc.find("f")
    assert strip_types(located.module, located.node) == \
        "function f(a, b, c = 1) {\n  const x = (a) + (b ?? c)\n  return `${x}`\n}"


@pytest.mark.upstream
@pytest.mark.parametrize("pi_commit", [PI_V0_58_3, PI_V0_82_1], ids=["pi-v0.58.3", "pi-v0.82.1"])
def test_pinned_upstream_functions_agree_with_node(pi_commit: str, tmp_path: Path,
                                                  index_cache: Path) -> None:  # noqa: F811
    repos = {name: upstream_locator(name, commit, index_cache) for name, commit in (("pi", pi_commit),
                                                                                     ("dsh", DSH_RC2))}
    counts = run_all(repos, tmp_path)
    assert counts["pi"] >= 8 and counts["dsh"] >= 40 and counts["native_map"] >= 14
