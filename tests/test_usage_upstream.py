"""The canonical reconciliation produced by executing the pinned upstream code (needs the snapshots)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DSH_RC2, PI_V0_58_3, PI_V0_82_1
from usage_upstream_locators import index_cache, upstream_locator  # noqa: F401  (fixture)

from analyzer.usage.ledger import reconcile
from analyzer.usage.scenarios import load_scenario

pytestmark = pytest.mark.upstream


@pytest.fixture
def replay(index_cache: Path):  # noqa: F811
    def run(pi_commit: str, scenario: str = "deepseek-10k") -> dict:
        locs = {"pi": upstream_locator("pi", pi_commit, index_cache),
                "dsh": upstream_locator("dsh", DSH_RC2, index_cache)}
        return reconcile(load_scenario(scenario), locs)
    return run


def values(fields: list[dict]) -> dict:
    return {f["name"]: f["value"] for f in fields}


def holds(checks: list[dict], prefix: str) -> bool | None:
    return next(c["holds"] for c in checks if c["name"].startswith(prefix))


def test_pi_v0_58_3_ignores_deepseek_hits_and_counts_reasoning_twice(replay) -> None:
    ledger = replay(PI_V0_58_3)
    assert ledger["functions"]["parse"]["site"].startswith("pi:packages/ai/src/providers/openai-completions.ts:")
    req = ledger["requests"][0]
    pi = values(req["pi_usage"])
    assert (pi["cacheRead"], pi["input"], pi["output"]) == (0, 10000, 700)
    assert pi["totalTokens"] == 10700
    assert holds(req["checks"], "Pi: output = completion_tokens") is False
    assert holds(req["checks"], "Pi: cacheRead = provider cache hits") is False
    assert holds(req["checks"], "Pi: totalTokens") is False
    assert holds(req["checks"], "Pi: cost.total") is False
    assert "prompt_cache_hit_tokens" in req["dropped"]["provider → Pi"]
    assert ledger["cache_hit_percent"]["value"] == "0"
    assert ledger["ok"] is False


def test_pi_v0_82_1_maps_deepseek_hits(replay) -> None:
    ledger = replay(PI_V0_82_1)
    assert ledger["functions"]["parse"]["site"].startswith("pi:packages/ai/src/api/openai-completions.ts:")
    req = ledger["requests"][0]
    pi = values(req["pi_usage"])
    assert (pi["cacheRead"], pi["input"], pi["output"], pi["totalTokens"]) == (8960, 1040, 500, 10500)
    assert pi["reasoning"] == 200
    assert pi["cost.total"] == pytest.approx((1040 * 0.28 + 8960 * 0.028 + 500 * 0.42) / 1e6, rel=1e-12)
    assert all(c["holds"] is not False for c in req["checks"])
    assert {"reasoning", "cost.total", "totalTokens"} <= set(req["dropped"]["Pi → dsh"])
    assert ledger["ok"] is True


def test_dsh_rc2_side(replay) -> None:
    ledger = replay(PI_V0_82_1)
    req = ledger["requests"][0]
    assert values(req["dsh_usage"]) == {"inputTokens": 1040, "outputTokens": 500, "cacheReadTokens": 8960}
    assert ledger["functions"]["map"]["site"].startswith("dsh:packages/llm/llm-pi-ai/src/stream.ts:")
    assert values(ledger["meter"]) == {"uncachedInputTokens": 1040, "outputTokens": 500, "cacheReadTokens": 8960,
                                       "cacheWriteTokens": 0}
    assert all(f["site"].startswith("dsh:packages/llm/token-meter/src/") for f in ledger["meter"])
    assert ledger["cache_hit_percent"]["value"] == "90"
    assert "StatsLine.tsx" in ledger["cache_hit_percent"]["site"]


def test_multi_turn_at_v0_82_1(replay) -> None:
    ledger = replay(PI_V0_82_1, "multi-turn-10k")
    scenario = load_scenario("multi-turn-10k")
    hits = sum(r.cache_hits for r in scenario.requests)
    meter = values(ledger["meter"])
    assert meter["cacheReadTokens"] == hits
    assert meter["uncachedInputTokens"] + hits == sum(r.prompt_tokens for r in scenario.requests)
    assert ledger["ok"] is True
