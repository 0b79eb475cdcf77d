"""Where two routes' ledgers disagree, number by number, and a reason code for each difference.

The reasons are codes plus the facts behind them (which provider fields each route read, which upstream line
set a value); the words live in `analyzer/records/sentences/reconcile.<lang>.toml`, so the terminal, JSON and
the research record say the same thing in either language.
"""

from __future__ import annotations

from typing import Any

from analyzer.usage.routes import load_routes

_COMPARE = load_routes().compare
REASONING = _COMPARE.reasoning  # the TokenUsage field one route may keep and the other not
CACHE_NUMBERS = _COMPARE.cache_numbers  # TokenUsage fields set from the provider's cache fields


def _by_name(fields: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in fields or []}


def _row(number: str, scope: str, values: dict[str, Any], sites: dict[str, Any], reason: str | None,
         **facts: Any) -> dict[str, Any]:
    agree: bool | None = len({repr(v) for v in values.values()}) == 1 and reason is None
    if reason == "not_replayed":
        agree = None  # unknown, not a disagreement
    return {"number": number, "scope": scope, "values": values, "sites": sites, "agree": agree,
            "reason": None if agree else (reason or "differs"), "facts": facts}


def _reads(req: dict[str, Any]) -> list[str]:
    provider = {f["name"]: f["value"] for f in req.get("provider", [])}
    return [f"{name} = {provider.get(name)}" for name in req.get("cache_fields_read", [])]


def _request_rows(names: list[str], reqs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    a, b = names
    label = f"turn {reqs[a]['turn']} step {reqs[a]['step']}"
    rows = []
    reads = {n: _reads(reqs[n]) for n in names}
    rows.append(_row(f"{label} · provider cache fields read", "reads", {n: ", ".join(reads[n]) or None for n in names},
                     {}, "cache_source" if reads[a] != reads[b] else None, reads=reads))
    fields = {n: _by_name(reqs[n].get("dsh_usage")) for n in names}
    order = list(dict.fromkeys([*fields[a], *fields[b]]))
    for name in order:
        values = {n: fields[n].get(name, {}).get("value") for n in names}
        sites = {n: fields[n].get(name, {}).get("site") for n in names}
        only = [n for n in names if name in fields[n]]
        reason: str | None = None
        facts: dict[str, Any] = {}
        if "dsh_usage" not in reqs[a] or "dsh_usage" not in reqs[b]:
            reason = "not_replayed"
        elif len(only) == 1:
            reason = "reasoning_kept" if name == REASONING else "only_in"
            facts = {"route": only[0], "other": next(n for n in names if n != only[0]), "site": sites[only[0]]}
        elif values[a] != values[b]:
            reason = "cache_source" if name in CACHE_NUMBERS and reads[a] != reads[b] else "differs"
            facts = {"reads": reads}
        rows.append(_row(f"{label} · dsh TokenUsage.{name}", "request", values, sites, reason, **facts))
    costs = {n: _by_name(reqs[n].get("pi_usage")).get("cost.total") for n in names}
    if any(costs.values()):
        with_cost = next(n for n in names if costs[n])
        dropped = any("cost.total" in fields for fields in reqs[with_cost].get("dropped", {}).values())
        rows.append(_row(f"{label} · cost.total (USD)", "request", {n: (costs[n] or {}).get("value") for n in names},
                         {n: (costs[n] or {}).get("site") for n in names}, "cost_only_pi",
                         route=with_cost, other=next(n for n in names if n != with_cost), dropped=dropped))
    return rows


def compare_routes(ledgers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Rows for every per-request dsh number, the cost, the meter buckets and the stats line of two routes.

    A row's `agree` is True, False, or None when one side could not be replayed (then it is not counted as a
    difference)."""
    names = list(ledgers)
    a, b = names
    rows: list[dict[str, Any]] = []
    for ra, rb in zip(ledgers[a]["requests"], ledgers[b]["requests"], strict=True):
        rows += _request_rows(names, {a: ra, b: rb})
    request_diffs = [r["number"] for r in rows if r["agree"] is False and r["reason"] != "cost_only_pi"]
    meters = {n: _by_name(ledgers[n]["meter"]) for n in names}
    for name in dict.fromkeys([*meters[a], *meters[b]]):
        values = {n: meters[n].get(name, {}).get("value") for n in names}
        sites = {n: meters[n].get(name, {}).get("site") for n in names}
        missing = any(ledgers[n]["meter"] is None for n in names)
        reason = "not_replayed" if missing else ("follows" if values[a] != values[b] else None)
        rows.append(_row(f"meter bucket {name}", "meter", values, sites, reason, causes=request_diffs))
    hits = {n: ledgers[n]["cache_hit_percent"] for n in names}
    missing = any(h is None for h in hits.values())
    values = {n: (hits[n] or {}).get("value") for n in names}
    reason = "not_replayed" if missing else ("follows" if values[a] != values[b] else None)
    rows.append(_row("dsh stats line cache-hit %", "hit", values, {n: (hits[n] or {}).get("site") for n in names},
                     reason, causes=request_diffs))
    return {"routes": names, "rows": rows, "differences": sum(r["agree"] is False for r in rows),
            "unknown": sum(r["agree"] is None for r in rows)}
