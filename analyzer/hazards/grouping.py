"""One hazard per sink and template: findings that reach the same request part through the same template
(four sources of one documentation path line) are one thing to fix, shown as one hazard with branches.

A value finding's template is the last template literal or string concatenation its chain passes before the
sink; findings without one group by the sink alone. Structural findings are one hazard each.
"""

from __future__ import annotations

import hashlib
from typing import Any

import networkx as nx

from analyzer.hazards.rules import EFFECTS, GRANULARITIES

TEMPLATE_STEPS = ("template literal", "string concatenation")


def template_step(finding: dict[str, Any]) -> dict[str, Any] | None:
    """The step where the value became part of the text that reached the sink (None when it never did)."""
    for step in reversed(finding.get("steps", [])[:-1]):
        if step["why"] in TEMPLATE_STEPS:
            return step
    return None


def _id(*parts: str) -> str:
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def _key(g: nx.MultiDiGraph, f: dict[str, Any]) -> tuple[str, ...]:
    sink = f["sink"]
    if f["category"] != "value":
        return ("structural", f["id"])
    tpl = template_step(f)
    start = g.nodes[sink["function"]].get("line", 0) if sink["function"] in g else 0
    # the template's line relative to the sink function: stable when code above the function moves
    where = f"{tpl['repo']}:{tpl['path']}:{tpl['line'] - start}" if tpl is not None else ""
    return ("value", sink["rule"], sink["function"], sink["part"] or "", where)


def group_findings(g: nx.MultiDiGraph, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hazards in the findings' order (ranked by effect): each with its branches' ids, the best-ranked
    effect and the finest granularity among them."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for f in findings:
        groups.setdefault(_key(g, f), []).append(f)
    out = []
    for key, members in groups.items():
        first = members[0]
        effects = [m.get("effect") for m in members if m.get("effect") in EFFECTS]
        grains = [m["granularity"] for m in members if m.get("granularity") in GRANULARITIES]
        effect = min(effects, key=EFFECTS.index) if effects else None
        deciding = next((m for m in members if m.get("effect") == effect), first)
        tpl = template_step(first) if first["category"] == "value" else None
        out.append({
            "id": _id(*key), "category": first["category"],
            "kinds": sorted({m.get("kind") or m.get("rule", "") for m in members}),
            "effect": effect, "effect_rule": deciding.get("effect_rule"),
            "granularity": min(grains, key=GRANULARITIES.index) if grains else None,
            "part": first["sink"]["part"], "sink": first["sink"],
            "template": {k: tpl[k] for k in ("repo", "path", "line")} if tpl is not None else None,
            "branches": [m["id"] for m in members],
        })
    return out
