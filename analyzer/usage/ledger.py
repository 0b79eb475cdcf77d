"""Replay a usage scenario through the pinned upstream code and check the invariants at every hop.

Two routes, as dsh has two ways to DeepSeek:
- `pi-ai`: provider raw usage → Pi `parseChunkUsage` → Pi `Usage` (with cost) → dsh llm-pi-ai `mapUsage` →
  dsh `TokenUsage`;
- `deepseek-native`: provider raw usage → dsh llm-deepseek `mapUsage` → dsh `TokenUsage`;
then, for both, the dsh token-meter projection (`init`/`apply`/`wire.view`) → buckets → dsh `cacheHitPercent`.
Every number in the ledger comes from executing those functions in the evaluator; each carries the upstream
line (repo:path:line) that set it. Fields a layer never reads are listed as dropped.

The routes, their hops (repo, folder, function, what each reads and writes), the meter and the registry are
data (`analyzer/rules/usage/routes.toml`, loaded by `analyzer.usage.routes`); this module is the ledger
logic only: run a route's hops in order, fold the meter, check the invariants.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from analyzer.usage.errors import LocateError
from analyzer.usage.evaluator import Interpreter, check_parse_errors
from analyzer.usage.locate import FunctionLocator, LocatedFunction
from analyzer.usage.registry import lookup_model
from analyzer.usage.routes import (
    ALL_ROUTES,
    ROUTE_OUTPUT,
    ROUTE_OUTPUT_RECORD,
    HopSpec,
    Route,
    RouteBook,
    load_routes,
)
from analyzer.usage.scenarios import Scenario
from analyzer.usage.values import JSArray, JSObject, from_python, json_stringify, to_python

BOOK = load_routes()
HOPS: tuple[HopSpec, ...] = tuple(BOOK.hops.values())
HOP_BY_KEY = BOOK.hops
METER_HOPS = BOOK.meter.hops
ROUTES: dict[str, Route] = BOOK.routes


def routes_for(choice: str) -> list[Route]:
    """`both` → every route in order; otherwise the one named."""
    return list(ROUTES.values()) if choice == ALL_ROUTES else [ROUTES[choice]]


def model_object(scenario: Scenario, interps: Mapping[str, Interpreter],
                 locators: Mapping[str, FunctionLocator], book: RouteBook = BOOK) -> tuple[JSObject, dict[str, Any]]:
    """The `model` argument for Pi: from the pinned registry when it has the model, else the scenario's prices."""
    p = scenario.prices
    note = ""
    reg = book.registry.repo
    if scenario.registry is not None and reg in locators and reg in interps:
        entry = lookup_model(interps[reg], locators[reg], *scenario.registry, spec=book.registry)
        if entry.model is not None:
            cost = to_python(entry.model.props["cost"])
            return entry.model, {
                "source": f"{reg} registry", "site": str(entry.site),
                "cache_hit": cost.get("cacheRead"), "cache_miss": cost.get("input"), "output": cost.get("output"),
                "cache_write": cost.get("cacheWrite"), "as_of": f"{reg}@{locators[reg].commit[:10]}",
                "note": f"{book.registry.table}[{scenario.registry[0]!r}][{scenario.registry[1]!r}] in the pinned "
                        "registry"}
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

    A hop that cannot be located (moved, renamed, its package absent, ambiguous) is kept in `missing` with what
    was looked for and where, instead of stopping the replay: the layers that do not depend on it still run.
    The record (`calls`: repo → [(hop key, args JSON, result JSON)]) is what the Node differential check replays.
    """

    def __init__(self, locators: Mapping[str, FunctionLocator], hops: Sequence[HopSpec] = HOPS) -> None:
        self.locators = locators
        self.interps = {name: Interpreter(loc) for name, loc in locators.items()}
        self.hops: dict[str, LocatedFunction] = {}
        self.missing: dict[str, dict[str, Any]] = {}
        self._repo = {h.key: h.repo for h in (*HOPS, *hops)}
        for hop in hops:
            if hop.repo not in locators or hop.key in self.hops:
                continue
            try:
                located = locators[hop.repo].find(hop.qualname, search_under=hop.search_under)
            except LocateError as exc:
                self.missing[hop.key] = {
                    "hop": hop.key, "name": hop.qualname, "role": hop.role, "repo": hop.repo,
                    "commit": locators[hop.repo].commit, "looked_in": list(hop.search_under), "reason": str(exc)}
                continue
            check_parse_errors(located.module, located.node)
            self.hops[hop.key] = located
        self._fns = {key: self.interps[self._repo[key]].function_value(loc) for key, loc in self.hops.items()}
        self.calls: dict[str, list[tuple[str, str, str | None]]] = {name: [] for name in locators}

    def has(self, *keys: str) -> bool:
        return all(k in self.hops for k in keys)

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
    """The Pi route's ledger (what re-checks compare); plain data, JSON-ready."""
    return replay_route(scenario, locators, ROUTES[BOOK.recheck_route], session)


def reconcile_routes(scenario: Scenario, locators: Mapping[str, FunctionLocator], routes: Sequence[Route],
                     session: ReplaySession | None = None) -> dict[str, Any]:
    """Each route's ledger, then (for two routes) the numbers on which they disagree and why."""
    from analyzer.usage.compare import compare_routes

    session = session or ReplaySession(locators, [h for r in routes for h in r.hops])
    ledgers = {r.name: replay_route(scenario, locators, r, session) for r in routes}
    missing = list({m["hop"]: m for led in ledgers.values() for m in led["missing"]}.values())
    doc: dict[str, Any] = {
        "schema": "analyzer.reconcile/2",
        "scenario": {"name": scenario.name, "title": scenario.title, "path": scenario.path},
        "upstreams": {name: {"commit": loc.commit} for name, loc in locators.items()},
        "routes": ledgers,
        "comparison": compare_routes(ledgers) if len(ledgers) == 2 else None,
        "missing": missing,
    }
    doc["ok"] = all(led["ok"] for led in ledgers.values())
    return doc


def replay_route(scenario: Scenario, locators: Mapping[str, FunctionLocator], route: Route,
                 session: ReplaySession | None = None) -> dict[str, Any]:
    """Run the scenario through one route's hops; a layer whose function is missing is marked, not guessed."""
    session = session or ReplaySession(locators, route.hops)
    hops = session.hops
    book = route.book
    meter = book.meter
    missing = [session.missing[h.key] for h in route.hops if h.key in session.missing]
    prices: dict[str, Any] | None = None
    model: Any = None
    if route.takes_model:
        # the registry read gets its own interpreter so it does not count as code the hops touched
        reg = book.registry.repo
        reg_interp = {reg: Interpreter(locators[reg])} if reg in locators else {}
        model, prices = model_object(scenario, reg_interp, locators, book)
    meter_ok = session.has(*meter.hops)
    state = session.call(meter.init, []) if meter_ok else None
    folded = 0
    requests = []
    for req in scenario.requests:
        raw = from_python(req.usage)
        entry: dict[str, Any] = {"turn": req.turn, "step": req.step}
        dropped: dict[str, list[str]] = {}
        values = _run_usage_hops(session, route, {"provider-usage": raw, "model": model}, entry, dropped)
        usage, token_usage = values.get(PI_USAGE), values.get(ROUTE_OUTPUT)
        entry["provider"] = [{"name": k, "value": v, "read": _was_read(raw, k), "reader": route.reader}
                             for k, v in _flat_python(raw)]
        if route.read_flag:
            for f in entry["provider"]:
                f[route.read_flag] = f["read"]
        present = _paths(raw)
        entry["cache_fields_read"] = [k for k in CACHE_FIELDS if k in present and _was_read(raw, k)]
        if token_usage is not None:
            _clear_reads(token_usage)
            entry[ROUTE_OUTPUT_RECORD] = _fields(token_usage)
            if meter_ok:
                event = JSObject({"type": meter.event, "data": JSObject(
                    {"turn": float(req.turn), "step": float(req.step), "usage": token_usage})})
                state = session.call(meter.apply, [state, event])
                folded += 1
                dropped[meter.dropped] = [k for k in _paths(token_usage) if not _was_read(token_usage, k)]
        entry["dropped"] = dropped
        entry["checks"] = _request_checks(req, to_python(usage) if usage is not None else None,
                                          to_python(token_usage) if token_usage is not None else None, prices)
        requests.append(entry)
    buckets = hit = hit_site = None
    hit_ran = False
    if meter_ok and folded == len(scenario.requests):
        buckets = session.call(meter.view, [state])
        if session.has(meter.hit):
            hit = session.call(meter.hit, [buckets])
            hit_site, hit_ran = session.last_return_site("dsh"), True
    bucket_values = to_python(buckets) if buckets is not None else None
    ledger: dict[str, Any] = {
        "route": route.name, "title": route.title,
        "scenario": {"name": scenario.name, "title": scenario.title, "path": scenario.path},
        "upstreams": {name: {"commit": locators[name].commit} for name in route.repos if name in locators},
        "functions": {h.key: {"name": h.qualname, "role": h.role, "site": str(hops[h.key].site)}
                      for h in route.hops if h.key in hops},
        "missing": missing,
        "prices": prices,
        "meter_input": "each request's dsh TokenUsage folded as an assistant/message event (turn, step, usage)",
        "requests": requests,
        "meter": _fields(buckets) if buckets is not None else None,
        "cache_hit_percent": {"value": to_python(hit), "site": str(hit_site)} if hit_ran else None,
        "checks": _session_checks(scenario, bucket_values, to_python(hit) if hit_ran else None,
                                  has_meter=buckets is not None, has_hit=hit_ran),
    }
    ledger["ok"] = not missing and all(c["holds"] is not False for r in requests for c in r["checks"]) and all(
        c["holds"] is not False for c in ledger["checks"])
    return ledger


def _run_usage_hops(session: ReplaySession, route: Route, values: dict[str, Any], entry: dict[str, Any],
                    dropped: dict[str, list[str]]) -> dict[str, Any]:
    """One request through the route's usage hops, in order; a hop runs when it was located and every value it
    reads was written (so a missing layer stops the chain there, and later numbers are not guessed)."""
    for key in route.usage_hops:
        hop = route.book.hop(key)
        if not session.has(key) or any(v not in values for v in hop.reads):
            continue
        out = session.call(key, [values[v] for v in hop.reads])
        values[hop.writes] = out
        if hop.writes != ROUTE_OUTPUT:  # the TokenUsage's reads are cleared after its own dropped list
            _clear_reads(out)
        if hop.record:
            entry[hop.record] = _fields(out)
        if hop.dropped_value and hop.dropped_label:
            read = values[hop.dropped_value]
            dropped[hop.dropped_label] = [k for k in _paths(read) if not _was_read(read, k)]
    return values


PI_USAGE = "pi-usage"  # the value the Pi invariants below check (its fields are Pi's `Usage`)
CACHE_FIELDS = ("prompt_tokens_details.cached_tokens", "prompt_cache_hit_tokens", "prompt_cache_miss_tokens",
                "prompt_tokens_details.cache_write_tokens")


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


def _request_checks(req: Any, usage: dict[str, Any] | None, tu: dict[str, Any] | None,
                    prices: dict[str, Any] | None) -> list[dict]:
    """Invariants of one request for the layers that were replayed (Pi's only on the Pi route)."""
    raw = req.usage
    prompt, completion = req.prompt_tokens, req.completion_tokens
    checks = []
    if "prompt_cache_hit_tokens" in raw and "prompt_cache_miss_tokens" in raw:
        h, m = raw["prompt_cache_hit_tokens"], raw["prompt_cache_miss_tokens"]
        checks.append(_check("provider: hit + miss = prompt_tokens", h + m == prompt, f"{h} + {m} vs {prompt}"))
    else:
        checks.append(_check("provider: hit + miss = prompt_tokens", None, "no hit/miss pair in this report"))
    hits = req.cache_hits
    if usage is not None:
        i, cr, cw = usage.get("input", 0), usage.get("cacheRead", 0), usage.get("cacheWrite", 0)
        checks.append(_check("Pi: input + cacheRead + cacheWrite = prompt_tokens", i + cr + cw == prompt,
                             f"{i} + {cr} + {cw} = {i + cr + cw} vs {prompt}"))
        checks.append(_check("Pi: cacheRead = provider cache hits", cr == hits, f"{cr} vs {hits}"))
        total = usage.get("totalTokens")
        checks.append(_check("Pi: totalTokens = prompt_tokens + completion_tokens", total == prompt + completion,
                             f"{total} vs {prompt} + {completion} = {prompt + completion}"))
        out = usage.get("output")
        checks.append(_check("Pi: output = completion_tokens (reasoning already inside)", out == completion,
                             f"{out} vs {completion} (reasoning {req.reasoning_tokens})"))
        assert prices is not None
        expected = ((prompt - hits) * prices["cache_miss"] + hits * prices["cache_hit"]
                    + completion * prices["output"]) / 1e6
        got = (usage.get("cost") or {}).get("total")
        holds = isinstance(got, int | float) and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-15)
        checks.append(_check("Pi: cost.total = Σ bucket × rate", holds,
                             f"{got} vs miss {prompt - hits} × {prices['cache_miss']} + hit {hits} × "
                             f"{prices['cache_hit']} + output {completion} × {prices['output']} per 1M = "
                             f"{expected:.10g}"))
    if tu is not None:
        ti, tr, tw = tu.get("inputTokens", 0), tu.get("cacheReadTokens", 0), tu.get("cacheWriteTokens", 0)
        checks.append(_check("dsh: inputTokens + cacheReadTokens + cacheWriteTokens = prompt_tokens",
                             ti + tr + tw == prompt, f"{ti} + {tr} + {tw} = {ti + tr + tw} vs {prompt}"))
        checks.append(_check("dsh: cacheReadTokens = provider cache hits", tr == hits, f"{tr} vs {hits}"))
        checks.append(_check("dsh: outputTokens = completion_tokens", tu.get("outputTokens") == completion,
                             f"{tu.get('outputTokens')} vs {completion}"))
    return checks


def _session_checks(scenario: Scenario, buckets: Any, hit: Any, *, has_meter: bool = True,
                    has_hit: bool = True) -> list[dict[str, Any]]:
    if not has_meter:
        return []
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
    if not has_hit:
        return checks
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
