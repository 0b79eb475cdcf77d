"""Both DeepSeek routes of dsh in the ledger (fixture repos): per-route numbers, the comparison, missing layers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_usage_cli import args, make_repo, replay
from test_usage_fixtures import DSH_FILES, PI_FILES, PI_OLD_FILES
from usage_upstream_locators import index_cache, upstream_locator  # noqa: F401  (fixture)

from analyzer.cli import main
from analyzer.usage.ledger import ROUTES, reconcile_routes, routes_for
from analyzer.usage.locate import MemoryLocator
from analyzer.usage.scenarios import load_scenario


def locators(pi_files: dict = PI_FILES, dsh_files: dict = DSH_FILES) -> dict:
    return {"pi": MemoryLocator(pi_files, "pi"), "dsh": MemoryLocator(dsh_files, "dsh")}


def values(fields: list[dict] | None) -> dict:
    return {f["name"]: f["value"] for f in fields or []}


def row(doc: dict, suffix: str) -> dict:
    return next(r for r in doc["comparison"]["rows"] if r["number"].endswith(suffix))


def test_native_route_keeps_reasoning_and_cites_its_lines() -> None:
    doc = reconcile_routes(load_scenario("deepseek-10k"), locators(), routes_for("both"))
    assert list(doc["routes"]) == ["pi-ai", "deepseek-native"]
    native = doc["routes"]["deepseek-native"]
    req = native["requests"][0]
    assert "pi_usage" not in req
    assert values(req["dsh_usage"]) == {"inputTokens": 1040, "outputTokens": 500, "cacheReadTokens": 8960,
                                        "reasoningTokens": 200}
    sites = {f["name"]: f["site"] for f in req["dsh_usage"]}
    assert sites["cacheReadTokens"] == "dsh:packages/llm/llm-deepseek/src/translate.ts:8"
    assert sites["reasoningTokens"] == "dsh:packages/llm/llm-deepseek/src/translate.ts:9"
    assert native["functions"]["native_map"]["site"] == "dsh:packages/llm/llm-deepseek/src/translate.ts:4"
    assert req["cache_fields_read"] == ["prompt_cache_hit_tokens"]  # cached_tokens absent, so ?? falls back
    assert req["dropped"]["provider → dsh"] == ["prompt_cache_miss_tokens", "total_tokens"]
    assert req["dropped"]["dsh → meter"] == ["reasoningTokens"]
    assert native["prices"] is None and native["ok"] is True
    assert values(native["meter"]) == values(doc["routes"]["pi-ai"]["meter"])


def test_comparison_names_each_disagreement_and_why() -> None:
    doc = reconcile_routes(load_scenario("deepseek-10k"), locators(), routes_for("both"))
    reasoning = row(doc, "dsh TokenUsage.reasoningTokens")
    assert reasoning["values"] == {"pi-ai": None, "deepseek-native": 200}
    assert reasoning["reason"] == "reasoning_kept" and reasoning["facts"]["route"] == "deepseek-native"
    cost = row(doc, "cost.total (USD)")
    assert cost["reason"] == "cost_only_pi" and cost["facts"]["dropped"] is True
    assert cost["values"]["pi-ai"] == pytest.approx(0.00075208)
    assert row(doc, "cacheReadTokens")["agree"] is True
    assert row(doc, "dsh stats line cache-hit %")["values"] == {"pi-ai": "90", "deepseek-native": "90"}
    assert doc["comparison"]["differences"] == 2


def test_both_fields_disagreeing_shows_which_field_each_route_reads() -> None:
    doc = reconcile_routes(load_scenario("both-fields-differ-10k"), locators(PI_OLD_FILES), routes_for("both"))
    reads = row(doc, "provider cache fields read")
    assert reads["values"] == {"pi-ai": "prompt_tokens_details.cached_tokens = 8704",
                               "deepseek-native": "prompt_tokens_details.cached_tokens = 8704"}
    # both prefer the OpenAI-style field over DeepSeek's own: both miss the provider's 8,960 hits
    for ledger in doc["routes"].values():
        failed = [c["name"] for c in ledger["requests"][0]["checks"] if c["holds"] is False]
        assert "dsh: cacheReadTokens = provider cache hits" in failed
    # the old Pi shape adds reasoning to output: outputTokens differs, and so does the meter
    out = row(doc, "dsh TokenUsage.outputTokens")
    assert out["values"] == {"pi-ai": 700, "deepseek-native": 500} and out["reason"] == "differs"
    meter = row(doc, "meter bucket outputTokens")
    assert meter["reason"] == "follows" and "turn 1 step 0 · dsh TokenUsage.outputTokens" in meter["facts"]["causes"]


def test_routes_reading_different_cache_fields_are_explained() -> None:
    doc = reconcile_routes(load_scenario("deepseek-10k"), locators(PI_OLD_FILES), routes_for("both"))
    cache = row(doc, "dsh TokenUsage.cacheReadTokens")
    assert cache["values"] == {"pi-ai": None, "deepseek-native": 8960}
    inp = row(doc, "dsh TokenUsage.inputTokens")
    assert inp["values"] == {"pi-ai": 10000, "deepseek-native": 1040} and inp["reason"] == "cache_source"
    assert inp["facts"]["reads"] == {"pi-ai": [], "deepseek-native": ["prompt_cache_hit_tokens = 8960"]}
    assert row(doc, "dsh stats line cache-hit %")["values"] == {"pi-ai": "0", "deepseek-native": "90"}


def test_multi_turn_folds_through_the_meter_on_both_routes() -> None:
    scenario = load_scenario("multi-turn-10k")
    doc = reconcile_routes(scenario, locators(), routes_for("both"))
    hits = sum(r.cache_hits for r in scenario.requests)
    prompt = sum(r.prompt_tokens for r in scenario.requests)
    for ledger in doc["routes"].values():
        meter = values(ledger["meter"])
        assert meter == {"uncachedInputTokens": prompt - hits, "outputTokens": 1200, "cacheReadTokens": hits,
                         "cacheWriteTokens": 0}
        assert ledger["cache_hit_percent"]["value"] == str(round(100 * hits / prompt))
        assert len(ledger["requests"]) == 4 and ledger["ok"] is True
    assert sum(r["reason"] == "reasoning_kept" for r in doc["comparison"]["rows"]) == 4


def test_route_definitions() -> None:
    assert [h.key for h in ROUTES["deepseek-native"].hops] == ["native_map", "meter_init", "meter_apply",
                                                               "meter_view", "hit"]
    assert ROUTES["deepseek-native"].repos == ["dsh"] and ROUTES["pi-ai"].repos == ["dsh", "pi"]


# ---- CLI ---------------------------------------------------------------------------------------------------


@pytest.fixture
def repos(tmp_path: Path) -> dict:
    return {"pi": make_repo(tmp_path / "pi", PI_FILES), "dsh": make_repo(tmp_path / "dsh", DSH_FILES)}


def test_cli_prints_both_routes_and_the_comparison(tmp_path: Path, repos: dict, capsys) -> None:
    assert main(args(tmp_path, repos)) == 0
    out = capsys.readouterr().out
    assert "route pi-ai" in out and "route deepseek-native" in out
    assert "2. dsh TokenUsage (llm-deepseek mapUsage)" in out
    assert "Comparison: pi-ai vs deepseek-native" in out
    assert ("≠ turn 1 step 0 · dsh TokenUsage.reasoningTokens: pi-ai absent vs deepseek-native 200 — deepseek-native "
            "keeps reasoning as a separate field (dsh:packages/llm/llm-deepseek/src/translate.ts:9)") in out
    assert "= dsh stats line cache-hit %: '90' on both" in out
    assert out.rstrip().endswith("all invariants hold")


def test_a_single_route_needs_only_its_repos(tmp_path: Path, repos: dict) -> None:
    result = replay(tmp_path, {**repos, "pi": ("/nonexistent/pi.git", repos["pi"][1])},  # never opened on this route
                    route="deepseek-native")
    assert result.ok and list(result.document["routes"]) == ["deepseek-native"]
    assert result.document["comparison"] is None and list(result.document["upstreams"]) == ["dsh"]


def test_cli_route_option_and_json(tmp_path: Path, repos: dict, capsys) -> None:
    assert main(args(tmp_path, repos, "--route", "deepseek-native", "--json")) == 0
    assert list(json.loads(capsys.readouterr().out)["routes"]) == ["deepseek-native"]


def test_a_layer_that_cannot_be_located_does_not_sink_the_ledger(tmp_path: Path, capsys) -> None:
    no_client = {p: t for p, t in DSH_FILES.items() if not p.startswith("packages/client/")}
    repos = {"pi": make_repo(tmp_path / "pi", PI_FILES), "dsh": make_repo(tmp_path / "dsh", no_client)}
    assert main(args(tmp_path, repos)) == 1
    captured = capsys.readouterr()
    assert "error:" not in captured.err and "Traceback" not in captured.err
    out = captured.out
    # the Pi and dsh numbers are still there, for both routes
    assert "cacheRead                                            8960" in out
    assert out.count("dsh cache-hit % (cacheHitPercent): not replayed") == 2
    sha = repos["dsh"][1][-1][:10]
    assert (f"not replayed: cacheHitPercent (dsh stats-line cache-hit %) — looked for a top-level declaration in "
            f"dsh@{sha} under packages/client; dsh@{sha}: no top-level declaration of cacheHitPercent in "
            "packages/client") in out
    assert "some layers could not be replayed" in out


def test_a_missing_layer_is_named_and_the_rest_still_replayed(tmp_path: Path) -> None:
    no_meter = {p: t for p, t in DSH_FILES.items() if "token-meter" not in p}
    repos = {"pi": make_repo(tmp_path / "pi", PI_FILES), "dsh": make_repo(tmp_path / "dsh", no_meter)}
    result = replay(tmp_path, repos)
    doc = result.document
    assert not result.ok and {m["hop"] for m in doc["missing"]} == {"meter_init", "meter_apply", "meter_view"}
    assert sorted(doc["routes"]) == ["deepseek-native", "pi-ai"]
    for ledger in doc["routes"].values():
        assert ledger["meter"] is None and ledger["cache_hit_percent"] is None and ledger["ok"] is False
        assert values(ledger["requests"][0]["dsh_usage"])["cacheReadTokens"] == 8960
    assert not any(r["scope"] == "meter" for r in doc["comparison"]["rows"])  # nothing folded on either side
    assert row(doc, "dsh stats line cache-hit %")["reason"] == "not_replayed"


# ---- the pinned upstreams (snapshots) ------------------------------------------------------------------------

# A dsh commit (2026-07-21) before packages/client existed: the stats line's function is not in the tree.
DSH_NO_CLIENT = "73ccb67469ca4136a74c69f9e3b31954a126f3cd"


def upstream_locators(dsh_commit: str, cache: Path) -> dict:
    from conftest import PI_V0_82_1

    return {"pi": upstream_locator("pi", PI_V0_82_1, cache), "dsh": upstream_locator("dsh", dsh_commit, cache)}


@pytest.mark.upstream
def test_both_routes_at_rc2_and_pi_0_82_1(index_cache: Path) -> None:  # noqa: F811
    from conftest import DSH_RC2

    locs = upstream_locators(DSH_RC2, index_cache)
    doc = reconcile_routes(load_scenario("deepseek-10k"), locs, routes_for("both"))
    native = doc["routes"]["deepseek-native"]
    assert native["functions"]["native_map"]["site"] == "dsh:packages/llm/llm-deepseek/src/translate.ts:53"
    assert values(native["requests"][0]["dsh_usage"]) == {"inputTokens": 1040, "outputTokens": 500,
                                                         "cacheReadTokens": 8960, "reasoningTokens": 200}
    assert [r["number"] for r in doc["comparison"]["rows"] if r["agree"] is False] == [
        "turn 1 step 0 · dsh TokenUsage.reasoningTokens", "turn 1 step 0 · cost.total (USD)"]
    assert doc["ok"] is True
    both = reconcile_routes(load_scenario("both-fields-10k"), locs, routes_for("both"))
    reads = row(both, "provider cache fields read")
    assert reads["agree"] is True and reads["values"]["deepseek-native"] == "prompt_tokens_details.cached_tokens = 8960"
    differ = reconcile_routes(load_scenario("both-fields-differ-10k"), locs, routes_for("both"))
    assert row(differ, "dsh stats line cache-hit %")["values"] == {"pi-ai": "87", "deepseek-native": "87"}
    assert differ["ok"] is False


@pytest.mark.upstream
def test_a_tree_without_packages_client_still_gives_the_numbers(index_cache: Path) -> None:  # noqa: F811
    locs = upstream_locators(DSH_NO_CLIENT, index_cache)
    doc = reconcile_routes(load_scenario("deepseek-10k"), locs, routes_for("both"))
    assert "hit" in {m["hop"] for m in doc["missing"]}
    hit = next(m for m in doc["missing"] if m["hop"] == "hit")
    assert hit["looked_in"] == ["packages/client"] and "no top-level declaration of cacheHitPercent" in hit["reason"]
    pi = doc["routes"]["pi-ai"]
    assert values(pi["requests"][0]["pi_usage"])["cacheRead"] == 8960
    assert values(doc["routes"]["deepseek-native"]["requests"][0]["dsh_usage"])["cacheReadTokens"] == 8960
    assert doc["ok"] is False and row(doc, "dsh stats line cache-hit %")["agree"] is None
