"""Replay a usage scenario through the pinned upstream code and check the invariants at every hop.

Hops: provider raw usage → Pi `parseChunkUsage` → Pi `Usage` (with cost) → dsh llm-pi-ai `mapUsage` →
dsh `TokenUsage` → dsh token-meter projection (`init`/`apply`/`wire.view`) → buckets → dsh `cacheHitPercent`.
Every number in the ledger comes from executing those functions in the evaluator; each carries the upstream
line (repo:path:line) that set it. Fields a layer never reads are listed as dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analyzer.usage.evaluator import Interpreter, check_parse_errors
from analyzer.usage.locate import FunctionLocator, LocatedFunction
from analyzer.usage.registry import lookup_model
from analyzer.usage.scenarios import Scenario
from analyzer.usage.values import JSArray, JSObject, from_python, json_stringify, to_python


@dataclass(frozen=True)
class HopSpec:
    """One upstream function the replay runs, and where in its repo to look for it."""

    key: str
    repo: str
    qualname: str
    search_under: tuple[str, ...]
    role: str


HOPS: tuple[HopSpec, ...] = (
    HopSpec("parse", "pi", "parseChunkUsage", ("packages/ai/src",), "provider usage → Pi Usage"),
    HopSpec("map", "dsh", "mapUsage", ("packages/llm/llm-pi-ai/src",), "Pi Usage → dsh TokenUsage"),
    HopSpec("meter_init", "dsh", "tokenUsageProjectionDefinition.init", ("packages/llm/token-meter/src",),
            "token-meter state"),
    HopSpec("meter_apply", "dsh", "tokenUsageProjectionDefinition.apply", ("packages/llm/token-meter/src",),
            "token-meter fold of one usage event"),
    HopSpec("meter_view", "dsh", "tokenUsageProjectionDefinition.wire.view", ("packages/llm/token-meter/src",),
            "token-meter buckets"),
    HopSpec("hit", "dsh", "cacheHitPercent", ("packages/client",), "dsh stats-line cache-hit %"),
)


def locate_hops(locators: Mapping[str, FunctionLocator]) -> dict[str, LocatedFunction]:
    found = {}
    for hop in HOPS:
        located = locators[hop.repo].find(hop.qualname, search_under=hop.search_under)
        check_parse_errors(located.module, located.node)
        found[hop.key] = located
    return found


def model_object(scenario: Scenario, interps: Mapping[str, Interpreter],
                 locators: Mapping[str, FunctionLocator]) -> tuple[JSObject, dict[str, Any]]:
    """The `model` argument for Pi: from the pinned registry when it has the model, else the scenario's prices."""
    p = scenario.prices
    note = ""
    if scenario.registry is not None:
        entry = lookup_model(interps["pi"], locators["pi"], *scenario.registry)
        if entry.model is not None:
            cost = to_python(entry.model.props["cost"])
            return entry.model, {
                "source": "pi registry", "site": str(entry.site),
                "cache_hit": cost.get("cacheRead"), "cache_miss": cost.get("input"), "output": cost.get("output"),
                "cache_write": cost.get("cacheWrite"), "as_of": f"pi@{locators['pi'].commit[:10]}",
                "note": f"MODELS[{scenario.registry[0]!r}][{scenario.registry[1]!r}] in the pinned registry"}
        note = f"not from the Pi registry: {entry.reason}"
    model = from_python({
        "id": scenario.model, "name": scenario.model, "api": "openai-completions", "provider": scenario.provider,
        "baseUrl": scenario.base_url,
        "cost": {"input": p.cache_miss, "output": p.output, "cacheRead": p.cache_hit, "cacheWrite": p.cache_write},
    })
    return model, {"source": "scenario", "site": scenario.path, "cache_hit": p.cache_hit, "cache_miss": p.cache_miss,
                   "output": p.output, "cache_write": p.cache_write, "as_of": p.as_of, "note": note,
                   "reference": p.source}


class ReplaySession:
    """The interpreters and located hop functions of one replay, plus a record of every hop call.

    The record (`calls`: repo → [(hop key, args JSON, result JSON)]) is what the Node differential check replays.
    """

    def __init__(self, locators: Mapping[str, FunctionLocator]) -> None:
        self.locators = locators
        self.interps = {name: Interpreter(loc) for name, loc in locators.items()}
        self.hops = locate_hops(locators)
        self._fns = {h.key: self.interps[h.repo].function_value(self.hops[h.key]) for h in HOPS}
        self._repo = {h.key: h.repo for h in HOPS}
        self.calls: dict[str, list[tuple[str, str, str | None]]] = {name: [] for name in locators}

    def call(self, key: str, args: list[Any]) -> Any:
        args_json = "[" + ",".join(json_stringify(a) or "null" for a in args) + "]"
        interp = self.interps[self._repo[key]]
        result = interp.call(self._fns[key], args)
        self.calls[self._repo[key]].append((key, args_json, json_stringify(result)))
        return result

    def last_return_site(self, repo: str) -> Any:
        return self.interps[repo].last_return_site


def reconcile(scenario: Scenario, locators: Mapping[str, FunctionLocator],
              session: ReplaySession | None = None) -> dict[str, Any]:
    """Run the scenario through every hop; the ledger is plain data (JSON-ready)."""
    session = session or ReplaySession(locators)
    hops = session.hops
    # the registry read gets its own interpreter so it does not count as code the hops touched
    model, prices = model_object(scenario, {"pi": Interpreter(locators["pi"])}, locators)

    state = session.call("meter_init", [])
    requests = []
    for req in scenario.requests:
        raw = from_python(req.usage)
        usage = session.call("parse", [raw, model])
        _clear_reads(usage)
        token_usage = session.call("map", [usage])
        pi_dropped = [k for k in _paths(usage) if not _was_read(usage, k)]
        _clear_reads(token_usage)
        event = JSObject({"type": "assistant/message",
                          "data": JSObject({"turn": float(req.turn), "step": float(req.step), "usage": token_usage})})
        state = session.call("meter_apply", [state, event])
        requests.append({
            "turn": req.turn, "step": req.step,
            "provider": [{"name": k, "value": v, "read_by_pi": _was_read(raw, k)} for k, v in _flat_python(raw)],
            "pi_usage": _fields(usage),
            "dsh_usage": _fields(token_usage),
            "dropped": {
                "provider → Pi": [k for k in _paths(raw) if not _was_read(raw, k)],
                "Pi → dsh": pi_dropped,
                "dsh → meter": [k for k in _paths(token_usage) if not _was_read(token_usage, k)],
            },
            "checks": _request_checks(req, to_python(usage), to_python(token_usage), prices),
        })
    buckets = session.call("meter_view", [state])
    hit = session.call("hit", [buckets])
    hit_site = session.last_return_site("dsh")
    bucket_values = to_python(buckets)
    ledger = {
        "scenario": {"name": scenario.name, "title": scenario.title, "path": scenario.path},
        "upstreams": {name: {"commit": loc.commit} for name, loc in locators.items()},
        "functions": {h.key: {"name": h.qualname, "role": h.role, "site": str(hops[h.key].site)} for h in HOPS},
        "prices": prices,
        "meter_input": "each request's dsh TokenUsage folded as an assistant/message event (turn, step, usage)",
        "requests": requests,
        "meter": _fields(buckets),
        "cache_hit_percent": {"value": to_python(hit), "site": str(hit_site)},
        "checks": _session_checks(scenario, bucket_values, to_python(hit)),
    }
    ledger["ok"] = all(c["holds"] is not False for r in requests for c in r["checks"]) and all(
        c["holds"] is not False for c in ledger["checks"])
    return ledger


# ---- field bookkeeping -----------------------------------------------------------------------------------


def _flat(obj: JSObject, prefix: str = "") -> list[tuple[str, Any, JSObject, str]]:
    out = []
    for k, v in obj.props.items():
        if isinstance(v, JSObject):
            out += _flat(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v, obj, k))
    return out


def _flat_python(obj: JSObject) -> list[tuple[str, Any]]:
    return [(path, to_python(v)) for path, v, _, _ in _flat(obj)]


def _paths(obj: JSObject) -> list[str]:
    return [path for path, _, _, _ in _flat(obj)]


def _was_read(obj: JSObject, path: str) -> bool:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, JSObject) or part not in node.reads:
            return False
        node = node.props.get(part)
    return True


def _clear_reads(value: Any) -> None:
    if isinstance(value, JSObject):
        value.reads.clear()
        for v in value.props.values():
            _clear_reads(v)
    elif isinstance(value, JSArray):
        for v in value.items:
            _clear_reads(v)


def _fields(obj: Any) -> list[dict[str, Any]]:
    if not isinstance(obj, JSObject):
        return [{"name": "(value)", "value": to_python(obj), "site": None}]
    out = []
    for path, v, owner, key in _flat(obj):
        site = owner.origins.get(key)
        out.append({"name": path, "value": to_python(v), "site": str(site) if site else None})
    return out


# ---- invariants ------------------------------------------------------------------------------------------


def _check(name: str, holds: bool | None, detail: str) -> dict[str, Any]:
    return {"name": name, "holds": holds, "detail": detail}


def _request_checks(req: Any, usage: dict[str, Any], tu: dict[str, Any], prices: dict[str, Any]) -> list[dict]:
    raw = req.usage
    prompt, completion = req.prompt_tokens, req.completion_tokens
    checks = []
    if "prompt_cache_hit_tokens" in raw and "prompt_cache_miss_tokens" in raw:
        h, m = raw["prompt_cache_hit_tokens"], raw["prompt_cache_miss_tokens"]
        checks.append(_check("provider: hit + miss = prompt_tokens", h + m == prompt, f"{h} + {m} vs {prompt}"))
    else:
        checks.append(_check("provider: hit + miss = prompt_tokens", None, "no hit/miss pair in this report"))
    i, cr, cw = usage.get("input", 0), usage.get("cacheRead", 0), usage.get("cacheWrite", 0)
    checks.append(_check("Pi: input + cacheRead + cacheWrite = prompt_tokens", i + cr + cw == prompt,
                         f"{i} + {cr} + {cw} = {i + cr + cw} vs {prompt}"))
    hits = req.cache_hits
    checks.append(_check("Pi: cacheRead = provider cache hits", cr == hits, f"{cr} vs {hits}"))
    total = usage.get("totalTokens")
    checks.append(_check("Pi: totalTokens = prompt_tokens + completion_tokens", total == prompt + completion,
                         f"{total} vs {prompt} + {completion} = {prompt + completion}"))
    out = usage.get("output")
    checks.append(_check("Pi: output = completion_tokens (reasoning already inside)", out == completion,
                         f"{out} vs {completion} (reasoning {req.reasoning_tokens})"))
    expected = ((prompt - hits) * prices["cache_miss"] + hits * prices["cache_hit"]
                + completion * prices["output"]) / 1e6
    got = (usage.get("cost") or {}).get("total")
    holds = isinstance(got, int | float) and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-15)
    checks.append(_check("Pi: cost.total = Σ bucket × rate", holds,
                         f"{got} vs miss {prompt - hits} × {prices['cache_miss']} + hit {hits} × "
                         f"{prices['cache_hit']} + output {completion} × {prices['output']} per 1M = "
                         f"{expected:.10g}"))
    ti, tr, tw = tu.get("inputTokens", 0), tu.get("cacheReadTokens", 0), tu.get("cacheWriteTokens", 0)
    checks.append(_check("dsh: inputTokens + cacheReadTokens + cacheWriteTokens = prompt_tokens",
                         ti + tr + tw == prompt, f"{ti} + {tr} + {tw} = {ti + tr + tw} vs {prompt}"))
    checks.append(_check("dsh: cacheReadTokens = provider cache hits", tr == hits, f"{tr} vs {hits}"))
    checks.append(_check("dsh: outputTokens = completion_tokens", tu.get("outputTokens") == completion,
                         f"{tu.get('outputTokens')} vs {completion}"))
    return checks


def _session_checks(scenario: Scenario, buckets: Any, hit: Any) -> list[dict[str, Any]]:
    prompt = sum(r.prompt_tokens for r in scenario.requests)
    hits = sum(r.cache_hits for r in scenario.requests)
    completion = sum(r.completion_tokens for r in scenario.requests)
    b = buckets if isinstance(buckets, dict) else {}
    u, r, w = b.get("uncachedInputTokens", 0), b.get("cacheReadTokens", 0), b.get("cacheWriteTokens", 0)
    checks = [
        _check("meter: uncached + cacheRead + cacheWrite = Σ prompt_tokens", u + r + w == prompt,
               f"{u} + {r} + {w} = {u + r + w} vs {prompt}"),
        _check("meter: cacheReadTokens = Σ provider cache hits", r == hits, f"{r} vs {hits}"),
        _check("meter: outputTokens = Σ completion_tokens", b.get("outputTokens") == completion,
               f"{b.get('outputTokens')} vs {completion}"),
    ]
    if prompt == 0:
        checks.append(_check("dsh: cache-hit % = Σ hits / Σ prompt_tokens", hit is None, f"{hit!r} vs none"))
    else:
        exact = 100 * hits / prompt
        holds = False
        if isinstance(hit, str):
            decimals = len(hit.partition(".")[2])
            holds = abs(float(hit) - exact) <= 0.5 * 10**-decimals + 1e-9
        checks.append(_check("dsh: cache-hit % = Σ hits / Σ prompt_tokens", holds,
                             f"shows {hit!r}; provider says {hits} / {prompt} = {exact:.4g}%"))
    return checks
