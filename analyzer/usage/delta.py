"""Differences between two ledgers (e.g. the same scenario at the old and the new pins), for re-checks."""

from __future__ import annotations

from typing import Any


def ledger_numbers(ledger: dict[str, Any]) -> dict[str, Any]:
    """Every number and invariant of a ledger under a stable key (`turn1.pi.input`, `meter.cacheReadTokens`…)."""
    out: dict[str, Any] = {}
    for req in ledger["requests"]:
        prefix = f"turn{req['turn']}.step{req['step']}"
        for layer in ("pi_usage", "dsh_usage"):
            for f in req.get(layer) or []:
                out[f"{prefix}.{layer.split('_')[0]}.{f['name']}"] = f["value"]
        for c in req["checks"]:
            out[f"{prefix}.check.{c['name']}"] = c["holds"]
        for layer, fields in req["dropped"].items():
            out[f"{prefix}.dropped.{layer}"] = ", ".join(fields)
    for f in ledger["meter"] or []:
        out[f"meter.{f['name']}"] = f["value"]
    out["cache_hit_percent"] = (ledger["cache_hit_percent"] or {}).get("value")
    for m in ledger.get("missing", []):
        out[f"missing.{m['hop']}"] = m["reason"]
    for c in ledger["checks"]:
        out[f"check.{c['name']}"] = c["holds"]
    out["prices.source"] = (ledger.get("prices") or {}).get("source")
    return out


def ledger_deltas(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The keys whose value differs (missing on one side shows as None), in the new ledger's order."""
    a, b = ledger_numbers(old), ledger_numbers(new)
    keys = list(b) + [k for k in a if k not in b]
    return [{"key": k, "old": a.get(k), "new": b.get(k)} for k in keys if a.get(k) != b.get(k)]
