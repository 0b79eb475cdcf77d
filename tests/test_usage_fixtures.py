"""The ledger on small fixture repos shaped like Pi and dsh (written for these tests, not upstream code)."""

from __future__ import annotations

import pytest

from analyzer.usage.ledger import ReplaySession, reconcile
from analyzer.usage.locate import MemoryLocator
from analyzer.usage.scenarios import load_scenario, parse_scenario

PI_PARSE = """\
import { priceUsage } from "../pricing.js";
import type { Model, Usage } from "../types.js";

type Details = Record<string, number | undefined>;
type RawUsage = Record<string, number | Details | undefined> & { prompt_tokens_details?: Details };

function parseChunkUsage(raw: RawUsage, model: Model<"chat">): Usage {
\tconst prompt = raw.prompt_tokens ?? 0;
\tconst cached = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? 0;
\tconst completion = raw.completion_tokens || 0;
\tconst usage: Usage = {
\t\tinput: Math.max(0, prompt - cached),
\t\toutput: completion,
\t\tcacheRead: cached,
\t\tcacheWrite: 0,
\t\ttotalTokens: prompt + completion,
\t\tcost: zeroCost(),
\t};
\tpriceUsage(model, usage);
\treturn usage;
}

const zeroCost = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 });
"""

# An older shape: reads only the OpenAI-style field and adds reasoning on top of completion.
PI_PARSE_OLD = """\
import { priceUsage } from "../pricing";

function parseChunkUsage(raw: any, model: any) {
\tconst cached = raw.prompt_tokens_details?.cached_tokens || 0;
\tconst extra = raw.completion_tokens_details?.reasoning_tokens || 0;
\tconst usage = {
\t\tinput: (raw.prompt_tokens || 0) - cached,
\t\toutput: (raw.completion_tokens || 0) + extra,
\t\tcacheRead: cached,
\t\tcacheWrite: 0,
\t\ttotalTokens: (raw.prompt_tokens || 0) - cached + (raw.completion_tokens || 0) + extra + cached,
\t\tcost: { total: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
\t};
\tpriceUsage(model, usage);
\treturn usage;
}
"""

PI_PRICING = """\
import type { Model, Usage } from "./types.js";

const PER_MILLION = 1_000_000;

export function priceUsage(model: Model<any>, usage: Usage): Usage["cost"] {
\tconst perToken = (rate: number): number => rate / PER_MILLION;
\tusage.cost.input = perToken(model.cost.input) * usage.input;
\tusage.cost.output = perToken(model.cost.output) * usage.output;
\tusage.cost.cacheRead = perToken(model.cost.cacheRead) * usage.cacheRead;
\tusage.cost.cacheWrite = perToken(model.cost.cacheWrite) * usage.cacheWrite;
\tconst c = usage.cost;
\tc.total = [c.input, c.output, c.cacheRead, c.cacheWrite].reduce((sum, x) => sum + x, 0);
\treturn usage.cost;
}
"""

DSH_MAP = """\
import type { TokenUsage } from '@example/llm'

export function mapUsage(u: PiUsage): TokenUsage {
  return {
    inputTokens: u.input,
    outputTokens: u.output,
    ...(u.cacheRead > 0 ? { cacheReadTokens: u.cacheRead } : {}),
    ...(u.cacheWrite > 0 ? { cacheWriteTokens: u.cacheWrite } : {}),
  }
}
"""

DSH_METER = """\
import { z } from 'zod'

const NAMES = ['uncachedInputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const

const empty = (): Buckets => {
  const out: Record<string, number> = {}
  for (const name of NAMES) out[name] = 0
  return out as Buckets
}

const fromUsage = (u: TokenUsage): Buckets => ({
  uncachedInputTokens: u.inputTokens,
  outputTokens: u.outputTokens,
  cacheReadTokens: u.cacheReadTokens ?? 0,
  cacheWriteTokens: u.cacheWriteTokens ?? 0,
})

export const tokenUsageProjectionDefinition: Def = {
  key: 'tokenUsage',
  schema: z.object({}),
  init: () => ({ totals: empty(), last: null }),
  apply: (state: State, event: Event): State => {
    if (event.type !== 'assistant/message' || event.data.usage === undefined) return state
    const { turn, step } = event.data
    const next = fromUsage(event.data.usage)
    const prev = state.last?.turn === turn && state.last?.step === step ? state.last.buckets : undefined
    const totals: Record<string, number> = { ...state.totals }
    for (const name of NAMES) {
      totals[name] = totals[name] - (prev?.[name] ?? 0) + next[name]
    }
    return { totals: totals as Buckets, last: { turn, step, buckets: next } }
  },
  wire: { view: (state: State) => state.totals },
} satisfies Definition<'tokenUsage'>
"""

DSH_STATS = """\
export function cacheHitPercent(b: Buckets): string | null {
  const billed = b.uncachedInputTokens + b.cacheReadTokens + b.cacheWriteTokens
  if (billed === 0) return null
  let digits = 0
  let shown = Math.round((b.cacheReadTokens * 100) / billed)
  while (shown === 100 && b.cacheReadTokens < billed && digits < 6) {
    digits += 1
    const scale = 10 ** digits
    shown = Math.round((b.cacheReadTokens * 100 * scale) / billed) / scale
  }
  return digits === 0 ? String(shown) : shown.toFixed(digits)
}
"""

# The native adapter's shape: it reads the OpenAI-style hit field first, DeepSeek's as the fallback, subtracts
# hits from the prompt and keeps reasoning as its own field (written for these tests).
DSH_NATIVE_MAP = """\
import type { TokenUsage } from '@example/llm'
import type { WireUsage } from './wire.ts'

export function mapUsage(wire: WireUsage): TokenUsage {
  const hits = wire.prompt_tokens_details?.cached_tokens ?? wire.prompt_cache_hit_tokens
  const thinking = wire.completion_tokens_details?.reasoning_tokens
  const out: TokenUsage = { inputTokens: wire.prompt_tokens - (hits ?? 0), outputTokens: wire.completion_tokens }
  if (hits !== undefined) out.cacheReadTokens = hits
  return { ...out, ...thinking === undefined ? {} : { reasoningTokens: thinking } }
}
"""

PI_FILES = {"packages/ai/src/api/completions.ts": PI_PARSE, "packages/ai/src/pricing.ts": PI_PRICING}
PI_OLD_FILES = {"packages/ai/src/providers/completions.ts": PI_PARSE_OLD, "packages/ai/src/pricing.ts": PI_PRICING}
DSH_FILES = {
    "packages/llm/llm-pi-ai/src/stream.ts": DSH_MAP,
    "packages/llm/llm-deepseek/src/translate.ts": DSH_NATIVE_MAP,
    "packages/llm/token-meter/src/usage-projection.ts": DSH_METER,
    "packages/client/ui/src/stats.ts": DSH_STATS,
}


def locators(pi_files: dict[str, str]) -> dict[str, MemoryLocator]:
    return {"pi": MemoryLocator(pi_files, "pi"), "dsh": MemoryLocator(DSH_FILES, "dsh")}


def field(fields: list[dict], name: str) -> dict:
    return next(f for f in fields if f["name"] == name)


def check(checks: list[dict], prefix: str) -> bool | None:
    return next(c["holds"] for c in checks if c["name"].startswith(prefix))


def test_canonical_scenario_through_fixture_code() -> None:
    ledger = reconcile(load_scenario("deepseek-10k"), locators(PI_FILES))
    req = ledger["requests"][0]
    assert {f["name"]: f["value"] for f in req["pi_usage"]} == {
        "input": 1040, "output": 500, "cacheRead": 8960, "cacheWrite": 0, "totalTokens": 10500,
        "cost.input": pytest.approx(1040 * 0.28 / 1e6), "cost.output": pytest.approx(500 * 0.42 / 1e6),
        "cost.cacheRead": pytest.approx(8960 * 0.028 / 1e6), "cost.cacheWrite": 0,
        "cost.total": pytest.approx((1040 * 0.28 + 8960 * 0.028 + 500 * 0.42) / 1e6)}
    # every number cites the line that set it
    assert field(req["pi_usage"], "input")["site"] == "pi:packages/ai/src/api/completions.ts:12"
    assert field(req["pi_usage"], "cost.total")["site"] == "pi:packages/ai/src/pricing.ts:12"
    assert field(req["dsh_usage"], "cacheReadTokens")["site"] == "dsh:packages/llm/llm-pi-ai/src/stream.ts:7"
    assert [f["name"] for f in req["dsh_usage"]] == ["inputTokens", "outputTokens", "cacheReadTokens"]
    assert req["dropped"]["provider → Pi"] == ["prompt_cache_miss_tokens", "total_tokens",
                                              "completion_tokens_details.reasoning_tokens"]
    assert "cost.total" in req["dropped"]["Pi → dsh"] and "totalTokens" in req["dropped"]["Pi → dsh"]
    assert {f["name"]: f["value"] for f in ledger["meter"]} == {
        "uncachedInputTokens": 1040, "outputTokens": 500, "cacheReadTokens": 8960, "cacheWriteTokens": 0}
    assert field(ledger["meter"], "cacheReadTokens")["site"] == \
        "dsh:packages/llm/token-meter/src/usage-projection.ts:29"
    assert ledger["cache_hit_percent"] == {"value": "90", "site": "dsh:packages/client/ui/src/stats.ts:11"}
    assert ledger["ok"] is True
    assert ledger["prices"]["source"] == "scenario"


def test_old_shape_is_flagged_by_the_invariants() -> None:
    ledger = reconcile(load_scenario("deepseek-10k"), locators(PI_OLD_FILES))
    req = ledger["requests"][0]
    values = {f["name"]: f["value"] for f in req["pi_usage"]}
    assert (values["input"], values["cacheRead"], values["output"]) == (10000, 0, 700)
    assert check(req["checks"], "Pi: output = completion_tokens") is False
    assert check(req["checks"], "Pi: cacheRead = provider cache hits") is False
    assert check(req["checks"], "Pi: cost.total") is False
    assert check(req["checks"], "Pi: input + cacheRead") is True
    assert "prompt_cache_hit_tokens" in req["dropped"]["provider → Pi"]
    assert ledger["cache_hit_percent"]["value"] == "0"
    assert ledger["ok"] is False


def test_multi_turn_fold_and_decimal_hit_percent() -> None:
    ledger = reconcile(load_scenario("multi-turn-10k"), locators(PI_FILES))
    scenario = load_scenario("multi-turn-10k")
    hits = sum(r.cache_hits for r in scenario.requests)
    prompt = sum(r.prompt_tokens for r in scenario.requests)
    meter = {f["name"]: f["value"] for f in ledger["meter"]}
    assert meter["cacheReadTokens"] == hits
    assert meter["uncachedInputTokens"] == prompt - hits
    assert meter["outputTokens"] == 4 * 300
    assert ledger["cache_hit_percent"]["value"] == str(round(100 * hits / prompt))
    assert ledger["ok"] is True


def test_near_full_hit_shows_decimals_from_the_loop() -> None:
    data = {"name": "x", "provider": "deepseek", "model": "m",
            "prices": {"cache_hit": 1, "cache_miss": 2, "output": 3, "as_of": "2025-01-01", "source": "test"},
            "requests": [{"usage": {"prompt_tokens": 10000, "prompt_cache_hit_tokens": 9999,
                                    "prompt_cache_miss_tokens": 1, "completion_tokens": 1}}]}
    ledger = reconcile(parse_scenario(data, "inline"), locators(PI_FILES))
    assert ledger["cache_hit_percent"]["value"] == "99.99"
    assert check(ledger["checks"], "dsh: cache-hit %") is True


def test_session_records_each_hop_call_for_the_differential() -> None:
    locs = locators(PI_FILES)
    session = ReplaySession(locs)
    reconcile(load_scenario("deepseek-10k"), locs, session)
    assert [c[0] for c in session.calls["pi"]] == ["parse"]
    assert [c[0] for c in session.calls["dsh"]] == ["meter_init", "map", "meter_apply", "meter_view", "hit"]
    assert session.calls["dsh"][-1][2] == '"90"'
    assert set(session.interps["dsh"].touched["packages/llm/token-meter/src/usage-projection.ts"]) == {
        "empty", "NAMES", "fromUsage"}


REGISTRY = """\
import type { Model } from "./types";

export const MODELS = {
\tother: { "x-1": { id: "x-1", cost: { input: 9, output: 9, cacheRead: 9, cacheWrite: 9 } } },
\tdeepseek: {
\t\t"deepseek-chat": {
\t\t\tid: "deepseek-chat",
\t\t\tapi: "openai-completions",
\t\t\tcost: { input: 0.5, output: 2, cacheRead: 0.05, cacheWrite: 0 },
\t\t} satisfies Model<"chat">,
\t},
} as const;
"""


def test_prices_come_from_the_registry_when_it_has_the_model() -> None:
    files = dict(PI_FILES)
    files["packages/ai/src/models.generated.ts"] = REGISTRY
    ledger = reconcile(load_scenario("deepseek-10k"), locators(files))
    prices = ledger["prices"]
    assert (prices["source"], prices["cache_hit"], prices["cache_miss"], prices["output"]) == (
        "pi registry", 0.05, 0.5, 2)
    assert prices["site"] == "pi:packages/ai/src/models.generated.ts:6"
    cost = field(ledger["requests"][0]["pi_usage"], "cost.total")["value"]
    assert cost == pytest.approx((1040 * 0.5 + 8960 * 0.05 + 500 * 2) / 1e6)
    assert check(ledger["requests"][0]["checks"], "Pi: cost.total") is True


def test_registry_without_the_model_falls_back_to_scenario_prices_and_says_why() -> None:
    files = dict(PI_FILES)
    files["packages/ai/src/models.generated.ts"] = REGISTRY.replace("deepseek: {", "deepseekx: {")
    prices = reconcile(load_scenario("deepseek-10k"), locators(files))["prices"]
    assert prices["source"] == "scenario" and prices["cache_miss"] == 0.28
    assert "provider 'deepseek' is not in MODELS" in prices["note"]


def test_deltas_between_two_ledgers_name_the_changed_numbers() -> None:
    from analyzer.usage.delta import ledger_deltas

    old = reconcile(load_scenario("deepseek-10k"), locators(PI_OLD_FILES))
    new = reconcile(load_scenario("deepseek-10k"), locators(PI_FILES))
    deltas = {d["key"]: (d["old"], d["new"]) for d in ledger_deltas(old, new)}
    assert deltas["turn1.step0.pi.cacheRead"] == (0, 8960)
    assert deltas["turn1.step0.pi.output"] == (700, 500)
    assert deltas["meter.cacheReadTokens"] == (0, 8960)
    assert deltas["cache_hit_percent"] == ("0", "90")
    assert deltas["turn1.step0.check.Pi: output = completion_tokens (reasoning already inside)"] == (False, True)
    assert "turn1.step0.pi.cacheWrite" not in deltas
    assert ledger_deltas(new, new) == []
